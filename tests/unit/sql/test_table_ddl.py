"""Parsing TRUNCATE TABLE, [CREATE OR] REPLACE TABLE, ALTER TABLE ... ADD | DROP PARTITION and
Spark's typed PARTITIONED BY (sql/table_ddl.py, sql/statements.py): the typed values, and the
refusals Spark's parser makes too."""

from __future__ import annotations

import pytest

from paimon_pyspark.errors import SqlError, SqlSyntaxError, UnsupportedStatementError
from paimon_pyspark.sql.statements import CreateTable, TableName, parse_statement
from paimon_pyspark.sql.table_ddl import (
    AddPartitions,
    DropPartitions,
    ReplaceTable,
    TruncateTable,
)


def test_truncate() -> None:
    assert parse_statement("TRUNCATE TABLE t") == TruncateTable(TableName("t"))
    assert parse_statement(
        "TRUNCATE TABLE paimon.db.t PARTITION (dt = '2024-01-01', hh = 1, ok = true, n = NULL)"
    ) == TruncateTable(
        TableName("t", "db", "paimon"),
        {"dt": "2024-01-01", "hh": "1", "ok": "true", "n": None},
    )
    with pytest.raises(SqlSyntaxError, match="twice"):
        parse_statement("TRUNCATE TABLE t PARTITION (dt = '1', DT = '2')")


def test_replace_forms() -> None:
    stmt = parse_statement("REPLACE TABLE db.t (a INT, b STRING) USING paimon PARTITIONED BY (b)")
    assert isinstance(stmt, ReplaceTable) and not stmt.or_create
    assert stmt.create.name == TableName("t", "db")
    assert [c.name for c in stmt.create.columns] == ["a", "b"]
    assert stmt.create.partition_keys == ["b"]
    stmt = parse_statement(
        "CREATE OR REPLACE TABLE t TBLPROPERTIES ('primary-key' = 'a') AS SELECT 1 AS a"
    )
    assert isinstance(stmt, ReplaceTable) and stmt.or_create
    assert stmt.create.query is not None and stmt.create.primary_keys == ["a"]
    stmt = parse_statement("REPLACE TABLE t AS SELECT 1 AS a")
    assert isinstance(stmt, ReplaceTable) and stmt.create.query is not None
    with pytest.raises(SqlSyntaxError, match="IF NOT EXISTS"):
        parse_statement("CREATE OR REPLACE TABLE IF NOT EXISTS t (a INT)")


def test_partition_ddl() -> None:
    assert parse_statement(
        "ALTER TABLE db.t DROP IF EXISTS PARTITION (dt = 'a'), PARTITION (dt = NULL, h = -1)"
    ) == DropPartitions(TableName("t", "db"), [{"dt": "a"}, {"dt": None, "h": "-1"}], True)
    assert parse_statement("ALTER TABLE t DROP PARTITION (dt = 'a') PURGE") == DropPartitions(
        TableName("t"), [{"dt": "a"}], False, purge=True
    )
    assert parse_statement(
        "ALTER TABLE t ADD IF NOT EXISTS PARTITION (dt = 'a') LOCATION '/x' PARTITION (dt = 'b')"
    ) == AddPartitions(TableName("t"), [{"dt": "a"}, {"dt": "b"}], True)
    assert parse_statement("ALTER TABLE t ADD PARTITION (dt = 'a')") == AddPartitions(
        TableName("t"), [{"dt": "a"}], False
    )
    with pytest.raises(SqlSyntaxError, match="key = value"):
        parse_statement("ALTER TABLE t DROP PARTITION (dt)")
    with pytest.raises(SqlSyntaxError, match="Unexpected"):
        parse_statement("ALTER TABLE t ADD PARTITION (dt = 'a'), PARTITION (dt = 'b')")


def test_typed_partitioned_by() -> None:
    stmt = parse_statement("CREATE TABLE t (a INT) PARTITIONED BY (dt STRING COMMENT 'd', h INT)")
    assert isinstance(stmt, CreateTable)
    assert [(c.name, c.comment) for c in stmt.columns] == [("a", None), ("dt", "d"), ("h", None)]
    assert stmt.partition_keys == ["dt", "h"]
    with pytest.raises(SqlError, match="column 'dt' of PARTITIONED BY"):
        parse_statement("CREATE TABLE t (a INT, dt STRING) PARTITIONED BY (dt STRING)")
    with pytest.raises(SqlSyntaxError, match="cannot mix"):
        parse_statement("CREATE TABLE t (a INT, dt STRING) PARTITIONED BY (h INT, dt)")
    with pytest.raises(SqlSyntaxError, match="CREATE TABLE AS SELECT"):
        parse_statement("CREATE TABLE t PARTITIONED BY (dt STRING) AS SELECT 'x' AS dt")
    with pytest.raises(UnsupportedStatementError, match="USING parquet"):
        parse_statement("CREATE OR REPLACE TABLE t (a INT) USING parquet")
