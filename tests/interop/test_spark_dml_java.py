"""Java Paimon 1.4.2 reads the tables ``paimon_pyspark.spark.dml`` changed with the rows ours
reads: -D and +U records of primary-key tables in every bucket mode, partitions dropped by a
partition-only DELETE, and files rewritten copy-on-write in append tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.spark.dml import delete, update

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int32(), nullable=False),
        ("v", pa.int32()),
        ("name", pa.string()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)


def _rows(*rows: tuple[Any, ...]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA)


def _insert(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def _ours(table: FileStoreTable) -> list[list[Any]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


Step = Callable[[SparkSession, str], Any]

CASES: dict[str, tuple[list[str], dict[str, str], list[Step], list[list[Any]]]] = {
    "dynamic_pk": (
        ["k", "pt"],
        {},
        [
            lambda s, wh: None,
            lambda s, wh: delete(s, wh, "db.t", "k IN (2, 3)"),
            lambda s, wh: update(s, wh, "db.t", {"v": "v * 10"}, "name = 'a'"),
            lambda s, wh: delete(s, wh, "db.t", "pt = 1"),  # its hash index goes too
        ],
        [[4, 4, "d", 2], [5, 5, "b", 2]],
    ),
    "fixed_pk_partitioned": (
        ["k", "pt"],
        {"bucket": "2"},
        [
            lambda s, wh: None,
            lambda s, wh: delete(s, wh, "db.t", "pt = 1"),  # drops the partition
            lambda s, wh: update(s, wh, "db.t", {"name": "upper(name)"}, "k = 4"),
        ],
        [[4, 4, "D", 2], [5, 5, "b", 2]],
    ),
    "cross_partition": (
        ["k"],
        {"bucket": "-1"},
        [
            lambda s, wh: None,
            lambda s, wh: delete(s, wh, "db.t", "v = 2"),
            lambda s, wh: update(s, wh, "db.t", {"pt": "9"}, "k = 5"),
        ],
        [[1, 1, "a", 1], [3, 3, "c", 1], [4, 4, "d", 2], [5, 5, "b", 9]],
    ),
    "partial_update": (
        ["k", "pt"],
        {
            "bucket": "1",
            "merge-engine": "partial-update",
            "partial-update.remove-record-on-delete": "true",
        },
        [
            lambda s, wh: None,
            lambda s, wh: delete(s, wh, "db.t", "k = 1"),
            lambda s, wh: update(s, wh, "db.t", {"v": "v + 100"}, "pt = 2"),
        ],
        [[2, 2, "b", 1], [3, 3, "c", 1], [4, 104, "d", 2], [5, 105, "b", 2]],
    ),
    "append_unaware": (
        [],
        {},
        [
            lambda s, wh: delete(s, wh, "db.t", "name = 'b'"),
            lambda s, wh: delete(s, wh, "db.t", "pt = 2"),
            lambda s, wh: update(s, wh, "db.t", {"v": "-v"}, "k = 3"),
        ],
        [[1, 1, "a", 1], [3, -3, "c", 1]],
    ),
    "append_fixed": (
        [],
        {"bucket": "2", "bucket-key": "k"},
        [
            lambda s, wh: update(s, wh, "db.t", {"name": "concat(name, '!')"}, "k >= 4"),
            lambda s, wh: delete(s, wh, "db.t", "k = 1"),
        ],
        [[2, 2, "b", 1], [3, 3, "c", 1], [4, 4, "d!", 2], [5, 5, "b!", 2]],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_java_reads_what_spark_dml_left(
    spark: SparkSession, java_oracle: JavaOracle, tmp_path: Path, case: str
) -> None:
    primary_keys, options, steps, expected = CASES[case]
    warehouse = str(tmp_path)
    catalog: FileSystemCatalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["pt"], primary_keys=primary_keys, options=options
        ),
    )
    table = catalog.get_table("db.t")
    _insert(table, _rows((1, 1, "a", 1), (2, 2, "b", 1), (3, 3, "c", 1)))
    _insert(table, _rows((4, 4, "d", 2), (5, 5, "b", 2)))
    for step in steps:
        step(spark, warehouse)
        assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == _ours(table)
    assert _ours(table) == sorted_rows(expected)
