"""How the door reads tag DDL (sql/tags.py) and ``ALTER|CHANGE COLUMN`` with positions and
nested paths (sql/alter_columns.py, ``_column_changes``): Java's Spark grammar's forms."""

from __future__ import annotations

import pytest

from paimon_pyspark.errors import SqlSyntaxError, UnsupportedOperationError
from paimon_pyspark.sql.statements import AlterTableColumns, TableName, parse_statement
from paimon_pyspark.sql.tags import CreateTag, DeleteTag, RenameTag
from paimon_pyspark.store.schema_change import (
    AddColumn,
    DropColumn,
    Move,
    RenameColumn,
    SchemaChange,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
)
from paimon_pyspark.types.data_types import parse_atomic_sql


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (
            "ALTER TABLE t CREATE TAG `tag-1`",
            CreateTag(("t",), "tag-1", None, None, True, False, False),
        ),
        (
            "alter table db.t create tag if not exists v as of version 3 retain 7 days;",
            CreateTag(("db", "t"), "v", 3, "7 d", True, False, True),
        ),
        (
            "ALTER TABLE paimon.db.t CREATE OR REPLACE TAG v RETAIN 12 HOURS",
            CreateTag(("paimon", "db", "t"), "v", None, "12 h", True, True, False),
        ),
        (
            "ALTER TABLE t REPLACE TAG v AS OF VERSION 1 RETAIN 5 MINUTES",
            CreateTag(("t",), "v", 1, "5 min", False, True, False),
        ),
        ("ALTER TABLE t DELETE TAG `a, b`", DeleteTag(("t",), ("a", "b"), False)),
        ("ALTER TABLE t DELETE TAG IF EXISTS a, `b`", DeleteTag(("t",), ("a", "b"), True)),
        ("ALTER TABLE t RENAME TAG `a` TO b", RenameTag(("t",), "a", "b")),
    ],
)
def test_tag_statements(statement: str, expected: object) -> None:
    assert parse_statement(statement) == expected


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("ALTER TABLE t CREATE TAG tag-1", "the end of the statement"),
        ("ALTER TABLE t CREATE TAG v RETAIN 2 WEEKS", "DAYS, HOURS or MINUTES"),
        ("ALTER TABLE t CREATE TAG v AS OF VERSION x", "snapshot id"),
        ("ALTER TABLE t RENAME TAG a b", "Expected TO"),
        ("ALTER TABLE t DELETE TAG", "a tag name"),
    ],
)
def test_tag_statement_syntax_errors(statement: str, message: str) -> None:
    with pytest.raises(SqlSyntaxError, match=message):
        parse_statement(statement)


def changes(statement: str) -> list[SchemaChange]:
    stmt = parse_statement(statement)
    assert isinstance(stmt, AlterTableColumns) and stmt.name == TableName("t")
    return stmt.changes


BIGINT = parse_atomic_sql("BIGINT")


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("ALTER TABLE t ALTER COLUMN c FIRST", [UpdateColumnPosition(Move.first("c"))]),
        (
            "ALTER TABLE t ALTER c TYPE BIGINT COMMENT 'x' AFTER b",
            [
                UpdateColumnType(("c",), BIGINT, True),
                UpdateColumnComment(("c",), "x"),
                UpdateColumnPosition(Move.after("c", "b")),
            ],
        ),
        (
            "ALTER TABLE t ALTER COLUMN a FIRST, b DROP NOT NULL",
            [UpdateColumnPosition(Move.first("a")), UpdateColumnNullability(("b",), True)],
        ),
        (
            "ALTER TABLE t CHANGE COLUMN c c BIGINT COMMENT 'x' FIRST",
            [
                UpdateColumnType(("c",), BIGINT, True),
                UpdateColumnComment(("c",), "x"),
                UpdateColumnPosition(Move.first("c")),
            ],
        ),
        (
            "ALTER TABLE t ALTER COLUMN arr.element.x SET NOT NULL",
            [UpdateColumnNullability(("arr", "element", "x"), False)],
        ),
        (
            "ALTER TABLE t ALTER COLUMN m.value TYPE BIGINT",
            [UpdateColumnType(("m", "value"), BIGINT, True)],
        ),
        (
            "ALTER TABLE t ADD COLUMN s.n BIGINT AFTER a",
            [AddColumn(("s", "n"), BIGINT, None, Move.after("s", "a"))],
        ),
        ("ALTER TABLE t RENAME COLUMN s.a.b TO c", [RenameColumn(("s", "a", "b"), "c")]),
        (
            "ALTER TABLE t DROP COLUMNS (s.a, b)",
            [DropColumn(("s", "a")), DropColumn(("b",))],
        ),
    ],
)
def test_column_changes(statement: str, expected: list[SchemaChange]) -> None:
    assert changes(statement) == expected


@pytest.mark.parametrize(
    ("statement", "error", "message"),
    [
        ("ALTER TABLE t ALTER COLUMN s.a FIRST", UnsupportedOperationError, "top-level"),
        ("ALTER TABLE t CHANGE COLUMN a b INT", UnsupportedOperationError, "RENAME COLUMN"),
        ("ALTER TABLE t CHANGE COLUMN a a INT NOT NULL", UnsupportedOperationError, "NOT NULL"),
        ("ALTER TABLE t ALTER COLUMN a SET DEFAULT 1", UnsupportedOperationError, "DEFAULT"),
        ("ALTER TABLE t ALTER COLUMN a", SqlSyntaxError, "TYPE, COMMENT, FIRST"),
        ("ALTER TABLE t RENAME COLUMN a TO s.b", SqlSyntaxError, "not a path"),
    ],
)
def test_column_change_refusals(statement: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_statement(statement)
