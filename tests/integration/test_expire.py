"""Snapshot expiration (maintenance/expire.py, Java's ExpireSnapshotsImpl) on real tables.

Every test checks the one property that matters most: after expiry, every retained snapshot
and every tag still finds each file it references, and reads exactly the rows it read before.
Files that only expired snapshots referenced are gone.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pytest
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CorruptTableError, OptionError, SnapshotExpiredError
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots, parse_timestamp_ms
from paimon_pyspark.maintenance.snapshot_deletion import SnapshotDeletion
from paimon_pyspark.procedures import compact, expire_snapshots
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.index_io import IndexFileHandler

APPEND = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
PK = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.int64()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)


def make(
    catalog: FileSystemCatalog,
    name: str,
    schema: pa.Schema,
    partition_keys: list[str] | None = None,
    primary_keys: list[str] | None = None,
    **options: str,
) -> FileStoreTable:
    catalog.create_table(
        f"db.{name}",
        Schema.from_pyarrow_schema(
            schema,
            partition_keys=partition_keys or [],
            primary_keys=primary_keys or [],
            options=options,
        ),
    )
    return catalog.get_table(f"db.{name}")


def append_rows(i: int, dt: str = "a") -> pa.Table:
    return pa.table({"id": [i, i + 100], "v": [f"v{i}", f"w{i}"], "dt": [dt, dt]}, schema=APPEND)


def overwrite(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder().overwrite()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def rows_at(table: FileStoreTable, sid: int) -> list[dict[str, object]]:
    return sort_rows(read_all(table.copy({"scan.snapshot-id": str(sid)})))


def snapshot_rows(table: FileStoreTable) -> dict[int, list[dict[str, object]]]:
    return {sid: rows_at(table, sid) for sid in table.snapshot_manager.list_ids()}


def referenced_files(table: FileStoreTable, snapshot: Snapshot) -> set[str]:
    """Every file ``snapshot`` reaches: lists, manifests, data files, index manifest and files."""
    deletion = SnapshotDeletion(table.store)
    mio = table.manifest_io
    out = {mio.path(snapshot.base_manifest_list), mio.path(snapshot.delta_manifest_list)}
    out |= {mio.path(m.file_name) for m in mio.data_manifests(snapshot)}
    out |= {deletion.data_file_path(e) for e in mio.live_entries(snapshot)}
    if snapshot.index_manifest:
        handler = IndexFileHandler(table.file_io, table.path, mio.codec)
        out.add(mio.path(snapshot.index_manifest))
        for e in handler.read_manifest(snapshot.index_manifest):
            out.add(os.path.join(handler.index_dir, e.index_file.file_name))
    return out


def assert_retained_intact(table: FileStoreTable, tags: Sequence[Snapshot] = ()) -> None:
    sm = table.snapshot_manager
    for sid in sm.list_ids():
        missing = [f for f in referenced_files(table, sm.snapshot(sid)) if not os.path.exists(f)]
        assert not missing, f"snapshot {sid} lost {missing}"
    for tag in tags:
        missing = [f for f in referenced_files(table, tag) if not os.path.exists(f)]
        assert not missing, f"tag of snapshot {tag.id} lost {missing}"


def all_data_files(table: FileStoreTable) -> set[str]:
    out = set()
    for root, _, names in os.walk(table.path):
        rel = os.path.relpath(root, table.path).split(os.sep)[0]
        if rel in ("snapshot", "manifest", "schema", "index", "tag", "consumer"):
            continue
        out |= {os.path.join(root, n) for n in names if not n.startswith(".")}
    return out


def files_under(table: FileStoreTable, sub: str) -> set[str]:
    d = os.path.join(table.path, sub)
    return {os.path.join(d, n) for n in os.listdir(d)} if os.path.isdir(d) else set()


def earliest_hint(table: FileStoreTable) -> int:
    return int(Path(table.path, "snapshot", "EARLIEST").read_text())


def write_tag(table: FileStoreTable, name: str, sid: int) -> Snapshot:
    """A tag file as Java's TagManager writes it: the snapshot's JSON plus the tag's fields."""
    snapshot = table.snapshot_manager.snapshot(sid)
    obj = json.loads(snapshot.to_json())
    obj["tagCreateTime"] = [2026, 1, 1, 0, 0, 0, 0]
    obj["tagTimeRetained"] = None
    os.makedirs(os.path.join(table.path, "tag"), exist_ok=True)
    Path(table.path, "tag", f"tag-{name}").write_text(json.dumps(obj, indent=2))
    return snapshot


