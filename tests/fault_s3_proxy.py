"""A fault-injecting S3 endpoint for tests: a loopback proxy in front of moto's server that, on
a seeded schedule, fails a share of the requests of each class the way S3 and networks do.

Fault kinds (each picked per request, replayable from the seed):

- ``500``: InternalError, not forwarded; ``503``: SlowDown, not forwarded (S3's XML bodies);
- ``reset_before``: the request is read, then the connection is reset (never forwarded);
- ``reset_during``: forwarded (applied), then part of the answer is sent and the connection reset;
- ``reset_after``: forwarded, the whole answer sent, then the connection reset;
- ``delay``: forwarded (applied), the answer held past the client's timeout, then dropped;
- ``lost``: forwarded (applied), then the connection reset with no answer: the uncertain case.

Request classes: ``get``, ``head``, ``list``, ``put``, ``cond_put`` (If-None-Match), ``delete``
(DELETE and the batch POST ?delete), ``multipart`` (create, part, complete, abort).

Whether the n-th request of a class fails depends only on (seed, class, n); the kinds take
turns within a class from a seeded start, so every kind fires once a class saw as many faults
as there are kinds. A run replays from its seed as far as each class sees its requests in the
same order. Conditional headers are
forwarded as they are, so moto's atomic create stays atomic.
"""

from __future__ import annotations

import http.client
import random
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CLASSES = ("get", "head", "list", "put", "cond_put", "delete", "multipart")
KINDS = ("500", "503", "reset_before", "reset_during", "reset_after", "delay", "lost")
FEW_DELAYS = (*(k for k in KINDS if k != "delay"),) * 3 + ("delay",)
"""Every kind, ``delay`` a third as often as the others: for long runs, where each costs a
client timeout."""
_ERRORS = {
    "500": (500, "InternalError", "We encountered an internal error. Please try again."),
    "503": (503, "SlowDown", "Please reduce your request rate."),
}
_HOP = {"transfer-encoding", "content-length", "connection", "keep-alive"}


def request_class(method: str, target: str, headers: dict[str, str]) -> str:
    """The class of an S3 request, from its method, query and headers."""
    split = urlsplit(target)
    query = parse_qs(split.query, keep_blank_values=True)
    if method == "HEAD":
        return "head"
    if method == "GET":
        key = split.path.strip("/").partition("/")[2]
        return "list" if ("list-type" in query or "uploads" in query or not key) else "get"
    if method == "PUT":
        if "uploadId" in query:
            return "multipart"
        return "cond_put" if "if-none-match" in headers else "put"
    if method == "DELETE":
        return "multipart" if "uploadId" in query else "delete"
    if method == "POST":
        return "delete" if "delete" in query else "multipart"
    return "get"


