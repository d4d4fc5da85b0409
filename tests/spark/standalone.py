"""A real Spark standalone cluster on loopback for tests: one master and two workers (one core
and 1 GB each), started as separate processes from the pinned pyspark's ``bin/spark-class``.

Applications run in a subprocess (``start_job``/``finish_job``): one SparkContext per process,
and the pytest process already holds its local one. An executor of application ``A`` on worker
``i`` runs in ``<work_dirs[i]>/<A>/<executor id>``, and its Python workers inherit that working
directory: ``executor_processes`` finds them there (for tests that kill one).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyspark
import pytest

SPARK_HOME = os.path.dirname(os.path.abspath(pyspark.__file__))
SPARK_CLASS = os.path.join(SPARK_HOME, "bin", "spark-class")
STARTUP_TIMEOUT = 60.0
JVM_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@dataclass
class Cluster:
    master_url: str
    work_dirs: list[str]
    env: dict[str, str]
    master_ui: int = 0
    procs: list[tuple[subprocess.Popen[bytes], Path]] = field(default_factory=list)

    def logs(self) -> str:
        """The tail of every daemon's log, for failure messages."""
        return "\n".join(f"--- {log.name}\n{tail(log)}" for _, log in self.procs)


def free_ports(n: int) -> list[int]:
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started in its own session, then whatever is left of its process group
    (executors and Python workers a worker started)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=15)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


def get_json(url: str) -> object | None:
    """A JSON document of the master's or an application's UI; None while it does not answer."""
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            data: object = json.load(r)
            return data
    except (OSError, ValueError):
        return None


def master_state(ui_port: int) -> dict[str, object] | None:
    state = get_json(f"http://127.0.0.1:{ui_port}/json/")
    return state if isinstance(state, dict) else None


@contextlib.contextmanager
def standalone_cluster(base: Path) -> Iterator[Cluster]:
    """Start the master and two workers with their logs and work dirs under ``base``; stop
    them (and every executor they started) on exit."""
    conf_dir = base / "conf"  # no spark-defaults/spark-env from the machine
    conf_dir.mkdir(parents=True)
    env = {
        **os.environ,
        "SPARK_HOME": SPARK_HOME,
        "SPARK_CONF_DIR": str(conf_dir),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        # the cluster JVMs start noticeably faster without C2 on small (2-core) machines
        "SPARK_DAEMON_JAVA_OPTS": JVM_OPTS,
        "PAIMON_TEST_JVM_OPTS": JVM_OPTS,
    }
    master_port, master_ui, *worker_uis = free_ports(4)
    master_url = f"spark://127.0.0.1:{master_port}"
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(name: str, args: list[str]) -> None:
        log = base / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [SPARK_CLASS, *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=base,
                start_new_session=True,
            )
        procs.append((proc, log))

    def wait_for(what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            for proc, log in procs:
                if proc.poll() is not None:
                    pytest.fail(f"{log.name} exited with {proc.returncode}:\n{tail(log)}")
            if ready():
                return
            time.sleep(0.5)
        logs = "\n".join(f"--- {log.name}\n{tail(log)}" for _, log in procs)
        pytest.fail(f"Timed out waiting for {what}:\n{logs}")

    def alive_workers() -> int:
        state = master_state(master_ui)
        workers = state.get("workers", []) if state else []
        assert isinstance(workers, list)
        return sum(1 for w in workers if w.get("state") == "ALIVE")

    work_dirs = [str(base / f"worker-{i}") for i in range(2)]
    try:
        start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(master_port),
                "--webui-port",
                str(master_ui),
            ],
        )
        wait_for("the master", lambda: (master_state(master_ui) or {}).get("status") == "ALIVE")
        # the master moves to the next port if its port was taken since we picked it
        state = master_state(master_ui) or {}
        master_url = str(state.get("url", master_url))
        for i, (work_dir, ui) in enumerate(zip(work_dirs, worker_uis, strict=True)):
            start(
                f"worker-{i}",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    master_url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "1g",
                    "--webui-port",
                    str(ui),
                    "--work-dir",
                    work_dir,
                ],
            )
        wait_for("two workers to register", lambda: alive_workers() == 2)
        yield Cluster(master_url, work_dirs, env, master_ui, procs)
    finally:
        for proc, _ in reversed(procs):
            stop(proc)


@pytest.fixture(scope="session")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for the session's cluster tests (each runs its own application on it)."""
    with standalone_cluster(tmp_path_factory.mktemp("standalone")) as cluster:
        yield cluster


def start_job(cluster: Cluster, script: str, args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """Run the application ``script`` in its own process (and session) against the cluster."""
    return subprocess.Popen(
        [sys.executable, script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=cluster.env,
        cwd=cwd,
        start_new_session=True,
    )


def finish_job(proc: subprocess.Popen[bytes], timeout: float) -> dict[str, object]:
    """Wait for the application; it must exit 0 and print its result as JSON on its last
    line of stdout."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc)
        out, err = proc.communicate()
        pytest.fail(f"{proc.args!r} timed out:\n{err.decode(errors='replace')[-5000:]}")
    finally:
        if proc.poll() is None:
            stop(proc)
    assert proc.returncode == 0, err.decode(errors="replace")[-5000:]
    result: dict[str, object] = json.loads(out.decode().strip().splitlines()[-1])
    return result


def executor_dir(cluster: Cluster, app_id: str, executor_id: str) -> tuple[int, str] | None:
    """The worker index and working directory of an executor of ``app_id``."""
    for i, work_dir in enumerate(cluster.work_dirs):
        d = os.path.join(work_dir, app_id, executor_id)
        if os.path.isdir(d):
            return i, d
    return None


def executor_processes(directory: str) -> dict[int, str]:
    """The processes working in ``directory`` (an executor's JVM and its Python daemon and
    workers): pid -> command line."""
    found: dict[int, str] = {}
    target = os.path.realpath(directory)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.path.realpath(f"/proc/{entry}/cwd") != target:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                found[int(entry)] = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone, or not ours
            continue
    return found
