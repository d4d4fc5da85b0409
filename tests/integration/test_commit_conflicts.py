"""Commit-time conflict rules (commit/conflict_detection.py, Java's ConflictDetection): LSM
key-range conflicts and total-bucket consistency, each from real conflicting commits, checked
to fail with CommitConflictError and to leave the latest snapshot and the rows as they were;
and ordinary workloads of every bucket mode that must keep committing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.compact.plan import plan_compaction, run_task
from paimon_pyspark.compact.postpone import rescaled_table
from paimon_pyspark.errors import CommitConflictError, PaimonError
from paimon_pyspark.procedures import compact, rescale
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.table.table_commit import TableCommit

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("dt", pa.string())]
)


def rows(ids: range, name: str = "v", dt: str = "a") -> pa.Table:
    return pa.table(
        {"id": list(ids), "name": [f"{name}{i}" for i in ids], "dt": [dt] * len(ids)},
        schema=SCHEMA,
    )


def make(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def state(table: FileStoreTable) -> tuple[int | None, list[dict[str, Any]]]:
    """What a failed commit must not change: the latest snapshot and the rows."""
    return table.snapshot_manager.latest_id(), sort_rows(read_all(table))


def live_files(table: FileStoreTable) -> list[DataFileMeta]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    files = [e.file for e in table.manifest_io.live_entries(snapshot)]
    return sorted(files, key=lambda f: f.min_sequence_number)


def upgrade(table: FileStoreTable, f: DataFileMeta, level: int) -> CommitMessage:
    """A hand-made compaction of bucket 0 of dt=a: ``f`` moved to ``level`` (same file)."""
    partition = serialize_with_arity(["a"], table.partition_types)
    increment = CompactIncrement(compact_before=(f,), compact_after=(f.with_level(level),))
    return CommitMessage(partition, 0, 1, compact_increment=increment)


def test_two_compactions_of_one_bucket_planned_together_conflict_on_levels(
    catalog: FileSystemCatalog,
) -> None:
    """Two compactions planned on the same snapshot, each taking its own files of one bucket
    to the top level (as two writers compacting what they wrote): the second one's output
    overlaps the first one's at level 5, so it must not commit."""
    table = make(catalog, "t", {"bucket": "1"})
    write_commit(table, rows(range(1, 11)))
    write_commit(table, rows(range(5, 16), "w"))
    first, second = live_files(table)
    (task,) = plan_compaction(table, full=True).tasks
    message_a = run_task(table, replace(task, files=(first,)))
    message_b = run_task(table, replace(task, files=(second,)))
    assert message_a is not None and message_b is not None
    for m in (message_a, message_b):
        assert [f.level for f in m.compact_increment.compact_after] == [5]
    TableCommit(table.store, "compactor-a").commit([message_a])
    before = state(table)

    with pytest.raises(CommitConflictError, match="LSM conflicts detected!") as err:
        TableCommit(table.store, "compactor-b").commit([message_b])
    text = str(err.value)
    assert "partition dt='a', bucket 0, level 5" in text
    (a_file,) = message_a.compact_increment.compact_after
    (b_file,) = message_b.compact_increment.compact_after
    assert a_file.file_name in text and b_file.file_name in text
    assert "commit user compactor-a" in text and "compactor-b" in text
    assert text.endswith("This COMPACT snapshot was not committed.")
    assert state(table) == before


def test_two_first_row_writers_of_one_bucket_conflict_at_their_compaction(
    catalog: FileSystemCatalog,
) -> None:
    """first-row writers compact at every commit. Two of them started on the same (empty)
    bucket both move their own file to the top level; the second COMPACT snapshot would
    leave two overlapping top-level files. As in Java, its APPEND snapshot (plain adds, not
    checked) lands and its COMPACT one fails, which leaves a consistent table."""
    table = make(catalog, "fr", {"bucket": "1", "merge-engine": "first-row"})
    builder_a = table.new_batch_write_builder()
    builder_b = table.new_batch_write_builder()
    with builder_a.new_write() as write_a, builder_b.new_write() as write_b:
        write_a.write_arrow(rows(range(1, 11), "a"))
        write_b.write_arrow(rows(range(5, 16), "b"))
        assert len(builder_a.new_commit().commit(write_a.prepare_commit())) == 2
        messages_b = write_b.prepare_commit()
    with pytest.raises(CommitConflictError, match="LSM conflicts detected!"):
        builder_b.new_commit().commit(messages_b)
    latest = table.snapshot_manager.latest()
    assert latest is not None and latest.commit_kind == "APPEND"
    assert {f.level for f in live_files(table)} == {0, 5}
    assert sort_rows(read_all(table)) == sort_rows(rows(range(1, 11), "a"))


