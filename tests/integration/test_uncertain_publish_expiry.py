"""An uncertain publish whose snapshot expires before the retry looks for it (issue 44).

The publish of our snapshot goes through but its answer is lost; before the commit tries again,
another writer commits and expiry (one snapshot retained) deletes ours. The retry cannot find
our snapshot by reading it: it must tell from the commit ledger of the newest snapshot that our
attempt landed, return the id where it landed, and commit nothing a second time. Real tables on
local disk and S3 (moto); the fault is a FileIO that applies the publish and then raises.
tests/interop/test_uncertain_publish_foreign.py puts pypaimon's snapshots (no ledger) in between.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import read_all, write_commit
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.catalog.catalog import Catalog
from paimon_pyspark.spec.snapshot import MAX_RECORDED_USERS, CommitLedger

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
OPTIONS = {
    "commit.min-retry-wait": "1 ms",
    "commit.max-retry-wait": "5 ms",
    "snapshot.num-retained.min": "1",
    "snapshot.num-retained.max": "1",
}


class LostAnswers(FaultyFileIO):
    """Each snapshot publish in ``plan`` is applied (True) or not (False), then ``meddle`` runs
    (another writer commits, expiry runs) and the publish raises: its answer is lost. None
    in ``plan`` lets that publish through untouched."""

    def __init__(self, table: FileStoreTable) -> None:
        super().__init__(table.file_io)
        self.plan: list[bool | None] = []
        self.meddle: Callable[[], None] = lambda: None
        self.published: list[str] = []

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        if not self.plan or "/snapshot/snapshot-" not in path.replace("\\", "/"):
            return self.inner.try_write_atomic(path, data)
        step = self.plan.pop(0)
        if step is None:
            return self.inner.try_write_atomic(path, data)
        applied = step and self.inner.try_write_atomic(path, data)
        self.published.append(path.rsplit("-", 1)[1] if applied else "lost")
        self.meddle()
        raise InjectedFault(f"injected: answer of the publish of {path} lost")


def _rows(first: int, n: int) -> pa.Table:
    return pa.table({"id": list(range(first, first + n)), "v": ["x"] * n}, schema=SCHEMA)


def _ids(table: FileStoreTable) -> list[int]:
    return sorted(read_all(table)["id"].to_pylist())


@pytest.fixture
def warehouse(tmp_path: Any) -> str:
    return str(tmp_path / "wh")


@pytest.fixture
def catalog(warehouse: str) -> Catalog:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    return catalog


def _setup(
    catalog: Catalog, retries: int, **schema: Any
) -> tuple[FileStoreTable, FileStoreTable, LostAnswers]:
    """The table with snapshot 1 (ids 0..4), and a clone of it whose publishes we break."""
    options = {**OPTIONS, **schema.pop("options", {})}
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options=options, **schema))
    table = catalog.get_table("db.t")
    write_commit(table, _rows(0, 5))
    faulty = LostAnswers(table)
    options = {**options, "commit.max-retries": str(retries)}
    clone = FileStoreTable(faulty, table.path, table.name, table.store.table_schema, options)
    return table, clone, faulty


def _other_writer_expires_ours(table: FileStoreTable, first: int) -> Callable[[], None]:
    """Another writer commits rows ``first..first+2``; its commit expires every older snapshot."""

    def meddle() -> None:
        write_commit(table, _rows(first, 3))

    return meddle


def _commit(builder: Any, data: pa.Table, identifier: int | None) -> list[int]:
    with builder.new_write() as write:
        write.write_arrow(data)
        if identifier is None:
            messages = write.prepare_commit()
            return builder.new_commit().commit(messages)  # type: ignore[no-any-return]
        messages = write.prepare_commit(identifier)
        return builder.new_commit().commit(messages, identifier)  # type: ignore[no-any-return]


@pytest.mark.parametrize("retries", [10, 0], ids=["retried", "settled"])
@pytest.mark.parametrize("mode", ["batch", "streaming", "batch-reused-user"])
def test_an_expired_uncertain_publish_is_committed_once(
    catalog: Catalog, mode: str, retries: int
) -> None:
    table, clone, faulty = _setup(catalog, retries)
    if mode == "batch":
        builder = clone.new_batch_write_builder()
        identifier = None
    elif mode == "streaming":
        builder = clone.new_stream_write_builder("stream-user")
        assert _commit(builder, _rows(50, 2), 1) == [2]
        identifier = 2
    else:  # a reused batch user already has a batch commit (identifier Long.MAX) in the table
        assert _commit(clone.new_batch_write_builder("job"), _rows(50, 2), None) == [2]
        builder = clone.new_batch_write_builder("job")
        identifier = None
    base = table.snapshot_manager.latest()
    assert base is not None
    faulty.plan = [True]
    faulty.meddle = _other_writer_expires_ours(table, 200)
    ids = _commit(builder, _rows(100, 5), identifier)
    ours = base.id + 1
    assert faulty.published == [str(ours)]
    sm = table.snapshot_manager
    assert not sm.snapshot_exists(ours), "the uncertain snapshot should have expired"
    assert ids == [ours], "the commit returns the id where its snapshot landed"
    assert sm.latest_id() == ours + 1, "nothing was committed a second time"
    earlier = [50, 51] if mode != "batch" else []
    assert _ids(table) == sorted([*range(5), *earlier, *range(100, 105), 200, 201, 202])
    if mode == "streaming":  # a replay of the checkpoint commits nothing
        assert _commit(clone.new_stream_write_builder("stream-user"), _rows(100, 5), 2) == []
        assert sm.latest_id() == ours + 1


def test_several_uncertain_attempts_one_landed_and_expired(catalog: Catalog) -> None:
    """The first attempt's request never landed and another writer took its id; the second
    landed and expired: the commit is found at the second attempt's id."""
    table, clone, faulty = _setup(catalog, 10)
    faulty.plan = [False, True]
    firsts = iter([300, 400])
    faulty.meddle = lambda: write_commit(table, _rows(next(firsts), 3)) and None
    ids = _commit(clone.new_stream_write_builder("u"), _rows(100, 5), 7)
    assert faulty.published == ["lost", "3"]
    assert ids == [3]
    assert table.snapshot_manager.latest_id() == 4
    expected = [*range(5), 300, 301, 302, *range(100, 105), 400, 401, 402]
    assert _ids(table) == sorted(expected)