# --- which snapshots go ---------------------------------------------------------------------


def test_retain_max_keeps_newest_and_every_retained_snapshot_reads_its_rows(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "t", APPEND, partition_keys=["dt"])
    for i in range(4):
        write_commit(table, append_rows(i))
    overwrite(table, append_rows(50))  # files of commits 1-4 become dead at snapshot 5
    for i in range(5, 8):
        write_commit(table, append_rows(i))
    before = snapshot_rows(table)
    dead = {
        SnapshotDeletion(table.store).data_file_path(e)
        for e in table.manifest_io.live_entries(table.snapshot_manager.snapshot(4))
    }
    assert dead and all(os.path.exists(f) for f in dead)

    assert expire_snapshots(catalog, "db.t", retain_max=3, retain_min=1) == 5
    sm = table.snapshot_manager
    assert sm.list_ids() == [6, 7, 8]
    assert earliest_hint(table) == 6
    for sid in (6, 7, 8):
        assert rows_at(table, sid) == before[sid]
    assert_retained_intact(table)
    assert not any(os.path.exists(f) for f in dead)
    # only what snapshots 6-8 reach is left of data files and manifests
    reached = set().union(*(referenced_files(table, sm.snapshot(s)) for s in (6, 7, 8)))
    assert all_data_files(table) <= reached
    assert files_under(table, "manifest") <= reached
    with pytest.raises(SnapshotExpiredError, match="snapshot 2 .*earliest snapshot is 6"):
        read_all(table.copy({"scan.snapshot-id": "2"}))


def test_defaults_after_commit_expire_nothing_younger_than_an_hour(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "t", APPEND, partition_keys=["dt"])
    for i in range(14):
        write_commit(table, append_rows(i))
        if i % 4 == 3:
            overwrite(table, append_rows(i + 1000))
    assert table.snapshot_manager.list_ids() == list(range(1, 18))
    assert earliest_hint(table) == 1  # written as Java writes it when nothing expires
    assert_retained_intact(table)
    assert rows_at(table, 1) == sort_rows(append_rows(0))
    # the same table an hour and a half later: the newest 10 stay, the rest expire
    n = ExpireSnapshots(table.store).expire(now_ms=int(time.time() * 1000) + 90 * 60 * 1000)
    assert n == 7
    assert table.snapshot_manager.list_ids() == list(range(8, 18))
    assert_retained_intact(table)


def test_expire_after_commit_with_small_retain_options(catalog: FileSystemCatalog) -> None:
    table = make(
        catalog,
        "t",
        APPEND,
        partition_keys=["dt"],
        **{"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"},
    )
    expected = []
    for i in range(6):
        overwrite(table, append_rows(i))
        expected.append(sort_rows(append_rows(i)))
        assert len(table.snapshot_manager.list_ids()) <= 3
    sm = table.snapshot_manager
    assert sm.list_ids() == [4, 5, 6]
    for sid in (4, 5, 6):
        assert rows_at(table, sid) == expected[sid - 1]
    assert_retained_intact(table)
    # only the three snapshots' files are left: two overwritten generations are gone
    reached = set().union(*(referenced_files(table, sm.snapshot(s)) for s in (4, 5, 6)))
    assert all_data_files(table) == {f for f in reached if "bucket-" in f}


def test_write_only_skips_expiry_after_commit(catalog: FileSystemCatalog) -> None:
    table = make(
        catalog,
        "t",
        APPEND,
        **{
            "snapshot.num-retained.min": "1",
            "snapshot.num-retained.max": "1",
            "write-only": "true",
        },
    )
    for i in range(3):
        write_commit(table, append_rows(i))
    assert table.snapshot_manager.list_ids() == [1, 2, 3]


def test_time_retained_min_and_limit(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "t", APPEND)
    for i in range(12):
        write_commit(table, append_rows(i))
    later = int(time.time() * 1000) + 2 * 3600 * 1000
    limited = ExpireConfig(retain_min=2, time_retained_ms=3600 * 1000, max_deletes=3)
    assert ExpireSnapshots(table.store, limited).expire(now_ms=later) == 3
    assert table.snapshot_manager.list_ids()[0] == 4
    # not old enough: nothing beyond retain_max expires
    young = ExpireConfig(retain_min=2, time_retained_ms=3600 * 1000)
    assert ExpireSnapshots(table.store, young).expire() == 0
    assert ExpireSnapshots(table.store, young).expire(now_ms=later) == 7
    assert table.snapshot_manager.list_ids() == [11, 12]
    assert rows_at(table, 11) == sort_rows(pa.concat_tables([append_rows(i) for i in range(11)]))
    with pytest.raises(OptionError, match="retainMax"):
        ExpireSnapshots(table.store, ExpireConfig(retain_max=1, retain_min=2)).expire()


