"""docs/sql.md stays true: every fenced ```sql block runs, in document order, each statement
(cut by ``sql.split_statements``) through ``paimon_pyspark.spark.sql``, on one fresh warehouse
and the shared session. A block depends on the blocks before it (a section's first block
creates its tables); a failure names the block's line and the statement."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark.spark import register, sql
from paimon_pyspark.sql import split_statements

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[2] / "docs" / "sql.md"


def sql_blocks(text: str) -> list[tuple[int, str]]:
    """(line of the opening fence, body) of every ```sql block."""
    blocks: list[tuple[int, str]] = []
    fence: int | None = None
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if fence is None:
            if stripped.startswith("```") and stripped[3:].strip().lower() == "sql":
                fence, body = number, []
        elif stripped.startswith("```"):
            blocks.append((fence, "\n".join(body)))
            fence = None
        else:
            body.append(line)
    assert fence is None, f"docs/sql.md: the ```sql block at line {fence} is not closed"
    return blocks


BLOCKS = sql_blocks(DOC.read_text("utf-8"))


@pytest.fixture(scope="module")
def warehouse(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The docs' warehouse; the session's temporary views and settings are put back after."""
    path = str(tmp_path_factory.mktemp("sql_docs"))
    register(spark, warehouse=path)
    sql(spark, "USE default").collect()
    views = {t.name for t in spark.catalog.listTables() if t.isTemporary}
    conf = session_conf(spark)
    yield path
    sql(spark, "USE default").collect()
    for t in spark.catalog.listTables():
        if t.isTemporary and t.name not in views:
            spark.catalog.dropTempView(t.name)
    for key, value in session_conf(spark).items():
        if key not in conf:
            spark.conf.unset(key)
        elif value != conf[key]:
            spark.conf.set(key, conf[key])


def session_conf(spark: SparkSession) -> dict[str, str]:
    """The session's settings, through ``SET``: pyspark 3.5's ``spark.conf`` has no ``getAll``."""
    return {str(key): str(value) for key, value in spark.sql("SET").collect()}


def test_the_doc_has_sql_blocks() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize(("line", "body"), BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_sql_block_runs(spark: SparkSession, warehouse: str, line: int, body: str) -> None:
    statements = split_statements(body)
    assert statements, f"docs/sql.md line {line}: an empty ```sql block"
    for i, statement in enumerate(statements, start=1):
        try:
            sql(spark, statement, warehouse=warehouse).collect()
        except Exception as e:
            flat = " ".join(statement.split())
            pytest.fail(
                f"docs/sql.md, the ```sql block at line {line}, statement {i} failed: {flat}\n"
                f"{type(e).__name__}: {e}",
                pytrace=False,
            )
