"""``paimon-pyspark load``: a Parquet, CSV or JSON input into a table, through
``paimon_pyspark.spark.write`` (the door that writes every bucket mode, shuffling where the
mode needs it: dynamic-bucket and cross-partition primary-key tables included).

With ``--create`` a missing table is created from the input's schema; if the load then fails,
the table (and its database) this command created are dropped again, so a failed load leaves
nothing behind. A table or database that existed before is never dropped.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from rich.console import Console

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.catalog.identifiers import parse_identifier
from paimon_pyspark.cli.output import Report, View
from paimon_pyspark.cli.progress import JobProgress, committed
from paimon_pyspark.errors import DatabaseNotExistError, TableNotExistError
from paimon_pyspark.spark.write import write


def _exists(catalog: Catalog, table: str) -> tuple[bool, bool]:
    """(database exists, table exists)."""
    database, _ = parse_identifier(table)
    try:
        catalog.get_database(database)
    except DatabaseNotExistError:
        return False, False
    try:
        catalog.get_table(table)
    except TableNotExistError:
        return True, False
    return True, True


def _latest(catalog: Catalog, table: str) -> int | None:
    return catalog.get_table(table).snapshot_manager.latest_id()


def _drop_created(catalog: Catalog, table: str, had_db: bool) -> None:
    """Drop the table this command created, if nothing was committed to it, and then its
    database if this command created that too and it is empty."""
    database, _ = parse_identifier(table)
    try:
        if _latest(catalog, table) is None:
            catalog.drop_table(table, ignore_if_not_exists=True)
        if not had_db and not catalog.list_tables(database):
            catalog.drop_database(database, ignore_if_not_exists=True)
    except (TableNotExistError, DatabaseNotExistError):
        pass


def load(
    spark: SparkSession,
    catalog: Catalog,
    args: argparse.Namespace,
    options: dict[str, str],
    fs: dict[str, str],
    console: Console,
    show_progress: bool,
) -> Report:
    """``options``: the table options of the write (``--option``), ``fs``: the catalog's
    options (``--catalog-option``); the write reopens ``catalog`` from its own options."""
    table = args.table
    start = time.perf_counter()
    had_db, had_table = _exists(catalog, table)
    before = _latest(catalog, table) if had_table else None
    warehouse = catalog.options.get("warehouse", catalog.uri)
    opened = {k: v for k, v in catalog.options.items() if k != "warehouse"}
    write_options: dict[str, Any] = {**fs, **opened, **options}
    if args.create:
        write_options["create"] = "true"
        if args.partition_keys:
            write_options["partition-keys"] = args.partition_keys
        if args.primary_keys:
            write_options["primary-keys"] = args.primary_keys
    try:
        with JobProgress(spark, f"load {table}", show_progress, console) as job:
            reader = spark.read.format(args.format)
            if args.format == "csv":
                reader = reader.option("header", "true").option("inferSchema", "true")
            for key, value in args.input_option:
                reader = reader.option(key, value)
            job.say(f"reading {args.input}")
            # absolute here: Spark resolves a relative path where its driver runs, which is
            # the Connect server with --remote
            df = reader.load(args.input if "://" in args.input else str(Path(args.input).resolve()))
            job.say("writing")
            write(df, warehouse, table, args.mode, write_options)
            result = committed(catalog.get_table(table), before)
            job.done(result)
    except BaseException:
        if args.create and not had_table:
            _drop_created(catalog, table, had_db)
        raise
    seconds = round(time.perf_counter() - start, 3)
    document = {
        "table": table,
        "input": args.input,
        "format": args.format,
        "mode": args.mode,
        "created": not had_table,
        "snapshot_ids": list(result.snapshot_ids),
        "rows": result.rows,
        "files": result.files,
        "elapsed_seconds": seconds,
    }
    view = View(
        f"loaded {args.input} into {table}",
        ("snapshots", "rows", "files", "created", "seconds"),
        [
            (
                ", ".join(map(str, result.snapshot_ids)) or "-",
                result.rows,
                result.files,
                not had_table,
                seconds,
            )
        ],
    )
    return Report(document, [view])
