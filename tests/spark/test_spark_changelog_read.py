"""Changes through Spark, as Java's connector 0.9.0 gives them (checked by running it on the
same commits): ``spark.readStream.format("paimon")`` of a primary-key table emits every
change record of each snapshot, its -U and -D rows included, as plain rows; the stream of
``t$audit_log`` adds the ``rowkind`` column; a batch read (or SQL) of ``t$audit_log`` gives each
key's merged row and kind, a deleted key as -D; ``t$binlog`` (not in 0.9.0) packs an update's
before and after into arrays."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory
from paimon_pyspark.spark import sql

pytestmark = pytest.mark.datasource


def _rows(spark: SparkSession, name: str) -> list[tuple[object, ...]]:
    return [tuple(r) for r in spark.sql(f"SELECT * FROM {name}").collect()]


def test_streams_and_system_tables_of_a_lookup_table(spark: SparkSession, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    sql(spark, "CREATE DATABASE c", warehouse=wh).collect()
    sql(
        spark,
        "CREATE TABLE c.t (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '1', "
        "'changelog-producer' = 'lookup')",
        warehouse=wh,
    ).collect()
    sql(spark, "INSERT INTO c.t VALUES (1, 'a'), (2, 'b')", warehouse=wh).collect()
    frames = spark.readStream.format("paimon").option("warehouse", wh)
    queries = {
        name: frames.option("table", table)
        .load()
        .writeStream.format("memory")
        .queryName(name)
        .start()
        for name, table in (("changes_t", "c.t"), ("changes_audit", "c.t$audit_log"))
    }
    try:
        for query in queries.values():
            query.processAllAvailable()
        sql(spark, "INSERT INTO c.t VALUES (1, 'a2'), (3, 'c')", warehouse=wh).collect()
        sql(spark, "DELETE FROM c.t WHERE k = 2", warehouse=wh).collect()
        for query in queries.values():
            query.processAllAvailable()
    finally:
        for query in queries.values():
            query.stop()
    # the starting full plan, then each snapshot's changelog in order (Java's rows, same order)
    assert _rows(spark, "changes_t") == [
        (1, "a"), (2, "b"), (1, "a"), (1, "a2"), (3, "c"), (2, "b")
    ]  # fmt: skip
    assert _rows(spark, "changes_audit") == [
        ("+I", 1, "a"), ("+I", 2, "b"), ("-U", 1, "a"), ("+U", 1, "a2"), ("+I", 3, "c"),
        ("-D", 2, "b"),
    ]  # fmt: skip
    audit = spark.read.format("paimon").option("warehouse", wh).option("table", "c.t$audit_log")
    assert audit.load().columns == ["rowkind", "k", "v"]
    merged = [("+I", 1, "a2"), ("-D", 2, "b"), ("+I", 3, "c")]
    assert sorted(tuple(r) for r in audit.load().collect()) == sorted(merged)
    by_sql = sql(spark, "SELECT rowkind, k, v FROM c.`t$audit_log` ORDER BY k", warehouse=wh)
    assert [tuple(r) for r in by_sql.collect()] == merged
    binlog = sql(spark, "SELECT * FROM c.`t$binlog` ORDER BY rowkind", warehouse=wh).collect()
    assert [tuple(r) for r in binlog] == [
        ("+I", [1], ["a2"]), ("+I", [3], ["c"]), ("-D", [2], ["b"])
    ]  # fmt: skip
    # the Python stream of $binlog, from the second insert on, pairs the -U with its +U
    table = CatalogFactory.create({"warehouse": wh}).get_table("c.t$binlog")
    builder = table.new_stream_read_builder()
    scan, read = builder.new_scan(), builder.new_read()
    scan.restore(3)
    changes = []
    while splits := scan.plan().splits():
        changes += read.to_arrow(splits).to_pylist()
    assert changes == [
        {"rowkind": "+U", "k": [1, 1], "v": ["a", "a2"]},
        {"rowkind": "+I", "k": [3], "v": ["c"]},
        {"rowkind": "-D", "k": [2], "v": ["b"]},
    ]
