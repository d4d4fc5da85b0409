"""``paimon-pyspark rest-server``: its arguments and its run, apart from the Spark commands so
that neither parsing nor serving imports Spark."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from paimon_pyspark.server.service import DEFAULT_PREFIX

EXIT_FAILURE = 2


def add_parser(sub: Any, key_value: Callable[[str], tuple[str, str]]) -> None:
    p = sub.add_parser(
        "rest-server",
        help="serve a warehouse as a Paimon REST catalog (Java's RESTCatalog, pypaimon, ours)",
        description="Serve Paimon's REST catalog API over a filesystem or S3 warehouse; commits "
        "are made by the server. Needs the rest extra: pip install 'paimon-pyspark[rest]'.",
    )
    p.add_argument("--warehouse", required=True, help="warehouse path or URI (s3://...)")
    p.add_argument("--port", type=int, required=True, help="TCP port (0: any free port)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument(
        "--token-file",
        required=True,
        help="bearer tokens, one per line ('#' starts a comment line)",
    )
    p.add_argument("--log-file", help="the server's log (default: stderr)")
    p.add_argument("--prefix", default=DEFAULT_PREFIX, help="the API's path prefix")
    p.add_argument(
        "--catalog-option",
        action="append",
        default=[],
        type=key_value,
        metavar="KEY=VALUE",
        help="filesystem option of the warehouse for the server (s3.endpoint, ...)",
    )
    p.add_argument(
        "--client-option",
        action="append",
        default=[],
        type=key_value,
        metavar="KEY=VALUE",
        help="option every client gets from GET /v1/config (e.g. s3.endpoint for the data)",
    )


def run(args: argparse.Namespace) -> int:
    from paimon_pyspark.errors import PaimonError
    from paimon_pyspark.server.app import serve

    try:
        serve(
            args.warehouse,
            args.port,
            args.token_file,
            host=args.host,
            catalog_options=dict(args.catalog_option),
            client_options=dict(args.client_option),
            prefix=args.prefix,
            log_file=args.log_file,
        )
    except PaimonError as e:
        print(f"error: rest-server: {e}", file=sys.stderr, flush=True)
        return EXIT_FAILURE
    except OSError as e:  # the port is taken, the log file cannot be opened, ...
        print(f"error: rest-server: {e}", file=sys.stderr, flush=True)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 0
    return 0