def test_compact_commit_putting_an_overlapping_file_on_level_1_fails(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "t", {"bucket": "1"})
    write_commit(table, rows(range(1, 11)))
    (f1,) = live_files(table)
    TableCommit(table.store, "c1").commit([upgrade(table, f1, 1)])
    write_commit(table, rows(range(20, 31)))
    f2 = live_files(table)[-1]
    TableCommit(table.store, "c2").commit([upgrade(table, f2, 1)])  # keys 20..30 after 1..10: fine
    assert [f.level for f in live_files(table)] == [1, 1]

    for keys in (range(5, 16), range(30, 41)):  # overlapping, and touching at key 30
        write_commit(table, rows(keys, "x"))
        f3 = live_files(table)[-1]
        before = state(table)
        with pytest.raises(CommitConflictError, match="LSM conflicts detected!") as err:
            TableCommit(table.store, "c3").commit([upgrade(table, f3, 1)])
        assert "level 1" in str(err.value) and f3.file_name in str(err.value)
        assert state(table) == before


def test_compaction_planned_before_a_rescale_fails_on_total_buckets(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "t", {"bucket": "1"})
    write_commit(table, rows(range(0, 10)))
    write_commit(table, rows(range(5, 15), "w"))
    (task,) = plan_compaction(table, full=True).tasks
    message = run_task(table, task)
    assert message is not None and message.total_buckets == 1
    assert rescale(catalog, "db.t", bucket_num=2, partition="dt=a") is not None
    before = state(table)
    with pytest.raises(
        CommitConflictError,
        match=r"total buckets of partition dt='a' changed from 2 to 1 without overwrite",
    ):
        TableCommit(table.store, "compactor").commit([message])
    assert state(table) == before


def test_writer_with_another_bucket_count_is_checked_as_java_checks_it(
    catalog: FileSystemCatalog,
) -> None:
    """A writer configured with 2 buckets, started before a 1-bucket writer committed into the
    same partition. Java checks a plain append only when asked (appendCommitCheckConflict) or
    when recovering (filterAndCommit); otherwise the append lands and the next compaction of
    the partition refuses the mixed layout."""
    table = make(catalog, "t", {"bucket": "1"})
    stale = rescaled_table(table, 2).new_batch_write_builder()
    with stale.new_write() as write:
        write.write_arrow(rows(range(100, 110), "s"))
        messages = write.prepare_commit()
    write_commit(table, rows(range(0, 10)))
    before = state(table)
    error = r"total buckets of partition dt='a' changed from 1 to 2 without overwrite"

    with pytest.raises(CommitConflictError, match=error):
        TableCommit(table.store, "stale").append_commit_check_conflict().commit(messages)
    assert state(table) == before
    with pytest.raises(CommitConflictError, match=error):
        TableCommit(table.store, "stale").filter_and_commit({7: messages})
    assert state(table) == before

    TableCommit(table.store, "stale").commit(messages)  # Java's default: appends are not checked
    after_append = state(table)
    assert after_append[0] == (before[0] or 0) + 1
    with pytest.raises(CommitConflictError, match="changed from 1 to 2 without overwrite"):
        compact(catalog, "db.t")
    assert state(table) == after_append


