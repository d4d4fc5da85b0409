"""``partition.sink-strategy = hash``: Java's Spark writer shuffles a bucket-unaware (or
postpone) write by the partition keys, so each partition's rows are written by one task into
one file set; without it every task writes its own files into every partition it sees."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.spark import write

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string())])


def files_per_partition(spark: SparkSession, tmp_path: Path, strategy: str) -> dict[str, int]:
    warehouse = str(tmp_path / strategy)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    options = {"partition.sink-strategy": strategy}
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"], options=options)
    )
    rows = [(i, "ab"[(i // 3) % 2]) for i in range(40)]
    df = spark.createDataFrame(rows, "id long, dt string").repartition(4)  # both dt in each
    write(df, warehouse, "db.t")
    table = catalog.get_table("db.t")
    rb = table.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted((r["id"], r["dt"]) for r in got) == rows
    root = Path(table.path.removeprefix("file:"))
    out: dict[str, int] = {}
    for data_file in root.glob("dt=*/bucket-*/data-*"):  # one commit: every file is live
        dt = data_file.parent.parent.name
        out[dt] = out.get(dt, 0) + 1
    return out


def test_hash_sink_strategy_writes_each_partition_from_one_task(
    spark: SparkSession, tmp_path: Path
) -> None:
    spread = files_per_partition(spark, tmp_path, "none")
    hashed = files_per_partition(spark, tmp_path, "hash")
    assert set(spread) == set(hashed) == {"dt=a", "dt=b"}
    assert all(n > 1 for n in spread.values()), spread
    assert hashed == {"dt=a": 1, "dt=b": 1}
