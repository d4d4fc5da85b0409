"""Java Paimon 1.4.2 and a dynamic-bucket table ``df.write.format("paimon")`` wrote from 4
tasks: Java reads our rows, Java's upserts afterwards (its HashBucketAssigner loads our merged
index) duplicate no key, and our next job keeps the buckets Java gave."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
OPTIONS = {"bucket": "-1", "dynamic-bucket.target-row-num": "20"}


def _save(spark: SparkSession, rows: list[tuple[int, int, int]], warehouse: Path) -> None:
    df = spark.createDataFrame(rows, "pk int, v int, pt int").repartition(4)
    df.write.format("paimon").option("warehouse", str(warehouse)).option("table", "db.t").option(
        "parallelism", "3"
    ).mode("append").save()


def _ours(table: FileStoreTable) -> tuple[list[list[object]], dict[tuple[int, int], list[int]]]:
    """Our rows, and the buckets each (pt, pk) is in."""
    rows: list[list[object]] = []
    buckets: dict[tuple[int, int], list[int]] = {}
    rb = table.new_read_builder()
    for split in rb.new_scan().plan().splits():
        for r in rb.new_read().to_arrow([split]).to_pylist():
            rows.append([r["pk"], r["v"], r["pt"]])
            buckets.setdefault((r["pt"], r["pk"]), []).append(split.bucket)
    return sorted_rows(rows), buckets


def test_java_reads_and_upserts_a_format_paimon_dynamic_bucket_table(
    spark: SparkSession, java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["pt"], primary_keys=["pk", "pt"], options=OPTIONS
        ),
    )
    table = catalog.get_table("db.t")
    model: dict[tuple[int, int], int] = {}

    def expect() -> list[list[object]]:
        return sorted_rows([[pk, v, pt] for (pk, pt), v in model.items()])

    for round_, keys in enumerate((range(0, 120), range(60, 200))):
        rows = [(k, round_ * 1000 + k, k % 3) for k in keys for _ in range(2)]
        _save(spark, rows, tmp_path)
        model.update({(k, pt): v for k, v, pt in rows})
    ours, buckets = _ours(table)
    assert ours == expect()
    assert all(len(b) == 1 for b in buckets.values())
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == expect()
    placed = {key: b[0] for key, b in buckets.items()}

    upserts = [[k, 5000 + k, k % 3] for k in range(150, 260, 3)]
    java_oracle.write_rows(tmp_path, "db", "t", upserts)
    model.update({(k, pt): v for k, v, pt in upserts})
    ours, buckets = _ours(table)
    assert ours == expect()
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == expect()
    assert all(len(b) == 1 for b in buckets.values())
    assert all(buckets[key] == [b] for key, b in placed.items())  # Java kept our buckets
    placed = {key: b[0] for key, b in buckets.items()}

    rows = [(k, 9000 + k, k % 3) for k in range(240, 300) for _ in range(2)]
    _save(spark, rows, tmp_path)
    model.update({(k, pt): v for k, v, pt in rows})
    ours, buckets = _ours(table)
    assert ours == expect()
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == expect()
    assert all(len(b) == 1 for b in buckets.values())
    assert all(buckets[key] == [b] for key, b in placed.items())  # we kept Java's buckets
