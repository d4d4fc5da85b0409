"""Tables written through Spark (both doors) read identically by us, pypaimon and Java."""

from __future__ import annotations

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from pypaimon_oracle import PypaimonOracle
from pyspark.sql import SparkSession

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.spark import write

pytestmark = [pytest.mark.java, pytest.mark.pypaimon, pytest.mark.slow]

SCHEMA = pa.schema(
    [("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64()), ("dt", pa.string())]
)
LAYOUTS = {
    "unpartitioned": ([], {}),
    "partitioned": (["dt"], {}),
    "bucketed": (["dt"], {"bucket": "4", "bucket-key": "id"}),
}


@pytest.mark.parametrize("door", ["format", "spark.write"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_spark_written_table_reads_the_same_everywhere(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    warehouse: str,
    java_oracle: JavaOracle,
    pypaimon_oracle: PypaimonOracle,
    layout: str,
    door: str,
) -> None:
    partition_keys, options = LAYOUTS[layout]
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=partition_keys, options=options)
    )
    df = spark.range(0, 2000, numPartitions=3).selectExpr(
        "id", "concat('n', id) as name", "id * 0.5 as amount", "concat('d', id % 3) as dt"
    )
    if door == "format":
        df.write.format("paimon").option("warehouse", warehouse).option("table", "db.t").mode(
            "append"
        ).save()
    else:
        write(df, warehouse, "db.t")

    table = catalog.get_table("db.t")
    rb = table.new_read_builder()
    ours = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    expected = sorted_rows(canonical_rows(ours))
    assert len(expected) == 2000
    assert sorted_rows(java_oracle.read_table(warehouse, "db", "t").rows) == expected
    theirs = pypaimon_oracle.read(warehouse, "db.t")
    assert sorted_rows(canonical_rows(theirs.select(ours.column_names))) == expected


@pytest.mark.parametrize("door", ["format", "spark.write"])
def test_spark_upserts_into_a_primary_key_table_read_the_same_everywhere(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    warehouse: str,
    java_oracle: JavaOracle,
    pypaimon_oracle: PypaimonOracle,
    door: str,
) -> None:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "3"}
        ),
    )
    for version in range(3):  # every write upserts the same keys from 3 tasks
        df = spark.range(0, 900, numPartitions=3).selectExpr(
            "id",
            f"concat('v{version}-', id) as name",
            f"id + {version} * 0.25 as amount",
            "concat('d', id % 3) as dt",
        )
        if door == "format":
            df.write.format("paimon").option("warehouse", warehouse).option("table", "db.t").mode(
                "append"
            ).save()
        else:
            write(df, warehouse, "db.t")

    table = catalog.get_table("db.t")
    rb = table.new_read_builder()
    ours = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    expected = sorted_rows([[i, f"v2-{i}", i + 0.5, f"d{i % 3}"] for i in range(900)])
    assert sorted_rows(canonical_rows(ours)) == expected
    assert sorted_rows(java_oracle.read_table(warehouse, "db", "t").rows) == expected
    theirs = pypaimon_oracle.read(warehouse, "db.t")
    assert sorted_rows(canonical_rows(theirs.select(ours.column_names))) == expected
