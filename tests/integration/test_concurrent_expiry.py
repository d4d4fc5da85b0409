"""Plans that meet a snapshot expired under them (store/latest_plan.py), on real tables.

Snapshot expiry deletes an expired snapshot's manifest lists and manifests, then its snapshot
file. ``ExpireUnder`` drives that race deterministically: wrapped around
``ManifestIO.read_manifest_list``, it lets another writer commit a snapshot and expiry remove
every older one just before the plan reads a manifest list, so the list the plan reads next
is gone, exactly as a concurrent expiry leaves it. Nothing of the filesystem is mocked.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    ConcurrentExpiryError,
    CorruptTableError,
    SnapshotExpiredError,
)
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots
from paimon_pyspark.procedures import compact, rescale
from paimon_pyspark.spec.manifest import ManifestFileMeta
from paimon_pyspark.store.latest_plan import PLAN_TRIES
from paimon_pyspark.store.managers import SnapshotManager
from paimon_pyspark.store.manifest_io import ManifestIO

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def rows(ids: range) -> pa.Table:
    return pa.table({"id": list(ids), "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


def ids_of(t: pa.Table) -> list[int]:
    return sorted(t.column("id").to_pylist())


class ExpireUnder:
    """Before each of the next ``times`` manifest-list reads (not its own), commit 10 more rows
    and expire every snapshot but the newest: the list about to be read, of an older snapshot,
    is then gone."""

    def __init__(self, table: FileStoreTable, times: int) -> None:
        self.table = table
        self.times = times
        self.fired = 0
        self.busy = False
        self.next_id = 1000
        self.original = ManifestIO.read_manifest_list

    def read_manifest_list(self, mio: ManifestIO, name: str) -> list[ManifestFileMeta]:
        if not self.busy and self.fired < self.times:
            self.fired += 1
            self.busy = True
            try:
                write_commit(self.table, rows(range(self.next_id, self.next_id + 10)))
                self.next_id += 10
                expire = ExpireSnapshots(self.table.store, ExpireConfig(retain_max=1))
                assert expire.expire() >= 1
            finally:
                self.busy = False
        return self.original(mio, name)

    def added(self) -> list[int]:
        return list(range(1000, self.next_id))


Arm = Callable[[FileStoreTable, int], ExpireUnder]


@pytest.fixture
def expire_under(monkeypatch: pytest.MonkeyPatch) -> Arm:
    """``expire_under(table, times)`` arms an ExpireUnder for the rest of the test."""

    def arm(table: FileStoreTable, times: int) -> ExpireUnder:
        hook = ExpireUnder(table, times)

        def read_manifest_list(mio: ManifestIO, name: str) -> list[ManifestFileMeta]:
            return hook.read_manifest_list(mio, name)

        monkeypatch.setattr(ManifestIO, "read_manifest_list", read_manifest_list)
        return hook

    return arm


def make(catalog: FileSystemCatalog, name: str = "t", **options: str) -> FileStoreTable:
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, options=options))
    table = catalog.get_table(f"db.{name}")
    write_commit(table, rows(range(0, 5)))
    write_commit(table, rows(range(5, 10)))
    return table


def test_a_plan_of_the_latest_snapshot_plans_again_on_the_newest(
    catalog: FileSystemCatalog, expire_under: Arm
) -> None:
    table = make(catalog)
    hook = expire_under(table, 1)
    rb = table.new_read_builder()
    plan = rb.new_scan().plan()
    assert hook.fired == 1
    assert not table.snapshot_manager.snapshot_exists(2)  # the one the plan began on
    assert plan.snapshot_id == 3
    assert ids_of(rb.new_read().to_arrow(plan.splits())) == [*range(10), *hook.added()]


def test_a_plan_that_keeps_meeting_expiry_gives_up_with_a_typed_error(
    catalog: FileSystemCatalog, expire_under: Arm
) -> None:
    table = make(catalog)
    hook = expire_under(table, 10**6)
    tried = list(range(2, 2 + PLAN_TRIES))
    with pytest.raises(ConcurrentExpiryError, match=r"Table 'db\.t'") as raised:
        table.new_read_builder().new_scan().plan()
    assert f"snapshots {tried}" in str(raised.value)
    assert hook.fired == PLAN_TRIES


@pytest.mark.parametrize("pin", ["scan.snapshot-id", "scan.timestamp-millis"])
def test_a_pinned_plan_whose_snapshot_expires_under_it_raises_snapshot_expired(
    catalog: FileSystemCatalog, expire_under: Arm, pin: str
) -> None:
    table = make(catalog)
    first = table.snapshot_manager.snapshot(1)
    value = str(first.id) if pin == "scan.snapshot-id" else str(first.time_millis)
    pinned = table.copy({pin: value})
    expire_under(table, 1)
    with pytest.raises(SnapshotExpiredError) as raised:
        pinned.new_read_builder().new_scan().plan()
    assert not isinstance(raised.value, ConcurrentExpiryError)
    message = str(raised.value)
    assert "Table 'db.t'" in message and "snapshot 1 " in message and pin in message


def test_an_incremental_read_whose_snapshot_expires_under_it_raises_snapshot_expired(
    catalog: FileSystemCatalog, expire_under: Arm
) -> None:
    table = make(catalog)
    between = table.copy({"incremental-between": "1,2"})
    expire_under(table, 1)
    with pytest.raises(SnapshotExpiredError, match=r"Table 'db\.t': snapshot 2 asked for by"):
        between.new_read_builder().new_scan().plan()


def test_a_missing_list_of_the_latest_snapshot_is_corruption(catalog: FileSystemCatalog) -> None:
    """No expiry: the latest snapshot is there and still the latest, so its missing base list
    is lost, and the plan fails at once (no retry, no SnapshotExpiredError)."""
    table = make(catalog)
    latest = table.snapshot_manager.latest()
    assert latest is not None
    (Path(table.path) / "manifest" / latest.base_manifest_list).unlink()
    with pytest.raises(CorruptTableError, match="is missing") as raised:
        read_all(table)
    assert not isinstance(raised.value, SnapshotExpiredError)


def test_a_tag_whose_list_is_missing_is_corruption(catalog: FileSystemCatalog) -> None:
    """A tag keeps its snapshot's files, also after the snapshot expired: one missing is lost."""
    table = make(catalog)
    table.create_tag("t1", 1)
    write_commit(table, rows(range(10, 12)))
    ExpireSnapshots(table.store, ExpireConfig(retain_max=1)).expire()
    tagged = table.copy({"scan.tag-name": "t1"})
    assert ids_of(read_all(tagged)) == list(range(5))
    tag = table.tag_manager().get("t1")
    assert tag is not None
    (Path(table.path) / "manifest" / tag.delta_manifest_list).unlink()
    with pytest.raises(CorruptTableError, match="is missing") as raised:
        read_all(tagged)
    assert not isinstance(raised.value, SnapshotExpiredError)


