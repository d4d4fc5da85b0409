"""``paimon_pyspark.spark.sql``: Paimon's statements on a SparkSession, queries mixed with
Spark's own tables, each Paimon table bound for its statement only, pruning derived from the
query, and failures that leave no snapshot."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.errors import (
    PaimonError,
    SqlError,
    SqlSyntaxError,
    TableNotExistError,
    UnsupportedStatementError,
)
from paimon_pyspark.spark import register, sql
from paimon_pyspark.spark.sql import VIEW_PREFIX, _pushable_filter, _used_columns
from paimon_pyspark.sql.dialect import parse_one

pytestmark = [pytest.mark.slow, pytest.mark.datasource]


@pytest.fixture()
def wh(spark: SparkSession, tmp_path: Path) -> Iterator[str]:
    register(spark, warehouse=str(tmp_path))
    yield str(tmp_path)
    sql(spark, "USE default").collect()


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement).collect()]


def table(wh: str, identifier: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(identifier)


def snapshot_ids(t: FileStoreTable) -> list[int]:
    return list(t.snapshot_manager.list_ids())


def test_catalog_statements_and_a_table_lifecycle(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE DATABASE shop").collect()
    sql(spark, "CREATE DATABASE IF NOT EXISTS shop").collect()
    sql(spark, "USE shop").collect()
    sql(
        spark,
        """CREATE TABLE orders (
             id BIGINT, amount DECIMAL(10, 2), dt STRING,
             PRIMARY KEY (dt, id) NOT ENFORCED
           ) PARTITIONED BY (dt) WITH ('bucket' = '2')""",
    ).collect()
    assert rows(spark, "SHOW DATABASES") == [("shop",)]
    assert rows(spark, "SHOW TABLES") == [("shop", "orders", False)]
    sql(spark, "INSERT INTO orders VALUES (1, 10.5, 'd1'), (2, 20, 'd1'), (3, 30, 'd2')").collect()
    spark.createDataFrame([(4, "d2"), (1, "d1")], "id long, dt string").createOrReplaceTempView(
        "incoming"
    )
    sql(spark, "INSERT INTO orders SELECT id, 99, dt FROM incoming").collect()
    assert rows(spark, "SELECT id, CAST(amount AS STRING), dt FROM orders ORDER BY id") == [
        (1, "99.00", "d1"),
        (2, "20.00", "d1"),
        (3, "30.00", "d2"),
        (4, "99.00", "d2"),
    ]
    assert rows(spark, "SELECT id FROM orders VERSION AS OF 1 ORDER BY id") == [(1,), (2,), (3,)]
    sql(spark, "INSERT OVERWRITE orders PARTITION (dt = 'd1') VALUES (7, 70)").collect()
    assert rows(spark, "SELECT id, dt FROM shop.orders ORDER BY id") == [
        (3, "d2"),
        (4, "d2"),
        (7, "d1"),
    ]
    # Spark's default (static) overwrite: the whole table
    sql(spark, "INSERT OVERWRITE paimon.shop.orders VALUES (8, 80, 'd3')").collect()
    assert rows(spark, "SELECT id, dt FROM orders") == [(8, "d3")]
    sql(spark, "DROP TABLE orders").collect()
    assert rows(spark, "SHOW TABLES IN shop") == []
    sql(spark, "USE default").collect()
    sql(spark, "CREATE TABLE keep (a INT)").collect()
    sql(spark, "DROP DATABASE shop CASCADE").collect()
    assert rows(spark, "SHOW DATABASES") == [("default",)]


def test_create_table_as_select_and_alter_options(spark: SparkSession, wh: str) -> None:
    sql(
        spark,
        "CREATE TABLE agg USING paimon PARTITIONED BY (p) "
        "TBLPROPERTIES ('primary-key' = 'k,p', 'bucket' = '1') "
        "AS SELECT id AS k, id % 2 AS p, id * 10 AS v FROM range(6)",
    ).collect()
    t = table(wh, "default.agg")
    assert t.primary_keys == ["k", "p"] and t.partition_keys == ["p"]
    assert rows(spark, "SELECT sum(v) FROM agg") == [(150,)]
    sql(spark, "ALTER TABLE agg SET TBLPROPERTIES ('snapshot.num-retained.min' = '3')").collect()
    assert table(wh, "default.agg").options.get("snapshot.num-retained.min") == "3"
    sql(spark, "ALTER TABLE agg UNSET TBLPROPERTIES ('snapshot.num-retained.min')").collect()
    assert table(wh, "default.agg").options.get("snapshot.num-retained.min") is None


def test_update_and_delete_on_a_primary_key_table(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE t (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED)").collect()
    sql(spark, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)").collect()
    sql(spark, "UPDATE t SET v = v + 1 WHERE k >= 2").collect()
    sql(spark, "DELETE FROM t WHERE k = 1").collect()
    assert rows(spark, "SELECT k, v FROM t ORDER BY k") == [(2, 21), (3, 31)]


def test_queries_mix_paimon_and_spark_tables_and_leave_no_view(
    spark: SparkSession, wh: str
) -> None:
    sql(spark, "CREATE TABLE items (id INT, name STRING)").collect()
    sql(spark, "INSERT INTO items VALUES (1, 'a'), (2, 'b')").collect()
    spark.createDataFrame([(1, 5), (2, 7)], "id int, qty int").createOrReplaceTempView("stock")
    result = rows(
        spark,
        "WITH s AS (SELECT id, qty FROM stock) "
        "SELECT upper(i.name), s.qty FROM items i JOIN s ON i.id = s.id ORDER BY 1",
    )
    assert result == [("A", 5), ("B", 7)]
    views = [t.name for t in spark.catalog.listTables() if t.name.startswith(VIEW_PREFIX)]
    assert views == []
    # a Spark view that no Paimon table shadows is Spark's; Paimon's table wins in its database
    spark.createDataFrame([(9, "z")], "id int, name string").createOrReplaceTempView("items")
    assert rows(spark, "SELECT id FROM items ORDER BY id") == [(1,), (2,)]
    assert rows(spark, "SELECT qty FROM stock ORDER BY qty") == [(5,), (7,)]
    spark.catalog.dropTempView("items")
    spark.catalog.dropTempView("stock")


def test_a_relation_is_fresh_for_every_statement(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE f (k INT, p STRING) PARTITIONED BY (p)").collect()
    sql(spark, "INSERT INTO f VALUES (1, 'a'), (2, 'b'), (3, 'a')").collect()
    assert rows(spark, "SELECT k FROM f WHERE p = 'a' ORDER BY k") == [(1,), (3,)]
    assert rows(spark, "SELECT count(*) FROM f") == [(3,)]
    sql(spark, "INSERT INTO f VALUES (4, 'b')").collect()
    assert rows(spark, "SELECT count(*) FROM f") == [(4,)]


def test_a_one_table_query_prunes_partitions(spark: SparkSession, wh: str) -> None:
    """The WHERE of a one-table query becomes the relation's filter: with every file of
    partition 'b' damaged, a query on partition 'a' still reads, a query on all fails."""
    sql(spark, "CREATE TABLE pr (k INT, v STRING, p STRING) PARTITIONED BY (p)").collect()
    sql(spark, "INSERT INTO pr VALUES (1, 'x', 'a'), (2, 'y', 'b'), (3, 'z', 'a')").collect()
    damaged = 0
    for root, _, files in os.walk(Path(wh) / "default.db" / "pr" / "p=b"):
        for name in files:
            if name.startswith("data-"):
                Path(root, name).write_bytes(b"not parquet")
                damaged += 1
    assert damaged >= 1
    assert rows(spark, "SELECT k FROM pr WHERE p = 'a' AND k > 0 ORDER BY k") == [(1,), (3,)]
    with pytest.raises(Exception):  # noqa: B017 - Spark wraps the reader's error
        sql(spark, "SELECT count(*) FROM pr").collect()


def test_pruning_derived_from_a_query(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE pq (a INT, b STRING, c DOUBLE, p STRING) PARTITIONED BY (p)").collect()
    t = table(wh, "default.pq")
    q = parse_one("SELECT b, max(c) FROM pq WHERE p = 'x' AND (a > 1 OR a IS NULL) GROUP BY b")
    assert _used_columns(q, t) == ["a", "b", "c", "p"]
    assert _pushable_filter(q, t) == "(p = 'x') AND (a > 1 OR a IS NULL)"
    q2 = parse_one("SELECT b FROM pq WHERE upper(b) = 'X' AND p IN ('x', 'y')")
    assert _used_columns(q2, t) == ["b", "p"]
    assert _pushable_filter(q2, t) == "(p IN ('x', 'y'))"  # upper(b) is Spark's to apply
    assert _used_columns(parse_one("SELECT * FROM pq"), t) is None
    assert _used_columns(parse_one("SELECT count(*) FROM pq"), t) == ["a"]


def test_errors_are_typed_and_leave_no_snapshot(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE e (k INT, v INT)").collect()
    sql(spark, "INSERT INTO e VALUES (1, 1)").collect()
    before = snapshot_ids(table(wh, "default.e"))
    with pytest.raises(SqlError, match="gives 1 column.* but 2 are expected"):
        sql(spark, "INSERT INTO e VALUES (1)").collect()
    with pytest.raises(Exception, match="CAST|cast|NUMBER|number"):
        sql(spark, "INSERT INTO e VALUES (2, CAST('nope' AS INT))").collect()
    assert snapshot_ids(table(wh, "default.e")) == before
    with pytest.raises(SqlSyntaxError) as syntax:
        sql(spark, "SELECT k,\nFROM WHERE")
    assert syntax.value.line == 2
    with pytest.raises(TableNotExistError, match="default.e2"):
        sql(spark, "MERGE INTO e USING e2 ON e.k = e2.k WHEN MATCHED THEN DELETE")
    with pytest.raises(UnsupportedStatementError, match="sys.migrate_table"):
        sql(spark, "CALL sys.migrate_table('default.e')")
    with pytest.raises(SqlError, match="no argument 'bogus'"):
        sql(spark, "CALL sys.compact(`table` => 'default.e', bogus => 1)")
    with pytest.raises(TableNotExistError):
        sql(spark, "SELECT * FROM paimon.default.missing")
    with pytest.raises(TableNotExistError, match="default.missing"):
        sql(spark, "SELECT * FROM missing")
    with pytest.raises(TableNotExistError, match="default.missing"):
        sql(spark, "SELECT * FROM default.missing")
    with pytest.raises(PaimonError):
        sql(spark, "CREATE TABLE e (k INT)")
    assert snapshot_ids(table(wh, "default.e")) == before


def test_call_returns_javas_result_columns(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE c (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket' = '1')")
    for i in range(3):
        sql(spark, f"INSERT INTO c VALUES ({i}, {i})").collect()
    compacted = sql(spark, "CALL sys.compact(`table` => 'c')")
    assert compacted.columns == ["result"] and compacted.collect()[0][0] is True
    expired = sql(
        spark, "CALL sys.expire_snapshots(`table` => 'default.c', retain_max => 1, retain_min => 1)"
    )
    assert expired.columns == ["deleted_snapshots_count"]
    assert expired.collect()[0][0] >= 1
    orphans = sql(spark, "CALL sys.remove_orphan_files(`table` => 'default.c', dry_run => true)")
    assert orphans.columns == ["deletedFileCount", "deletedFileTotalLenInBytes"]
    assert rows(spark, "SELECT k FROM c ORDER BY k") == [(0,), (1,), (2,)]
    latest = table(wh, "default.c").snapshot_manager.latest()
    assert latest is not None
    assert rows(spark, "CALL sys.create_tag('default.c', 'before')") == [(True,)]
    sql(spark, "INSERT INTO c VALUES (9, 9)").collect()
    newest = table(wh, "default.c").snapshot_manager.latest()
    assert newest is not None and newest.id > latest.id
    assert rows(spark, "SELECT k FROM c VERSION AS OF 'before' ORDER BY k") == [(0,), (1,), (2,)]
    far = "TIMESTAMP AS OF '2999-01-01 00:00:00'"
    assert rows(spark, f"SELECT count(*) FROM c {far}") == [(4,)]
    rolled = rows(spark, "CALL sys.rollback(`table` => 'c', version => 'before')")
    assert rolled == [(newest.id, latest.id)]
    assert rows(spark, "SELECT k FROM c ORDER BY k") == [(0,), (1,), (2,)]
    assert rows(spark, "CALL sys.delete_tag('default.c', 'before')") == [(True,)]
    assert table(wh, "default.c").list_tags() == []