class FaultProxy:
    """The running proxy: its endpoint, seed, schedule and counters.

    ``rate`` (a share in [0, 1], or per class) can be changed at any time, e.g. 0 during setup;
    ``counters[(class, kind)]`` counts injected faults, ``requests[class]`` every request."""

    def __init__(
        self,
        upstream: str,
        seed: int,
        rate: float | dict[str, float],
        classes: Iterable[str],
        kinds: Iterable[str],
        delay: float,
    ) -> None:
        self.upstream = urlsplit(upstream)
        self.seed = seed
        self.classes = frozenset(classes)
        self.kinds = tuple(kinds)
        """The turn order of fault kinds (a kind may repeat), settable."""
        self.delay = delay
        self.counters: Counter[tuple[str, str]] = Counter()
        self.requests: Counter[str] = Counter()
        self.by_class_total: Counter[str] = Counter()
        self._rate = rate
        self._forced: dict[str, list[list[int | str]]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        print(f"fault proxy {self.endpoint}: seed={seed} rate={rate}", flush=True)

    @property
    def rate(self) -> float | dict[str, float]:
        return self._rate

    @rate.setter
    def rate(self, rate: float | dict[str, float]) -> None:
        with self._lock:
            self._rate = rate

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No faults inside the block (setup, final checks)."""
        before = self.rate
        self.rate = 0.0
        try:
            yield
        finally:
            self.rate = before

    def force(self, cls: str, kind: str, skip: int = 0) -> None:
        """Inject ``kind`` into the request of ``cls`` after the next ``skip`` ones, whatever
        the rate (for tests of one fault at one step)."""
        with self._lock:
            self._forced.setdefault(cls, []).append([skip, kind])

    def _forced_kind(self, cls: str) -> str | None:
        pending = self._forced.get(cls, [])
        due = next((e for e in pending if e[0] == 0), None)
        if due is not None:
            pending.remove(due)
            self.counters[(cls, str(due[1]))] += 1
        for entry in pending:
            entry[0] = int(entry[0]) - 1
        return None if due is None else str(due[1])

    def decide(self, cls: str) -> str | None:
        """The fault for the next request of ``cls``, or None to pass it through."""
        with self._lock:
            n = self.requests[cls]
            self.requests[cls] += 1
            rate = self._rate if isinstance(self._rate, float | int) else self._rate.get(cls, 0)
            forced = self._forced_kind(cls)
        if forced is not None:
            return forced
        if cls not in self.classes or not rate:
            return None
        if random.Random(f"{self.seed}/{cls}/{n}").random() >= rate:
            return None
        with self._lock:
            k = self.by_class_total[cls]
            self.by_class_total[cls] += 1
            offset = random.Random(f"{self.seed}/{cls}").randrange(len(self.kinds))
            kind = self.kinds[(offset + k) % len(self.kinds)]
            self.counters[(cls, kind)] += 1
        return kind

    def fired(self) -> dict[str, dict[str, int]]:
        """Injected faults by class, then kind."""
        with self._lock:
            out: dict[str, dict[str, int]] = {}
            for (cls, kind), n in sorted(self.counters.items()):
                out.setdefault(cls, {})[kind] = n
            return out

    def by_kind(self) -> Counter[str]:
        with self._lock:
            total: Counter[str] = Counter()
            for (_, kind), n in self.counters.items():
                total[kind] += n
            return total

    def by_class(self) -> Counter[str]:
        with self._lock:
            total: Counter[str] = Counter()
            for (cls, _), n in self.counters.items():
                total[cls] += n
            return total

    def options(self, server_options: Mapping[str, str]) -> dict[str, str]:
        """A warehouse's ``s3.*`` options through this proxy: a request timeout below the
        ``delay``, quick retries (the ``s3.*`` retry options). Keep the delay at a few seconds
        where many processes share moto: a timeout shorter than moto's slowest answers under
        load turns into a storm of retries."""
        return {
            **server_options,
            "s3.endpoint": self.endpoint,
            "s3.connection.timeout": f"{int(self.delay * 1000 * 0.8)}ms",
            "s3.retry.interval": "50ms",
        }

    def describe(self) -> str:
        """For assertion messages: how to replay, and what fired."""
        return (
            f"fault proxy seed={self.seed} rate={self.rate} requests={dict(self.requests)} "
            f"faults={self.fired()}"
        )

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def start(
    upstream: str,
    seed: int | None = None,
    rate: float | dict[str, float] = 0.0,
    classes: Iterable[str] = CLASSES,
    kinds: Iterable[str] = KINDS,
    delay: float = 2.5,
) -> tuple[str, FaultProxy]:
    """Start a proxy in front of ``upstream`` (moto's endpoint); ``delay`` must exceed the
    client's request timeout. A seed of None draws one (printed, and kept in ``proxy.seed``).
    ``kinds`` is the turn order of the kinds within a class; a kind listed twice comes twice
    as often (e.g. fewer ``delay``s, which cost a timeout each)."""
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    proxy = FaultProxy(upstream, seed, rate, classes, kinds, delay)
    return proxy.endpoint, proxy


def _handler(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _reset(self) -> None:
            """Close with SO_LINGER 0: the peer sees a reset, not an orderly end."""
            self.close_connection = True
            with suppress(OSError):
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()

        _conn: http.client.HTTPConnection | None = None

        def _upstream(self, body: bytes | None) -> tuple[int, str, list[tuple[str, str]], bytes]:
            """Forward the request on this client connection's own keep-alive connection to
            moto (a new connection per request costs moto a thread each); an idle connection
            moto closed is replaced once, before any answer was read."""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            if body is not None:
                headers["Content-Length"] = str(len(body))
            for fresh in (self._conn is None, True):
                if fresh or self._conn is None:
                    self._close_upstream()
                    target = proxy.upstream
                    self._conn = http.client.HTTPConnection(
                        target.hostname or "127.0.0.1", target.port, timeout=60
                    )
                conn = self._conn
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                    self._close_upstream()
                    if fresh:
                        raise
                    continue
                data = resp.read()
                if resp.will_close:
                    self._close_upstream()
                return resp.status, resp.reason, resp.getheaders(), data
            raise AssertionError("unreachable")

        def _close_upstream(self) -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        def finish(self) -> None:
            self._close_upstream()
            super().finish()

        def _raw(
            self, status: int, reason: str, headers: list[tuple[str, str]], data: bytes
        ) -> tuple[bytes, bytes]:
            """(head, body) bytes of the answer to send."""
            length = str(len(data))
            if self.command == "HEAD":
                length = next((v for k, v in headers if k.lower() == "content-length"), "0")
            lines = [f"HTTP/1.1 {status} {reason}"]
            lines += [f"{k}: {v}" for k, v in headers if k.lower() not in _HOP]
            lines.append(f"Content-Length: {length}")
            head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
            return head, b"" if self.command == "HEAD" else data

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            kind = proxy.decide(request_class(self.command, self.path, headers))
            if kind in _ERRORS:
                status, code, message = _ERRORS[kind]
                xml = (
                    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>'
                    f"{code}</Code><Message>{message}</Message>"
                    f"<RequestId>fault-{proxy.seed}</RequestId></Error>"
                ).encode()
                reason = "Internal Server Error" if status == 500 else "Slow Down"
                head, data = self._raw(status, reason, [("Content-Type", "application/xml")], xml)
                self.wfile.write(head + data)
                return
            if kind == "reset_before":
                self._reset()
                return
            head, data = self._raw(*self._upstream(body))
            if kind == "lost":
                self._reset()
            elif kind == "reset_during":
                sent = head + data[: len(data) // 2] if data else head[: len(head) // 2]
                self._send_quietly(sent)
                self._reset()
            elif kind == "reset_after":
                self._send_quietly(head + data)
                self._reset()
            elif kind == "delay":
                time.sleep(proxy.delay)
                self._reset()
            else:
                self.wfile.write(head + data)

        def _send_quietly(self, data: bytes) -> None:
            with suppress(OSError):
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler
