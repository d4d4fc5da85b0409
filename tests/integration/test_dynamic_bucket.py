"""Dynamic bucket (bucket = -1, PK containing the partition keys) and cross-partition upsert.

The hash index and its manifest, bucket filling by ``dynamic-bucket.target-row-num``, keys
updated in place, overwrite dropping the replaced partitions' index entries, and the seed's
cross-partition scenario with every merge engine's Java semantics.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.bucket.dynamic import HashBucketAssigner, deal_new_keys
from paimon_pyspark.bucket.fixed import hash_rows
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler
from paimon_pyspark.types.data_types import AtomicType

SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    cat = CatalogFactory.create({"warehouse": str(tmp_path)})
    cat.create_database("db", ignore_if_exists=True)
    return cat


def make(catalog: FileSystemCatalog, name: str, pk: list[str], **options: str) -> FileStoreTable:
    opts = {"dynamic-bucket.target-row-num": "2", **options}
    catalog.create_table(
        f"db.{name}",
        Schema.from_pyarrow_schema(SCHEMA, partition_keys=["pt"], primary_keys=pk, options=opts),
    )
    return catalog.get_table(f"db.{name}")


def rows(*triples: tuple[int, int, int]) -> pa.Table:
    return pa.Table.from_pylist([dict(pk=a, v=b, pt=c) for a, b, c in triples], schema=SCHEMA)


def triples(table: FileStoreTable) -> list[tuple[int, int, int]]:
    return sorted((r["pk"], r["v"], r["pt"]) for r in read_all(table).to_pylist())


def hash_index(table: FileStoreTable) -> dict[tuple[int, int], list[int]]:
    """(pt, bucket) -> sorted key hashes, from the latest snapshot's index manifest."""
    handler = IndexFileHandler(table.file_io, table.path, table.manifest_io.codec)
    out = {}
    for e in handler.scan(table.snapshot_manager.latest(), HASH_INDEX):
        pt = int.from_bytes(e.partition[12:16], "little")
        out[(pt, e.bucket)] = sorted(handler.read_hash(e.index_file).tolist())
    return out


def key_buckets(table: FileStoreTable) -> dict[tuple[int, int], set[int]]:
    """(pt, pk) -> buckets holding a live row of it."""
    out: dict[tuple[int, int], set[int]] = {}
    rb = table.new_read_builder()
    read = rb.new_read()
    for split in rb.new_scan().plan().splits():
        for r in read.to_arrow([split]).to_pylist():
            out.setdefault((r["pt"], r["pk"]), set()).add(split.bucket)
    return out


def test_target_row_num_2_puts_4_keys_into_2_buckets_per_partition(
    catalog: FileSystemCatalog,
) -> None:
    t = make(catalog, "t", ["pk", "pt"])
    assert t.bucket_mode == BucketMode.HASH_DYNAMIC
    write_commit(t, rows(*[(k, k * 10, pt) for pt in (1, 2) for k in range(1, 5)]))
    buckets = key_buckets(t)
    for pt in (1, 2):
        per_bucket = [
            sorted(k for (p, k), b in buckets.items() if p == pt and bk in b) for bk in (0, 1)
        ]
        assert per_bucket == [[1, 2], [3, 4]]  # arrival order fills bucket 0 first
    index = hash_index(t)
    assert sorted(index) == [(1, 0), (1, 1), (2, 0), (2, 1)]
    hashes = hash_rows([pa.array([1, 2], pa.int32())], [AtomicType("INT", nullable=False)])
    assert index[(1, 0)] == sorted(hashes.tolist())
    # the index manifest is Avro with only ADD entries, named index-manifest-<uuid>-<n>
    snapshot = t.snapshot_manager.latest()
    assert snapshot is not None and snapshot.index_manifest.startswith("index-manifest-")
    assert all(n.startswith("index-") for n in os.listdir(os.path.join(t.path, "index")))


def test_reinserted_key_is_updated_in_place_never_in_a_second_bucket(
    catalog: FileSystemCatalog,
) -> None:
    t = make(catalog, "t", ["pk", "pt"])
    write_commit(t, rows((1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1)))
    before = hash_index(t)
    index_files = set(os.listdir(os.path.join(t.path, "index")))
    write_commit(t, rows((3, 31, 1), (1, 11, 1), (5, 50, 1)))  # two updates, one new key
    write_commit(t, rows((5, 51, 1), (4, 41, 1)))  # a new writer loads the index again
    assert triples(t) == [(1, 11, 1), (2, 20, 1), (3, 31, 1), (4, 41, 1), (5, 51, 1)]
    buckets = key_buckets(t)
    assert all(len(b) == 1 for b in buckets.values()), buckets
    assert buckets[(1, 1)] == buckets[(1, 2)] == {0} and buckets[(1, 5)] == {2}
    after = hash_index(t)
    assert after[(1, 0)] == before[(1, 0)] and after[(1, 1)] == before[(1, 1)]
    # only bucket 2's index file was new: unchanged key sets are not rewritten
    new_files = set(os.listdir(os.path.join(t.path, "index"))) - index_files
    assert len(new_files) == 1


