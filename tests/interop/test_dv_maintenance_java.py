"""Expiry, orphan cleaning and tags keep exactly the deletion-vector files a kept snapshot needs.

On Java's deletion-vector tables (``dv_tables``: a primary-key table after upserts and deletes,
an append table after DELETE), a tag is taken on an early snapshot, then our expiry keeps only
the latest snapshot and our orphan cleaning runs over every file older than now, with one
planted index file no snapshot lists: it goes, and only it. Java and we still read the latest
rows and the tag's rows, every index file the latest snapshot lists is on disk, and Java's own
orphan cleaning finds nothing left to delete.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from dv_tables import build_append_unaware, build_pk_fixed
from java_oracle import JavaOracle, canonical_rows, remove_orphan_files, sorted_rows

from paimon_pyspark import CatalogFactory
from paimon_pyspark.procedures import expire_snapshots
from paimon_pyspark.procedures import remove_orphan_files as our_remove_orphan_files

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"


def index_files(catalog: Any, ident: str) -> list[dict[str, Any]]:
    return catalog.get_system_table(f"{ident}$table_indexes").to_arrow().to_pylist()


@pytest.mark.parametrize("builder", [build_pk_fixed, build_append_unaware])
def test_expiry_and_orphan_cleaning_keep_the_vectors_in_use(
    java_oracle: JavaOracle, tmp_path: Path, builder: Any
) -> None:
    expected = builder(java_oracle, tmp_path, DB, "t", partitioned=True)
    ident = f"{DB}.t"
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    table = catalog.get_table(ident)
    first = table.snapshot_manager.try_get_earliest_snapshot()
    assert first is not None
    table.create_tag("early", first.id)
    tagged = sorted_rows(java_oracle.read_tag(tmp_path, DB, "t", "early"))
    assert tagged != expected  # the tag keeps older rows, and the vectors of that snapshot

    assert expire_snapshots(catalog, ident, retain_max=1, retain_min=1) > 0
    stray = tmp_path / "db.db" / "t" / "index" / "index-00000000-0000-0000-0000-000000000000-9"
    stray.write_bytes(b"\x01")  # a vector file no snapshot or tag lists: an orphan
    time.sleep(1.2)  # every file of the table is older than the second below
    now = time.strftime("%Y-%m-%d %H:%M:%S")
    ours_clean = our_remove_orphan_files(catalog, ident, older_than=now)
    assert ours_clean.deleted_file_count == 1
    assert not stray.exists()
    for entry in index_files(catalog, ident):
        assert (tmp_path / "db.db" / "t" / "index" / entry["file_name"]).is_file()

    table = catalog.get_table(ident)
    rb = table.new_read_builder()
    ours = sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))
    assert ours == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == expected
    at_tag = table.copy({"scan.tag-name": "early"}).new_read_builder()
    assert (
        sorted_rows(canonical_rows(at_tag.new_read().to_arrow(at_tag.new_scan().plan().splits())))
        == tagged
    )
    assert sorted_rows(java_oracle.read_tag(tmp_path, DB, "t", "early")) == tagged
    later = int(time.time() * 1000) + 3_600_000
    java = remove_orphan_files(java_oracle, tmp_path, DB, "t", later, dry_run=True)
    assert java.count == 0, java.paths
