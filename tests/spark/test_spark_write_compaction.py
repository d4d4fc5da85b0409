"""Compaction while writing through both Spark doors.

``paimon_pyspark.spark.write`` gives each bucket one task, which compacts it before returning,
as Java's Spark writer does. ``format("paimon")`` tasks may share a bucket, so they never
compact; the driver compacts the written buckets after the data commit instead. Either way a
write that compacts is an APPEND snapshot and a COMPACT one, and the rows stay the same.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.spark import write

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def kinds(table: FileStoreTable) -> list[str]:
    latest = table.snapshot_manager.latest_id() or 0
    return [table.snapshot_manager.snapshot(i).commit_kind for i in range(1, latest + 1)]


def levels(table: FileStoreTable) -> list[int]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return sorted(e.file.level for e in table.manifest_io.live_entries(snapshot))


def test_spark_write_tasks_compact_their_buckets(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    )
    ids = []
    for i in range(5):
        df = spark.createDataFrame([(i % 3, f"v{i}")], "id bigint, v string")
        ids.append(write(df, warehouse, "db.t"))
    table = catalog.get_table("db.t")
    assert [len(x) for x in ids] == [1, 1, 1, 1, 2]  # the 5th write finds five sorted runs
    assert kinds(table) == ["APPEND"] * 5 + ["COMPACT"]
    assert levels(table) == [5]
    rows = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    got = {r["id"]: r["v"] for r in rows.load().collect()}
    assert got == {0: "v3", 1: "v4", 2: "v2"}


def test_format_paimon_driver_compacts_buckets_tasks_shared(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(SCHEMA, options={"bucket": "1", "bucket-key": "id"}),
    )
    for w in range(3):  # two tasks each, both writing the one bucket: 2, 4, then 6 files
        df = spark.createDataFrame([(w * 10 + i, f"w{w}") for i in range(4)], "id bigint, v string")
        df.repartition(2).write.format("paimon").option("warehouse", warehouse).option(
            "table", "db.t"
        ).mode("append").save()
    table = catalog.get_table("db.t")
    # no task compacted; after the 3rd commit the driver rewrote the oldest five files into one
    assert kinds(table) == ["APPEND", "APPEND", "APPEND", "COMPACT"]
    assert len(levels(table)) == 2
    got = sorted(
        r["id"]
        for r in spark.read.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.t")
        .load()
        .collect()
    )
    assert got == sorted(w * 10 + i for w in range(3) for i in range(4))
