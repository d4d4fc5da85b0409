"""``changelog-producer = input`` through the Spark doors: ``spark.write``, the SQL door's
INSERT, UPDATE, DELETE and MERGE, and the Structured Streaming sink each commit changelog files
holding the records they wrote (Java's MergeTreeWriter in every writer task)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from tests.integration.test_changelog_input import changes_of, check_fields

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.spark.sql import sql
from paimon_pyspark.spark.write import write

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _table(catalog: FileSystemCatalog) -> FileStoreTable:
    options = {"bucket": "2", "changelog-producer": "input"}
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def _changes(table: FileStoreTable, snapshot_id: int) -> list[tuple[str, int, str]]:
    assert check_fields(table, snapshot_id)
    changes = changes_of(table, table.snapshot_manager.snapshot(snapshot_id))
    return sorted((c[2], c[3], c[4]) for c in changes)


def test_spark_doors_and_the_streaming_sink_write_input_changelog(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: Path
) -> None:
    table = _table(catalog)
    df = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id BIGINT, v STRING")
    (first,) = write(df, warehouse, "db.t")
    assert _changes(table, first) == [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c")]

    sql(spark, "INSERT INTO db.t VALUES (4, 'd')", warehouse).collect()
    assert _changes(table, table.snapshot_manager.latest_id() or 0) == [("+I", 4, "d")]
    sql(spark, "UPDATE db.t SET v = 'b2' WHERE id = 2", warehouse).collect()
    assert _changes(table, table.snapshot_manager.latest_id() or 0) == [("+U", 2, "b2")]
    sql(spark, "DELETE FROM db.t WHERE id = 3", warehouse).collect()
    assert _changes(table, table.snapshot_manager.latest_id() or 0) == [("-D", 3, "c")]
    merge = (
        "MERGE INTO db.t t USING (SELECT 4L AS id, 'd2' AS v UNION ALL SELECT 6L, 'f') s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)"
    )
    sql(spark, merge, warehouse).collect()
    merged = _changes(table, table.snapshot_manager.latest_id() or 0)
    assert merged == [("+I", 6, "f"), ("+U", 4, "d2")]

    source = tmp_path / "in"
    source.mkdir()
    pq.write_table(
        pa.table({"id": pa.array([5, 1], pa.int64()), "v": ["e", "a2"]}), source / "0.parquet"
    )
    before = table.snapshot_manager.latest_id()
    query = (
        spark.readStream.schema("id BIGINT, v STRING")
        .parquet(str(source))
        .writeStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.t")
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(timeout=120)
    latest = table.snapshot_manager.latest_id()
    assert latest is not None and before is not None and latest > before
    streamed = [s for s in range(before + 1, latest + 1) if check_fields(table, s)]
    assert [c for s in streamed for c in _changes(table, s)] == [("+I", 1, "a2"), ("+I", 5, "e")]
    rb = catalog.get_table("db.t").new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted((r["id"], r["v"]) for r in rows) == [
        (1, "a2"),
        (2, "b2"),
        (4, "d2"),
        (5, "e"),
        (6, "f"),
    ]
