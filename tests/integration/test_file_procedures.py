"""The file procedures (procedures/file_calls.py) and the manifest merge of every commit
(commit/manifest_merger.py): ``manifest.full-compaction-threshold-size`` honoured at commit,
``compact_manifest``, ``remove_unexisting_files``, ``purge_files`` and ``compact_database``,
each through the Python API; a purge and a manifest compaction failing at any store call leave
a readable table that a rerun finishes. Java's side: tests/interop/test_file_procedures_java.py."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark import procedures as P
from paimon_pyspark.errors import CompactArgumentError, InvalidArgumentError, OptionError
from paimon_pyspark.procedures.file_calls import compact_manifests, purge
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.managers import Consumer

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
NO_MERGE = {"manifest.merge-min-count": "100", "bucket": "-1"}


def _make(catalog: FileSystemCatalog, name: str = "t", **options: str) -> FileStoreTable:
    catalog.create_database("db", True)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], options={**NO_MERGE, **options}
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def _append(table: FileStoreTable, ids: list[int], dt: str) -> None:
    write_commit(table, pa.table({"id": ids, "dt": [dt] * len(ids)}, schema=SCHEMA))


def _overwrite(table: FileStoreTable, ids: list[int], dt: str) -> None:
    builder = table.new_batch_write_builder().overwrite({"dt": dt})
    with builder.new_write() as w:
        w.write_arrow(pa.table({"id": ids, "dt": [dt] * len(ids)}, schema=SCHEMA))
        builder.new_commit().commit(w.prepare_commit())


def _base(store: FileStore) -> list[mf.ManifestFileMeta]:
    latest = store.snapshot_manager.latest()
    assert latest is not None
    return store.manifest_io.read_manifest_list(latest.base_manifest_list)


def _history(table: FileStoreTable) -> None:
    """Partition b in its own manifests, partition a overwritten: DELETE entries of a."""
    _append(table, [1], "a")
    _append(table, [2], "b")
    _append(table, [3], "a")
    _overwrite(table, [9], "a")


# --- the merge at every commit -----------------------------------------------------------------


def test_full_compaction_threshold_drops_delete_entries_at_commit(
    catalog: FileSystemCatalog,
) -> None:
    kept = _make(catalog, "kept")
    full = _make(
        catalog,
        "full",
        **{"manifest.full-compaction-threshold-size": "1 b", "manifest.target-file-size": "1 b"},
    )
    for table in (kept, full):
        _history(table)
        _append(table, [4], "b")
    # the default threshold (16 mb) keeps every small manifest and DELETE entry
    assert sum(m.num_deleted_files for m in _base(kept.store)) == 2
    assert len(_base(kept.store)) == 4
    # a full compaction: manifests holding only b (not touched by a delete) stay as they
    # were; those with a's entries are rewritten without the deleted files
    base = _base(full.store)
    assert sum(m.num_deleted_files for m in base) == 0
    assert sum(m.num_added_files for m in base) == 2  # a=9 and b=2
    store = full.store
    b_only = store.manifest_io.read_manifest_list(
        store.snapshot_manager.snapshot(2).delta_manifest_list
    )
    assert {m.file_name for m in b_only} <= {m.file_name for m in base}
    a_first = store.manifest_io.read_manifest_list(
        store.snapshot_manager.snapshot(1).delta_manifest_list
    )
    assert not {m.file_name for m in a_first} & {m.file_name for m in base}
    assert sort_rows(read_all(full)) == sort_rows(read_all(kept))


def test_full_compaction_threshold_is_parsed_and_checked(catalog: FileSystemCatalog) -> None:
    table = _make(catalog, **{"manifest.full-compaction-threshold-size": "2 mb"})
    assert table.options.manifest_full_compaction_threshold_size == 2 * 1024 * 1024
    with pytest.raises(OptionError, match="manifest.full-compaction-threshold-size"):
        table.copy({"manifest.full-compaction-threshold-size": "0 b"})


# --- compact_manifest --------------------------------------------------------------------------


def test_compact_manifest(catalog: FileSystemCatalog) -> None:
    table = _make(catalog)
    assert P.compact_manifest(catalog, "db.t") is None  # no snapshot: nothing to do
    _history(table)
    before = table.snapshot_manager.latest()
    assert before is not None
    rows = sort_rows(read_all(table))
    sid = P.compact_manifest(catalog, "db.t", options="manifest.merge-min-count=50")
    assert sid == before.id + 1
    after = table.snapshot_manager.snapshot(sid)
    assert after.commit_kind == "COMPACT" and after.delta_record_count == 0
    assert after.total_record_count == before.total_record_count
    assert table.manifest_io.read_manifest_list(after.delta_manifest_list) == []
    base = _base(table.store)
    assert [(m.num_added_files, m.num_deleted_files) for m in base] == [(2, 0)]
    assert sort_rows(read_all(table)) == rows
    assert P.compact_manifest(catalog, "db.t") is None  # merged already: no snapshot
    assert table.snapshot_manager.latest_id() == sid


# --- remove_unexisting_files -------------------------------------------------------------------


def _lose_b(table: FileStoreTable) -> str:
    store = table.store
    latest = store.snapshot_manager.latest()
    assert latest is not None
    (e,) = [e for e in store.manifest_io.live_entries(latest) if b"b" in e.partition]
    path = os.path.join(store.bucket_path_of(e.partition, e.bucket), e.file.file_name)
    os.remove(path)
    return path


def test_remove_unexisting_files(catalog: FileSystemCatalog) -> None:
    table = _make(catalog, **{"snapshot.num-retained.max": "2", "snapshot.num-retained.min": "1"})
    other = _make(catalog, "other")
    _history(table)
    _append(other, [5], "a")
    assert P.remove_unexisting_files(catalog, "db.*") == []
    lost = _lose_b(table)
    latest = table.snapshot_manager.latest_id()
    assert P.remove_unexisting_files(catalog, "db.t", dry_run=True, parallelism=2) == [lost]
    assert table.snapshot_manager.latest_id() == latest
    assert P.remove_unexisting_files(catalog, "db.t") == [lost]
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None and snapshot.id == latest + 1
    assert snapshot.commit_kind == "OVERWRITE" and snapshot.delta_record_count == -1
    assert sort_rows(read_all(table)) == [{"dt": "a", "id": 9}]
    # the commit ran the table's maintenance: snapshot expiry kept 2
    assert table.snapshot_manager.list_ids() == [latest, latest + 1]
    assert P.remove_unexisting_files(catalog, "db.*") == []
    with pytest.raises(InvalidArgumentError, match="dry_run"):
        P.remove_unexisting_files(catalog, "db.t", dry_run="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="parallelism"):
        P.remove_unexisting_files(catalog, "db.t", parallelism=0)


# --- purge_files -------------------------------------------------------------------------------


def _decorate(table: FileStoreTable) -> None:
    """A tag, a consumer, a branch and a long-lived changelog directory to purge."""
    from paimon_pyspark.maintenance.branches import create_branch

    table.create_tag("t1", 2)
    table.store.consumer_manager.reset_consumer("c1", Consumer(2))
    create_branch(table.store, "b1", "t1")


def _data_files(root: str) -> list[str]:
    return [
        os.path.join(d, f)
        for d, _, files in os.walk(root)
        for f in files
        if f.startswith("data-") or f.endswith(".index")
    ]


def _purged(table: FileStoreTable, leaked_ok: bool = False) -> None:
    """Empty, one snapshot, no tag, consumer or branch, no data file. ``leaked_ok``: data files
    named by the last snapshot's DELETE entries may stay (an expiry that could not read a
    manifest list skips its files with a warning, as Java's; orphan cleaning counts every
    entry's file as used)."""
    reopened = FileStoreTable.of(table.store.copy({}))
    assert read_all(reopened).num_rows == 0
    assert reopened.snapshot_manager.list_ids() == [reopened.snapshot_manager.latest_id()]
    assert reopened.tag_manager.list_tags() == []
    assert reopened.store.consumer_manager.consumers() == {}
    assert not os.path.exists(os.path.join(table.path, "branch", "branch-b1"))
    left = {os.path.basename(f) for f in _data_files(table.path)}
    if leaked_ok and left:
        latest = reopened.snapshot_manager.latest()
        assert latest is not None
        mio = reopened.manifest_io
        deleted = {
            e.file.file_name
            for e in mio.read_entries(mio.data_manifests(latest))
            if e.kind == mf.KIND_DELETE
        }
        left -= deleted
    assert not left


