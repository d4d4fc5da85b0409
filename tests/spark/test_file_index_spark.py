"""Skipping by file index through the Spark doors, shown by damage: the data files a point
lookup's index rules out are overwritten with garbage, and ``paimon_pyspark.spark.read``, the
``paimon`` data source's ``filter`` option and the SQL door still return the right rows (that
an unindexed read fails on such garbage is shown by tests/integration/test_file_index.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.spark import read, register, sql

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def test_spark_doors_skip_files_by_their_index(spark: SparkSession, tmp_path: Path) -> None:
    """Separate ``.index`` files (read at plan time); the Python API's test covers both
    placements."""
    warehouse = str(tmp_path)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    options = {
        "file-index.bloom-filter.columns": "id",
        "file-index.bloom-filter.id.items": "200",
        "file-index.in-manifest-threshold": "1 b",
    }
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options=options))
    table = catalog.get_table("db.t")
    for i in range(4):  # ids 0 and 1000 in every file: min/max stats keep them all
        ids = [0, *range(100 * i + 1, 100 * i + 41), 1000]
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.table({"id": ids, "name": [f"n{x}" for x in ids]}, SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
    rb = table.new_read_builder()
    every = {
        f.file_name: os.path.join(s.bucket_path, f.file_name)
        for s in rb.new_scan().plan().splits()
        for f in s.files
    }
    pb = rb.new_predicate_builder()
    kept = {
        f.file_name
        for s in rb.with_filter(pb.equal("id", 215)).new_scan().plan().splits()
        for f in s.files
    }
    assert len(every) == 4 and len(kept) == 1
    for name in set(every) - kept:
        Path(every[name]).write_bytes(b"garbage, not parquet")

    got = read(spark, warehouse, "db.t", where="id = 215").collect()
    assert [tuple(r) for r in got] == [(215, "n215")]
    register(spark)
    df = (
        spark.read.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.t")
        .option("filter", "id IN (215, 7777)")
        .load()
    )
    assert [tuple(r) for r in df.collect()] == [(215, "n215")]
    register(spark, warehouse=warehouse)
    try:
        assert [tuple(r) for r in sql(spark, "SELECT * FROM db.t WHERE id = 215").collect()] == [
            (215, "n215")
        ]
    finally:
        sql(spark, "USE default").collect()
