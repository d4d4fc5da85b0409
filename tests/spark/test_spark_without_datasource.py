"""On a pyspark without the Python Data Source API (3.5), the doors that need it fail by name
and the others work: ``register()`` and the source classes raise UnsupportedPysparkError naming
what is missing and what to use instead, so ``format("paimon")`` (batch and streaming) stays
unknown to Spark, while ``write``, ``read``, ``sql`` and the procedures run on the same session,
and ``register(warehouse=...)`` gives ``sql`` its default warehouse.
Skipped, by the same feature check, where the API is there (tests/spark covers those doors)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark import spark as paimon_spark
from paimon_pyspark.errors import UnsupportedPysparkError
from paimon_pyspark.spark import compat, read, register, sql, write
from paimon_pyspark.spark.procedures import compact
from paimon_pyspark.spark.write import MAX_BYTES_PER_BATCH

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        compat.has_datasource_api(), reason="this pyspark has the Python Data Source API"
    ),
]

NAMED = (
    r'format\("paimon"\) is a Python Data Source, which needs pyspark >= 4\.1\.4: pyspark '
    r"3\.5\.\d+ has no DataSource, DataSourceArrowWriter, DataSourceStreamArrowWriter in "
    r"pyspark\.sql\.datasource\. Use paimon_pyspark\.spark\.write\(df, warehouse, 'db\.t'\) "
    r"and paimon_pyspark\.spark\.read\(spark, warehouse, 'db\.t'\) work on this pyspark\."
)


def test_the_data_source_doors_fail_by_name(spark: SparkSession, warehouse: str) -> None:
    with pytest.raises(UnsupportedPysparkError, match=NAMED):
        register(spark)
    for name in ("PaimonDataSource", "PaimonPySparkDataSource"):
        with pytest.raises(UnsupportedPysparkError, match=NAMED):
            getattr(paimon_spark, name)
    assert issubclass(UnsupportedPysparkError, ImportError)
    reader = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    with pytest.raises(Exception, match="paimon") as batch:
        reader.load()
    assert "DATA_SOURCE_NOT_FOUND" in str(batch.value), batch.value
    stream = spark.readStream.format("paimon").option("warehouse", warehouse)
    with pytest.raises(Exception, match="paimon") as streaming:
        stream.option("table", "db.t").load()
    assert "DATA_SOURCE_NOT_FOUND" in str(streaming.value), streaming.value
    view = f"CREATE TEMPORARY VIEW v USING paimon OPTIONS (warehouse '{warehouse}', table 'db.t')"
    with pytest.raises(Exception, match="DATA_SOURCE_NOT_FOUND"):
        spark.sql(view)


def test_the_other_doors_work_on_the_same_session(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    fields = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(fields, primary_keys=["id"], options={"bucket": "2"})
    )
    write(spark.range(0, 50).selectExpr("id", "concat('a-', id) as v"), warehouse, "db.t")
    arrow_limit = spark.conf.get(MAX_BYTES_PER_BATCH, None)
    register(spark, warehouse=warehouse)  # no source to register: sql's default warehouse only
    assert spark.conf.get(MAX_BYTES_PER_BATCH, None) == arrow_limit
    sql(spark, "UPDATE db.t SET v = 'b' WHERE id < 10").collect()
    expected = [*((i, "b") for i in range(10)), (10, "a-10"), (11, "a-11")]
    merged = read(spark, warehouse, "db.t", where="id < 12")  # buckets of two files: a merge
    assert sorted(tuple(r) for r in merged.collect()) == expected
    compact(spark, warehouse, "db.t")
    table = catalog.get_table("db.t")
    latest = table.snapshot_manager.get_latest_snapshot()
    assert latest is not None and latest.commit_kind == "COMPACT"
    rows = sorted(tuple(r) for r in read(spark, warehouse, "db.t", where="id < 12").collect())
    assert rows == expected
    first = sql(spark, "SELECT count(*) FROM db.t VERSION AS OF 1")
    assert first.collect()[0][0] == 50
    updated = read(spark, warehouse, "db.t", options={"incremental-between": "1,2"})
    assert sorted(tuple(r) for r in updated.collect()) == [(i, "b") for i in range(10)]
