"""Row-level DELETE and UPDATE as Spark jobs (spark/dml.py), with Java 1.4.2's rules."""

from __future__ import annotations

import datetime as dt
import decimal
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from tests.integration.table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    CommitConflictError,
    InvalidArgumentError,
    SchemaMismatchError,
    UnsupportedOperationError,
)
from paimon_pyspark.procedures import compact
from paimon_pyspark.spark.dml import delete, update
from paimon_pyspark.spark.job import STAGING_DIR
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler

pytestmark = pytest.mark.slow

KV = pa.schema(
    [
        pa.field("k", pa.int32(), nullable=False),
        ("v", pa.int32()),
        ("name", pa.string()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)


def make(
    catalog: FileSystemCatalog,
    name: str,
    primary_keys: list[str] | None = None,
    partition_keys: list[str] | None = None,
    schema: pa.Schema = KV,
    **options: str,
) -> FileStoreTable:
    catalog.create_table(
        f"db.{name}",
        Schema.from_pyarrow_schema(
            schema,
            partition_keys=partition_keys or [],
            primary_keys=primary_keys or [],
            options=options,
        ),
    )
    return catalog.get_table(f"db.{name}")


def kv(*rows: tuple[Any, ...]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(KV.names, r, strict=True)) for r in rows], schema=KV)


def rows_of(table: FileStoreTable, *columns: str) -> list[tuple[Any, ...]]:
    data = read_all(table)
    return sorted(zip(*(data.column(c).to_pylist() for c in columns), strict=True))


def live_files(table: FileStoreTable) -> set[str]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return {e.file.file_name for e in table.manifest_io.live_entries(snapshot)}


def data_files_on_disk(table: FileStoreTable) -> set[str]:
    out = set()
    for root, _, names in os.walk(table.path):
        if "bucket-" in os.path.basename(root):
            out |= set(names)
    return out


