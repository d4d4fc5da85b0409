"""A postpone-bucket table (bucket = -2) whose primary key leaves out the partition key, as
seed 001's delete/update example creates it. Java 1.4.2 accepts, writes and compacts it like
any postpone table: no global key index, every partition's keys hashed among its own buckets,
so a key written to two partitions lives in both (the user keeps keys unique per partition)."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.procedures import compact
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET, BucketMode

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
SEED_OPTIONS = {
    "bucket": "-2",
    "postpone.default-bucket-num": "2",
    "merge-engine": "deduplicate",
    "postpone.batch-write-fixed-bucket": "false",
}


def make(catalog: FileSystemCatalog, name: str, **extra: str) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["pt"], primary_keys=["k"], options={**SEED_OPTIONS, **extra}
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def rows(triples: Sequence[tuple[int, int, int]]) -> pa.Table:
    return pa.Table.from_pylist([dict(k=a, v=b, pt=c) for a, b, c in triples], schema=SCHEMA)


def triples(table: FileStoreTable) -> list[tuple[int, int, int]]:
    return sorted((r["k"], r["v"], r["pt"]) for r in read_all(table).to_pylist())


def delete_k(table: FileStoreTable, k: int) -> int:
    return table.delete(table.new_read_builder().new_predicate_builder().equal("k", k))


def postpone_files(table: FileStoreTable) -> dict[int, int]:
    """pt -> postpone files in the latest snapshot."""
    out: dict[int, int] = {}
    for e in table.manifest_io.live_entries(table.snapshot_manager.latest()):
        if e.bucket == POSTPONE_BUCKET:
            (pt,) = deserialize_with_arity(e.partition, table.partition_types)
            out[pt] = out.get(pt, 0) + 1
    return out


def test_seed_delete_update_example_as_java(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "T")
    assert table.bucket_mode == BucketMode.POSTPONE_MODE
    write_commit(table, rows([(1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1)]))
    assert delete_k(table, 1) == 0  # k = 1 is still in the postpone bucket: nothing to delete
    write_commit(table, rows([(1, 11, 2)]))
    assert triples(table) == []

    sid = compact(catalog, table="db.T")

    table = catalog.get_table("db.T")
    assert sid is not None and table.snapshot_manager.snapshot(sid).commit_kind == "COMPACT"
    # no key index: key 1 lives in both partitions, as Java leaves it
    assert triples(table) == [(1, 10, 1), (1, 11, 2), (2, 20, 1), (3, 30, 1), (4, 40, 1)]
    assert postpone_files(table) == {}
    entries = table.manifest_io.live_entries(table.snapshot_manager.latest())
    assert {e.total_buckets for e in entries} == {2}

    # a delete now sees both rows; its -D records wait in each partition's postpone bucket
    assert delete_k(table, 1) == 2
    assert postpone_files(table) == {1: 1, 2: 1}
    assert len(triples(table)) == 5
    compact(catalog, "db.T", partitions="pt=1")
    table = catalog.get_table("db.T")
    assert triples(table) == [(1, 11, 2), (2, 20, 1), (3, 30, 1), (4, 40, 1)]
    assert postpone_files(table) == {2: 1}
    compact(catalog, "db.T")
    assert triples(catalog.get_table("db.T")) == [(2, 20, 1), (3, 30, 1), (4, 40, 1)]


def test_fixed_bucket_batch_writes_hash_the_key_within_each_partition(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "F", **{"postpone.batch-write-fixed-bucket": "true"})
    write_commit(table, rows([(k, 0, k % 3) for k in range(12)]))
    write_commit(table, rows([(k, 1, k % 3) for k in range(6)] + [(0, 2, 1)]))
    expected = sorted([(k, 1 if k < 6 else 0, k % 3) for k in range(12)] + [(0, 2, 1)])
    assert triples(table) == expected
    assert postpone_files(table) == {}
    entries = table.manifest_io.live_entries(table.snapshot_manager.latest())
    assert {e.total_buckets for e in entries} == {2}
    assert {e.bucket for e in entries} == {0, 1}
    assert compact(catalog, "db.F") is None  # nothing postponed: nothing to compact
