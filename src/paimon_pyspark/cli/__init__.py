"""``paimon-pyspark``: land data in Paimon tables through Spark from the command line.

paimon-pyspark demo [--warehouse DIR] [--rows N]
paimon-pyspark load --input PATH --format parquet|csv|json --warehouse DIR --table db.t
                    [--create] [--partition-keys k1,k2] [--primary-keys k] [--option k=v]...
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from paimon_pyspark.errors import PaimonError


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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
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
