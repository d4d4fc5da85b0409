"""Dynamic-bucket assignment (``bucket = -1``, primary key containing the partition keys).

Mirrors org.apache.paimon.index.{HashBucketAssigner, PartitionIndex, BucketAssigner}: each
partition keeps ``key hash -> bucket`` and a row count per bucket. A known hash keeps its bucket;
a new one goes to the first bucket not yet holding ``dynamic-bucket.target-row-num`` keys, else
to a new bucket (the smallest id this assigner owns, up to ``dynamic-bucket.max-buckets``), else,
once that bound is reached, to a random existing bucket. The partition's index is loaded from the
HASH index files of the latest snapshot the first time the partition is written.

Vectorized: a batch's hashes are looked up in the sorted index with ``np.searchsorted``; the new
hashes (deduplicated in arrival order) are dealt out to buckets in bulk, which gives each key the
bucket Java's one-by-one loop would. Java iterates the non-full buckets in ``HashMap`` order,
which for bucket ids below the map's capacity is ascending; we always use ascending order.

Several assigners (Spark tasks) may share a partition: assigner ``assign_id`` of ``n`` handles the
keys with ``|hash % n| == assign_id`` and only creates buckets with ``bucket % n == assign_id``,
so no key is ever given two buckets (Java's ``numAssigners``/``assignId``).

``HashIndex`` is the HASH index of the snapshot a write starts on (Java's
IndexFileHandler.scanHashIndex as PartitionIndex.loadIndex and DynamicBucketIndexMaintainer
use it), scanned once and shared by the assigner and the write's index maintainer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from paimon_pyspark.errors import PaimonError
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

_MAX_BUCKET_ID = 32767  # buckets are shorts in Java's index map


class HashIndex:
    """The HASH index files of one snapshot, by (partition, bucket).

    ``ignore_previous_files`` (an overwrite): the partitions written are replaced, so the index
    reads as empty.
    """

    def __init__(
        self, handler: IndexFileHandler, snapshot: Snapshot | None, ignore_previous_files: bool
    ) -> None:
        self.handler = handler
        self.snapshot = snapshot
        self.ignore_previous_files = ignore_previous_files
        self._entries: dict[tuple[bytes, int], IndexFileMeta] | None = None

    def _scan(self) -> dict[tuple[bytes, int], IndexFileMeta]:
        if self._entries is None:
            self._entries = {
                (e.partition, e.bucket): e.index_file
                for e in self.handler.scan(self.snapshot, HASH_INDEX)
            }
        return self._entries

    def entry(self, partition: bytes, bucket: int) -> IndexFileMeta | None:
        """The bucket's live index file, which a new one replaces."""
        if self.ignore_previous_files:
            return None
        return self._scan().get((partition, bucket))

    def partition(self, partition: bytes) -> list[tuple[int, I32]]:
        """(bucket, key hashes) of every index file of ``partition``: a HashBucketAssigner's
        ``load``."""
        if self.ignore_previous_files:
            return []
        return [
            (bucket, self.handler.read_hash(meta))
            for (p, bucket), meta in self._scan().items()
            if p == partition
        ]


def key_assigner(hashes: I32, num_assigners: int) -> I32:
    """The assigner of each key hash: ``Math.abs(hash % numAssigners)``."""
    return np.abs(np.fmod(hashes.astype(np.int64), num_assigners)).astype(np.int32)


def deal_new_keys(
    count: int,
    counts: dict[int, int],
    target: int,
    is_mine: Callable[[int], bool],
    max_buckets: int,
    rng: np.random.Generator | None = None,
) -> tuple[I32, bool]:
    """Buckets for ``count`` new keys, in order; updates ``counts`` (bucket -> keys).

    Existing buckets below ``target`` are filled in ascending id order, then new buckets (the
    smallest free ids with ``is_mine``) take ``target`` keys each. With ``max_buckets`` > 0 and
    every allowed id in use, the rest go to random existing buckets (counts unchanged); returns
    (buckets, True) then. With ``max_buckets`` = -1, ids run up to 32766 and running out raises.
    """
    out = np.empty(count, np.int32)
    done = 0
    for bucket in sorted(counts):
        if done == count:
            break
        room = target - counts[bucket]
        if room <= 0 or not is_mine(bucket):
            continue
        take = min(room, count - done)
        out[done : done + take] = bucket
        counts[bucket] += take
        done += take
    limit = (_MAX_BUCKET_ID if max_buckets == -1 else max_buckets) - 1
    candidate = 0
    while done < count:
        while candidate <= limit and (candidate in counts or not is_mine(candidate)):
            candidate += 1
        if candidate > limit:
            break
        take = min(max(target, 1), count - done)
        out[done : done + take] = candidate
        counts[candidate] = take
        done += take
    if done == count:
        return out, False
    if max_buckets == -1:
        raise PaimonError(
            f"Too more bucket {limit}, you should increase target bucket row number {target}."
        )
    existing = np.array(sorted(counts), np.int32)
    if len(existing) == 0:
        raise PaimonError("dynamic-bucket.max-buckets leaves this assigner no bucket to use.")
    rng = rng or np.random.default_rng()
    out[done:] = rng.choice(existing, count - done)
    return out, True


