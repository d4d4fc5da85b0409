"""Tags and rollback (maintenance/tags.py: Java's TagManager, TagDeletion and RollbackHelper).

Every rollback test checks the same things: the table reads the target's rows, the snapshots and
tags after the target are gone and the others are whole, and no data file is left that nothing
in the table uses. The crash test fails every store call of a rollback in turn and checks that
the table still reads as one of its snapshots, then that running the rollback again finishes it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CompactArgumentError, InvalidArgumentError, OptionError
from paimon_pyspark.maintenance.snapshot_deletion import SnapshotDeletion
from paimon_pyspark.procedures import (
    create_tag,
    delete_tag,
    expire_snapshots,
    rollback,
    rollback_to,
)
from paimon_pyspark.spec.snapshot import Snapshot

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
PK = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])
NO_EXPIRY = {"write-only": "true"}


def make(catalog: FileSystemCatalog, name: str = "t", pk: bool = False) -> FileStoreTable:
    schema = (
        Schema.from_pyarrow_schema(PK, primary_keys=["k"], options={**NO_EXPIRY, "bucket": "2"})
        if pk
        else Schema.from_pyarrow_schema(SCHEMA, options=NO_EXPIRY)
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def rows(i: int) -> pa.Table:
    return pa.table({"id": [i, i + 100], "v": [f"v{i}", f"w{i}"]}, schema=SCHEMA)


def overwrite(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder().overwrite()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def rows_at(table: FileStoreTable, sid: int) -> list[dict[str, object]]:
    return sort_rows(read_all(table.copy({"scan.snapshot-id": str(sid)})))


def five_snapshots(table: FileStoreTable) -> dict[int, list[dict[str, object]]]:
    """Appends, an overwrite, appends: files die along the way. Rows by snapshot id."""
    write_commit(table, rows(1))
    write_commit(table, rows(2))
    overwrite(table, rows(3))
    write_commit(table, rows(4))
    write_commit(table, rows(5))
    return {sid: rows_at(table, sid) for sid in range(1, 6)}


def data_files_on_disk(table: FileStoreTable) -> set[str]:
    out = set()
    for root, _, names in os.walk(table.path):
        top = os.path.relpath(root, table.path).split(os.sep)[0]
        if top in ("snapshot", "manifest", "schema", "index", "tag", "consumer"):
            continue
        out |= {os.path.join(root, n) for n in names if not n.startswith(".")}
    return out


def reached(table: FileStoreTable, snapshot: Snapshot) -> tuple[set[str], set[str]]:
    """(data files, metadata files) ``snapshot`` reaches."""
    deletion = SnapshotDeletion(table.store)
    mio = table.manifest_io
    meta = {mio.path(snapshot.base_manifest_list), mio.path(snapshot.delta_manifest_list)}
    meta |= {mio.path(m.file_name) for m in mio.data_manifests(snapshot)}
    data = {deletion.data_file_path(e) for e in mio.live_entries(snapshot)}
    return data, meta


def used_files(table: FileStoreTable) -> tuple[set[str], set[str]]:
    sm = table.snapshot_manager
    data: set[str] = set()
    meta: set[str] = set()
    for s in [*(sm.snapshot(i) for i in sm.list_ids()), *table.tag_manager.tags().values()]:
        d, m = reached(table, s)
        data |= d
        meta |= m
    return data, meta


def assert_whole_and_clean(table: FileStoreTable) -> None:
    """Every snapshot and tag finds its files, and no data or manifest file is unused."""
    data, meta = used_files(table)
    missing = [f for f in data | meta if not os.path.exists(f)]
    assert not missing, f"lost {missing}"
    assert data_files_on_disk(table) == data
    manifests = {
        os.path.join(table.manifest_io.manifest_dir, n)
        for n in os.listdir(table.manifest_io.manifest_dir)
    }
    assert manifests == meta


# --- create, list, delete --------------------------------------------------------------------


def test_tag_file_is_the_snapshot_json_and_list_tags_sorts_by_name(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog)
    five_snapshots(table)
    table.create_tag("v2", 2)
    table.create_tag("latest")
    table.create_tag("5", 3)  # Java 1.4.2 refuses no numeric tag name
    assert table.list_tags() == ["5", "latest", "v2"]
    text = Path(table.path, "tag", "tag-v2").read_text()
    assert text == table.snapshot_manager.snapshot(2).to_json()
    tags = table.tag_manager.tags()
    assert {n: s.id for n, s in tags.items()} == {"5": 3, "latest": 5, "v2": 2}
    assert "tagCreateTime" not in Path(table.path, "tag", "tag-latest").read_text()


def test_time_retained_is_written_as_java_writes_it(catalog: FileSystemCatalog) -> None:
    table = make(catalog)
    write_commit(table, rows(1))
    table.create_tag("r", time_retained="1500 ms")
    obj = json.loads(Path(table.path, "tag", "tag-r").read_text())
    assert len(obj["tagCreateTime"]) >= 5
    assert re.search(
        r'"tagTimeRetained" : 1\.500000000\n', Path(table.path, "tag", "tag-r").read_text()
    )
    assert table.tag_manager.get("r") == table.snapshot_manager.snapshot(1)
    # Java's default for createTag without a retention: tag.default-time-retained
    retained = table.copy({"tag.default-time-retained": "1 d"})
    retained.create_tag("d")
    assert '"tagTimeRetained" : 86400.000000000' in Path(table.path, "tag", "tag-d").read_text()
    with pytest.raises(OptionError, match="time_retained"):
        table.create_tag("bad", time_retained="soon")
    assert not table.tag_manager.tag_exists("bad")


def test_create_tag_refuses_as_java_does(catalog: FileSystemCatalog) -> None:
    table = make(catalog)
    with pytest.raises(InvalidArgumentError, match="latest snapshot doesn't exist"):
        table.create_tag("empty")
    write_commit(table, rows(1))
    with pytest.raises(InvalidArgumentError, match=r"given snapshot #7 doesn't exist"):
        table.create_tag("x", 7)
    table.create_tag("x", 1)
    before = Path(table.path, "tag", "tag-x").read_text()
    write_commit(table, rows(2))
    with pytest.raises(InvalidArgumentError, match="Tag 'x' already exists"):
        table.create_tag("x")
    table.create_tag("x", ignore_if_exists=True)
    assert Path(table.path, "tag", "tag-x").read_text() == before
    for blank in ("", "  "):
        with pytest.raises(InvalidArgumentError, match="blank"):
            table.create_tag(blank)
    for bad in ("a/b", "..\\x", "a\nb", "x" * 300):
        with pytest.raises(InvalidArgumentError, match=f"Table '{table.name}'"):
            table.create_tag(bad)
    with pytest.raises(InvalidArgumentError, match="snapshot id"):
        table.create_tag("y", "1")  # type: ignore[arg-type]
    assert table.list_tags() == ["x"]
    assert sorted(os.listdir(os.path.join(table.path, "tag"))) == ["tag-x"]


def test_delete_tag_of_live_snapshot_keeps_files(catalog: FileSystemCatalog) -> None:
    table = make(catalog)
    five_snapshots(table)
    table.create_tag("a", 2)
    before = data_files_on_disk(table)
    assert table.delete_tag("a") is True
    assert table.delete_tag("a") is False
    assert table.list_tags() == []
    assert data_files_on_disk(table) == before


# --- expiry and tags -------------------------------------------------------------------------


def expire_all_but_latest(catalog: FileSystemCatalog) -> int:
    return expire_snapshots(
        catalog, "db.t", retain_max=1, retain_min=1, older_than="2999-01-01 00:00:00"
    )


def test_expiry_keeps_tagged_files_and_rollback_to_an_expired_tag(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog)
    expected = five_snapshots(table)
    table.create_tag("v2", 2)
    table.create_tag("v4", 4)
    assert expire_all_but_latest(catalog) == 4
    sm = table.snapshot_manager
    assert sm.list_ids() == [5]
    assert_whole_and_clean(table)
    # an expired snapshot can be tagged again through its tag (Java's findSnapshot)
    table.create_tag("again", 2)
    assert table.tag_manager.get("again") == table.tag_manager.get("v2")

    table.rollback_to("v4")
    assert sm.list_ids() == [4]
    assert sm.latest_id() == 4 and sm.earliest_id() == 4
    assert Path(table.path, "snapshot", "EARLIEST").read_text().strip() == "4"
    assert sort_rows(read_all(table)) == expected[4]
    assert table.list_tags() == ["again", "v2", "v4"]
    assert_whole_and_clean(table)

    # by id: snapshot 2 is gone, so its tag is used (Java's rollbackTo(long))
    table.rollback_to(2)
    assert sm.list_ids() == [2]
    assert sort_rows(read_all(table)) == expected[2]
    assert table.list_tags() == ["again", "v2"]
    assert_whole_and_clean(table)
    assert write_commit(table, rows(9)) == [3]
    assert sort_rows(read_all(table)) == sort_rows(
        pa.concat_tables([pa.Table.from_pylist(expected[2], SCHEMA), rows(9)])
    )


def test_deleting_the_tag_of_an_expired_snapshot_deletes_what_only_it_kept(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog)
    expected = five_snapshots(table)
    table.create_tag("v1", 1)
    table.create_tag("twin", 1)
    table.create_tag("v4", 4)
    expire_all_but_latest(catalog)
    only_v1 = reached(table, table.tag_manager.get("v1"))[0]  # type: ignore[arg-type]
    assert table.delete_tag("v1")
    # another tag of the same snapshot still keeps its files (Java: more than one tag)
    assert all(os.path.exists(f) for f in only_v1)
    assert table.delete_tag("twin")
    assert not any(os.path.exists(f) for f in only_v1 - used_files(table)[0])
    assert only_v1 - used_files(table)[0]  # snapshot 1's rows were overwritten: files to delete
    assert_whole_and_clean(table)
    assert sort_rows(read_all(table)) == expected[5]


# --- rollback --------------------------------------------------------------------------------


@pytest.mark.parametrize("pk", [False, True])
def test_rollback_to_snapshot_deletes_later_snapshots_tags_and_their_files(
    catalog: FileSystemCatalog, pk: bool
) -> None:
    table = make(catalog, pk=pk)
    if pk:
        for i in range(5):
            data = pa.table({"k": [1, 2 + i], "v": [f"v{i}", "x"]}, schema=PK)
            write_commit(table, data)
        expected = {sid: rows_at(table, sid) for sid in range(1, 6)}
    else:
        expected = five_snapshots(table)
    table.create_tag("t2", 2)
    table.create_tag("t4", 4)
    table.create_tag("t5", 5)
    table.rollback_to(3)
    sm = table.snapshot_manager
    assert sm.list_ids() == [1, 2, 3]
    assert sm.latest_id() == 3
    assert table.list_tags() == ["t2"]
    assert sort_rows(read_all(table)) == expected[3]
    for sid in (1, 2):
        assert rows_at(table, sid) == expected[sid]
    assert_whole_and_clean(table)
    # the next commit takes id 4 again
    assert write_commit(table, pa.table({"k": [7], "v": ["n"]}, schema=PK) if pk else rows(7)) == [
        4
    ]


def test_rollback_to_latest_only_drops_later_tags(catalog: FileSystemCatalog) -> None:
    table = make(catalog)
    expected = five_snapshots(table)
    table.rollback_to(5)
    assert table.snapshot_manager.list_ids() == [1, 2, 3, 4, 5]
    assert sort_rows(read_all(table)) == expected[5]


def test_rollback_refuses_what_is_not_there(catalog: FileSystemCatalog) -> None:
    table = make(catalog)
    five_snapshots(table)
    with pytest.raises(InvalidArgumentError, match="Rollback snapshot '9' doesn't exist"):
        table.rollback_to(9)
    with pytest.raises(InvalidArgumentError, match="Tag 'nope' doesn't exist"):
        table.rollback_to("nope")
    with pytest.raises(InvalidArgumentError, match="snapshot id"):
        table.rollback_to(2.0)  # type: ignore[arg-type]
    assert table.snapshot_manager.list_ids() == [1, 2, 3, 4, 5]


# --- crash safety ----------------------------------------------------------------------------


def _faulty(table: FileStoreTable) -> tuple[FileStoreTable, FaultyFileIO]:
    faulty = FaultyFileIO(table.file_io)
    clone = FileStoreTable(faulty, table.path, table.name, table.table_schema, NO_EXPIRY)
    return clone, faulty


@pytest.mark.parametrize("target", ["3", "v2"])
def test_a_rollback_failing_at_any_store_call_leaves_a_readable_table(
    catalog: FileSystemCatalog, tmp_path: Path, target: str
) -> None:
    """``3``: snapshots 4 and 5 and tag t4 go. ``v2``: snapshot 2 expired, so every snapshot
    goes and the tag's snapshot is published again."""
    table = make(catalog)
    expected = five_snapshots(table)
    table.create_tag("v2", 2)
    table.create_tag("t4", 4)
    if target == "v2":
        expire_all_but_latest(catalog)
    goal: int | str = int(target) if target.isdigit() else target
    goal_id = 3 if target == "3" else 2
    pristine = tmp_path / "pristine"
    shutil.copytree(table.path, pristine)

    k, finished = 0, False
    while not finished:
        k += 1
        assert k < 500
        shutil.rmtree(table.path)
        shutil.copytree(pristine, table.path)
        faulty_table, faulty = _faulty(catalog.get_table("db.t"))
        faulty.arm(k, "before" if k % 2 else "after")
        try:
            faulty_table.rollback_to(goal)
        except InjectedFault:
            pass
        finally:
            faulty.recording = False
        finished = len(faulty.calls) < k  # the fault was never reached
        reopened = catalog.get_table("db.t")
        latest = reopened.snapshot_manager.latest_id()
        assert latest is not None, f"call {k}: no snapshot left"
        assert sort_rows(read_all(reopened)) == expected[latest], f"call {k}"
        data, meta = used_files(reopened)
        missing = [f for f in data | meta if not os.path.exists(f)]
        assert not missing, f"call {k}: lost {missing}"
        # running it again finishes the rollback; files a failed run left are orphans at worst
        reopened.rollback_to(goal)
        assert reopened.snapshot_manager.latest_id() == goal_id
        assert sort_rows(read_all(reopened)) == expected[goal_id]
        assert reopened.list_tags() == ["v2"]
        data, meta = used_files(reopened)
        assert all(os.path.exists(f) for f in data | meta), f"call {k}"
    assert_whole_and_clean(catalog.get_table("db.t"))
    assert k > 5


