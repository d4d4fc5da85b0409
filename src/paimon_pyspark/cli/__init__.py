"""``paimon-pyspark``: land data in Paimon tables through Spark from the command line.

paimon-pyspark demo [--warehouse DIR] [--rows N]
paimon-pyspark load --input PATH --format parquet|csv|json --warehouse DIR --table db.t
                    [--create] [--partition-keys k1,k2] [--primary-keys k] [--option k=v]...
paimon-pyspark sql --warehouse W [-e "STATEMENTS" | -f script.sql] [--option k=v]... [--echo]

``sql`` only reads, splits and prints: every statement runs through ``paimon_pyspark.spark.sql``.
"""

from __future__ import annotations

import argparse
import datetime
import logging
import shutil
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sqlglot import TokenType

from paimon_pyspark.errors import PaimonError, SqlSyntaxError
from paimon_pyspark.sql import split_statements
from paimon_pyspark.sql.dialect import tokenize

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PROMPT = "paimon> "
CONTINUE = "     -> "
EXIT_WORDS = ("exit", "quit")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paimon-pyspark",
        description="Write and read Apache Paimon tables with PySpark, no JVM connector needed.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="generate orders, write the seed tables, read them back")
    demo.add_argument("--warehouse", default="demo-warehouse", help="warehouse directory (reset)")
    demo.add_argument("--rows", type=int, default=1_000_000, help="rows per table")
    demo.add_argument("--master", default="local[*]", help="Spark master")
    load = sub.add_parser("load", help="write a Parquet/CSV/JSON input into a Paimon table")
    load.add_argument("--input", required=True, help="input path (file or directory)")
    load.add_argument("--format", default="parquet", choices=["parquet", "csv", "json"])
    load.add_argument("--warehouse", required=True, help="warehouse path or URI")
    load.add_argument("--table", required=True, help="target table, 'db.table'")
    load.add_argument("--create", action="store_true", help="create the table if missing")
    load.add_argument("--partition-keys", default="", help="comma-separated, with --create")
    load.add_argument("--primary-keys", default="", help="comma-separated, with --create")
    load.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="table option"
    )
    load.add_argument("--master", default="local[*]", help="Spark master")
    sql = sub.add_parser(
        "sql",
        help="run SQL statements on a warehouse (-e, -f, or an interactive prompt)",
        description="Run ';'-separated SQL statements through paimon_pyspark.spark.sql. With "
        "neither -e nor -f, statements are read from a prompt until exit, quit or end of input.",
    )
    sql.add_argument("--warehouse", required=True, help="warehouse path or URI")
    source = sql.add_mutually_exclusive_group()
    source.add_argument("-e", dest="execute", metavar="STATEMENTS", help="statements to run")
    source.add_argument("-f", dest="file", metavar="SCRIPT", help="a SQL script ('-': stdin)")
    sql.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="catalog option"
    )
    sql.add_argument("--echo", action="store_true", help="print each statement before its result")
    sql.add_argument("--max-rows", type=int, default=1000, help="rows printed per result")
    sql.add_argument("--master", default="local[*]", help="Spark master")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "sql":
        return _sql(args)
    from paimon_pyspark.spark import pipeline

    say = pipeline.progress_printer()
    try:
        if args.command == "demo":
            warehouse = Path(args.warehouse).resolve()
            shutil.rmtree(warehouse, ignore_errors=True)
            print(f"paimon-pyspark demo: {args.rows:,} rows per table into {warehouse}", flush=True)
            spark = pipeline.local_session("paimon-pyspark demo", args.master)
            say(f"Spark {spark.version} session on {args.master}")
            pipeline.demo(spark, str(warehouse), args.rows, say)
        else:
            options = dict(_key_value(o) for o in args.option)
            if args.create:
                options["create"] = "true"
            if args.partition_keys:
                options["partition-keys"] = args.partition_keys
            if args.primary_keys:
                options["primary-keys"] = args.primary_keys
            spark = pipeline.local_session("paimon-pyspark load", args.master)
            pipeline.load(spark, args.input, args.format, args.warehouse, args.table, options, say)
        spark.stop()
    except PaimonError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("done", flush=True)
    return 0


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"--option takes KEY=VALUE, got '{text}'")
    return key.strip(), value.strip()


Run = Callable[[str], "DataFrame"]


