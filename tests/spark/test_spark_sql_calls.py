"""``CALL`` in Spark's and Flink's spellings, ``rescale``'s Spark arguments, the one door for
Spark's own statements, and the ``%%paimon_sql`` cell magic, through
``paimon_pyspark.spark.sql`` on one warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.errors import (
    CompactArgumentError,
    SqlSyntaxError,
    UnsupportedStatementError,
)
from paimon_pyspark.spark import register, sql

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wh(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = str(tmp_path_factory.mktemp("calls"))
    register(spark, warehouse=path)
    sql(spark, "CREATE DATABASE calls").collect()
    yield path
    sql(spark, "USE default").collect()


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement).collect()]


def table(wh: str, identifier: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(identifier)


def files(wh: str, name: str) -> dict[str, list[tuple[int, int]]]:
    """partition -> sorted (bucket, level) of its live files (the ``$files`` system table)."""
    system = CatalogFactory.create({"warehouse": wh}).get_table(f"calls.{name}$files")
    builder = system.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pydict()
    out: dict[str, list[tuple[int, int]]] = {}
    for p, b, lv in zip(data["partition"], data["bucket"], data["level"], strict=True):
        out.setdefault(p, []).append((b, lv))
    return {p: sorted(v) for p, v in out.items()}


def test_compact_and_tags_in_both_spellings(spark: SparkSession, wh: str) -> None:
    sql(
        spark,
        "CREATE TABLE calls.t (dt STRING, k INT, v INT, PRIMARY KEY (dt, k) NOT ENFORCED) "
        "PARTITIONED BY (dt) WITH ('bucket' = '1')",
    ).collect()
    for i in range(3):
        sql(spark, f"INSERT INTO calls.t VALUES ('1', {i}, {i}), ('2', {i}, {i})").collect()
    assert files(wh, "t") == {"{1}": [(0, 0)] * 3, "{2}": [(0, 0)] * 3}
    # Spark's order (table, partitions, compact_strategy): partition dt=1, fully
    assert rows(spark, "CALL sys.compact('calls.t', 'dt=1', 'full')") == [(True,)]
    after = files(wh, "t")
    assert after["{1}"] == [(0, 5)] and after["{2}"] == [(0, 0)] * 3
    # Flink's order: compact_strategy is eighth
    sql(spark, "CALL sys.compact('calls.t', 'dt=2', '', '', '', '', '', 'full')").collect()
    assert files(wh, "t")["{2}"] == [(0, 5)]
    # neither order reads a bad strategy: Spark's check names it
    with pytest.raises(CompactArgumentError, match="'fulll'"):
        sql(spark, "CALL sys.compact('calls.t', '', 'fulll')")
    # names in both spellings: Spark's snapshot, Flink's snapshot_id; positions are the same
    sql(spark, "CALL sys.create_tag(table => 'calls.t', tag => 's1', snapshot => 1)").collect()
    sql(
        spark, "CALL sys.create_tag(`table` => 'calls.t', `tag` => 's2', snapshot_id => 2)"
    ).collect()
    sql(spark, "CALL sys.create_tag('calls.t', 's3', 3)").collect()
    tags = {n: t.id for n, t in table(wh, "calls.t").tag_manager.tags().items()}
    assert tags == {"s1": 1, "s2": 2, "s3": 3}


def test_flink_positional_sort_compaction(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE calls.a (k INT, v INT) WITH ('bucket' = '-1')").collect()
    for i in range(3):
        sql(spark, f"INSERT INTO calls.a VALUES ({3 - i}, {i}), ({10 + i}, {i})").collect()
    # Flink's (table, partitions, order_strategy, order_by): 'order' is no compact_strategy
    sql(spark, "CALL sys.compact('calls.a', '', 'order', 'k')").collect()
    latest = table(wh, "calls.a").snapshot_manager.latest()
    assert latest is not None and latest.commit_kind == "COMPACT"
    assert list(files(wh, "a").values()) == [[(0, 0)]]
    # one file, its rows sorted by k
    assert rows(spark, "SELECT k FROM calls.a") == [(1,), (2,), (3,), (10,), (11,), (12,)]


def test_rescale_takes_sparks_partitions_and_where(spark: SparkSession, wh: str) -> None:
    sql(
        spark,
        "CREATE TABLE calls.r (dt STRING, k INT, PRIMARY KEY (dt, k) NOT ENFORCED) "
        "PARTITIONED BY (dt) WITH ('bucket' = '1')",
    ).collect()
    values = ", ".join(f"('{d}', {k})" for d in "123" for k in range(20))
    sql(spark, f"INSERT INTO calls.r VALUES {values}").collect()
    sql(spark, "CALL sys.rescale(table => 'calls.r', bucket_num => 2, partitions => 'dt=1')")
    buckets = {p: {b for b, _ in v} for p, v in files(wh, "r").items()}
    assert buckets == {"{1}": {0, 1}, "{2}": {0}, "{3}": {0}}
    # Spark's positional (table, bucket_num, partitions, where)
    sql(spark, "CALL sys.rescale('calls.r', 3, '', \"dt >= '2'\")").collect()
    # Flink's name for one partition
    sql(spark, "CALL sys.rescale(`table` => 'calls.r', bucket_num => 4, `partition` => 'dt=3')")
    buckets = {p: {b for b, _ in v} for p, v in files(wh, "r").items()}
    assert buckets == {"{1}": {0, 1}, "{2}": {0, 1, 2}, "{3}": {0, 1, 2, 3}}
    assert rows(spark, "SELECT dt, count(*) FROM calls.r GROUP BY dt ORDER BY dt") == [
        ("1", 20),
        ("2", 20),
        ("3", 20),
    ]
    with pytest.raises(CompactArgumentError, match="partitions and where cannot be used together"):
        sql(spark, "CALL sys.rescale('calls.r', 2, 'dt=1', \"dt = '1'\")")


def test_one_door_for_sparks_statements(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    sql(spark, "CREATE TABLE calls.p (k INT, v STRING)").collect()
    sql(spark, "INSERT INTO calls.p VALUES (1, 'a')").collect()
    sql(spark, "USE calls").collect()
    try:
        sql(spark, "CREATE OR REPLACE TEMPORARY VIEW door_v AS SELECT 7 AS x").collect()
        assert rows(spark, "SELECT x FROM door_v") == [(7,)]
        assert rows(spark, "SHOW FUNCTIONS LIKE 'upper'") == [("upper",)]
        sql(spark, "SET door.custom.key = 42").collect()
        assert spark.conf.get("door.custom.key") == "42"
        with pytest.raises(UnsupportedStatementError, match="table.exec.x"):
            sql(spark, "SET 'table.exec.x' = 'y'")  # Flink's setting: nothing to Spark
        sql(spark, "CACHE TABLE door_v").collect()
        assert spark.catalog.isCached("door_v")
        sql(spark, "UNCACHE TABLE door_v").collect()
        assert "Physical Plan" in rows(spark, "EXPLAIN SELECT * FROM door_v")[0][0]
        assert rows(spark, "DESCRIBE door_v")[0][:2] == ("x", "int")  # Spark's view: Spark's
        # sqlglot cannot read it, Spark can: Spark's
        assert rows(spark, "DESCRIBE QUERY SELECT 1 AS x")[0][:2] == ("x", "int")
        with pytest.raises(SqlSyntaxError):
            sql(spark, "SELECT k,\nFROM WHERE")
        location = (tmp_path / "door_pq").as_uri()
        sql(spark, f"CREATE TABLE door_pq (a INT) USING parquet LOCATION '{location}'").collect()
        sql(spark, "INSERT INTO door_pq VALUES (5)").collect()
        assert rows(spark, "SELECT a FROM door_pq") == [(5,)]
        # a query joining Spark's and Paimon's tables still binds the Paimon one
        assert rows(spark, "SELECT k, a FROM p JOIN door_pq ON k < a") == [(1, 5)]
        # what names a Paimon table and is not supported is refused, naming the table
        # EXPLAIN binds the Paimon table as a query does
        explained = rows(spark, "EXPLAIN EXTENDED SELECT k FROM calls.p WHERE k > 0")[0][0]
        assert "Physical Plan" in explained and "Analyzed Logical Plan" in explained
        for statement in ("CACHE TABLE p", "CREATE VIEW door_w AS SELECT * FROM p"):
            with pytest.raises(UnsupportedStatementError, match="calls.p"):
                sql(spark, statement)
        with pytest.raises(UnsupportedStatementError, match="door_pq.*calls.p"):
            sql(spark, "INSERT INTO door_pq SELECT k FROM p")
        # a temporary view over a Paimon table is Spark's view of the bound query, read by
        # Spark's own statements too, as of the snapshot it was created on
        sql(spark, "CREATE TEMPORARY VIEW door_w (key, value) AS SELECT k, v FROM p").collect()
        sql(spark, "INSERT INTO p VALUES (2, 'b')").collect()
        assert spark.sql("SELECT key, value FROM door_w").collect() == [(1, "a")]
        with pytest.raises(Exception, match="already exists|ALREADY_EXISTS"):
            sql(spark, "CREATE TEMPORARY VIEW door_w AS SELECT k FROM p")
        sql(spark, "CREATE TEMPORARY VIEW IF NOT EXISTS door_w AS SELECT k FROM p").collect()
        sql(spark, "CREATE OR REPLACE TEMPORARY VIEW door_w AS SELECT count(*) AS n FROM p")
        assert rows(spark, "SELECT n FROM door_w") == [(2,)]
        sql(spark, "DROP TABLE door_pq").collect()
        assert not spark.catalog.tableExists("door_pq")
    finally:
        sql(spark, "USE default").collect()
        spark.catalog.dropTempView("door_v")
        spark.catalog.dropTempView("door_w")
        spark.conf.unset("door.custom.key")


def test_cell_magic(spark: SparkSession, wh: str, tmp_path: Path, monkeypatch: Any) -> None:
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    try:
        register(spark, warehouse=wh)
        cell = """
            CREATE TABLE calls.m (a INT);  -- a comment
            INSERT INTO calls.m VALUES (1), (2);
            SELECT sum(a) AS s FROM calls.m
        """
        result = shell.run_cell_magic("paimon_sql", "total", cell)
        assert result.collect()[0][0] == 3
        assert shell.user_ns["total"] is result
        assert shell.run_cell_magic("paimon_sql", "", "INSERT INTO calls.m VALUES (3)") is None
        assert (
            shell.run_cell_magic("paimon_sql", "", "SELECT count(*) FROM calls.m").first()[0] == 3
        )
        with pytest.raises(Exception, match="calls.missing") as failed:
            shell.run_cell_magic("paimon_sql", "", "SELECT 1; SELECT * FROM calls.missing")
        assert any("statement 2 of 2" in n for n in getattr(failed.value, "__notes__", []))
    finally:
        InteractiveShell.clear_instance()
