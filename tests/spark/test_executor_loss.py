"""Executors lost mid-job (issue 44, item 3): on a standalone cluster (a master and two workers,
tests/spark/standalone.py), an executor is SIGKILLed, its JVM with its Python daemon and
workers, while tasks of a ``paimon_pyspark.spark.write``, a Spark compaction job and a MERGE
INTO run (executor_loss_job.py: one application, one phase each).

Spark retries the lost tasks on the other executor (``spark.task.maxFailures`` at its default)
and the worker starts a new executor, so each job completes: its rows are there exactly once,
its commit is the single snapshot it should be, and after ``remove_orphan_files`` (the same
clean with a cutoff in the future, not to wait for its safety age) every data and manifest file
left is one a snapshot uses.

``make test`` runs this with ``PAIMON_EXECUTOR_LOSS_ROWS`` (default 60,000) rows; ``make soak``
with 2,000,000. The figures (kills, task failures, orphans, timings) are printed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from tests.spark.standalone import (
    Cluster,
    executor_dir,
    executor_processes,
    finish_job,
    free_ports,
    get_json,
    start_job,
    stop,
)

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean
from paimon_pyspark.spark.job import STAGING_DIR

pytestmark = [pytest.mark.slow, pytest.mark.datasource, pytest.mark.own_job]

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "executor_loss_job.py")
ROWS = int(os.environ.get("PAIMON_EXECUTOR_LOSS_ROWS", "60000"))
JOB_TIMEOUT = 300.0 + ROWS / 2000  # 2,000,000 rows: about 20 minutes at most on 2 cores
PHASES = {"write": "appended", "compact": "compacted", "merge": "merged"}  # phase -> table
MAX_KILLS = 3
DAY_MS = 86_400_000


@dataclass
class Kill:
    """One executor killed during a phase: its JVM and Python processes (pid -> command)."""

    phase: str
    executor: str
    worker: int
    after_s: float  # since the phase started
    active_tasks: int
    pids: dict[int, str]  # pid -> "jvm" or "python"
    hit: bool = False  # a task of the phase failed with it: the kill landed mid-task


@dataclass
class Run:
    result: dict[str, object]
    kills: dict[str, list[Kill]]
    warehouse: str
    seconds: float
    cleaned: dict[str, tuple[int, int]] = field(default_factory=dict)


def _api(ui: int, app: str, path: str) -> list[dict[str, Any]]:
    data = get_json(f"http://127.0.0.1:{ui}/api/v1/applications/{app}/{path}")
    return data if isinstance(data, list) else []


def _failed_tasks(ui: int, app: str, phase: str) -> int:
    jobs = [j for j in _api(ui, app, "jobs") if j.get("jobGroup") == phase]
    return sum(int(j.get("numFailedTasks", 0)) for j in jobs)


def _written(table_dir: Path) -> int:
    """Files under the table's data directories and its jobs' staging directory."""
    skip = {"snapshot", "manifest", "schema"}
    return sum(
        len(files)
        for root, dirs, files in os.walk(table_dir)
        if not skip.intersection(Path(root).relative_to(table_dir).parts[:1])
    )


def _kill_during(
    cluster: Cluster, proc: subprocess.Popen[bytes], signals: Path, phase: str, ui: int
) -> list[Kill]:
    """Once the phase's tasks have written a file, SIGKILL an executor running a task (its JVM,
    Python daemon and workers); again, up to MAX_KILLS times, while no task of the phase has
    failed from it (the task had just ended)."""
    deadline = time.monotonic() + JOB_TIMEOUT
    started, done = signals / f"{phase}.started", signals / f"{phase}.done"
    while not started.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            return []
        time.sleep(0.1)
    t0 = time.monotonic()
    app = (signals / "app").read_text()
    table_dir = signals.parent / "warehouse" / "db.db" / PHASES[phase]
    files = _written(table_dir)
    kills: list[Kill] = []
    while not done.exists() and proc.poll() is None and time.monotonic() < deadline:
        if len(kills) == MAX_KILLS or any(k.hit for k in kills):
            break
        busy = [
            e
            for e in _api(ui, app, "executors")
            if e["id"] != "driver" and int(e.get("activeTasks", 0)) > 0
        ]
        if _written(table_dir) == files or not busy:
            time.sleep(0.05)
            continue
        failed = _failed_tasks(ui, app, phase)
        # the executor that ran the most tasks: most of the shuffle output is lost with it
        e = max(busy, key=lambda e: (e["activeTasks"], e["totalTasks"]))
        where = executor_dir(cluster, app, str(e["id"]))
        assert where is not None, f"no working directory for executor {e['id']} of {app}"
        pids = executor_processes(where[1])
        jvm = [p for p, cmd in pids.items() if "CoarseGrainedExecutorBackend" in cmd]
        assert jvm, f"executor {e['id']}'s JVM not found in {where[1]}: {pids}"
        for pid in sorted(pids, key=lambda p: p not in jvm):  # the JVM first
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pids.pop(pid)
        after = round(time.monotonic() - t0, 2)
        kinds = {p: "jvm" if p in jvm else "python" for p in pids}
        kill = Kill(phase, str(e["id"]), where[0], after, int(e["activeTasks"]), kinds)
        kills.append(kill)
        wait = time.monotonic() + 15  # the driver sees the executor's connection drop at once
        while time.monotonic() < wait and not kill.hit:
            kill.hit = _failed_tasks(ui, app, phase) > failed
            time.sleep(0.2)
    return kills


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Run]:
    """One application for the three phases, an executor killed in each, on the session's
    cluster (shared with test_standalone_cluster.py)."""
    base = tmp_path_factory.mktemp("executor-loss")
    cluster: Cluster = request.getfixturevalue("standalone")
    signals, driver = base / "signals", base / "driver"
    signals.mkdir()
    driver.mkdir()
    warehouse = str(base / "warehouse")
    t0 = time.monotonic()
    (ui,) = free_ports(1)
    args = [cluster.master_url, warehouse, str(ROWS), str(ui), str(signals)]
    proc = start_job(cluster, JOB, args, driver)
    kills: dict[str, list[Kill]] = {}
    try:
        for phase in PHASES:
            kills[phase] = _kill_during(cluster, proc, signals, phase, ui)
    except BaseException:
        stop(proc)
        raise
    result = finish_job(proc, JOB_TIMEOUT)
    seconds = round(time.monotonic() - t0, 2)
    print(f"\nexecutor loss, {ROWS} rows: application {seconds} s; executors {result['executors']}")
    yield Run(result, kills, warehouse, seconds)


def _table(run: Run, name: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": run.warehouse}).get_table(name)


def _rows(table: FileStoreTable) -> pa.Table:
    rb = table.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def _delta_rows(table: FileStoreTable, snapshot_id: int) -> int:
    """Rows (records, deletes included) the snapshot's own commit added."""
    snapshot = table.snapshot_manager.snapshot(snapshot_id)
    io = table.manifest_io
    entries = io.read_entries(io.read_manifest_list(snapshot.delta_manifest_list))
    return sum(e.file.row_count for e in entries if e.kind == 0)


