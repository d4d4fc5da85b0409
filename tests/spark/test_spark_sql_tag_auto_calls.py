"""``CALL sys.expire_tags`` and ``CALL sys.trigger_tag_automatic_creation`` through the SQL
door, with Java's result columns, and a batch tag from an ``INSERT`` (Java's Spark writer tags
after its commit), all under an injected clock."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory
from paimon_pyspark.spark import register, sql
from paimon_pyspark.store.clock import ManualClock, injected

pytestmark = pytest.mark.slow


def test_insert_tags_the_batch_and_the_tag_procedures_answer_as_java(
    spark: SparkSession, tmp_path: Path
) -> None:
    register(spark, warehouse=str(tmp_path))
    clock = ManualClock(int(dt.datetime(2024, 3, 9, 12, 0).timestamp() * 1000))
    try:
        with injected(clock):
            sql(spark, "CREATE DATABASE tagauto").collect()
            sql(
                spark,
                "CREATE TABLE tagauto.t (k INT, v STRING) "
                "TBLPROPERTIES ('tag.automatic-creation' = 'batch')",
            ).collect()
            sql(spark, "INSERT INTO tagauto.t VALUES (1, 'a')").collect()
            table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("tagauto.t")
            assert table.store.tag_manager.tag_names() == ["batch-write-2024-03-09"]
            sql(
                spark,
                "CALL sys.create_tag(`table` => 'tagauto.t', tag => 'v1', time_retained => '1 h')",
            ).collect()
            clock.advance(hours=2)
            expired = sql(spark, "CALL sys.expire_tags('tagauto.t')")
            assert expired.columns == ["expired_tags"]
            assert [tuple(r) for r in expired.collect()] == [("v1",)]
            again = sql(
                spark, "CALL sys.expire_tags(`table` => 'tagauto.t', older_than => '2000-01-01')"
            )
            assert [tuple(r) for r in again.collect()] == [("No expired tags.",)]
            trigger = sql(spark, "CALL sys.trigger_tag_automatic_creation(`table` => 'tagauto.t')")
            assert [tuple(r) for r in trigger.collect()] == [(True,)]
            assert table.store.tag_manager.tag_names() == ["batch-write-2024-03-09"]
    finally:
        sql(spark, "USE default").collect()
