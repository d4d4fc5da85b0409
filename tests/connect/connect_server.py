"""A real Spark Connect server, and client processes that talk to it (tests/connect/conftest.py
says why the client is another process).

The server is the installed pyspark's ``SparkConnectServer`` (``spark-connect_2.13`` in its
``jars/``), started with ``bin/spark-submit`` in the foreground on 127.0.0.1 and a free port,
``local[2]``, with this venv's Python for its workers, so the executors import the package from
this tree.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspark
import pytest

SPARK_HOME = os.path.dirname(os.path.abspath(pyspark.__file__))
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""As tests/versions/pyspark_probe.py: a short-lived driver spends less CPU with C1 only."""
STARTUP_TIMEOUT = 90.0
CLIENT_TIMEOUT = 600.0
PROJECT_ROOT = Path(__file__).resolve().parents[2]
DOORS_SCRIPT = PROJECT_ROOT / "tests" / "doors_script.py"
PYSPARK35 = PROJECT_ROOT / ".venv-pyspark35" / "bin" / "python"
"""pyspark 3.5 with the package's wheel (mk/pyspark_matrix.mk), as ``make test`` builds it."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _tail(path: Path, chars: int = 4000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started in its own session, then what is left of its group (the server's
    Python workers)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=15)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def client_env(python: str = sys.executable, **extra: str) -> dict[str, str]:
    """The environment of a client process: ``python`` for Spark's Python workers, the tests'
    JVM options for a classic driver, and no ``SPARK_REMOTE`` or ``SPARK_CONNECT_MODE_ENABLED``
    from outside (a client says where it connects)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")
    }
    env.update(
        PYSPARK_PYTHON=python,
        PYSPARK_DRIVER_PYTHON=python,
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_SUBMIT_OPTS=env.get("SPARK_SUBMIT_OPTS", JVM_OPTIONS),
    )
    env.update(extra)
    return env


class Pending:
    """A client process running in the background (its output goes to unnamed temporary files,
    so a chatty stderr never blocks it); ``result`` waits for the JSON it prints last."""

    def __init__(self, argv: Sequence[str], cwd: Path, python: str = sys.executable) -> None:
        self.argv = [str(a) for a in argv]
        self._result: Any = None
        self._out = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        self._err = tempfile.TemporaryFile()  # noqa: SIM115
        self.proc = subprocess.Popen(
            self.argv,
            stdout=self._out,
            stderr=self._err,
            stdin=subprocess.DEVNULL,
            env=client_env(python),
            cwd=cwd,
            start_new_session=True,
        )

    def _stderr(self, chars: int = 6000) -> str:
        self._err.seek(0)
        return self._err.read().decode(errors="replace")[-chars:]

    def stop(self) -> None:
        """Kill it if it still runs, and drop its output."""
        if self.proc.poll() is None:
            stop_process(self.proc)
        self._out.close()
        self._err.close()

    def result(self, timeout: float = CLIENT_TIMEOUT) -> Any:
        """The JSON object of the last line printed; a non-zero exit or a timeout fails the
        test with the end of its stderr."""
        if self._result is not None:
            return self._result
        name = " ".join(self.argv[:2])
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)
            pytest.fail(f"{name} timed out:\n{self._stderr()}")
        if self.proc.returncode != 0:
            pytest.fail(f"{name} exited with {self.proc.returncode}:\n{self._stderr()}")
        self._out.seek(0)
        lines = self._out.read().decode().strip().splitlines()
        assert lines, f"{name} printed nothing:\n{self._stderr(3000)}"
        self._result = json.loads(lines[-1])
        return self._result


def run_json(
    argv: Sequence[str], cwd: Path, timeout: float = CLIENT_TIMEOUT, python: str = sys.executable
) -> Any:
    """Run ``argv`` (a program and its arguments; Spark's Python workers run ``python``) and
    return the JSON object of the last line it prints (see ``Pending.result``)."""
    pending = Pending(argv, cwd, python)
    try:
        return pending.result(timeout)
    finally:
        pending.stop()


@dataclass
class ConnectServer:
    """A running Spark Connect server; ``url`` is what ``SparkSession.builder.remote`` takes."""

    port: int
    workdir: Path
    log: Path
    proc: subprocess.Popen[bytes] = field(repr=False)

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self) -> str:
        return _tail(self.log)

    def start_client(self, script: str | Path, *args: str, cwd: Path) -> Pending:
        """Start ``script`` in a fresh interpreter of this venv as ``script <url> *args``, in
        the background; the script connects with ``SparkSession.builder.remote(url)``."""
        assert self.alive(), f"the Connect server died:\n{self.log_tail()}"
        return Pending([sys.executable, str(script), self.url, *args], cwd)

    def run_client(
        self, script: str | Path, *args: str, cwd: Path, timeout: float = CLIENT_TIMEOUT
    ) -> Any:
        """Run ``script`` as ``start_client`` does and return the JSON object it prints last."""
        pending = self.start_client(script, *args, cwd=cwd)
        try:
            return pending.result(timeout)
        finally:
            pending.stop()


def start_connect_server(workdir: Path) -> ConnectServer:
    """Start the server and wait until its port answers; on any failure it is killed and the
    test fails with the end of its log."""
    workdir.mkdir(parents=True, exist_ok=True)
    conf_dir = workdir / "conf"  # no spark-defaults.conf from the machine
    conf_dir.mkdir(exist_ok=True)
    port = _free_port()
    log = workdir / "connect-server.log"
    conf = {
        "spark.master": "local[2]",
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.extraJavaOptions": JVM_OPTIONS,
        "spark.driver.memory": "1g",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.warehouse.dir": str(workdir / "spark-warehouse"),
    }
    argv = [os.path.join(SPARK_HOME, "bin", "spark-submit"), "--class", SERVER_CLASS]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    argv += ["--name", "paimon_pyspark-connect-tests", "spark-internal"]
    env = client_env(SPARK_HOME=SPARK_HOME, SPARK_CONF_DIR=str(conf_dir))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=workdir,
            start_new_session=True,
        )
    server = ConnectServer(port, workdir, log, proc)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not _answers(port):
            if proc.poll() is not None:
                pytest.fail(f"the Connect server exited with {proc.returncode}:\n{_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"the Connect server did not answer on {port}:\n{_tail(log)}")
            time.sleep(0.5)
    except BaseException:
        stop_process(proc)
        raise
    return server


@dataclass(frozen=True)
class DoorsRun:
    """What tests/doors_script.py printed on a Connect client, and the warehouse its tables
    are in; ``classic``: what the same script returned on the tests' own session meanwhile."""

    results: dict[str, Any]
    warehouse: Path
    classic: dict[str, Any]


@dataclass(frozen=True)
class DoorsElsewhere:
    """tests/doors_script.py running on a classic session in the background: pyspark 3.5 in
    ``.venv-pyspark35`` (None when that venv is missing)."""

    pyspark35: Pending | None
