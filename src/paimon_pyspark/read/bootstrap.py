"""The key index of a cross-partition upsert table, read from the table (Java's IndexBootstrap).

A cross-partition write routes every key by where it lives now, so it first reads the live keys
of the snapshot it starts on. That is a read of the table, hence here, above the writers: the
facade hands ``bootstrapped_global_assigner`` to ``TableWrite``, and the Spark writer reads
``bootstrap_splits`` one task each.
"""

from __future__ import annotations

from paimon_pyspark.bucket.cross_partition import GlobalIndexAssigner, new_global_assigner
from paimon_pyspark.io.data_file import local_now_millis
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.file_store import FileStore


def bootstrap_splits(store: FileStore, snapshot: Snapshot) -> list[DataSplit]:
    """The splits of ``snapshot`` whose keys a cross-partition bootstrap reads (IndexBootstrap):
    buckets with no file newer than ``cross-partition-upsert.index-ttl`` are left out."""
    pinned = ReadBuilder(store.copy({"scan.snapshot-id": str(snapshot.id)}))
    # every level: a table with deletion vectors holds keys in level 0 that a batch scan skips
    splits = pinned.new_scan().with_all_levels().plan().splits()
    ttl = store.options.cross_partition_upsert_index_ttl_ms
    if ttl is None:
        return splits
    now = local_now_millis()
    return [
        s
        for s in splits
        if any(f.creation_time is not None and now <= f.creation_time + ttl for f in s.files)
    ]


def bootstrapped_global_assigner(
    store: FileStore, snapshot: Snapshot | None
) -> GlobalIndexAssigner:
    """A GlobalIndexAssigner holding the live keys of ``snapshot`` (Java's IndexBootstrap),
    read split by split in this process. The Spark writer reads the same splits one task
    each and routes the keys by hash to its assigners instead (spark/write.py)."""
    assigner = new_global_assigner(store)
    if snapshot is None:
        return assigner
    keys = store.table_schema.trimmed_primary_keys()
    pinned = ReadBuilder(store.copy({"scan.snapshot-id": str(snapshot.id)}))
    read = pinned.with_projection(keys).new_read()
    for split in bootstrap_splits(store, snapshot):
        rows = read.to_arrow([split])
        assigner.bootstrap(rows, split.partition, list(split.partition_values), split.bucket)
    return assigner
