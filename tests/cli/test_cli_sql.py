"""``paimon-pyspark sql``: statements from -e, -f and a prompt, run through the SQL door."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import FileSystemCatalog
from paimon_pyspark.cli import _parser, main

REPO = Path(__file__).resolve().parents[2]
POSTPONE_SCRIPT = REPO / "examples" / "sql" / "postpone_bucket_table.sql"


def _ids(catalog: FileSystemCatalog, name: str, column: str = "id") -> list[object]:
    table = catalog.get_table(name)
    rb = table.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(got.column(column).to_pylist(), key=str)


def _table_rows(out: str) -> list[list[str]]:
    """The data rows of every table the CLI printed (between a table's 2nd and 3rd rule)."""
    rows: list[list[str]] = []
    rules = 0
    for line in out.splitlines():
        if line.startswith("+-") and line.endswith("+"):
            rules = rules % 3 + 1
        elif line.startswith("|") and rules == 2:
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> Iterator[SparkSession]:
    """The shared session, with the database a test's ``USE`` chose put back afterwards."""
    from paimon_pyspark.spark import sql

    yield spark
    sql(spark, "USE default", warehouse=warehouse)


def test_sql_arguments_parse() -> None:
    args = _parser().parse_args(
        ["sql", "--warehouse", "/w", "-e", "SELECT 1; SELECT 2", "--option", "s3.region=x"]
    )
    assert (args.warehouse, args.execute, args.file, args.option) == (
        "/w",
        "SELECT 1; SELECT 2",
        None,
        ["s3.region=x"],
    )
    with pytest.raises(SystemExit):
        _parser().parse_args(["sql", "--warehouse", "/w", "-e", "SELECT 1", "-f", "x.sql"])


def test_unterminated_string_fails_before_spark_starts(
    warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sql", "--warehouse", warehouse, "-e", "SELECT 1; SELECT 'open"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: SQL syntax error")


def test_missing_script_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sql", "--warehouse", str(tmp_path), "-f", str(tmp_path / "none.sql")])
    assert code == 2
    assert "none.sql" in capsys.readouterr().err


@pytest.mark.slow
def test_e_runs_each_statement_and_prints_query_rows(
    session: SparkSession,
    warehouse: str,
    catalog: FileSystemCatalog,
    capsys: pytest.CaptureFixture[str],
) -> None:
    create = "CREATE TABLE db.t (id INT, name STRING); INSERT INTO db.t VALUES (1, 'a'), (2, NULL)"
    assert main(["sql", "--warehouse", warehouse, "-e", create]) == 0
    assert capsys.readouterr().out.splitlines() == ["OK", "OK"]
    assert _ids(catalog, "db.t") == [1, 2]

    query = "SELECT id, name FROM db.t ORDER BY id; SELECT count(*) AS n FROM db.t"
    assert main(["sql", "--warehouse", warehouse, "-e", query]) == 0
    out = capsys.readouterr().out
    assert _table_rows(out) == [["1", "a"], ["2", "NULL"], ["2"]]
    assert "|id |name|" in out
    assert "(2 rows)" in out and "(1 row)" in out


@pytest.mark.slow
def test_f_script_with_comments_and_semicolon_in_a_string(
    session: SparkSession,
    warehouse: str,
    catalog: FileSystemCatalog,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = tmp_path / "notes.sql"
    script.write_text(
        "-- a comment; with a semicolon\n"
        "CREATE TABLE db.notes (id INT, note STRING); /* a block; comment */\n"
        "INSERT INTO db.notes VALUES (1, 'a;b'), (2, '-- not a comment');\n"
        "-- the rows back\n"
        "SELECT note FROM db.notes ORDER BY id; -- trailing; comment\n"
        "/* nothing after the last statement */\n",
        "utf-8",
    )
    assert main(["sql", "--warehouse", warehouse, "-f", str(script)]) == 0
    out = capsys.readouterr().out
    assert _table_rows(out) == [["a;b"], ["-- not a comment"]]
    assert _ids(catalog, "db.notes", "note") == ["-- not a comment", "a;b"]


@pytest.mark.slow
def test_prompt_reads_multiline_statements_survives_an_error_and_quits(
    session: SparkSession,
    warehouse: str,
    catalog: FileSystemCatalog,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = [
        "CREATE TABLE db.t (",
        "  id INT,",
        "  s STRING",
        ");",
        "INSERT INTO db.t VALUES (1, 'x;",
        "y'); SELECT * FROM db.missing;",
        "SELEC 1;",
        "SELECT id,",
        "       s",
        "  FROM db.t;  -- done",
        "-- a comment alone does not start a statement",
        "quit",
        "INSERT INTO db.t VALUES (2, 'after quit');",
    ]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    assert main(["sql", "--warehouse", warehouse]) == 0
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 2
    assert errors[0] == "error: Table 'db.missing' does not exist."
    assert errors[1].startswith("error: SQL syntax error at line 1, column 7")
    assert "|1  |x;\ny|" in captured.out
    assert _ids(catalog, "db.t", "s") == ["x;\ny"]


@pytest.mark.slow
def test_prompt_runs_an_unterminated_last_statement_at_end_of_input(
    session: SparkSession,
    warehouse: str,
    catalog: FileSystemCatalog,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("CREATE TABLE db.t (id INT);\nEXIT;\n"))
    assert main(["sql", "--warehouse", warehouse]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("INSERT INTO db.t VALUES (7)"))
    assert main(["sql", "--warehouse", warehouse]) == 0
    assert capsys.readouterr().out.splitlines() == ["OK", "OK"]
    assert _ids(catalog, "db.t") == [7]


@pytest.mark.slow
def test_failing_statement_stops_the_script_with_exit_code_2(
    session: SparkSession,
    warehouse: str,
    catalog: FileSystemCatalog,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = tmp_path / "bad.sql"
    script.write_text(
        "CREATE TABLE db.a (id INT);\n\n-- the next one names no table\nINSERT INTO db.nope "
        "VALUES (1);\nCREATE TABLE db.b (id INT);\n",
        "utf-8",
    )
    assert main(["sql", "--warehouse", warehouse, "-f", str(script)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: statement 2 of 3 (line 3 of {script}) failed: ")
    assert "db.nope" in err
    assert catalog.list_tables("db") == ["a"]

    bad = "SELECT 1 AS one; SELECT * FROM db.a WHERE (id = 1"
    assert main(["sql", "--warehouse", warehouse, "-e", bad]) == 2
    captured = capsys.readouterr()
    assert "|1  |" in captured.out
    assert captured.err.startswith(
        "error: statement 2 of 2 (-e) failed: SQL syntax error at line 1"
    )


@pytest.mark.slow
def test_postpone_example_script_shows_each_step(
    session: SparkSession, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sql", "--warehouse", warehouse, "--echo", "-f", str(POSTPONE_SCRIPT)]) == 0
    out = capsys.readouterr().out
    selects = out.split("paimon> ")
    visible = [
        [row[0] for row in _table_rows(step)]
        for step in selects
        if "SELECT * FROM postpone_bucket_table" in step
    ]
    assert visible == [
        ["4", "5", "6"],
        ["1", "2", "3", "4", "5", "6"],
        ["1", "2", "3", "4", "5", "6"],
        ["1", "2", "3", "4", "5", "6", "7", "10"],
        [str(i) for i in range(1, 11)],
        ["4"],
    ]


@pytest.mark.slow
def test_json_prints_every_statements_result_as_one_document(
    session: SparkSession,
    warehouse: str,
    catalog: FileSystemCatalog,
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = (
        "CREATE TABLE db.t (id INT, name STRING); INSERT INTO db.t VALUES (1, 'a'), (2, NULL);"
        " SELECT id, name FROM db.t ORDER BY id"
    )
    assert main(["sql", "--warehouse", warehouse, "-e", script, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["columns"] for s in doc["statements"]] == [[], [], ["id", "name"]]
    assert doc["statements"][2]["rows"] == [[1, "a"], [2, None]]

    assert (
        main(["sql", "--warehouse", warehouse, "-e", "SELECT 1; SELECT * FROM db.nope", "--json"])
        == 2
    )
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["statements"][0]["rows"] == [[1]]
    assert doc["error"]["statement"] == 2
    assert (
        doc["error"]["message"] == "statement 2 of 2 (-e) failed: Table 'db.nope' does not exist."
    )
    assert captured.err == f"error: {doc['error']['message']}\n"
