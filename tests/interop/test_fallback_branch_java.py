"""Reads over two branches between Java Paimon 1.4.2 and us (issue 41, item 4): a table with
``scan.fallback-branch`` (then ``scan.primary-branch``) and partitions on each side reads the
same rows from the same branch, partition by partition, whether Java or we built it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from branch_oracle import create_branch
from branch_read_oracle import java_read, java_splits
from java_oracle import (
    JavaOracle,
    alter_table_options,
    canonical_rows,
    read_system_table,
    sorted_rows,
)

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.read.fallback_read import OtherBranchSplit
from paimon_pyspark.store.schema_change import SchemaChange

pytestmark = pytest.mark.java

SCHEMA = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
    ]
)


def rows(dt: str, ks: list[int], tag: str) -> pa.Table:
    return pa.table({"dt": [dt] * len(ks), "k": ks, "v": [f"{tag}{k}" for k in ks]}, SCHEMA)


def write(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        builder.new_commit().commit(w.prepare_commit())


def ours(table: FileStoreTable, equal: tuple[str, object] | None = None) -> list[list[object]]:
    rb = table.new_read_builder()
    if equal is not None:
        rb = rb.with_filter(rb.new_predicate_builder().equal(*equal))
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def our_splits(table: FileStoreTable, primary: bool) -> list[tuple[object, ...]]:
    """As Java marks them: from the second branch (the other one, or with a primary branch the
    current one)."""
    splits = table.new_read_builder().new_scan().plan().splits()
    return sorted((*s.partition_values, isinstance(s, OtherBranchSplit) != primary) for s in splits)


def check_same(java: JavaOracle, wh: str, table: FileStoreTable, primary: bool = False) -> None:
    """Java's read and ours agree: rows, rows under a data and a partition filter, and which
    partitions come from which branch."""
    assert java_splits(java, wh, "db", "t") == our_splits(table, primary)
    assert java_read(java, wh, "db", "t") == ours(table)
    for equal in (("k", 3), ("k", 9), ("dt", "1")):
        assert java_read(java, wh, "db", "t", equal=equal) == ours(table, equal), equal
    # $partitions lists both branches' partitions, each with its branch's counts
    java_partitions = read_system_table(java, wh, "db", "t$partitions").rows
    system = CatalogFactory.create({"warehouse": wh}).get_table("db.t$partitions")
    mine = system.new_read_builder().with_projection(["partition", "record_count"])
    counted = canonical_rows(mine.new_read().to_arrow(mine.new_scan().plan().splits()))
    assert sorted_rows([r[:2] for r in java_partitions]) == sorted_rows(counted)


def test_java_reads_our_fallback_table_and_we_read_javas(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    wh = str(tmp_path / "ours")
    catalog = CatalogFactory.create({"warehouse": wh})
    catalog.create_database("db")
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "1"}
    )
    catalog.create_table("db.t", schema)
    main = catalog.get_table("db.t")
    main.branch_manager().create_branch("b")
    catalog.alter_table("db.t$branch_b", [SchemaChange.set_option("bucket", "2")])
    write(main, rows("1", [1, 2], "main"))
    branch = catalog.get_table("db.t$branch_b")
    write(branch, rows("1", [1, 9], "b"))
    write(branch, rows("2", [3], "b"))
    catalog.alter_table("db.t", [SchemaChange.set_option("scan.fallback-branch", "b")])
    table = catalog.get_table("db.t")
    check_same(java_oracle, wh, table)
    assert ours(table) == [["1", 1, "main1"], ["1", 2, "main2"], ["2", 3, "b3"]]
    # time travel: main's snapshot 1 with b's snapshot of that time
    pinned = {"scan.snapshot-id": "1"}
    assert java_read(java_oracle, wh, "db", "t", pinned) == ours(table.copy(pinned))
    # the primary branch reads first
    catalog.alter_table(
        "db.t",
        [
            SchemaChange.remove_option("scan.fallback-branch"),
            SchemaChange.set_option("scan.primary-branch", "b"),
        ],
    )
    write(catalog.get_table("db.t"), rows("3", [5], "main"))
    table = catalog.get_table("db.t")
    check_same(java_oracle, wh, table, primary=True)
    assert [r[2] for r in ours(table)] == ["b1", "b9", "b3", "main5"]

    # Java builds the same table; we read it as Java does
    jwh = str(tmp_path / "java")
    fields = [("dt", "STRING NOT NULL"), ("k", "BIGINT NOT NULL"), ("v", "STRING")]
    java_oracle.create_table(
        jwh, "db", "t", fields, partition_keys=["dt"], primary_keys=["dt", "k"],
        options={"bucket": "1"},
    )  # fmt: skip
    create_branch(java_oracle, jwh, "db", "t", "b")
    java_oracle.write_rows(jwh, "db", "t", [["1", 1, "main1"], ["1", 2, "main2"]])
    java_oracle.write_rows(jwh, "db", "t$branch_b", [["1", 1, "b1"], ["1", 9, "b9"]])
    java_oracle.write_rows(jwh, "db", "t$branch_b", [["2", 3, "b3"]])
    altered = alter_table_options(java_oracle, jwh, "db", "t", [("scan.fallback-branch", "b")])
    assert altered.error is None
    table = CatalogFactory.create({"warehouse": jwh}).get_table("db.t")
    check_same(java_oracle, jwh, table)
    assert ours(table) == [["1", 1, "main1"], ["1", 2, "main2"], ["2", 3, "b3"]]
