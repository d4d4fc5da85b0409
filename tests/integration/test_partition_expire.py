"""Partition expiry (maintenance/partition_expire.py, Java's PartitionExpire): after a commit
with ``partition.expiration-time`` and by ``expire_partitions``; ``values-time`` from the
partition values through ``partition.timestamp-pattern`` / ``-formatter``, ``update-time`` from
the newest file; ``partition.expiration-check-interval``, ``-max-num``, ``-batch-size`` and
``end-input.check-partition-expire``; crash safety. The clock is injected, never slept on."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, OptionError, UnsupportedOptionError
from paimon_pyspark.maintenance.partition_expire import expire_partitions_after_commit
from paimon_pyspark.procedures import expire_partitions
from paimon_pyspark.spec.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_pyspark.store.clock import ManualClock, injected

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
NOW = dt.datetime(2026, 1, 10, 12, 0)
DAYS = ["2025-12-01", "2026-01-01", "2026-01-05", "2026-01-09"]


@pytest.fixture
def clock() -> Any:
    manual = ManualClock(int(NOW.timestamp() * 1000))
    with injected(manual):
        yield manual


def make(
    catalog: FileSystemCatalog,
    options: dict[str, str],
    name: str = "t",
    schema: pa.Schema = SCHEMA,
    keys: tuple[str, ...] = ("dt",),
) -> FileStoreTable:
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(schema, partition_keys=list(keys), options=options)
    )
    return catalog.get_table(f"db.{name}")


def days(ids: list[int], dts: list[str | None]) -> pa.Table:
    return pa.table({"id": ids, "dt": dts}, SCHEMA)


def kinds(table: FileStoreTable) -> list[str]:
    sm = table.store.snapshot_manager
    latest = sm.latest_id() or 0
    return [sm.snapshot(i).commit_kind for i in range(1, latest + 1)]


def partitions(table: FileStoreTable) -> list[Any]:
    return sorted({r["dt"] for r in read_all(table).to_pylist()}, key=str)


VALUES = {
    "partition.expiration-time": "7 d",
    "partition.expiration-check-interval": "0",
    "partition.timestamp-formatter": "yyyy-MM-dd",
}


def test_a_commit_drops_expired_partitions_in_one_overwrite(
    catalog: FileSystemCatalog, clock: ManualClock
) -> None:
    table = make(catalog, VALUES)
    write_commit(table, days([1, 2, 3, 4, 5], [*DAYS, None]))
    # cutoff 2026-01-03 12:00: two partitions go; the null one never expires by its values
    assert kinds(table) == ["APPEND", "OVERWRITE"]
    snapshot = table.store.snapshot_manager.latest()
    assert snapshot is not None and snapshot.commit_identifier == BATCH_COMMIT_IDENTIFIER
    assert partitions(table) == ["2026-01-05", "2026-01-09", None]
    clock.advance(days=3)
    write_commit(table, days([6], ["2026-01-12"]))
    assert kinds(table) == ["APPEND", "OVERWRITE", "APPEND", "OVERWRITE"]
    assert partitions(table) == ["2026-01-09", "2026-01-12", None]
    write_commit(table, days([7], ["2026-01-13"]))  # nothing expired: no snapshot
    assert kinds(table)[-1] == "APPEND"


def test_the_check_interval_is_kept_per_table_handle(
    catalog: FileSystemCatalog, clock: ManualClock
) -> None:
    options = {k: v for k, v in VALUES.items() if "interval" not in k}  # Java's 1 h
    table = make(catalog, options)
    write_commit(table, days([1], [DAYS[0]]))
    # a handle's last check starts up to 1 h before its first commit (Java: a random part)
    assert kinds(table) == ["APPEND"]
    clock.advance(hours=1.5)
    write_commit(table, days([3], [DAYS[3]]))
    assert kinds(table) == ["APPEND", "APPEND", "OVERWRITE"]
    # a new handle per batch job, as Java's new TableCommit per job: no check ...
    write_commit(catalog.get_table("db.t"), days([4], [DAYS[0]]))
    assert partitions(table) == [DAYS[0], DAYS[3]]
    # ... unless end-input.check-partition-expire: every batch commit checks
    at_end = catalog.get_table("db.t").copy({"end-input.check-partition-expire": "true"})
    write_commit(at_end, days([5], [DAYS[2]]))
    assert partitions(table) == [DAYS[2], DAYS[3]]
    assert kinds(table)[-2:] == ["APPEND", "OVERWRITE"]


def test_pattern_formatter_max_num_and_batch_size(
    catalog: FileSystemCatalog, clock: ManualClock
) -> None:
    schema = pa.schema([("id", pa.int64()), ("y", pa.int32()), ("m", pa.string())])
    options = {
        "partition.expiration-time": "30 d",
        "partition.expiration-check-interval": "0",
        "partition.timestamp-pattern": "$y-$m-01",  # Java's lenient default formatter
        "partition.expiration-max-num": "3",
        "partition.expiration-batch-size": "2",
    }
    table = make(catalog, options, schema=schema, keys=("y", "m"))
    ym = [(2025, "9"), (2025, "10"), (2025, "11"), (2025, "12"), (2026, "1"), (2025, "xx")]
    data = pa.table(
        {"id": list(range(len(ym))), "y": [y for y, _ in ym], "m": [m for _, m in ym]}, schema
    )
    write_commit(table, data)
    # four partitions are older than 30 days; Java's order is the text "y,m": "2025,10" first
    assert kinds(table) == ["APPEND", "OVERWRITE", "OVERWRITE"]
    left = sorted((r["y"], r["m"]) for r in read_all(table).to_pylist())
    assert left == [(2025, "9"), (2025, "xx"), (2026, "1")]


def test_update_time_expires_by_the_newest_file(
    catalog: FileSystemCatalog, clock: ManualClock
) -> None:
    table = make(catalog, {})
    write_commit(table, days([1, 2], ["a", None]))
    clock.advance(days=5)
    write_commit(table, days([3, 4], ["b", "a"]))
    write_commit(table, days([5], ["c"]))
    clock.advance(days=3)
    result = expire_partitions(catalog, "db.t", "7 d", expire_strategy="update-time")
    # the null partition expires by its update time (Java's default partition name)
    assert result == ["dt=__DEFAULT_PARTITION__"]
    assert partitions(table) == ["a", "b", "c"]
    clock.advance(days=5)
    assert expire_partitions(catalog, "db.t", "7 d", None, None, "update-time", 2) == [
        "dt=a",
        "dt=b",
    ]
    assert kinds(table) == ["APPEND"] * 3 + ["OVERWRITE"] * 2


def test_expire_partitions_takes_javas_arguments_and_refuses_what_java_refuses(
    catalog: FileSystemCatalog, clock: ManualClock
) -> None:
    table = make(catalog, {})
    write_commit(table, days([1, 2], ["20251201", "20260109"]))
    with pytest.raises(InvalidArgumentError, match="expiration"):
        expire_partitions(catalog, "db.t")
    with pytest.raises(UnsupportedOptionError, match="timestamp-formatter"):
        expire_partitions(catalog, "db.t", "7 d", "yyyyMMdd EEE")
    with pytest.raises(OptionError, match="expiration-strategy"):
        expire_partitions(catalog, "db.t", "7 d", expire_strategy="custom")
    assert expire_partitions(
        catalog, "db.t", "7 d", options={"partition.timestamp-formatter": "yyyyMMdd"}
    ) == ["dt=20251201"]
    assert expire_partitions(catalog, "db.t", "7 d", "yyyyMMdd") == ["No expired partitions."]
    flat = make(catalog, {}, name="flat", keys=())
    write_commit(flat, days([1], ["x"]))
    with pytest.raises(InvalidArgumentError, match="partition keys"):
        expire_partitions(catalog, "db.flat", "1 d")


def test_expiry_failing_at_any_store_call_leaves_a_readable_table(
    catalog: FileSystemCatalog, clock: ManualClock, tmp_path: Path
) -> None:
    options = {**VALUES, "partition.expiration-batch-size": "1", "write-only": "true"}
    table = make(catalog, options)
    write_commit(table, days([1, 2, 3, 4], DAYS))
    before = sort_rows(read_all(table))
    expected = [r for r in before if r["dt"] >= "2026-01-05"]
    pristine = tmp_path / "pristine"
    shutil.copytree(table.path, pristine)
    k, finished = 0, False
    while not finished:
        k += 1
        assert k < 300
        shutil.rmtree(table.path)
        shutil.copytree(pristine, table.path)
        faulty = FaultyFileIO(table.file_io)
        clone = FileStoreTable(faulty, table.path, table.name, table.table_schema, {})
        faulty.arm(k, "before" if k % 2 else "after")
        try:
            expire_partitions_after_commit(clone.store, BATCH_COMMIT_IDENTIFIER)
        except InjectedFault:
            pass
        finally:
            faulty.recording = False
        finished = len(faulty.calls) < k
        reopened = catalog.get_table("db.t")
        rows = sort_rows(read_all(reopened))
        assert rows in (before, [r for r in before if r["dt"] != DAYS[0]], expected), k
        # the next commit's check finishes the work
        expire_partitions_after_commit(reopened.store, BATCH_COMMIT_IDENTIFIER)
        assert sort_rows(read_all(reopened)) == expected, k
        assert set(kinds(reopened)) == {"APPEND", "OVERWRITE"}, k
    assert k > 5


def test_a_branch_expires_its_own_partitions(
    catalog: FileSystemCatalog, clock: ManualClock
) -> None:
    table = make(catalog, {})
    write_commit(table, days([1, 2], [DAYS[0], DAYS[3]]))
    table.create_tag("t1", 1)
    catalog.create_branch("db.t", "b", "t1")
    assert expire_partitions(catalog, "db.t$branch_b", "7 d", "yyyy-MM-dd") == [f"dt={DAYS[0]}"]
    assert partitions(catalog.get_table("db.t$branch_b")) == [DAYS[3]]
    assert kinds(catalog.get_table("db.t$branch_b")) == ["APPEND", "OVERWRITE"]
    assert partitions(catalog.get_table("db.t")) == [DAYS[0], DAYS[3]]
    assert kinds(catalog.get_table("db.t")) == ["APPEND"]
