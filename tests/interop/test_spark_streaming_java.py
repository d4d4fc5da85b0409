"""Java Paimon 1.4.2 reads the tables writeStream.format("paimon") writes, row for row, and
sees one APPEND snapshot per micro-batch."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark import FileSystemCatalog, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
LAYOUTS: dict[str, tuple[list[str], dict[str, str]]] = {
    "append-partitioned": ([], {}),
    "primary-key-bucketed": (["dt", "id"], {"bucket": "2"}),
}
"""Primary keys and options; both tables are partitioned by ``dt``."""
BATCHES = 3


def _source(root: Path) -> str:
    """File ``i`` holds ids 20*i .. 20*i+39 valued ``f<i>``: each file upserts half the last."""
    root.mkdir()
    start = time.time() - 1000
    for i in range(BATCHES):
        ids = list(range(20 * i, 20 * i + 40))
        path = root / f"part-{i}.parquet"
        data = {"id": ids, "v": [f"f{i}"] * 40, "dt": [f"d{n % 2}" for n in ids]}
        pq.write_table(pa.table(data, schema=SCHEMA), path)
        os.utime(path, (start + i, start + i))
    return str(root)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_java_reads_a_streamed_table(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    warehouse: str,
    java_oracle: JavaOracle,
    tmp_path: Path,
    layout: str,
) -> None:
    keys, options = LAYOUTS[layout]
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=keys, options=options
    )
    catalog.create_table("db.t", schema)
    frames = spark.readStream.schema("id BIGINT, v STRING, dt STRING")
    (
        frames.option("maxFilesPerTrigger", 1)
        .parquet(_source(tmp_path / "in"))
        .writeStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.t")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
        .awaitTermination()
    )

    table = catalog.get_table("db.t")
    rb = table.new_read_builder()
    ours = sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))
    rows = [[n, f"f{i}", f"d{n % 2}"] for i in range(BATCHES) for n in range(20 * i, 20 * i + 40)]
    if table.primary_keys:
        rows = list({r[0]: r for r in rows}.values())
    assert ours == sorted_rows(rows)
    assert sorted_rows(java_oracle.read_table(warehouse, "db", "t").rows) == ours
    kinds = [s["commitKind"] for s in java_oracle.snapshots(warehouse, "db", "t")]
    assert kinds == ["APPEND"] * BATCHES
