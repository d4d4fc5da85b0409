"""The merge-on-read of primary-key splits.

Mirrors org.apache.paimon.operation.MergeFileSplitRead: every file of a bucket is read with its
``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` (``io/data_file_reader.py``), the records are merged
per key by the table's merge engine, and retractions are dropped. A file's deletion vector
drops its rows before anything else looks at them (Java's ApplyDeletionVectorReader under the
KeyValueFileReaderFactory); a split of a table with deletion vectors whose files are all above
level 0 and hold no retraction is read file by file, unmerged (Java's
PrimaryKeyTableRawFileSplitReadProvider). Tables that need lookup, without deletion vectors,
merge as Java's LookupMergeFunction does: of a key's records above level 0 only those of its
lowest level take part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from paimon_pyspark.io.data_file_reader import (
    drop_deleted,
    read_data_file,
    read_kv_records,
    read_postpone_records,
    with_constants,
)
from paimon_pyspark.merge.merge_function import DEDUPLICATE, FIRST_ROW, MergeSettings, merge
from paimon_pyspark.mergetree.lookup_changelog import LEVEL, newest_above_level0
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER, VALUE_KIND
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import DataField


def raw_convertible(
    files: Sequence[DataFileMeta], settings: MergeSettings, deletion_vectors: bool = False
) -> bool:
    """True when the files of a bucket already hold one record per key and no retraction.

    That is the case for one sorted run at a level above 0 (compaction output: merged, key
    ranges disjoint) without deletes, as Java's rawConvertible splits; with
    ``deletion_vectors`` (the table's option), for files at any levels above 0 without
    deletes, whose vectors hide every superseded row; and, for deduplicate, for a single
    flushed file without deletes (a flush leaves one record per key). A file whose delete
    count was not recorded may hold retractions: never raw (Java's read providers).
    """
    if not files or any(f.delete_row_count is None or f.delete_row_count > 0 for f in files):
        return False
    levels = {f.level for f in files}
    if deletion_vectors and 0 not in levels:
        return True
    if len(levels) == 1 and next(iter(levels)) > 0:
        return True
    return len(files) == 1 and settings.engine == "deduplicate"


def final_file(files: Sequence[DataFileMeta], settings: MergeSettings) -> DataFileMeta | None:
    """The file of a bucket whose every row is already its key's merged row, or None.

    Under deduplicate without a sequence field the newest record of a key wins, and a file
    holds one record per key (the rule Java's single-file rawConvertible relies on). So a file
    without retractions whose sequence numbers all follow every other file's (the bucket's
    last flush, typically) wins every key it holds, whatever the others hold. A reader may take
    its rows as they are and merge the rest without them (``merge_read(leave_out=...)``).
    """
    if settings.engine != DEDUPLICATE or settings.sequence_fields or len(files) < 2:
        return None
    newest = max(files, key=lambda f: f.min_sequence_number)
    if newest.delete_row_count != 0:  # None: written before the count was kept
        return None
    if any(f is not newest and f.max_sequence_number >= newest.min_sequence_number for f in files):
        return None
    return newest


def merge_read(
    store: FileStore,
    bucket_path: str,
    files: Sequence[DataFileMeta],
    settings: MergeSettings,
    postpone: bool = False,
    leave_out: DataFileMeta | None = None,
    constants: Mapping[str, pa.Scalar] | None = None,
    vectors: Mapping[str, DeletionVector] | None = None,
) -> pa.Table:
    """The merged rows of one bucket: table columns, one row per live key, sorted by key.

    ``postpone``: the files are one partition's postpone files in write order, merged as
    their compaction into an empty bucket would merge them. ``leave_out``: the bucket's
    :func:`final_file`, read by someone else: the result is exactly the merged rows that do not
    come from it, in file order rather than key order (its keys still take part in the merge;
    nothing else of it is read). ``constants``: columns every row of the bucket holds the same
    value of (its partition's), as Arrow scalars; where the merge does not look at them
    (:func:`_unread`) they are filled in, not decoded from every file. ``vectors``: the
    deletion vectors of ``files`` by file name; their rows are dropped as each file is read.
    """
    fill = _unread(constants or {}, settings, postpone)
    fields = [f for f in store.fields if f.name not in fill]
    found = vectors or {}
    if postpone:
        records = read_postpone_records(store, bucket_path, files)
    elif raw_convertible(files, settings, store.options.deletion_vectors_enabled):
        parts = [
            drop_deleted(read_data_file(store, bucket_path, f, fields), found.get(f.file_name))
            for f in files
        ]
        return with_constants(
            pa.concat_tables(parts) if len(parts) > 1 else parts[0], store.fields, fill
        )
    elif leave_out is not None:
        table = _merge_leaving_out(store, bucket_path, files, settings, leave_out, fields, found)
        return with_constants(table, store.fields, fill)
    elif _lookup_merge(store, settings, files):
        records = _newest_above_level0(store, bucket_path, files, fields)
    else:
        records = read_kv_records(store, bucket_path, files, fields, found)
    keys = store.table_schema.trimmed_primary_keys()
    merged = merge(records, keys, settings, drop_delete=True, buffer=postpone)
    return with_constants(merged.select([f.name for f in fields]), store.fields, fill)


def _lookup_merge(store: FileStore, settings: MergeSettings, files: Sequence[DataFileMeta]) -> bool:
    """Whether the merge is Java's LookupMergeFunction and that changes it: a table that needs
    lookup, without deletion vectors (their reads merge nothing above level 0) and other than
    first-row (never wrapped), whose engine may let an older record change the result (not
    deduplicate without ``sequence.field``), read from more than one level above 0."""
    o = store.options
    if not o.need_lookup(True) or o.deletion_vectors_enabled or settings.engine == FIRST_ROW:
        return False
    if settings.engine == DEDUPLICATE and not settings.sequence_fields:
        return False
    return len({f.level for f in files if f.level > 0}) > 1


def _newest_above_level0(
    store: FileStore, bucket_path: str, files: Sequence[DataFileMeta], fields: Sequence[DataField]
) -> pa.Table:
    """The records of ``files`` of which, per key, only those at level 0 and at its lowest
    level above 0 take part (LookupMergeFunction: that record already merged the older ones
    in, at the lookup compaction that wrote it)."""
    parts = []
    for f in files:
        part = read_kv_records(store, bucket_path, [f], fields)
        level = np.full(part.num_rows, f.level, dtype=np.int32)
        parts.append(part.append_column(LEVEL, pa.array(level)))
    keys = store.table_schema.trimmed_primary_keys()
    return newest_above_level0(pa.concat_tables(parts), keys).drop_columns([LEVEL])


def _unread(
    constants: Mapping[str, pa.Scalar], settings: MergeSettings, postpone: bool
) -> Mapping[str, pa.Scalar]:
    """The ``constants`` a merge need not read: deduplicate and first-row decide by key and
    sequence number alone (the other engines merge every value column, and a sequence field
    orders the records)."""
    if postpone or settings.engine not in (DEDUPLICATE, FIRST_ROW):
        return {}
    return {k: v for k, v in constants.items() if k not in settings.sequence_fields}


def _merge_leaving_out(
    store: FileStore,
    bucket_path: str,
    files: Sequence[DataFileMeta],
    settings: MergeSettings,
    leave_out: DataFileMeta,
    fields: Sequence[DataField],
    vectors: Mapping[str, DeletionVector],
) -> pa.Table:
    """``merge_read`` without the rows of ``leave_out`` (a ``final_file``): the merge runs on
    keys, sequence numbers and kinds alone (all that deduplicate decides by) of every file,
    only the key columns of ``leave_out`` read; the winners from the other files are then
    kept from their records of ``fields``, in file order (not key order)."""
    others = [f for f in files if f is not leave_out]
    older = read_kv_records(store, bucket_path, others, fields, vectors)
    keys = store.table_schema.trimmed_primary_keys()
    key_fields = [f for f in store.fields if f.name in keys]
    newest = drop_deleted(
        read_data_file(store, bucket_path, leave_out, key_fields, system=True),
        vectors.get(leave_out.file_name),
    )
    names = [*keys, SEQUENCE_NUMBER, VALUE_KIND]
    narrow = pa.concat_tables([older.select(names), newest.select(names)])
    narrow = narrow.append_column(_ROW, pa.array(np.arange(narrow.num_rows, dtype=np.int64)))
    picked = merge(narrow, keys, settings, drop_delete=True).column(_ROW).to_numpy()
    keep = np.zeros(narrow.num_rows, dtype=bool)
    keep[picked] = True
    # a filter reads each file's columns in order where a take first joins the files' chunks
    return older.filter(pa.array(keep[: older.num_rows])).select([f.name for f in fields])


_ROW = "__paimon_row"
"""A record's position in the merge of ``_merge_leaving_out``; the final file's come last."""
