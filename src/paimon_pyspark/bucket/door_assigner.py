"""Dynamic buckets (HASH_DYNAMIC) chosen by tasks that cannot talk to each other.

Java's writers shuffle every key to one assigner (HashBucketAssigner), which deals new keys
out in arrival order. A Python data source (``df.write.format("paimon")``) cannot shuffle: any
task may see any key, several tasks may see the same one. So every task decides a key's
bucket from the same two things, the key's hash and the table as the job's driver pinned it
(one snapshot for the whole job):

* a hash the partition's HASH index holds keeps that bucket (as PartitionIndex does);
* a new hash goes to a bucket of the partition's ``BucketPlan``, chosen by the hash alone:
  the plan is a list of (bucket, weight), built from the index's per-bucket key counts of the
  pinned snapshot, ``dynamic-bucket.target-row-num``, ``-max-buckets`` and the job's width
  (``dynamic-bucket.initial-buckets``, as Java's number of assigners). The hash, mixed by
  murmur's finalizer, picks a bucket with probability weight / total.

The plan's weights are each open bucket's room (target minus its keys) and ``target`` for
each new bucket, so the buckets fill together and all reach the target when the job brings
as many new keys as the plan has room. How many new buckets a partition opens: at least
enough to have ``width`` open buckets, and enough room for the load a job is expected to
bring, which is the partition's own key count (a job at most doubles a partition, so a
partition grows by doubling) or, for a partition the index does not know, the mean key count
of the table's partitions. New buckets take the smallest free ids below
``dynamic-bucket.max-buckets``; once that bound leaves no free id, the load the plan cannot
place spreads over every existing bucket, as Java's assigner picks a random existing bucket
at the bound. A job that brings more new keys than its plan has room overfills its buckets by
that ratio; the next job opens new buckets for its own keys.

Keys never get two buckets: a key's bucket is a function of its hash and the pinned state,
which every task computes the same. Mirrors the assignment half of
org.apache.paimon.index.{HashBucketAssigner, PartitionIndex, SimpleHashBucketAssigner}.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from paimon_pyspark.bucket.dynamic import HashIndex
from paimon_pyspark.bucket.routers import Batch, HashDynamicRouter
from paimon_pyspark.errors import OptionError
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]

MAX_BUCKET_ID = 32767
"""Buckets are shorts in Java's index map: ids stay below this."""
_SCALE_BITS = 31


@dataclass(frozen=True)
class AgreedBuckets:
    """What a job's driver pins for its tasks: the snapshot whose index every task reads (None:
    the table had none) and the number of buckets a partition keeps open. Plain ints: it goes
    to the executors inside the job."""

    snapshot_id: int | None
    width: int


def agreed_buckets(store: FileStore, parallelism: int | None = None) -> AgreedBuckets:
    """Pin the latest snapshot and the width, as Java sizes its assigners: ``width`` =
    ``dynamic-bucket.initial-buckets``, at most the assigner parallelism
    (``dynamic-bucket.assigner-parallelism``, else ``parallelism``), at most
    ``dynamic-bucket.max-buckets``; 1 when none is known."""
    o = store.options
    parallel = o.dynamic_bucket_assigner_parallelism or parallelism
    initial = o.dynamic_bucket_initial_buckets
    if initial is not None:
        width = min(initial, parallel) if parallel is not None else initial
    else:
        width = parallel if parallel is not None else 1
    if o.dynamic_bucket_max_buckets != -1:
        width = min(width, o.dynamic_bucket_max_buckets)
    if width < 1:
        raise OptionError(
            f"Table '{store.name}': dynamic-bucket.initial-buckets and "
            f"-assigner-parallelism must be >= 1, got a width of {width}."
        )
    snapshot = store.snapshot_manager.latest()
    return AgreedBuckets(None if snapshot is None else snapshot.id, width)


def mix32(hashes: I32) -> U64:
    """Murmur3's 32-bit finalizer of every hash, as uint64 in [0, 2**32): the key hashes index
    buckets modulo counts elsewhere, this decorrelates the plan's pick from those."""
    h = hashes.astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h.astype(np.uint64)


