"""``procedures.compact`` on real tables: append (fixed bucket and bucket-unaware) and
primary-key tables, full and minor, checked against the rows before and the snapshot's files.
"""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.compact.plan import plan_compaction
from paimon_pyspark.errors import CompactArgumentError, CorruptTableError, UnsupportedOptionError
from paimon_pyspark.procedures import compact
from paimon_pyspark.procedures.arguments import parse_strategy, partition_filter
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.spec.manifest import ManifestEntry

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("dt", pa.string())]
)


def rows(ids: range, dt: str = "a") -> pa.Table:
    return pa.table(
        {"id": list(ids), "name": [f"n{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA
    )


def make_table(
    catalog: FileSystemCatalog, name: str, options: dict[str, str], partitioned: bool = False
) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"] if partitioned else [], options=options
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def live_files(table: FileStoreTable) -> list[ManifestEntry]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return table.manifest_io.live_entries(snapshot)


def delta_entries(table: FileStoreTable, snapshot_id: int) -> list[ManifestEntry]:
    snapshot = table.snapshot_manager.snapshot(snapshot_id)
    mio = table.manifest_io
    return mio.read_entries(mio.read_manifest_list(snapshot.delta_manifest_list))


def data_files_on_disk(table: FileStoreTable) -> set[str]:
    found = set()
    for root, _, names in os.walk(table.path):
        found |= {os.path.join(root, n) for n in names if n.startswith("data-")}
    return found


def check_compact_snapshot(
    table: FileStoreTable, snapshot_id: int, before: list[ManifestEntry]
) -> list[DataFileMeta]:
    """The COMPACT snapshot deletes exactly the inputs and adds COMPACT-sourced files."""
    snap = table.snapshot_manager.snapshot(snapshot_id)
    assert snap.commit_kind == "COMPACT"
    delta = delta_entries(table, snapshot_id)
    deleted = {e.file.file_name for e in delta if e.kind == mf.KIND_DELETE}
    added = [e.file for e in delta if e.kind == mf.KIND_ADD]
    assert deleted <= {e.file.file_name for e in before}
    assert added and all(f.file_source == FILE_SOURCE_COMPACT for f in added)
    return added


# --- fixed-bucket append -------------------------------------------------------------------


def test_full_compaction_of_a_fixed_bucket_keeps_rows_and_their_order(
    catalog: FileSystemCatalog,
) -> None:
    options = {"bucket": "1", "bucket-key": "id", "write-only": "true"}  # five files pile up
    table = make_table(catalog, "one_bucket", options)
    for start in range(0, 50, 10):
        write_commit(table, rows(range(start, start + 10)))
    before_rows = read_all(table)
    before = live_files(table)
    assert len(before) == 5

    sid = compact(catalog, "db.one_bucket")

    assert sid == 6
    table = catalog.get_table("db.one_bucket")
    assert read_all(table).equals(before_rows)  # same rows in the same (sequence) order
    after = live_files(table)
    assert len(after) == 1
    (f,) = check_compact_snapshot(table, sid, before)
    assert (f.min_sequence_number, f.max_sequence_number) == (0, 49)
    assert {e.file.file_name for e in delta_entries(table, sid) if e.kind == mf.KIND_DELETE} == {
        e.file.file_name for e in before
    }
    assert table.snapshot_manager.snapshot(sid).total_record_count == 50


def test_compacting_again_finds_nothing_and_adds_no_snapshot(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "again", {"bucket": "2", "bucket-key": "id"})
    for start in range(0, 40, 10):
        write_commit(table, rows(range(start, start + 10)))
    assert compact(catalog, "db.again") is not None
    latest = catalog.get_table("db.again").snapshot_manager.latest_id()
    assert compact(catalog, "db.again") is None
    assert catalog.get_table("db.again").snapshot_manager.latest_id() == latest


def test_minor_compaction_of_a_fixed_bucket_takes_the_oldest_min_file_num_files(
    catalog: FileSystemCatalog,
) -> None:
    options = {"bucket": "1", "bucket-key": "id", "write-only": "true"}  # six files pile up
    table = make_table(catalog, "minor", options)
    for start in range(0, 60, 10):
        write_commit(table, rows(range(start, start + 10)))
    before_rows = read_all(table)
    before = live_files(table)

    sid = compact(catalog, "db.minor", compact_strategy="minor")

    assert sid is not None
    table = catalog.get_table("db.minor")
    assert read_all(table).equals(before_rows)
    after = live_files(table)
    assert len(after) == 2  # 5 oldest (compaction.min.file-num) merged, the newest kept
    newest = max(before, key=lambda e: e.file.min_sequence_number).file.file_name
    assert newest in {e.file.file_name for e in after}


def test_big_files_are_left_alone_by_a_full_compaction(catalog: FileSystemCatalog) -> None:
    # with a tiny target size every file counts as big: nothing to rewrite
    table = make_table(
        catalog, "big", {"bucket": "1", "bucket-key": "id", "target-file-size": "10 b"}
    )
    for start in range(0, 40, 10):
        write_commit(table, rows(range(start, start + 10)))
    assert compact(catalog, "db.big") is None


# --- bucket-unaware append ------------------------------------------------------------------


def test_unaware_table_packs_small_files_of_each_chosen_partition(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, "unaware", {}, partitioned=True)
    for start in range(0, 60, 10):
        write_commit(table, pa.concat_tables([rows(range(start, start + 10), dt) for dt in "ab"]))
    before_rows = sort_rows(read_all(table))
    before = live_files(table)
    lines: list[str] = []

    sid = compact(catalog, "db.unaware", partitions="dt=a", progress=lines.append)

    assert sid is not None
    table = catalog.get_table("db.unaware")
    assert sort_rows(read_all(table)) == before_rows
    per_partition: dict[bytes, int] = {}
    for e in live_files(table):
        per_partition[e.partition] = per_partition.get(e.partition, 0) + 1
    assert sorted(per_partition.values()) == [1, 6]  # dt=a packed into one file, dt=b untouched
    check_compact_snapshot(table, sid, before)
    assert any("planned 1 compaction task" in line for line in lines)


def test_unaware_table_with_too_few_small_files_is_not_compacted(
    catalog: FileSystemCatalog,
) -> None:
    make_table(catalog, "few", {})
    table = catalog.get_table("db.few")
    for start in range(0, 40, 10):
        write_commit(table, rows(range(start, start + 10)))
    assert compact(catalog, "db.few") is None  # 4 files < compaction.min.file-num 5
    assert compact(catalog, "db.few", options={"compaction.min.file-num": "2"}) is not None
    assert len(live_files(catalog.get_table("db.few"))) == 1


def test_partition_list_of_dicts_and_where_pick_the_same_partitions(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, "where", {"bucket": "1", "bucket-key": "id"}, partitioned=True)
    for start in range(0, 30, 10):
        write_commit(table, pa.concat_tables([rows(range(start, start + 10), dt) for dt in "abc"]))
    pb = table.new_read_builder().new_predicate_builder()
    by_where = plan_compaction(table, True, _keep(table, where=pb.equal("dt", "b")))
    by_dicts = plan_compaction(table, True, _keep(table, specs=[{"dt": "b"}]))
    assert [t.partition_values for t in by_where.tasks] == [("b",)]
    assert by_where.tasks == by_dicts.tasks


def _keep(table: FileStoreTable, **kwargs: Any) -> Any:
    return partition_filter(table, kwargs.get("specs"), kwargs.get("where"))


def test_a_failing_task_leaves_no_snapshot_and_no_new_files(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "broken", {"bucket": "1", "bucket-key": "id"}, partitioned=True)
    for start in range(0, 30, 10):
        write_commit(table, pa.concat_tables([rows(range(start, start + 10), dt) for dt in "ab"]))
    plan = plan_compaction(table, parse_strategy("full"))
    assert len(plan.tasks) == 2
    # corrupt an input of the task that runs last, after the first one wrote its file
    last = plan.tasks[-1]
    rel = table.partition_rel_path(list(last.partition_values))
    Path(table.path, rel, "bucket-0", last.files[-1].file_name).write_bytes(b"not parquet")
    files_before = data_files_on_disk(table)
    latest = table.snapshot_manager.latest_id()

    with pytest.raises(CorruptTableError, match="cannot be read"):
        compact(catalog, "db.broken")

    assert catalog.get_table("db.broken").snapshot_manager.latest_id() == latest
    assert data_files_on_disk(table) == files_before


# --- primary-key tables ---------------------------------------------------------------------

ORDERS = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        ("price", pa.decimal128(32, 2)),
        ("ts", pa.timestamp("ms")),
    ]
)


