"""``procedures.compact`` on dynamic-bucket (HASH_DYNAMIC) and cross-partition (KEY_DYNAMIC)
primary-key tables: the rows stay, the hash index stays valid (a later write of an existing key,
or of one a full compaction dropped, goes back to its bucket), full and minor alike."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence

import pyarrow as pa
import pytest
from table_helpers import read_all

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.procedures import compact
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler

SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
Triples = Sequence[tuple[int, int, int]]
OPTIONS = {
    "dynamic-bucket.target-row-num": "3",
    "num-sorted-run.compaction-trigger": "2",
    "write-only": "true",  # only the procedure compacts (it turns write-only off, as Java's)
}


def make(catalog: FileSystemCatalog, name: str, pk: list[str]) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["pt"], primary_keys=pk, options=OPTIONS
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


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


def triples(table: FileStoreTable) -> list[tuple[int, int, int]]:
    return sorted((r["pk"], r["v"], r["pt"]) for r in read_all(table).to_pylist())


def index_files(table: FileStoreTable) -> dict[tuple[bytes, int], str]:
    handler = IndexFileHandler(table.file_io, table.path, table.manifest_io.codec)
    found = handler.scan(table.snapshot_manager.latest(), HASH_INDEX)
    return {(e.partition, e.bucket): e.index_file.file_name for e in found}


def key_buckets(table: FileStoreTable) -> dict[tuple[int, int], list[int]]:
    """(pt, pk) -> the buckets holding a live row of it."""
    out: dict[tuple[int, int], list[int]] = {}
    rb = table.new_read_builder()
    read = rb.new_read()
    for split in rb.new_scan().plan().splits():
        for r in read.to_arrow([split]).to_pylist():
            out.setdefault((r["pt"], r["pk"]), []).append(split.bucket)
    return out


def live_files(table: FileStoreTable) -> list[tuple[int, int]]:
    """(level, delete rows) of every live file."""
    entries = table.manifest_io.live_entries(table.snapshot_manager.latest())
    return [(e.file.level, e.file.delete_row_count or 0) for e in entries]


@pytest.mark.parametrize("strategy", ["full", "minor"])
def test_dynamic_bucket_compaction_keeps_rows_and_hash_index(
    catalog: FileSystemCatalog, strategy: str
) -> None:
    table = make(catalog, "dyn", ["pk", "pt"])
    assert table.bucket_mode == BucketMode.HASH_DYNAMIC
    commit(table, [(k, 0, k % 2) for k in range(12)])
    first = key_buckets(table)
    commit(table, [(k, 1, k % 2) for k in range(3, 9)], [(0, 0, 0), (1, 0, 1)])
    commit(table, [(k, 2, k % 2) for k in range(5, 8)])
    expected = triples(table)
    index = index_files(table)
    files_before = len(live_files(table))

    sid = compact(catalog, "db.dyn", compact_strategy=strategy)

    table = catalog.get_table("db.dyn")
    assert sid is not None and table.snapshot_manager.snapshot(sid).commit_kind == "COMPACT"
    assert triples(table) == expected
    assert index_files(table) == index  # the same index files: a compaction adds no key
    after = live_files(table)
    assert len(after) < files_before
    if strategy == "full":
        top = table.options.num_levels - 1  # 2: num-levels defaults to the trigger + 1
        assert {level for level, _ in after} == {top} and sum(d for _, d in after) == 0

    # existing keys update in place; keys 0 and 1, whose rows the compaction may have dropped,
    # come back to the bucket their hash is indexed in
    commit(table, [(k, 3, k % 2) for k in range(0, 8)])
    table = catalog.get_table("db.dyn")
    now = key_buckets(table)
    assert all(len(b) == 1 for b in now.values())
    assert now == {key: first[key] for key in now}
    assert index_files(table) == index  # no new key, no new index file
    assert len(triples(table)) == 12


@pytest.mark.parametrize("strategy", ["full", "minor"])
def test_cross_partition_compaction_keeps_one_row_per_key(
    catalog: FileSystemCatalog, strategy: str
) -> None:
    table = make(catalog, "cross", ["pk"])
    assert table.bucket_mode == BucketMode.KEY_DYNAMIC
    model = {k: (0, k % 2) for k in range(10)}
    commit(table, [(k, v, p) for k, (v, p) in model.items()])
    for k in range(5):  # the keys move to partition 2: -D records in their old partitions
        model[k] = (1, 2)
    commit(table, [(k, *model[k]) for k in range(5)])
    for k in range(5, 8):
        model[k] = (2, k % 2)
    commit(table, [(k, *model[k]) for k in range(5, 8)])
    assert sum(d for _, d in live_files(table)) == 5
    expected = sorted((k, v, p) for k, (v, p) in model.items())
    assert triples(table) == expected

    sid = compact(catalog, "db.cross", compact_strategy=strategy)

    table = catalog.get_table("db.cross")
    assert sid is not None and table.snapshot_manager.snapshot(sid).commit_kind == "COMPACT"
    assert triples(table) == expected
    if strategy == "full":
        assert {level for level, _ in live_files(table)} == {table.options.num_levels - 1}
        assert sum(d for _, d in live_files(table)) == 0

    for k in (0, 6, 9):  # moved again after the compaction: still one row per key
        model[k] = (3, 3)
    commit(table, [(k, *model[k]) for k in (0, 6, 9)])
    assert triples(catalog.get_table("db.cross")) == sorted(
        (k, v, p) for k, (v, p) in model.items()
    )


ORDERS = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        ("price", pa.decimal128(32, 2)),
        ("ts", pa.timestamp("ms")),
    ]
)


def orders(ids: list[int]) -> pa.Table:
    start = dt.datetime(2025, 4, 5, 11, 45, 0)
    return pa.table(
        {
            "order_id": ids,
            "price": [decimal.Decimal(i * 100) for i in ids],
            "ts": [start + dt.timedelta(seconds=i - 1) for i in ids],
        },
        schema=ORDERS,
    )


def test_seed_with_pk_table_in_the_default_bucket_mode(catalog: FileSystemCatalog) -> None:
    """The seed's table as written (no ``bucket`` option): three inserts, a delete, compact."""
    catalog.create_table(
        "db.with_pk_table", Schema.from_pyarrow_schema(ORDERS, primary_keys=["order_id"])
    )
    table = catalog.get_table("db.with_pk_table")
    assert table.bucket_mode == BucketMode.HASH_DYNAMIC
    for ids in ([1], [2, 3], [4, 5, 6, 7]):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(orders(ids))
            builder.new_commit().commit(write.prepare_commit())
    pb = table.new_read_builder().new_predicate_builder()
    assert table.delete(pb.is_in("order_id", [2, 3])) == 2
    ids = sorted(read_all(table).column("order_id").to_pylist())
    assert ids == [1, 4, 5, 6, 7]
    index = index_files(table)

    sid = compact(catalog, table="db.with_pk_table")

    table = catalog.get_table("db.with_pk_table")
    assert sid is not None and table.snapshot_manager.snapshot(sid).commit_kind == "COMPACT"
    assert read_all(table).sort_by("order_id").to_pylist() == orders([1, 4, 5, 6, 7]).to_pylist()
    assert index_files(table) == index
    assert live_files(table) == [(5, 0)]
