"""``remove_orphan_files`` against Java Paimon 1.4.2's own orphan-file cleanup.

On one table damaged by real failures (tests/integration/orphan_damage.py: abandoned, killed
and failed writers and commits, a Spark job whose driver died, interrupted publishes), with a
Java tag that alone keeps an expired snapshot's files and a Java branch whose write put data
files and manifests into the table's directories, Java's ``LocalOrphanFilesClean`` (dry run,
same cutoff) finds exactly the files ours finds, but for our own leftovers Java does not know:
the staging of the dead Spark job and the temp files beside schema and tag files. After ours
deleted them, Java reads every retained snapshot, the tag and the branch as before, and finds
nothing left to clean.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from java_oracle import (
    JavaOracle,
    read_branch,
    remove_database_orphan_files,
    remove_orphan_files,
    sorted_rows,
    write_rows_to_new_branch,
)
from tests.integration.orphan_damage import abandoned_write, age, build_history, damage, files_of

from paimon_pyspark import CatalogFactory
from paimon_pyspark.maintenance.orphan_files import STAGING_DIR, default_older_than_ms
from paimon_pyspark.procedures import expire_snapshots
from paimon_pyspark.procedures import remove_orphan_files as ours_remove

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"


def only_ours(table_path: str, path: str) -> bool:
    """Our leftovers Java's cleanup does not look for (maintenance/orphan_files.py)."""
    rel = os.path.relpath(path, table_path).split(os.sep)
    return rel[0] == STAGING_DIR or (rel[0] in ("schema", "tag") and rel[-1].endswith(".tmp"))


def test_java_finds_the_same_orphans_and_reads_everything_retained_afterwards(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    catalog = CatalogFactory.create({"warehouse": str(wh)})
    catalog.create_database(DB)
    table = build_history(catalog, "db.t")
    java_oracle.create_tag(wh, DB, "t", "t2", 2)
    write_rows_to_new_branch(java_oracle, wh, DB, "t", "b", "t2", [[20, "branch", "a"]])
    soon = dt.datetime.now() + dt.timedelta(minutes=1)
    expire_snapshots(
        catalog, "db.t", retain_max=1, retain_min=1, older_than=f"{soon:%Y-%m-%d %H:%M:%S}"
    )
    assert table.snapshot_manager.list_ids() == [4]  # only the tag keeps snapshot 2's files
    retained = [s["id"] for s in java_oracle.snapshots(wh, DB, "t")]
    reads = {sid: sorted_rows(java_oracle.read_table(wh, DB, "t", sid).rows) for sid in retained}
    tag_rows = sorted_rows(java_oracle.read_tag(wh, DB, "t", "t2"))
    branch_rows = sorted_rows(read_branch(java_oracle, wh, DB, "t", "b"))
    assert [20, "branch", "a"] in branch_rows and [20, "branch", "a"] not in tag_rows

    left = damage(catalog, str(wh), "db.t")
    other = build_history(catalog, "db.u")
    other_before = files_of(other.path)
    abandoned_write(other, [30], "c")
    other_left = files_of(other.path) - other_before
    age(str(wh))
    fresh_before = files_of(table.path)
    abandoned_write(table, [99], "a")  # written now: newer than the cutoff for both
    fresh = files_of(table.path) - fresh_before

    cutoff = default_older_than_ms()
    java = remove_orphan_files(java_oracle, wh, DB, "t", cutoff, dry_run=True)
    ours = ours_remove(catalog, "db.t", dry_run=True)
    ours_paths = set(ours.deleted_files)
    assert ours_paths == {os.path.join(table.path, f) for f in left}
    beyond = {p for p in ours_paths if only_ours(table.path, p)}
    assert set(java.paths) == ours_paths - beyond
    assert {os.path.relpath(p, table.path).split(os.sep)[0] for p in beyond} == {
        STAGING_DIR,
        "schema",
        "tag",
    }
    assert java.count == len(java.paths)
    assert java.bytes == sum(os.path.getsize(p) for p in java.paths)
    assert not {os.path.join(table.path, f) for f in fresh} & set(java.paths)

    # 'db.*': Java's database-wide count is ours, less our own leftovers
    java_db = remove_database_orphan_files(java_oracle, wh, DB, cutoff, dry_run=True)
    ours_db = ours_remove(catalog, "db.*", dry_run=True)
    assert ours_db.deleted_file_count == len(left) + len(other_left)
    assert java_db[0] == ours_db.deleted_file_count - len(beyond)

    result = ours_remove(catalog, "db.t")
    assert set(result.deleted_files) == ours_paths
    assert {os.path.join(table.path, f) for f in fresh} <= {
        os.path.join(table.path, f) for f in files_of(table.path)
    }
    for sid in retained:
        assert sorted_rows(java_oracle.read_table(wh, DB, "t", sid).rows) == reads[sid]
    assert sorted_rows(java_oracle.read_tag(wh, DB, "t", "t2")) == tag_rows
    assert sorted_rows(read_branch(java_oracle, wh, DB, "t", "b")) == branch_rows
    assert remove_orphan_files(java_oracle, wh, DB, "t", cutoff, dry_run=True).paths == []