def test_with_pk_table_seed_deletes_orders_2_and_3(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    schema = pa.schema(
        [
            pa.field("order_id", pa.int64(), nullable=False),
            ("price", pa.decimal128(32, 2)),
            ("ts", pa.timestamp("ms")),
        ]
    )
    table = make(catalog, "with_pk_table", ["order_id"], schema=schema)
    assert table.bucket_mode.name == "HASH_DYNAMIC"
    start = dt.datetime(2025, 4, 5, 11, 45, 0)
    for ids in ([1], [2, 3], [4, 5, 6, 7]):
        data = {
            "order_id": ids,
            "price": [decimal.Decimal(i * 100) for i in ids],
            "ts": [start + dt.timedelta(seconds=i - 1) for i in ids],
        }
        write_commit(table, pa.table(data, schema=schema))
    sid = delete(spark, warehouse, "db.with_pk_table", "order_id IN (2, 3)")
    assert sid is not None and sid >= 4
    assert [r[0] for r in rows_of(table, "order_id")] == [1, 4, 5, 6, 7]
    compact(catalog, "db.with_pk_table")
    assert [r[0] for r in rows_of(table, "order_id")] == [1, 4, 5, 6, 7]
    # nothing matches: no snapshot
    latest = table.snapshot_manager.latest_id()
    assert delete(spark, warehouse, "db.with_pk_table", "order_id = 42") is None
    assert table.snapshot_manager.latest_id() == latest


def test_fixed_bucket_seed_deletes_a_key_in_each_partition_it_lived_in(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    schema = pa.schema(
        [
            pa.field("pk", pa.int32(), nullable=False),
            ("v", pa.int32()),
            pa.field("pt", pa.int32(), nullable=False),
        ]
    )
    table = make(catalog, "t", ["pk"], ["pt"], schema=schema, bucket="2")
    assert table.bucket_mode.name == "HASH_FIXED"

    def insert(*rows: tuple[int, int, int]) -> None:
        data = [dict(zip(schema.names, r, strict=True)) for r in rows]
        write_commit(table, pa.Table.from_pylist(data, schema=schema))

    insert((1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1))
    assert delete(spark, warehouse, "db.t", "pk = 1") is not None
    insert((1, 11, 2))
    assert delete(spark, warehouse, "db.t", "PK = 1") is not None  # names match as Spark's
    insert((1, 12, 3))
    assert rows_of(table, "pk", "v", "pt") == [(1, 12, 3), (2, 20, 1), (3, 30, 1), (4, 40, 1)]


@pytest.mark.parametrize("fixed", ["false", "true"])
def test_postpone_delete_does_nothing_until_the_row_is_compacted(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, fixed: str
) -> None:
    table = make(
        catalog,
        "p",
        ["pt", "k"],
        ["pt"],
        bucket="-2",
        **{"postpone.batch-write-fixed-bucket": "false", "postpone.default-bucket-num": "2"},
    )
    write_commit(table, kv((1, 10, "a", 0), (2, 20, "b", 0)))
    latest = table.snapshot_manager.latest_id()
    # k = 1 is still in the postpone bucket, invisible to reads: nothing is deleted
    assert delete(spark, warehouse, "db.p", "k = 1") is None
    assert table.snapshot_manager.latest_id() == latest
    compact(catalog, "db.p")
    assert rows_of(table, "k") == [(1,), (2,)]
    dynamic = {"postpone.batch-write-fixed-bucket": fixed}
    assert delete(spark, warehouse, "db.p", "k = 1", dynamic) is not None
    if fixed == "false":  # the -D record went into the postpone bucket
        assert rows_of(table, "k") == [(1,), (2,)]
        compact(catalog, "db.p")
    assert rows_of(table, "k") == [(2,)]


def test_dropping_a_dynamic_bucket_partition_drops_its_hash_index(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = make(catalog, "d", ["k", "pt"], ["pt"])
    assert table.bucket_mode.name == "HASH_DYNAMIC"
    write_commit(table, kv((1, 1, "a", 1), (2, 2, "b", 2)))
    handler = IndexFileHandler(table.file_io, table.path, table.manifest_io.codec)

    def indexed() -> set[int]:
        snapshot = table.snapshot_manager.latest()
        entries = handler.scan(snapshot, HASH_INDEX)
        return {deserialize_with_arity(e.partition, table.partition_types)[0] for e in entries}

    assert indexed() == {1, 2}
    assert delete(spark, warehouse, "db.d", "pt = 1") is not None
    assert indexed() == {2}
    write_commit(table, kv((1, 5, "z", 1)))
    assert rows_of(table, "k", "v", "pt") == [(1, 5, 1), (2, 2, 2)]
    assert indexed() == {1, 2}


def test_append_delete_on_partition_columns_drops_the_partitions(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = make(catalog, "a", partition_keys=["pt"])
    for p in (1, 2, 3):
        write_commit(table, kv((p * 10, 1, "a", p), (p * 10 + 1, 2, "b", p)))
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    kept = {
        e.file.file_name
        for e in table.manifest_io.live_entries(snapshot)
        if deserialize_with_arity(e.partition, table.partition_types) != [2]
    }
    before = live_files(table)
    sid = delete(spark, warehouse, "db.a", "pt = 2")
    assert sid is not None
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None and snapshot.commit_kind == "OVERWRITE"
    after = live_files(table)
    assert after == kept and len(before - after) == 1  # only pt=2's file went, none added
    assert rows_of(table, "k", "pt") == [(10, 1), (11, 1), (30, 3), (31, 3)]
    assert delete(spark, warehouse, "db.a", "pt IN (7, 8)") is None
    assert delete(spark, warehouse, "db.a") is not None  # no condition: the whole table
    assert read_all(table).num_rows == 0


def test_append_delete_by_value_rewrites_only_files_with_a_match(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = make(catalog, "a", partition_keys=["pt"])
    write_commit(table, kv((1, 1, "a", 1), (2, 2, None, 1), (3, 3, "b", 1)))
    write_commit(table, kv((4, 4, "b", 1), (5, 5, "c", 1)))
    write_commit(table, kv((6, 6, "a", 2), (7, 7, "c", 2)))
    before = live_files(table)
    assert len(before) == 3
    sid = delete(spark, warehouse, "db.a", "name = 'a'")
    assert sid is not None
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None and snapshot.commit_kind == "OVERWRITE"
    after = live_files(table)
    # the two files holding 'a' were rewritten, the third one stays as it was
    assert len(before & after) == 1 and len(after) == 3
    # a NULL condition is not true: row 2 stays
    assert rows_of(table, "k") == [(2,), (3,), (4,), (5,), (7,)]
    # a condition sql_predicate cannot translate: no pruning, same answer from Spark
    assert delete(spark, warehouse, "db.a", "upper(name) = 'C' AND k % 2 = 1") is not None
    assert rows_of(table, "k") == [(2,), (3,), (4,)]
    assert not os.path.exists(os.path.join(table.path, STAGING_DIR)) or not os.listdir(
        os.path.join(table.path, STAGING_DIR)
    )


def test_update_of_a_primary_key_table_upserts_the_matching_rows(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = make(catalog, "u", ["k", "pt"], ["pt"], bucket="2")
    write_commit(table, kv((1, 10, "a", 1), (2, 20, "b", 1), (3, 30, "c", 2)))
    sid = update(spark, warehouse, "db.u", {"V": "v + 1", "name": "upper(NAME)"}, "k >= 2")
    assert sid is not None
    assert rows_of(table, "k", "v", "name") == [(1, 10, "a"), (2, 21, "B"), (3, 31, "C")]
    assert update(spark, warehouse, "db.u", {"v": "0"}, "k = 99") is None
    assert update(spark, warehouse, "db.u", {"v": "v * 2"}) is not None
    assert rows_of(table, "k", "v") == [(1, 20), (2, 42), (3, 62)]


def test_update_of_a_partial_update_table_sets_only_the_assigned_column(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = make(
        catalog, "pu", ["k", "pt"], ["pt"], bucket="1", **{"merge-engine": "partial-update"}
    )
    write_commit(table, kv((1, 10, "a", 1), (2, 20, "b", 1)))
    write_commit(table, kv((1, None, "z", 1)))
    assert rows_of(table, "k", "v", "name") == [(1, 10, "z"), (2, 20, "b")]
    assert update(spark, warehouse, "db.pu", {"v": "v + 5"}, "name = 'z'") is not None
    assert rows_of(table, "k", "v", "name") == [(1, 15, "z"), (2, 20, "b")]


def test_delete_and_update_of_a_cross_partition_table(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = make(catalog, "x", ["k"], ["pt"], bucket="-1")
    assert table.bucket_mode.name == "KEY_DYNAMIC"
    write_commit(table, kv((1, 10, "a", 1), (2, 20, "b", 2), (3, 30, "c", 3)))
    assert delete(spark, warehouse, "db.x", "v = 20") is not None
    assert rows_of(table, "k", "pt") == [(1, 1), (3, 3)]
    # Java allows assigning the partition column here: the key moves partition
    assert update(spark, warehouse, "db.x", {"pt": "7"}, "k = 1") is not None
    assert rows_of(table, "k", "v", "pt") == [(1, 10, 7), (3, 30, 3)]


def test_update_of_an_append_table_rewrites_the_touched_files(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = make(catalog, "au", None, ["pt"], KV, bucket="2", **{"bucket-key": "k"})
    write_commit(table, kv((1, 1, "a", 1), (2, 2, "b", 1), (3, 3, "c", 1), (4, 4, "d", 1)))
    before = live_files(table)
    assert update(spark, warehouse, "db.au", {"name": "concat(name, '!')"}, "k = 3") is not None
    assert rows_of(table, "k", "name") == [(1, "a"), (2, "b"), (3, "c!"), (4, "d")]
    after = live_files(table)
    assert len(before & after) == len(before) - 1  # only the bucket holding k = 3 changed
    assert update(spark, warehouse, "db.au", {"v": "v * 100"}, "name = 'nobody'") is None


def test_refusals_name_the_table_and_java_s_reason(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    make(catalog, "d", ["k", "pt"], ["pt"], bucket="1")
    make(catalog, "f", ["k", "pt"], ["pt"], bucket="1", **{"merge-engine": "first-row"})
    make(catalog, "pu", ["k", "pt"], ["pt"], bucket="1", **{"merge-engine": "partial-update"})
    make(catalog, "ag", ["k", "pt"], ["pt"], bucket="1", **{"merge-engine": "aggregation"})
    for name in ("d", "f", "pu", "ag"):
        write_commit(catalog.get_table(f"db.{name}"), kv((1, 1, "a", 1)))
    with pytest.raises(UnsupportedOperationError, match=r"db\.d.*can't update the primary key"):
        update(spark, warehouse, "db.d", {"K": "k + 1"})
    with pytest.raises(UnsupportedOperationError, match=r"db\.d.*can't update the primary key"):
        update(spark, warehouse, "db.d", {"pt": "2"})
    with pytest.raises(UnsupportedOperationError, match="first-row can not support batch delete"):
        delete(spark, warehouse, "db.f", "v = 1")
    with pytest.raises(UnsupportedOperationError, match="partial-update.remove-record-on-delete"):
        delete(spark, warehouse, "db.pu", "v = 1")
    with pytest.raises(UnsupportedOperationError, match="aggregation.remove-record-on-delete"):
        delete(spark, warehouse, "db.ag", "v = 1")
    with pytest.raises(UnsupportedOperationError, match="aggregation can not support Update"):
        update(spark, warehouse, "db.ag", {"v": "1"})
    with pytest.raises(UnsupportedOperationError, match="first-row can not support Update"):
        update(spark, warehouse, "db.f", {"v": "1"})
    with pytest.raises(SchemaMismatchError, match=r"db\.d.*'nope'"):
        delete(spark, warehouse, "db.d", "nope = 1")
    with pytest.raises(SchemaMismatchError, match=r"db\.d.*'nope'"):
        update(spark, warehouse, "db.d", {"nope": "1"})
    with pytest.raises(SchemaMismatchError, match=r"db\.d.*'missing'"):
        update(spark, warehouse, "db.d", {"v": "missing + 1"})
    with pytest.raises(InvalidArgumentError, match=r"db\.d"):
        delete(spark, warehouse, "db.d", "v +")
    with pytest.raises(InvalidArgumentError, match=r"db\.d"):
        update(spark, warehouse, "db.d", {})
    # with the option, partial-update and aggregation delete by -D records, as in Java
    make(
        catalog,
        "pu2",
        ["k", "pt"],
        ["pt"],
        bucket="1",
        **{"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
    )
    pu2 = catalog.get_table("db.pu2")
    write_commit(pu2, kv((1, 1, "a", 1), (2, 2, "b", 1)))
    assert delete(spark, warehouse, "db.pu2", "k = 1") is not None
    assert rows_of(pu2, "k") == [(2,)]


def test_a_failure_in_the_middle_leaves_no_snapshot_and_no_files(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = make(catalog, "a", partition_keys=["pt"])
    pk = make(catalog, "pk", ["k", "pt"], ["pt"], bucket="2")
    for t in (table, pk):
        for p in (1, 2):
            write_commit(t, kv((p, 1, "a", p), (p + 10, 2, "b", p)))
    for name, t in (("a", table), ("pk", pk)):
        latest = t.snapshot_manager.latest_id()
        files = data_files_on_disk(t)
        # the second partition's rows fail while the first one's may be written already
        boom = "CASE WHEN pt = 2 THEN raise_error('boom') ELSE v + 1 END"
        with pytest.raises(Exception, match="boom"):
            update(spark, warehouse, f"db.{name}", {"v": boom})
        assert t.snapshot_manager.latest_id() == latest
        assert data_files_on_disk(t) == files
        staging = Path(t.path) / STAGING_DIR
        assert not staging.exists() or not any(staging.iterdir())


def test_a_compaction_racing_a_copy_on_write_delete_fails_the_delete_cleanly(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: Path
) -> None:
    table = make(catalog, "a", partition_keys=["pt"])
    for k in range(6):  # compaction.min.file-num (5) small files: a compaction rewrites them
        write_commit(table, kv((k, k, "a" if k == 0 else "b", 1)))
    before = rows_of(table, "k")
    marker = tmp_path / "compacted"

    def compact_once(k: int) -> bool:
        """Runs on an executor while the delete looks for its files: the first call
        compacts the files the delete is about to replace."""
        from paimon_pyspark import CatalogFactory
        from paimon_pyspark.procedures import compact as compact_here

        if not marker.exists():
            marker.write_text("x")
            compact_here(
                CatalogFactory.create({"warehouse": warehouse}), "db.a", compact_strategy="full"
            )
        return k == 0

    spark.udf.register("compact_once", compact_once, "boolean")
    files = data_files_on_disk(table)
    with pytest.raises(CommitConflictError):
        delete(spark, warehouse, "db.a", "compact_once(k)")
    assert marker.exists()
    compacted = table.snapshot_manager.latest()
    assert compacted is not None and compacted.commit_kind == "COMPACT"
    assert rows_of(table, "k") == before
    # the delete's new files are gone; the compaction's outputs are the only new files
    assert data_files_on_disk(table) - files == live_files(table) - files


def test_force_produce_changelog_deletes_row_by_row_and_an_empty_table_changes_nothing(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    empty = make(catalog, "e", ["k", "pt"], ["pt"], bucket="1")
    assert delete(spark, warehouse, "db.e", "k = 1") is None
    assert update(spark, warehouse, "db.e", {"v": "1"}) is None
    assert empty.snapshot_manager.latest_id() is None
    with pytest.raises(SchemaMismatchError, match=r"db\.e.*'nope'"):
        delete(spark, warehouse, "db.e", "nope = 1")
    table = make(
        catalog, "c", ["k", "pt"], ["pt"], bucket="1", **{"delete.force-produce-changelog": "true"}
    )
    write_commit(table, kv((1, 1, "a", 1), (2, 2, "b", 2)))
    before = live_files(table)
    assert delete(spark, warehouse, "db.c", "pt = 1") is not None
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None and snapshot.commit_kind != "OVERWRITE"  # -D records
    assert before <= live_files(table)
    assert rows_of(table, "k") == [(2,)]
    # no condition: truncated all the same (Java's Spark checks the option for partitions only)
    truncated = delete(spark, warehouse, "db.c")
    assert truncated is not None
    assert table.snapshot_manager.snapshot(truncated).commit_kind == "OVERWRITE"
    assert read_all(table).num_rows == 0
