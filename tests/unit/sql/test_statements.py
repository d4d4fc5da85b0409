"""Statements as the SQL door reads them, in Spark's and Flink's spellings, with no Spark."""

from __future__ import annotations

import pytest

from paimon_pyspark.errors import SqlSyntaxError, UnsupportedStatementError, UnsupportedTypeError
from paimon_pyspark.sql import parse_statement, split_statements
from paimon_pyspark.sql.statements import (
    AlterTableOptions,
    Call,
    CreateDatabase,
    CreateTable,
    Delete,
    DropDatabase,
    DropTable,
    Insert,
    Query,
    SetOption,
    ShowDatabases,
    ShowTables,
    TableName,
    Update,
    Use,
)


def test_flink_create_table_with_primary_key_partition_and_options() -> None:
    stmt = parse_statement(
        """CREATE TABLE IF NOT EXISTS postpone_bucket_table (
          order_id INT COMMENT 'the order',
          order_date STRING,
          total_amount DECIMAL(10, 2),
          ts TIMESTAMP(3),
          PRIMARY KEY (order_date, order_id) NOT ENFORCED
        ) COMMENT 'orders' PARTITIONED BY (order_date) WITH (
          'bucket' = '-2',
          'file.format' = 'parquet'
        )"""
    )
    assert isinstance(stmt, CreateTable)
    assert stmt.name == TableName("postpone_bucket_table")
    assert [(c.name, str(c.type), c.comment) for c in stmt.columns] == [
        ("order_id", "INT", "the order"),
        ("order_date", "STRING", None),
        ("total_amount", "DECIMAL(10, 2)", None),
        ("ts", "TIMESTAMP(3)", None),
    ]
    assert stmt.primary_keys == ["order_date", "order_id"]
    assert stmt.partition_keys == ["order_date"]
    assert stmt.options == {"bucket": "-2", "file.format": "parquet"}
    assert stmt.comment == "orders"
    assert stmt.if_not_exists


def test_spark_create_table_takes_the_primary_key_from_tblproperties() -> None:
    stmt = parse_statement(
        "CREATE TABLE db.T (pk INT NOT NULL, v INT, pt INT, ts TIMESTAMP) USING paimon "
        "PARTITIONED BY (pt) TBLPROPERTIES ('primary-key' = 'pk', 'bucket' = '-1')"
    )
    assert isinstance(stmt, CreateTable)
    assert stmt.name == TableName("T", "db")
    assert stmt.primary_keys == ["pk"]
    assert stmt.options == {"bucket": "-1"}
    assert [str(c.type) for c in stmt.columns] == [
        "INT NOT NULL",
        "INT",
        "INT",
        "TIMESTAMP(6) WITH LOCAL TIME ZONE",  # Spark's TIMESTAMP is local-zoned
    ]


