"""Maintenance after every commit (maintenance/commit_maintenance.py, Java's
TableCommitImpl.maintain): every Python commit path runs it, ``write-only`` turns it off, and a
maintenance failing at any store call leaves the commit standing and the next commit's
maintenance finishing the work with nothing lost (every third store call of it fails in turn,
in both modes: all of them would take 40 s).

The observable is the table itself, no spy: with ``snapshot.num-retained.max = 1`` a path that
runs maintenance leaves one snapshot, one that does not leaves them all.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import read_all, sort_rows, write_commit
from tests.integration.test_expire import referenced_files
from tests.integration.test_month_warehouse import files_on_disk, snapshots_and_tags

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.maintenance.commit_maintenance import maintain
from paimon_pyspark.procedures import compact, rescale
from paimon_pyspark.spec.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_pyspark.store.clock import ManualClock, injected

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
KEEP_ONE = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
WRITE_ONLY = {"write-only": "true"}


def make(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    opts = {**KEEP_ONE, "bucket": "2", "bucket-key": "id", **options}
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, ["dt"], options=opts))
    return catalog.get_table("db.t")


def rows(i: int, dt_: str = "2026-11-01") -> pa.Table:
    return pa.table({"id": [i, i + 100], "dt": [dt_, dt_]}, schema=SCHEMA)


def stream_commits(catalog: FileSystemCatalog, table: FileStoreTable) -> None:
    builder = table.new_stream_write_builder()
    commit = builder.new_commit()
    with builder.new_write() as write:
        for i in range(3):
            write.write_arrow(rows(i))
            commit.commit(write.prepare_commit(i), i)


def filter_and_commit(catalog: FileSystemCatalog, table: FileStoreTable) -> None:
    builder = table.new_stream_write_builder()
    pending = {}
    with builder.new_write() as write:
        for i in range(3):
            write.write_arrow(rows(i))
            pending[i] = write.prepare_commit(i)
    builder.new_commit().filter_and_commit(pending)


def truncate(catalog: FileSystemCatalog, table: FileStoreTable) -> None:
    write_commit(table.copy(WRITE_ONLY), rows(1))
    table.new_batch_write_builder().new_commit().truncate_table()


def compact_procedure(catalog: FileSystemCatalog, table: FileStoreTable) -> None:
    for i in range(6):  # a bucket with compaction.min.file-num (5) files or more
        write_commit(table.copy(WRITE_ONLY), rows(i))
    compact(catalog, "db.t")


def rescale_procedure(catalog: FileSystemCatalog, table: FileStoreTable) -> None:
    for i in range(3):
        write_commit(table.copy(WRITE_ONLY), rows(i))
    rescale(catalog, "db.t", bucket_num=1, partition="dt=2026-11-01")


def batch_commits(catalog: FileSystemCatalog, table: FileStoreTable) -> None:
    for i in range(3):
        write_commit(table, rows(i))


PATHS: dict[str, Callable[[FileSystemCatalog, FileStoreTable], None]] = {
    "batch": batch_commits,
    "stream": stream_commits,
    "filter_and_commit": filter_and_commit,
    "truncate": truncate,
    "compact": compact_procedure,
    "rescale": rescale_procedure,
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("write_only", [False, True], ids=["maintained", "write-only"])
def test_every_commit_path_runs_maintenance_unless_write_only(
    catalog: FileSystemCatalog, path: str, write_only: bool
) -> None:
    table = make(catalog, **(WRITE_ONLY if write_only else {}))
    PATHS[path](catalog, table)
    sm = catalog.get_table("db.t").snapshot_manager
    ids = sm.list_ids()
    if write_only and path != "compact":
        assert len(ids) >= 2, ids  # nothing expired
    else:  # compact turns write-only off, as Java's CompactProcedure and CompactAction do
        assert ids == [sm.latest_id()], ids


# --- a maintenance failing at every store call in turn ---------------------------------------

CRASH_OPTIONS = {
    **KEEP_ONE,
    "partition.expiration-time": "2 d",
    "partition.timestamp-formatter": "yyyy-MM-dd",
    "end-input.check-partition-expire": "true",
    "tag.automatic-creation": "batch",
    "tag.num-retained-max": "2",
}
START = dt.datetime(2026, 11, 1, 12, 0)


def day(i: int) -> str:
    return (START.date() + dt.timedelta(days=i)).isoformat()


def used_and_present(table: FileStoreTable, expiring: bool = False) -> set[str]:
    """What the snapshots and tags use, all there; ``expiring``: an expiry may have stopped
    half-way, so only the latest snapshot and the tags must be whole (an expiring snapshot
    loses its files before its snapshot file goes, Java's order, and the next expiry deletes
    it)."""
    sm = table.snapshot_manager
    kept = [sm.snapshot(sm.latest_id() or 0), *table.tag_manager.tags().values()]
    used: set[str] = set()
    for s in kept if expiring else snapshots_and_tags(table):
        used |= referenced_files(table, s)
    missing = sorted(f for f in used if not os.path.exists(f))
    assert not missing, f"lost {missing[:3]}"
    return used


def test_a_maintenance_failing_at_any_store_call_is_finished_by_the_next_commit(
    catalog: FileSystemCatalog, tmp_path: Path
) -> None:
    """Day 4's commit is in the table, its maintenance (a batch tag, the oldest tag deleted,
    day 2's partition dropped by an OVERWRITE snapshot, snapshots expired) pending; each run
    fails at one store call, and day 5's commit must leave what a run without faults leaves."""
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, ["dt"], options=CRASH_OPTIONS))
    clock = ManualClock(int(START.timestamp() * 1000))
    with injected(clock):
        for i in range(4):
            write_commit(catalog.get_table("db.t"), rows(i, day(i)))
            clock.advance(days=1)
        # no maintenance and no batch tag (a batch write tags even under write-only, as Java's)
        pending = {**WRITE_ONLY, "tag.automatic-creation": "none"}
        write_commit(catalog.get_table("db.t").copy(pending), rows(4, day(4)))
    table = catalog.get_table("db.t")
    committed = table.snapshot_manager.latest_id()
    assert committed is not None
    pristine = tmp_path / "pristine"
    shutil.copytree(table.path, pristine)
    day4_rows = sort_rows(read_all(table))

    leaked: dict[int, int] = {}

    def finish_with_day_5(k: int = 0) -> tuple[list[dict[str, object]], list[str]]:
        clock.millis = int((START + dt.timedelta(days=5)).timestamp() * 1000)
        with injected(clock):
            write_commit(catalog.get_table("db.t"), rows(5, day(5)))
        done = catalog.get_table("db.t")
        left = files_on_disk(done) - used_and_present(done)
        if left:
            # a tag or snapshot file goes before the files only it kept (Java's order: no
            # tag or snapshot ever misses a file), and a cleanup that cannot read a manifest
            # skips rather than risk deleting a used file; what it left is garbage only
            live = {f"dt={r['dt']}" for r in read_all(done).to_pylist()}
            assert not [f for f in left if os.path.relpath(f, done.path).split(os.sep)[0] in live]
            leaked[k] = len(left)
        return sort_rows(read_all(done)), sorted(done.tag_manager.tags())

    def restore() -> FileStoreTable:
        shutil.rmtree(table.path)
        shutil.copytree(pristine, table.path)
        clock.millis = int((START + dt.timedelta(days=4)).timestamp() * 1000)
        return catalog.get_table("db.t")

    # a batch tag is made of the latest snapshot only: day 4's is made by day 4's maintenance
    # or never (Java's TagBatchCreation alike); everything else must come out the same
    missed = finish_with_day_5()
    with injected(clock):
        maintain(restore().store, committed, BATCH_COMMIT_IDENTIFIER, batch_write=True)
    full = finish_with_day_5()
    assert {r["dt"] for r in full[0]} == {day(4), day(5)} and missed[0] == full[0]
    assert full[1] == [f"batch-write-{day(4)}", f"batch-write-{day(5)}"]
    assert missed[1] == [f"batch-write-{day(3)}", f"batch-write-{day(5)}"]

    assert not leaked
    k, finished = 0, False
    while not finished:
        k += 3  # every third call, both modes: the whole run (~130 calls) takes 40 s
        assert k < 400
        fresh = restore()
        faulty = FaultyFileIO(fresh.file_io)
        clone = FileStoreTable(faulty, fresh.path, fresh.name, fresh.table_schema, {})
        faulty.arm(k, "before" if k % 2 else "after")
        with injected(clock):
            try:
                maintain(clone.store, committed, BATCH_COMMIT_IDENTIFIER, batch_write=True)
            except InjectedFault:
                pass
            finally:
                faulty.recording = False
        finished = len(faulty.calls) < k
        after = catalog.get_table("db.t")
        latest = after.snapshot_manager.latest_id()
        assert latest is not None and latest >= committed, f"call {k}: the commit is gone"
        got = sort_rows(read_all(after))
        assert got == day4_rows or {r["dt"] for r in got} == {day(3), day(4)}, f"call {k}"
        used_and_present(after, expiring=True)
        assert finish_with_day_5(k) in (full, missed), f"call {k}"
    assert k > 100
    assert sum(leaked.values()) <= 3 * len(leaked) and len(leaked) < k // 3, leaked
