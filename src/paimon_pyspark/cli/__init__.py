"""``paimon-pyspark``: daily work on Paimon tables from the command line, on the same doors as
the Python API (``paimon_pyspark.spark.write``, the Spark-job procedures, the system tables,
``paimon_pyspark.spark.sql``).

paimon-pyspark load --input PATH --format parquet|csv|json --warehouse W --table db.t
                    [--create [--partition-keys k1,k2] [--primary-keys k]] [--option k=v]...
paimon-pyspark compact | rescale | expire-snapshots | remove-orphan-files
             | create-tag | delete-tag | rollback --warehouse W --table db.t [--<argument> V]...
paimon-pyspark tables --warehouse W
paimon-pyspark show db.t --warehouse W
paimon-pyspark snapshots db.t --warehouse W
paimon-pyspark sql --warehouse W [-e "STATEMENTS" | -f script.sql]
paimon-pyspark demo [--warehouse DIR] [--rows N]

Every command takes ``--json`` (one JSON document on stdout), ``--verbose`` (Spark's logs and
console progress, and the traceback of a failure) and ``--catalog-option k=v`` (the warehouse's
filesystem options, such as ``s3.endpoint``). A failure prints one line, ``error: <table>:
<cause>``, with the typed error's message, and exits with code 2.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

try:
    import rich  # noqa: F401
except ImportError as missing:  # the core install has the entry point, not the extra
    raise SystemExit(
        "paimon-pyspark: the command line needs its extra: pip install 'paimon-pyspark[cli]'"
    ) from missing

from paimon_pyspark.catalog.filesystem_catalog import CatalogFactory, FileSystemCatalog
from paimon_pyspark.cli import inspect_tables
from paimon_pyspark.cli import procedures as procedure_commands
from paimon_pyspark.cli.failures import failure
from paimon_pyspark.cli.output import Report, View, dumps, render, stderr_console
from paimon_pyspark.cli.sql import run_sql

EXIT_FAILURE = 2
EXIT_INTERRUPTED = 130


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got '{text}'")
    return key.strip(), value.strip()


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--warehouse", required=True, help="warehouse path or URI")
    common.add_argument(
        "--catalog-option",
        action="append",
        default=[],
        type=_key_value,
        metavar="KEY=VALUE",
        help="filesystem option of the warehouse (s3.endpoint, ...)",
    )
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument(
        "--verbose", action="store_true", help="Spark's logs and progress; tracebacks"
    )
    common.add_argument("--master", default="local[*]", help="Spark master")
    return common


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paimon-pyspark",
        description="Write, maintain and inspect Apache Paimon tables with PySpark, no JVM "
        "connector needed.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    common = _common()

    demo = sub.add_parser("demo", help="generate orders, write the seed tables, read them back")
    demo.add_argument("--warehouse", default="demo-warehouse", help="warehouse directory (reset)")
    demo.add_argument("--rows", type=int, default=1_000_000, help="rows per table")
    demo.add_argument("--master", default="local[*]", help="Spark master")
    demo.set_defaults(json=False, verbose=False)

    load = sub.add_parser(
        "load",
        parents=[common],
        help="write a Parquet/CSV/JSON input into a table (every table kind)",
    )
    load.add_argument("--input", required=True, help="input path (file or directory)")
    load.add_argument("--format", default="parquet", choices=["parquet", "csv", "json"])
    load.add_argument("--table", required=True, help="target table, 'db.table'")
    load.add_argument("--mode", default="append", choices=["append", "overwrite"])
    load.add_argument("--create", action="store_true", help="create the table if missing")
    load.add_argument("--partition-keys", default="", help="comma-separated, with --create")
    load.add_argument("--primary-keys", default="", help="comma-separated, with --create")
    load.add_argument(
        "--option",
        action="append",
        default=[],
        type=_key_value,
        metavar="KEY=VALUE",
        help="table option (of the new table with --create, else of this write)",
    )
    load.add_argument(
        "--input-option",
        action="append",
        default=[],
        type=_key_value,
        metavar="KEY=VALUE",
        help="option of Spark's reader of the input (csv: sep, header, ...)",
    )

    for command in procedure_commands.COMMANDS:
        p = sub.add_parser(
            command.name,
            parents=[common],
            help=f"{command.summary}: CALL sys.{command.sql_name}",
            description=f"CALL sys.{command.sql_name}, its arguments as --name VALUE flags.",
        )
        procedure_commands.add_arguments(p, command)

    sub.add_parser("tables", parents=[common], help="list every table 'db.t' of the warehouse")
    show = sub.add_parser(
        "show",
        parents=[common],
        help="schema, options, latest snapshot, files and size per partition",
    )
    show.add_argument("table", help="'db.table'")
    snapshots = sub.add_parser("snapshots", parents=[common], help="the snapshots of a table")
    snapshots.add_argument("table", help="'db.table'")

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
    sql.add_argument("--json", action="store_true", help="all results as one JSON document")
    sql.add_argument("--verbose", action="store_true", help="Spark's logs; tracebacks")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "sql":
        return run_sql(args)
    if args.command == "demo":
        return _demo(args)
    try:
        report = _run(args)
    except (Exception, KeyboardInterrupt) as e:
        cause = failure(e, _subject(args))
        if args.verbose:
            traceback.print_exception(e)
        print(cause.line(), file=sys.stderr, flush=True)
        if args.json:
            print(dumps(cause.to_json()), flush=True)
        return EXIT_INTERRUPTED if isinstance(e, KeyboardInterrupt) else EXIT_FAILURE
    render(report, args.json)
    return 0


def _subject(args: argparse.Namespace) -> str | None:
    """What a failure names: the table, or the warehouse when the command has no table."""
    table = getattr(args, "table", None) or getattr(args, "call_table", None)
    return str(table) if table else getattr(args, "warehouse", None)


def _warehouse(text: str) -> str:
    return text if "://" in text else str(Path(text).resolve())


def _run(args: argparse.Namespace) -> Report:
    fs = dict(args.catalog_option)
    catalog = CatalogFactory.create({**fs, "warehouse": _warehouse(args.warehouse)})
    if args.command == "tables":
        return inspect_tables.tables(catalog)
    if args.command == "show":
        return inspect_tables.show(catalog, args.table)
    if args.command == "snapshots":
        return inspect_tables.snapshots(catalog, args.table)
    command = procedure_commands.BY_NAME.get(args.command)
    if command is not None and not command.on_spark:
        kwargs = procedure_commands.call_arguments(args, command)
        result = command.procedure(catalog, **kwargs)
        return _procedure_report(
            command, kwargs, procedure_commands.result_document(command, result)
        )
    return _on_spark(args, catalog, fs)


def _on_spark(args: argparse.Namespace, catalog: FileSystemCatalog, fs: dict[str, str]) -> Report:
    from paimon_pyspark.cli.load import load
    from paimon_pyspark.cli.progress import JobProgress, committed
    from paimon_pyspark.cli.session import spark_session
    from paimon_pyspark.spark import procedures as spark_procedures

    console = stderr_console()
    show = console.is_terminal and not args.json
    with spark_session(f"paimon-pyspark {args.command}", args.master, args.verbose) as spark:
        if args.command == "load":
            return load(spark, catalog, args, dict(args.option), fs, console, show)
        command = procedure_commands.BY_NAME[args.command]
        kwargs = procedure_commands.call_arguments(args, command)
        twin: Callable[..., object] = getattr(spark_procedures, command.sql_name)
        table = kwargs["table"]
        single = command.name in ("compact", "rescale")
        before = catalog.get_table(table).snapshot_manager.latest_id() if single else None
        with JobProgress(spark, f"{command.name} {table}", show, console) as job:
            result = twin(spark, catalog, progress=job.say, **kwargs)
            document = procedure_commands.result_document(command, result)
            if single:
                done = committed(catalog.get_table(table), before)
                job.done(done)
                document.update(rows=done.rows, files=done.files, removed_files=done.removed_files)
    return _procedure_report(command, kwargs, document)


def _procedure_report(
    command: procedure_commands.ProcedureCommand,
    kwargs: dict[str, object],
    result: dict[str, object],
) -> Report:
    document = {
        "procedure": command.sql_name,
        "table": kwargs.get("table"),
        "arguments": kwargs,
        "result": result,
    }
    shown = {k: v for k, v in result.items() if k != "deleted_files"}
    view = View(
        f"CALL sys.{command.sql_name}({', '.join(f'{k} => {v!r}' for k, v in kwargs.items())})",
        tuple(shown),
        [tuple(shown.values())],
    )
    return Report(document, [view])


def _demo(args: argparse.Namespace) -> int:
    from paimon_pyspark.errors import PaimonError
    from paimon_pyspark.spark import pipeline

    say = pipeline.progress_printer()
    try:
        warehouse = Path(args.warehouse).resolve()
        shutil.rmtree(warehouse, ignore_errors=True)
        print(f"paimon-pyspark demo: {args.rows:,} rows per table into {warehouse}", flush=True)
        spark = pipeline.local_session("paimon-pyspark demo", args.master)
        say(f"Spark {spark.version} session on {args.master}")
        pipeline.demo(spark, str(warehouse), args.rows, say)
        spark.stop()
    except PaimonError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    print("done", flush=True)
    return 0
