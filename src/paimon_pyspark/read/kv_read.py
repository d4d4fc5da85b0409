"""The merge-on-read of primary-key splits.

Mirrors org.apache.paimon.operation.MergeFileSplitRead: every file of a bucket is read with its
``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` (``io/data_file_reader.py``), the records are merged
per key by the table's merge engine, and retractions are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from paimon_pyspark.io.data_file_reader import (
    read_data_file,
    read_kv_records,
    read_postpone_records,
)
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store.file_store import FileStore


def raw_convertible(files: Sequence[DataFileMeta], settings: MergeSettings) -> bool:
    """True when the files of a bucket already hold one record per key and no retraction.

    That is the case for one sorted run at a level above 0 (compaction output: merged, key
    ranges disjoint) without deletes, as Java's rawConvertible splits; and, for deduplicate,
    for a single flushed file without deletes (a flush leaves one record per key).
    """
    if not files or any(f.delete_row_count is None or f.delete_row_count > 0 for f in files):
        return False
    levels = {f.level for f in files}
    if len(levels) == 1 and next(iter(levels)) > 0:
        return True
    return len(files) == 1 and settings.engine == "deduplicate"


def merge_read(
    store: FileStore,
    bucket_path: str,
    files: Sequence[DataFileMeta],
    settings: MergeSettings,
    postpone: bool = False,
) -> pa.Table:
    """The merged rows of one bucket: table columns, one row per live key, sorted by key.

    ``postpone``: the files are one partition's postpone files in write order, merged as
    their compaction into an empty bucket would merge them.
    """
    fields = list(store.fields)
    if postpone:
        records = read_postpone_records(store, bucket_path, files)
    elif raw_convertible(files, settings):
        parts = [read_data_file(store, bucket_path, f, fields) for f in files]
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    else:
        records = read_kv_records(store, bucket_path, files)
    keys = store.table_schema.trimmed_primary_keys()
    merged = merge(records, keys, settings, drop_delete=True, buffer=postpone)
    return merged.select([f.name for f in fields])
