"""Postpone-bucket tables through Spark: the Data Source writes postpone files, and the
postpone compaction runs as a Spark job (split per partition, merge per bucket, one commit)
with the rows the in-process compaction gives."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import SparkSession
from tests.integration.table_helpers import read_all, sort_rows, write_commit
from tests.integration.test_postpone import SEED_STEPS

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact as compact_here
from paimon_pyspark.procedures import rescale as rescale_here
from paimon_pyspark.spark import write
from paimon_pyspark.spark.job import STAGING_DIR
from paimon_pyspark.spark.pipeline import postpone_seed
from paimon_pyspark.spark.procedures import compact
from paimon_pyspark.spec.binary_row import serialize_with_arity

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


@pytest.mark.datasource
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


def _new_files(t: FileStoreTable, before: set[str]) -> list[tuple[bytes, int, int, int, int, int]]:
    """(partition, bucket, total buckets, rows, min seq, max seq) of live files not in before."""
    snapshot = t.snapshot_manager.latest()
    assert snapshot is not None
    return sorted(
        (
            e.partition,
            e.bucket,
            e.total_buckets,
            e.file.row_count,
            e.file.min_sequence_number,
            e.file.max_sequence_number,
        )
        for e in t.manifest_io.live_entries(snapshot)
        if e.file.file_name not in before
    )


def _file_names(t: FileStoreTable) -> set[str]:
    snapshot = t.snapshot_manager.latest()
    if snapshot is None:
        return set()
    return {e.file.file_name for e in t.manifest_io.live_entries(snapshot)}


def test_spark_write_without_fixed_bucket_writes_postpone_files_per_task(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    ours, here = table(catalog, "wp"), table(catalog, "wh")
    data = batch(0, 200, 0)
    df = spark.createDataFrame(data.to_pandas()).repartition(3)
    ids = write(df, warehouse, "db.wp")
    write_commit(here, data)
    assert len(ids) == 1 and ours.snapshot_manager.snapshot(ids[0]).commit_kind == "APPEND"
    assert read_all(ours).num_rows == 0  # invisible until compaction, as in the core path
    new = _new_files(ours, set())
    assert {(b, total, lo, hi) for _, b, total, _, lo, hi in new} == {(-2, -2, -1, -1)}
    assert sum(n for *_, n, _, _ in new) == 200
    # no shuffle: each of the 3 tasks wrote its own postpone file of every partition it held
    assert 4 < len(new) <= 3 * 4
    compact(spark, warehouse, "db.wp")
    compact_here(catalog, "db.wh")
    assert sort_rows(read_all(ours)) == sort_rows(read_all(here))
    assert read_all(ours).num_rows == 200
    assert not os.listdir(os.path.join(ours.path, STAGING_DIR))


def test_spark_write_with_fixed_bucket_uses_each_partitions_bucket_count(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """p1 was rescaled to 1 bucket, p0 has the default 3, p2 and p3 are new (default 3): the
    Spark write puts one file into each bucket it writes, numbered after the bucket's files, and
    holds what the core API's fixed-bucket write of the same data holds."""
    fixed = {"postpone.batch-write-fixed-bucket": "true"}
    ours, here = table(catalog, "wf"), table(catalog, "wfh")
    first = batch(0, 40, 0)
    first = first.filter(pc.is_in(first["pt"], pa.array(["p0", "p1"])))
    for t in (ours, here):
        write_commit(t.copy(fixed), first)
        rescale_here(catalog, t.name, bucket_num=1, partition="pt=p1")
    data = batch(10, 300, 1)
    before_ours, before_here = _file_names(ours), _file_names(here)
    df = spark.createDataFrame(data.to_pandas()).repartition(4)
    ids = write(df, warehouse, "db.wf", options=fixed)
    write_commit(here.copy(fixed), data)
    assert len(ids) == 1
    got = {r["k"]: r["v"] for r in read_all(ours).to_pylist()}  # visible at once
    assert got == {r["k"]: r["v"] for r in read_all(here).to_pylist()}
    assert set(got) == set(range(310)) - {k for k in range(10) if k % 4 > 1}
    new = _new_files(ours, before_ours)
    totals = {p: total for p, _, total, *_ in new}
    assert totals == {
        _pt(ours, "p0"): 3,
        _pt(ours, "p1"): 1,
        _pt(ours, "p2"): 3,
        _pt(ours, "p3"): 3,
    }
    assert len({(p, b) for p, b, *_ in new}) == len(new) == 3 + 1 + 3 + 3  # a file per bucket
    for _, _, _, rows, lo, hi in new:
        assert hi - lo + 1 == rows  # one writer per bucket: contiguous sequence numbers
    assert [f[:4] for f in new] == [f[:4] for f in _new_files(here, before_here)]
    assert not os.listdir(os.path.join(ours.path, STAGING_DIR))


def test_spark_write_postpone_default_is_fixed_bucket(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["pt"], primary_keys=["pt", "k"], options={"bucket": "-2"}
    )
    catalog.create_table("db.wd", schema)
    t = catalog.get_table("db.wd")
    write(spark.createDataFrame(batch(0, 20, 0).to_pandas()), warehouse, "db.wd")
    assert sorted(read_all(t)["k"].to_pylist()) == list(range(20))
    # postpone.default-bucket-num is 1 by default, as in Java
    assert {(b, total) for _, b, total, *_ in _new_files(t, set())} == {(0, 1)}


def _pt(t: FileStoreTable, pt: str) -> bytes:
    return serialize_with_arity([pt], t.partition_types)
