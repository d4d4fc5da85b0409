"""Java Paimon 1.4.2 reads the cross-partition upsert table ``paimon_pyspark.spark.write``
wrote with several assigner tasks: the same rows as ours, each key in one partition."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.spark import write

pytestmark = [pytest.mark.java, pytest.mark.slow]


def test_java_reads_a_spark_written_cross_partition_table(
    spark: SparkSession, java_oracle: JavaOracle, tmp_path: Path
) -> None:
    schema = pa.schema(
        [
            pa.field("pk", pa.int32(), nullable=False),
            ("v", pa.int32()),
            pa.field("pt", pa.int32(), nullable=False),
        ]
    )
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    options = {
        "bucket": "-1",
        "dynamic-bucket.target-row-num": "5",
        "dynamic-bucket.assigner-parallelism": "3",
    }
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            schema, partition_keys=["pt"], primary_keys=["pk"], options=options
        ),
    )
    rnd = random.Random(3)
    model: dict[int, tuple[int, int]] = {}
    for round_ in range(3):
        batch = {k: (k, round_ * 100 + k, rnd.randrange(3)) for k in rnd.sample(range(40), 25)}
        for k, v, p in batch.values():
            model[k] = (v, p)
        df = spark.createDataFrame(list(batch.values()), "pk int, v int, pt int").repartition(3)
        write(df, str(tmp_path), "db.t")
    expected = sorted_rows([[k, v, p] for k, (v, p) in model.items()])
    table = catalog.get_table("db.t")
    rb = table.new_read_builder()
    ours = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    assert sorted_rows([[r["pk"], r["v"], r["pt"]] for r in ours.to_pylist()]) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == expected
