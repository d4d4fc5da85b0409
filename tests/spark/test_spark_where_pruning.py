"""Which doors open only the files a WHERE can match, shown by damage: every data file of the
other partitions is overwritten with bytes no reader decodes, so a read that opened one fails.

The doors that bind the filter to the relation prune: ``paimon_pyspark.spark.read(where=...)``,
the SQL door's one-table ``SELECT ... WHERE``, and ``format("paimon")`` with
``option("filter")``. ``spark.read.format("paimon").load().where(...)`` does not: on every
supported pyspark a pushed filter would be reused by a later unfiltered query on the same
relation (tests/versions/test_pyspark_versions.py, REUSES_PUSHED_READER), so the source pushes
nothing and Spark filters the rows after reading every file.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.spark import read, register, sql

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("name", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)
DAYS = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"]
KEPT = "dt = '2026-11-01' AND id < 40"
WANT = sorted((i, f"m-{i}") for i in range(0, 40, 4))
"""Rows of KEPT after the second commit renamed ids below 50."""


def _damaged_table(catalog: FileSystemCatalog) -> None:
    """A primary-key table of two commits in four partitions, two buckets each (so its splits
    need a merge), whose files outside 2026-11-01 are damaged."""
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "2"}
        ),
    )
    table = catalog.get_table("db.t")
    for prefix, ids in (("n", range(200)), ("m", range(50))):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            rows = {
                "id": list(ids),
                "name": [f"{prefix}-{i}" for i in ids],
                "dt": [DAYS[i % 4] for i in ids],
            }
            write.write_arrow(pa.table(rows, schema=SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
    damaged = 0
    for folder, _dirs, names in os.walk(table.path):
        day = os.path.basename(os.path.dirname(folder)).removeprefix("dt=")
        for name in names:
            if name.startswith("data-") and day in DAYS[1:]:
                with open(os.path.join(folder, name), "wb") as f:
                    f.write(b"not a data file")
                damaged += 1
    assert damaged >= 6 * 2  # 3 partitions x 2 buckets x 2 commits


def _rows(df: DataFrame) -> list[tuple[int, str]]:
    return sorted((r["id"], r["name"]) for r in df.collect())


def test_spark_read_and_sql_where_open_only_the_matching_partition(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _damaged_table(catalog)
    assert _rows(read(spark, warehouse, "db.t", where=KEPT, columns=["id", "name"])) == WANT
    query = f"SELECT id, name FROM db.t WHERE {KEPT}"
    assert _rows(sql(spark, query, warehouse=warehouse)) == WANT


@pytest.mark.datasource
def test_format_paimon_prunes_by_its_filter_option_and_not_by_where(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    _damaged_table(catalog)
    register(spark)
    reader = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    bound = reader.option("filter", KEPT).load()
    assert _rows(bound) == WANT
    assert bound.count() == len(WANT)
    unbound = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    with pytest.raises(Exception, match="(?i)parquet|not a data file|magic"):
        unbound.load().where(KEPT).collect()
