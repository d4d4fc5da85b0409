"""SQL filter text -> Predicate (read/sql_predicate.py): each construct against the predicate
the builder makes by hand, NOT pushed down as SQL's three-valued logic allows, literals read
as the column's type, and every unsupported construct refused with the text in the error."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from paimon_pyspark.errors import PredicateError
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.types.data_types import (
    AtomicType,
    CharType,
    DataField,
    DecimalType,
    TimestampType,
)

STRING = CharType(2147483647)
FIELDS = [
    DataField(0, "dt", STRING),
    DataField(1, "hr", AtomicType("INT")),
    DataField(2, "price", AtomicType("DOUBLE")),
    DataField(3, "d", AtomicType("DATE")),
    DataField(4, "ts", TimestampType(6)),
    DataField(5, "flag", AtomicType("BOOLEAN")),
    DataField(6, "amount", DecimalType(10, 2)),
    DataField(7, "my col", STRING),
    DataField(8, "tiny", AtomicType("TINYINT")),
]
B = PredicateBuilder(FIELDS, "db.t")


def parse(text: str) -> Predicate:
    return parse_predicate(text, FIELDS, "db.t")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hr = 1", B.equal("hr", 1)),
        ("hr <> 1", B.not_equal("hr", 1)),
        ("hr != 1", B.not_equal("hr", 1)),
        ("hr < 1", B.less_than("hr", 1)),
        ("hr <= 1", B.less_or_equal("hr", 1)),
        ("hr > 1", B.greater_than("hr", 1)),
        ("hr >= 1", B.greater_or_equal("hr", 1)),
        ("1 < hr", B.greater_than("hr", 1)),
        ("1 >= hr", B.less_or_equal("hr", 1)),
        ("hr = -5", B.equal("hr", -5)),
        ("hr = '7'", B.equal("hr", 7)),
        ("dt = 20240101", B.equal("dt", "20240101")),
        ("dt = '2024-01-01'", B.equal("dt", "2024-01-01")),
        ("price > 1.5", B.greater_than("price", 1.5)),
        ("price > 1e3", B.greater_than("price", 1000.0)),
        ("d = DATE '2024-01-02'", B.equal("d", dt.date(2024, 1, 2))),
        ("d = '2024-01-02'", B.equal("d", dt.date(2024, 1, 2))),
        (
            "ts >= TIMESTAMP '2024-01-02 03:04:05.123456'",
            B.greater_or_equal("ts", dt.datetime(2024, 1, 2, 3, 4, 5, 123456)),
        ),
        ("flag = true", B.equal("flag", True)),
        ("flag = FALSE", B.equal("flag", False)),
        ("amount = 1.25", B.equal("amount", Decimal("1.25"))),
        ("hr IN (1, 2, 3)", B.is_in("hr", [1, 2, 3])),
        ("hr NOT IN (1, 2)", B.is_not_in("hr", [1, 2])),
        ("hr BETWEEN 1 AND 3", B.between("hr", 1, 3)),
        ("hr NOT BETWEEN 1 AND 3", B.not_between("hr", 1, 3)),
        ("dt IS NULL", B.is_null("dt")),
        ("dt IS NOT NULL", B.is_not_null("dt")),
        ("dt LIKE 'ab%'", B.like("dt", "ab%")),
        ("`my col` = 'x'", B.equal("my col", "x")),
        ("(hr = 1)", B.equal("hr", 1)),
        ("hr = NULL", B.equal("hr", None)),
        (
            "dt = 'a' AND hr = 1 AND price < 2",
            B.and_(B.equal("dt", "a"), B.equal("hr", 1), B.less_than("price", 2.0)),
        ),
        (
            "(hr = 1 AND dt = 'a') OR hr = 2",
            B.or_(B.and_(B.equal("hr", 1), B.equal("dt", "a")), B.equal("hr", 2)),
        ),
        (
            "NOT (hr < 1 OR dt = 'a')",
            B.and_(B.greater_or_equal("hr", 1), B.not_equal("dt", "a")),
        ),
        (
            "NOT (hr IN (1, 2) AND dt IS NULL)",
            B.or_(B.is_not_in("hr", [1, 2]), B.is_not_null("dt")),
        ),
        ("NOT NOT hr = 1", B.equal("hr", 1)),
        ("NOT hr BETWEEN 1 AND 2", B.not_between("hr", 1, 2)),
    ],
)
def test_sql_text_translates_to_the_builders_predicate(text: str, expected: Predicate) -> None:
    assert parse(text) == expected


def test_not_pushed_down_keeps_sqls_answer_on_nulls() -> None:
    """NOT (hr < 2) is null for a null hr, so the row is dropped, as hr >= 2 drops it."""
    rows = pa.table({"hr": pa.array([None, 1, 2, 3], pa.int32())})
    kept = rows.filter(parse("NOT (hr < 2)").to_arrow_expression())
    assert kept.column("hr").to_pylist() == [2, 3]
    kept = rows.filter(parse("NOT hr IN (1, 3)").to_arrow_expression())
    assert kept.column("hr").to_pylist() == [2]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "SQL boolean expression"),
        ("   ", "SQL boolean expression"),
        ("hr = = 1", "'hr = = 1' is not SQL"),
        ("nope = 1", "no field 'nope'"),
        ("hr = dt", "must compare a column with a literal"),
        ("1 = 2", "must compare a column with a literal"),
        ("hr + 1 = 2", "must compare a column with a literal"),
        ("t.hr = 1", "must compare a column with a literal"),
        ("hr = 'x'", "literal 'x' is not a value of field 'hr'"),
        ("hr = 1.5", "literal '1.5' is not a value of field 'hr'"),
        ("flag = 'maybe'", "literal 'maybe' is not a value of field 'flag'"),
        ("d = '2024-13-01'", "literal '2024-13-01'"),
        ("tiny = 300", "300"),
        ("dt NOT LIKE 'a%'", "NOT LIKE is not supported"),
        ("hr IN (SELECT 1)", "only IN of literals"),
        ("hr IS TRUE", "only IS"),
        ("hr", "'hr' is not supported"),
        ("lower(dt) = 'a'", "must compare a column with a literal"),
        ("hr IN (1, hr)", "is not a literal"),
    ],
)
def test_unsupported_text_is_refused_with_the_text(text: str, match: str) -> None:
    with pytest.raises(PredicateError, match=match) as info:
        parse(text)
    if text.strip():
        assert "table 'db.t'" in str(info.value) and text in str(info.value)


def test_non_string_text_is_refused() -> None:
    with pytest.raises(PredicateError, match="SQL boolean expression"):
        parse_predicate(42, FIELDS)  # type: ignore[arg-type]
