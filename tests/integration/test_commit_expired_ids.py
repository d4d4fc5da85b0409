"""Issue 36: commits that returned were lost, and replayed ones doubled, when snapshots expired
while a commit ran.

The loss, event by event (tests 1 and 2 replay it in one process): writer A reads snapshot 1 as
the latest and prepares snapshot 2; meanwhile writer B commits snapshots 2 and 3, and B's expiry
(``snapshot.num-retained.max`` = 1) deletes snapshots 1 and 2; A then publishes ``snapshot-2``
with create-if-absent, which succeeds because the id is free again. A's commit returned, but its
snapshot is below the newest one, on no reader's path: its rows were lost. A restarted writer's
first commit is slow enough for this when snapshots expire within a second.

The fix (commit/file_store_commit.py, commit/chain_check.py): the attempt sees its base expire
before publishing, or finds after publishing that its snapshot is off the chain, withdraws it
and commits again on the newest snapshot. Each test fails on the code before the fix.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from tests.integration.faulty_file_io import FaultyFileIO
from tests.integration.table_helpers import read_all, write_commit

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

SCHEMA = pa.schema([("id", pa.int64())])
SHORT_RETENTION = {
    "snapshot.num-retained.min": "1",
    "snapshot.num-retained.max": "1",
    "commit.min-retry-wait": "1 ms",
    "commit.max-retry-wait": "5 ms",
}


class HookedFileIO(FaultyFileIO):
    """The real FileIO; ``hook`` runs once, just before the first write that ``when`` picks."""

    def __init__(self, inner: Any, when: Callable[[str, str], bool], hook: Callable[[], None]):
        super().__init__(inner)
        self.when, self.hook, self.fired = when, hook, False

    def _fire(self, call: str, path: str) -> None:
        if not self.fired and self.when(call, path):
            self.fired = True
            self.hook()

    def write_bytes(self, path: str, data: bytes) -> None:
        self._fire("write_bytes", path)
        self.inner.write_bytes(path, data)

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        self._fire("try_write_atomic", path)
        return self.inner.try_write_atomic(path, data)


A_AND_B = [0, 1, 2, 10, 11, 12, 100, 101, 102, 200, 201, 202]
"""B's first commit, A's, then B's two while A's commit ran."""


def _rows(first: int, n: int = 3) -> pa.Table:
    return pa.table({"id": list(range(first, first + n))}, schema=SCHEMA)


def _table(tmp_path: Any, options: dict[str, str] | None = None) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path / "wh")})
    catalog.create_database("db")
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, options=options or SHORT_RETENTION)
    )
    return catalog.get_table("db.t")


def _hooked(table: FileStoreTable, io: FaultyFileIO) -> FileStoreTable:
    return FileStoreTable(io, table.path, table.name, table.store.table_schema, {})


def _b_commits_and_expires(table: FileStoreTable, commits: int = 2) -> Callable[[], None]:
    def hook() -> None:
        for k in range(1, commits + 1):
            write_commit(table, _rows(100 * k))
        # B's expiry kept only its newest snapshot: A's base and the id A prepares are free
        assert table.snapshot_manager.list_ids() == [commits + 1]

    return hook


def _snapshot_path(table: FileStoreTable, sid: int) -> str:
    return os.path.join(table.path, "snapshot", f"snapshot-{sid}")


def _commit_a(a_table: FileStoreTable, rows: pa.Table) -> list[int]:
    builder = a_table.new_stream_write_builder("writer-a")
    write, commit = builder.new_write(), builder.new_commit()
    write.write_arrow(rows)
    ids = commit.commit(write.prepare_commit(1), 1)
    write.close()
    return ids


def test_a_publish_at_an_id_that_expired_meanwhile_is_withdrawn_and_committed_again(
    tmp_path: Any,
) -> None:
    table = _table(tmp_path)
    write_commit(table, _rows(0))
    target = _snapshot_path(table, 2)
    io = HookedFileIO(
        table.file_io,
        lambda call, path: call == "try_write_atomic" and path == target,
        _b_commits_and_expires(table),
    )
    ids = _commit_a(_hooked(table, io), _rows(10))
    assert io.fired
    # A's first publish landed at the free id 2, below B's snapshot 3: withdrawn, then 4
    assert ids == [4]
    assert table.snapshot_manager.list_ids() == [4]
    assert sorted(read_all(table)["id"].to_pylist()) == A_AND_B
    assert table.new_stream_write_builder("writer-a").new_commit().filter_committed([1, 2]) == [2]


def test_a_base_that_expired_before_the_publish_is_not_built_on(tmp_path: Any) -> None:
    table = _table(tmp_path)
    write_commit(table, _rows(0))
    lists: list[str] = []

    def second_manifest_list(call: str, path: str) -> bool:
        if call == "write_bytes" and os.path.basename(path).startswith("manifest-list-"):
            lists.append(path)
        return len(lists) == 2  # the delta list, then the base list of the attempt

    io = HookedFileIO(table.file_io, second_manifest_list, _b_commits_and_expires(table))
    ids = _commit_a(_hooked(table, io), _rows(10))
    assert io.fired
    assert ids == [4]
    assert not os.path.exists(_snapshot_path(table, 2))
    assert sorted(read_all(table)["id"].to_pylist()) == A_AND_B


def test_a_stale_publish_left_by_a_dead_writer_is_not_taken_for_its_commit(
    tmp_path: Any,
) -> None:
    """A writer dies between its publish at a free, expired id and the check: the stale
    snapshot stays, and a stale LATEST hint may even name it. The restarted writer must not
    take its identifier for committed, and other writers must not build on it."""
    table = _table(tmp_path)
    write_commit(table, _rows(0))
    target = _snapshot_path(table, 2)

    class Died(BaseException):
        pass

    class DiesAfterPublish(HookedFileIO):
        def try_write_atomic(self, path: str, data: bytes) -> bool:
            published = super().try_write_atomic(path, data)
            if path == target:
                raise Died
            return published

    io = DiesAfterPublish(
        table.file_io,
        lambda call, path: call == "try_write_atomic" and path == target,
        _b_commits_and_expires(table, 3),
    )
    with contextlib.suppress(Died):
        _commit_a(_hooked(table, io), _rows(10))
    sm = table.snapshot_manager
    assert sm.list_ids() == [2, 4]
    assert sm.snapshot(2).commit_user == "writer-a"
    sm.write_latest_hint(2)  # a slow writer's stale hint: names the stale snapshot, 3 is free
    # the restarted writer replays checkpoint 1: not committed, so it commits it
    ids = _commit_a(table, _rows(10))
    assert ids == [5]
    rows = [*A_AND_B, 300, 301, 302]
    assert sorted(read_all(table)["id"].to_pylist()) == rows
    assert write_commit(table, _rows(400)) == [6]
    assert sorted(read_all(table)["id"].to_pylist()) == [*rows, 400, 401, 402]


def test_a_replayed_checkpoint_is_skipped_after_its_snapshots_expired(tmp_path: Any) -> None:
    """Exactly once outlives expiry: the newest snapshot records each commit user's last
    identifier, so a writer down longer than the retention does not commit its last checkpoint
    a second time (Java 1.4.2 would)."""
    table = _table(tmp_path)
    builder = table.new_stream_write_builder("writer-w")
    with builder.new_write() as write, builder.new_commit() as commit:
        for n in (1, 2, 3):
            write.write_arrow(_rows(10 * n))
            assert commit.commit(write.prepare_commit(n), n) != []
    for k in range(5):
        write_commit(table, _rows(1000 + 10 * k))
    sm = table.snapshot_manager
    assert all(sm.snapshot(i).commit_user != "writer-w" for i in sm.list_ids())
    # a restart replays checkpoint 3, then goes on with 4
    builder = table.new_stream_write_builder("writer-w")
    with builder.new_write() as write, builder.new_commit() as commit:
        assert commit.filter_committed([2, 3, 4]) == [4]
        write.write_arrow(_rows(30))
        assert commit.commit(write.prepare_commit(3), 3) == []
        write.write_arrow(_rows(40))
        assert commit.commit(write.prepare_commit(4), 4) != []
    ids = read_all(table)["id"].to_pylist()
    assert len(ids) == len(set(ids)) == 3 * 4 + 3 * 5
