"""Dynamic-bucket primary-key tables from Spark: ``spark.write`` runs Java's topology (shuffle
by key assigner, assign, shuffle by bucket, write); ``format('paimon')``'s agreed buckets are
tested in test_spark_format_dynamic_bucket.py."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.spark import write

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("pt", pa.int64(), nullable=False),
    ]
)


def _create(catalog: FileSystemCatalog, pk: list[str]) -> None:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["pt"],
            primary_keys=pk,
            options={"bucket": "-1", "dynamic-bucket.target-row-num": "100"},
        ),
    )


def test_spark_write_assigns_each_key_one_bucket_across_tasks(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _create(catalog, ["pk", "pt"])
    df = spark.range(0, 1000, numPartitions=4).selectExpr(
        "id as pk", "concat('a-', id) as v", "id % 2 as pt"
    )
    write(df, warehouse, "db.t")
    again = spark.range(500, 1500, numPartitions=3).selectExpr(
        "id as pk", "concat('b-', id) as v", "id % 2 as pt"
    )
    write(again, warehouse, "db.t")
    table = catalog.get_table("db.t")
    rb = table.new_read_builder()
    seen: dict[tuple[int, int], set[int]] = {}
    values = {}
    for split in rb.new_scan().plan().splits():
        for r in rb.new_read().to_arrow([split]).to_pylist():
            seen.setdefault((r["pt"], r["pk"]), set()).add(split.bucket)
            values[r["pk"]] = r["v"]
    assert len(values) == 1500
    assert all(len(b) == 1 for b in seen.values())
    assert values[10] == "a-10" and values[600] == "b-600"
    # 750 keys per partition, 100 per bucket: at least 8 buckets in each
    assert len({(pt, b) for (pt, _), bs in seen.items() for b in bs}) >= 16