def orders(ids: list[int], version: int = 0) -> pa.Table:
    return pa.table(
        {
            "order_id": ids,
            "price": [Decimal(f"{i}.{version:02d}") for i in ids],
            "ts": [dt.datetime(2026, 11, 1, 0, 0, i % 60) for i in ids],
        },
        schema=ORDERS,
    )


def pk_table(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(ORDERS, primary_keys=["order_id"], options=options)
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def commit_rows(table: FileStoreTable, upserts: pa.Table | None, deletes: pa.Table | None) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        if upserts is not None:
            write.write_arrow(upserts)
        if deletes is not None:
            write.delete_arrow(deletes)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def by_key(table: FileStoreTable) -> list[dict[str, Any]]:
    return sorted(read_all(table).to_pylist(), key=lambda r: r["order_id"])


def test_seed_example_delete_then_compact_reads_the_surviving_orders(
    catalog: FileSystemCatalog,
) -> None:
    table = pk_table(catalog, "with_pk_table", {"bucket": "1"})
    write_commit(table, orders([1]))  # the seed's three inserts
    write_commit(table, orders([2, 3]))
    write_commit(table, orders([4, 5, 6, 7]))
    pb = table.new_read_builder().new_predicate_builder()
    assert table.delete(pb.is_in("order_id", [2, 3])) == 2

    sid = compact(catalog, "db.with_pk_table")

    table = catalog.get_table("db.with_pk_table")
    assert sid is not None and table.snapshot_manager.snapshot(sid).commit_kind == "COMPACT"
    assert [r["order_id"] for r in by_key(table)] == [1, 4, 5, 6, 7]
    (only,) = live_files(table)
    assert (only.file.level, only.file.delete_row_count, only.file.row_count) == (5, 0, 5)


def test_full_compaction_deduplicates_upserts_and_drops_deletes(
    catalog: FileSystemCatalog,
) -> None:
    table = pk_table(catalog, "dedup", {"bucket": "2"})
    commit_rows(table, orders(list(range(0, 40))), None)
    commit_rows(table, orders(list(range(20, 60)), version=1), orders([0, 1, 2]))
    commit_rows(table, orders(list(range(50, 70)), version=2), orders([21, 55]))
    commit_rows(table, orders([1], version=3), None)  # deleted, then back
    expected = by_key(table)
    assert {r["order_id"] for r in expected} == set(range(70)) - {0, 2, 21, 55}
    before = live_files(table)

    sid = compact(catalog, "db.dedup", compact_strategy="full")

    assert sid is not None
    table = catalog.get_table("db.dedup")
    assert by_key(table) == expected
    after = live_files(table)
    assert {e.bucket for e in after} == {0, 1}
    assert all(e.file.level == 5 and e.file.delete_row_count == 0 for e in after)
    assert sum(e.file.row_count for e in after) == len(expected)  # one record per live key
    check_compact_snapshot(table, sid, before)
    assert table.snapshot_manager.snapshot(sid).total_record_count == len(expected)


def test_minor_compaction_keeps_deletes_above_older_data_and_full_drops_them(
    catalog: FileSystemCatalog,
) -> None:
    table = pk_table(catalog, "minor_pk", {"bucket": "1", "write-only": "true"})
    commit_rows(table, orders(list(range(2000))), None)
    assert compact(catalog, "db.minor_pk") is not None  # one big run at level 5
    for i in range(5):  # five small level-0 runs: the trigger
        deletes = orders([10 * i + 1]) if i == 2 else None
        commit_rows(table, orders([10 * i, 10 * i + 5], version=i + 1), deletes)
    expected = by_key(table)
    sizes = {level: 0 for level in (0, 5)}
    for e in live_files(table):
        sizes[e.file.level] += e.file.file_size
    # the size-ratio pick stops below the big run only if it outweighs the five small ones
    assert sizes[5] > 1.01 * sizes[0]
    assert compact(catalog, "db.minor_pk", compact_strategy="minor") is not None
    table = catalog.get_table("db.minor_pk")
    assert by_key(table) == expected
    levels = sorted((e.file.level, e.file.delete_row_count) for e in live_files(table))
    # the five level-0 runs go to level 4, just below the big run; older data sits at level 5,
    # so the delete of key 21 must stay to hide it
    assert levels == [(4, 1), (5, 0)]

    assert compact(catalog, "db.minor_pk") is not None
    table = catalog.get_table("db.minor_pk")
    assert by_key(table) == expected
    assert [(e.file.level, e.file.delete_row_count) for e in live_files(table)] == [(5, 0)]


def test_minor_compaction_below_the_trigger_does_nothing(catalog: FileSystemCatalog) -> None:
    table = pk_table(catalog, "calm", {"bucket": "1"})
    for i in range(4):
        commit_rows(table, orders([i]), None)
    assert compact(catalog, "db.calm", compact_strategy="minor") is None


def test_big_non_overlapping_files_are_upgraded_not_rewritten(
    catalog: FileSystemCatalog,
) -> None:
    # with target-file-size 1 kb, every flushed file is "big" (>= 0.7 kb)
    options = {"bucket": "1", "target-file-size": "1 kb", "write-only": "true"}
    table = pk_table(catalog, "upgrade", options)
    for start in (0, 100, 200):
        commit_rows(table, orders(list(range(start, start + 50))), None)
    before = live_files(table)
    on_disk = data_files_on_disk(table)
    expected = by_key(table)

    sid = compact(catalog, "db.upgrade")

    assert sid is not None
    table = catalog.get_table("db.upgrade")
    assert data_files_on_disk(table) == on_disk  # nothing written: only levels changed
    after = live_files(table)
    assert sorted(e.file.file_name for e in after) == sorted(e.file.file_name for e in before)
    assert {e.file.level for e in after} == {5}
    delta = delta_entries(table, sid)
    n = len(before)
    assert sorted((e.kind, e.file.level) for e in delta) == [(0, 5)] * n + [(1, 0)] * n
    assert by_key(table) == expected


def test_a_lone_big_file_of_deletes_is_rewritten_away_at_the_top_level(
    catalog: FileSystemCatalog,
) -> None:
    table = pk_table(catalog, "lone_delete", {"bucket": "1", "target-file-size": "1 kb"})
    commit_rows(table, orders(list(range(50))), None)
    commit_rows(table, None, orders(list(range(100, 150))))  # deletes of absent keys
    expected = by_key(table)
    assert compact(catalog, "db.lone_delete") is not None
    table = catalog.get_table("db.lone_delete")
    assert by_key(table) == expected
    after = live_files(table)
    assert {(e.file.level, e.file.delete_row_count) for e in after} == {(5, 0)}
    assert sum(e.file.row_count for e in after) == 50  # the 50 deletes are gone


def test_failed_pk_compaction_keeps_upgraded_inputs(catalog: FileSystemCatalog) -> None:
    schema = Schema.from_pyarrow_schema(
        pa.schema([*ORDERS, pa.field("dt", pa.string(), nullable=False)]),
        partition_keys=["dt"],
        primary_keys=["dt", "order_id"],
        options={"bucket": "1", "target-file-size": "1 kb", "write-only": "true"},
    )
    catalog.create_table("db.pk_broken", schema)
    table = catalog.get_table("db.pk_broken")

    def part(ids: list[int], dt_: str) -> pa.Table:
        return orders(ids).append_column(
            pa.field("dt", pa.string(), False), pa.array([dt_] * len(ids))
        )

    commit_rows(table, part(list(range(0, 50)), "a"), None)  # dt=a: two disjoint runs,
    commit_rows(table, part(list(range(100, 150)), "a"), None)  # upgraded
    commit_rows(table, part(list(range(0, 50)), "b"), None)  # dt=b: overlapping, merged
    commit_rows(table, part(list(range(25, 75)), "b"), None)
    plan = plan_compaction(table, True)
    assert [t.partition_values for t in plan.tasks] == [("a",), ("b",)]
    for broken in plan.tasks[-1].files:  # whichever dt=b file is read first fails
        Path(table.path, "dt=b", "bucket-0", broken.file_name).write_bytes(b"garbage")
    files_before = data_files_on_disk(table)

    with pytest.raises(CorruptTableError, match="cannot be read"):
        compact(catalog, "db.pk_broken")

    assert data_files_on_disk(table) == files_before  # dt=a's upgraded inputs survive
    assert catalog.get_table("db.pk_broken").snapshot_manager.latest_id() == 4


def test_first_row_table_compacts_fully(catalog: FileSystemCatalog) -> None:
    table = pk_table(catalog, "first", {"bucket": "1", "merge-engine": "first-row"})
    for version in range(3):
        commit_rows(table, orders([1, 2, 3], version=version), None)
    assert compact(catalog, "db.first", options="compaction.force-rewrite-all-files=true")
    table = catalog.get_table("db.first")
    assert by_key(table) == sorted(orders([1, 2, 3]).to_pylist(), key=lambda r: r["order_id"])
    assert [e.file.level for e in live_files(table)] == [5]


def test_force_lookup_compacts_level0_at_each_commit(catalog: FileSystemCatalog) -> None:
    """Java's LookupMergeFunction: a partial-update table that needs lookup merges each new
    level-0 file with the row looked up above, so a minor compaction works as a full one
    (tests/integration/test_changelog_lookup.py has the lookup in detail)."""
    options = {"bucket": "1", "force-lookup": "true", "merge-engine": "partial-update"}
    partial = pk_table(catalog, "partial", options)
    commit_rows(partial, orders([1, 2]), None)
    commit_rows(partial, orders([2], version=1), None)
    assert min(e.file.level for e in live_files(partial)) >= 1
    compact(catalog, "db.partial", compact_strategy="minor")
    assert by_key(catalog.get_table("db.partial")) == sorted(
        [*orders([1]).to_pylist(), *orders([2], 1).to_pylist()], key=lambda r: r["order_id"]
    )
    table = pk_table(catalog, "dedup", {"bucket": "1", "force-lookup": "true"})
    for version in range(2):  # each commit compacts its level-0 file, as Java's writer does
        commit_rows(table, orders([1, 2, 3], version=version), None)
        assert min(e.file.level for e in live_files(table)) >= 1
    assert by_key(table) == sorted(orders([1, 2, 3], 1).to_pylist(), key=lambda r: r["order_id"])


def test_arguments_java_refuses_are_refused(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "args", {}, partitioned=True)
    write_commit(table, rows(range(10)))
    pb = table.new_read_builder().new_predicate_builder()
    with pytest.raises(CompactArgumentError, match="cannot be used together"):
        compact(catalog, "db.args", partitions="dt=a", where=pb.equal("dt", "a"))
    with pytest.raises(CompactArgumentError, match="may only use partition columns"):
        compact(catalog, "db.args", where=pb.equal("id", 1))
    with pytest.raises(CompactArgumentError, match="not partition keys"):
        compact(catalog, "db.args", partitions="id=1")
    with pytest.raises(UnsupportedOptionError, match="only supported for fixed-bucket"):
        compact(catalog, "db.args", buckets="0")
