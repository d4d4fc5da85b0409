"""Postpone-bucket tables through Spark: the Data Source writes postpone files, and the
postpone compaction runs as a Spark job (split per partition, merge per bucket, one commit)
with the rows the in-process compaction gives."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from tests.integration.table_helpers import read_all, sort_rows, write_commit
from tests.integration.test_postpone import SEED_STEPS

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact as compact_here
from paimon_pyspark.spark.job import STAGING_DIR
from paimon_pyspark.spark.pipeline import postpone_seed
from paimon_pyspark.spark.procedures import compact

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.int64()),
        pa.field("pt", pa.string(), nullable=False),
    ]
)
OPTIONS = {
    "bucket": "-2",
    "postpone.batch-write-fixed-bucket": "false",
    "postpone.default-bucket-num": "3",
}


def table(catalog: FileSystemCatalog, name: str) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["pt"], primary_keys=["pt", "k"], options=OPTIONS
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def batch(start: int, n: int, version: int) -> pa.Table:
    ks = list(range(start, start + n))
    return pa.table(
        {"k": ks, "v": [k * 10 + version for k in ks], "pt": [f"p{k % 4}" for k in ks]},
        schema=SCHEMA,
    )


def test_spark_postpone_compaction_equals_local_one(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    ours, here = table(catalog, "s"), table(catalog, "h")
    for t in (ours, here):
        write_commit(t, batch(0, 200, 0))
        write_commit(t.copy({"postpone.batch-write-fixed-bucket": "true"}), batch(150, 100, 1))
        write_commit(t, batch(100, 80, 2))
    assert read_all(ours).num_rows == 100  # only the fixed-bucket write is visible
    snapshot = compact(spark, warehouse, "db.s", partitions="pt=p0;pt=p1;pt=p2")
    assert (
        snapshot is not None and ours.snapshot_manager.snapshot(snapshot).commit_kind == "COMPACT"
    )
    compact_here(catalog, "db.h", partitions="pt=p0;pt=p1;pt=p2")
    assert sort_rows(read_all(ours)) == sort_rows(read_all(here))
    assert compact(spark, warehouse, "db.s") is not None  # pt=p3 is left
    compact_here(catalog, "db.h")
    assert sort_rows(read_all(ours)) == sort_rows(read_all(here))
    assert read_all(ours).num_rows == 250
    assert not os.listdir(os.path.join(ours.path, STAGING_DIR))


def test_data_source_writes_postpone_files(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    t = table(catalog, "ds")
    df = spark.createDataFrame(batch(0, 50, 0).to_pandas())
    df.write.format("paimon").option("warehouse", warehouse).option("table", "db.ds").mode(
        "append"
    ).save()
    assert read_all(t).num_rows == 0
    snapshot = t.snapshot_manager.latest()
    assert snapshot is not None
    assert {e.bucket for e in t.manifest_io.live_entries(snapshot)} == {-2}
    compact(spark, warehouse, "db.ds")
    assert sorted(read_all(t)["k"].to_pylist()) == list(range(50))
    # the seed's /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ as a write option
    more = spark.createDataFrame(batch(40, 20, 1).to_pandas()).repartition(3)
    more.write.format("paimon").option("warehouse", warehouse).option("table", "db.ds").option(
        "postpone.batch-write-fixed-bucket", "true"
    ).mode("append").save()
    got = {r["k"]: r["v"] for r in read_all(t).to_pylist()}
    assert got == {k: k * 10 + (1 if k >= 40 else 0) for k in range(60)}


def test_seed_scenario_with_spark_compaction(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    steps = postpone_seed(catalog, "db.seed", lambda name: compact(spark, warehouse, name), print)
    assert steps == SEED_STEPS
