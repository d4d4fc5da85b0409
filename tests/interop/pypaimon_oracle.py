"""Second compatibility oracle: pypaimon 2.1, the Apache Paimon project's own Python engine.

pypaimon pins pyarrow<20 while the product needs pyarrow 26, so it runs in a separate venv
(``.venv-pypaimon``, built by ``make test``) behind ``pypaimon_driver.py``. Rows cross the
process boundary as Arrow IPC files, which both pyarrow versions read and write losslessly.
Every call runs in a fresh process forked from the driver's fork server (``--serve``), which
imports pypaimon once per session instead of once per call.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().with_name("pypaimon_driver.py")
DEFAULT_PYTHON = PROJECT_ROOT / ".venv-pypaimon" / "bin" / "python"
PYTHON_ENV_VAR = "PYPAIMON_PYTHON"


def pypaimon_python() -> Path:
    """The interpreter of the pypaimon venv; ``PYPAIMON_PYTHON`` overrides it for experiments."""
    override = os.environ.get(PYTHON_ENV_VAR)
    return Path(override) if override else DEFAULT_PYTHON


def _write_ipc(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pyarrow.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_ipc(path: Path) -> pa.Table:
    # read_all copies out of the file, so the temporary directory can go right after.
    with pa.OSFile(str(path), "rb") as source:
        return pyarrow.ipc.open_file(source).read_all()


class _LineReader:
    """Newline-framed replies from a socket, each read bounded by a deadline."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._buffer = b""

    def read(self, deadline: float) -> bytes:
        """The next line without its newline; b"" when the peer closed first."""
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self._conn.settimeout(remaining)
            chunk = self._conn.recv(65536)
            if not chunk:
                return b""
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line


