"""Dynamic-bucket writes from tasks that share buckets (``df.write.format("paimon")``).

Each task routes with bucket/door_assigner.py's AgreedBucketRouter, so a key gets the same
bucket in every task, and its DynamicBucketIndexMaintainer writes, per bucket it wrote, the
bucket's pinned index file plus the hashes the task wrote. Several tasks may write one bucket,
so the job's driver merges their files into one per (partition, bucket) before the commit (a
commit keeps one HASH file per bucket: the last one of several would win and lose the others'
keys), as Java's single writer of a bucket would have written it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from paimon_pyspark.bucket.door_assigner import AgreedBucketRouter, AgreedBuckets
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.store.deletion_vectors import index_handler_of
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.index_io import HASH_INDEX
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.dynamic import DynamicBucketIndexMaintainer, sorted_unique
from paimon_pyspark.write.table_write import TableWrite


def route_agreed(write: TableWrite, agreed: AgreedBuckets) -> None:
    """Make ``write`` (a fresh TableWrite of a HASH_DYNAMIC table) assign buckets as every
    other task of its job does, and keep the index of the pinned snapshot."""
    router = AgreedBucketRouter(write.table, agreed, write.ignore_previous_files)
    assert router.hash_index is not None
    write.router = router
    write.index_maintainer = DynamicBucketIndexMaintainer(router.hash_index, write.path_factory)


@dataclass
class MergedIndex:
    """The messages with one HASH file per (partition, bucket); ``written``: the files merged
    here (to delete if the commit fails), ``superseded``: the tasks' files they replace (to
    delete once it succeeded)."""

    messages: list[CommitMessage]
    written: list[IndexFileMeta] = field(default_factory=list)
    superseded: list[IndexFileMeta] = field(default_factory=list)


def merge_hash_index_files(store: FileStore, messages: Sequence[CommitMessage]) -> MergedIndex:
    """Union the HASH files several tasks wrote for one (partition, bucket) into one file,
    carried by the first of those messages; the others lose theirs."""
    by_bucket: dict[tuple[bytes, int], list[int]] = {}
    for i, m in enumerate(messages):
        if any(f.index_type == HASH_INDEX for f in m.data_increment.new_index_files):
            by_bucket.setdefault((m.partition, m.bucket), []).append(i)
    out = MergedIndex(list(messages))
    handler = index_handler_of(store)
    path_factory = PathFactory(store.path)
    try:
        for indices in by_bucket.values():
            if len(indices) < 2:
                continue
            files = [
                f
                for i in indices
                for f in messages[i].data_increment.new_index_files
                if f.index_type == HASH_INDEX
            ]
            merged = sorted_unique(np.concatenate([handler.read_hash(f) for f in files]))
            meta = handler.write_hash(merged, path_factory)
            out.written.append(meta)
            out.superseded.extend(files)
            for n, i in enumerate(indices):
                increment = messages[i].data_increment
                kept = tuple(f for f in increment.new_index_files if f.index_type != HASH_INDEX)
                if n == 0:
                    kept = (*kept, meta)
                out.messages[i] = replace(
                    messages[i], data_increment=replace(increment, new_index_files=kept)
                )
    except BaseException:
        handler.delete_quietly(out.written)
        raise
    return out
