"""A real Spark standalone cluster on loopback: one master, two workers (one core each), started
from the pinned pyspark's ``bin/spark-class``; the application (cluster_job.py) runs in a
subprocess because the pytest process already holds the local SparkContext.

Checked here: both doors (``df.write.format("paimon")`` and ``paimon_pyspark.spark.write``) and
``spark.read.format("paimon")`` on an unpartitioned, a partitioned and a bucketed table; rows are
exact through Spark and through our own reader; the rows were written by Python workers of the
two executors (their pids and working directories), not by the driver.
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
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest

from paimon_pyspark import CatalogFactory, FileStoreTable

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

SPARK_HOME = os.path.dirname(os.path.abspath(pyspark.__file__))
SPARK_CLASS = os.path.join(SPARK_HOME, "bin", "spark-class")
JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cluster_job.py")
STARTUP_TIMEOUT = 60.0
JOB_TIMEOUT = 180.0
JVM_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@dataclass
class Cluster:
    master_url: str
    work_dirs: list[str]
    env: dict[str, str]


def _free_ports(n: int) -> list[int]:
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


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started in its own session, then whatever is left of its process group
    (executors and Python workers a worker started)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=15)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def _tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


def _master_state(ui_port: int) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            state: dict[str, object] = json.load(r)
            return state
    except OSError:
        return None


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    conf_dir = tmp_path / "conf"  # no spark-defaults/spark-env from the machine
    conf_dir.mkdir()
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
    master_port, master_ui, *worker_uis = _free_ports(4)
    master_url = f"spark://127.0.0.1:{master_port}"
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(name: str, args: list[str]) -> None:
        log = tmp_path / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [SPARK_CLASS, *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=tmp_path,
                start_new_session=True,
            )
        procs.append((proc, log))

    def wait_for(what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            for proc, log in procs:
                if proc.poll() is not None:
                    pytest.fail(f"{log.name} exited with {proc.returncode}:\n{_tail(log)}")
            if ready():
                return
            time.sleep(0.5)
        logs = "\n".join(f"--- {log.name}\n{_tail(log)}" for _, log in procs)
        pytest.fail(f"Timed out waiting for {what}:\n{logs}")

    def alive_workers() -> int:
        state = _master_state(master_ui)
        workers = state.get("workers", []) if state else []
        assert isinstance(workers, list)
        return sum(1 for w in workers if w.get("state") == "ALIVE")

    work_dirs = [str(tmp_path / f"worker-{i}") for i in range(2)]
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
        wait_for("the master", lambda: (_master_state(master_ui) or {}).get("status") == "ALIVE")
        # the master moves to the next port if its port was taken since we picked it
        state = _master_state(master_ui) or {}
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
        yield Cluster(master_url, work_dirs, env)
    finally:
        for proc, _ in reversed(procs):
            _stop(proc)


def _run_job(cluster: Cluster, warehouse: str, cwd: Path) -> dict[str, object]:
    proc = subprocess.Popen(
        [sys.executable, JOB, cluster.master_url, warehouse],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=cluster.env,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=JOB_TIMEOUT)
    except subprocess.TimeoutExpired:
        _stop(proc)
        out, err = proc.communicate()
        pytest.fail(f"cluster_job.py timed out:\n{err.decode(errors='replace')[-5000:]}")
    finally:
        if proc.poll() is None:
            _stop(proc)
    assert proc.returncode == 0, err.decode(errors="replace")[-5000:]
    result: dict[str, object] = json.loads(out.decode().strip().splitlines()[-1])
    print("cluster_job.py timings (s):", result.get("session_s"), result.get("timings"))
    return result


def _expected(n: int, offset: int = 0) -> list[tuple[int, str, str]]:
    return [(i, f"name-{i}", f"2026-11-0{i % 3 + 1}") for i in range(offset, offset + n)]


def _ours(table: FileStoreTable) -> list[tuple[int, str, str, int, str]]:
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((r["id"], r["name"], r["dt"], r["pid"], r["task_dir"]) for r in rows)


def test_write_and_read_on_a_standalone_cluster(cluster: Cluster, tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    job_dir = tmp_path / "driver"
    job_dir.mkdir()
    result = _run_job(cluster, warehouse, job_dir)

    assert result["master"] == cluster.master_url
    assert result["default_parallelism"] == 2  # two executors of one core each
    driver_pid = result["driver_pid"]
    app_id = result["app_id"]
    assert isinstance(app_id, str)
    app_dirs = [os.path.join(w, app_id) for w in cluster.work_dirs]
    # executor N of this application runs in <work dir of its worker>/<app id>/<N>
    executor_dirs = {
        os.path.join(d, e): i
        for i, d in enumerate(app_dirs)
        if os.path.isdir(d)
        for e in os.listdir(d)
    }
    assert len(executor_dirs) == 2, executor_dirs
    assert sorted(executor_dirs.values()) == [0, 1]  # one executor on each worker

    catalog = CatalogFactory.create({"warehouse": warehouse})
    layouts = result["layouts"]
    assert isinstance(layouts, dict)
    for layout, got in layouts.items():
        table = catalog.get_table(f"db.{layout}")
        ours = _ours(table)
        assert [r[:3] for r in ours] == _expected(1500), layout
        # Spark read the same rows, stamps included, in tasks on the executors
        spark_rows = sorted(tuple(r[:5]) for r in got["rows"])
        assert spark_rows == ours, layout
        read_dirs = {r[5] for r in got["rows"]}
        assert read_dirs <= set(executor_dirs), read_dirs
        # one APPEND; a bucketed bucket then holds 4 files from the format write's 4 tasks
        # plus 1, which reaches compaction.min.file-num: spark.write's task compacts it, as
        # Java's writer would, in a COMPACT snapshot of the same write
        sm = table.snapshot_manager
        kinds = [sm.snapshot(i).commit_kind for i in got["spark_write_snapshots"]]
        want = ["APPEND", "COMPACT"] if layout == "bucketed" else ["APPEND"]
        assert kinds == want, layout
        assert got["spark_write_snapshots"][0] == 2
        assert sm.latest_id() == got["spark_write_snapshots"][-1]
        assert got["snapshot_1_count"] == 1000
        expected_filtered = [r for r in _expected(1500) if r[2] == "2026-11-02" and r[0] >= 1200]
        assert got["filtered_count"] == len(expected_filtered)

        # the rows were made by Python workers of both executors, not by the driver; the
        # format("paimon") write and spark.write without a bucket shuffle write them in that
        # same task, so these are the executors that wrote the files too
        pids = {r[3] for r in ours}
        assert driver_pid not in pids and os.getpid() not in pids
        writers = {r[4] for r in ours}
        assert writers <= set(executor_dirs), writers
        assert {executor_dirs[d] for d in writers} == {0, 1}, layout
        if table.options.bucket > 0:
            snapshot = sm.snapshot(got["spark_write_snapshots"][0])  # its APPEND
            delta = table.manifest_io.read_entries(
                table.manifest_io.read_manifest_list(snapshot.delta_manifest_list)
            )
            keys = [(e.partition, e.bucket) for e in delta]
            # spark.write shuffled by (partition, bucket): one file per bucket in the commit
            assert len(keys) == len(set(keys)) == 9, layout
        staging = os.path.join(table.path, ".paimon-staging")
        assert not os.path.exists(staging) or not os.listdir(staging)