def test_a_stream_starting_at_the_latest_snapshot_plans_again(
    catalog: FileSystemCatalog, expire_under: Arm
) -> None:
    table = make(catalog)
    hook = expire_under(table, 1)
    builder = table.new_stream_read_builder()
    scan = builder.new_scan()
    plan = scan.plan()
    assert plan.snapshot_id == 3 and scan.checkpoint() == 4
    assert ids_of(builder.new_read().to_arrow(plan.splits())) == [*range(10), *hook.added()]


@pytest.mark.parametrize("sort", [False, True], ids=["bucket-compaction", "sort-compaction"])
def test_compaction_plans_again_when_its_snapshot_expires(
    catalog: FileSystemCatalog, expire_under: Arm, sort: bool
) -> None:
    options = {"bucket": "-1"} if sort else {"bucket": "1", "bucket-key": "id"}
    table = make(catalog, **options)
    hook = expire_under(table, 1)
    if sort:
        sid = compact(catalog, "db.t", order_strategy="order", order_by="id")
    else:
        sid = compact(catalog, "db.t", compact_strategy="full")
    assert hook.fired == 1 and sid == 4  # planned on 3, the hook's commit
    snapshot = table.snapshot_manager.snapshot(sid)
    assert snapshot.commit_kind == "COMPACT"
    assert ids_of(read_all(table)) == [*range(10), *hook.added()]
    assert sort_rows(read_all(table)) == sort_rows(read_all(table.copy({"scan.snapshot-id": "3"})))


def test_rescale_plans_again_when_its_snapshot_expires(
    catalog: FileSystemCatalog, expire_under: Arm
) -> None:
    table = make(catalog, bucket="1", **{"bucket-key": "id"})
    hook = expire_under(table, 1)
    sid = rescale(catalog, "db.t", bucket_num=2)
    assert hook.fired == 1 and sid == 4
    assert ids_of(read_all(table)) == [*range(10), *hook.added()]


def test_a_timestamp_search_passes_over_snapshots_expired_after_the_listing(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``scan.timestamp-millis`` searches the listed snapshot ids; those that expire before the
    search reads them lie below the answer, not a corrupt table."""
    table = make(catalog)
    write_commit(table, rows(range(10, 12)))
    latest = table.snapshot_manager.snapshot(3)
    original = SnapshotManager.list_ids

    def list_then_expire(sm: SnapshotManager) -> list[int]:
        ids = original(sm)
        monkeypatch.setattr(SnapshotManager, "list_ids", original)
        assert ExpireSnapshots(table.store, ExpireConfig(retain_max=1)).expire() == 2
        return ids

    at = table.copy({"scan.timestamp-millis": str(latest.time_millis)})
    monkeypatch.setattr(SnapshotManager, "list_ids", list_then_expire)
    plan = at.new_read_builder().new_scan().plan()
    assert plan.snapshot_id == 3
    assert not table.snapshot_manager.snapshot_exists(2)
