"""The Spark application test_standalone_cluster.py runs against a standalone cluster.

It runs as its own process: one SparkContext per process, and the pytest process already has
its local one. Usage::

    python cluster_job.py spark://127.0.0.1:<port> <warehouse>

For each layout (unpartitioned, partitioned, bucketed) it writes rows 0..999 with
``df.write.format("paimon")`` (creating the table from the DataFrame's schema), rows 1000..1499
with ``paimon_pyspark.spark.write``, and reads the table back with ``spark.read.format("paimon")``
(all rows, a filter, snapshot 1). Every row carries the pid and working directory of the Python
worker that made it, and each row read the directory of the worker that read it: on a standalone
cluster an executor runs in ``<worker work dir>/<app id>/<executor id>``, so the test can tell
which executor did what. The result, with step timings, is one JSON object on the last line of
stdout. JVM options for driver and executors come from PAIMON_TEST_JVM_OPTS.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

LAYOUTS: dict[str, dict[str, str]] = {
    "unpartitioned": {},
    "partitioned": {"partition-keys": "dt"},
    "bucketed": {"partition-keys": "dt", "bucket": "3", "bucket-key": "id"},
}


def tag_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Runs in a Python worker of an executor: stamp each row with where it was made."""
    pid, task_dir = os.getpid(), os.getcwd()
    for batch in batches:
        n = batch.num_rows
        batch = batch.append_column("pid", pa.array([pid] * n, pa.int64()))
        yield batch.append_column("task_dir", pa.array([task_dir] * n, pa.string()))


def tag_read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Runs where Spark reads a split: stamp each row read with the reading worker's directory."""
    task_dir = os.getcwd()
    for batch in batches:
        yield batch.append_column("read_dir", pa.array([task_dir] * batch.num_rows, pa.string()))


def read_schema(df: DataFrame) -> StructType:
    return StructType([*df.schema.fields, StructField("read_dir", StringType(), False)])


def source(spark: SparkSession, start: int, n: int) -> DataFrame:
    base = spark.range(start, start + n, numPartitions=4).selectExpr(
        "id", "concat('name-', id) AS name", "concat('2026-11-0', id % 3 + 1) AS dt"
    )
    schema = StructType(
        [
            *base.schema.fields,
            StructField("pid", LongType(), False),
            StructField("task_dir", StringType(), False),
        ]
    )
    return base.mapInArrow(tag_rows, schema)


def run(spark: SparkSession, warehouse: str) -> dict[str, object]:
    import paimon_pyspark.spark as paimon_spark

    paimon_spark.register(spark)

    def reader(**options: str) -> DataFrame:
        r = spark.read.format("paimon").option("warehouse", warehouse)
        for k, v in options.items():
            r = r.option(k, v)
        return r.load()  # a new DataFrame per query: pyspark 4.3 reuses a relation's reader

    layouts: dict[str, object] = {}
    timings: list[tuple[str, float]] = []
    t0 = time.monotonic()

    def lap(what: str) -> None:
        nonlocal t0
        timings.append((what, round(time.monotonic() - t0, 2)))
        t0 = time.monotonic()

    for layout, options in LAYOUTS.items():
        table = f"db.{layout}"
        writer = source(spark, 0, 1000).write.format("paimon")
        for k, v in {"warehouse": warehouse, "table": table, "create": "true", **options}.items():
            writer = writer.option(k, v)
        writer.mode("append").save()
        lap(f"{layout} format write")
        snapshots = paimon_spark.write(source(spark, 1000, 500), warehouse, table)
        lap(f"{layout} spark.write")
        read = reader(table=table)
        rows = [list(r) for r in read.mapInArrow(tag_read, read_schema(read)).collect()]
        lap(f"{layout} read")
        filtered = reader(table=table).where("dt = '2026-11-02' AND id >= 1200").count()
        lap(f"{layout} filtered")
        first = reader(table=table, **{"snapshot-id": "1"}).count()
        lap(f"{layout} time travel")
        layouts[layout] = {
            "spark_write_snapshots": snapshots,
            "rows": rows,
            "filtered_count": filtered,
            "snapshot_1_count": first,
        }
    return {
        "driver_pid": os.getpid(),
        "app_id": spark.sparkContext.applicationId,
        "master": spark.sparkContext.master,
        "default_parallelism": spark.sparkContext.defaultParallelism,
        "layouts": layouts,
        "timings": timings,
    }


def main() -> None:
    master, warehouse = sys.argv[1], sys.argv[2]
    started = time.monotonic()
    spark = (
        SparkSession.builder.master(master)
        .appName("paimon_pyspark-standalone-test")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", os.environ.get("PAIMON_TEST_JVM_OPTS", ""))
        .config("spark.executor.extraJavaOptions", os.environ.get("PAIMON_TEST_JVM_OPTS", ""))
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", "2")
        .config("spark.executor.memory", "512m")
        # start the first job only once both executors are up, so both get tasks
        .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "60s")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    session_s = round(time.monotonic() - started, 2)
    try:
        result = run(spark, warehouse)
        result["session_s"] = session_s
    finally:
        spark.stop()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
