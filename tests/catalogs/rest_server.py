"""Our REST catalog server as a real process on 127.0.0.1, for the tests and the benches.

:func:`running_rest_server` starts ``python -m paimon_pyspark.cli rest-server`` on a free port
(``--port 0``: the server binds it and names it in its log's first line, so no other process can
take it in between), with a fresh token file and, unless given, a fresh warehouse; it waits until
``GET /v1/config`` answers, yields a :class:`RestServer` and stops the process. The fixture
``rest_server`` (one per test module) wraps it; tests/conftest.py imports it, so every test
takes it as a parameter.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

START_TIMEOUT_S = 60.0
_BOUND = re.compile(r"serving warehouse .* on http://127\.0\.0\.1:(\d+) ")


class RestServer(NamedTuple):
    url: str
    """``http://127.0.0.1:<port>``"""
    token: str
    """A bearer token the server accepts."""
    warehouse: str
    """The served warehouse (a local directory unless the caller gave a URI)."""
    log_path: str
    """The server's log: one line per refusal and per commit."""

    def catalog_options(self, **extra: str) -> dict[str, str]:
        """Options of a REST catalog client on this server, in Java's names (RESTCatalog,
        pypaimon, ``CatalogFactory.create``)."""
        return {
            "metastore": "rest",
            "uri": self.url,
            "warehouse": self.warehouse,
            "token.provider": "bear",
            "token": self.token,
            **extra,
        }

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def log(self) -> str:
        """The log's text so far."""
        return Path(self.log_path).read_text(encoding="utf-8")

    def request(
        self,
        method: str,
        path: str,
        body: str | bytes | None = None,
        token: str | None = "",
    ) -> tuple[int, bytes]:
        """One plain HTTP request (``token`` "" for the server's, None for no header)."""
        headers = {"Content-Type": "application/json"}
        token = self.token if token == "" else token
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()


@contextlib.contextmanager
def running_rest_server(
    base_dir: str | os.PathLike[str] | None = None,
    warehouse: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Iterator[RestServer]:
    """A server on a free port of 127.0.0.1, stopped on exit. ``base_dir`` holds the token file,
    the log and (unless ``warehouse`` is given) the warehouse; a temporary directory by default.
    ``args``: more command-line arguments (``--catalog-option k=v``, ``--client-option k=v``)."""
    with contextlib.ExitStack() as stack:
        if base_dir is None:
            base_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="rest-server-"))
        base = Path(base_dir)
        base.mkdir(parents=True, exist_ok=True)
        token = secrets.token_urlsafe(24)
        token_file = base / "tokens"
        token_file.write_text(f"# tokens of the test server\n{token}\n", encoding="utf-8")
        log_path = base / "rest-server.log"
        log_path.write_text("", encoding="utf-8")
        wh = warehouse if warehouse is not None else str(base / "warehouse")
        command = [
            sys.executable,
            "-m",
            "paimon_pyspark.cli",
            "rest-server",
            "--warehouse",
            wh,
            "--port",
            "0",
            "--host",
            "127.0.0.1",
            "--token-file",
            str(token_file),
            "--log-file",
            str(log_path),
            *args,
        ]
        stderr_path = base / "rest-server.stderr"
        with open(stderr_path, "wb") as stderr:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env={**os.environ, **(env or {})},
            )
        try:
            server = RestServer(
                _wait_for_port(process, log_path, stderr_path), token, wh, str(log_path)
            )
            _wait_until_answering(server, process, stderr_path)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _failure(process: subprocess.Popen[bytes], stderr_path: Path, what: str) -> RuntimeError:
    code = process.poll()
    err = stderr_path.read_text(encoding="utf-8", errors="replace")[-4000:]
    return RuntimeError(f"REST server {what} (exit code {code}); its stderr:\n{err}")


def _wait_for_port(process: subprocess.Popen[bytes], log_path: Path, stderr_path: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        match = _BOUND.search(log_path.read_text(encoding="utf-8"))
        if match:
            return f"http://127.0.0.1:{match.group(1)}"
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise _failure(process, stderr_path, "did not start")
        time.sleep(0.05)


def _wait_until_answering(
    server: RestServer, process: subprocess.Popen[bytes], stderr_path: Path
) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            status, _ = server.request("GET", "/v1/config")
            if status == 200:
                return
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise _failure(process, stderr_path, "does not answer GET /v1/config")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def rest_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestServer]:
    """Our REST server on 127.0.0.1 with a fresh local warehouse, one per test module:
    ``url``, ``token``, ``warehouse``, ``log_path`` (unpack as a 4-tuple), ``catalog_options()``,
    ``log()``, ``request(method, path, body)``."""
    with running_rest_server(tmp_path_factory.mktemp("rest-server")) as server:
        yield server
