"""The server's web shell: Starlette (FastAPI's core) on uvicorn, the ``rest`` extra, imported
only when served. One route does all the work, so FastAPI's own layer (its request validation
and OpenAPI pages, and a second more of start-up for pydantic) would add nothing.

The route takes every method and path, checks the bearer token first (so an unknown path is no
way around it), then hands the request to :class:`RestCatalogService`. The log (Python logging:
stderr, or ``--log-file``) gets one line per refusal, naming the method, the path, the client's
address and the reason (never the token), and one line per commit.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.errors import UnsupportedOperationError
from paimon_pyspark.server.auth import TokenFile
from paimon_pyspark.server.service import DEFAULT_PREFIX, RestCatalogService, error_reply

if TYPE_CHECKING:
    from starlette.applications import Starlette

LOG_NAME = "paimon_pyspark.server"
log = logging.getLogger(LOG_NAME)

METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"]


class MissingRestExtraError(UnsupportedOperationError, ImportError):
    """The server needs FastAPI and uvicorn: ``pip install 'paimon-pyspark[rest]'``."""


def _require_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise MissingRestExtraError(
            f"paimon-pyspark rest-server needs the 'rest' extra ({e.name} is missing): "
            "pip install 'paimon-pyspark[rest]'"
        ) from e


def create_app(service: RestCatalogService, tokens: TokenFile) -> Starlette:
    """The ASGI app serving ``service`` to holders of ``tokens``."""
    _require_extra()
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def dispatch(request: Request) -> Response:
        raw_path = request.scope.get("raw_path", b"").decode("latin-1").split("?", 1)[0]
        raw_path = raw_path or request.url.path
        query_string = request.scope.get("query_string", b"").decode("latin-1")
        target = f"{raw_path}?{query_string}" if query_string else raw_path
        client = request.client
        address = f"{client.host}:{client.port}" if client else "unknown"
        reason = tokens.check(request.headers.get("authorization"))
        if reason is not None:
            # Java's and pypaimon's clients put "Not authorized: " before the message
            reply = error_reply(401, f"{reason[0].upper()}{reason[1:]}.")
            log.warning("refused %s %s from %s: 401 %s", request.method, target, address, reason)
        else:
            body = await request.body()
            query = dict(request.query_params)
            try:
                reply = await run_in_threadpool(
                    service.handle, request.method, raw_path, query, body
                )
            except Exception as e:  # a bug or a store failure: answer, and keep serving
                log.exception("failed %s %s from %s", request.method, target, address)
                reply = error_reply(500, f"{type(e).__name__}: {e}")
            if reply.refused is not None:
                log.warning(
                    "refused %s %s from %s: %d %s",
                    request.method,
                    target,
                    address,
                    reply.status,
                    reply.refused,
                )
        if reply.body is None:
            return Response(status_code=reply.status)
        return Response(
            json.dumps(reply.body), status_code=reply.status, media_type="application/json"
        )

    return Starlette(routes=[Route("/{path:path}", dispatch, methods=METHODS)])


def setup_logging(log_file: str | None) -> None:
    """The server's log lines, to ``log_file`` or stderr."""
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler()
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def serve(
    warehouse: str,
    port: int,
    token_file: str,
    host: str = "127.0.0.1",
    catalog_options: Mapping[str, str] | None = None,
    client_options: Mapping[str, str] | None = None,
    prefix: str = DEFAULT_PREFIX,
    log_file: str | None = None,
) -> None:
    """Serve ``warehouse`` on ``host:port`` until interrupted. ``port`` 0 takes a free port;
    the first log line names the one bound."""
    _require_extra()
    import uvicorn

    setup_logging(log_file)
    tokens = TokenFile(token_file)
    catalog = FileSystemCatalog(warehouse, catalog_options)
    if not catalog.file_io.exists(catalog.warehouse):
        catalog.file_io.mkdirs(catalog.warehouse)
    service = RestCatalogService(
        catalog, prefix, client_options, on_commit=lambda line: log.info("%s", line)
    )
    app = create_app(service, tokens)
    # IPPROTO_TCP, not the default 0: asyncio turns Nagle off only on a socket that says it is
    # TCP, and with Nagle on every answer's body after the first on a kept-alive connection
    # waited for the client's delayed ACK (about 40 ms a request)
    sock = socket.socket(
        socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    log.info(
        "serving warehouse %s on http://%s:%d (prefix '%s', tokens from %s)",
        catalog.uri,
        shown,
        bound,
        prefix,
        token_file,
    )
    for handler in log.handlers:
        handler.flush()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        log.info("stopped")
    sys.stdout.flush()
