"""Maintenance after every commit of the Spark doors, and partition mark-done through them.

Each door commits through TableCommit (the driver's commit), so each runs the table's
maintenance (maintenance/commit_maintenance.py) and, for a batch write, marks its partitions
done under ``partition.end-input-to-done``. The observable is the table: with
``snapshot.num-retained.max = 1`` a door whose commit follows a Python one and maintains
leaves one snapshot.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession
from tests.integration.table_helpers import write_commit

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.spark import sql as paimon_sql
from paimon_pyspark.spark import write as spark_write

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
OPTIONS = {
    "snapshot.num-retained.min": "1",
    "snapshot.num-retained.max": "1",
    "partition.end-input-to-done": "true",
}


def success_dirs(path: str) -> set[str]:
    return {os.path.relpath(r, path) for r, _, names in os.walk(path) if "_SUCCESS" in names}


def frame(spark: SparkSession, i: int) -> DataFrame:
    return spark.createDataFrame([(i, f"d{i}"), (i + 100, f"d{i}")], "id BIGINT, dt STRING")


def by_write(spark: SparkSession, warehouse: str, tmp: Path, i: int) -> None:
    spark_write(frame(spark, i), warehouse, "db.t")


def by_format(spark: SparkSession, warehouse: str, tmp: Path, i: int) -> None:
    writer = frame(spark, i).write.format("paimon").mode("append")
    writer.option("warehouse", warehouse).option("table", "db.t").save()


def by_sql(spark: SparkSession, warehouse: str, tmp: Path, i: int) -> None:
    paimon_sql(spark, f"INSERT INTO db.t VALUES ({i}, 'd{i}'), ({i + 100}, 'd{i}')", warehouse)


def by_stream(spark: SparkSession, warehouse: str, tmp: Path, i: int) -> None:
    source = tmp / "source"
    frame(spark, i).write.mode("append").parquet(str(source))
    query = (
        spark.readStream.schema("id BIGINT, dt STRING")
        .parquet(str(source))
        .writeStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.t")
        .option("checkpointLocation", str(tmp / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(timeout=120)


DOORS: dict[str, Callable[[SparkSession, str, Path, int], None]] = {
    "spark.write": by_write,
    "format(paimon)": by_format,
    "sql INSERT": by_sql,
    "writeStream": by_stream,
}


@pytest.mark.datasource
@pytest.mark.parametrize("door", sorted(DOORS))
def test_every_spark_door_runs_the_commit_maintenance(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: Path, door: str
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, ["dt"], options=OPTIONS))
    table = catalog.get_table("db.t")
    write_commit(table, pa.table({"id": [1], "dt": ["d1"]}, schema=SCHEMA))
    DOORS[door](spark, warehouse, tmp_path, 2)
    sm = table.snapshot_manager
    assert sm.list_ids() == [sm.latest_id()] and (sm.latest_id() or 0) >= 2
    marked = success_dirs(table.path)
    # a micro-batch is not the end of input: streams mark nothing (Flink's idle-time-to-done)
    assert marked == ({"dt=d1"} if door == "writeStream" else {"dt=d1", "dt=d2"})


def test_spark_procedures_maintain_and_mark_partition_done_is_a_call(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    options = {**OPTIONS, "write-only": "true", "bucket": "1", "bucket-key": "id"}
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, ["dt"], options=options))
    table = catalog.get_table("db.t")
    for i in range(5):  # compaction.min.file-num files in the bucket
        write_commit(table, pa.table({"id": [i], "dt": ["a"]}, schema=SCHEMA))
    assert len(table.snapshot_manager.list_ids()) == 5  # write-only: nothing expired
    paimon_sql(spark, "CALL sys.compact(`table` => 'db.t')", warehouse).collect()
    sm = catalog.get_table("db.t").snapshot_manager
    # compact turns write-only off (Java's CompactProcedure): its commit maintains
    assert sm.list_ids() == [6]

    rows = paimon_sql(spark, "CALL sys.mark_partition_done('db.t', 'dt=a;dt=b')", warehouse)
    assert [tuple(r) for r in rows.collect()] == [(True,)]
    named = "CALL sys.mark_partition_done(`table` => 'db.t', partitions => 'dt=c')"
    paimon_sql(spark, named, warehouse).collect()
    assert success_dirs(table.path) == {"dt=a", "dt=b", "dt=c"}