def _sql(args: argparse.Namespace) -> int:
    """``paimon-pyspark sql``: a script (-e, -f) stops at its first failing statement with exit
    code 2; the prompt reports a failure and goes on."""
    options = dict(_key_value(o) for o in args.option)
    warehouse = args.warehouse if "://" in args.warehouse else str(Path(args.warehouse).resolve())
    statements: list[tuple[int, int, str]] | None = None
    if args.execute is not None or args.file is not None:
        try:
            if args.file is None:
                script = args.execute
            elif args.file == "-":
                script = sys.stdin.read()
            else:
                script = Path(args.file).read_text("utf-8")
            statements = list(_numbered(script))
        except (OSError, SqlSyntaxError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    from pyspark.sql import SparkSession

    from paimon_pyspark.spark import pipeline
    from paimon_pyspark.spark import sql as door

    # in-process callers (a notebook, the tests) keep their session, and it stays open
    active = SparkSession.getActiveSession()
    if active is None:
        _quiet_query_errors()
    spark = active or pipeline.local_session("paimon-pyspark sql", args.master)

    def run(statement: str) -> DataFrame:
        return door(spark, statement, warehouse=warehouse, options=options)

    try:
        if statements is None:
            if sys.stdin.isatty():
                print(
                    f"paimon-pyspark sql on {warehouse}: end statements with ';', leave with quit"
                )
            return _interactive(run, sys.stdin, args.max_rows)
        return _script(run, statements, args.file, args.echo, args.max_rows)
    finally:
        if active is None:
            spark.stop()


def _quiet_query_errors() -> None:
    """pyspark logs every analysis error with its JVM stack as JSON before raising it; the
    CLI prints the error itself."""
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def _failures() -> tuple[type[Exception], ...]:
    """What a statement may fail with: ours, and Spark's own (analysis errors of a query)."""
    from pyspark.errors import PySparkException

    return (PaimonError, PySparkException)


def _script(
    run: Run, statements: list[tuple[int, int, str]], file: str | None, echo: bool, max_rows: int
) -> int:
    for number, line, statement in statements:
        if echo:
            print(f"\n{PROMPT}{statement}", flush=True)
        try:
            _show(run(statement), max_rows)
        except _failures() as e:
            where = "-e" if file is None else f"line {line} of {file}"
            print(
                f"error: statement {number} of {len(statements)} ({where}) failed: {_message(e)}",
                file=sys.stderr,
                flush=True,
            )
            return 2
    return 0


def _numbered(text: str) -> Iterator[tuple[int, int, str]]:
    """The script's statements with their number (from 1) and the line each starts on."""
    at = 0
    for number, statement in enumerate(split_statements(text), start=1):
        at = text.find(statement, at)
        yield number, text.count("\n", 0, at) + 1, statement
        at += len(statement)


def _interactive(run: Run, stdin: TextIO, max_rows: int) -> int:
    """Statements end with ``;`` and may span lines; ``exit``, ``quit`` or end of input leaves.

    A line that leaves a string or comment open continues the statement (the tokenizer fails
    on it); Ctrl-C drops the statement being typed."""
    tty = stdin.isatty()
    if tty:
        import readline  # noqa: F401  (line editing and history for input())
    pending = ""
    while True:
        try:
            line = _read_line(
                stdin, (CONTINUE if _has_tokens(pending) else PROMPT) if tty else None
            )
        except KeyboardInterrupt:
            print()
            pending = ""
            continue
        if line is None:
            if _has_tokens(pending):
                _run_and_show(run, pending.strip(), max_rows)
            if tty:
                print()
            return 0
        if not _has_tokens(pending) and line.strip().rstrip(";").strip().lower() in EXIT_WORDS:
            return 0
        pending += line + "\n"
        try:
            ready, pending = _complete(pending)
        except SqlSyntaxError:
            continue
        for statement in ready:
            _run_and_show(run, statement, max_rows)


def _read_line(stdin: TextIO, prompt: str | None) -> str | None:
    if prompt is not None:
        try:
            return input(prompt)
        except EOFError:
            return None
    line = stdin.readline()
    return line.rstrip("\n") if line else None


def _complete(text: str) -> tuple[list[str], str]:
    """The statements ``text`` ends with a ``;``, and what follows the last ``;``."""
    cuts = [t.start for t in tokenize(text) if t.token_type == TokenType.SEMICOLON]
    if not cuts:
        return [], text
    head, rest = text[: cuts[-1] + 1], text[cuts[-1] + 1 :]
    return split_statements(head), rest if _has_tokens(rest) else ""


def _has_tokens(text: str) -> bool:
    try:
        return bool(tokenize(text))
    except SqlSyntaxError:
        return bool(text.strip())


def _run_and_show(run: Run, statement: str, max_rows: int) -> None:
    """One statement at the prompt: whatever it fails with is reported, and the prompt stays."""
    try:
        _show(run(statement), max_rows)
    except _failures() as e:
        print(f"error: {_message(e)}", file=sys.stderr, flush=True)
    except Exception as e:
        print(f"error: {type(e).__name__}: {_message(e)}", file=sys.stderr, flush=True)


def _message(error: Exception) -> str:
    return str(error).strip() or type(error).__name__


def _show(df: DataFrame, max_rows: int) -> None:
    """A result as a table like ``df.show(truncate=False)``; a result without columns is OK."""
    columns = df.columns
    if not columns:
        print("OK", flush=True)
        return
    rows = df.take(max_rows + 1)
    cells = [[_cell(v) for v in row] for row in rows[:max_rows]]
    widths = [max(3, len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    rule = "+" + "+".join("-" * w for w in widths) + "+"
    lines = [rule, _line(columns, widths), rule, *(_line(r, widths) for r in cells), rule]
    if len(rows) > max_rows:
        lines.append(f"only the first {max_rows} rows shown (--max-rows)")
    else:
        lines.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    print("\n".join(lines), flush=True)


def _line(cells: list[str], widths: list[int]) -> str:
    return "|" + "|".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + "|"


def _cell(value: Any) -> str:
    """A value as Spark's ``show`` writes it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return "[" + " ".join(f"{b:02X}" for b in value) + "]"
    if isinstance(value, datetime.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + f".{value.microsecond:06d}".rstrip("0") if value.microsecond else text
    if isinstance(value, (Decimal, datetime.date)):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_cell(k)} -> {_cell(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):  # a Row (struct)
        return "{" + ", ".join(_cell(v) for v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_cell(v) for v in value) + "]"
    return str(value)
