"""The counts behind the progress bar: Spark's tasks and rows, and what a command committed."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from rich.console import Console
from tests.cli.helpers import orders_table

from paimon_pyspark import FileSystemCatalog
from paimon_pyspark.cli.progress import JobProgress, committed


def test_committed_counts_rows_and_files_of_the_new_snapshots(catalog: FileSystemCatalog) -> None:
    orders_table(catalog, "db.orders", commits=3)
    table = catalog.get_table("db.orders")
    every = committed(table, None)
    assert (every.snapshot_ids, every.rows, every.removed_files) == ((1, 2, 3), 9, 0)
    assert every.files == len(table.store.manifest_io.live_entries(table.snapshot_manager.latest()))  # type: ignore[arg-type]
    last = committed(table, 2)
    assert (last.snapshot_ids, last.rows) == ((3,), 3)
    assert committed(table, 3).snapshot_ids == ()


@pytest.mark.slow
def test_job_progress_counts_the_tasks_and_rows_of_its_jobs_only(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "in.parquet")
    pq.write_table(pa.table({"x": list(range(1000))}), path)
    sc = spark.sparkContext
    sc.setLocalProperty("spark.jobGroup.id", "outer")
    other = str(tmp_path / "other.parquet")
    pq.write_table(pa.table({"x": list(range(2000))}), other)
    spark.read.parquet(other).collect()  # not the command's
    console = Console(file=open(tmp_path / "bar.txt", "w"), force_terminal=True)  # noqa: SIM115
    with JobProgress(spark, "test", True, console) as job:
        spark.read.parquet(path).repartition(3).collect()
        deadline = time.monotonic() + 30  # Spark's listener bus reports asynchronously
        counts = job.counts.read()
        while counts.rows < 1000 and time.monotonic() < deadline:
            time.sleep(0.1)
            counts = job.counts.read()
    console.file.close()
    assert counts.tasks >= counts.tasks_done >= 4  # the read, and the 3 tasks after the shuffle
    assert counts.rows == 1000  # not the 2000 of the job outside the group
    assert sc.getLocalProperty("spark.jobGroup.id") == "outer"  # put back
    sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert "test" in (tmp_path / "bar.txt").read_text()
