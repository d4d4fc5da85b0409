"""One router per bucket mode, chosen once per table by :func:`new_router`.

Mirrors the per-mode parts of Java's write path: org.apache.paimon.table.sink's
FixedBucketRowKeyExtractor (HASH_FIXED), DynamicBucketRowKeyExtractor with HashBucketAssigner
(HASH_DYNAMIC), the cross-partition GlobalIndexAssigner (KEY_DYNAMIC),
UnawareBucketRowKeyExtractor (BUCKET_UNAWARE) and, in bucket/postpone.py, the postpone writes
(POSTPONE_MODE). Each router takes an Arrow batch, chooses its buckets (or takes those an
assigner stage chose, Java's ``write(row, bucket)``) and returns its groups
(bucket/router.py). A Spark job's assigner stages call the same routers' ``assign``.

* **HASH_FIXED** (``bucket = N``): the bucket key's BinaryRow hash modulo N (bucket/fixed.py).
* **BUCKET_UNAWARE** (append, ``bucket = -1``): one group per partition, bucket 0.
* **HASH_DYNAMIC** (``bucket = -1``, primary key holding every partition key): the bucket of
  each key from a HashBucketAssigner loaded from the HASH index of the snapshot the write
  starts on; the routed batch carries the key hashes, which the write keeps in the index files
  of the buckets it writes (write/dynamic.py).
* **KEY_DYNAMIC** (cross-partition upsert): a GlobalIndexAssigner bootstrapped from the table's
  live keys (``cross-partition-upsert.index-ttl`` honoured) routes every row and adds the -D
  records of keys that changed partition. No index file is written, as in Java. Reading the
  keys is a read, above the writers, so the facade injects the bootstrap
  (``read.bootstrap.bootstrapped_global_assigner``); a write given its buckets needs none.
"""

from __future__ import annotations

from typing import TypeAlias, assert_never

import numpy as np
import pyarrow as pa

from paimon_pyspark.bucket.cross_partition import GlobalIndexAssigner, KeyIndexBootstrap
from paimon_pyspark.bucket.dynamic import HashBucketAssigner, HashIndex, key_assigner
from paimon_pyspark.bucket.fixed import FixedBucketAssigner, hash_rows
from paimon_pyspark.bucket.postpone import PostponeRouter
from paimon_pyspark.bucket.router import I32, BucketRouter, RoutedBatch
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.deletion_vectors import index_handler_of
from paimon_pyspark.store.file_store import FileStore

Batch: TypeAlias = pa.Table | pa.RecordBatch


class HashFixedRouter(BucketRouter):
    mode = BucketMode.HASH_FIXED
    compacts_at_commit = True
    pure = True

    def __init__(self, store: FileStore) -> None:
        super().__init__(store)
        self.bucket_keys = store.bucket_keys
        key_types = [store.table_schema.field(k).type for k in self.bucket_keys]
        self.num_buckets = store.options.bucket
        self.assigner = FixedBucketAssigner(
            key_types, self.num_buckets, store.options.bucket_function_type, store.name
        )

    @property
    def fixed_num_buckets(self) -> int:
        return self.num_buckets

    def assign(self, data: Batch) -> I32:
        """The bucket of every row (a Spark job's bucket stage)."""
        return self.assigner.assign([data.column(k) for k in self.bucket_keys])

    def route(self, data: pa.Table, buckets: I32 | None = None) -> RoutedBatch:
        return RoutedBatch(data, self._groups(data, self.assign(data)))

    def total_buckets(self, partition: bytes, bucket: int) -> int:
        return self.num_buckets


class BucketUnawareRouter(BucketRouter):
    mode = BucketMode.BUCKET_UNAWARE
    continues_sequence = False
    pure = True

    def route(self, data: pa.Table, buckets: I32 | None = None) -> RoutedBatch:
        return RoutedBatch(data, self._groups(data, None))


class KeyHasher:
    """``BinaryRow.hashCode()`` of every row's trimmed primary key: what a dynamic-bucket
    assigner indexes, and what sends a key to one of a job's assigners."""

    def __init__(self, store: FileStore) -> None:
        self.names = store.table_schema.trimmed_primary_keys()
        self.types = [store.table_schema.field(k).type for k in self.names]

    def hashes(self, data: Batch) -> I32:
        return hash_rows([data.column(k) for k in self.names], self.types)

    def assigners(self, data: Batch, num_assigners: int) -> I32:
        """The assigner of every row, ``|hash % num_assigners|`` (Java's assigner routing)."""
        return key_assigner(self.hashes(data), num_assigners)


