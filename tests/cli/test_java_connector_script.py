"""examples/sql/java_connector_table_life.sql, a script written for Java's Spark connector (one
table's life: MERGE, DESCRIBE, tags, time travel, TRUNCATE), runs unchanged through
``paimon-pyspark sql -f``, and each SELECT shows what Java's connector shows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark.cli import main
from paimon_pyspark.spark import sql

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "sql" / "java_connector_table_life.sql"

FIRST = [
    [1, "alice", "10.50", "NEW", "2024-01-01"],
    [2, "bob", "20.00", "NEW", "2024-01-01"],
    [3, "carol", "30.25", "NEW", "2024-01-02"],
]
SECOND = [*FIRST, [4, "dave", "40.00", "NEW", "2024-01-02"]]
MERGED = [
    [1, "alice", "12.00", "PAID", "2024-01-01"],
    FIRST[2],
    SECOND[3],
    [5, "erin", "50.00", "NEW", "2024-01-02"],
]


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> Iterator[SparkSession]:
    """The shared session, with the database the script's ``USE`` chose put back afterwards."""
    yield spark
    sql(spark, "USE default", warehouse=warehouse)


def _text(statement: str) -> str:
    """A statement's text without its comment lines, on one line."""
    lines = [x for x in statement.splitlines() if not x.strip().startswith("--")]
    return " ".join(" ".join(lines).split())


def _plain(rows: list[list[Any]]) -> list[list[Any]]:
    return [[v if isinstance(v, int | str) or v is None else str(v) for v in r] for r in rows]


@pytest.mark.slow
def test_java_connector_script_runs_unchanged(
    session: SparkSession, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sql", "--warehouse", warehouse, "--json", "-f", str(SCRIPT)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    results = json.loads(captured.out)["statements"]
    assert len(results) == 21
    texts = [_text(r["statement"]) for r in results]

    def rows(text: str) -> list[list[Any]]:
        found = [r for t, r in zip(texts, results, strict=True) if t.startswith(text)]
        assert len(found) == 1, text
        return _plain(found[0]["rows"])

    selects = [
        _plain(r["rows"]) for t, r in zip(texts, results, strict=True) if t.startswith("SELECT *")
    ]
    assert selects == [FIRST, SECOND, MERGED, SECOND, FIRST, FIRST]
    assert sorted(r[0] for r in rows("SHOW TAGS orders")) == ["day_one", "first_load"]
    described = {r[0]: r[1] for r in rows("DESCRIBE orders")}
    assert described["order_id"] == "bigint"
    assert described["amount"] == "decimal(10,2)"
    assert rows("SHOW PARTITIONS orders") == [["dt=2024-01-01"], ["dt=2024-01-02"]]
    assert rows("SELECT count(*) FROM orders TIMESTAMP AS OF") == [[4]]
    assert texts[-2] == "SELECT count(*) FROM orders"
    assert _plain(results[-2]["rows"]) == [[0]]  # after TRUNCATE TABLE
