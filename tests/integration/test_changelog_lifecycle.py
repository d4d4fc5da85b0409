"""Changelog kept longer than snapshots (``changelog.num-retained.*``, ``changelog.time-retained``):
snapshot expiry writes Java's long-lived ``changelog/changelog-<id>`` and keeps the files it
reads; reads find it by id; changelog expiry, ``expire_changelogs`` and ``remove_orphan_files``
know its files (maintenance/expire.py, expire_changelog.py, store/changelog_manager.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest
from tests.integration.table_helpers import write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError
from paimon_pyspark.maintenance.expire_changelog import ExpireChangelog
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean
from paimon_pyspark.maintenance.snapshot_deletion import SnapshotDeletion
from paimon_pyspark.maintenance.tags import rollback_to
from paimon_pyspark.procedures import expire_changelogs, expire_snapshots
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.sql.procedure_args import SIGNATURES, bind
from paimon_pyspark.store.changelog_manager import (
    ChangelogManager,
    earliest_readable_id,
    snapshot_or_changelog,
)

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int64())])
KEEP = {
    "bucket": "1",
    "snapshot.num-retained.min": "1",
    "snapshot.num-retained.max": "2",
    "changelog.num-retained.max": "4",
    "num-sorted-run.compaction-trigger": "3",
}
FUTURE_MS = 2**62


def make(
    catalog: FileSystemCatalog, producer: str, name: str = "t", **extra: str
) -> FileStoreTable:
    options = {**KEEP, "changelog-producer": producer, **extra}
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options=options)
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def commit(table: FileStoreTable, i: int) -> None:
    write_commit(table, pa.table({"k": [i % 3, 10 + i], "v": [i, i]}, schema=SCHEMA))


def changelog_reads(table: FileStoreTable, changelog: Snapshot) -> set[str]:
    """The files a stream read of ``changelog`` opens: its changelog manifests and files (a
    producer), else its delta manifests and the level-0 files they add."""
    mio = table.manifest_io
    deletion = SnapshotDeletion(table.store)
    name = changelog.changelog_manifest_list or changelog.delta_manifest_list
    metas = mio.read_manifest_list(name)
    out = {mio.path(name), *(mio.path(m.file_name) for m in metas)}
    for e in mio.read_entries(metas):
        if e.kind == mf.KIND_ADD and (changelog.changelog_manifest_list or e.file.level == 0):
            out.add(deletion.data_file_path(e))
    return out


@pytest.mark.parametrize("producer", ["none", "input"])
def test_long_lived_changelogs_outlive_snapshots_and_expire_with_their_files(
    catalog: FileSystemCatalog, producer: str
) -> None:
    table = make(catalog, producer)
    for i in range(8):
        commit(table, i)
    sm, cm = table.snapshot_manager, ChangelogManager(table.file_io, table.path)
    earliest = sm.earliest_id()
    assert earliest is not None and len(sm.list_ids()) == 2
    # changelog.num-retained.max 4 of the latest snapshot's ids: the two below the snapshots
    assert cm.list_ids() == [earliest - 2, earliest - 1]
    assert (cm.earliest_long_lived_changelog_id(), cm.latest_long_lived_changelog_id()) == (
        earliest - 2,
        earliest - 1,
    )
    assert Path(cm.changelog_directory(), "LATEST").read_text() == str(earliest - 1)
    assert earliest_readable_id(table.store) == earliest - 2
    for cid in cm.list_ids():
        changelog = snapshot_or_changelog(table.store, cid)
        assert changelog is not None and changelog.id == cid and not sm.snapshot_exists(cid)
        assert json.loads(Path(cm.long_lived_changelog_path(cid)).read_text())["id"] == cid
        reads = changelog_reads(table, changelog)
        assert reads and all(os.path.exists(f) for f in reads)
    assert snapshot_or_changelog(table.store, earliest - 3) is None

    # remove_orphan_files keeps every file a long-lived changelog reads, and finds nothing
    # that expiry left behind
    kept = set().union(*(changelog_reads(table, cm.changelog(c)) for c in cm.list_ids()))
    assert OrphanFilesClean(table.store, FUTURE_MS).run().deleted_file_count == 0
    assert all(os.path.exists(f) for f in kept)

    assert expire_changelogs(catalog, "db.t", retain_max=2) == "1"  # latest is always kept
    assert cm.list_ids() == [earliest - 1]
    assert OrphanFilesClean(table.store, FUTURE_MS, dry_run=True).run().deleted_file_count == 0
    done = expire_changelogs(catalog, "db.t", delete_all=True)
    assert done == "Delete all separated changelogs success."
    assert os.listdir(cm.changelog_directory()) == []
    assert OrphanFilesClean(table.store, FUTURE_MS, dry_run=True).run().deleted_file_count == 0
    assert snapshot_or_changelog(table.store, earliest - 1) is None
    assert earliest_readable_id(table.store) == earliest


def test_tags_and_rollback_keep_what_long_lived_changelogs_read(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "none")
    for i in range(8):
        commit(table, i)
        for sid in table.snapshot_manager.list_ids():
            if not os.path.exists(os.path.join(table.path, "tag", f"tag-t{sid}")):
                table.create_tag(f"t{sid}", sid)
    cm = ChangelogManager(table.file_io, table.path)
    first, last = cm.list_ids()
    reads = changelog_reads(table, cm.changelog(last))
    table.delete_tag(f"t{last}")  # its snapshot expired: the tag kept files the changelog reads
    assert all(os.path.exists(f) for f in reads)
    rollback_to(table.store, first)  # Java's cleanLongLivedChangelogs: later ones go
    assert cm.list_ids() == [first] and cm.latest_long_lived_changelog_id() == first
    assert table.snapshot_manager.latest_id() == first
    assert all(os.path.exists(f) for f in changelog_reads(table, cm.changelog(first)))


def test_procedure_expiry_is_not_decoupled_but_keeps_what_changelogs_read(
    catalog: FileSystemCatalog,
) -> None:
    retention = {"snapshot.num-retained.max": "4", "changelog.num-retained.max": "20"}
    table = make(catalog, "none", **retention, **{"num-sorted-run.compaction-trigger": "4"})
    for i in range(8):
        commit(table, i)
    cm = ChangelogManager(table.file_io, table.path)
    before = cm.list_ids()
    reads = set().union(*(changelog_reads(table, cm.changelog(c)) for c in before))
    # Java's procedure builds its expiry without the changelog settings: no new changelogs
    assert expire_snapshots(catalog, "db.t", retain_max=1) > 0
    assert cm.list_ids() == before
    assert all(os.path.exists(f) for f in reads)


def test_consumer_changelog_only_holds_back_changelog_expiry_only(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "input", **{"consumer.changelog-only": "true"})
    consumer = Path(table.path, "consumer", "consumer-c1")
    consumer.parent.mkdir()
    consumer.write_text(json.dumps({"nextSnapshot": 3}))
    for i in range(8):
        commit(table, i)
    cm = ChangelogManager(table.file_io, table.path)
    assert len(table.snapshot_manager.list_ids()) == 2  # the consumer did not hold snapshots
    assert cm.earliest_long_lived_changelog_id() == 3  # but kept the changelog it reads next

    plain = make(catalog, "input", name="plain")
    consumer = Path(plain.path, "consumer", "consumer-c1")
    consumer.parent.mkdir()
    consumer.write_text(json.dumps({"nextSnapshot": 3}))
    for i in range(8):
        commit(plain, i)
    assert plain.snapshot_manager.earliest_id() == 3  # without it, snapshots are held


def test_without_decoupling_changelog_files_go_with_their_snapshot(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "input", **{"changelog.num-retained.max": "2"})
    for i in range(6):
        commit(table, i)
    assert not os.path.exists(os.path.join(table.path, "changelog"))
    assert OrphanFilesClean(table.store, FUTURE_MS, dry_run=True).run().deleted_file_count == 0


def test_changelog_time_retained_decides_which_changelogs_expire(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "input", **{"changelog.num-retained.max": "50"})
    table = table.copy({"changelog.time-retained": "1 min"})
    for i in range(6):
        commit(table, i)
    cm = ChangelogManager(table.file_io, table.path)
    ids = cm.list_ids()
    assert len(ids) >= 3
    assert ExpireChangelog(table.store).expire() == 0  # all younger than a minute
    later = cm.changelog(ids[-1]).time_millis + 60_001
    assert ExpireChangelog(table.store).expire(now_ms=later) == len(ids) - 1
    assert cm.list_ids() == ids[-1:]  # the latest long-lived changelog is always kept
    assert OrphanFilesClean(table.store, FUTURE_MS, dry_run=True).run().deleted_file_count == 0


def test_changelog_retention_options_are_checked(catalog: FileSystemCatalog) -> None:
    with pytest.raises(OptionError, match="changelog.num-retained.min"):
        make(catalog, "none", name="bad", **{"changelog.num-retained.min": "5"})
    with pytest.raises(OptionError, match="changelog.num-retained.min"):
        make(catalog, "none", name="bad", **{"changelog.num-retained.min": "0"})
    opts = make(catalog, "none", **{"changelog.time-retained": "2 h"}).options
    assert opts.changelog_time_retained_ms == 7_200_000 and opts.changelog_lifecycle_decoupled


def test_expire_changelogs_call_takes_flinks_order() -> None:
    sig = SIGNATURES["expire_changelogs"]
    bound = bind("expire_changelogs", sig, ["db.t", 5, 1, "", 10, "true"], {})
    assert bound == {"table": "db.t", "retain_max": 5, "retain_min": 1, "max_deletes": 10,
                     "delete_all": "true"}  # fmt: skip
    assert bind("expire_changelogs", sig, [], {"table": "db.t", "delete_all": True}) == {
        "table": "db.t",
        "delete_all": True,
    }