class _ForkServer:
    """The driver's ``--serve`` process: it imports pypaimon once and forks a child per call.

    The server only imports; each child runs one command and exits, so calls stay as isolated
    as separate interpreters. The server dies with its stdin, so a crashed session leaks none.
    """

    def __init__(self, python: Path, timeout: float) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="pypaimon-server-")
        self.socket_path = os.path.join(self._dir.name, "s")
        self.log_path = Path(self._dir.name) / "server.log"
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                [str(python), str(DRIVER), "--serve", self.socket_path],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,  # a Ctrl-C reaches pytest, which then closes stdin
            )
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], timeout)
        line = self._process.stdout.readline() if ready else b""
        if not line.startswith(b'{"ready"'):
            self.close()
            raise AssertionError(
                f"pypaimon fork server did not start within {timeout}s\n{self.log()}"
            )

    @property
    def pid(self) -> int:
        return self._process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def call(
        self, command: dict[str, Any], stdout: Path, stderr: Path, timeout: float
    ) -> int | None:
        """Run ``command`` in a forked child; its exit code, or None when it timed out."""
        if self._process.poll() is not None:
            raise AssertionError(
                f"pypaimon fork server exited ({self._process.returncode})\n{self.log()}"
            )
        request = {
            "command": command,
            "stdout": str(stdout),
            "stderr": str(stderr),
            "cwd": os.getcwd(),
            "env": dict(os.environ),
        }
        deadline = time.monotonic() + timeout
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self.socket_path)
            conn.sendall(json.dumps(request).encode() + b"\n")
            lines = _LineReader(conn)
            try:
                lines.read(deadline)  # {"pid"}: the child is running
                reply = lines.read(deadline)
            except TimeoutError:
                conn.shutdown(socket.SHUT_WR)  # the server kills the child on hang-up
                with contextlib.suppress(TimeoutError):
                    lines.read(time.monotonic() + 30.0)  # its exit: the stderr file is whole
                return None
        if not reply:
            raise AssertionError(
                f"pypaimon fork server dropped a call ({command['cmd']})\n{self.log()}"
            )
        return int(json.loads(reply)["returncode"])

    def close(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()
        self._dir.cleanup()


class PypaimonOracle:
    """Creates, writes and reads Paimon tables with pypaimon, one fresh process per call.

    Each call is a process of its own (forked from an import-only server, see
    ``pypaimon_driver.py``) so no pypaimon state (caches, commit users) leaks between test
    steps, the same way two independent engines would meet on a shared warehouse.
    """

    def __init__(self, python: Path | str | None = None, timeout: float = 300.0) -> None:
        self.python = Path(python) if python is not None else pypaimon_python()
        self.timeout = timeout
        self._server: _ForkServer | None = None
        self._lock = threading.Lock()
        self._catalog_options: dict[str, dict[str, str]] = {}

    def set_catalog_options(
        self, warehouse: str | os.PathLike[str], options: Mapping[str, str]
    ) -> None:
        """Every later call on ``warehouse`` opens pypaimon's catalog with these options too (for
        its REST catalog: ``metastore``, ``uri``, ``token.provider``, ``token``)."""
        self._catalog_options[os.fspath(warehouse)] = {str(k): str(v) for k, v in options.items()}

    def list_tables(self, warehouse: str | os.PathLike[str], database: str) -> list[str]:
        """The table names of ``database``, sorted, as pypaimon's catalog lists them."""
        reply = self._run(
            {"cmd": "list_tables", "warehouse": os.fspath(warehouse), "database": database}
        )
        return [str(name) for name in reply["tables"]]

    def close(self) -> None:
        """Stop the fork server, if a call started one."""
        with self._lock:
            if self._server is not None:
                self._server.close()
                self._server = None

    def _fork_server(self) -> _ForkServer:
        with self._lock:
            if self._server is None:
                self._server = _ForkServer(self.python, self.timeout)
            return self._server

    def read(
        self,
        warehouse: str | os.PathLike[str],
        table: str,
        snapshot_id: int | None = None,
        projection: Sequence[str] | None = None,
    ) -> pa.Table:
        """Read ``db.t`` (latest snapshot, or ``snapshot_id``) with pypaimon's batch reader."""
        with tempfile.TemporaryDirectory(prefix="pypaimon-oracle-") as tmp:
            output = Path(tmp) / "result.arrow"
            self._run(
                {
                    "cmd": "read",
                    "warehouse": os.fspath(warehouse),
                    "table": table,
                    "snapshot_id": snapshot_id,
                    "projection": None if projection is None else list(projection),
                    "output": str(output),
                }
            )
            return _read_ipc(output)

    def create_table(
        self,
        warehouse: str | os.PathLike[str],
        table: str,
        schema: pa.Schema,
        partition_keys: Sequence[str] = (),
        primary_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Create ``db.t`` (and its database) from an Arrow schema via pypaimon's type mapping.

        Returns the driver's reply; ``reply["fields"]`` lists ``[name, paimon_type]`` as
        pypaimon stored them, which shows how an Arrow type was mapped. pypaimon's mapping has
        traps: ``large_binary`` becomes BLOB (rejected without row tracking), every Arrow time
        type becomes ``TIME(0)``, and CHAR/VARCHAR/MULTISET cannot be expressed at all.
        """
        with tempfile.TemporaryDirectory(prefix="pypaimon-oracle-") as tmp:
            schema_path = Path(tmp) / "schema.arrow"
            _write_ipc(schema_path, schema.empty_table())
            return self._run(
                {
                    "cmd": "create",
                    "warehouse": os.fspath(warehouse),
                    "table": table,
                    "schema": str(schema_path),
                    "partition_keys": list(partition_keys),
                    "primary_keys": list(primary_keys),
                    "options": {str(k): str(v) for k, v in (options or {}).items()},
                }
            )

    def write(
        self,
        warehouse: str | os.PathLike[str],
        table: str,
        data: pa.Table,
        commits: int = 1,
        overwrite: bool = False,
        static_partition: Mapping[str, Any] | None = None,
    ) -> list[int]:
        """Write ``data`` in ``commits`` consecutive slices, one snapshot each.

        Returns the snapshot id after each commit. ``overwrite`` applies to every commit
        (pypaimon's default is dynamic partition overwrite); ``static_partition`` narrows it.
        """
        partition = None if static_partition is None else dict(static_partition)
        with tempfile.TemporaryDirectory(prefix="pypaimon-oracle-") as tmp:
            data_path = Path(tmp) / "data.arrow"
            _write_ipc(data_path, data)
            reply = self._run(
                {
                    "cmd": "write",
                    "warehouse": os.fspath(warehouse),
                    "table": table,
                    "data": str(data_path),
                    "commits": commits,
                    "mode": "overwrite" if overwrite else "append",
                    "static_partition": partition,
                }
            )
        return [int(snapshot) for snapshot in reply["snapshots"]]

    def _run(self, command: dict[str, Any]) -> dict[str, Any]:
        """Run one driver command; any failure becomes an AssertionError with pypaimon's stderr."""
        options = self._catalog_options.get(str(command.get("warehouse")))
        if options:
            command = {**command, "catalog_options": options}
        server = self._fork_server()
        with tempfile.TemporaryDirectory(prefix="pypaimon-call-") as tmp:
            stdout_path, stderr_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
            returncode = server.call(command, stdout_path, stderr_path, self.timeout)
            stdout = stdout_path.read_text(errors="replace") if stdout_path.exists() else ""
            stderr = stderr_path.read_text(errors="replace") if stderr_path.exists() else ""
        if returncode is None:
            raise AssertionError(
                f"pypaimon {command['cmd']} timed out after {self.timeout}s\n"
                f"command: {json.dumps(command)}\nstderr:\n{stderr}"
            )
        if returncode != 0:
            raise AssertionError(
                f"pypaimon {command['cmd']} failed (exit {returncode})\n"
                f"command: {json.dumps(command)}\nstderr:\n{_describe_stderr(stderr)}"
            )
        lines = stdout.strip().splitlines()
        try:
            reply: dict[str, Any] = json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError) as error:
            raise AssertionError(
                f"pypaimon {command['cmd']} printed no JSON reply\nstdout:\n{stdout}\n"
                f"stderr:\n{stderr}"
            ) from error
        return reply


def _describe_stderr(stderr: str) -> str:
    """Put pypaimon's traceback first; keep any log lines printed before the JSON error."""
    lines = stderr.rstrip().splitlines()
    try:
        payload = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return stderr
    logs = "\n".join(lines[:-1])
    message = f"{payload.get('type')}: {payload.get('error')}\n{payload.get('traceback', '')}"
    return f"{message}\n{logs}" if logs else message


def pypaimon_oracle_fixture() -> PypaimonOracle:
    """Body of the session fixture: a missing venv is a broken setup, never a skip."""
    import pytest

    python = pypaimon_python()
    if not python.exists():
        pytest.fail(
            f"pypaimon venv interpreter not found at {python}. Run `make test` (it builds "
            f".venv-pypaimon from tests/interop/pypaimon-requirements.txt), or point "
            f"{PYTHON_ENV_VAR} at a Python with pypaimon==2.1.0 installed.",
            pytrace=False,
        )
    return PypaimonOracle(python)
