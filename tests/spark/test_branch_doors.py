"""Every Spark door reads and writes a branch, ``db.t$branch_b``, and leaves main alone:
``format("paimon")`` load and save, SQL ``INSERT``/``UPDATE``/``DELETE``/``MERGE INTO``/
``SELECT``, and Structured Streaming's sink and source."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark.spark import register, sql

pytestmark = [pytest.mark.slow, pytest.mark.datasource]


@pytest.fixture(scope="module")
def wh(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = str(tmp_path_factory.mktemp("branch_doors"))
    register(spark, warehouse=path)
    sql(spark, "CREATE DATABASE bd").collect()
    yield path
    sql(spark, "USE default").collect()


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in sql(spark, statement).collect())


def test_sql_and_format_doors_write_the_branch_only(spark: SparkSession, wh: str) -> None:
    sql(
        spark,
        "CREATE TABLE bd.t (k BIGINT, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "WITH ('bucket' = '1')",
    ).collect()
    sql(spark, "INSERT INTO bd.t VALUES (1, 'main')").collect()
    sql(spark, "CALL sys.create_branch('bd.t', 'b')").collect()
    sql(spark, "INSERT INTO bd.`t$branch_b` VALUES (1, 'b'), (2, 'b'), (3, 'b')").collect()
    sql(spark, "UPDATE bd.`t$branch_b` SET v = 'u' WHERE k = 2").collect()
    sql(spark, "DELETE FROM bd.`t$branch_b` WHERE k = 3").collect()
    sql(
        spark,
        "MERGE INTO bd.`t$branch_b` AS x USING (SELECT 4L AS k, 'm' AS v) AS s ON x.k = s.k "
        "WHEN NOT MATCHED THEN INSERT *",
    ).collect()
    frame = spark.createDataFrame([(5, "f")], "k BIGINT, v STRING")
    frame.write.format("paimon").option("warehouse", wh).option("table", "bd.t$branch_b").mode(
        "append"
    ).save()
    branch = [(1, "b"), (2, "u"), (4, "m"), (5, "f")]
    assert rows(spark, "SELECT * FROM bd.`t$branch_b`") == branch
    loaded = spark.read.format("paimon").option("warehouse", wh).option("table", "bd.t$branch_b")
    assert sorted(tuple(r) for r in loaded.load().collect()) == branch
    # Java's DataFrame spelling: the table with option branch
    by_option = loaded.option("table", "bd.t").option("branch", "b").load()
    assert sorted(tuple(r) for r in by_option.collect()) == branch
    assert rows(spark, "SELECT * FROM bd.t") == [(1, "main")]
    assert rows(spark, "SELECT commit_kind FROM bd.`t$snapshots`") == [("APPEND",)]
    described = [r[0] for r in sql(spark, "DESCRIBE bd.`t$branch_b`").collect()]
    assert described[:2] == ["k", "v"]
    buckets = rows(spark, "SELECT k, __paimon_bucket FROM bd.`t$branch_b` WHERE k = 1")
    assert buckets == [(1, 0)]
    kinds = rows(spark, "SELECT commit_kind FROM bd.`t$branch_b$snapshots`")
    assert kinds.count(("APPEND",)) >= 5
    # a system table of a branch stays read-only
    with pytest.raises(Exception, match="read-only"):
        frame.write.format("paimon").option("warehouse", wh).option(
            "table", "bd.t$branch_b$files"
        ).mode("append").save()


def test_streaming_sink_and_source_on_a_branch(
    spark: SparkSession, wh: str, tmp_path: Path
) -> None:
    sql(spark, "CREATE TABLE bd.s (k BIGINT, v STRING)").collect()
    sql(spark, "CALL sys.create_branch('bd.s', 'b')").collect()
    source_dir = tmp_path / "in"
    spark.createDataFrame([(1, "x"), (2, "y")], "k BIGINT, v STRING").write.parquet(str(source_dir))
    query = (
        spark.readStream.schema("k BIGINT, v STRING")
        .parquet(str(source_dir))
        .writeStream.format("paimon")
        .option("warehouse", wh)
        .option("table", "bd.s$branch_b")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    assert rows(spark, "SELECT * FROM bd.`s$branch_b`") == [(1, "x"), (2, "y")]
    assert rows(spark, "SELECT * FROM bd.s") == []
    reader = (
        spark.readStream.format("paimon")
        .option("warehouse", wh)
        .option("table", "bd.s$branch_b")
        .load()
        .writeStream.format("memory")
        .queryName("branch_stream")
        .start()
    )
    try:
        reader.processAllAvailable()
        sql(spark, "INSERT INTO bd.`s$branch_b` VALUES (3, 'z')").collect()
        sql(spark, "INSERT INTO bd.s VALUES (9, 'main')").collect()
        reader.processAllAvailable()
    finally:
        reader.stop()
    got = sorted(tuple(r) for r in spark.sql("SELECT k, v FROM branch_stream").collect())
    assert got == [(1, "x"), (2, "y"), (3, "z")]