def _used(table: FileStoreTable) -> tuple[set[str], set[str]]:
    """The data file and manifest (list) names some snapshot of ``table`` uses."""
    sm, io = table.snapshot_manager, table.manifest_io
    data: set[str] = set()
    manifests: set[str] = set()
    earliest, latest = sm.earliest_id(), sm.latest_id()
    assert earliest is not None and latest is not None
    for sid in range(earliest, latest + 1):
        snapshot = sm.snapshot(sid)
        data |= {e.file.file_name for e in io.live_entries(snapshot)}
        for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
            manifests |= {name, *(m.file_name for m in io.read_manifest_list(name))}
    return data, manifests


def _on_disk(table: FileStoreTable) -> tuple[set[str], set[str], list[str]]:
    data: set[str] = set()
    staged: list[str] = []
    for root, _, files in os.walk(table.path):
        if STAGING_DIR in root:
            staged += files
        else:
            data |= {f for f in files if f.startswith("data-")}
    manifests = set(os.listdir(os.path.join(table.path, "manifest")))
    return data, manifests, staged


def _check_phase(run: Run, phase: str) -> tuple[FileStoreTable, dict[str, object]]:
    """The kill landed in a running task, Spark retried it, the worker replaced the executor,
    the job completed, and after remove_orphan_files only files a snapshot uses are left."""
    phases = run.result["phases"]
    assert isinstance(phases, dict)
    outcome: dict[str, object] = phases[phase]
    kills = run.kills[phase]
    assert kills and kills[-1].hit, f"{phase}: no kill landed in a running task: {kills}"
    kill = kills[-1]
    # the job completes (spark.task.maxFailures at its default): a failed job would have had
    # to leave the table as it was
    assert outcome["error"] is None, (
        f"{phase} failed after losing executor {kill.executor} (snapshots {outcome['before']} "
        f"-> {outcome['after']}):\n{outcome['error']}"
    )
    assert isinstance(outcome["failed_tasks"], int) and outcome["failed_tasks"] >= 1, outcome
    at_start = outcome["executors_at_start"]  # a killed executor was replaced in between
    assert isinstance(at_start, list) and len(at_start) == 2, at_start
    table = _table(run, str(outcome["table"]))
    if phase not in run.cleaned:
        future = int(time.time() * 1000) + DAY_MS
        orphans = OrphanFilesClean(table.store, future, dry_run=True).run().deleted_file_count
        OrphanFilesClean(table.store, future).run()
        again = OrphanFilesClean(table.store, future, dry_run=True).run().deleted_file_count
        run.cleaned[phase] = (orphans, again)
    orphans, again = run.cleaned[phase]
    print(f"{phase}: kills {kills}; {outcome}; orphans {orphans}, after the clean {again}")
    assert again == 0
    data, manifests = _used(table)
    on_disk_data, on_disk_manifests, staged = _on_disk(table)
    assert on_disk_data == data, (on_disk_data - data, data - on_disk_data)
    assert on_disk_manifests <= manifests, on_disk_manifests - manifests
    assert staged == []
    return table, outcome


