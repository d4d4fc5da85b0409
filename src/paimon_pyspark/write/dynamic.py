"""Writing primary-key tables with ``bucket = -1``: dynamic buckets and cross-partition upsert.

The TableWrite side of Java's HASH_DYNAMIC and KEY_DYNAMIC modes:

* **dynamic bucket** (primary key contains the partition keys): rows get their bucket from a
  ``HashBucketAssigner`` (bucket/dynamic.py) loaded from the HASH index of the snapshot the
  write started on, and every written (partition, bucket) keeps its index file up to date as
  Java's DynamicBucketIndexMaintainer does: the bucket's previous key hashes plus the hashes of
  every record written (deletes too), written as a new complete file when it changed, shipped
  in the message's ``new_index_files``; the commit replaces the previous entry.
* **cross-partition upsert** (primary key without some partition key): a
  ``GlobalIndexAssigner`` (bucket/cross_partition.py) bootstrapped from the table's live keys
  (Java's IndexBootstrap, ``cross-partition-upsert.index-ttl`` honoured) routes every row and
  adds the -D records of keys that changed partition. No index file is written, as in Java.

A caller that assigned buckets itself (a Spark job after its assigner stage) passes them to
``TableWrite.write_arrow(data, buckets)``, Java's ``write(row, bucket)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_pyspark.bucket.cross_partition import GlobalIndexAssigner, dense_codes
from paimon_pyspark.bucket.dynamic import HashBucketAssigner
from paimon_pyspark.bucket.fixed import hash_rows
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler
from paimon_pyspark.store.paths import PathFactory

if TYPE_CHECKING:
    from paimon_pyspark.spec.snapshot import Snapshot
    from paimon_pyspark.store.file_store import FileStore

I32 = npt.NDArray[np.int32]
Indices = npt.NDArray[np.intp]


KeyIndexBootstrap = Callable[["FileStore", "Snapshot | None"], GlobalIndexAssigner]
"""Builds the cross-partition key index of a snapshot (Java's IndexBootstrap). Reading the
table's keys is a read, which sits above the writers, so the facade hands it in."""


class DynamicBucketWrite:
    def __init__(
        self,
        table: FileStore,
        ignore_previous_files: bool,
        num_assigners: int = 1,
        assign_id: int = 0,
        bootstrap: KeyIndexBootstrap | None = None,
    ) -> None:
        self.table = table
        self.bootstrap = bootstrap
        self.cross = table.bucket_mode == BucketMode.KEY_DYNAMIC
        self.ignore_previous_files = ignore_previous_files
        self.key_names = table.table_schema.trimmed_primary_keys()
        self.key_types = [table.table_schema.field(k).type for k in self.key_names]
        self.index = IndexFileHandler(table.file_io, table.path, table.manifest_io.codec)
        self.path_factory = PathFactory(table.path)
        self.snapshot: Snapshot | None = table.snapshot_manager.latest()
        o = table.options
        self.assigner = HashBucketAssigner(
            self._load_partition,
            o.dynamic_bucket_target_row_num,
            o.dynamic_bucket_max_buckets,
            num_assigners,
            assign_id,
        )
        self.global_assigner: GlobalIndexAssigner | None = None  # bootstrapped on first use
        if self.cross and ignore_previous_files:
            raise UnsupportedOptionError(
                f"Table '{table.name}': overwriting a cross-partition upsert table "
                "(bucket = -1, primary key without every partition key) is not supported "
                "by paimon_pyspark yet."
            )
        self._hash_entries: dict[tuple[bytes, int], IndexFileMeta] | None = None
        self._batch_hashes: I32 | None = None
        self._written: dict[tuple[bytes, int], list[I32]] = {}

    # --- routing -------------------------------------------------------------------------------

    def prepare(self, data: pa.Table, buckets: I32 | None) -> tuple[pa.Table, I32]:
        """The rows to write (cross-partition may add -D records) and their buckets."""
        if self.cross and buckets is None:
            # a writer given buckets (a Spark write stage) never needs the key index
            if self.global_assigner is None:
                if self.bootstrap is None:
                    raise UnsupportedOptionError(
                        f"Table '{self.table.name}': a cross-partition upsert write without "
                        "given buckets needs the table's key index; open the write from "
                        "table.new_batch_write_builder()."
                    )
                self.global_assigner = self.bootstrap(self.table, self.snapshot)
            data, buckets = self.global_assigner.process(data)
        if not self.cross:
            self._batch_hashes = self.key_hashes(data)
        if buckets is None:
            buckets = self._assign(data)
        buckets = np.asarray(buckets, np.int32)
        if len(buckets) != data.num_rows or (buckets < 0).any():
            raise ValueError(
                f"Table '{self.table.name}': {len(buckets)} buckets for {data.num_rows} rows; "
                "every row needs a bucket >= 0."
            )
        return data, buckets

    def assign(self, data: pa.Table) -> I32:
        """Buckets for ``data``'s rows without writing them (a Spark assigner stage)."""
        self._batch_hashes = self.key_hashes(data)
        return self._assign(data)

    def key_hashes(self, data: pa.Table | pa.RecordBatch) -> I32:
        """``BinaryRow.hashCode()`` of every row's trimmed primary key."""
        return hash_rows([data.column(k) for k in self.key_names], self.key_types)

    def _assign(self, data: pa.Table) -> I32:
        assert self._batch_hashes is not None
        hashes = self._batch_hashes
        out = np.empty(data.num_rows, np.int32)
        for partition, indices in partition_groups(self.table, data):
            if indices is None:
                out[:] = self.assigner.assign(partition, hashes)
            else:
                out[indices] = self.assigner.assign(partition, hashes[indices])
        return out

    def track(self, partition: bytes, bucket: int, indices: Indices | None) -> None:
        """Record the key hashes written to (partition, bucket) for its index file."""
        if self.cross or self._batch_hashes is None:
            return
        h = self._batch_hashes if indices is None else self._batch_hashes[indices]
        self._written.setdefault((partition, bucket), []).append(h)

    # --- index files ---------------------------------------------------------------------------

    def _entries(self) -> dict[tuple[bytes, int], IndexFileMeta]:
        if self._hash_entries is None:
            self._hash_entries = {
                (e.partition, e.bucket): e.index_file
                for e in self.index.scan(self.snapshot, HASH_INDEX)
            }
        return self._hash_entries

    def _load_partition(self, partition: bytes) -> list[tuple[int, I32]]:
        if self.ignore_previous_files:
            return []
        return [
            (bucket, self.index.read_hash(meta))
            for (p, bucket), meta in self._entries().items()
            if p == partition
        ]

    def index_files(self, partition: bytes, bucket: int) -> tuple[IndexFileMeta, ...]:
        """The bucket's new HASH index file, if its key set grew (Java's prepareCommit)."""
        written = self._written.pop((partition, bucket), None)
        if self.cross or not written:
            return ()
        previous = None if self.ignore_previous_files else self._entries().get((partition, bucket))
        old = self.index.read_hash(previous) if previous is not None else np.zeros(0, np.int32)
        old_set = sorted_unique(old)
        merged = sorted_unique(np.concatenate([old_set, *written]))
        if len(merged) == len(old_set) and previous is not None:
            return ()
        return (self.index.write_hash(merged.astype(np.int32), self.path_factory),)

    def delete_index_files(self, metas: tuple[IndexFileMeta, ...]) -> None:
        self.index.delete_quietly(metas)


def sorted_unique(values: I32) -> I32:
    """``np.unique`` by one sort: numpy's hash-based unique is several times slower on the
    hundreds of thousands of key hashes a bucket holds."""
    out = np.sort(values)
    if len(out) < 2:
        return out
    keep = np.empty(len(out), bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]


def partition_groups(table: FileStore, data: pa.Table) -> list[tuple[bytes, Indices | None]]:
    """(partition bytes, row indices) per partition of ``data``; None: all rows."""
    keys = table.partition_keys
    types = table.partition_types
    if not keys:
        return [(serialize_with_arity([], []), None)]
    codes = dense_codes([data.column(k) for k in keys])
    if (codes == codes[0]).all():
        values = [data.column(k)[0].as_py() for k in keys]
        return [(serialize_with_arity(values, types), None)]
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.diff(codes[order])) + 1
    bounds = [0, *starts.tolist(), len(codes)]
    out: list[tuple[bytes, Indices | None]] = []
    for lo, hi in itertools.pairwise(bounds):
        first = int(order[lo])
        values = [data.column(k)[first].as_py() for k in keys]
        out.append((serialize_with_arity(values, types), order[lo:hi]))
    return out


def new_global_assigner(
    table: FileStore, num_assigners: int = 1, assign_id: int = 0
) -> GlobalIndexAssigner:
    """An empty GlobalIndexAssigner for ``table`` (raises for a merge engine it cannot serve)."""
    schema = table.arrow_schema
    keys = table.table_schema.trimmed_primary_keys()
    o = table.options
    return GlobalIndexAssigner(
        pa.schema([schema.field(k) for k in keys]),
        pa.schema([schema.field(k) for k in table.partition_keys]),
        table.partition_types,
        o.merge_engine,
        o.dynamic_bucket_target_row_num,
        o.rowkind_field,
        num_assigners,
        assign_id,
    )