def test_an_uncertain_publish_that_did_not_land_is_committed_on_retry(
    catalog: Catalog,
) -> None:
    """The ledger also proves the negative: the lost request never landed and expiry removed
    the snapshot that took its id, so the retry commits (once)."""
    table, clone, faulty = _setup(catalog, 10)
    faulty.plan = [False]
    meddle = _other_writer_expires_ours(table, 200)

    def twice() -> None:  # the id ours aimed at is taken by another writer and expires
        meddle()
        write_commit(table, _rows(300, 1))

    faulty.meddle = twice
    ids = _commit(clone.new_batch_write_builder(), _rows(100, 5), None)
    assert ids == [4]
    assert not table.snapshot_manager.snapshot_exists(2)
    assert _ids(table) == sorted([*range(5), 200, 201, 202, 300, *range(100, 105)])


def test_on_s3(s3_server: S3Server, s3_bucket: str) -> None:
    catalog = CatalogFactory.create({"warehouse": f"s3://{s3_bucket}/wh", **s3_server.options()})
    catalog.create_database("db")
    table, clone, faulty = _setup(catalog, 10)
    faulty.plan = [True]
    faulty.meddle = _other_writer_expires_ours(table, 200)
    assert _commit(clone.new_stream_write_builder("s"), _rows(100, 5), 1) == [2]
    assert table.snapshot_manager.latest_id() == 3
    assert _ids(table) == sorted([*range(5), *range(100, 105), 200, 201, 202])


@pytest.mark.parametrize("retries", [10, 0], ids=["retried", "settled"])
def test_the_compaction_snapshot_after_its_append_is_decided(
    catalog: Catalog, retries: int
) -> None:
    """A checkpoint with a full compaction commits an APPEND and a COMPACT snapshot under one
    identifier; the COMPACT one's answer is lost and it expires: the identifier alone, already
    recorded by the APPEND, could not tell, the ledger's snapshot id does."""
    pk = {"primary_keys": ["id"], "options": {"bucket": "1", "full-compaction.delta-commits": "1"}}
    table, clone, faulty = _setup(catalog, retries, **pk)
    sm = table.snapshot_manager
    base = sm.latest_id()
    assert base is not None
    faulty.plan = [None, True]
    faulty.meddle = _other_writer_expires_ours(table, 200)
    ids = _commit(clone.new_stream_write_builder("s"), _rows(100, 5), 1)
    assert faulty.published == [str(base + 2)]
    assert ids == [base + 1, base + 2]
    # the other writer's APPEND and COMPACT, nothing of ours a second time
    assert sm.latest_id() == base + 4
    assert all(sm.snapshot(i).commit_user != "s" for i in sm.list_ids())
    assert _ids(table) == sorted([*range(5), *range(100, 105), 200, 201, 202])


def test_a_dropped_user_raises_what_the_ledger_is_complete_from() -> None:
    ledger = CommitLedger(1, {})
    for n in range(MAX_RECORDED_USERS + 2):
        ledger = ledger.with_snapshot(f"u{n}", 10 + n)
    assert len(ledger.users) == MAX_RECORDED_USERS
    assert "u0" not in ledger.users and "u1" not in ledger.users
    assert ledger.since == 12  # past u1's snapshot 11: a user absent now had none since
    assert ledger.with_snapshot("u5", 500).users["u5"] == 500