# --- procedures ------------------------------------------------------------------------------


def test_procedures_take_javas_arguments(catalog: FileSystemCatalog) -> None:
    table = make(catalog)
    expected = five_snapshots(table)
    create_tag(catalog, "db.t", "a", 2)
    create_tag(catalog, "db.t", "b", snapshot=3)  # Spark's name
    create_tag(catalog, "db.t", "c", "4", "1 d")  # SQL text brings digits
    create_tag(catalog, "db.t", "5")
    assert {n: s.id for n, s in table.tag_manager.tags().items()} == {
        "a": 2,
        "b": 3,
        "c": 4,
        "5": 5,
    }
    with pytest.raises(CompactArgumentError, match="not both"):
        create_tag(catalog, "db.t", "d", 1, snapshot=1)
    delete_tag(catalog, "db.t", "b , c,missing")
    assert table.list_tags() == ["5", "a"]
    with pytest.raises(InvalidArgumentError, match="blank"):
        delete_tag(catalog, "db.t", "a,,5")

    with pytest.raises(CompactArgumentError, match="only can set one of"):
        rollback(catalog, "db.t", "4", snapshot=4)
    with pytest.raises(CompactArgumentError, match="only can set one of"):
        rollback(catalog, "db.t")
    # Spark: digits are a snapshot id, so the tag named "5" is not what '5' means
    assert rollback(catalog, "db.t", "4") == (5, 4)
    assert sort_rows(read_all(table)) == expected[4]
    assert rollback(catalog, "db.t", "a") == (4, 2)
    assert sort_rows(read_all(table)) == expected[2]
    assert table.list_tags() == ["a"]
    assert rollback_to(catalog, "db.t", snapshot_id=1) == (2, 1)
    assert table.list_tags() == []

    empty = make(catalog, "e")
    with pytest.raises(InvalidArgumentError, match="Latest snapshot is null"):
        rollback(catalog, "db.e", "1")
    assert empty.snapshot_manager.list_ids() == []