class _KeyedRouter(BucketRouter):
    """The two modes whose buckets an assigner that remembers keys chooses (``bucket = -1``)."""

    compacts_at_commit = True

    def __init__(self, store: FileStore) -> None:
        super().__init__(store)
        self.keys = KeyHasher(store)

    @property
    def accepts_buckets(self) -> bool:
        return True

    def _checked(self, data: pa.Table, buckets: I32) -> I32:
        buckets = np.asarray(buckets, np.int32)
        if len(buckets) != data.num_rows or (buckets < 0).any():
            raise ValueError(
                f"Table '{self.store.name}': {len(buckets)} buckets for {data.num_rows} rows; "
                "every row needs a bucket >= 0."
            )
        return buckets


class HashDynamicRouter(_KeyedRouter):
    """Dynamic buckets. Assigner ``assign_id`` of ``num_assigners`` (a Spark job's assigner
    tasks) owns the keys with ``|hash % num_assigners| == assign_id``."""

    mode = BucketMode.HASH_DYNAMIC

    def __init__(
        self,
        store: FileStore,
        ignore_previous_files: bool = False,
        num_assigners: int = 1,
        assign_id: int = 0,
    ) -> None:
        super().__init__(store)
        handler = index_handler_of(store)
        snapshot = store.snapshot_manager.latest()
        self.hash_index = HashIndex(handler, snapshot, ignore_previous_files)
        o = store.options
        self.assigner = HashBucketAssigner(
            self.hash_index.partition,
            o.dynamic_bucket_target_row_num,
            o.dynamic_bucket_max_buckets,
            num_assigners,
            assign_id,
        )

    def assign(self, data: Batch) -> I32:
        """Buckets for ``data``'s rows without writing them (a Spark job's assigner stage)."""
        return self._assign(data, self.keys.hashes(data))

    def _assign(self, data: Batch, hashes: I32) -> I32:
        out = np.empty(data.num_rows, np.int32)
        for group in self._groups(data, None):
            if group.indices is None:
                out[:] = self.assigner.assign(group.partition, hashes)
            else:
                out[group.indices] = self.assigner.assign(group.partition, hashes[group.indices])
        return out

    def route(self, data: pa.Table, buckets: I32 | None = None) -> RoutedBatch:
        hashes = self.keys.hashes(data)
        chosen = self._checked(data, self._assign(data, hashes) if buckets is None else buckets)
        return RoutedBatch(data, self._groups(data, chosen), hashes)


class KeyDynamicRouter(_KeyedRouter):
    """Cross-partition upsert. ``bootstrap`` builds the key index of the snapshot the write
    starts on, the first time a batch is routed without buckets; a Spark assigner task passes
    the ``assigner`` it bootstrapped itself instead."""

    mode = BucketMode.KEY_DYNAMIC

    def __init__(
        self,
        store: FileStore,
        bootstrap: KeyIndexBootstrap | None = None,
        assigner: GlobalIndexAssigner | None = None,
    ) -> None:
        super().__init__(store)
        # An overwrite still routes by the live keys, as Java's does (its IndexBootstrap reads
        # the latest snapshot whatever the commit replaces): a key that moves partition leaves
        # a -D record in its old partition, which a dynamic overwrite then replaces too.
        self.bootstrap = bootstrap
        self.global_assigner = assigner
        self.snapshot: Snapshot | None = None
        if assigner is None:  # the snapshot the write starts on, which the bootstrap reads
            self.snapshot = store.snapshot_manager.latest()

    def assign(self, data: pa.Table) -> tuple[pa.Table, I32]:
        """The rows to write and their buckets: -D records for keys leaving a partition
        (deduplicate), rows sent to the key's partition (partial-update, aggregation), rows
        dropped (first-row)."""
        if self.global_assigner is None:
            if self.bootstrap is None:
                raise UnsupportedOptionError(
                    f"Table '{self.store.name}': a cross-partition upsert write without "
                    "given buckets needs the table's key index; open the write from "
                    "table.new_batch_write_builder()."
                )
            self.global_assigner = self.bootstrap(self.store, self.snapshot)
        return self.global_assigner.process(data)

    def route(self, data: pa.Table, buckets: I32 | None = None) -> RoutedBatch:
        if buckets is None:
            data, buckets = self.assign(data)
        return RoutedBatch(data, self._groups(data, self._checked(data, buckets)))


def new_router(
    store: FileStore,
    ignore_previous_files: bool = False,
    key_index_bootstrap: KeyIndexBootstrap | None = None,
) -> BucketRouter:
    """The router of ``store``'s bucket mode. ``ignore_previous_files``: an overwrite (the
    dynamic-bucket index starts empty; a cross-partition key index does not)."""
    mode = store.bucket_mode
    match mode:
        case BucketMode.HASH_FIXED:
            return HashFixedRouter(store)
        case BucketMode.HASH_DYNAMIC:
            return HashDynamicRouter(store, ignore_previous_files)
        case BucketMode.KEY_DYNAMIC:
            return KeyDynamicRouter(store, key_index_bootstrap)
        case BucketMode.BUCKET_UNAWARE:
            return BucketUnawareRouter(store)
        case BucketMode.POSTPONE_MODE:
            return PostponeRouter(store)
        case _:
            assert_never(mode)
