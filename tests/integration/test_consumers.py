"""Consumers (``consumer/consumer-<id>``): a stream with a consumer id records the next snapshot
it will read, a new stream with that id resumes there, ``consumer.ignore-progress`` starts
over, ``consumer.expiration-time`` deletes idle consumers after a commit, snapshot expiry keeps
what a live consumer still needs, ``$consumers`` lists them, and the procedures
``reset_consumer`` / ``clear_consumers`` (in-process, ``CALL`` in Spark's and Flink's order, the
CLI) set and delete them.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import sort_rows, write_commit
from tests.cli.helpers import run_error, run_json

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, OptionError, SqlError
from paimon_pyspark.procedures import calls as procedure_calls
from paimon_pyspark.procedures import clear_consumers, reset_consumer
from paimon_pyspark.sql.procedure_args import SIGNATURES, bind
from paimon_pyspark.store.managers import Consumer, ConsumerManager

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _table(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, primary_keys=["id"], options={"bucket": "1", **options}
    )
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def _rows(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": ids, "v": [f"{tag}{i}" for i in ids]}, SCHEMA)


def _consumer_file(table: FileStoreTable, consumer_id: str) -> Path:
    return Path(table.path, "consumer", f"consumer-{consumer_id}")


def _next(table: FileStoreTable, consumer_id: str) -> int | None:
    found = ConsumerManager(table.store.file_io, table.path).consumer(consumer_id)
    return None if found is None else found.next_snapshot


def _read(table: FileStoreTable, scan_plan: object) -> list[dict[str, object]]:
    read = table.new_stream_read_builder().new_read()
    return sort_rows(read.to_arrow(scan_plan.splits()))  # type: ignore[attr-defined]


def test_stream_records_progress_and_a_new_stream_resumes_there(
    catalog: FileSystemCatalog,
) -> None:
    """pypaimon's with_consumer_id: a plan's position is recorded when the next plan is asked
    for (the caller processed it); a new scan with the id reads on from there, once."""
    table = _table(catalog)
    write_commit(table, _rows([1, 2], "a"))
    scan = table.new_stream_read_builder().with_consumer_id("job").new_scan()
    first = scan.plan()
    assert _read(table, first) == [{"id": 1, "v": "a1"}, {"id": 2, "v": "a2"}]
    assert _next(table, "job") is None  # not processed yet
    write_commit(table, _rows([3], "b"))
    second = scan.plan()
    assert _next(table, "job") == 2  # snapshot 1 processed
    assert _read(table, second) == [{"id": 3, "v": "b3"}]
    assert not scan.plan().splits()
    assert _next(table, "job") == 3
    text = _consumer_file(table, "job").read_text()
    assert text == '{\n  "nextSnapshot" : 3\n}'  # Java's JsonSerdeUtil, byte for byte

    write_commit(table, _rows([4], "c"))
    again = table.new_stream_read_builder().with_consumer_id("job").new_scan()
    plan = again.plan()
    assert plan.snapshot_id == 3
    assert _read(table, plan) == [{"id": 4, "v": "c4"}]

    # the option spelling, and consumer.ignore-progress starting over by scan.mode
    by_option = table.copy({"consumer-id": "job"}).new_stream_read_builder().new_scan()
    assert by_option.plan().snapshot_id == 3
    fresh = table.copy({"consumer-id": "job", "consumer.ignore-progress": "true"})
    full = fresh.new_stream_read_builder().new_scan().plan()
    assert _read(table, full) == [
        {"id": 1, "v": "a1"},
        {"id": 2, "v": "a2"},
        {"id": 3, "v": "b3"},
        {"id": 4, "v": "c4"},
    ]


def test_checkpoint_notification_records_and_restore_wins_over_the_consumer(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog)
    for i in range(3):
        write_commit(table, _rows([i], "a"))
    ConsumerManager(table.store.file_io, table.path).reset_consumer("c", Consumer(2))
    scan = table.copy({"consumer-id": "c"}).new_stream_read_builder().new_scan()
    scan.notify_checkpoint_complete(3)
    assert _next(table, "c") == 3
    scan.restore(1)  # a restored checkpoint is where the stream is, whatever the consumer says
    assert scan.plan().snapshot_id == 1


def test_a_consumer_behind_the_earliest_snapshot_starts_at_the_earliest(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, **{"snapshot.num-retained.min": "1", "snapshot.time-retained": "1 ms"})
    for i in range(3):
        write_commit(table, _rows([i], "a"))
    earliest = table.snapshot_manager.earliest_id()
    assert earliest is not None and earliest > 1
    ConsumerManager(table.store.file_io, table.path).reset_consumer("late", Consumer(1))
    scan = table.new_stream_read_builder().with_consumer_id("late").new_scan()
    assert scan.plan().snapshot_id == earliest


def test_snapshot_expiry_keeps_what_a_live_consumer_needs_until_it_expires(
    catalog: FileSystemCatalog,
) -> None:
    """A consumer at snapshot 2 keeps 2 and later from expiring; once it is idle for
    ``consumer.expiration-time`` the next commit deletes it first, then expires snapshots."""
    options = {
        "snapshot.num-retained.min": "1",
        "snapshot.time-retained": "1 ms",
        "consumer.expiration-time": "1 h",
    }
    table = _table(catalog, **options)
    write_commit(table, _rows([0], "a"))
    write_commit(table, _rows([1], "a"))
    manager = ConsumerManager(table.store.file_io, table.path)
    manager.reset_consumer("slow", Consumer(2))
    for i in range(2, 5):
        time.sleep(0.002)
        write_commit(table, _rows([i], "a"))
    assert table.snapshot_manager.earliest_id() == 2
    assert manager.consumers() == {"slow": 2}

    stale = time.time() - 2 * 3600
    os.utime(_consumer_file(table, "slow"), (stale, stale))
    time.sleep(0.002)
    write_commit(table, _rows([9], "a"))
    assert manager.consumers() == {}
    assert table.snapshot_manager.earliest_id() == table.snapshot_manager.latest_id() >= 6


def test_consumers_system_table_lists_each_consumer_in_java_order(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog)
    write_commit(table, _rows([1], "a"))
    write_commit(table, _rows([2], "a"))
    for consumer_id, next_snapshot in (("job-a", 2), ("b", 1), ("A1", 2)):
        reset_consumer(catalog, "db.t", consumer_id, next_snapshot)
    rows = catalog.get_system_table("db.t$consumers").to_arrow()
    assert rows.schema.names == ["consumer_id", "next_snapshot_id"]
    # java.util.HashMap's buckets of the String hash codes: "A1" 2064 -> 0, "b" 98 -> 2,
    # "job-a" 101295697 -> 8 (of 16)
    assert rows.to_pylist() == [
        {"consumer_id": "A1", "next_snapshot_id": 2},
        {"consumer_id": "b", "next_snapshot_id": 1},
        {"consumer_id": "job-a", "next_snapshot_id": 2},
    ]


def test_reset_and_clear_consumers_as_java_procedures(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    write_commit(table, _rows([1], "a"))
    write_commit(table, _rows([2], "a"))
    reset_consumer(catalog, "db.t", "keep-1", 2)
    reset_consumer(catalog, "db.t", "job-1", "1")
    reset_consumer(catalog, "db.t", "job-2", 2)
    with pytest.raises(InvalidArgumentError, match="no snapshot 7"):
        reset_consumer(catalog, "db.t", "job-3", 7)
    assert _next(table, "job-1") == 1
    reset_consumer(catalog, "db.t", "job-2")  # no snapshot: delete, as Java
    assert _next(table, "job-2") is None
    reset_consumer(catalog, "db.t", "job-2", 2)
    assert clear_consumers(catalog, "db.t", "job.*", "job-2") == ["job-1"]
    assert clear_consumers(catalog, "db.t", "keep") == []  # matches the whole id, as Java's
    assert sorted(clear_consumers(catalog, "db.t")) == ["job-2", "keep-1"]
    assert ConsumerManager(table.store.file_io, table.path).list_all_ids() == []


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        (("db.t", "c1", 3), {}, {"table": "db.t", "consumer_id": "c1", "next_snapshot_id": 3}),
        (("db.t", "c1"), {}, {"table": "db.t", "consumer_id": "c1"}),
        (
            (),
            {"table": "db.t", "consumerId": "c1", "nextSnapshotId": 2},
            {"table": "db.t", "consumer_id": "c1", "next_snapshot_id": 2},
        ),
        (
            ("db.t",),
            {"consumer_id": "c1", "next_snapshot_id": 2},
            {"table": "db.t", "consumer_id": "c1", "next_snapshot_id": 2},
        ),
    ],
)
def test_call_reset_consumer_binds_spark_and_flink_spellings(
    args: tuple[object, ...], kwargs: dict[str, object], expected: dict[str, object]
) -> None:
    assert bind("reset_consumer", SIGNATURES["reset_consumer"], args, kwargs) == expected


def test_call_clear_consumers_binds_spark_and_flink_spellings() -> None:
    sig = SIGNATURES["clear_consumers"]
    want = {"table": "db.t", "including_consumers": "a.*", "excluding_consumers": "ab"}
    assert bind("clear_consumers", sig, ("db.t", "a.*", "ab"), {}) == want
    spark = {"includingConsumers": "a.*", "excludingConsumers": "ab"}
    assert bind("clear_consumers", sig, ("db.t",), spark) == want
    flink = {"including_consumers": "a.*", "excluding_consumers": "ab"}
    assert bind("clear_consumers", sig, ("db.t",), flink) == want
    with pytest.raises(SqlError, match="given twice"):
        bind("clear_consumers", sig, ("db.t",), {**spark, "including_consumers": "x"})


def test_bad_consumer_ids_and_files_are_refused(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    write_commit(table, _rows([1], "a"))
    with pytest.raises(OptionError, match="consumer-id"):
        table.copy({"consumer-id": ""}).new_stream_read_builder()
    with pytest.raises(InvalidArgumentError, match="consumer id"):
        table.new_stream_read_builder().with_consumer_id("../x")
    with pytest.raises(OptionError, match="consumer.mode"):
        table.copy({"consumer.mode": "twice"})
    with pytest.raises(InvalidArgumentError, match="consumer_id"):
        procedure_calls.reset_consumer(catalog, "db.t", " ", 1)
    _consumer_file(table, "x").parent.mkdir()
    _consumer_file(table, "x").write_text(json.dumps({"nextSnapshot": "one"}))
    with pytest.raises(Exception, match="consumer-x is not valid"):
        ConsumerManager(table.store.file_io, table.path).consumer("x")


def test_consumer_commands_of_the_cli(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _table(catalog)
    write_commit(table, _rows([1], "a"))
    write_commit(table, _rows([2], "a"))
    common = ["--warehouse", warehouse, "--table", "db.t"]
    reset = ["reset-consumer", *common, "--consumer-id"]
    code, doc, _ = run_json([*reset, "job", "--next_snapshot_id", "2"], capsys)
    assert (code, doc["result"]) == (0, {"result": True})
    assert _next(table, "job") == 2
    code, _, line = run_error([*reset, "job", "--next-snapshot-id", "9"], capsys)
    assert code == 2 and "no snapshot 9" in line
    code, doc, _ = run_json(["clear-consumers", *common, "--including_consumers", "j.*"], capsys)
    assert (code, doc["result"]) == (0, {"result": True, "cleared_consumers": ["job"]})
    assert _next(table, "job") is None
