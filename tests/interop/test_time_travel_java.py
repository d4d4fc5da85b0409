"""Java reads a tag we made at the rows our ``scan.tag-name`` read gives, and we read a tag
Java made at Java's rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])


def commit(table: FileStoreTable, rows: dict[int, str]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(pa.table({"k": list(rows), "v": list(rows.values())}, schema=SCHEMA))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def read(table: FileStoreTable) -> list[list[object]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def test_tags_read_the_same_on_both_sides(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db")
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options={"bucket": "2"})
    )
    table = catalog.get_table("db.t")
    commit(table, {1: "a", 2: "b"})
    table.create_tag("ours")
    commit(table, {2: "B", 3: "c"})
    java_oracle.create_tag(tmp_path, "db", "t", "javas", 2)
    commit(table, {1: "A"})
    ours_at_ours = read(table.copy({"scan.tag-name": "ours"}))
    assert ours_at_ours == [[1, "a"], [2, "b"]]
    assert sorted_rows(java_oracle.read_tag(tmp_path, "db", "t", "ours")) == ours_at_ours
    ours_at_javas = read(table.copy({"scan.tag-name": "javas"}))
    assert ours_at_javas == [[1, "a"], [2, "B"], [3, "c"]]
    assert sorted_rows(java_oracle.read_tag(tmp_path, "db", "t", "javas")) == ours_at_javas
