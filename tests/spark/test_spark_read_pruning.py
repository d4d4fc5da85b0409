"""Spark reads pruned by the relation: option("filter") / option("columns") and spark.read.

Pruning is shown by damage, not by counters: files the read must skip are overwritten with
bytes no reader can decode, so a read that opened one would fail.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, PredicateError
from paimon_pyspark.spark import read, register

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("name", pa.string()),
        ("amount", pa.float64()),
        ("dt", pa.string()),
    ]
)
DAYS = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"]


def _rows(lo: int, hi: int) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": ids,
            "name": [f"n{i}" for i in ids],
            "amount": [i / 2 for i in ids],
            "dt": [DAYS[i % 4] for i in ids],
        },
        schema=SCHEMA,
    )


def _table(catalog: FileSystemCatalog, commits: int = 4, per_commit: int = 100) -> None:
    """Each commit writes ids [c * per_commit, (c + 1) * per_commit) into every partition, so
    every file covers its own id range."""
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    for c in range(commits):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(_rows(c * per_commit, (c + 1) * per_commit))
            builder.new_commit().commit(write.prepare_commit())


def _files(catalog: FileSystemCatalog) -> list[tuple[str, str]]:
    """(partition value, path) of every data file."""
    root = catalog.get_table("db.t").path
    out = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            if name.startswith("data-"):
                day = os.path.basename(os.path.dirname(folder)).removeprefix("dt=")
                out.append((day, os.path.join(folder, name)))
    return sorted(out)


def _damage(paths: list[str]) -> None:
    for p in paths:
        with open(p, "wb") as f:
            f.write(b"not a data file")


def _reader(spark: SparkSession, warehouse: str):  # type: ignore[no-untyped-def]
    register(spark)
    return spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")


@pytest.mark.datasource
def test_filter_option_opens_only_the_partition_it_keeps(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _table(catalog)
    _damage([p for day, p in _files(catalog) if day != "2026-11-02"])
    df = _reader(spark, warehouse).option("filter", "dt = '2026-11-02'").load()
    got = sorted(tuple(r) for r in df.collect())
    want = sorted(tuple(r.values()) for r in _rows(0, 400).to_pylist() if r["dt"] == "2026-11-02")
    assert got == want
    with pytest.raises(Exception, match="(?i)parquet"):  # the unpruned read opens them
        _reader(spark, warehouse).load().collect()


@pytest.mark.datasource
def test_filter_option_skips_files_by_their_stats_and_filters_rows_exactly(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _table(catalog)  # 4 commits x 4 partitions: 16 files, each of one commit's id range
    outside = []
    for _day, path in _files(catalog):
        ids = pq.read_table(path, columns=["id"]).column("id").to_pylist()
        if not any(310 <= i < 320 for i in ids):
            outside.append(path)
    assert len(outside) == 12
    _damage(outside)
    df = _reader(spark, warehouse).option("filter", "id >= 310 AND id < 320").load()
    assert sorted(r["id"] for r in df.collect()) == list(range(310, 320))
    assert df.where("name = 'n311'").count() == 1


@pytest.mark.datasource
def test_columns_option_gives_and_reads_only_those_columns(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _table(catalog, commits=1)
    df = _reader(spark, warehouse).option("columns", "amount, id").load()
    assert df.columns == ["amount", "id"]
    assert sorted(tuple(r) for r in df.collect()) == [(i / 2, i) for i in range(100)]
    both = _reader(spark, warehouse).option("columns", "id").option("filter", "amount >= 49")
    assert sorted(r["id"] for r in both.load().collect()) == [98, 99]
    with pytest.raises(Exception, match="nope"):
        _reader(spark, warehouse).option("columns", "id,nope").load()
    with pytest.raises(Exception, match="option 'columns' leaves out"):
        _reader(spark, warehouse).option("columns", "id").schema(
            "id bigint, name string"
        ).load().collect()


@pytest.mark.datasource
def test_a_query_after_a_filtered_query_on_the_same_view_returns_every_row(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _table(catalog, commits=1, per_commit=20)
    df = _reader(spark, warehouse).load()
    df.createOrReplaceTempView("pruning_view")
    assert spark.sql("SELECT * FROM pruning_view WHERE id = 1").count() == 1
    assert df.where("id = 1").count() == 1
    assert spark.sql("SELECT count(*) FROM pruning_view").collect()[0][0] == 20
    assert df.count() == 20
    bound = read(spark, warehouse, "db.t", where="id < 10")
    assert bound.where("id = 3").count() == 1
    assert bound.count() == 10


def test_spark_read_binds_where_columns_and_snapshot(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _table(catalog, commits=2)
    df = read(spark, warehouse, "db.t", where="dt = '2026-11-01' AND id < 50", columns=["id"])
    assert df.columns == ["id"]
    assert sorted(r["id"] for r in df.collect()) == [i for i in range(50) if i % 4 == 0]
    first = read(spark, warehouse, "db.t", columns="id", snapshot_id=1)
    assert first.count() == 100
    assert read(spark, warehouse, "db.t").count() == 200
    with pytest.raises(PredicateError, match="nope"):
        read(spark, warehouse, "db.t", where="nope = 1")
    with pytest.raises(PredicateError):
        read(spark, warehouse, "db.t", where="id = = 1")
    with pytest.raises(InvalidArgumentError, match="columns"):
        read(spark, warehouse, "db.t", columns=[1, 2])  # type: ignore[list-item]
    with pytest.raises(InvalidArgumentError, match="snapshot_id"):
        read(spark, warehouse, "db.t", snapshot_id=0)


def test_filter_on_a_value_column_of_a_primary_key_table_sees_only_merged_rows(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int64())])
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            schema, primary_keys=["k"], options={"bucket": "1", "write-only": "true"}
        ),
    )
    table = catalog.get_table("db.t")
    for data in ({"k": [1, 2], "v": [5, 6]}, {"k": [1], "v": [50]}):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.table(data, schema=schema))
            builder.new_commit().commit(write.prepare_commit())
    assert read(spark, warehouse, "db.t", where="v = 5").count() == 0
    assert sorted(tuple(r) for r in read(spark, warehouse, "db.t", where="v >= 6").collect()) == [
        (1, 50),
        (2, 6),
    ]
