"""DESCRIBE and the SHOW statements of sql/show.py as typed values, and the nested ``NOT NULL``
and struct field comments that SHOW CREATE TABLE's output relies on."""

from __future__ import annotations

import pytest

from paimon_pyspark.errors import SqlSyntaxError, UnsupportedStatementError
from paimon_pyspark.sql.show import (
    DescribeTable,
    ShowColumns,
    ShowCreateTable,
    ShowPartitions,
    ShowTags,
    ShowTblProperties,
)
from paimon_pyspark.sql.statements import CreateTable, TableName, parse_statement
from paimon_pyspark.types.data_types import ArrayType, DataField, MapType, RowType

T = TableName("t")
DBT = TableName("t", "db")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DESCRIBE t", DescribeTable(T)),
        ("desc table db.t", DescribeTable(DBT)),
        ("DESCRIBE EXTENDED paimon.db.t", DescribeTable(TableName("t", "db", "paimon"), True)),
        ("DESC TABLE FORMATTED t", DescribeTable(T, True)),
        ("DESCRIBE t PARTITION (dt = '1', h = 2)", DescribeTable(T, False, {"dt": "1", "h": "2"})),
        ("SHOW CREATE TABLE db.`odd name`", ShowCreateTable(TableName("odd name", "db"))),
        ("SHOW PARTITIONS t", ShowPartitions(T)),
        ("SHOW PARTITIONS t PARTITION (dt = NULL)", ShowPartitions(T, {"dt": None})),
        ("SHOW TAGS db.t", ShowTags(DBT)),
        ("SHOW COLUMNS FROM t", ShowColumns(T)),
        ("show columns in t in db", ShowColumns(T, "db")),
        ("SHOW TBLPROPERTIES t", ShowTblProperties(T)),
        ("SHOW TBLPROPERTIES t ('primary-key')", ShowTblProperties(T, "primary-key")),
        ("SHOW TBLPROPERTIES t (a.b)", ShowTblProperties(T, "a.b")),
    ],
)
def test_parsed(text: str, expected: object) -> None:
    assert parse_statement(text) == expected


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("SHOW TAGS", SqlSyntaxError),
        ("SHOW CREATE TABLE t extra", SqlSyntaxError),
        ("SHOW CREATE TABLE t AS SERDE", UnsupportedStatementError),
        ("SHOW PARTITIONS t WHERE x", SqlSyntaxError),
        ("SHOW PARTITIONS t PARTITION (dt = 1, DT = 2)", SqlSyntaxError),
        ("SHOW COLUMNS t", SqlSyntaxError),
        ("SHOW TBLPROPERTIES t ('a', 'b')", SqlSyntaxError),
        ("DESCRIBE DATABASE db", UnsupportedStatementError),
        ("SHOW FUNCTIONS", UnsupportedStatementError),
    ],
)
def test_refused(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse_statement(text)


def test_nested_not_null_and_field_comments() -> None:
    stmt = parse_statement(
        "CREATE TABLE t (a ARRAY<INT NOT NULL>, m MAP<STRING NOT NULL, ARRAY<INT> NOT NULL>, "
        "s STRUCT<x: INT NOT NULL COMMENT 'it\\'s', y: STRING>) USING paimon"
    )
    assert isinstance(stmt, CreateTable)
    a, m, s = (c.type for c in stmt.columns)
    assert isinstance(a, ArrayType) and not a.element.nullable and a.nullable
    assert isinstance(m, MapType) and not m.key.nullable and not m.value.nullable
    assert isinstance(m.value, ArrayType) and m.value.element.nullable
    assert isinstance(s, RowType)
    assert s.fields[0] == DataField(0, "x", s.fields[0].type, "it's")
    assert not s.fields[0].type.nullable and s.fields[1].description is None
