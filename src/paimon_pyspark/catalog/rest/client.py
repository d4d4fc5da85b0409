"""The HTTP side of the REST catalog client: Java's HttpClient, over the standard library.

One kept-alive ``http.client`` connection per thread (a commit is one round trip on an open
socket, not a TCP handshake), Java's 3-minute timeouts, and Java's retries
(ExponentialHttpRequestRetryStrategy): a 429 or 503 is retried up to 5 times for any method
(the server said it did not run the request), after its Retry-After or 1, 2, 4, ... s; a broken
connection is retried only for GET and DELETE, which may run twice. A POST that loses its
connection raises CatalogConnectionError (an OSError): a commit then looks for its snapshot.
Before reusing a connection the client checks that the server has not closed it (uvicorn closes
idle ones after 5 s), so a POST is not lost to a stale socket.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import select
import threading
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from paimon_pyspark.catalog.rest.api import ErrorResponse, dumps, error_from_response
from paimon_pyspark.errors import CatalogConnectionError, InvalidArgumentError, RestCatalogError

LOG = logging.getLogger(__name__)

TIMEOUT_SECONDS = 180.0
"""Java's connection-request and response timeouts (HttpClientUtils: 3 minutes)."""
MAX_RETRIES = 5
RETRY_STATUSES = frozenset({429, 503})
IDEMPOTENT = frozenset({"GET", "HEAD", "DELETE", "PUT", "OPTIONS"})


class HttpClient:
    """Requests to one REST server (``uri``), with fixed ``headers`` on every request."""

    def __init__(self, uri: str, headers: Mapping[str, str]) -> None:
        if not uri or not uri.strip():
            raise InvalidArgumentError("REST catalog option 'uri' is empty; it must be set.")
        uri = uri.strip().rstrip("/")
        if not uri.startswith(("http://", "https://")):
            uri = "http://" + uri  # as Java's HttpClient.normalizeUri
        parsed = urllib.parse.urlsplit(uri)
        if not parsed.hostname:
            raise InvalidArgumentError(f"REST catalog option 'uri' = '{uri}' names no host.")
        self.uri = uri
        self._https = parsed.scheme == "https"
        self._host = parsed.hostname
        self._port = parsed.port
        self._base_path = parsed.path
        self.headers = dict(headers)
        self._local = threading.local()
        self._all: list[http.client.HTTPConnection] = []
        self._guard = threading.Lock()

    # --- connections -----------------------------------------------------------------------

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection and whether its socket was used before; a socket the server
        closed (readable at EOF) is closed first, and the next request opens a new one."""
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=TIMEOUT_SECONDS)
            self._local.conn = conn
            with self._guard:
                self._all.append(conn)
            return conn, False
        if conn.sock is None:
            return conn, False
        readable, _, _ = select.select([conn.sock], [], [], 0)
        if readable:
            conn.close()  # closed by the server (or unread bytes): start clean
            return conn, False
        return conn, True

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Close every thread's connection; a later request opens its thread's again."""
        with self._guard:
            conns = list(self._all)
        for conn in conns:
            conn.close()

    # --- requests --------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        """Send one request; the parsed JSON body of a 2xx answer (None when empty), else the
        typed error of its ErrorResponse, naming ``METHOD path`` and the server's message."""
        target = self._base_path + path
        if query:
            target += "?" + urllib.parse.urlencode(dict(query))
        data = dumps(body).encode("utf-8") if body is not None else None
        headers = dict(self.headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        what = f"{method} {path}"
        attempt = 0
        while True:
            attempt += 1
            conn, reused = self._connection()
            try:
                conn.request(method, target, body=data, headers=headers)
                response = conn.getresponse()
                status = response.status
                raw = response.read()
                retry_after = response.getheader("Retry-After")
                if response.will_close:
                    conn.close()
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                if method in IDEMPOTENT and attempt <= MAX_RETRIES and not _refused(e):
                    # a reused socket that broke is retried at once, as HttpClient's stale check
                    delay = 0.0 if reused and attempt == 1 else _backoff(attempt)
                    LOG.info("REST %s: %s; retrying in %.1f s", what, e, delay)
                    time.sleep(delay)
                    continue
                raise CatalogConnectionError(
                    f"REST catalog {self.uri}: {what} failed ({type(e).__name__}: {e}); for a "
                    "commit the outcome is unknown."
                ) from e
            if status in RETRY_STATUSES and attempt <= MAX_RETRIES:
                delay = _retry_after(retry_after) or _backoff(attempt)
                LOG.info("REST %s: status %d; retrying in %.1f s", what, status, delay)
                time.sleep(delay)
                continue
            return self._answer(status, raw, what)

    def _answer(self, status: int, raw: bytes, what: str) -> Any:
        text = raw.decode("utf-8", errors="replace")
        if 200 <= status < 300:
            if not text.strip():
                return None
            try:
                return json.loads(text)
            except ValueError as e:
                raise RestCatalogError(
                    f"REST catalog {self.uri}: {what} answered {status} with a body that is "
                    f"not JSON: {text[:200]!r}",
                    status,
                ) from e
        try:
            obj = json.loads(text)
            error = (
                ErrorResponse.from_json(obj, status)
                if isinstance(obj, dict)
                else ErrorResponse(text, status)
            )
        except ValueError:
            error = ErrorResponse(text.strip() or f"HTTP {status}", status)
        raise error_from_response(error, f"{what} on {self.uri}", status)


def _refused(e: BaseException) -> bool:
    """Java does not retry a refused connection (ConnectException): no server is there."""
    return isinstance(e, ConnectionRefusedError)


def _backoff(attempt: int) -> float:
    delay = float(min(2 ** (attempt - 1), 64))
    return delay + random.uniform(0, delay * 0.1)


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds > 0 else None
