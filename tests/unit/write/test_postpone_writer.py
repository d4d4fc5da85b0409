"""Postpone-bucket writing pieces: the file prefix, the write order of files, and the routing of
fixed-bucket batch writes (per-partition bucket counts, arrival order kept in each bucket)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.bucket.fixed import FixedBucketAssigner
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import EMPTY_ROW_BYTES, EMPTY_STATS, DataFileMeta
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.store.postpone import order_postpone_files, postpone_file_prefix
from paimon_pyspark.types.data_types import AtomicType
from paimon_pyspark.write.postpone import PostponeRouting

SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), nullable=False), pa.field("pt", pa.string(), nullable=False)]
)


def meta(name: str, created: int) -> DataFileMeta:
    return DataFileMeta(
        file_name=name,
        file_size=1,
        row_count=1,
        min_key=EMPTY_ROW_BYTES,
        max_key=EMPTY_ROW_BYTES,
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=-1,
        max_sequence_number=-1,
        schema_id=0,
        level=0,
        creation_time=created,
    )


def test_postpone_file_prefix_is_javas() -> None:
    assert postpone_file_prefix("data-", "u1", 7) == "data--u-u1-s-7-w-"


def test_postpone_files_replay_by_creation_time_then_counter() -> None:
    prefix = "data--u-a-s-1-w-uuid-"
    files = [meta(f"{prefix}10.parquet", 5), meta(f"{prefix}2.parquet", 5), meta("x-0.avro", 1)]
    names = [f.file_name for f in order_postpone_files(files)]
    assert names == ["x-0.avro", f"{prefix}2.parquet", f"{prefix}10.parquet"]
    same = [replace(files[0], file_name="b-0.parquet"), replace(files[1], file_name="a-0.parquet")]
    assert [f.file_name for f in order_postpone_files(same)] == ["b-0.parquet", "a-0.parquet"]


def test_fixed_bucket_routing_uses_each_partitions_count(catalog: FileSystemCatalog) -> None:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["pt"],
            primary_keys=["pt", "k"],
            options={"bucket": "-2", "postpone.default-bucket-num": "3"},
        ),
    )
    table = catalog.get_table("db.t")
    routing = PostponeRouting(table, fixed=True)
    types = table.partition_types
    a, b = serialize_with_arity(["a"], types), serialize_with_arity(["b"], types)
    routing._known = {a: 5}  # as if partition a had 5 real buckets
    keys = np.arange(40, dtype=np.int64)[::-1]
    data = pa.table({"k": keys, "pt": ["a" if k % 2 else "b" for k in keys]}, schema=SCHEMA)
    by_partition = [
        (a, ["a"], 0, np.flatnonzero(data["pt"].to_numpy(zero_copy_only=False) == "a")),
        (b, ["b"], 0, np.flatnonzero(data["pt"].to_numpy(zero_copy_only=False) == "b")),
    ]
    groups = list(routing.split(data, iter(by_partition)))
    for partition, n in ((a, 5), (b, 3)):
        expected = FixedBucketAssigner([AtomicType(name="BIGINT", nullable=False)], n)
        for p, _, bucket, rows in groups:
            if p != partition:
                continue
            assert rows is not None and list(rows) == sorted(rows)  # arrival order kept
            got = expected.assign([pa.array(keys[rows])])
            assert set(got.tolist()) == {bucket}
    assert {routing.total_buckets(a, 0), routing.total_buckets(b, 1)} == {5, 3}
    assert routing.total_buckets(a, POSTPONE_BUCKET) == POSTPONE_BUCKET
    postponed = list(PostponeRouting(table, fixed=False).split(data, iter(by_partition)))
    assert [g[2] for g in postponed] == [POSTPONE_BUCKET, POSTPONE_BUCKET]
