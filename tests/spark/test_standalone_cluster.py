"""A real Spark standalone cluster on loopback: one master, two workers (one core each), started
from the pinned pyspark's ``bin/spark-class``; the application (cluster_job.py) runs in a
subprocess because the pytest process already holds the local SparkContext.

Checked here: both doors (``df.write.format("paimon")`` and ``paimon_pyspark.spark.write``) and
``spark.read.format("paimon")`` on an unpartitioned, a partitioned and a bucketed table; rows are
exact through Spark and through our own reader; the rows were written by Python workers of the
two executors (their pids and working directories), not by the driver.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.spark.standalone import Cluster, finish_job, start_job

from paimon_pyspark import CatalogFactory, FileStoreTable

pytestmark = [pytest.mark.slow, pytest.mark.datasource, pytest.mark.own_job]

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cluster_job.py")
JOB_TIMEOUT = 600.0  # a limit: a loaded 2-core machine starts Python workers slowly


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Cluster:
    """The session's cluster (standalone.py), shared with test_executor_loss.py."""
    shared: Cluster = request.getfixturevalue("standalone")
    return shared


def _run_job(cluster: Cluster, warehouse: str, cwd: Path) -> dict[str, object]:
    result = finish_job(start_job(cluster, JOB, [cluster.master_url, warehouse], cwd), JOB_TIMEOUT)
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
