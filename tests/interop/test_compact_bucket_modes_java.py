"""Compaction of dynamic-bucket and cross-partition tables, postpone tables with a
cross-partition key, and insert overwrite of cross-partition tables, against Java Paimon 1.4.2.

Java reads every table after our compactions with our rows, and its HashBucketAssigner, loading
our hash index after them, updates existing keys in place; we read a dynamic table after Java's
compaction. The postpone table with a cross-partition key: we read what Java wrote and
compacted, Java reads what we wrote and compacted, and both give the rows of seed 001's
example. Cross-partition overwrites: Java (its GlobalIndexAssigner over IndexBootstrap, as its
sinks route) and we give the same rows, and both refuse a static overwrite whose -D record falls
outside the partition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows
from py4j.protocol import Py4JJavaError

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CommitError
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
JAVA_FIELDS = [("pk", "INT NOT NULL"), ("v", "INT"), ("pt", "INT NOT NULL")]
Triples = Sequence[tuple[int, int, int]]


def catalog_at(warehouse: Path) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    return catalog


def create(
    catalog: FileSystemCatalog, name: str, pk: list[str], options: Mapping[str, str]
) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["pt"], primary_keys=pk, options=dict(options)
    )
    catalog.create_table(f"{DB}.{name}", schema)
    return catalog.get_table(f"{DB}.{name}")


def java_create(
    oracle: JavaOracle, warehouse: Path, name: str, pk: list[str], options: Mapping[str, str]
) -> None:
    oracle.create_table(
        warehouse, DB, name, JAVA_FIELDS, partition_keys=["pt"], primary_keys=pk, options=options
    )


def rows(triples: Triples) -> pa.Table:
    return pa.Table.from_pylist([dict(pk=a, v=b, pt=c) for a, b, c in triples], schema=SCHEMA)


def commit(table: FileStoreTable, upserts: Triples, deletes: Triples = ()) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        if upserts:
            write.write_arrow(rows(upserts))
        if deletes:
            write.delete_arrow(rows(deletes))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def ours(catalog: FileSystemCatalog, name: str) -> list[list[object]]:
    table = catalog.get_table(f"{DB}.{name}")
    rb = table.new_read_builder()
    t = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted_rows([[r["pk"], r["v"], r["pt"]] for r in t.to_pylist()])


def java(oracle: JavaOracle, warehouse: Path, name: str) -> list[list[object]]:
    return sorted_rows(oracle.read_table(warehouse, DB, name).rows)


DYNAMIC = {
    "bucket": "-1",
    "dynamic-bucket.target-row-num": "3",
    "num-sorted-run.compaction-trigger": "2",
    "write-only": "true",
}


def test_java_reads_dynamic_and_cross_partition_tables_after_our_compactions(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = catalog_at(tmp_path)
    for name, pk in (("dyn", ["pk", "pt"]), ("cross", ["pk"])):
        table = create(catalog, name, pk, DYNAMIC)
        commit(table, [(k, 0, k % 2) for k in range(12)])
        moved = [(k, 1, 2) for k in range(4)] if pk == ["pk"] else [(k, 1, k % 2) for k in range(4)]
        commit(table, moved, [(11, 0, 1)])
        commit(table, [(k, 2, k % 2) for k in range(5, 9)])
        for strategy in ("minor", "full"):
            commit(table, [(k, 3, k % 2) for k in range(6, 10)])
            expected = ours(catalog, name)
            assert len(expected) == 11
            assert compact(catalog, f"{DB}.{name}", compact_strategy=strategy) is not None
            assert ours(catalog, name) == expected, (name, strategy)
            assert java(java_oracle, tmp_path, name) == expected, (name, strategy)
        kinds = [s["commitKind"] for s in java_oracle.snapshots(tmp_path, DB, name)]
        assert kinds[-4:] == ["APPEND", "COMPACT", "APPEND", "COMPACT"]

    # Java's HashBucketAssigner loads our index after the compactions: keys update in place,
    # the key the full compaction dropped (11) comes back once
    java_oracle.write_rows(tmp_path, DB, "dyn", [[k, 7, k % 2] for k in range(12)])
    want = sorted_rows([[k, 7, k % 2] for k in range(12)])
    assert java(java_oracle, tmp_path, "dyn") == want
    assert ours(catalog, "dyn") == want


@pytest.mark.parametrize("pk", [["pk", "pt"], ["pk"]])
def test_we_read_a_dynamic_table_after_java_compaction(
    java_oracle: JavaOracle, tmp_path: Path, pk: list[str]
) -> None:
    """HASH_DYNAMIC (Java's HashBucketAssigner) and KEY_DYNAMIC (its GlobalIndexAssigner)
    tables Java wrote and compacted with its writer's ``compact``; ours continues them."""
    catalog = catalog_at(tmp_path)
    java_create(java_oracle, tmp_path, "t", pk, DYNAMIC)
    java_write = java_oracle.write_rows if pk == ["pk", "pt"] else java_oracle.write_cross_partition
    moved = 2 if pk == ["pk"] else None
    java_write(tmp_path, DB, "t", [[k, 0, k % 2] for k in range(10)])
    java_write(tmp_path, DB, "t", [[k, 1, moved if moved else k % 2] for k in range(3, 8)])
    java_oracle.compact(tmp_path, DB, "t", full=True)
    assert java_oracle.snapshots(tmp_path, DB, "t")[-1]["commitKind"] == "COMPACT"
    expected = java(java_oracle, tmp_path, "t")
    assert len(expected) == 10
    assert ours(catalog, "t") == expected
    commit(catalog.get_table(f"{DB}.t"), [(k, 2, k % 2) for k in range(0, 10, 3)])
    assert ours(catalog, "t") == java(java_oracle, tmp_path, "t")
    assert sorted(r[0] for r in ours(catalog, "t")) == list(range(10))  # one row per key


ORDER_FIELDS = [("order_id", "BIGINT NOT NULL"), ("price", "DECIMAL(32, 2)")]


def test_java_reads_the_seed_with_pk_table_in_default_mode(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = catalog_at(tmp_path)
    schema = pa.schema(
        [pa.field("order_id", pa.int64(), nullable=False), ("price", pa.decimal128(32, 2))]
    )
    catalog.create_table(
        f"{DB}.with_pk_table", Schema.from_pyarrow_schema(schema, primary_keys=["order_id"])
    )
    table = catalog.get_table(f"{DB}.with_pk_table")
    for ids in ([1], [2, 3], [4, 5, 6, 7]):
        data = pa.table({"order_id": ids, "price": [i * 100 for i in ids]}).cast(schema)
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(data)
            builder.new_commit().commit(write.prepare_commit())
    table.delete(table.new_read_builder().new_predicate_builder().is_in("order_id", [2, 3]))
    before = sorted(r[0] for r in java_oracle.read_table(tmp_path, DB, "with_pk_table").rows)
    sid = compact(catalog, table=f"{DB}.with_pk_table")
    after = sorted(r[0] for r in java_oracle.read_table(tmp_path, DB, "with_pk_table").rows)
    assert before == after == [1, 4, 5, 6, 7]
    kinds = {s["id"]: s["commitKind"] for s in java_oracle.snapshots(tmp_path, DB, "with_pk_table")}
    assert kinds[sid] == "COMPACT"


POSTPONE = {
    "bucket": "-2",
    "postpone.default-bucket-num": "2",
    "merge-engine": "deduplicate",
    "postpone.batch-write-fixed-bucket": "false",
}
SEED_ROWS = [[1, 10, 1], [2, 20, 1], [3, 30, 1], [4, 40, 1]]
SEED_RESULT = sorted_rows([[1, 10, 1], [1, 11, 2], [2, 20, 1], [3, 30, 1], [4, 40, 1]])


def test_postpone_table_with_a_cross_partition_key_between_java_and_us(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = catalog_at(tmp_path)
    for name in ("by_java", "java_writes_we_compact"):
        java_create(java_oracle, tmp_path, name, ["pk"], POSTPONE)
        java_oracle.write_rows(tmp_path, DB, name, SEED_ROWS)
        java_oracle.write_rows(tmp_path, DB, name, [[1, 11, 2]])
        assert ours(catalog, name) == java(java_oracle, tmp_path, name) == []
    java_oracle.compact_postpone(tmp_path, DB, "by_java")
    assert java(java_oracle, tmp_path, "by_java") == SEED_RESULT
    assert ours(catalog, "by_java") == SEED_RESULT
    compact(catalog, f"{DB}.java_writes_we_compact")
    assert java(java_oracle, tmp_path, "java_writes_we_compact") == SEED_RESULT

    by_us = create(catalog, "by_us", ["pk"], POSTPONE)
    commit(by_us, [(a, b, c) for a, b, c in SEED_ROWS])
    commit(by_us, [(1, 11, 2)])
    compact(catalog, f"{DB}.by_us", partitions="pt=1")
    assert java(java_oracle, tmp_path, "by_us") == sorted_rows(SEED_ROWS)
    compact(catalog, f"{DB}.by_us")
    assert java(java_oracle, tmp_path, "by_us") == ours(catalog, "by_us") == SEED_RESULT
    # the same rows in the same real buckets as Java's compaction put them
    assert bucket_rows(catalog, "by_us") == bucket_rows(catalog, "by_java")


def bucket_rows(catalog: FileSystemCatalog, name: str) -> list[tuple[int, int, int]]:
    """(pk, pt, bucket) of every live row."""
    table = catalog.get_table(f"{DB}.{name}")
    rb = table.new_read_builder()
    out = []
    for split in rb.new_scan().plan().splits():
        for r in rb.new_read().to_arrow([split]).to_pylist():
            out.append((r["pk"], r["pt"], split.bucket))
    return sorted(out)


CROSS = {"bucket": "-1", "dynamic-bucket.target-row-num": "2"}
BEFORE = [[1, 10, 1], [2, 20, 1], [3, 30, 2], [5, 50, 4]]


def overwrite(
    table: FileStoreTable, data: Triples, static: Mapping[str, int] | None = None
) -> None:
    builder = table.new_batch_write_builder().overwrite(static)
    with builder.new_write() as write:
        write.write_arrow(rows(data))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


@pytest.mark.parametrize("dynamic", ["true", "false"])
def test_cross_partition_overwrite_as_java(
    java_oracle: JavaOracle, tmp_path: Path, dynamic: str
) -> None:
    catalog = catalog_at(tmp_path)
    options = {**CROSS, "dynamic-partition-overwrite": dynamic}
    java_create(java_oracle, tmp_path, "j", ["pk"], options)
    java_oracle.write_cross_partition(tmp_path, DB, "j", BEFORE)
    mine = create(catalog, "o", ["pk"], options)
    commit(mine, [(a, b, c) for a, b, c in BEFORE])
    assert ours(catalog, "o") == java(java_oracle, tmp_path, "j") == sorted_rows(BEFORE)

    new = [(1, 11, 2), (4, 40, 3)]
    java_oracle.write_cross_partition(tmp_path, DB, "j", [list(r) for r in new], overwrite={})
    overwrite(catalog.get_table(f"{DB}.o"), new)
    expected = java(java_oracle, tmp_path, "j")
    assert ours(catalog, "o") == expected
    assert expected == (
        sorted_rows([[1, 11, 2], [4, 40, 3], [5, 50, 4]])
        if dynamic == "true"
        else sorted_rows([[1, 11, 2], [4, 40, 3]])
    )
    java_oracle.write_cross_partition(tmp_path, DB, "j", [[1, 12, 4], [5, 51, 4]])
    commit(catalog.get_table(f"{DB}.o"), [(1, 12, 4), (5, 51, 4)])
    assert ours(catalog, "o") == java(java_oracle, tmp_path, "j")


def test_static_cross_partition_overwrite_refused_as_java(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = catalog_at(tmp_path)
    options = {**CROSS, "dynamic-partition-overwrite": "false"}
    java_create(java_oracle, tmp_path, "j", ["pk"], options)
    java_oracle.write_cross_partition(tmp_path, DB, "j", BEFORE)
    mine = create(catalog, "o", ["pk"], options)
    commit(mine, [(a, b, c) for a, b, c in BEFORE])

    with pytest.raises(Py4JJavaError, match="does not belong to this partition"):
        java_oracle.write_cross_partition(tmp_path, DB, "j", [[1, 11, 2]], overwrite={"pt": "2"})
    with pytest.raises(CommitError, match=r"overwrite partition pt=2.*belongs to partition pt=1"):
        overwrite(catalog.get_table(f"{DB}.o"), [(1, 11, 2)], {"pt": 2})
    assert ours(catalog, "o") == java(java_oracle, tmp_path, "j") == sorted_rows(BEFORE)

    java_oracle.write_cross_partition(tmp_path, DB, "j", [[3, 31, 2]], overwrite={"pt": "2"})
    overwrite(catalog.get_table(f"{DB}.o"), [(3, 31, 2)], {"pt": 2})
    assert ours(catalog, "o") == java(java_oracle, tmp_path, "j")
    assert [3, 31, 2] in ours(catalog, "o")
