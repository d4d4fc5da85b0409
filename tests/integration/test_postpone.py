"""Postpone-bucket tables (bucket = -2): postpone writes, fixed-bucket batch writes, postpone
compaction (all or chosen partitions), rescale, deletes and overwrite.

The reference for merged rows is a fixed-bucket table that received the same commits in the
same order: postpone compaction numbers the replayed records after everything in the bucket,
so when the postpone rows were also written last, both tables must hold the same rows.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact, rescale
from paimon_pyspark.spark.pipeline import postpone_seed
from paimon_pyspark.spec.binary_row import deserialize_with_arity, serialize_with_arity
from paimon_pyspark.spec.snapshot import Snapshot

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.int64()),
        ("s", pa.string()),
        pa.field("pt", pa.string(), nullable=False),
        ("kind", pa.string()),
    ]
)

SEED_STEPS = [
    ("insert 1-3 (postpone)", []),
    ("insert 4 (fixed bucket)", [4]),
    ("insert 5-6 (fixed bucket)", [4, 5, 6]),
    ("compact", [1, 2, 3, 4, 5, 6]),
    ("rescale 2023-10-02 to 1 bucket", [1, 2, 3, 4, 5, 6]),
    ("insert 7, 10 (fixed bucket) and 8, 9 (postpone)", [1, 2, 3, 4, 5, 6, 7, 10]),
    ("compact", list(range(1, 11))),
]


def rows(*items: tuple[Any, ...]) -> pa.Table:
    return pa.Table.from_pylist(
        [dict(zip(SCHEMA.names, r, strict=True)) for r in items], schema=SCHEMA
    )


def make(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        partition_keys=["pt"],
        primary_keys=["pt", "k"],
        options={"rowkind.field": "kind", **options},
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def postpone(catalog: FileSystemCatalog, name: str = "p", **extra: str) -> FileStoreTable:
    options = {
        "bucket": "-2",
        "postpone.batch-write-fixed-bucket": "false",
        "postpone.default-bucket-num": "2",
        **extra,
    }
    return make(catalog, name, options)


def live(table: FileStoreTable) -> list[Any]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return table.manifest_io.live_entries(snapshot)


def latest(table: FileStoreTable) -> Snapshot:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return snapshot


def test_seed_scenario_steps_as_in_java(catalog: FileSystemCatalog) -> None:
    steps = postpone_seed(catalog, "db.postpone_bucket_table", lambda n: compact(catalog, n), print)
    assert steps == SEED_STEPS
    table = catalog.get_table("db.postpone_bucket_table")
    counts: dict[str, set[int]] = {}
    for e in live(table):
        (date,) = deserialize_with_arity(e.partition, table.partition_types)
        counts.setdefault(date, set()).add(e.total_buckets)
    # rescale left 2023-10-02 with one bucket, the others got postpone.default-bucket-num
    assert counts == {"2023-10-01": {2}, "2023-10-02": {1}, "2023-10-03": {2}}
    amounts = read_all(table).select(["order_id", "total_amount"]).to_pylist()
    assert {r["order_id"]: r["total_amount"] for r in amounts}[4] == Decimal("300.00")


def test_postpone_files_invisible_until_compaction(catalog: FileSystemCatalog) -> None:
    table = postpone(catalog)
    data = rows(
        (3, 30, "c", "x", "+I"),
        (1, 10, "a", "x", "+I"),
        (3, 31, "c2", "x", "+U"),
        (2, 20, "b", "y", "+I"),
    )
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())
    assert read_all(table).num_rows == 0
    entries = live(table)
    assert {e.bucket for e in entries} == {-2} and {e.total_buckets for e in entries} == {-2}
    x = next(e for e in entries if e.file.row_count == 3)
    prefix = f"data--u-{builder.commit_user}-s-"
    assert x.file.file_name.startswith(prefix) and "-w-" in x.file.file_name
    assert x.file.level == 0 and x.file.min_sequence_number == x.file.max_sequence_number == -1
    assert x.file.value_stats_cols == ()
    # kept as written: unsorted, not deduplicated, every record numbered -1
    path = f"{table.path}/pt=x/bucket-postpone/{x.file.file_name}"
    physical = pq.read_table(path)
    assert physical["k"].to_pylist() == [3, 1, 3]
    assert physical["_KEY_k"].to_pylist() == [3, 1, 3]
    assert physical["_SEQUENCE_NUMBER"].to_pylist() == [-1, -1, -1]
    assert physical["_VALUE_KIND"].to_pylist() == [0, 0, 2]
    # a scan of all files sees them, replayed in write order
    rb = table.new_read_builder()
    splits = rb.new_scan().with_scan_all_files().plan().splits()
    assert {s.bucket for s in splits} == {-2}
    got = sort_rows(rb.new_read().to_arrow(splits))
    assert [(r["k"], r["v"]) for r in got] == [(1, 10), (2, 20), (3, 31)]
    assert compact(catalog, "db.p") is not None
    assert sorted(read_all(table)["v"].to_pylist()) == [10, 20, 31]
    assert {e.bucket for e in live(table)} <= {0, 1}
    assert latest(table).commit_kind == "COMPACT"


@pytest.mark.parametrize(
    "engine",
    [
        {},
        {"merge-engine": "first-row"},
        {"merge-engine": "partial-update"},
        {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
    ],
    ids=["deduplicate", "first-row", "partial-update", "aggregation"],
)
@pytest.mark.parametrize("strategy", ["full", "minor"])
def test_compaction_merges_postpone_rows_into_buckets_like_fixed_writes(
    catalog: FileSystemCatalog, engine: dict[str, str], strategy: str
) -> None:
    """Fixed rows first, then postpone rows: after compaction the table holds what a
    fixed-bucket table that received the same writes holds."""
    table = postpone(catalog, **engine)
    reference = make(catalog, "ref", {"bucket": "2", **engine})
    first = rows(*[(k, k, f"s{k}", "x" if k % 2 else "y", "+I") for k in range(20)])
    later = [
        rows((1, 100, None, "x", "+U"), (2, 200, "n2", "y", "+I"), (21, 21, "s21", "x", "+I")),
        rows((1, 101, "n1", "x", "+U"), (22, 22, None, "y", "+I"), (2, 201, None, "y", "+U")),
    ]
    if engine.get("merge-engine") not in ("first-row", "partial-update", "aggregation"):
        later.append(rows((4, 4, "s4", "y", "-D"), (21, 0, "s21", "x", "-D")))
    write_commit(table, first)
    write_commit(reference, first)
    assert compact(catalog, "db.p") is not None
    if engine.get("merge-engine") != "first-row":
        # a fixed-bucket write is write-only, as in Java: first-row reads skip its level 0
        mid = rows((1, 50, "m1", "x", "+U"), (6, 60, "m6", "y", "+U"), (30, 30, None, "x", "+I"))
        write_commit(table.copy({"postpone.batch-write-fixed-bucket": "true"}), mid)
        write_commit(reference, mid)
    for batch in later:
        write_commit(table, batch)
        write_commit(reference, batch)
    assert compact(catalog, "db.p", compact_strategy=strategy) is not None
    assert sort_rows(read_all(table)) == sort_rows(read_all(reference))
    assert not [e for e in live(table) if e.bucket == -2]


def test_compacting_one_partition_leaves_other_postpone_files(
    catalog: FileSystemCatalog,
) -> None:
    table = postpone(catalog)
    write_commit(
        table, rows((1, 1, "a", "x", "+I"), (2, 2, "b", "y", "+I"), (3, 3, "c", "z", "+I"))
    )
    assert compact(catalog, "db.p", partitions="pt=x;pt=z") is not None
    assert sorted(read_all(table)["k"].to_pylist()) == [1, 3]
    postponed = [e.partition for e in live(table) if e.bucket == -2]
    assert postponed == [_partition(table, "y")]
    assert compact(catalog, "db.p", partitions=[{"pt": "y"}]) is not None
    assert sorted(read_all(table)["k"].to_pylist()) == [1, 2, 3]
    assert compact(catalog, "db.p") is None  # nothing left in bucket-postpone


def test_fixed_bucket_batch_write_keeps_partition_bucket_counts(
    catalog: FileSystemCatalog,
) -> None:
    table = postpone(catalog)
    fixed = table.copy({"postpone.batch-write-fixed-bucket": "true"})
    write_commit(fixed, rows(*[(k, k, "a", "x", "+I") for k in range(10)]))
    assert {e.total_buckets for e in live(table)} == {2}
    assert rescale(catalog, "db.p", bucket_num=3, partition="pt=x") is not None
    write_commit(fixed, rows(*[(k, -k, "b", "x", "+U") for k in range(5, 15)]))
    write_commit(fixed, rows((1, 1, "c", "new", "+I")))
    totals = {(e.partition, e.total_buckets) for e in live(table)}
    assert totals == {(_partition(table, "x"), 3), (_partition(table, "new"), 2)}
    got = {r["k"]: r["v"] for r in read_all(table).to_pylist() if r["pt"] == "x"}
    assert got == {k: (k if k < 5 else -k) for k in range(15)}


def _partition(table: FileStoreTable, pt: str) -> bytes:
    return serialize_with_arity([pt], table.partition_types)


def test_rescale_reads_real_buckets_only_and_keeps_postpone_files(
    catalog: FileSystemCatalog,
) -> None:
    table = postpone(catalog)
    write_commit(
        table.copy({"postpone.batch-write-fixed-bucket": "true"}),
        rows(*[(k, k, "a", "x", "+I") for k in range(8)]),
    )
    write_commit(table, rows((100, 100, "later", "x", "+I")))
    snapshot = rescale(catalog, "db.p", bucket_num=1, partition="pt=x")
    assert snapshot is not None and latest(table).commit_kind == "OVERWRITE"
    entries = live(table)
    assert {(e.bucket, e.total_buckets) for e in entries} == {(0, 1), (-2, -2)}
    assert sorted(read_all(table)["k"].to_pylist()) == list(range(8))
    compact(catalog, "db.p")
    assert sorted(read_all(table)["k"].to_pylist()) == [*range(8), 100]
    with pytest.raises(Exception, match="bucket number"):
        rescale(catalog, "db.p", partition="pt=x")


def test_deletes_take_effect_at_compaction(catalog: FileSystemCatalog) -> None:
    """Java: DELETE sees only visible rows, so deleting a postponed row does nothing; a -D
    record written to the postpone bucket removes its key when compacted."""
    table = postpone(catalog)
    write_commit(table, rows((1, 10, "a", "x", "+I"), (2, 20, "b", "x", "+I")))
    pb = table.new_read_builder().new_predicate_builder()
    assert table.delete(pb.equal("k", 1)) == 0
    compact(catalog, "db.p")
    assert sorted(read_all(table)["k"].to_pylist()) == [1, 2]
    write_commit(table, rows((1, 10, "a", "x", "-D")))
    assert sorted(read_all(table)["k"].to_pylist()) == [1, 2]
    compact(catalog, "db.p")
    assert read_all(table)["k"].to_pylist() == [2]
    assert table.delete(pb.equal("k", 2)) == 1  # a visible row: -D into bucket-postpone
    assert read_all(table)["k"].to_pylist() == [2]
    compact(catalog, "db.p")
    assert read_all(table).num_rows == 0


def test_insert_overwrite_replaces_postpone_files(catalog: FileSystemCatalog) -> None:
    table = postpone(catalog)
    write_commit(table, rows((1, 1, "a", "x", "+I"), (2, 2, "b", "y", "+I")))
    compact(catalog, "db.p")
    write_commit(table, rows((3, 3, "c", "x", "+I"), (4, 4, "d", "y", "+I")))
    builder = table.new_batch_write_builder().overwrite({"pt": "x"})
    with builder.new_write() as write:
        write.write_arrow(rows((5, 5, "e", "x", "+I")))
        builder.new_commit().commit(write.prepare_commit())
    x = [e for e in live(table) if e.partition == _partition(table, "x")]
    assert [e.bucket for e in x] == [-2] and x[0].file.row_count == 1
    compact(catalog, "db.p")
    assert sorted(read_all(table)["k"].to_pylist()) == [2, 4, 5]
