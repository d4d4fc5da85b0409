"""A batch's (partition, bucket) groups: what every bucket mode's router returns, grouped once.

Mirrors the routing half of org.apache.paimon.table.sink.TableWriteImpl: Java extracts each
record's partition and bucket with the RowKeyExtractor and BucketAssigner of the table's
BucketMode, then hands it to the writer of that (partition, bucket). Here one ``BucketRouter``
per mode (bucket/routers.py, bucket/postpone.py) does that for a whole Arrow batch at once:
it chooses the buckets its mode's way and groups the rows with :func:`group_rows`, which every
router shares.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.bucket.dynamic import HashIndex
from paimon_pyspark.errors import OptionError
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.store.bucket_mode import DYNAMIC_BUCKET, BucketMode
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.arrow import one_array
from paimon_pyspark.types.data_types import DataType

I32 = npt.NDArray[np.int32]
Indices = npt.NDArray[np.intp]


class Group(NamedTuple):
    """The rows of a batch that go to one (partition, bucket)."""

    partition: bytes
    """The partition as BinaryRow bytes (the key of manifests and commit messages)."""
    values: list[Any]
    bucket: int
    indices: Indices | None
    """The rows' positions in arrival order; None when every row of the batch is in it."""


@dataclass(frozen=True)
class RoutedBatch:
    """A routed batch: the rows to write and their groups.

    ``data`` is the batch itself, except in KEY_DYNAMIC mode, where it also holds the -D
    records of keys that moved partition (or lost the rows first-row keeps out).
    ``key_hashes`` (HASH_DYNAMIC): every row's key hash, for the bucket's HASH index file.
    """

    data: pa.Table
    groups: list[Group]
    key_hashes: I32 | None = None

    def hashes_of(self, group: Group) -> I32 | None:
        """The key hashes of one group's rows (HASH_DYNAMIC), else None."""
        if self.key_hashes is None or group.indices is None:
            return self.key_hashes
        return self.key_hashes[group.indices]


def group_rows(
    data: pa.Table | pa.RecordBatch,
    keys: Sequence[str],
    types: Sequence[DataType],
    buckets: I32 | None,
) -> list[Group]:
    """The (partition, bucket) groups of ``data``, in order of partition then bucket.

    Partition columns are dictionary-encoded and combined with the bucket into one code per
    row; a stable argsort of the codes (a radix sort when they fit 16 bits) groups the rows,
    each group keeping arrival order. Without ``buckets`` every group has bucket 0.
    """
    n = data.num_rows
    if n == 0:
        return []
    if not keys and buckets is None:
        return [Group(serialize_with_arity([], []), [], 0, None)]
    parts: list[tuple[npt.NDArray[Any], int]] = []
    for k in keys:
        encoded = pc.dictionary_encode(one_array(data.column(k)), null_encoding="encode")
        parts.append((encoded.indices.to_numpy(zero_copy_only=False), len(encoded.dictionary)))
    if buckets is not None:  # num_buckets, or the highest dynamic bucket + 1
        parts.append((buckets, int(buckets.max()) + 1))
    codes, radix = _combined_codes(parts)
    slices: list[Indices | None]
    if radix <= _COUNTED:
        counts = np.bincount(codes, minlength=radix)
        present = counts[counts > 0]
        if len(present) == 1:
            slices, firsts = [None], [0]
        else:
            order = np.argsort(codes, kind="stable")  # a radix sort of 16-bit codes
            bounds = [0, *np.cumsum(present).tolist()]
            slices = [order[lo:hi] for lo, hi in itertools.pairwise(bounds)]
            firsts = [int(order[lo]) for lo in bounds[:-1]]
    elif (codes == codes[0]).all():
        slices, firsts = [None], [0]
    else:
        order = np.argsort(codes, kind="stable")
        starts = np.flatnonzero(np.diff(codes[order])) + 1
        bounds = [0, *starts.tolist(), n]
        slices = [order[lo:hi] for lo, hi in itertools.pairwise(bounds)]
        firsts = [int(order[lo]) for lo in bounds[:-1]]
    out = []
    for indices, first in zip(slices, firsts, strict=True):
        values = [data.column(k)[first].as_py() for k in keys]
        bucket = 0 if buckets is None else int(buckets[first])
        out.append(Group(serialize_with_arity(values, types), values, bucket, indices))
    return out