def test_purge_files(catalog: FileSystemCatalog) -> None:
    table = _make(catalog)
    _history(table)
    _decorate(table)
    os.makedirs(os.path.join(table.path, "changelog"))
    assert P.purge_files(catalog, "db.t") == "Success"
    _purged(table)
    assert not os.path.exists(os.path.join(table.path, "changelog"))
    latest = table.snapshot_manager.latest()
    assert latest is not None and latest.commit_kind == "OVERWRITE"
    assert os.path.exists(os.path.join(table.path, "schema", "schema-0"))
    _append(table, [7], "c")  # the table is usable after a purge
    assert sort_rows(read_all(table)) == [{"dt": "c", "id": 7}]


# --- crash safety ------------------------------------------------------------------------------


def _faulty(table: FileStoreTable) -> tuple[FileStore, FaultyFileIO]:
    faulty = FaultyFileIO(table.file_io)
    clone = FileStoreTable(faulty, table.path, table.name, table.table_schema, {})
    return clone.store, faulty


@pytest.mark.parametrize("step", ["purge", "compact_manifest"])
def test_a_failure_at_any_store_call_leaves_a_readable_table_a_rerun_finishes(
    catalog: FileSystemCatalog, tmp_path: Path, step: str
) -> None:
    table = _make(catalog)
    _history(table)
    if step == "purge":
        _decorate(table)
    rows = sort_rows(read_all(table))
    pristine = str(tmp_path / "pristine")
    shutil.copytree(table.path, pristine)
    work: Callable[[FileStore], object] = purge if step == "purge" else compact_manifests
    k = 0
    while True:
        k += 1
        shutil.rmtree(table.path)
        shutil.copytree(pristine, table.path)
        store, faulty = _faulty(catalog.get_table("db.t"))
        faulty.arm(k, "before" if k % 2 else "after")
        try:
            work(store)
        except InjectedFault:
            pass
        finally:
            faulty.recording = False
        reopened = catalog.get_table("db.t")
        assert sort_rows(read_all(reopened)) in (rows, []), f"call {k}"
        work(reopened.store)  # the rerun finishes the work
        if step == "purge":
            _purged(reopened, leaked_ok=True)
        else:
            assert sort_rows(read_all(reopened)) == rows
            assert sum(m.num_deleted_files for m in _base(reopened.store)) == 0
        if len(faulty.calls) < k:  # the fault was never reached: every call was tried
            break
    assert k > 20


# --- compact_database --------------------------------------------------------------------------


def test_compact_database(catalog: FileSystemCatalog) -> None:
    for name in ("t1", "t2", "tmp_x"):
        table = _make(catalog, name, **{"bucket": "1", "bucket-key": "id"})
        for i in range(3):
            _append(table, [i], "a")
    catalog.create_database("other", True)
    result = P.compact_database(catalog, "db", excluding_tables="db\\.tmp_.*")
    assert result == "Compact database finished. Success: 2, Failed: 0"
    kinds = {
        n: catalog.get_table(f"db.{n}").snapshot_manager.latest().commit_kind  # type: ignore[union-attr]
        for n in ("t1", "t2", "tmp_x")
    }
    assert kinds == {"t1": "COMPACT", "t2": "COMPACT", "tmp_x": "APPEND"}
    assert P.compact_database(catalog, "nothing.*") == (
        "Compact database finished. Success: 0, Failed: 0"
    )
    with pytest.raises(CompactArgumentError, match="mode"):
        P.compact_database(catalog, mode="parallel")
    with pytest.raises(CompactArgumentError, match="including_tables"):
        P.compact_database(catalog, including_tables="(")
