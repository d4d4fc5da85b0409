"""Small-file compaction of append tables: which files to merge, and the rewrite itself.

Mirrors org.apache.paimon.append.BucketedAppendCompactManager (fixed-bucket tables: a full
compaction rewrites a bucket's small files in sequence order; a minor one takes the oldest
window of ``compaction.min.file-num`` small files), org.apache.paimon.append.
AppendCompactCoordinator (bucket-unaware tables: small files of a partition are packed into
groups worth rewriting) and BaseAppendFileStoreWrite.compactRewrite (read the files in order,
write them back rolling at ``target-file-size``, sequence numbers running on from the first).

With deletion vectors (AppendCompactTask and BucketedAppendCompactManager with a dvMaintainer)
the rewrite leaves out the rows the vectors of its inputs delete, and the inputs' vectors go:
a fixed bucket's index file is written again without them, an unaware partition's index files
that held them are replaced by files with their other vectors (write/append_dv.py). The
picks change as Java's do: a file with a vector is always rewritten in a full compaction of
its bucket, and in an unaware table a file whose vector deletes more than
``compaction.delete-ratio-threshold`` of its rows is compacted like a small one, and files are
packed by the index file holding their vectors, so that no two tasks rewrite one index file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_pyspark.io.data_file import DataFileSettings
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.read.row_tracking import ROW_ID, SEQUENCE_NUMBER, with_tracking
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.spec.manifest import IndexManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.deletion_vectors import dv_index_entries, index_handler_of
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.arrow import to_arrow_schema
from paimon_pyspark.write.append_dv import (
    AppendDvMaintainer,
    IndexChanges,
    UnawareAppendDvMaintainer,
    restore_append_dv,
)
from paimon_pyspark.write.append_writer import ExtraColumns
from paimon_pyspark.write.append_writer import rewrite_append_files as rewrite_files
from paimon_pyspark.write.compact_manager import FULL_COMPACT_MIN_FILE, full_rewrite, minor_window

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


def _by_sequence(files: Sequence[DataFileMeta]) -> list[DataFileMeta]:
    return sorted(files, key=lambda f: (f.min_sequence_number, f.file_name))


def pick_bucketed_full(
    files: Sequence[DataFileMeta], s: CompactSettings, dv: AppendDvMaintainer | None = None
) -> list[DataFileMeta]:
    """The files a full compaction of one fixed bucket rewrites: a writer's full pick
    (write/compact_manager.py) over the bucket's files in sequence order, which keeps the
    bucket's row order for later compactions. With deletion vectors (``dv``) any file may
    start one, and files with a vector are never left out for being big."""
    least = 1 if dv is not None else FULL_COMPACT_MIN_FILE
    if not s.force_rewrite_all_files and len(files) < least:
        return []
    if dv is None:
        return full_rewrite(_by_sequence(files), s)
    return full_rewrite(_by_sequence(files), s, lambda n: dv.deletion_vector_of(n) is not None)


def pick_bucketed_minor(files: Sequence[DataFileMeta], s: CompactSettings) -> list[DataFileMeta]:
    """The oldest window of ``min_file_num`` files worth merging (a writer's minor pick)."""
    return minor_window(_by_sequence(files), s)[0]


def pack_unaware(
    files: Sequence[DataFileMeta],
    s: CompactSettings,
    dv: UnawareAppendDvMaintainer | None = None,
    delete_ratio: float = 0.2,
) -> list[list[DataFileMeta]]:
    """Groups of small files of one partition to rewrite together (AppendCompactCoordinator).

    Only files below ``compaction_file_size`` take part. Sorted by size, they fill a bin until
    it holds more than one file and twice the target size (counting an open cost per file);
    the last bin is kept only with at least ``compaction.min.file-num`` files.

    With deletion vectors (``dv``: the partition's vectors) a file whose vector deletes more
    than ``delete_ratio`` of its rows takes part too (``tooHighDeleteRatio``); files with a
    vector are packed whole groups at a time, a group being the files whose vectors share an
    index file, and their last bin is always kept (``packInDeletionVectorVMode``).
    """
    if dv is None:
        return _pack([f for f in files if f.file_size < s.compaction_file_size], s)

    def candidate(f: DataFileMeta) -> bool:
        if f.file_size < s.compaction_file_size:
            return True
        found = dv.deletion_file_of(f.file_name)
        if found is None:
            return False
        return found.cardinality is None or found.cardinality > f.row_count * delete_ratio

    by_index: dict[str, list[DataFileMeta]] = {}
    rest: list[DataFileMeta] = []
    for f in files:
        if not candidate(f):
            continue
        index = dv.index_file_of(f.file_name)
        if index is None:
            rest.append(f)
        else:
            by_index.setdefault(index, []).append(f)
    groups: list[list[DataFileMeta]] = []
    bin_: list[DataFileMeta] = []
    weight = 0
    for _, group in sorted(by_index.items(), key=lambda kv: (_size(kv[1]), kv[0])):
        for f in group:
            bin_.append(f)
            weight += f.file_size + s.open_file_cost
        if len(bin_) > 1 and weight >= s.target_file_size * 2:
            groups.append(bin_)
            bin_, weight = [], 0
    if bin_:
        groups.append(bin_)
    if len(rest) > 1:
        groups += _pack(rest, s)
    return groups


def _size(files: Sequence[DataFileMeta]) -> int:
    return sum(f.file_size for f in files)


def _pack(files: Sequence[DataFileMeta], s: CompactSettings) -> list[list[DataFileMeta]]:
    small = sorted(files, key=lambda f: (f.file_size, f.min_sequence_number, f.file_name))
    groups: list[list[DataFileMeta]] = []
    bin_: list[DataFileMeta] = []
    weight = 0
    for f in small:
        bin_.append(f)
        weight += f.file_size + s.open_file_cost
        if len(bin_) > 1 and weight >= s.target_file_size * 2:
            groups.append(bin_)
            bin_, weight = [], 0
    if len(bin_) >= s.min_file_num:
        groups.append(bin_)
    return groups


def append_dv_entries(
    table: FileStore, snapshot: Snapshot | None
) -> list[IndexManifestEntry] | None:
    """The live deletion-vector index entries of ``snapshot`` that a compaction plan of an
    append table with deletion vectors reads once; None for any other table."""
    if table.primary_keys or not table.options.deletion_vectors_enabled:
        return None
    return dv_index_entries(index_handler_of(table), snapshot)


def pick_append(
    table: FileStore,
    snapshot: Snapshot | None,
    partition: bytes,
    bucket: int,
    files: Sequence[DataFileMeta],
    full: bool,
    s: CompactSettings,
    dv_entries: Sequence[IndexManifestEntry] | None = None,
) -> list[list[DataFileMeta]]:
    """The groups of files one append bucket's compaction rewrites, each into new files:
    packed small files of an unaware partition, or one pick of a fixed bucket.
    ``dv_entries``: ``append_dv_entries`` of the plan's snapshot."""
    dv = None
    if dv_entries is not None:
        dv = restore_append_dv(table, snapshot, partition, bucket, dv_entries)
    if table.bucket_mode == BucketMode.BUCKET_UNAWARE:
        unaware = dv if isinstance(dv, UnawareAppendDvMaintainer) else None
        ratio = table.options.compaction_delete_ratio_threshold
        return pack_unaware(files, s, unaware, ratio)
    picked = pick_bucketed_full(files, s, dv) if full else pick_bucketed_minor(files, s)
    return [picked] if picked else []


def rewrite_append_files(
    table: FileStore,
    partition: bytes,
    partition_values: Sequence[Any],
    bucket: int,
    files: Sequence[DataFileMeta],
) -> tuple[list[DataFileMeta], IndexChanges]:
    """Read ``files`` in the given order and write their rows into new COMPACT files
    (write/append_writer.py: streamed, nothing left on failure). With deletion vectors the
    rows they delete are left out and their vectors dropped, from the vectors of the latest
    snapshot (as Java's AppendCompactTask restores them): the index changes say which index
    files that wrote and replaced."""
    rel = table.partition_rel_path(list(partition_values))
    path_factory = PathFactory(table.path)
    bucket_path = path_factory.bucket_path(rel, bucket)
    settings = DataFileSettings.of(table, primary_key=False)
    extra = None
    if table.options.row_tracking_enabled:
        settings, extra = _with_row_tracking(table, settings, bucket_path)
    if not table.options.deletion_vectors_enabled:
        after = rewrite_files(settings, table, bucket_path, path_factory, files, None, extra)
        return after, IndexChanges()
    dv = restore_append_dv(table, table.snapshot_manager.latest(), partition, bucket)
    vectors: dict[str, DeletionVector] = {}
    for f in files:
        found = dv.deletion_vector_of(f.file_name)
        if found is not None:
            vectors[f.file_name] = found
    after = rewrite_files(settings, table, bucket_path, path_factory, files, vectors, extra)
    for f in files:
        dv.notify_removed_deletion_vector(f.file_name)
    try:
        changes = dv.persist(path_factory)
    except BaseException:
        for f in after:
            table.file_io.delete_quietly(data_file_path(table.external_paths, bucket_path, f))
        raise
    return after, changes


def _with_row_tracking(
    table: FileStore, settings: DataFileSettings, bucket_path: str
) -> tuple[DataFileSettings, ExtraColumns]:
    """A compaction of a row-tracking table writes each row's ``_ROW_ID`` and
    ``_SEQUENCE_NUMBER`` as two more NOT NULL columns, so they survive the rewrite (Java's
    compactions set the write type to SpecialFields.rowTypeWithRowTracking: CompactProcedure,
    AppendTableCompactor). The values are those a read gives (read/row_tracking.py), taken at
    the positions of the rows a deletion vector keeps."""
    wanted = [ROW_ID, SEQUENCE_NUMBER]
    fields = [*settings.fields, *wanted]
    wider = dataclasses.replace(settings, fields=fields, arrow_schema=to_arrow_schema(fields))
    whole: dict[str, pa.Table] = {}

    def columns(f: DataFileMeta, positions: npt.NDArray[np.int64], rows: pa.Table) -> pa.Table:
        ids = whole.get(f.file_name)
        if ids is None:  # one file at a time: both columns of all its rows (16 bytes a row)
            whole.clear()
            empty = pa.table({"_": pa.nulls(f.row_count)})
            ids = with_tracking(table, bucket_path, f, empty, wanted, 0).drop_columns(["_"])
            whole[f.file_name] = ids
        taken = ids.take(pa.array(positions))
        for w in wanted:
            field = pa.field(w.name, pa.int64(), nullable=False)
            rows = rows.append_column(field, taken.column(w.name))
        return rows

    return wider, columns
