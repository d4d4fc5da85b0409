"""Incremental reads through Spark: ``spark.read.format("paimon").option("incremental-between",
...)``, ``paimon_pyspark.spark.read(options=...)`` and a SQL hint return the rows the Python API
returns, which tests/integration/test_incremental_read.py holds to a model of the commits."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.errors import OptionError
from paimon_pyspark.procedures import compact
from paimon_pyspark.spark import read, sql

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        pa.field("p", pa.int32(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        ("v", pa.string()),
    ]
)


def commit(table: FileStoreTable, rows: list[tuple[int, int, str]], delete: bool = False) -> None:
    data = pa.table(
        {"p": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows]},
        schema=SCHEMA,
    )
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        if delete:
            w.delete_arrow(data)
        else:
            w.write_arrow(data)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def ours(table: FileStoreTable, options: dict[str, str]) -> list[tuple[Any, ...]]:
    rb = table.copy(options).new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((r["p"], r["id"], r["v"]) for r in rows)


def rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted((r["p"], r["id"], r["v"]) for r in df.collect())


@pytest.fixture
def pk_table(warehouse: str) -> FileStoreTable:
    """APPEND 1-3 (3 deletes id 1), COMPACT 4, APPEND 5; tags s1, s3, s5."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["p"], primary_keys=["p", "id"], options={"bucket": "2"}
    )
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    commit(table, [(1, 1, "a1"), (1, 2, "a2"), (2, 3, "a3"), (2, 4, "a4")])
    commit(table, [(1, 2, "b2"), (2, 5, "b5"), (1, 6, "b6")])
    commit(table, [(1, 1, "a1")], delete=True)
    assert compact(catalog, "db.t") == 4
    commit(table, [(1, 7, "d7"), (2, 3, "d3")])
    for sid in (1, 3, 5):
        table.create_tag(f"s{sid}", sid)
    return table


CASES = [
    {"incremental-between": "1,3"},
    {"incremental-between": "1,5"},
    {"incremental-between": "0,5"},
    {"incremental-between": "s1,s5"},  # a diff: the Spark tasks plan the start's files again
    {"incremental-between": "s3,s5"},
    {"incremental-between": "2,5", "incremental-between-scan-mode": "diff"},
]


@pytest.mark.datasource
def test_format_paimon_reads_incrementally_as_the_python_api(
    spark: SparkSession, warehouse: str, pk_table: FileStoreTable
) -> None:
    for options in CASES:
        df = (
            spark.read.format("paimon")
            .option("warehouse", warehouse)
            .option("table", "db.t")
            .options(**options)
            .load()
        )
        expected = ours(pk_table, options)
        assert expected, options
        assert rows(df) == expected, options
    assert ours(pk_table, {"incremental-between": "1,3"}) == [
        (1, 2, "b2"),
        (1, 6, "b6"),
        (2, 5, "b5"),
    ]


def test_spark_read_and_sql_hint_pass_the_options_through(
    spark: SparkSession, warehouse: str, pk_table: FileStoreTable
) -> None:
    expected = ours(pk_table, {"incremental-between": "s1,s5"})
    df = read(spark, warehouse, "db.t", options={"incremental-between": "s1,s5"})
    assert rows(df) == expected
    where = read(spark, warehouse, "db.t", where="p = 2", options={"incremental-between": "1,5"})
    assert rows(where) == [r for r in ours(pk_table, {"incremental-between": "1,5"}) if r[0] == 2]
    hinted = sql(
        spark,
        "SELECT * FROM db.t /*+ OPTIONS('incremental-between' = '1,3') */",
        warehouse=warehouse,
    )
    assert rows(hinted) == ours(pk_table, {"incremental-between": "1,3"})


def test_a_bad_bound_fails_when_the_relation_is_loaded(
    spark: SparkSession, warehouse: str, pk_table: FileStoreTable
) -> None:
    with pytest.raises(OptionError, match="'incremental-between' = '1,3'"):
        read(spark, warehouse, "db.t", snapshot_id=2, options={"incremental-between": "1,3"})
    with pytest.raises(OptionError, match="'incremental-between' = '3,1'"):
        read(spark, warehouse, "db.t", options={"incremental-between": "3,1"})  # planned here