def test_a_write_survives_a_lost_executor(run: Run) -> None:
    table, outcome = _check_phase(run, "write")
    sm = table.snapshot_manager
    assert outcome["before"] is None and outcome["after"] == sm.latest_id()
    returned = outcome["returned"]
    assert isinstance(returned, list) and returned[0] == 1
    assert [sm.snapshot(i).commit_kind for i in returned] == ["APPEND", "COMPACT"][: len(returned)]
    assert _delta_rows(table, 1) == ROWS  # the files of one attempt per task, once
    rows = _rows(table).sort_by("id")
    assert np.array_equal(rows["id"].to_numpy(), np.arange(ROWS))
    names = pc.binary_join_element_wise("name-", pc.cast(rows["id"], pa.string()), "")
    assert pc.all(pc.equal(rows["name"], names)).as_py()


def test_a_compaction_job_survives_a_lost_executor(run: Run) -> None:
    table, outcome = _check_phase(run, "compact")
    sm = table.snapshot_manager
    half = ROWS // 2
    assert outcome["before"] == 5 and outcome["returned"] == outcome["after"] == 6
    assert sm.snapshot(6).commit_kind == "COMPACT"
    live = table.manifest_io.live_entries(sm.snapshot(6))
    assert sum(e.file.row_count for e in live) == half
    assert len(live) < 20  # five files per partition before
    rows = _rows(table).sort_by("id")
    assert np.array_equal(rows["id"].to_numpy(), np.arange(half))
    assert np.array_equal(rows["p"].to_numpy(), np.arange(half) % 4)


def test_a_merge_survives_a_lost_executor(run: Run) -> None:
    table, outcome = _check_phase(run, "merge")
    half = ROWS // 2
    assert outcome["before"] == 1 and outcome["returned"] == outcome["after"] == 2
    assert _delta_rows(table, 2) == half  # one record per source row: -D, +U or +I
    k = np.arange(half // 2 + half)
    matched = (k >= half // 2) & (k < half)
    keep = ~(matched & (k % 3 == 0))
    k = k[keep]
    old = k < half // 2
    rows = _rows(table).sort_by("k")
    assert np.array_equal(rows["k"].to_numpy(), k)
    assert np.array_equal(rows["v"].to_numpy(), np.where(old, k, -k))
    assert rows["s"].to_pylist() == np.where(old, "t", "s").tolist()


def test_each_lost_executor_was_replaced(run: Run) -> None:
    """The workers started a new executor after each kill; only the killed ones were lost."""
    executors = run.result["executors"]
    assert isinstance(executors, list)
    killed = {k.executor for kills in run.kills.values() for k in kills}
    lost = {e["id"] for e in executors if not e["isActive"]}
    assert lost == killed, executors
    assert len(executors) == 2 + len(killed)
