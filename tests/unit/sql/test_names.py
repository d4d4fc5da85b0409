"""The tables a statement names (sql/names.py), which decide whether the SQL door runs it or
hands it to Spark; the statements that are Paimon's by their form; temporary views and
EXPLAIN, which the door reads for queries over Paimon tables."""

from __future__ import annotations

import pytest

from paimon_pyspark.errors import UnsupportedStatementError
from paimon_pyspark.sql import parse_statement
from paimon_pyspark.sql.explain import Explain
from paimon_pyspark.sql.names import claims_paimon, named_tables
from paimon_pyspark.sql.views import CreateTempView


@pytest.mark.parametrize(
    ("statement", "names"),
    [
        ("SELECT * FROM t JOIN db.u ON t.a = u.a", ["t", "db.u"]),
        ("WITH c AS (SELECT * FROM paimon.db.t) SELECT * FROM c", ["paimon.db.t"]),
        ("EXPLAIN SELECT * FROM db.t", ["db.t"]),
        ("CACHE TABLE v", ["v"]),
        ("CREATE TEMPORARY VIEW v AS SELECT * FROM db.t", ["v", "db.t"]),
        ("SHOW PARTITIONS paimon.db.t", ["PARTITIONS", "paimon.db.t"]),
        ("SHOW FUNCTIONS", ["FUNCTIONS"]),
        ("SELECT * FROM range(3)", []),
        ("SET spark.sql.shuffle.partitions = 4", []),
        ("SELECT (", []),
    ],
)
def test_named_tables(statement: str, names: list[str]) -> None:
    got = [".".join(p for p in (t.catalog, t.db, t.name) if p) for t in named_tables(statement)]
    assert got == names


@pytest.mark.parametrize(
    ("statement", "paimon"),
    [
        ("CALL sys.compact('t')", True),
        ("CREATE TABLE t (a INT)", True),
        ("CREATE TABLE t (a INT) USING paimon", True),
        ("CREATE OR REPLACE TABLE t (a INT)", True),
        ("CREATE TABLE t (a INT) USING parquet", False),
        ("CREATE TEMPORARY VIEW v AS SELECT 1", False),
        ("SHOW FUNCTIONS", False),
    ],
)
def test_claims_paimon(statement: str, paimon: bool) -> None:
    assert claims_paimon(statement) is paimon


def test_temporary_views_are_read_other_views_are_not() -> None:
    view = parse_statement("CREATE OR REPLACE GLOBAL TEMP VIEW v (a, b) AS SELECT k, v FROM t")
    assert isinstance(view, CreateTempView)
    assert (view.name, view.columns, view.replace, view.global_view) == (
        "v",
        ["a", "b"],
        True,
        True,
    )
    with pytest.raises(UnsupportedStatementError, match="CREATE VIEW"):
        parse_statement("CREATE VIEW v AS SELECT 1")
    with pytest.raises(UnsupportedStatementError, match="CREATE VIEW"):
        parse_statement("CREATE TEMPORARY VIEW v USING parquet OPTIONS (path '/tmp/x')")


def test_explain_of_a_query_is_read_with_its_mode() -> None:
    explain = parse_statement("EXPLAIN FORMATTED SELECT * FROM t /*+ OPTIONS('a' = 'b') */")
    assert isinstance(explain, Explain)
    assert explain.mode == "formatted"
    assert explain.text == "SELECT * FROM t /*+ OPTIONS('a' = 'b') */"
    assert isinstance(parse_statement("EXPLAIN SELECT 1"), Explain)
    with pytest.raises(UnsupportedStatementError, match="EXPLAIN"):
        parse_statement("EXPLAIN INSERT INTO t VALUES (1)")