def test_procedure_older_than(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "t", APPEND)
    for i in range(4):
        write_commit(table, append_rows(i))
    sm = table.snapshot_manager
    cut = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(sm.snapshot(3).time_millis / 1000 + 1))
    assert parse_timestamp_ms(cut) > sm.snapshot(3).time_millis
    # snapshots 1-3 are older than the cut, but retain_min keeps the newest 2
    assert expire_snapshots(catalog, "db.t", retain_min=2, older_than=cut) == 2
    assert sm.list_ids() == [3, 4]
    assert expire_snapshots(catalog, "db.t", retain_min=1, older_than="2000-01-01") == 0


def test_consumer_keeps_the_snapshot_it_will_read(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "t", APPEND)
    for i in range(6):
        write_commit(table, append_rows(i))
    os.makedirs(os.path.join(table.path, "consumer"))
    Path(table.path, "consumer", "consumer-job").write_text('{"nextSnapshot":3}')
    assert expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1) == 2
    assert table.snapshot_manager.list_ids() == [3, 4, 5, 6]


# --- tags ---------------------------------------------------------------------------------


def test_tags_keep_their_files(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "t", APPEND, partition_keys=["dt"])
    write_commit(table, append_rows(1))
    write_commit(table, append_rows(2))
    tag2 = write_tag(table, "t2", 2)
    tag2_rows = rows_at(table, 2)
    overwrite(table, append_rows(3))
    write_commit(table, append_rows(4))
    tag4 = write_tag(table, "t4", 4)
    overwrite(table, append_rows(5))
    overwrite(table, append_rows(6))
    files_3 = {
        SnapshotDeletion(table.store).data_file_path(e)
        for e in table.manifest_io.live_entries(table.snapshot_manager.snapshot(3))
    }
    assert expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1) == 5
    assert table.snapshot_manager.list_ids() == [6]
    assert_retained_intact(table, [tag2, tag4])
    # snapshot 3's own file (rows 3) lives on in tag t4; tag t2 still reads its rows
    assert all(os.path.exists(f) for f in files_3)
    sm = table.snapshot_manager
    Path(sm.snapshot_path(2)).write_text(tag2.to_json())  # read the tag as a snapshot
    assert rows_at(table, 2) == tag2_rows
    os.remove(sm.snapshot_path(2))
    # a data file no tag nor snapshot holds is gone: snapshot 5's overwrite output
    live5 = {e.file.file_name for e in table.manifest_io.live_entries(sm.snapshot(6))}
    assert len(all_data_files(table)) == len(
        live5
        | {e.file.file_name for e in table.manifest_io.live_entries(tag2)}
        | {e.file.file_name for e in table.manifest_io.live_entries(tag4)}
    )


def test_unreadable_tag_stops_expiry_before_any_deletion(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "t", APPEND)
    for i in range(3):
        overwrite(table, append_rows(i))
    os.makedirs(os.path.join(table.path, "tag"))
    Path(table.path, "tag", "tag-broken").write_text("{not json")
    before = all_data_files(table) | files_under(table, "manifest")
    with pytest.raises(CorruptTableError, match="tag-broken"):
        expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1)
    assert all_data_files(table) | files_under(table, "manifest") == before
    assert table.snapshot_manager.list_ids() == [1, 2, 3]


# --- table kinds ----------------------------------------------------------------------------


def pk_rows(keys: range, v: int, pt: int = 0) -> pa.Table:
    return pa.table({"k": list(keys), "v": [v] * len(keys), "pt": [pt] * len(keys)}, schema=PK)


