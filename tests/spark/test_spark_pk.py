"""Primary-key tables through both Spark doors: upserts, deletes, and sequence numbers that
never collide when several tasks write one bucket."""

from __future__ import annotations

import collections

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.spark import write
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("v", pa.string()),
        ("kind", pa.string()),
    ]
)


def _create(catalog: FileSystemCatalog) -> None:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, primary_keys=["id"], options={"bucket": "2", "rowkind.field": "kind"}
        ),
    )


def _df(spark: SparkSession, lo: int, hi: int, tag: str, kind: str = "+I") -> DataFrame:
    return spark.range(lo, hi, numPartitions=4).selectExpr(
        "id", f"concat('{tag}-', id) as v", f"'{kind}' as kind"
    )


def _save(df: DataFrame, warehouse: str) -> None:
    df.write.format("paimon").option("warehouse", warehouse).option("table", "db.t").mode(
        "append"
    ).save()


def _rows(spark: SparkSession, warehouse: str) -> dict[int, str]:
    df = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    return {r["id"]: r["v"] for r in df.load().collect()}


def _sequence_numbers_per_bucket(catalog: FileSystemCatalog) -> dict[int, list[int]]:
    table = catalog.get_table("db.t")
    out: dict[int, list[int]] = {}
    for split in table.new_read_builder().new_scan().plan().splits():
        records = read_kv_records(table, split.bucket_path, split.files)
        out[split.bucket] = records.column(SEQUENCE_NUMBER).to_pylist()
    return out


@pytest.mark.datasource
@pytest.mark.parametrize("door", ["format", "spark.write"])
def test_upserts_and_deletes_through_spark(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, door: str
) -> None:
    _create(catalog)

    def put(df: DataFrame) -> None:
        _save(df, warehouse) if door == "format" else write(df, warehouse, "db.t")

    put(_df(spark, 0, 1000, "a"))
    put(_df(spark, 500, 1500, "b"))
    put(_df(spark, 0, 100, "gone", kind="-D"))
    expected = {i: ("a" if i < 500 else "b") + f"-{i}" for i in range(100, 1500)}
    assert _rows(spark, warehouse) == expected
    table = catalog.get_table("db.t")
    latest = table.snapshot_manager.latest_id() or 0
    kinds = [table.snapshot_manager.snapshot(i).commit_kind for i in range(1, latest + 1)]
    assert kinds.count("APPEND") == 3  # one per write; format's driver compacts after some
    assert set(kinds) <= {"APPEND", "COMPACT"}
    for seqs in _sequence_numbers_per_bucket(catalog).values():
        assert len(seqs) == len(set(seqs))


@pytest.mark.datasource
def test_tasks_sharing_a_bucket_never_share_a_sequence_number(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _create(catalog)
    _save(_df(spark, 0, 2000, "a"), warehouse)  # 4 tasks, each writing both buckets
    table = catalog.get_table("db.t")
    files_per_bucket = collections.Counter(
        s.bucket for s in table.new_read_builder().new_scan().plan().splits() for _ in s.files
    )
    assert files_per_bucket == {0: 4, 1: 4}
    seqs = _sequence_numbers_per_bucket(catalog)
    assert sum(len(v) for v in seqs.values()) == 2000
    for values in seqs.values():
        assert len(values) == len(set(values))
    _save(_df(spark, 0, 2000, "b"), warehouse)
    assert _rows(spark, warehouse) == {i: f"b-{i}" for i in range(2000)}


def test_spark_write_gives_each_bucket_one_task(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _create(catalog)
    write(_df(spark, 0, 2000, "a"), warehouse, "db.t")
    table = catalog.get_table("db.t")
    splits = table.new_read_builder().new_scan().plan().splits()
    assert sorted(len(s.files) for s in splits) == [1, 1]
    for values in _sequence_numbers_per_bucket(catalog).values():
        assert sorted(values) == list(range(len(values)))


@pytest.mark.datasource
def test_first_row_rows_are_visible_after_a_format_write(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, primary_keys=["id"], options={"bucket": "2", "merge-engine": "first-row"}
        ),
    )
    _save(_df(spark, 0, 1000, "a"), warehouse)  # 4 tasks share both buckets
    assert _rows(spark, warehouse) == {i: f"a-{i}" for i in range(1000)}
    _save(_df(spark, 500, 1500, "b"), warehouse)  # first row wins: keys < 1000 keep "a"
    expected = {i: ("a" if i < 1000 else "b") + f"-{i}" for i in range(1500)}
    assert _rows(spark, warehouse) == expected
    table = catalog.get_table("db.t")
    kinds = [table.snapshot_manager.snapshot(i).commit_kind for i in range(1, 5)]
    assert kinds == ["APPEND", "COMPACT", "APPEND", "COMPACT"]
    live = table.manifest_io.live_entries(table.snapshot_manager.latest())
    assert live and all(e.file.level > 0 for e in live)
