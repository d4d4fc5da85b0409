"""``CALL sys.expire_partitions`` through the SQL door (Java's named and positional arguments,
one result row per expired partition), and expiry after an INSERT of a table with
``partition.expiration-time``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory
from paimon_pyspark.spark import register, sql

pytestmark = pytest.mark.slow


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement).collect()]


def test_expire_partitions_call_and_expiry_after_insert(
    spark: SparkSession, tmp_path: Path
) -> None:
    register(spark, warehouse=str(tmp_path))
    try:
        sql(spark, "CREATE DATABASE pe").collect()
        sql(spark, "CREATE TABLE pe.t (id INT, dt STRING) PARTITIONED BY (dt)").collect()
        sql(
            spark,
            "INSERT INTO pe.t VALUES (1, '2020-01-01'), (2, '2020-01-02'), (3, '2999-01-01')",
        ).collect()
        frame = sql(
            spark,
            "CALL sys.expire_partitions(table => 'pe.t', expiration_time => '7 d', "
            "timestamp_formatter => 'yyyy-MM-dd', max_expires => 1)",
        )
        assert frame.columns == ["expired_partitions"]
        assert [tuple(r) for r in frame.collect()] == [("dt=2020-01-01",)]
        # Flink's positional order: table, expiration_time, timestamp_formatter
        assert rows(spark, "CALL sys.expire_partitions('pe.t', '7 d', 'yyyy-MM-dd')") == [
            ("dt=2020-01-02",)
        ]
        assert rows(spark, "CALL sys.expire_partitions('pe.t', '7 d')") == [
            ("No expired partitions.",)
        ]
        sql(
            spark,
            "ALTER TABLE pe.t SET TBLPROPERTIES ('partition.expiration-time' = '7 d', "
            "'end-input.check-partition-expire' = 'true')",
        ).collect()
        sql(spark, "INSERT INTO pe.t VALUES (4, '2020-02-01'), (5, '2999-01-02')").collect()
        assert rows(spark, "SELECT id, dt FROM pe.t ORDER BY id") == [
            (3, "2999-01-01"),
            (5, "2999-01-02"),
        ]
        table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("pe.t")
        sm = table.store.snapshot_manager
        latest = sm.latest_id()
        assert latest is not None
        assert [sm.snapshot(i).commit_kind for i in range(1, latest + 1)] == [
            "APPEND",
            "OVERWRITE",
            "OVERWRITE",
            "APPEND",
            "OVERWRITE",
        ]
    finally:
        sql(spark, "USE default").collect()
