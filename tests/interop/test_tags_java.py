"""Tags and rollback against Java Paimon 1.4.2 (maintenance/tags.py).

Java's TagManager lists the tags we write and reads their rows, also after the tagged snapshot
expired; we list and read the tags Java writes (with and without a retention); after our
rollback Java reads the table at the target's rows, and keeps the same snapshots and tags as
Java's own rollback of a twin table.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import (
    JavaOracle,
    canonical_rows,
    create_tag_retained,
    delete_tags,
    list_tags,
    rollback_to,
    sorted_rows,
)

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.procedures import expire_snapshots

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), nullable=False), ("v", pa.string()), pa.field("pt", pa.int32())]
)


def catalog_at(warehouse: Path) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    return catalog


def rows(keys: range, v: str, pt: int) -> pa.Table:
    return pa.table({"k": list(keys), "v": [v] * len(keys), "pt": [pt] * len(keys)}, schema=SCHEMA)


def commit(table: FileStoreTable, data: pa.Table, overwrite: bool = False) -> None:
    builder = table.new_batch_write_builder()
    if overwrite:
        builder = builder.overwrite()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def build(catalog: FileSystemCatalog, pk: bool) -> FileStoreTable:
    """Five snapshots with an overwrite in the middle: files die along the way."""
    options = {"write-only": "true", "bucket": "2"} if pk else {"write-only": "true"}
    catalog.create_table(
        f"{DB}.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["pt"],
            primary_keys=["k", "pt"] if pk else [],
            options=options,
        ),
    )
    table = catalog.get_table(f"{DB}.t")
    commit(table, rows(range(0, 20), "a", 1))
    commit(table, rows(range(10, 30), "b", 2))
    commit(table, rows(range(0, 5), "c", 1), overwrite=True)
    commit(table, rows(range(40, 50), "d", 1))
    commit(table, rows(range(5, 15), "e", 2))
    return table


def ours(table: FileStoreTable, sid: int | None = None) -> list[list[object]]:
    if sid is not None:
        table = table.copy({"scan.snapshot-id": str(sid)})
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def expire_to_latest(catalog: FileSystemCatalog) -> None:
    expire_snapshots(
        catalog, f"{DB}.t", retain_max=1, retain_min=1, older_than="2999-01-01 00:00:00"
    )


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_java_lists_and_reads_the_tags_we_write(
    java_oracle: JavaOracle, tmp_path: Path, pk: bool
) -> None:
    catalog = catalog_at(tmp_path)
    table = build(catalog, pk)
    expected = {sid: ours(table, sid) for sid in range(1, 6)}
    table.create_tag("v2", 2)
    table.create_tag("retained", 3, time_retained="1 d")
    table.create_tag("latest")
    java = list_tags(java_oracle, tmp_path, DB, "t")
    assert java.names == table.list_tags() == ["latest", "retained", "v2"]
    assert java.ids == {"v2": 2, "retained": 3, "latest": 5}
    for name, sid in java.ids.items():
        assert sorted_rows(java_oracle.read_tag(tmp_path, DB, "t", name)) == expected[sid]
    # the tags keep their files through our expiry; Java still reads them
    expire_to_latest(catalog)
    assert table.snapshot_manager.list_ids() == [5]
    for name, sid in java.ids.items():
        assert sorted_rows(java_oracle.read_tag(tmp_path, DB, "t", name)) == expected[sid]
    # deleting a tag of an expired snapshot leaves the others readable by Java
    assert table.delete_tag("v2")
    assert list_tags(java_oracle, tmp_path, DB, "t").names == ["latest", "retained"]
    assert sorted_rows(java_oracle.read_tag(tmp_path, DB, "t", "retained")) == expected[3]
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == expected[5]


def test_we_list_and_read_the_tags_java_writes(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = catalog_at(tmp_path)
    table = build(catalog, pk=True)
    java_oracle.create_tag(tmp_path, DB, "t", "j2", 2)
    create_tag_retained(java_oracle, tmp_path, DB, "t", "j4", 4, "2 h")
    assert table.list_tags() == list_tags(java_oracle, tmp_path, DB, "t").names == ["j2", "j4"]
    tags = table.tag_manager.tags()
    # Java's Tag has no uuid field, so its tag files of our snapshots drop it
    sm = table.snapshot_manager
    assert {n: (s.id, s.base_manifest_list, s.delta_manifest_list) for n, s in tags.items()} == {
        n: (sid, sm.snapshot(sid).base_manifest_list, sm.snapshot(sid).delta_manifest_list)
        for n, sid in (("j2", 2), ("j4", 4))
    }
    java_rows = {n: sorted_rows(java_oracle.read_tag(tmp_path, DB, "t", n)) for n in tags}
    assert ours(table, 2) == java_rows["j2"]
    assert ours(table, 4) == java_rows["j4"]
    # Java's tag keeps its snapshot's files through our expiry, and we roll back to it
    expire_to_latest(catalog)
    table.rollback_to("j2")
    assert table.snapshot_manager.list_ids() == [2]
    assert ours(table) == java_rows["j2"]
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == java_rows["j2"]
    assert list_tags(java_oracle, tmp_path, DB, "t").names == ["j2"]


@pytest.mark.parametrize("version", ["3", "t2"])
def test_java_reads_the_table_after_our_rollback_as_after_its_own(
    java_oracle: JavaOracle, tmp_path: Path, version: str
) -> None:
    """A twin rolled back by Java keeps the same snapshots and tags and reads the same rows;
    ours also deleted the files the rolled back snapshots left (Java leaves them)."""
    catalog = catalog_at(tmp_path / "ours")
    table = build(catalog, pk=True)
    expected = {sid: ours(table, sid) for sid in range(1, 6)}
    table.create_tag("t2", 2)
    table.create_tag("t4", 4)
    if version == "t2":
        expire_to_latest(catalog)
    twin = tmp_path / "java"
    shutil.copytree(tmp_path / "ours", twin)

    table.rollback_to(int(version) if version.isdigit() else version)
    rollback_to(java_oracle, twin, DB, "t", version)

    goal = 3 if version == "3" else 2
    ours_wh, twin_t = tmp_path / "ours", twin / f"{DB}.db" / "t"
    assert java_oracle.latest_snapshot_id(ours_wh, DB, "t") == goal
    assert sorted_rows(java_oracle.read_table(ours_wh, DB, "t").rows) == expected[goal]
    assert sorted_rows(java_oracle.read_table(twin, DB, "t").rows) == expected[goal]
    assert list_tags(java_oracle, ours_wh, DB, "t") == list_tags(java_oracle, twin, DB, "t")
    snapshots = sorted(os.listdir(os.path.join(table.path, "snapshot")))
    assert snapshots == sorted(os.listdir(twin_t / "snapshot"))
    for name in ("LATEST", "EARLIEST"):
        ours_hint = Path(table.path, "snapshot", name)
        if ours_hint.exists() and (twin_t / "snapshot" / name).exists():
            assert ours_hint.read_text().strip() == (twin_t / "snapshot" / name).read_text().strip()
    # Java commits on top of our rollback
    assert java_oracle.write_rows(ours_wh, DB, "t", rows(range(90, 92), "z", 1)) == goal + 1
    assert sorted_rows(java_oracle.read_table(ours_wh, DB, "t").rows) == ours(
        catalog.get_table(f"{DB}.t")
    )


def test_we_read_after_java_deletes_tags(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = catalog_at(tmp_path)
    table = build(catalog, pk=False)
    expected = {sid: ours(table, sid) for sid in range(1, 6)}
    table.create_tag("a", 1)
    table.create_tag("b", 3)
    expire_to_latest(catalog)
    delete_tags(java_oracle, tmp_path, DB, "t", "a, b")
    assert table.list_tags() == []
    assert ours(table) == expected[5]
    assert table.snapshot_manager.list_ids() == [5]
