"""``paimon-pyspark``: daily work on Paimon tables from the command line, on the same doors as
the Python API (``paimon_pyspark.spark.write``, the Spark-job procedures, the system tables,
``paimon_pyspark.spark.sql``).

paimon-pyspark load --input PATH --format parquet|csv|json --warehouse W --table db.t
                    [--create [--partition-keys k1,k2] [--primary-keys k]] [--option k=v]...
paimon-pyspark compact | rescale | expire-snapshots | remove-orphan-files | rewrite-file-index
             | create-tag | delete-tag | rollback --warehouse W --table db.t [--<argument> V]...
paimon-pyspark tables --warehouse W
paimon-pyspark show db.t --warehouse W
paimon-pyspark snapshots db.t --warehouse W
paimon-pyspark sql --warehouse W [-e "STATEMENTS" | -f script.sql]
paimon-pyspark demo [--warehouse DIR] [--rows N]
paimon-pyspark rest-server --warehouse W --port P --token-file F [--host H] [--log-file L]

Every command takes ``--json`` (one JSON document on stdout), ``--verbose`` (Spark's logs and
console progress, and the traceback of a failure) and ``--catalog-option k=v`` (repeatable: the
catalog's options with Java's names, ``metastore=jdbc`` or ``rest``, ``uri``, ``jdbc.user``,
``token``, ..., and the warehouse's filesystem options, such as ``s3.endpoint``; ``sql`` takes
them too, ``demo`` only writes a local directory). The commands that run Spark take ``--master``, or
``--remote sc://host:port`` to run through a Spark Connect server (cli/session.py). A failure
prints one line, ``error: <table>: <cause>``, with the typed error's message, and exits with
code 2.
"""

from __future__ import annotations

import argparse
import sys

from paimon_pyspark.cli import procedures as procedure_commands

EXIT_FAILURE = 2


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
        help="catalog option, Java's names (metastore=jdbc|rest, uri=..., jdbc.user=..., "
        "token=...), or a filesystem option of the warehouse (s3.endpoint, ...)",
    )
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument(
        "--verbose", action="store_true", help="Spark's logs and progress; tracebacks"
    )
    common.add_argument("--master", default="local[*]", help="Spark master")
    _remote_argument(common)
    return common


def _remote_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--remote",
        metavar="sc://HOST:PORT",
        help="run on this Spark Connect server instead of --master (default: $SPARK_REMOTE)",
    )


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
    _remote_argument(demo)
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
        "--catalog-option",
        "--option",
        dest="option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="catalog option (metastore, uri, jdbc.*, token, s3.*, ...)",
    )
    sql.add_argument("--echo", action="store_true", help="print each statement before its result")
    sql.add_argument("--max-rows", type=int, default=1000, help="rows printed per result")
    sql.add_argument("--master", default="local[*]", help="Spark master")
    _remote_argument(sql)
    sql.add_argument("--json", action="store_true", help="all results as one JSON document")
    sql.add_argument("--verbose", action="store_true", help="Spark's logs; tracebacks")

    from paimon_pyspark.server.cli import add_parser as add_rest_server

    add_rest_server(sub, _key_value)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse, then run; the parser needs only the core install, so ``--help`` always works."""
    args = _parser().parse_args(argv)
    if args.command == "rest-server":  # needs the rest extra, not Spark
        from paimon_pyspark.server.cli import run as run_rest_server

        return run_rest_server(args)
    try:
        from paimon_pyspark.cli import commands
    except ImportError as e:
        if (e.name or "").split(".")[0] not in ("rich", "pyspark", "py4j"):
            raise
        print(
            f"error: paimon-pyspark {args.command} needs the command line's extra "
            f"({e.name} is missing): pip install 'paimon-pyspark[cli]'",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    return commands.run(args)
