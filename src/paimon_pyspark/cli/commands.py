"""What the ``paimon-pyspark`` commands do once parsed (``paimon_pyspark.cli`` parses): this
module needs the ``cli`` extra (rich, pyspark)."""

from __future__ import annotations

import argparse
import shutil
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from paimon_pyspark.catalog import Catalog, CatalogFactory
from paimon_pyspark.cli import inspect_tables
from paimon_pyspark.cli import procedures as procedure_commands
from paimon_pyspark.cli.failures import failure
from paimon_pyspark.cli.output import Report, View, dumps, render, stderr_console
from paimon_pyspark.cli.sql import run_sql, warehouse_option

EXIT_FAILURE = 2
EXIT_INTERRUPTED = 130


def run(args: argparse.Namespace) -> int:
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


def _run(args: argparse.Namespace) -> Report:
    fs = dict(args.catalog_option)
    catalog = CatalogFactory.create({**fs, "warehouse": warehouse_option(args.warehouse, fs)})
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


def _on_spark(args: argparse.Namespace, catalog: Catalog, fs: dict[str, str]) -> Report:
    from paimon_pyspark.cli.load import load
    from paimon_pyspark.cli.progress import JobProgress, committed
    from paimon_pyspark.cli.session import spark_session
    from paimon_pyspark.spark import procedures as spark_procedures

    console = stderr_console()
    show = console.is_terminal and not args.json
    app = f"paimon-pyspark {args.command}"
    with spark_session(app, args.master, args.verbose, args.remote) as spark:
        if args.command == "load":
            return load(spark, catalog, args, dict(args.option), fs, console, show)
        command = procedure_commands.BY_NAME[args.command]
        kwargs = procedure_commands.call_arguments(args, command)
        twin: Callable[..., object] = getattr(spark_procedures, command.sql_name)
        table = kwargs["table"]
        single = command.name in ("compact", "rescale", "rewrite-file-index")
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
    from paimon_pyspark.cli.session import remote_url, spark_session
    from paimon_pyspark.errors import PaimonError
    from paimon_pyspark.spark import pipeline

    say = pipeline.progress_printer()
    try:
        warehouse = Path(args.warehouse).resolve()
        shutil.rmtree(warehouse, ignore_errors=True)
        print(f"paimon-pyspark demo: {args.rows:,} rows per table into {warehouse}", flush=True)
        with spark_session("paimon-pyspark demo", args.master, False, args.remote) as spark:
            say(f"Spark {spark.version} session on {remote_url(args.remote) or args.master}")
            pipeline.demo(spark, str(warehouse), args.rows, say)
    except PaimonError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    print("done", flush=True)
    return 0
