"""Stream reads (``new_stream_read_builder``): the start ``scan.mode`` picks, then each new APPEND
snapshot once, in order; ``checkpoint()``/``restore()`` resume.

The model: what each commit wrote, by snapshot id. A follow-up plan of snapshot s reads what s's
commit wrote (a primary-key commit's records unmerged, its deletes included, as Java's
streaming split); COMPACT snapshots add nothing.
"""

from __future__ import annotations

import pickle
import time

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    InvalidArgumentError,
    OptionError,
    SnapshotExpiredError,
    UnsupportedOptionError,
)
from paimon_pyspark.read.scan import Plan
from paimon_pyspark.read.stream_scan import DeltaSplit, StreamTableRead, StreamTableScan

Rows = list[dict[str, object]]
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _table(
    catalog: FileSystemCatalog, primary_key: bool, name: str = "t", **options: str
) -> FileStoreTable:
    keys = ["id"] if primary_key else None
    opts = {"bucket": "2", **({} if primary_key else {"bucket-key": "id"}), **options}
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys, options=opts)
    )
    return catalog.get_table(f"db.{name}")


def _rows(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": ids, "v": [f"{tag}{i}" for i in ids]}, SCHEMA)


def _stream(table: FileStoreTable) -> tuple[StreamTableScan, StreamTableRead]:
    builder = table.new_stream_read_builder()
    return builder.new_scan(), builder.new_read()


def _drain(scan: StreamTableScan, read: StreamTableRead) -> list[tuple[int | None, Rows]]:
    """(snapshot id, sorted rows) of every plan until an empty one."""
    out: list[tuple[int | None, Rows]] = []
    while True:
        plan = scan.plan()
        if not plan.splits():
            return out
        out.append((plan.snapshot_id, sort_rows(read.to_arrow(plan.splits()))))


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_new_snapshots_come_out_once_each_in_order(
    catalog: FileSystemCatalog, primary_key: bool
) -> None:
    options = {"num-sorted-run.compaction-trigger": "2"} if primary_key else {}
    table = _table(catalog, primary_key, **options)
    write_commit(table, _rows([1, 2, 3], "a"))
    write_commit(table, _rows([4, 5], "b"))
    sm = table.store.snapshot_manager
    start = sm.latest_id()
    assert start is not None
    scan, read = _stream(table)
    first = scan.plan()
    assert first.snapshot_id == start
    assert sort_rows(read.to_arrow(first.splits())) == sort_rows(read_all(table))
    assert scan.plan().splits() == [] and scan.checkpoint() == start + 1

    builder = table.new_stream_write_builder("job")
    written: dict[int, Rows] = {}
    with builder.new_write() as write:
        commit = builder.new_commit()
        for k in range(1, 6):
            rows = _rows([10 * k, 10 * k + 1, 1], f"c{k}-")
            write.write_arrow(rows)
            ids = commit.commit(write.prepare_commit(k), k)
            written[ids[0]] = sort_rows(rows)
    kinds = [sm.snapshot(i).commit_kind for i in sm.list_ids()]
    if primary_key:
        assert "COMPACT" in kinds, "compactions happened in between, and are skipped"

    assert _drain(scan, read) == sorted(written.items())
    assert scan.plan() == Plan(None, ())
    assert scan.checkpoint() == sm.latest_id() + 1  # type: ignore[operator]


def test_restore_resumes_from_a_checkpoint(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, False)
    write_commit(table, _rows([1], "a"))
    scan, read = _stream(table)
    scan.plan()
    write_commit(table, _rows([2], "b"))
    checkpoint = scan.checkpoint()
    assert checkpoint == 2
    write_commit(table, _rows([3], "c"))

    resumed, resumed_read = _stream(table)
    resumed.restore(checkpoint)
    assert _drain(resumed, resumed_read) == [
        (2, sort_rows(_rows([2], "b"))),
        (3, sort_rows(_rows([3], "c"))),
    ]
    assert _drain(scan, read) == _drain_from(table, 2)

    with pytest.raises(InvalidArgumentError, match="restore"):
        resumed.restore(0)
    resumed.restore(None)  # starts over: the latest snapshot whole
    assert resumed.plan().snapshot_id == 3


def _drain_from(table: FileStoreTable, snapshot_id: int) -> list[tuple[int | None, Rows]]:
    scan, read = _stream(table)
    scan.restore(snapshot_id)
    return _drain(scan, read)


def test_empty_table_waits_then_reads_its_first_snapshot_whole(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, True)
    scan, read = _stream(table)
    assert scan.plan() == Plan(None, ()) and scan.checkpoint() is None
    write_commit(table, _rows([1, 2], "a"))
    plan = scan.plan()
    assert plan.snapshot_id == 1 and not any(isinstance(s, DeltaSplit) for s in plan.splits())
    assert sort_rows(read.to_arrow(plan.splits())) == sort_rows(_rows([1, 2], "a"))
    assert scan.checkpoint() == 2


def test_pk_follow_up_reads_records_unmerged_with_retractions(
    catalog: FileSystemCatalog,
) -> None:
    # a one-byte write buffer flushes every write_arrow into a file of its own
    options = {"write-only": "true", "write-buffer-size": "1 b", "write-buffer-spillable": "false"}
    table = _table(catalog, True, bucket="1", **options)
    write_commit(table, _rows([1, 2, 3], "a"))
    scan, read = _stream(table)
    scan.plan()
    builder = table.new_stream_write_builder("job")
    with builder.new_write() as write:
        write.write_arrow(_rows([5], "x"))
        write.write_arrow(_rows([5], "y"))
        messages = write.prepare_commit(1)
        assert len(messages[0].data_increment.new_files) == 2
        builder.new_commit().commit(messages, 1)
        write.write_arrow(_rows([6], "z"))
        write.delete_arrow(_rows([1], "a"))
        builder.new_commit().commit(write.prepare_commit(2), 2)
    # snapshot 2 holds key 5 twice, both records come out; so does snapshot 3's -D of key 1
    assert _drain(scan, read) == [
        (2, sort_rows(pa.concat_tables([_rows([5], "x"), _rows([5], "y")]))),
        (3, sort_rows(pa.concat_tables([_rows([6], "z"), _rows([1], "a")]))),
    ]
    # the whole table merges: key 1 deleted, key 5 its last value
    assert sort_rows(read_all(table)) == sort_rows(
        pa.concat_tables([_rows([2, 3], "a"), _rows([5], "y"), _rows([6], "z")])
    )
    # a pickled read (Ray ships one to its tasks) still reads a delta unmerged
    scan.restore(2)
    shipped = pickle.loads(pickle.dumps(read))
    assert isinstance(shipped, StreamTableRead)
    assert sorted(shipped.to_arrow(scan.plan().splits())["v"].to_pylist()) == ["x5", "y5"]


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_filter_and_projection_apply_to_every_plan(
    catalog: FileSystemCatalog, primary_key: bool
) -> None:
    table = _table(catalog, primary_key)
    write_commit(table, _rows([1, 20], "a"))
    builder = table.new_stream_read_builder()
    pb = builder.new_predicate_builder()
    builder.with_filter(pb.greater_or_equal("id", 10)).with_projection(["v"])
    assert builder.read_type().field_names == ["v"]
    scan, read = builder.new_scan(), builder.new_read()
    assert read.to_arrow(scan.plan().splits()).to_pylist() == [{"v": "a20"}]
    write_commit(table, _rows([2], "b"))
    write_commit(table, _rows([3, 30], "c"))
    plans = []
    while (plan := scan.plan()).splits():
        plans.append((plan.snapshot_id, read.to_arrow(plan.splits()).to_pylist()))
    # snapshot 2's only file is dropped by its stats, and the snapshot passed over
    assert plans == [(3, [{"v": "c30"}])]


def _three_snapshots(catalog: FileSystemCatalog) -> FileStoreTable:
    table = _table(catalog, False)
    for k in range(1, 4):
        write_commit(table, _rows([k], f"s{k}-"))
        time.sleep(0.01)  # distinct commit times for from-timestamp
    return table


def _snapshot_ids(table: FileStoreTable, options: dict[str, str]) -> list[int | None]:
    builder = table.copy(options).new_stream_read_builder()
    scan = builder.new_scan()
    ids = []
    while (plan := scan.plan()).splits():
        ids.append(plan.snapshot_id)
    return ids


def test_scan_modes_pick_where_the_stream_starts(catalog: FileSystemCatalog) -> None:
    table = _three_snapshots(catalog)
    sm = table.store.snapshot_manager
    assert _snapshot_ids(table, {}) == [3]
    assert _snapshot_ids(table, {"scan.mode": "full"}) == [3]
    assert _snapshot_ids(table, {"scan.mode": "latest"}) == []
    assert _snapshot_ids(table, {"scan.snapshot-id": "2"}) == [2, 3]
    assert _snapshot_ids(table, {"scan.mode": "from-snapshot", "scan.snapshot-id": "2"}) == [2, 3]
    full = {"scan.mode": "from-snapshot-full", "scan.snapshot-id": "2"}
    assert _snapshot_ids(table, full) == [2, 3]
    builder = table.copy(full).new_stream_read_builder()
    scan = builder.new_scan()
    assert sorted(builder.new_read().to_arrow(scan.plan().splits())["id"].to_pylist()) == [1, 2]
    at = str(sm.snapshot(2).time_millis)
    assert _snapshot_ids(table, {"scan.timestamp-millis": at}) == [2, 3]
    assert _snapshot_ids(table, {"scan.timestamp-millis": "0"}) == [1, 2, 3]

    latest = table.copy({"scan.mode": "latest"}).new_stream_read_builder().new_scan()
    assert latest.plan().splits() == [] and latest.checkpoint() == 4
    write_commit(table, _rows([4], "s4-"))
    assert latest.plan().snapshot_id == 4


def test_latest_mode_on_an_empty_table_starts_at_the_first_snapshot(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, False)
    scan = table.copy({"scan.mode": "latest"}).new_stream_read_builder().new_scan()
    assert scan.plan().splits() == [] and scan.checkpoint() is None
    write_commit(table, _rows([1], "a"))
    assert scan.plan().snapshot_id == 1


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"scan.mode": "compacted-full"}, UnsupportedOptionError, "compacted-full"),
        ({"scan.mode": "from-file-creation-time"}, UnsupportedOptionError, "startup mode"),
        ({"scan.mode": "sideways"}, OptionError, "not a startup mode"),
        ({"scan.mode": "latest", "scan.snapshot-id": "1"}, OptionError, "scan.snapshot-id"),
        ({"scan.mode": "from-snapshot"}, OptionError, "needs one of"),
        ({"scan.tag-name": "t1"}, OptionError, "cannot start a stream"),
        ({"incremental-between": "1,2"}, OptionError, "batch read"),
        ({"consumer-id": ""}, OptionError, "consumer-id"),
        ({"streaming-read-overwrite": "true"}, UnsupportedOptionError, "OVERWRITE"),
    ],
)
def test_options_a_stream_cannot_honour_are_refused(
    catalog: FileSystemCatalog, options: dict[str, str], error: type[Exception], match: str
) -> None:
    table = _table(catalog, False)
    write_commit(table, _rows([1], "a"))
    table.create_tag("t1")
    copied = table.copy(options, time_travel=False)
    with pytest.raises(error, match=match):
        copied.new_stream_read_builder()


def test_first_row_tables_are_refused(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, True, **{"merge-engine": "first-row"})
    with pytest.raises(OptionError, match="first-row"):
        table.new_stream_read_builder()


def test_an_expired_position_raises(catalog: FileSystemCatalog) -> None:
    retain = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"}
    table = _table(catalog, False, **retain)
    scan, _ = _stream(table)
    write_commit(table, _rows([1], "a"))
    scan.plan()
    for k in range(2, 6):
        write_commit(table, _rows([k], "b"))
    assert table.store.snapshot_manager.earliest_id() == 4
    with pytest.raises(SnapshotExpiredError, match="next snapshot 2"):
        scan.plan()
    scan.restore(4)
    assert [p for p in (scan.plan().snapshot_id, scan.plan().snapshot_id)] == [4, 5]