@dataclass(frozen=True)
class BucketPlan:
    """New keys' buckets in one partition for one job: bucket ``ids[i]`` takes the hashes whose
    mix falls in the i-th slice of ``cumulative`` (integer weights, so every process computes
    the same slices)."""

    ids: I32
    cumulative: I64

    def choose(self, hashes: I32) -> I32:
        total = np.uint64(self.cumulative[-1])
        picks = (mix32(hashes) * total) >> np.uint64(32)
        slot = np.searchsorted(self.cumulative.astype(np.uint64), picks, side="right")
        return self.ids[slot]

    @staticmethod
    def of(weights: Mapping[int, int]) -> BucketPlan:
        """A plan from bucket -> weight (weights > 0), scaled to a total of about 2**31 with
        integer arithmetic so that ``choose`` cannot overflow."""
        ids = sorted(weights)
        total = sum(weights[b] for b in ids)
        scaled = [max(1, (weights[b] << _SCALE_BITS) // total) for b in ids]
        return BucketPlan(np.array(ids, np.int32), np.cumsum(np.array(scaled, np.int64)))


def plan_partition(
    counts: Mapping[int, int],
    target: int,
    width: int,
    expected: int,
    max_buckets: int,
) -> BucketPlan:
    """The plan of one partition whose buckets hold ``counts`` keys (module docstring).

    ``expected``: the load of a partition the index does not know (``counts`` empty)."""
    target = max(target, 1)
    limit = MAX_BUCKET_ID if max_buckets == -1 else min(max_buckets, MAX_BUCKET_ID)
    weights = {b: target - c for b, c in counts.items() if c < target}
    room = sum(weights.values())
    load = sum(counts.values()) if counts else expected
    wanted = max(0, width - len(weights), -(-(load - room) // target))
    fresh: list[int] = []
    candidate = 0
    while len(fresh) < wanted and candidate < limit:
        if candidate not in counts:
            fresh.append(candidate)
        candidate += 1
    for b in fresh:
        weights[b] = target
    missing = wanted - len(fresh)
    if missing > 0 and counts:
        share = max(1, missing * target // len(counts))
        for b in counts:
            weights[b] = weights.get(b, 0) + share
    if not weights:  # width 0 cannot happen (agreed_buckets); keep every bucket reachable
        weights = {b: 1 for b in counts} or {0: 1}
    return BucketPlan.of(weights)


class CachingIndexFileHandler(IndexFileHandler):
    """Reads each HASH index file once per task: the assigner loads a partition's files, the
    write's index maintainer then reads the previous file of every bucket it wrote again."""

    def __init__(self, handler: IndexFileHandler) -> None:
        super().__init__(
            handler.file_io,
            os.path.dirname(handler.index_dir),
            handler.codec,
            handler.external_paths,
            handler.table,
        )
        self._read: dict[str, I32] = {}

    def read_hash(self, meta: IndexFileMeta) -> I32:
        key = meta.external_path or meta.file_name
        hashes = self._read.get(key)
        if hashes is None:
            hashes = super().read_hash(meta)
            self._read[key] = hashes
        return hashes


@dataclass
class _Partition:
    hashes: I32
    buckets: I32
    plan: BucketPlan


class AgreedBucketAssigner:
    """The bucket of every key hash of a partition, the same in every task of a job."""

    def __init__(
        self,
        index: HashIndex,
        target_row_num: int,
        width: int,
        max_buckets: int,
        ignore_previous_files: bool,
    ) -> None:
        self.index = index
        self.target = target_row_num
        self.width = width
        self.max_buckets = max_buckets
        self.ignore_previous_files = ignore_previous_files
        self._partitions: dict[bytes, _Partition] = {}
        self._counts: dict[bytes, dict[int, int]] | None = None

    def counts(self) -> dict[bytes, dict[int, int]]:
        """Keys per bucket per partition in the pinned snapshot, from the index manifest."""
        if self._counts is None:
            counts: dict[bytes, dict[int, int]] = {}
            for e in self.index.handler.scan(self.index.snapshot, HASH_INDEX):
                per = counts.setdefault(e.partition, {})
                per[e.bucket] = per.get(e.bucket, 0) + e.index_file.row_count
            self._counts = counts
        return self._counts

    def expected_new_partition_load(self) -> int:
        """The mean key count of the table's partitions: what a new partition is sized for."""
        sizes = [sum(c.values()) for c in self.counts().values()]
        return sum(sizes) // len(sizes) if sizes else 0

    def assign(self, partition: bytes, hashes: I32) -> I32:
        state = self._partitions.get(partition)
        if state is None:
            state = self._load(partition)
            self._partitions[partition] = state
        out = state.plan.choose(hashes)
        if len(state.hashes):
            pos = np.minimum(np.searchsorted(state.hashes, hashes), len(state.hashes) - 1)
            known = state.hashes[pos] == hashes
            out[known] = state.buckets[pos[known]]
        return out

    def _load(self, partition: bytes) -> _Partition:
        counts = {} if self.ignore_previous_files else self.counts().get(partition, {})
        plan = plan_partition(
            counts,
            self.target,
            self.width,
            self.expected_new_partition_load(),
            self.max_buckets,
        )
        files = self.index.partition(partition)
        if not files:
            empty = np.zeros(0, np.int32)
            return _Partition(empty, empty, plan)
        h = np.concatenate([hashes for _, hashes in files]).astype(np.int32)
        b = np.concatenate([np.full(len(hs), bucket, np.int32) for bucket, hs in files])
        # a hash in two files: the later file wins, as HashBucketAssigner loads it
        h_rev, b_rev = h[::-1], b[::-1]
        order = np.argsort(h_rev, kind="stable")
        h_sorted = h_rev[order]
        first = np.ones(len(h_sorted), bool)
        first[1:] = h_sorted[1:] != h_sorted[:-1]
        return _Partition(h_sorted[first], b_rev[order[first]].astype(np.int32), plan)


class AgreedBucketRouter(HashDynamicRouter):
    """A HASH_DYNAMIC router for one task of a job that cannot shuffle: its index is the
    pinned snapshot's (read through ``CachingIndexFileHandler``), its buckets those of
    ``AgreedBucketAssigner``."""

    def __init__(
        self, store: FileStore, agreed: AgreedBuckets, ignore_previous_files: bool = False
    ) -> None:
        super().__init__(store, ignore_previous_files)
        assert self.hash_index is not None
        handler = CachingIndexFileHandler(self.hash_index.handler)
        snapshot: Snapshot | None = None
        if agreed.snapshot_id is not None:
            snapshot = store.snapshot_manager.snapshot(agreed.snapshot_id)
        self.hash_index = HashIndex(handler, snapshot, ignore_previous_files)
        o = store.options
        self.agreed = AgreedBucketAssigner(
            self.hash_index,
            o.dynamic_bucket_target_row_num,
            agreed.width,
            o.dynamic_bucket_max_buckets,
            ignore_previous_files,
        )

    def _assign(self, data: Batch, hashes: I32) -> I32:
        out = np.empty(data.num_rows, np.int32)
        for group in self._groups(data, None):
            if group.indices is None:
                out[:] = self.agreed.assign(group.partition, hashes)
            else:
                out[group.indices] = self.agreed.assign(group.partition, hashes[group.indices])
        return out
