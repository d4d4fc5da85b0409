"""The router of postpone-bucket tables (``bucket = -2``, POSTPONE_MODE).

Mirrors the routing of org.apache.paimon.postpone.PostponeBucketFileStoreWrite (every row to
the partition's postpone bucket) and, for ``postpone.batch-write-fixed-bucket``,
org.apache.paimon.table.PostponeUtils with the batch writers built on it (Flink's
PostponeBatchWriteOperator, Spark's PostponeFixBucketProcessor): a batch write puts rows
straight into real buckets, hashed as a fixed-bucket table would: a partition that has real
buckets keeps their count, a partition that has none gets ``postpone.default-bucket-num``.
A primary key without every partition key is routed the same way, by its trimmed key within
the row's partition: postpone mode keeps no global key index (Java neither).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.bucket.fixed import FixedBucketAssigner
from paimon_pyspark.bucket.router import I32, BucketRouter, RoutedBatch
from paimon_pyspark.errors import OptionError
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET, BucketMode
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.postpone import known_num_buckets


class PostponeRouter(BucketRouter):
    """Sends the rows of each partition to the postpone bucket, or (``fixed``: fixed-bucket
    batch writes, ``postpone.batch-write-fixed-bucket`` by default) to the real bucket their
    key hashes to among the partition's bucket count."""

    mode = BucketMode.POSTPONE_MODE

    def __init__(self, store: FileStore, fixed: bool | None = None) -> None:
        super().__init__(store)
        self.fixed = store.options.postpone_batch_write_fixed_bucket if fixed is None else fixed
        self.default_buckets = store.options.postpone_default_bucket_num
        self._known: dict[bytes, int] | None = None
        self.hasher: FixedBucketAssigner | None = None
        if self.fixed:
            key_types = [store.table_schema.field(k).type for k in store.bucket_keys]
            self.hasher = FixedBucketAssigner(
                key_types, 1, store.options.bucket_function_type, store.name
            )

    @property
    def accepts_buckets(self) -> bool:
        return self.fixed

    def pin(self, known: Mapping[bytes, int]) -> None:
        """Use these partitions' bucket counts (read once by a job's driver with
        ``known_num_buckets``) instead of reading the latest snapshot's."""
        self._known = dict(known)

    def num_buckets(self, partition: bytes) -> int:
        """The real bucket count a fixed-bucket write uses in ``partition``."""
        if self._known is None:
            self._known = known_num_buckets(self.store, self.store.snapshot_manager.latest())
        return self._known.setdefault(partition, self.default_buckets)

    def total_buckets(self, partition: bytes, bucket: int) -> int:
        return POSTPONE_BUCKET if bucket == POSTPONE_BUCKET else self.num_buckets(partition)

    def assign(self, data: pa.Table | pa.RecordBatch) -> I32:
        """The real bucket of every row of a fixed-bucket write, hashed among the bucket count
        of the row's partition (also a Spark job's bucket stage)."""
        if self.hasher is None:
            raise OptionError(
                f"Table '{self.store.name}': rows get real buckets only with "
                "'postpone.batch-write-fixed-bucket' = true."
            )
        hashes = self.hasher.hashes([data.column(k) for k in self.store.bucket_keys])
        keys = self.partition_keys
        if not keys:
            return self.hasher.buckets(hashes, self.num_buckets(serialize_with_arity([], [])))
        schema = self.store.arrow_schema
        partitions = pa.table({k: pc.cast(data.column(k), schema.field(k).type) for k in keys})
        counts = np.empty(data.num_rows, np.int64)
        for group in self._groups(partitions, None):
            rows = slice(None) if group.indices is None else group.indices
            counts[rows] = self.num_buckets(group.partition)
        return self.hasher.buckets(hashes, counts)

    def route(self, data: pa.Table, buckets: I32 | None = None) -> RoutedBatch:
        if buckets is None and not self.fixed:
            groups = [g._replace(bucket=POSTPONE_BUCKET) for g in self._groups(data, None)]
            return RoutedBatch(data, groups)
        if buckets is None:
            return RoutedBatch(data, self._groups(data, self.assign(data)))
        groups = self._groups(data, buckets)
        for partition, values, bucket, _ in groups:
            if not 0 <= bucket < self.num_buckets(partition):
                raise OptionError(
                    f"Table '{self.store.name}': bucket {bucket} given for partition {values}, "
                    f"which has {self.num_buckets(partition)} bucket(s)."
                )
        return RoutedBatch(data, groups)
