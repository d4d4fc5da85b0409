"""``spark.procedures.compact`` on dynamic-bucket and cross-partition primary-key tables: the
layout and rows of the in-process procedure, and the hash index kept as it was."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact as compact_here
from paimon_pyspark.spark.procedures import compact
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
OPTIONS = {
    "dynamic-bucket.target-row-num": "3",
    "num-sorted-run.compaction-trigger": "2",
    "write-only": "true",
}


def make(catalog: FileSystemCatalog, name: str, pk: list[str]) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["pt"], primary_keys=pk, options=OPTIONS
    )
    catalog.create_table(f"db.{name}", schema)
    table = catalog.get_table(f"db.{name}")
    moved = 2 if pk == ["pk"] else None
    for version, keys in enumerate((range(12), range(4), range(5, 9))):
        data = [
            dict(pk=k, v=version, pt=k % 2 if moved is None or version == 0 else moved)
            for k in keys
        ]
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.Table.from_pylist(data, schema=SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
    return table


def state(table: FileStoreTable) -> tuple[object, ...]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    rb = table.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    handler = IndexFileHandler(table.file_io, table.path, table.manifest_io.codec)
    index = {
        (e.partition, e.bucket): handler.read_hash(e.index_file).tolist()
        for e in handler.scan(snapshot, HASH_INDEX)
    }
    layout = sorted(
        (e.partition, e.bucket, e.file.level, e.file.row_count, e.file.delete_row_count)
        for e in table.manifest_io.live_entries(snapshot)
    )
    return sorted(tuple(r.values()) for r in data.to_pylist()), index, layout


@pytest.mark.parametrize(("pk", "strategy"), [(["pk", "pt"], "minor"), (["pk"], "full")])
def test_spark_compaction_of_dynamic_buckets_matches_the_local_procedure(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, pk: list[str], strategy: str
) -> None:
    here, there = make(catalog, "here", pk), make(catalog, "there", pk)
    rows_before, index_before, _ = state(here)

    local_id = compact_here(catalog, "db.here", compact_strategy=strategy)
    spark_id = compact(spark, warehouse, "db.there", compact_strategy=strategy)

    assert local_id is not None and spark_id == local_id
    here, there = catalog.get_table("db.here"), catalog.get_table("db.there")
    assert state(there) == state(here)
    rows_after, index_after, _ = state(there)
    assert rows_after == rows_before and index_after == index_before
    assert there.snapshot_manager.snapshot(spark_id).commit_kind == "COMPACT"


def test_spark_postpone_compaction_with_a_cross_partition_key(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """Seed 001's postpone table whose key leaves out ``pt``: the Spark job gives the rows of
    the in-process compaction (and of Java's, tests/interop/test_compact_bucket_modes_java.py)."""
    options = {
        "bucket": "-2",
        "postpone.default-bucket-num": "2",
        "postpone.batch-write-fixed-bucket": "false",
    }
    for name in ("here", "there"):
        schema = Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["pt"], primary_keys=["pk"], options=options
        )
        catalog.create_table(f"db.{name}", schema)
        table = catalog.get_table(f"db.{name}")
        for data in ([(1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1)], [(1, 11, 2)]):
            builder = table.new_batch_write_builder()
            with builder.new_write() as write:
                rows = [dict(pk=a, v=b, pt=c) for a, b, c in data]
                write.write_arrow(pa.Table.from_pylist(rows, schema=SCHEMA))
                builder.new_commit().commit(write.prepare_commit())

    assert compact_here(catalog, "db.here") is not None
    assert compact(spark, warehouse, "db.there") is not None

    here, there = catalog.get_table("db.here"), catalog.get_table("db.there")
    assert state(there) == state(here)
    assert state(there)[0] == [(1, 10, 1), (1, 11, 2), (2, 20, 1), (3, 30, 1), (4, 40, 1)]
