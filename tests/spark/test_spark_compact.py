"""``spark.procedures.compact`` on the session's local[2] Spark: the same result as the local
procedure, one COMPACT snapshot, and a failed job leaves no snapshot and no files."""

from __future__ import annotations

import datetime as dt
import os
import time
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.compact.plan import plan_compaction
from paimon_pyspark.procedures import compact as compact_here
from paimon_pyspark.spark.job import STAGING_DIR
from paimon_pyspark.spark.procedures import compact

pytestmark = pytest.mark.slow

ORDERS = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        ("price", pa.decimal128(32, 2)),
        ("ts", pa.timestamp("ms")),
        pa.field("dt", pa.string(), nullable=False),
    ]
)


def orders(ids: list[int], dt_: str = "a", version: int = 0) -> pa.Table:
    return pa.table(
        {
            "order_id": ids,
            "price": [Decimal(f"{i}.{version:02d}") for i in ids],
            "ts": [dt.datetime(2026, 11, 1, 0, 0, i % 60) for i in ids],
            "dt": [dt_] * len(ids),
        },
        schema=ORDERS,
    )


def pk_table(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        ORDERS, partition_keys=["dt"], primary_keys=["dt", "order_id"], options=options
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def commit(table: FileStoreTable, upserts: pa.Table, deletes: pa.Table | None = None) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(upserts)
        if deletes is not None:
            write.delete_arrow(deletes)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def rows(table: FileStoreTable) -> list[tuple[object, ...]]:
    rb = table.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in data.to_pylist())


def layout(table: FileStoreTable) -> list[tuple[bytes, int, int, int, int | None]]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return sorted(
        (e.partition, e.bucket, e.file.level, e.file.row_count, e.file.delete_row_count)
        for e in table.manifest_io.live_entries(snapshot)
    )


def data_files(table: FileStoreTable) -> set[str]:
    return {
        os.path.join(r, f) for r, _, fs in os.walk(table.path) for f in fs if f.startswith("data-")
    }


def write_history(table: FileStoreTable) -> None:
    for dt_ in ("a", "b"):
        commit(table, orders(list(range(0, 30)), dt_))
        commit(table, orders(list(range(20, 50)), dt_, 1), orders([3, 4], dt_))
        commit(table, orders(list(range(45, 60)), dt_, 2), orders([25], dt_))


@pytest.mark.parametrize("strategy", ["full", "minor"])
def test_spark_compaction_matches_the_local_procedure(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, strategy: str
) -> None:
    # write-only: the history's runs stay for the procedures to compact
    options = {"bucket": "2", "num-sorted-run.compaction-trigger": "2", "write-only": "true"}
    here = pk_table(catalog, "here", options)
    there = pk_table(catalog, "there", options)
    write_history(here)
    write_history(there)
    expected = rows(here)
    lines: list[str] = []

    local_id = compact_here(catalog, "db.here", compact_strategy=strategy)
    spark_id = compact(
        spark, warehouse, "db.there", compact_strategy=strategy, progress=lines.append
    )

    assert local_id is not None and spark_id == local_id
    here, there = catalog.get_table("db.here"), catalog.get_table("db.there")
    assert rows(there) == rows(here) == expected
    assert layout(there) == layout(here)
    assert there.snapshot_manager.snapshot(spark_id).commit_kind == "COMPACT"
    assert any(line.startswith("planned 4 compaction task") for line in lines)
    assert os.listdir(os.path.join(there.path, STAGING_DIR)) == []


def test_spark_compaction_of_an_unaware_append_table(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    catalog.create_table("db.logs", Schema.from_pyarrow_schema(schema, partition_keys=["dt"]))
    table = catalog.get_table("db.logs")
    for start in range(0, 60, 10):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(
                pa.table({"id": list(range(start, start + 10)), "dt": ["x"] * 5 + ["y"] * 5})
            )
            messages = write.prepare_commit()
        builder.new_commit().commit(messages)
    expected = rows(table)

    sid = compact(spark, warehouse, "db.logs", partitions=[{"dt": "x"}, {"dt": "y"}])

    table = catalog.get_table("db.logs")
    assert sid == 7 and rows(table) == expected
    assert len(layout(table)) == 2  # six small files per partition packed into one each
    assert compact(spark, warehouse, "db.logs") is None


def test_a_failed_compaction_job_leaves_no_snapshot_and_no_files(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    # dt=a: one disjoint big run (upgraded) and an overlapping pair (rewritten: a new file);
    # dt=b: every input corrupt, so its task fails on each attempt and the job fails
    options = {"bucket": "1", "target-file-size": "1 kb", "write-only": "true"}
    table = pk_table(catalog, "broken", options)
    commit(table, orders(list(range(0, 50)), "a"))
    commit(table, orders(list(range(100, 150)), "a"))
    commit(table, orders(list(range(120, 130)), "a", 1))
    commit(table, orders(list(range(0, 50)), "b"))
    commit(table, orders(list(range(25, 75)), "b", 1))
    plan = plan_compaction(table, True)
    assert sorted(t.partition_values for t in plan.tasks) == [("a",), ("b",)]
    for task in plan.tasks:
        if task.partition_values == ("b",):
            for f in task.files:
                Path(table.path, "dt=b", "bucket-0", f.file_name).write_bytes(b"garbage")
    before = data_files(table)

    with pytest.raises(Exception, match="cannot be read"):
        compact(spark, warehouse, "db.broken")

    assert catalog.get_table("db.broken").snapshot_manager.latest_id() == 5
    deadline = time.monotonic() + 20  # a task cancelled late cleans up after itself
    while data_files(table) != before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert data_files(table) == before
