"""System tables through Spark: ``option("table", "db.t$files")`` and the SQL door read the
same rows as the Python API, and refuse writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory
from paimon_pyspark.errors import CorruptRecordError
from paimon_pyspark.spark import sql
from paimon_pyspark.spark.relation import decode_rows, encode_rows

pytestmark = pytest.mark.slow


@pytest.mark.datasource
def test_system_tables_read_through_spark_and_sql(spark: SparkSession, tmp_path: Path) -> None:
    wh = str(tmp_path)
    sql(spark, "CREATE DATABASE s", warehouse=wh).collect()
    sql(
        spark,
        "CREATE TABLE s.t (k INT, v STRING, p STRING, PRIMARY KEY (p, k) NOT ENFORCED) "
        "PARTITIONED BY (p) WITH ('bucket' = '2')",
        warehouse=wh,
    ).collect()
    sql(spark, "INSERT INTO s.t VALUES (1, 'a', 'x'), (2, 'b', 'y')", warehouse=wh).collect()
    sql(spark, "INSERT INTO s.t VALUES (3, 'c', 'x')", warehouse=wh).collect()
    catalog = CatalogFactory.create({"warehouse": wh})
    for name in ("snapshots", "files", "partitions", "options"):
        ours = catalog.get_table(f"s.t${name}").to_arrow()
        df = (
            spark.read.format("paimon")
            .option("warehouse", wh)
            .option("table", f"s.t${name}")
            .load()
        )
        assert df.columns == ours.column_names
        assert df.count() == ours.num_rows > 0
    ids = sql(spark, "SELECT snapshot_id, commit_kind FROM s.`t$snapshots`", warehouse=wh)
    assert [r[0] for r in ids.collect()] == [1, 2]
    files = sql(
        spark,
        "SELECT partition, count(*) FROM s.`t$files` WHERE bucket >= 0 GROUP BY partition "
        "ORDER BY partition",
        warehouse=wh,
    ).collect()
    assert [(r[0], r[1]) for r in files] == [("{x}", 2), ("{y}", 1)]
    pruned = (
        spark.read.format("paimon")
        .option("warehouse", wh)
        .option("table", "s.t$snapshots")
        .option("filter", "snapshot_id = 2")
        .option("columns", "snapshot_id")
        .load()
        .collect()
    )
    assert [tuple(r) for r in pruned] == [(2,)]
    with pytest.raises(Exception, match="read-only"):
        df = spark.createDataFrame([("k", "v")], "key string, value string")
        df.write.format("paimon").option("warehouse", wh).option("table", "s.t$options").mode(
            "append"
        ).save()


def test_rows_cross_as_versioned_bytes() -> None:
    import pyarrow as pa

    rows = pa.table({"a": [1, 2], "b": ["x", None]})
    data = encode_rows(rows)
    assert data[:4] == b"PPsy" and decode_rows(data).equals(rows)
    with pytest.raises(CorruptRecordError, match="version"):
        decode_rows(b"PPsy\x09" + data[5:])
    with pytest.raises(CorruptRecordError, match="decode"):
        decode_rows(data[:40])