def test_max_buckets_bounds_new_buckets() -> None:
    counts: dict[int, int] = {}
    got, reached = deal_new_keys(7, counts, 2, lambda b: True, 3)
    assert got[:6].tolist() == [0, 0, 1, 1, 2, 2] and reached and got[6] in (0, 1, 2)
    # two assigners never create the same bucket, and each key has one assigner
    a0 = HashBucketAssigner(lambda p: [], 1, -1, num_assigners=2, assign_id=0)
    a1 = HashBucketAssigner(lambda p: [], 1, -1, num_assigners=2, assign_id=1)
    h0 = np.array([2, 4, 6], np.int32)
    h1 = np.array([1, 3, -5], np.int32)
    assert a0.assign(b"p", h0).tolist() == [0, 2, 4]
    assert a1.assign(b"p", h1).tolist() == [1, 3, 5]
    assert a0.assign(b"p", h0[::-1]).tolist() == [4, 2, 0]


def test_delete_and_overwrite_keep_the_hash_index_consistent(catalog: FileSystemCatalog) -> None:
    t = make(catalog, "t", ["pk", "pt"])
    write_commit(t, rows((1, 10, 1), (2, 20, 1), (3, 30, 1), (7, 70, 2)))
    t.delete(t.new_read_builder().new_predicate_builder().equal("pk", 2))
    assert triples(t) == [(1, 10, 1), (3, 30, 1), (7, 70, 2)]
    builder = t.new_batch_write_builder().overwrite()
    with builder.new_write() as write:
        write.write_arrow(rows((9, 90, 1)))
        builder.new_commit().commit(write.prepare_commit())
    assert triples(t) == [(7, 70, 2), (9, 90, 1)]
    index = hash_index(t)
    nine = hash_rows([pa.array([9], pa.int32())], [AtomicType("INT", nullable=False)])
    assert index[(1, 0)] == nine.tolist() and (1, 1) not in index  # pt=1's old entries dropped
    assert (2, 0) in index
    write_commit(t, rows((9, 91, 1), (1, 11, 1)))
    assert triples(t) == [(1, 11, 1), (7, 70, 2), (9, 91, 1)]
    assert all(len(b) == 1 for b in key_buckets(t).values())


def test_seed_cross_partition_upsert_moves_the_key(catalog: FileSystemCatalog) -> None:
    t = make(catalog, "t", ["pk"], bucket="-1")
    assert t.bucket_mode == BucketMode.KEY_DYNAMIC
    write_commit(t, rows((1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1)))
    write_commit(t, rows((1, 11, 2)))
    assert triples(t) == [(1, 11, 2), (2, 20, 1), (3, 30, 1), (4, 40, 1)]
    assert not os.path.exists(os.path.join(t.path, "index"))  # no hash index, as in Java


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        # deduplicate: the old row is deleted, the key lives in its newest partition
        ("deduplicate", [(1, 11, 2), (2, 22, 1), (3, 30, 1), (6, 61, 2)]),
        # partial-update / aggregation: the row goes into the key's old partition
        ("partial-update", [(1, 11, 1), (2, 22, 1), (3, 30, 1), (6, 61, 3)]),
        ("aggregation", [(1, 21, 1), (2, 63, 1), (3, 30, 1), (6, 121, 3)]),
        # first-row: rows of a key in another partition are dropped
        ("first-row", [(1, 10, 1), (2, 20, 1), (3, 30, 1), (6, 60, 3)]),
    ],
)
def test_cross_partition_merge_engines_as_java(
    catalog: FileSystemCatalog, engine: str, expected: list[tuple[int, int, int]]
) -> None:
    extra = {"fields.v.aggregate-function": "sum"} if engine == "aggregation" else {}
    t = make(catalog, "t", ["pk"], **{"merge-engine": engine, **extra})
    write_commit(t, rows((1, 10, 1), (2, 20, 1), (3, 30, 1)))
    write_commit(t, rows((1, 11, 2)))
    # within one batch: key 2 moves away and back, key 6 is new and moves
    write_commit(t, rows((2, 21, 2), (2, 22, 1), (6, 60, 3), (6, 61, 2)))
    assert triples(t) == expected
    assert all(len(b) == 1 for b in key_buckets(t).values())
    pks = [k for (_, k) in key_buckets(t)]
    assert len(pks) == len(set(pks))  # every key in one partition


def test_cross_partition_index_ttl_skips_old_buckets(catalog: FileSystemCatalog) -> None:
    t = make(catalog, "t", ["pk"], **{"cross-partition-upsert.index-ttl": "1 ms"})
    write_commit(t, rows((1, 10, 1)))
    import time

    time.sleep(0.05)
    write_commit(t, rows((1, 11, 2)))  # the old key is outside the TTL: Java duplicates too
    assert triples(t) == [(1, 10, 1), (1, 11, 2)]


def test_fixed_bucket_pk_without_partition_keys_is_written_as_in_java(
    catalog: FileSystemCatalog,
) -> None:
    """Java 1.4.2 accepts bucket = N with such a key; keys are unique per partition only."""
    t = make(catalog, "t", ["pk"], bucket="2")
    assert t.bucket_mode == BucketMode.HASH_FIXED
    write_commit(t, rows((1, 10, 1), (2, 20, 1)))
    t.delete(t.new_read_builder().new_predicate_builder().equal("pk", 1))
    write_commit(t, rows((1, 11, 2), (2, 21, 1)))
    assert triples(t) == [(1, 11, 2), (2, 21, 1)]