@pytest.mark.parametrize(
    ("declared", "paimon"),
    [
        ("TIMESTAMP", "TIMESTAMP(6)"),  # Flink's TIMESTAMP has no time zone
        ("TIMESTAMP(3)", "TIMESTAMP(3)"),
        ("TIMESTAMP_LTZ(3)", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
        ("TIMESTAMP_NTZ", "TIMESTAMP(6)"),
        ("STRING", "STRING"),
        ("VARCHAR(5)", "VARCHAR(5)"),
        ("CHAR(2)", "CHAR(2)"),
        ("BYTES", "BYTES"),
        ("BINARY", "BYTES"),
        ("BINARY(4)", "BINARY(4)"),
        ("VARBINARY(9)", "VARBINARY(9)"),
        ("DECIMAL", "DECIMAL(10, 0)"),
        ("TINYINT", "TINYINT"),
        ("BIGINT", "BIGINT"),
        ("DOUBLE", "DOUBLE"),
        ("DATE", "DATE"),
        ("ARRAY<INT>", "ARRAY<INT>"),
        ("MAP<STRING, BIGINT>", "MAP<STRING, BIGINT>"),
        ("STRUCT<a: INT NOT NULL, b: STRING>", "ROW<`a` INT NOT NULL, `b` STRING>"),
    ],
)
def test_column_types_in_both_spellings(declared: str, paimon: str) -> None:
    stmt = parse_statement(f"CREATE TABLE t (c {declared}) WITH ('bucket' = '1')")
    assert isinstance(stmt, CreateTable)
    assert str(stmt.columns[0].type).replace("`", "") == paimon.replace("`", "")


def test_a_type_paimon_has_not_is_refused_by_name() -> None:
    with pytest.raises(UnsupportedTypeError, match="'c'.*VARIANT|VARIANT.*'c'|Column 'c'"):
        parse_statement("CREATE TABLE t (c VARIANT)")


def test_insert_with_flink_hint_and_a_plain_comment() -> None:
    hinted = parse_statement(
        "INSERT INTO t /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true', 'a' = 'b') */ "
        "VALUES (4, 'x')"
    )
    assert isinstance(hinted, Insert)
    assert hinted.hints == {"postpone.batch-write-fixed-bucket": "true", "a": "b"}
    plain = parse_statement("INSERT INTO t /* OPTIONS('a' = 'b') */ VALUES (4, 'x')")
    assert isinstance(plain, Insert) and plain.hints == {}


def test_insert_overwrite_with_a_static_partition_and_a_column_list() -> None:
    stmt = parse_statement(
        "INSERT OVERWRITE TABLE db.t PARTITION (dt = '2026-11-26') SELECT a FROM s"
    )
    assert isinstance(stmt, Insert)
    assert stmt.overwrite and stmt.static_partition == {"dt": "2026-11-26"}
    assert stmt.name == TableName("t", "db")
    listed = parse_statement("INSERT INTO paimon.db.t (b, a) VALUES (1, 2)")
    assert isinstance(listed, Insert)
    assert listed.columns == ["b", "a"] and listed.name == TableName("t", "db", "paimon")


def test_call_positional_and_named_arguments() -> None:
    positional = parse_statement("CALL sys.compact('ods.with_pk_table', '', '', '', '')")
    assert positional == Call("compact", ["ods.with_pk_table", "", "", "", ""], {})
    named = parse_statement(
        "CALL sys.rescale(\n  `table` => 'ods.p',\n  `bucket_num` => 1,\n  `partition` => 'd=1'\n)"
    )
    assert named == Call("rescale", [], {"table": "ods.p", "bucket_num": 1, "partition": "d=1"})
    catalog = parse_statement(
        "call paimon.sys.expire_snapshots(`table` => 'db.t', retain_max => 2)"
    )
    assert catalog == Call("expire_snapshots", [], {"table": "db.t", "retain_max": 2})


def test_call_refuses_non_literals_and_positional_after_named() -> None:
    with pytest.raises(SqlSyntaxError, match="literal"):
        parse_statement("CALL sys.compact(`table` => concat('a', 'b'))")
    with pytest.raises(SqlSyntaxError, match="positional"):
        parse_statement("CALL sys.compact(`table` => 'db.t', 'x')")
    with pytest.raises(UnsupportedStatementError, match="only sys"):
        parse_statement("CALL other.compact('db.t')")


def test_catalog_statements() -> None:
    assert parse_statement("CREATE SCHEMA paimon.test_db") == CreateDatabase("test_db", False)
    assert parse_statement("CREATE DATABASE IF NOT EXISTS d") == CreateDatabase("d", True)
    assert parse_statement("DROP DATABASE d CASCADE") == DropDatabase("d", False, True)
    assert parse_statement("DROP SCHEMA IF EXISTS d") == DropDatabase("d", True, False)
    assert parse_statement("SHOW DATABASES") == ShowDatabases()
    assert parse_statement("SHOW TABLES") == ShowTables(None)
    assert parse_statement("SHOW TABLES IN paimon.d") == ShowTables("d")
    assert parse_statement("USE ods") == Use("ods")
    assert parse_statement("USE paimon.ods") == Use("ods")
    assert parse_statement("drop table T") == DropTable(TableName("T"), False)
    assert parse_statement("DROP TABLE IF EXISTS db.t") == DropTable(TableName("t", "db"), True)


def test_alter_table_options_in_both_spellings() -> None:
    assert parse_statement("ALTER TABLE t SET TBLPROPERTIES ('a' = 'b')") == AlterTableOptions(
        TableName("t"), {"a": "b"}, []
    )
    assert parse_statement("ALTER TABLE t SET ('a' = '1')") == AlterTableOptions(
        TableName("t"), {"a": "1"}, []
    )
    assert parse_statement("ALTER TABLE db.t UNSET TBLPROPERTIES ('a', 'c')") == AlterTableOptions(
        TableName("t", "db"), {}, ["a", "c"]
    )
    assert parse_statement("ALTER TABLE t RESET ('a')") == AlterTableOptions(
        TableName("t"), {}, ["a"]
    )


def test_delete_update_and_set() -> None:
    assert parse_statement("delete from with_pk_table where order_id in (2, 3)") == Delete(
        TableName("with_pk_table"), "order_id IN (2, 3)"
    )
    assert parse_statement("UPDATE T SET v = v + 1, s = 'x' WHERE pk = 1") == Update(
        TableName("T"), {"v": "v + 1", "s": "'x'"}, "pk = 1"
    )
    assert parse_statement("SET 'execution.runtime-mode' = 'batch'") == SetOption(
        "execution.runtime-mode", "batch"
    )
    assert parse_statement("SET spark.paimon.a.b.c.d = false") == SetOption(
        "spark.paimon.a.b.c.d", "false"
    )


def test_queries_keep_their_tree() -> None:
    stmt = parse_statement("SELECT * FROM t VERSION AS OF 2")
    assert isinstance(stmt, Query)
    assert isinstance(parse_statement("WITH c AS (SELECT 1) SELECT * FROM c"), Query)
    assert isinstance(parse_statement("VALUES (1, 2)"), Query)


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        ("CREATE VIEW v AS SELECT 1", "CREATE VIEW"),
        ("EXPLAIN INSERT INTO t VALUES (1)", "EXPLAIN"),
        ("CREATE TABLE t (a INT) USING parquet", "USING parquet"),
        ("SHOW FUNCTIONS", "SHOW FUNCTIONS"),
    ],
)
def test_unsupported_statements_are_named(statement: str, named: str) -> None:
    with pytest.raises(UnsupportedStatementError, match=named):
        parse_statement(statement)


def test_syntax_errors_carry_the_parsers_position() -> None:
    with pytest.raises(SqlSyntaxError) as raised:
        parse_statement("SELECT a,\n  FROM WHERE")
    assert raised.value.line == 2
    assert raised.value.col is not None
    assert "line 2" in str(raised.value)
    with pytest.raises(SqlSyntaxError, match="one SQL statement"):
        parse_statement("SELECT 1; SELECT 2")


def test_split_statements_respects_strings_and_comments() -> None:
    script = """-- a comment; with a semicolon
    SET 'execution.runtime-mode' = 'batch';
    select ';' as s from x /* ; */;
    insert into t values (1);  -- trailing
    -- only a comment at the end;
    """
    assert split_statements(script) == [
        "-- a comment; with a semicolon\n    SET 'execution.runtime-mode' = 'batch'",
        "select ';' as s from x /* ; */",
        "insert into t values (1)",
    ]
    with pytest.raises(SqlSyntaxError):
        split_statements("select 'unterminated")
