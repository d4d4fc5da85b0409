"""MERGE INTO as a typed statement (sql/merge.py): clauses, Spark's parser rules, Java's checks."""

from __future__ import annotations

import pytest

from paimon_pyspark.errors import SqlSyntaxError, UnsupportedStatementError
from paimon_pyspark.sql.dialect import to_sql
from paimon_pyspark.sql.merge import MergeInto, clause
from paimon_pyspark.sql.statements import parse_statement


def merge(text: str) -> MergeInto:
    stmt = parse_statement(text)
    assert isinstance(stmt, MergeInto)
    return stmt


def test_every_clause_kind_in_order() -> None:
    stmt = merge(
        "MERGE INTO db.t AS tg USING (SELECT * FROM s WHERE x > 1) src ON tg.k = src.k "
        "WHEN MATCHED AND src.op = 'D' THEN DELETE "
        "WHEN MATCHED AND src.op = 'U' THEN UPDATE SET v = src.v, tg.w = src.w + 1 "
        "WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED BY TARGET AND src.x > 0 THEN INSERT (k, v) VALUES (src.k, src.v) "
        "WHEN NOT MATCHED AND src.x < 0 THEN INSERT VALUES (src.k, 1, 2) "
        "WHEN NOT MATCHED THEN INSERT * "
        "WHEN NOT MATCHED BY SOURCE AND tg.v > 3 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 0"
    )
    assert (str(stmt.target), stmt.target_alias, stmt.source_alias) == ("db.t", "tg", "src")
    assert to_sql(stmt.source) == "SELECT * FROM s WHERE x > 1"
    assert to_sql(stmt.on) == "tg.k = src.k"
    shapes = [(c.kind, c.action, c.columns, c.star) for c in stmt.clauses]
    assert shapes == [
        ("matched", "delete", (), False),
        ("matched", "update", ("v", "w"), False),
        ("matched", "update", None, True),
        ("not_matched", "insert", ("k", "v"), False),
        ("not_matched", "insert", None, False),
        ("not_matched", "insert", None, True),
        ("not_matched_by_source", "delete", (), False),
        ("not_matched_by_source", "update", ("v",), False),
    ]
    assert [to_sql(v) for v in stmt.clauses[1].values] == ["src.v", "src.w + 1"]
    assert len(stmt.clauses[4].values) == 3
    table_source = merge("MERGE INTO t USING db.s ON t.k = s.k WHEN MATCHED THEN DELETE")
    assert (table_source.target_alias, table_source.source_alias) == (None, None)
    assert to_sql(table_source.source) == "db.s"


@pytest.mark.parametrize(
    ("whens", "error", "words"),
    [
        (
            "WHEN MATCHED THEN DELETE WHEN MATCHED THEN UPDATE SET v = 1",
            SqlSyntaxError,
            "only the last MATCHED clause can omit the condition",
        ),
        (
            "WHEN NOT MATCHED THEN INSERT * WHEN NOT MATCHED AND s.v > 1 THEN INSERT *",
            SqlSyntaxError,
            r"only the last NOT MATCHED \[BY TARGET\] clause",
        ),
        (
            "WHEN NOT MATCHED BY SOURCE THEN DELETE WHEN NOT MATCHED BY SOURCE THEN DELETE",
            SqlSyntaxError,
            "only the last NOT MATCHED BY SOURCE clause",
        ),
        ("WHEN MATCHED THEN INSERT *", SqlSyntaxError, "WHEN MATCHED takes UPDATE or DELETE"),
        ("WHEN NOT MATCHED THEN DELETE", SqlSyntaxError, r"BY TARGET\] takes INSERT"),
        ("WHEN MATCHED THEN UPDATE SET v = 1, t.v = 2", SqlSyntaxError, "'v' more than once"),
        (
            "WHEN NOT MATCHED THEN INSERT (k, v) VALUES (1)",
            SqlSyntaxError,
            r"names 2 column\(s\) but gives 1 value",
        ),
        (
            "WHEN MATCHED AND s.k IN (SELECT 1) THEN DELETE",
            UnsupportedStatementError,
            "with subquery can't be supported",
        ),
        ("WHEN MATCHED THEN UPDATE SET t.s.f = 1", UnsupportedStatementError, "nested field"),
    ],
)
def test_spark_rules(whens: str, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        parse_statement(f"MERGE INTO t USING s ON t.k = s.k {whens}")


def test_python_clauses_take_the_same_checks() -> None:
    c = clause("matched", "update", "s.v > 1", {"v": "s.v + 1"})
    assert (c.columns, [to_sql(v) for v in c.values], to_sql(c.condition)) == (
        ("v",),
        ["s.v + 1"],
        "s.v > 1",
    )
    assert clause("not_matched", "insert").star
    with pytest.raises(SqlSyntaxError, match="WHEN NOT MATCHED BY SOURCE takes"):
        clause("not_matched_by_source", "insert")


def test_options_hint_on_the_target_is_the_writes_dynamic_options() -> None:
    hinted = merge(
        "MERGE INTO t /*+ OPTIONS('file.format' = 'orc') */ AS tg USING s ON tg.k = s.k "
        "WHEN MATCHED THEN DELETE"
    )
    assert (hinted.hints, hinted.target_alias) == ({"file.format": "orc"}, "tg")
    assert merge("MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN DELETE").hints == {}