@dataclass
class PartitionIndex:
    """``hash -> bucket`` of one partition (sorted arrays) and the key count of every bucket."""

    hashes: I32
    buckets: I32
    counts: dict[int, int]
    upper_bound_reached: bool = False

    def assign(
        self,
        hashes: I32,
        target: int,
        is_mine: Callable[[int], bool],
        max_buckets: int,
    ) -> I32:
        """The bucket of every row hash, new hashes added to the index (Java's assign).

        The batch's hashes are sorted once, so the lookup walks the index in order (a random
        ``searchsorted`` over a large index is cache-bound) and the new hashes come out sorted,
        ready to be inserted; they get their buckets in order of first arrival.
        """
        order = np.argsort(hashes)
        ordered = hashes[order]
        pos = np.searchsorted(self.hashes, ordered)
        size = len(self.hashes)
        if size:
            clipped = np.minimum(pos, size - 1)
            known = (pos < size) & (self.hashes[clipped] == ordered)
        else:
            clipped = pos
            known = np.zeros(len(hashes), bool)
        out = np.empty(len(hashes), np.int32)
        out[known] = self.buckets[clipped[known]]
        if not known.all():
            unknown = ~known
            new_hashes = ordered[unknown]
            starts = np.ones(len(new_hashes), bool)
            starts[1:] = new_hashes[1:] != new_hashes[:-1]
            fresh = new_hashes[starts]
            group = np.cumsum(starts) - 1
            first_arrival = np.minimum.reduceat(order[unknown], np.flatnonzero(starts))
            rank = np.argsort(first_arrival, kind="stable")
            if self.upper_bound_reached:
                existing = np.array(sorted(self.counts), np.int32)
                in_order = np.random.default_rng().choice(existing, len(fresh)).astype(np.int32)
            else:
                in_order, reached = deal_new_keys(
                    len(fresh), self.counts, target, is_mine, max_buckets
                )
                self.upper_bound_reached = reached
            fresh_buckets = np.empty(len(fresh), np.int32)
            fresh_buckets[rank] = in_order
            out[unknown] = fresh_buckets[group]
            at = np.searchsorted(self.hashes, fresh)
            self.hashes = np.insert(self.hashes, at, fresh)
            self.buckets = np.insert(self.buckets, at, fresh_buckets)
        result = np.empty(len(hashes), np.int32)
        result[order] = out
        return result


class HashBucketAssigner:
    """Assigns dynamic buckets per partition; Java's HashBucketAssigner.

    ``load(partition)`` returns the (bucket, key hashes) of every HASH index file of the
    partition in the latest snapshot; it is called once per partition. An overwriting write
    passes a loader that returns nothing, since the partitions it writes are replaced.
    """

    def __init__(
        self,
        load: Callable[[bytes], list[tuple[int, I32]]],
        target_row_num: int,
        max_buckets: int,
        num_assigners: int = 1,
        assign_id: int = 0,
    ) -> None:
        if not 0 <= assign_id < num_assigners:
            raise PaimonError(f"assign id {assign_id} must be in [0, {num_assigners}).")
        self.load = load
        self.target = target_row_num
        self.max_buckets = max_buckets
        self.num_assigners = num_assigners
        self.assign_id = assign_id
        self._partitions: dict[bytes, PartitionIndex] = {}

    def is_mine(self, bucket: int) -> bool:
        return bucket % self.num_assigners == self.assign_id % self.num_assigners

    def assign(self, partition: bytes, hashes: I32) -> I32:
        """The bucket of each key hash of ``partition`` (all must belong to this assigner)."""
        if (
            self.num_assigners > 1
            and (key_assigner(hashes, self.num_assigners) != self.assign_id).any()
        ):
            raise PaimonError(
                f"Key hashes routed to assigner {self.assign_id} of {self.num_assigners} belong "
                "to another assigner; route rows by |hash % assigners| first."
            )
        index = self._partitions.get(partition)
        if index is None:
            index = self._load(partition)
            self._partitions[partition] = index
        return index.assign(hashes, self.target, self.is_mine, self.max_buckets)

    def _load(self, partition: bytes) -> PartitionIndex:
        parts_h: list[I32] = []
        parts_b: list[I32] = []
        counts: dict[int, int] = {}
        for bucket, hashes in self.load(partition):
            if self.is_mine(bucket):
                counts[bucket] = counts.get(bucket, 0) + len(hashes)
            if self.num_assigners > 1:
                hashes = hashes[key_assigner(hashes, self.num_assigners) == self.assign_id]
            parts_h.append(hashes.astype(np.int32))
            parts_b.append(np.full(len(hashes), bucket, np.int32))
        if not parts_h:
            return PartitionIndex(np.zeros(0, np.int32), np.zeros(0, np.int32), counts)
        h = np.concatenate(parts_h)
        b = np.concatenate(parts_b)
        # a hash in two files (two writers of one bucket set): the later file wins, as in Java
        h_rev, b_rev = h[::-1], b[::-1]
        order = np.argsort(h_rev, kind="stable")  # one sort: np.unique hashes, which is slower
        h_sorted = h_rev[order]
        first = np.ones(len(h_sorted), bool)
        first[1:] = h_sorted[1:] != h_sorted[:-1]
        uniq = h_sorted[first].astype(np.int32)
        return PartitionIndex(uniq, b_rev[order[first]].astype(np.int32), counts)
