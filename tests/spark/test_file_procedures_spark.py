"""The file procedures through Spark: ``CALL sys.remove_unexisting_files`` (its Spark job
twin, one task per partition group, Java's ``fileName`` rows), ``compact_manifest``,
``compact_database`` in Spark's and Flink's orders and ``purge_files``, through
``paimon_pyspark.spark.sql``; and the twin called directly."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from tests.integration.table_helpers import read_all, write_commit

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.spark import procedures as spark_procedures
from paimon_pyspark.spark import register, sql

pytestmark = pytest.mark.slow


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement).collect()]


def lose(table: FileStoreTable, dt: str) -> str:
    """Delete the data file of partition ``dt``; returns its path."""
    store = table.store
    latest = store.snapshot_manager.latest()
    assert latest is not None
    (e,) = [e for e in store.manifest_io.live_entries(latest) if dt.encode() in e.partition]
    path = os.path.join(store.bucket_path_of(e.partition, e.bucket), e.file.file_name)
    os.remove(path)
    return path


def test_file_procedures_through_spark(spark: SparkSession, tmp_path: Any) -> None:
    wh = str(tmp_path)
    register(spark, warehouse=wh)
    catalog = CatalogFactory.create({"warehouse": wh})
    sql(spark, "CREATE DATABASE fp").collect()
    try:
        sql(
            spark,
            "CREATE TABLE fp.t (id INT, dt STRING) PARTITIONED BY (dt) "
            "WITH ('bucket' = '1', 'bucket-key' = 'id')",
        ).collect()
        table = catalog.get_table("fp.t")
        schema = pa.schema([("id", pa.int32()), ("dt", pa.string())])
        for i in range(3):
            write_commit(table, pa.table({"id": [i, i + 10], "dt": ["a", "b"]}, schema=schema))
        latest = table.snapshot_manager.latest_id()
        assert latest is not None

        # compact_manifest: one COMPACT snapshot, then nothing to merge
        assert rows(spark, "CALL sys.compact_manifest(`table` => 'fp.t')") == [(True,)]
        assert table.snapshot_manager.latest().commit_kind == "COMPACT"  # type: ignore[union-attr]
        latest += 1
        assert rows(spark, "CALL sys.compact_manifest('fp.t', '')") == [(True,)]
        assert table.snapshot_manager.latest_id() == latest

        # compact_database: Spark's order (including_databases, including_tables, ...) and
        # Flink's (including_databases, mode, including_tables, ...)
        done = "Compact database finished. Success: 1, Failed: 0"
        assert rows(spark, "CALL sys.compact_database('fp', 'fp\\\\.t')") == [(done,)]
        assert table.snapshot_manager.latest().commit_kind == "COMPACT"  # type: ignore[union-attr]
        none = "Compact database finished. Success: 0, Failed: 0"
        assert rows(spark, "CALL sys.compact_database('fp', 'divided', 'fp\\\\.x')") == [(none,)]

        # remove_unexisting_files: a Spark task per partition group; the twin directly too
        lost_b = lose(table, "b")
        call = "CALL sys.remove_unexisting_files(`table` => 'fp.t', dry_run => true)"
        found = sql(spark, call)
        assert found.columns == ["fileName"]
        assert [tuple(r) for r in found.collect()] == [(lost_b,)]
        before = table.snapshot_manager.latest_id()
        assert spark_procedures.remove_unexisting_files(spark, wh, "fp.t", parallelism=2) == [
            lost_b
        ]
        assert table.snapshot_manager.latest().commit_kind == "OVERWRITE"  # type: ignore[union-attr]
        assert table.snapshot_manager.latest_id() == (before or 0) + 1
        assert read_all(table).num_rows == 3

        # purge_files
        write_commit(table, pa.table({"id": [7], "dt": ["c"]}, schema=schema))
        assert rows(spark, "CALL sys.purge_files(`table` => 'fp.t')") == [("Success",)]
        assert read_all(table).num_rows == 0
        assert table.snapshot_manager.list_ids() == [table.snapshot_manager.latest_id()]
    finally:
        sql(spark, "USE default").collect()
