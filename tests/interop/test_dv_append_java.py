"""Deletion-vector append tables, both ways with Java 1.4.2: DELETE marks rows in vectors.

On a table we write (unaware bucket and fixed bucket, partitioned, 32- and 64-bit vectors), our
``table.delete`` and Java's DELETE (``JavaOracle.delete_where``: Spark's DeleteFromPaimonTable
with core classes) take turns, each merging with the vectors the other wrote, then Java
compacts (fixed bucket) and we compact; after every step both engines read the rows a Python
model keeps. On Java's own tables (``dv_tables``), our delete and compaction do the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from dv_tables import build_append_fixed, build_append_unaware
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("pt", pa.int32())]
)
MODES = {"unaware": {"bucket": "-1"}, "fixed": {"bucket": "2", "bucket-key": "id"}}


def table_of(warehouse: Path, name: str) -> FileStoreTable:
    table = CatalogFactory.create({"warehouse": str(warehouse)}).get_table(f"{DB}.{name}")
    assert isinstance(table, FileStoreTable)
    return table


def ours(warehouse: Path, name: str) -> list[list[Any]]:
    rb = table_of(warehouse, name).new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def both_read(java: JavaOracle, warehouse: Path, name: str, expected: list[list[Any]]) -> None:
    assert ours(warehouse, name) == expected
    assert sorted_rows(java.read_table(warehouse, DB, name).rows) == expected


@pytest.mark.parametrize("bitmap64", [False, True], ids=["bitmap32", "bitmap64"])
@pytest.mark.parametrize("mode", list(MODES))
def test_deletes_take_turns_with_java(
    java_oracle: JavaOracle, tmp_path: Path, mode: str, bitmap64: bool
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database(DB)
    name = f"t_{mode}"
    options = {"deletion-vectors.enabled": "true", **MODES[mode]}
    options["deletion-vectors.bitmap64"] = str(bitmap64).lower()
    catalog.create_table(
        f"{DB}.{name}", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["pt"], options=options)
    )
    model: dict[int, list[Any]] = {}
    for c in range(3):
        ids = list(range(c * 20, c * 20 + 20))
        rows = [[i, f"v{i}", i % 2] for i in ids]
        model.update({r[0]: r for r in rows})
        table = table_of(tmp_path, name)
        builder = table.new_batch_write_builder()
        with builder.new_write() as w:
            w.write_arrow(
                pa.Table.from_pylist(
                    [dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA
                )
            )
            builder.new_commit().commit(w.prepare_commit())

    def delete_ours(keep: Any) -> None:
        table = table_of(tmp_path, name)
        pb = table.new_read_builder().new_predicate_builder()
        table.delete(keep(pb))

    def expected() -> list[list[Any]]:
        return sorted_rows(model.values())

    delete_ours(lambda pb: pb.less_than("id", 7))
    delete_ours(lambda pb: pb.between("id", 30, 35))
    for i in [*range(7), *range(30, 36)]:
        model.pop(i)
    both_read(java_oracle, tmp_path, name, expected())

    java_oracle.delete_where(tmp_path, DB, name, "id", [40, 41, 50])
    for i in (40, 41, 50):
        model.pop(i)
    both_read(java_oracle, tmp_path, name, expected())

    delete_ours(lambda pb: pb.between("id", 41, 45))  # 41 is already gone
    for i in range(42, 46):
        model.pop(i)
    both_read(java_oracle, tmp_path, name, expected())

    if mode == "fixed":
        java_oracle.compact(tmp_path, DB, name)
        both_read(java_oracle, tmp_path, name, expected())
    delete_ours(lambda pb: pb.equal("id", 59))
    java_oracle.delete_where(tmp_path, DB, name, "id", [58])
    model.pop(59), model.pop(58)
    compact(CatalogFactory.create({"warehouse": str(tmp_path)}), f"{DB}.{name}")
    both_read(java_oracle, tmp_path, name, expected())


@pytest.mark.parametrize("builder", [build_append_unaware, build_append_fixed])
def test_our_delete_and_compaction_on_javas_tables(
    java_oracle: JavaOracle, tmp_path: Path, builder: Any
) -> None:
    rows = builder(java_oracle, tmp_path, DB, "java_append", partitioned=True)
    table = table_of(tmp_path, "java_append")
    pb = table.new_read_builder().new_predicate_builder()
    table.delete(pb.less_than("k", 40))
    expected = [r for r in rows if r[0] >= 40]
    both_read(java_oracle, tmp_path, "java_append", expected)
    compact(CatalogFactory.create({"warehouse": str(tmp_path)}), f"{DB}.java_append")
    both_read(java_oracle, tmp_path, "java_append", expected)
