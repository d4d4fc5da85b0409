"""``paimon-pyspark sql``: statements from ``-e``, ``-f`` or a prompt, each run through
``paimon_pyspark.spark.sql``; a script is split with ``sql.split_statements``. Results print
as tables like ``df.show(truncate=False)``, or, with ``--json``, as one document of every
statement's columns and rows.
"""

from __future__ import annotations

import argparse
import datetime
import logging
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sqlglot import TokenType

from paimon_pyspark.cli.failures import failure
from paimon_pyspark.cli.output import dumps
from paimon_pyspark.errors import PaimonError, SqlSyntaxError
from paimon_pyspark.sql import split_statements
from paimon_pyspark.sql.dialect import tokenize

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PROMPT = "paimon> "
CONTINUE = "     -> "
EXIT_WORDS = ("exit", "quit")


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"--option takes KEY=VALUE, got '{text}'")
    return key.strip(), value.strip()


Run = Callable[[str], "DataFrame"]


def warehouse_option(text: str, options: Mapping[str, str]) -> str:
    """The warehouse as the catalog takes it: a local path made absolute (Spark's driver may
    run elsewhere), a URI as it is, a REST catalog's warehouse (a name the server knows) as
    it is."""
    rest = options.get("metastore", "").strip().lower() == "rest"
    return text if rest or "://" in text else str(Path(text).resolve())


def run_sql(args: argparse.Namespace) -> int:
    """``paimon-pyspark sql``: a script (-e, -f) stops at its first failing statement with exit
    code 2; the prompt reports a failure and goes on."""
    options = dict(_key_value(o) for o in args.option)
    warehouse = warehouse_option(args.warehouse, options)
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
            cause = failure(e, None)
            print(cause.line(), file=sys.stderr)
            if args.json:
                print(dumps(cause.to_json()), flush=True)
            return 2
    from pyspark.sql import SparkSession

    from paimon_pyspark.cli.session import spark_session
    from paimon_pyspark.spark import sql as door

    if SparkSession.getActiveSession() is None and not args.verbose:
        _quiet_query_errors()
    with spark_session("paimon-pyspark sql", args.master, args.verbose, args.remote) as spark:

        def run(statement: str) -> DataFrame:
            return door(spark, statement, warehouse=warehouse, options=options)

        if statements is None:
            if sys.stdin.isatty():
                print(
                    f"paimon-pyspark sql on {warehouse}: end statements with ';', leave with quit"
                )
            return _interactive(run, sys.stdin, args.max_rows)
        return _script(run, statements, args)


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


def _script(run: Run, statements: list[tuple[int, int, str]], args: argparse.Namespace) -> int:
    """Each statement's result printed as it comes, or, with ``--json``, all of them as one
    document ``{"statements": [{"statement", "columns", "rows"}...]}`` (with ``"error"`` if one
    failed)."""
    results: list[dict[str, Any]] = []
    for number, line, statement in statements:
        if args.echo and not args.json:
            print(f"\n{PROMPT}{statement}", flush=True)
        try:
            df = run(statement)
            if args.json:
                results.append(_result(statement, df, args.max_rows))
            else:
                _show(df, args.max_rows)
        except _failures() as e:
            where = "-e" if args.file is None else f"line {line} of {args.file}"
            cause = failure(e, None)
            message = f"statement {number} of {len(statements)} ({where}) failed: {cause.message}"
            print(f"error: {message}", file=sys.stderr, flush=True)
            if args.verbose:
                traceback.print_exception(e)
            if args.json:
                error = {"type": cause.type, "message": message, "statement": number}
                print(dumps({"statements": results, "error": error}), flush=True)
            return 2
    if args.json:
        print(dumps({"statements": results}), flush=True)
    return 0


def _result(statement: str, df: DataFrame, max_rows: int) -> dict[str, Any]:
    columns = df.columns
    rows = df.take(max_rows + 1) if columns else []
    return {
        "statement": statement,
        "columns": columns,
        "rows": [list(r) for r in rows[:max_rows]],
        "truncated": len(rows) > max_rows,
    }


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
    return failure(error, None).message


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
