"""``procedures.remove_orphan_files`` (maintenance/orphan_files.py, Java's
``CALL sys.remove_orphan_files``) on tables damaged by real failures (tests/integration/
orphan_damage.py): killed and abandoned writers, a failed commit, a Spark job whose driver
died, interrupted publishes.

It finds exactly what the failures left, deletes it (a dry run deletes nothing), keeps files
newer than the cutoff, and every retained snapshot and tag reads as before. The comparison
with Java's own orphan-file cleanup is tests/interop/test_orphan_files_java.py.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from pathlib import Path

import pytest
from tests.integration.orphan_damage import (
    abandoned_write,
    age,
    build_history,
    damage,
    dirs_of,
    files_of,
    rows,
    write_tag,
)
from tests.integration.table_helpers import read_all, sort_rows, write_commit
from tests.integration.test_expire import referenced_files
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog
from paimon_pyspark.errors import CompactArgumentError, CorruptTableError, InvalidArgumentError
from paimon_pyspark.maintenance import orphan_files
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean, default_older_than_ms
from paimon_pyspark.procedures import expire_snapshots, remove_orphan_files
from paimon_pyspark.spark import job
from paimon_pyspark.spec.snapshot import Snapshot

TABLE = "db.t"
Reads = dict[int, list[dict[str, object]]]
Template = tuple[Path, set[str], set[str], Reads]
"""Warehouse, leftovers, directories before the damage, rows of every snapshot before it."""
Damaged = tuple[FileSystemCatalog, FileStoreTable, set[str]]


def snapshot_reads(table: FileStoreTable) -> Reads:
    return {
        sid: sort_rows(read_all(table.copy({"scan.snapshot-id": str(sid)})))
        for sid in table.snapshot_manager.list_ids()
    }


def relative(table: FileStoreTable, paths: tuple[str, ...]) -> set[str]:
    return {os.path.relpath(p, table.path) for p in paths}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """A damaged table, two days old, built once: (warehouse, leftovers, directories before the
    damage, rows of every snapshot before the damage). Only a tag keeps snapshot 2's files.
    Tests work on copies."""
    warehouse = tmp_path_factory.mktemp("orphans") / "wh"
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db")
    table = build_history(catalog, TABLE)
    write_tag(table, "t2", 2)
    # only the tag keeps snapshot 2's files: every snapshot but the latest expires
    soon = dt.datetime.now() + dt.timedelta(minutes=1)
    expire_snapshots(
        catalog, TABLE, retain_max=1, retain_min=1, older_than=f"{soon:%Y-%m-%d %H:%M:%S}"
    )
    assert table.snapshot_manager.list_ids() == [4]
    reads = snapshot_reads(table)
    dirs = dirs_of(table.path)
    left = damage(catalog, str(warehouse), TABLE)
    age(str(warehouse))
    return warehouse, left, dirs, reads


@pytest.fixture
def damaged(template: Template, tmp_path: Path) -> Damaged:
    warehouse = tmp_path / "wh"
    shutil.copytree(template[0], warehouse)  # copy2 keeps the modification times
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    return catalog, catalog.get_table(TABLE), template[1]


def test_the_damage_is_every_kind_of_leftover(damaged: Damaged) -> None:
    """The fixture really holds what the failures leave: data files, manifests, a manifest
    list, the staging of a dead Spark job and temp files beside snapshot, schema and tag."""
    _, _, left = damaged
    kinds = {
        "data": [f for f in left if "/bucket-" in f],
        "manifest": [f for f in left if f.startswith("manifest/manifest-") and "list" not in f],
        "manifest list": [f for f in left if f.startswith("manifest/manifest-list-")],
        "staging": [f for f in left if f.startswith(orphan_files.STAGING_DIR + "/")],
        "temp": [f for f in left if os.path.basename(f).endswith(".tmp")],
    }
    assert all(kinds.values()), kinds
    assert any(f.endswith("/_OPEN") for f in kinds["staging"])
    assert {f.split("/")[0] for f in kinds["temp"]} == {"snapshot", "schema", "tag"}
    assert orphan_files.STAGING_DIR == job.STAGING_DIR


def test_dry_run_finds_exactly_the_leftovers_and_deletes_nothing(damaged: Damaged) -> None:
    catalog, table, left = damaged
    before = files_of(table.path)
    lines: list[str] = []
    result = remove_orphan_files(catalog, TABLE, dry_run=True, progress=lines.append)
    assert relative(table, result.deleted_files) == left
    assert result.deleted_file_count == len(left)
    sizes = sum(os.path.getsize(os.path.join(table.path, f)) for f in left)
    assert result.deleted_file_total_len_in_bytes == sizes
    assert files_of(table.path) == before
    assert any("would delete" in line for line in lines), lines


def test_removes_the_leftovers_and_every_snapshot_and_tag_still_reads(
    damaged: tuple,
    template: Template,
) -> None:
    catalog, table, left = damaged
    before = files_of(table.path)
    result = remove_orphan_files(catalog, TABLE)
    assert relative(table, result.deleted_files) == left
    assert files_of(table.path) == before - left
    # directories only the damage made are gone: the partition dt=z, the staging of the job
    assert dirs_of(table.path) == template[2]
    assert snapshot_reads(table) == template[3]
    tag = Snapshot.from_json(Path(table.path, "tag", "tag-t2").read_text())
    assert all(os.path.exists(f) for f in referenced_files(table, tag))
    assert remove_orphan_files(catalog, TABLE).deleted_file_count == 0
    # the table takes commits after the clean
    assert write_commit(table, rows([50], "z")) == [5]


def test_files_newer_than_the_cutoff_are_kept(damaged: Damaged) -> None:
    catalog, table, left = damaged
    fresh_before = files_of(table.path)
    abandoned_write(table, [60, 61], "a")
    fresh = files_of(table.path) - fresh_before
    assert fresh
    result = remove_orphan_files(catalog, TABLE)
    assert relative(table, result.deleted_files) == left
    assert fresh <= files_of(table.path)
    # a cutoff before the damage was done keeps everything
    three_days_ago = dt.datetime.now() - dt.timedelta(days=3)
    early = remove_orphan_files(catalog, TABLE, older_than=f"{three_days_ago:%Y-%m-%d %H:%M:%S}")
    assert early.deleted_file_count == 0
    # a cutoff after they were written takes the fresh ones too (whole seconds: two later)
    time.sleep(2.1)
    just_now = dt.datetime.now() - dt.timedelta(seconds=1)
    late = remove_orphan_files(catalog, TABLE, older_than=f"{just_now:%Y-%m-%d %H:%M:%S}")
    assert relative(table, late.deleted_files) == fresh


def test_db_star_covers_every_table_of_the_database(damaged: Damaged) -> None:
    catalog, table, left = damaged
    other = build_history(catalog, "db.u")
    other_before = files_of(other.path)
    abandoned_write(other, [70], "a")
    other_left = files_of(other.path) - other_before
    age(other.path)
    result = remove_orphan_files(catalog, "db.*", dry_run=True)
    expected = {os.path.join(table.path, f) for f in left}
    expected |= {os.path.join(other.path, f) for f in other_left}
    assert set(result.deleted_files) == expected
    assert remove_orphan_files(catalog, "db.*").deleted_files == result.deleted_files
    assert remove_orphan_files(catalog, "db.*").deleted_file_count == 0


def test_a_commit_that_lands_while_listing_keeps_its_files(catalog: FileSystemCatalog) -> None:
    """Old files found unused are checked against snapshots that appeared since the used names
    were collected: a writer that prepared its files two days ago and commits now keeps them."""
    table = build_history(catalog, TABLE)
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(rows([80, 81], "a"))
        messages = write.prepare_commit()
    age(table.path)
    clean = OrphanFilesClean(table.store, default_older_than_ms())
    branches = clean.branches()
    seen = clean.snapshot_paths(branches)
    used = clean.used_names(seen)
    found = [
        f
        for root in clean.listing_roots()
        for name, path in clean.list_root(*root)
        if name not in used and (f := clean.old_file(path)) is not None
    ]
    new_files = {f.file_name for m in messages for f in m.new_files}
    assert {os.path.basename(f.path) for f in found} == new_files
    builder.new_commit().commit(messages)  # lands while the clean runs
    assert clean.drop_used_since(branches, seen, found) == []


def test_an_unreadable_manifest_list_aborts_before_anything_is_deleted(damaged: Damaged) -> None:
    catalog, table, _ = damaged
    snapshot = table.snapshot_manager.snapshot(4)
    Path(table.path, "manifest", snapshot.delta_manifest_list).write_bytes(b"not avro")
    before = files_of(table.path)
    with pytest.raises(CorruptTableError):
        remove_orphan_files(catalog, TABLE)
    assert files_of(table.path) == before


def test_a_branch_without_a_schema_aborts(damaged: Damaged) -> None:
    catalog, table, _ = damaged
    Path(table.path, "branch", "branch-b", "snapshot").mkdir(parents=True)
    before = files_of(table.path)
    with pytest.raises(CorruptTableError, match=r"\['b'\] have no schemas"):
        remove_orphan_files(catalog, TABLE)
    assert files_of(table.path) == before


def test_arguments_are_checked_as_java_checks_them(catalog: FileSystemCatalog) -> None:
    build_history(catalog, TABLE)
    tomorrow = dt.datetime.now() + dt.timedelta(days=1)
    with pytest.raises(CompactArgumentError, match="must be before now"):
        remove_orphan_files(catalog, TABLE, older_than=f"{tomorrow:%Y-%m-%d %H:%M:%S}")
    with pytest.raises(CompactArgumentError, match="Unknown mode"):
        remove_orphan_files(catalog, TABLE, mode="somewhere")
    with pytest.raises(CompactArgumentError, match="needs Spark"):
        remove_orphan_files(catalog, TABLE, mode="DISTRIBUTED")
    with pytest.raises(CompactArgumentError, match="db.t"):
        remove_orphan_files(catalog, ".*")
    with pytest.raises(InvalidArgumentError, match="dry_run"):
        remove_orphan_files(catalog, TABLE, dry_run="yes")  # type: ignore[arg-type]
    assert remove_orphan_files(catalog, TABLE, mode="local").deleted_file_count == 0


def test_on_s3_through_the_file_io(s3_server: S3Server, s3_bucket: str) -> None:
    """Listing, stat and delete go through FileIO: on an object store (moto) the leftovers of
    an abandoned writer go, and every snapshot reads as before."""
    catalog = CatalogFactory.create({"warehouse": f"s3://{s3_bucket}/wh", **s3_server.options()})
    catalog.create_database("db")
    table = build_history(catalog, TABLE)
    reads = snapshot_reads(table)
    keys_before = set(s3_server.list_keys(s3_bucket))
    abandoned_write(table, [90, 91], "c")
    left = {f"s3://{s3_bucket}/{k}" for k in set(s3_server.list_keys(s3_bucket)) - keys_before}
    assert left
    time.sleep(2.1)  # the store's clock decides the files' age; the cutoff must be before now
    cutoff = dt.datetime.now() - dt.timedelta(seconds=1)
    older_than = f"{cutoff:%Y-%m-%d %H:%M:%S}"
    assert set(remove_orphan_files(catalog, TABLE, older_than, dry_run=True).deleted_files) == left
    assert set(remove_orphan_files(catalog, TABLE, older_than).deleted_files) == left
    assert set(s3_server.list_keys(s3_bucket)) == keys_before
    assert snapshot_reads(catalog.get_table(TABLE)) == reads
