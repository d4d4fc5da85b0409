"""``spark.procedures.compact`` with ``order_strategy``: the sort runs as Spark tasks (one per
partition) and gives the local procedure's files; positional blanks work there too."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact as compact_here
from paimon_pyspark.spark.job import STAGING_DIR
from paimon_pyspark.spark.procedures import compact

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("x", pa.int32()), ("dt", pa.string())]
)


def table_of(catalog: FileSystemCatalog, name: str) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], options={"target-file-size": "4 kb"}
    )
    catalog.create_table(f"db.{name}", schema)
    table = catalog.get_table(f"db.{name}")
    rng = np.random.default_rng(2)
    for dt in ("a", "b"):
        for part in np.array_split(rng.permutation(1500), 3):
            ids = part.astype(np.int64)
            data = pa.table(
                {"id": ids, "x": (ids % 40).astype(np.int32), "dt": [dt] * len(ids)}, schema=SCHEMA
            )
            builder = table.new_batch_write_builder()
            with builder.new_write() as write:
                write.write_arrow(data)
                messages = write.prepare_commit()
            builder.new_commit().commit(messages)
    return table


def layout(table: FileStoreTable) -> list[tuple[bytes, int, int, bytes, bytes]]:
    """Each live file's partition, row count, first sequence number and value bounds."""
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return sorted(
        (
            e.partition,
            e.file.row_count,
            e.file.min_sequence_number,
            e.file.value_stats.min_values,
            e.file.value_stats.max_values,
        )
        for e in table.manifest_io.live_entries(snapshot)
    )


def rows(table: FileStoreTable) -> list[tuple[object, ...]]:
    rb = table.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in data.to_pylist())


def test_spark_sort_compaction_matches_the_local_procedure(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    here, there = table_of(catalog, "here"), table_of(catalog, "there")
    expected = rows(here)
    local_id = compact_here(catalog, "db.here", "", "zorder", "id,x")
    spark_id = compact(spark, warehouse, "db.there", "", "zorder", "id,x", "", "", "", "")
    assert local_id is not None and spark_id == local_id
    here, there = catalog.get_table("db.here"), catalog.get_table("db.there")
    assert rows(there) == rows(here) == expected
    assert layout(there) == layout(here)
    assert there.snapshot_manager.snapshot(spark_id).commit_kind == "COMPACT"
    assert os.listdir(os.path.join(there.path, STAGING_DIR)) == []
