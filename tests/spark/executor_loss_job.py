"""The Spark application test_executor_loss.py runs on a standalone cluster while it kills
executors. Usage::

    python executor_loss_job.py spark://127.0.0.1:<port> <warehouse> <rows> <ui port> <signal dir>

Three phases, each one Spark action the test kills an executor during:

- ``write``: ``paimon_pyspark.spark.write`` of ``rows`` rows into a new bucketed append table
  (a shuffle by bucket, then one writing task per bucket);
- ``compact``: the Spark compact procedure (full) on an append table of ``rows // 2`` rows in
  five small files per partition;
- ``merge``: ``merge_into`` of ``rows // 2`` source rows (half matching) into a primary-key table
  of ``rows // 2`` rows: every third match deleted, the other matches updated, the rest
  inserted.

The tables of the last two are made and filled by this process itself (no Spark job) while the
worker replaces the executor killed in the phase before.

Before each phase the application waits until two executors are registered (the worker of a
killed one starts a new one), runs the phase's jobs in job group ``<phase>``, and writes
``<signal dir>/<phase>.started`` so that the test knows whose tasks to look for. The outcome of
each phase (its snapshots before and after, its error if it failed, its jobs' task failures and
stage retries from the application's REST API) and every executor the application had are one
JSON object on the last line of stdout.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
import urllib.request
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

EXECUTOR_WAIT = 120.0
COMPACTED = pa.schema(
    [("id", pa.int64()), ("name", pa.string()), pa.field("p", pa.int32(), nullable=False)]
)
MERGED = pa.schema(
    [pa.field("k", pa.int64(), nullable=False), ("v", pa.int64()), ("s", pa.string())]
)


def rest(ui_port: int, app_id: str, path: str) -> list[dict[str, Any]]:
    """A list of the application's REST API; a busy machine may make the UI slow to answer."""
    url = f"http://127.0.0.1:{ui_port}/api/v1/applications/{app_id}/{path}"
    for attempt in range(10):
        try:
            with urllib.request.urlopen(url, timeout=20) as r:
                data: list[dict[str, Any]] = json.load(r)
                return data
        except OSError:
            if attempt == 9:
                raise
            time.sleep(1)
    raise AssertionError("unreachable")


def wait_for_executors(ui_port: int, app_id: str, n: int) -> list[str]:
    deadline = time.monotonic() + EXECUTOR_WAIT
    while True:
        ids = [str(e["id"]) for e in rest(ui_port, app_id, "executors") if e["id"] != "driver"]
        if len(ids) >= n or time.monotonic() > deadline:
            return ids
        time.sleep(0.5)


def latest(warehouse: str, table: str) -> int | None:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    database, name = table.split(".")
    if database not in catalog.list_databases() or name not in catalog.list_tables(database):
        return None
    return catalog.get_table(table).snapshot_manager.latest_id()


