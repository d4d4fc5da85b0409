"""``changelog-producer = full-compaction`` through the Spark doors: a ``spark.write`` batch and
the SQL door's UPDATE and DELETE each end in a full compaction whose changelog is the diff; the
Structured Streaming sink compacts fully at the micro-batches ``full-compaction.delta-commits``
picks, as Java's Spark writer does (``(batchId + 1) % delta == 0``)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from tests.integration.test_changelog_full_compaction import Change, _changes

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.spark.sql import sql
from paimon_pyspark.spark.write import write

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _sorted(changes: list[Change]) -> list[Change]:
    """Changes of several commits, by key (each key's -U before its +U)."""
    return sorted(changes, key=lambda c: (c[1][0], c[0] != "-U"))


def test_spark_doors_and_the_streaming_sink_write_full_compaction_changelog(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: Path
) -> None:
    options = {
        "bucket": "1",
        "changelog-producer": "full-compaction",
        "full-compaction.delta-commits": "2",
    }
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    df = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id BIGINT, v STRING")
    write(df, warehouse, "db.t")
    assert _sorted(_changes(table, 0)) == [("+I", (1, "a")), ("+I", (2, "b")), ("+I", (3, "c"))]

    before = table.snapshot_manager.latest_id() or 0
    sql(spark, "UPDATE db.t SET v = 'b2' WHERE id = 2", warehouse).collect()
    sql(spark, "DELETE FROM db.t WHERE id = 3", warehouse).collect()
    assert _sorted(_changes(table, before)) == [
        ("-U", (2, "b")),
        ("+U", (2, "b2")),
        ("-D", (3, "c")),
    ]

    source = tmp_path / "in"
    source.mkdir()
    for i, (ids, values) in enumerate([([4], ["d"]), ([1], ["a2"]), ([5], ["e"])]):
        batch = pa.table({"id": pa.array(ids, pa.int64()), "v": values})
        pq.write_table(batch, source / f"{i}.parquet")
        os.utime(source / f"{i}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))
    before = table.snapshot_manager.latest_id() or 0
    query = (
        spark.readStream.schema("id BIGINT, v STRING")
        .option("maxFilesPerTrigger", 1)
        .parquet(str(source))
        .writeStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.t")
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(timeout=180)
    # micro-batch 0 (identifier 1) and 2 are not full; 1 (identifier 2) reports 0 and 1
    assert _sorted(_changes(table, before)) == [
        ("-U", (1, "a")),
        ("+U", (1, "a2")),
        ("+I", (4, "d")),
    ]
    rb = catalog.get_table("db.t").new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted((r["id"], r["v"]) for r in rows) == [(1, "a2"), (2, "b2"), (4, "d"), (5, "e")]