def test_ordinary_workloads_still_commit(catalog: FileSystemCatalog) -> None:
    """Upserts with minor and full compaction, first-row push-up, dynamic buckets, postpone
    writes with compaction and rescale: every commit passes the conflict rules."""
    pk = make(catalog, "pk", {"bucket": "2", "num-sorted-run.compaction-trigger": "2"})
    model: dict[int, str] = {}
    for i, (keys, name) in enumerate([(range(i * 5, i * 5 + 10), f"r{i}") for i in range(4)]):
        write_commit(pk, rows(keys, name))
        model |= {k: f"{name}{k}" for k in keys}
        compact(catalog, "db.pk", compact_strategy="minor" if i % 2 == 0 else "full")
    write_commit(pk, rows(range(0, 3), "last"))
    model |= {k: f"last{k}" for k in range(3)}
    compact(catalog, "db.pk", compact_strategy="minor")
    assert {r["id"]: r["name"] for r in read_all(pk).to_pylist()} == model

    first_row = make(catalog, "fr", {"bucket": "1", "merge-engine": "first-row"})
    for i in range(3):
        assert len(write_commit(first_row, rows(range(i * 3, i * 3 + 6), f"f{i}"))) == 2
    assert {r["id"]: r["name"] for r in read_all(first_row).to_pylist()}[5] == "f05"

    dynamic = make(catalog, "dyn", {"bucket": "-1", "dynamic-bucket.target-row-num": "4"})
    for i in range(3):
        write_commit(dynamic, rows(range(i * 4, i * 4 + 8), f"d{i}"))
    builder = dynamic.new_batch_write_builder().overwrite()
    with builder.new_write() as write:
        write.write_arrow(rows(range(0, 6), "o"))
        builder.new_commit().commit(write.prepare_commit())
    assert {r["id"]: r["name"] for r in read_all(dynamic).to_pylist()} == {
        i: f"o{i}" for i in range(6)
    }

    postpone = make(catalog, "pp", {"bucket": "-2", "postpone.default-bucket-num": "2"})
    write_commit(postpone, rows(range(0, 10), "p"))
    compact(catalog, "db.pp")
    write_commit(postpone, rows(range(5, 15), "q"))
    assert rescale(catalog, "db.pp", bucket_num=3, partition="dt=a") is not None
    compact(catalog, "db.pp")
    write_commit(postpone.copy({"postpone.batch-write-fixed-bucket": "true"}), rows(range(20, 22)))
    compact(catalog, "db.pp")
    got_pp = {r["id"]: r["name"] for r in read_all(postpone).to_pylist()}
    expected = {i: f"p{i}" for i in range(5)} | {i: f"q{i}" for i in range(5, 15)}
    assert got_pp == expected | {20: "v20", 21: "v21"}
    latest = postpone.snapshot_manager.latest()
    assert latest is not None
    assert {e.total_buckets for e in postpone.manifest_io.live_entries(latest)} == {3}


def test_a_commit_user_moving_its_own_file_up_is_not_taken_for_a_retry(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "upgrade", {"bucket": "1", "write-only": "true"})
    builder = table.new_batch_write_builder(commit_user="driver")
    with builder.new_write() as write:
        write.write_arrow(rows(range(10)))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)
    (message,) = messages
    (written,) = message.new_files
    upgraded = replace(written, level=5)
    move_up = CommitMessage(
        message.partition,
        message.bucket,
        message.total_buckets,
        compact_increment=CompactIncrement(compact_before=(written,), compact_after=(upgraded,)),
    )
    assert TableCommit(table.store, "driver").commit([move_up]) == [2]
    live = table.manifest_io.live_entries(table.snapshot_manager.latest())
    assert [(e.file.file_name, e.file.level) for e in live] == [(written.file_name, 5)]
    assert TableCommit(table.store, "driver").commit([move_up]) == []  # now a retry: nothing added
    assert sort_rows(read_all(table)) == sort_rows(rows(range(10)))


def test_a_writer_checks_the_bucket_count_of_the_buckets_it_writes_only(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "t", {"bucket": "1"})
    write_commit(table, rows(range(0, 10)))
    assert rescale(catalog, "db.t", bucket_num=2, partition="dt=a") is not None
    write_commit(table, rows(range(0, 10), "b", dt="b"))  # another partition: still 1 bucket
    with pytest.raises(PaimonError, match=r"try to write dt=a with a new bucket num 1, but"):
        write_commit(table, rows(range(0, 3), "again"))
    expected = rows(range(0, 10)).to_pylist() + rows(range(0, 10), "b", dt="b").to_pylist()
    assert sort_rows(read_all(table)) == sort_rows(pa.Table.from_pylist(expected, SCHEMA))
