"""Branches between Java Paimon 1.4.2 and us (maintenance/branches.py; the Java side runs the
core calls of Java's branch procedures, tests/interop/java/BranchOracle.java): a branch Java
creates holds the same files as ours; each side reads and writes the other's branches;
fast-forward by either side leaves the same snapshots, schemas and tags in main, which the
other side reads equal; rename and delete by either side are seen by the other."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import branch_oracle as jbr
import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog

pytestmark = pytest.mark.java

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _write(table: FileStoreTable, ids: list[int]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"id": ids, "v": [f"v{i}" for i in ids]}, SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def _ours(catalog: FileSystemCatalog, name: str) -> list[list[object]]:
    t = catalog.get_table(f"db.{name}")
    rb = t.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def _java(oracle: JavaOracle, wh: str, name: str) -> list[list[object]]:
    return sorted_rows(oracle.read_table(wh, "db", name).rows)


def _files(root: str, hints: bool = False) -> dict[str, bytes]:
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n in ("LATEST", "EARLIEST") and not hints:
                continue
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


def _metadata(table_dir: str) -> dict[str, bytes]:
    return {
        k: v
        for k, v in _files(table_dir).items()
        if k.split(os.sep)[0] in ("snapshot", "schema", "tag")
    }


def _setup(tmp: Path) -> tuple[str, FileSystemCatalog]:
    wh = str(tmp / "wh")
    catalog = CatalogFactory.create({"warehouse": wh})
    catalog.create_database("db")
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options={"bucket": "-1"}))
    t = catalog.get_table("db.t")
    _write(t, [1])
    t.create_tag("v1")
    _write(t, [2])
    return wh, catalog


def test_java_and_we_create_write_and_read_each_others_branches(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    wh, catalog = _setup(tmp_path)
    table_dir = catalog.get_table("db.t").path
    jbr.create_branch(java_oracle, wh, "db", "t", "jb", "v1")
    jbr.create_branch(java_oracle, wh, "db", "t", "je")
    catalog.create_branch("db.t", "pb", "v1")
    catalog.create_branch("db.t", "pe")
    branch = os.path.join(table_dir, "branch")
    assert _files(os.path.join(branch, "branch-pb")) == _files(os.path.join(branch, "branch-jb"))
    assert _files(os.path.join(branch, "branch-pe")) == _files(os.path.join(branch, "branch-je"))
    assert jbr.branches(java_oracle, wh, "db", "t") == catalog.list_branches("db.t")

    java_oracle.write_rows(wh, "db", "t$branch_jb", [[10, "v10"]])
    _write(catalog.get_table("db.t$branch_pb"), [10])
    java_oracle.write_rows(wh, "db", "t$branch_pe", [[20, "v20"]])
    _write(catalog.get_table("db.t$branch_je"), [20])
    for name in ("t$branch_jb", "t$branch_pb", "t$branch_je", "t$branch_pe", "t"):
        assert _ours(catalog, name) == _java(java_oracle, wh, name)
    assert _java(java_oracle, wh, "t$branch_pb") == [[1, "v1"], [10, "v10"]]
    assert jbr.tags(java_oracle, wh, "db", "t$branch_pb") == ["v1"]

    jbr.rename_branch(java_oracle, wh, "db", "t", "je", "je2")
    catalog.rename_branch("db.t", "pe", "pe2")
    assert jbr.branches(java_oracle, wh, "db", "t") == ["jb", "je2", "pb", "pe2"]
    assert catalog.list_branches("db.t") == ["jb", "je2", "pb", "pe2"]
    assert _ours(catalog, "t$branch_je2") == _java(java_oracle, wh, "t$branch_pe2")
    jbr.delete_branches(java_oracle, wh, "db", "t", "je2,pb")
    catalog.drop_branch("db.t", "pe2")
    assert catalog.list_branches("db.t") == ["jb"]
    assert jbr.branches(java_oracle, wh, "db", "t") == ["jb"]


def test_fast_forward_by_java_and_by_us_leaves_the_same_main(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    wh, catalog = _setup(tmp_path / "a")
    catalog.create_branch("db.t", "b", "v1")
    b = catalog.get_table("db.t$branch_b")
    _write(b, [10])
    b.create_tag("bt")
    _write(b, [11])
    twin = str(tmp_path / "b" / "wh")
    shutil.copytree(wh, twin)
    jbr.fast_forward(java_oracle, wh, "db", "t", "b")
    CatalogFactory.create({"warehouse": twin}).fast_forward("db.t", "b")
    java_dir = os.path.join(wh, "db.db", "t")
    our_dir = os.path.join(twin, "db.db", "t")
    assert _metadata(our_dir) == _metadata(java_dir)
    hints = [Path(d, "snapshot", "LATEST").read_text().strip() for d in (our_dir, java_dir)]
    assert hints == ["3", "3"]
    expected = [[1, "v1"], [10, "v10"], [11, "v11"]]
    assert _ours(catalog, "t") == _java(java_oracle, twin, "t") == expected
    assert jbr.tags(java_oracle, twin, "db", "t") == ["bt", "v1"]
    # Java commits on the main we fast-forwarded, and we read it
    java_oracle.write_rows(twin, "db", "t", [[12, "v12"]])
    assert _ours(CatalogFactory.create({"warehouse": twin}), "t") == [*expected, [12, "v12"]]