def test_pk_table_with_compactions(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "t", PK, ["pt"], ["k", "pt"], bucket="2")
    for v in range(4):
        write_commit(table, pk_rows(range(v, v + 6), v))
    compact(catalog, "db.t")
    write_commit(table, pk_rows(range(0, 3), 9))
    compact(catalog, "db.t")
    write_commit(table, pk_rows(range(20, 22), 7))
    before = snapshot_rows(table)
    latest = table.snapshot_manager.latest_id()
    assert latest is not None
    level0 = {
        SnapshotDeletion(table.store).data_file_path(e)
        for e in table.manifest_io.live_entries(table.snapshot_manager.snapshot(4))
    }
    assert expire_snapshots(catalog, "db.t", retain_max=2, retain_min=1) == latest - 2
    assert table.snapshot_manager.list_ids() == [latest - 1, latest]
    for sid in (latest - 1, latest):
        assert rows_at(table, sid) == before[sid]
    assert_retained_intact(table)
    assert not any(os.path.exists(f) for f in level0)  # compacted away, then expired


def test_postpone_table(catalog: FileSystemCatalog) -> None:
    table = make(
        catalog,
        "t",
        PK,
        ["pt"],
        ["k", "pt"],
        bucket="-2",
        **{"postpone.batch-write-fixed-bucket": "false"},
    )
    write_commit(table, pk_rows(range(0, 4), 1))
    write_commit(table, pk_rows(range(2, 6), 2))
    postpone = {f for f in all_data_files(table) if "bucket-postpone" in f}
    assert len(postpone) == 2
    compact(catalog, "db.t")
    write_commit(table, pk_rows(range(5, 7), 3))
    compact(catalog, "db.t")
    before = snapshot_rows(table)
    latest = table.snapshot_manager.latest_id()
    assert latest == 5
    assert expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1) == 4
    assert rows_at(table, 5) == before[5]
    assert_retained_intact(table)
    assert not any(os.path.exists(f) for f in postpone)
    assert not any("bucket-postpone" in f for f in all_data_files(table))


def test_dynamic_bucket_index_files(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "t", PK, ["pt"], ["k", "pt"], **{"dynamic-bucket.target-row-num": "3"})
    for v in range(4):
        write_commit(table, pk_rows(range(v * 2, v * 2 + 3), v))
    before = snapshot_rows(table)
    old_index = files_under(table, "index")
    assert len(old_index) > 2
    assert expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1) == 3
    assert rows_at(table, 4) == before[4]
    assert_retained_intact(table)
    live = referenced_files(table, table.snapshot_manager.snapshot(4))
    assert files_under(table, "index") == {f for f in old_index if f in live}
    assert files_under(table, "index") < old_index
    # writes keep finding their buckets through the retained index
    write_commit(table, pk_rows(range(0, 9), 8))
    assert sort_rows(read_all(table)) == sort_rows(pk_rows(range(0, 9), 8))


def test_expiry_failure_after_commit_does_not_fail_the_commit(
    catalog: FileSystemCatalog, caplog: pytest.LogCaptureFixture
) -> None:
    # snapshot 1 is old enough to expire, so the expiry reads the consumers (and fails)
    options = {"snapshot.num-retained.min": "1", "snapshot.time-retained": "1 ms"}
    table = make(catalog, "t", APPEND, **options)
    write_commit(table, append_rows(1))
    time.sleep(0.01)
    os.makedirs(os.path.join(table.path, "consumer"))
    Path(table.path, "consumer", "consumer-bad").write_text("[]")
    assert write_commit(table, append_rows(2)) == [2]
    assert "the maintenance after the commit failed" in caplog.text
    assert sort_rows(read_all(table)) == sort_rows(
        pa.concat_tables([append_rows(1), append_rows(2)])
    )


def test_upgraded_file_is_not_a_deletion_candidate(catalog: FileSystemCatalog) -> None:
    """A compaction that moves a file up a level DELETEs and ADDs the same name in one delta."""
    table = make(catalog, "t", PK, ["pt"], ["k", "pt"], bucket="1")
    write_commit(table, pk_rows(range(0, 3), 1))
    compact(catalog, "db.t")
    sm = table.snapshot_manager
    delta = table.manifest_io.read_entries(
        table.manifest_io.read_manifest_list(sm.snapshot(2).delta_manifest_list)
    )
    assert {e.file.file_name for e in delta if e.kind == 1} == {
        e.file.file_name for e in delta if e.kind == 0
    }
    assert SnapshotDeletion(table.store).removed_data_files(sm.snapshot(2)) == []
    assert expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1) == 1
    assert_retained_intact(table)
    assert sort_rows(read_all(table)) == sort_rows(pk_rows(range(0, 3), 1))