def create(
    warehouse: str,
    identifier: str,
    partition_keys: list[str],
    primary_keys: list[str],
    options: dict[str, str],
) -> FileStoreTable:
    """A table the phase's job works on, made in this (driver) process: not the kills' target."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    schema = MERGED if primary_keys else COMPACTED
    catalog.create_table(
        identifier,
        Schema.from_pyarrow_schema(schema, partition_keys, primary_keys, options),
    )
    return catalog.get_table(identifier)


def rows_of(start: int, stop: int) -> pa.Table:
    ids = np.arange(start, stop, dtype=np.int64)
    names = pc.binary_join_element_wise("name-", pc.cast(pa.array(ids), pa.string()), "")
    return pa.table({"id": ids, "name": names, "p": (ids % 4).astype(np.int32)}, COMPACTED)


def commit(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def main() -> None:
    master, warehouse, rows_arg, ui_arg, signal_dir = sys.argv[1:6]
    rows, ui_port = int(rows_arg), int(ui_arg)
    half = rows // 2
    started = time.monotonic()
    jvm_opts = os.environ.get("PAIMON_TEST_JVM_OPTS", "")
    spark = (
        SparkSession.builder.master(master)
        .appName("paimon_pyspark-executor-loss-test")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.port", str(ui_port))  # the test reads the REST API to time its kills
        .config("spark.port.maxRetries", "0")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", jvm_opts)
        .config("spark.executor.extraJavaOptions", jvm_opts)
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", "2")
        .config("spark.executor.memory", "512m")
        .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "60s")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    app_id = sc.applicationId
    session_s = round(time.monotonic() - started, 2)

    import paimon_pyspark.spark as paimon_spark
    from paimon_pyspark.spark.merge import merge_into
    from paimon_pyspark.spark.procedures import compact

    def source(start: int, n: int, parts: int) -> DataFrame:
        return spark.range(start, start + n, numPartitions=parts).selectExpr(
            "id", "concat('name-', id) AS name", "CAST(id % 4 AS INT) AS p"
        )

    def prepare_compact() -> None:
        # five commits, one file per partition each: five small files in each of 4 partitions
        table = create(warehouse, "db.compacted", ["p"], [], {"write-only": "true"})
        for i in range(5):
            start, stop = i * half // 5, (i + 1) * half // 5
            commit(table, rows_of(start, stop))

    def prepare_merge() -> None:
        opts = {"bucket": "4", "write-only": "true"}
        table = create(warehouse, "db.merged", [], ["k"], opts)
        k = pa.array(range(half), pa.int64())
        commit(table, pa.table({"k": k, "v": k, "s": pa.array(["t"] * half)}))

    def run_write() -> object:
        return paimon_spark.write(
            source(0, rows, 8),
            warehouse,
            "db.appended",
            options={"create": "true", "bucket": "4", "bucket-key": "id"},
        )

    def run_compact() -> object:
        return compact(spark, warehouse, "db.compacted", compact_strategy="full")

    def run_merge() -> object:
        src = spark.range(half // 2, half // 2 + half, numPartitions=4).selectExpr(
            "id AS k", "-id AS v", "'s' AS s"
        )
        return (
            merge_into(spark, warehouse, "db.merged", src, "t.k = src.k", "t", "src")
            .when_matched_delete("src.k % 3 = 0")
            .when_matched_update({"v": "src.v", "s": "src.s"})
            .when_not_matched_insert_all()
            .execute()
        )

    phases: list[tuple[str, str, Callable[[], None] | None, Callable[[], object]]] = [
        ("write", "db.appended", None, run_write),
        ("compact", "db.compacted", prepare_compact, run_compact),
        ("merge", "db.merged", prepare_merge, run_merge),
    ]
    with open(os.path.join(signal_dir, "app"), "w") as f:
        f.write(app_id)
    outcomes: dict[str, object] = {}
    for name, table, prepare, run in phases:
        if prepare is not None:
            sc.setJobGroup(f"prepare-{name}", "not killed")
            prepare()
        executors = wait_for_executors(ui_port, app_id, 2)
        before = latest(warehouse, table)
        sc.setJobGroup(name, name)
        open(os.path.join(signal_dir, f"{name}.started"), "w").close()
        t0 = time.monotonic()
        error = None
        try:
            returned = run()
        except Exception as e:  # the test decides whether a failure is acceptable
            returned, error = None, "".join(traceback.format_exception(e))[-3000:]
        seconds = round(time.monotonic() - t0, 2)
        open(os.path.join(signal_dir, f"{name}.done"), "w").close()
        jobs = [j for j in rest(ui_port, app_id, "jobs") if j.get("jobGroup") == name]
        stage_ids = {s for j in jobs for s in j["stageIds"]}
        attempts = [s for s in rest(ui_port, app_id, "stages") if s["stageId"] in stage_ids]
        outcomes[name] = {
            "table": table,
            "executors_at_start": executors,
            "before": before,
            "after": latest(warehouse, table),
            "returned": returned,
            "error": error,
            "seconds": seconds,
            "jobs": len(jobs),
            "tasks": sum(int(j["numTasks"]) for j in jobs),
            "failed_tasks": sum(int(s["numFailedTasks"]) for s in attempts),
            "stage_retries": sum(1 for s in attempts if int(s["attemptId"]) > 0),
        }
    wait_for_executors(ui_port, app_id, 2)  # the last kill's replacement, as before a phase
    every_executor = [
        {k: e.get(k) for k in ("id", "isActive", "removeReason", "totalTasks", "failedTasks")}
        for e in rest(ui_port, app_id, "allexecutors")
        if e["id"] != "driver"
    ]
    spark.stop()
    result = {
        "app_id": app_id,
        "session_s": session_s,
        "total_s": round(time.monotonic() - started, 2),
        "phases": outcomes,
        "executors": every_executor,
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