_COUNTED = 1 << 16
"""Codes up to this many values are counted (``bincount``) and sorted as 16-bit integers."""


def _combined_codes(parts: Sequence[tuple[npt.NDArray[Any], int]]) -> tuple[npt.NDArray[Any], int]:
    """One code per row from each part's codes (0 .. cardinality - 1), ordered as the parts are,
    in the narrowest integer type that holds them; codes that would pass 2**31 are renumbered
    densely (``np.unique`` keeps their order) before the next part is combined."""
    codes, radix = parts[0]
    for more, cardinality in parts[1:]:
        if radix * cardinality >= 1 << 31:
            kept, codes = np.unique(codes, return_inverse=True)
            radix = len(kept)
        codes = codes.astype(np.int64) * cardinality + more
        radix *= cardinality
    if radix <= _COUNTED:
        return codes.astype(np.uint16), radix
    return codes, radix


class BucketRouter(ABC):
    """Routes a table's batches to their (partition, bucket) groups, its bucket mode's way.

    One per table write, chosen once by ``routers.new_router``. Besides routing, a router
    answers what the write does differently per mode: whether buckets may be given
    (``accepts_buckets``), the total buckets a commit message carries, whether writers continue
    the bucket's sequence numbers, whether a bucket's count is fixed, and whether a lookup
    table's buckets are compacted at commit.
    """

    mode: ClassVar[BucketMode]
    continues_sequence: ClassVar[bool] = True
    """Writers number records after the bucket's highest sequence number (every mode but
    BUCKET_UNAWARE, whose new files start at 0)."""
    pure: ClassVar[bool] = False
    """``route`` keeps no state between batches, so slices of one batch may be routed at once
    on several threads (HASH_FIXED and BUCKET_UNAWARE; the dynamic modes assign buckets in
    arrival order, and postpone caches the partitions' bucket counts as it meets them)."""
    compacts_at_commit: ClassVar[bool] = False
    """A writer that owns the buckets it writes compacts them as it writes and at its commit
    (write/compact_manager.py), as Java's writers do in fixed, dynamic and cross-partition
    modes; unaware and postpone writers never compact (Java's have no compaction there)."""

    def __init__(self, store: FileStore) -> None:
        self.store = store
        self.partition_keys = store.partition_keys
        self.partition_types = store.partition_types
        self.hash_index: HashIndex | None = None
        """HASH_DYNAMIC: the index the assigner loads from, whose files the write updates."""

    @property
    def accepts_buckets(self) -> bool:
        """A write may pass buckets an assigner stage chose (Java's ``write(row, bucket)``)."""
        return False

    @property
    def fixed_num_buckets(self) -> int | None:
        """The bucket count every partition must already have (HASH_FIXED), else None."""
        return None

    @abstractmethod
    def route(self, data: pa.Table, buckets: I32 | None = None) -> RoutedBatch:
        """The groups of ``data`` (aligned to the table, with ``_VALUE_KIND`` for primary-key
        tables); ``buckets``, one per row, when ``accepts_buckets``."""

    def total_buckets(self, partition: bytes, bucket: int) -> int:
        """The ``total_buckets`` of the commit message of (partition, bucket)."""
        return DYNAMIC_BUCKET

    def pin(self, known: Mapping[bytes, int]) -> None:
        """POSTPONE_MODE only: the partitions' known bucket counts, read once by a driver."""
        raise OptionError(f"Table '{self.store.name}' is not a postpone-bucket table.")

    def _groups(self, data: pa.Table | pa.RecordBatch, buckets: I32 | None) -> list[Group]:
        return group_rows(data, self.partition_keys, self.partition_types, buckets)
