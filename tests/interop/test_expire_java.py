"""Snapshot expiration against Java Paimon 1.4.2.

Java reads our table after our expiry, at the latest snapshot and at each retained one, and
reads a tag Java created after we expired past it; and Java's own ExpireSnapshotsImpl, run on
a twin of the same table, leaves exactly the files ours leaves.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.procedures import compact, expire_snapshots

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
# no expiry after our commits: the test decides when to expire
NO_AUTO = {"write-only": "true"}


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


def build(catalog: FileSystemCatalog, name: str, pk: bool) -> FileStoreTable:
    """A table with appends, an overwrite and (PK) compactions: files die along the way."""
    options = {**NO_AUTO, "bucket": "2"} if pk else {**NO_AUTO}
    catalog.create_table(
        f"{DB}.{name}",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["pt"], primary_keys=["k", "pt"] if pk else [], options=options
        ),
    )
    table = catalog.get_table(f"{DB}.{name}")
    commit(table, rows(range(0, 5), "a", 1))
    commit(table, rows(range(3, 8), "b", 1))
    commit(table, rows(range(0, 4), "c", 2))
    if pk:
        compact(catalog, f"{DB}.{name}", options={"write-only": "false"})
    commit(table, rows(range(10, 12), "d", 1), overwrite=True)
    commit(table, rows(range(6, 9), "e", 2))
    if pk:
        compact(catalog, f"{DB}.{name}", options={"write-only": "false"})
    commit(table, rows(range(20, 22), "f", 2))
    return table


def table_files(path: Path) -> set[str]:
    out = set()
    for root, _, names in os.walk(path):
        for n in names:
            if not n.startswith(".") and n not in ("EARLIEST", "LATEST"):
                out.add(os.path.relpath(os.path.join(root, n), path))
    return out


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_java_reads_every_retained_snapshot_after_our_expiry(
    java_oracle: JavaOracle, tmp_path: Path, pk: bool
) -> None:
    catalog = catalog_at(tmp_path)
    table = build(catalog, "t", pk)
    latest = table.snapshot_manager.latest_id()
    assert latest is not None
    before = {
        sid: sorted_rows(java_oracle.read_table(tmp_path, DB, "t", sid).rows)
        for sid in range(1, latest + 1)
    }
    assert expire_snapshots(catalog, f"{DB}.t", retain_max=3, retain_min=1) == latest - 3
    assert [s["id"] for s in java_oracle.snapshots(tmp_path, DB, "t")] == list(
        range(latest - 2, latest + 1)
    )
    for sid in range(latest - 2, latest + 1):
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t", sid).rows) == before[sid]
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == before[latest]


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_java_expiry_leaves_the_same_files_as_ours(
    java_oracle: JavaOracle, tmp_path: Path, pk: bool
) -> None:
    ours = tmp_path / "ours"
    build(catalog_at(ours), "t", pk)
    java = tmp_path / "java"
    shutil.copytree(ours, java)
    assert table_files(ours / "db.db" / "t") == table_files(java / "db.db" / "t")
    n_ours = expire_snapshots(catalog_at(ours), f"{DB}.t", retain_max=2, retain_min=1)
    n_java = java_oracle.expire_snapshots(java, DB, "t", retain_max=2, retain_min=1)
    assert n_ours == n_java > 0
    assert table_files(ours / "db.db" / "t") == table_files(java / "db.db" / "t")
    assert (ours / "db.db/t/snapshot/EARLIEST").read_text() == (
        java / "db.db/t/snapshot/EARLIEST"
    ).read_text()


def test_java_tag_survives_our_expiry(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = catalog_at(tmp_path)
    table = build(catalog, "t", pk=True)
    java_oracle.create_tag(tmp_path, DB, "t", "v2", 2)
    tag_rows = sorted_rows(java_oracle.read_tag(tmp_path, DB, "t", "v2"))
    assert tag_rows == sorted_rows(java_oracle.read_table(tmp_path, DB, "t", 2).rows)
    latest = table.snapshot_manager.latest_id()
    assert latest is not None
    assert expire_snapshots(catalog, f"{DB}.t", retain_max=1, retain_min=1) == latest - 1
    assert sorted_rows(java_oracle.read_tag(tmp_path, DB, "t", "v2")) == tag_rows
    expected = sorted_rows(canonical_rows(_read_latest(table)))
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == expected


def _read_latest(table: FileStoreTable) -> pa.Table:
    rb = table.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())
