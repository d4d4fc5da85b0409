"""The file procedures between Java Paimon 1.4.2 and us: the same history on two tables, Java's
procedure on one and ours on the other, reach the same state (the latest snapshot's kind, its
base and delta manifests by added and deleted entries, tags, branches, consumers, the files
left, the rows), Java reads ours and we read Java's; and ``manifest.full-compaction-threshold-
size`` merges the same manifests at Java's commits and at ours."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from file_procedures_oracle import compact_manifest, describe, purge_files, remove_unexisting_files
from java_oracle import JavaOracle
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark import procedures as ours
from paimon_pyspark.maintenance.branches import create_branch
from paimon_pyspark.store.managers import Consumer

pytestmark = pytest.mark.java

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
FIELDS = [("id", "BIGINT"), ("dt", "STRING")]
NO_MERGE = {"manifest.merge-min-count": "100", "bucket": "-1"}


def _catalog(warehouse: Path) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", True)
    return catalog


def _history(catalog: FileSystemCatalog, name: str) -> FileStoreTable:
    """Three appends over two partitions, then an overwrite of one: DELETE entries."""
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"], options=NO_MERGE)
    )
    table = catalog.get_table(f"db.{name}")
    for i in range(3):
        write_commit(table, pa.table({"id": [i, i + 10], "dt": ["a", "b"]}, schema=SCHEMA))
    builder = table.new_batch_write_builder().overwrite({"dt": "a"})
    with builder.new_write() as w:
        w.write_arrow(pa.table({"id": [99], "dt": ["a"]}, schema=SCHEMA))
        builder.new_commit().commit(w.prepare_commit())
    return catalog.get_table(f"db.{name}")


def _rows(table: FileStoreTable) -> list[dict[str, object]]:
    return sort_rows(read_all(table))


def _java_rows(oracle: JavaOracle, warehouse: Path, name: str) -> list[dict[str, object]]:
    read = oracle.read_table(warehouse, "db", name)
    return sort_rows(pa.table({f: [r[i] for r in read.rows] for i, f in enumerate(read.fields)}))


def _state(oracle: JavaOracle, warehouse: Path, name: str) -> dict[str, Any]:
    state = describe(oracle, warehouse, "db", name)
    state.pop("id", None)
    return state


def test_compact_manifest_as_java(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    _history(catalog, "j")
    _history(catalog, "p")
    assert _state(java_oracle, tmp_path, "p") == _state(java_oracle, tmp_path, "j")
    assert any(m["deleted"] for m in _state(java_oracle, tmp_path, "p")["delta"])
    compact_manifest(java_oracle, tmp_path, "db", "j")
    assert ours.compact_manifest(catalog, "db.p") is not None
    java, mine = _state(java_oracle, tmp_path, "j"), _state(java_oracle, tmp_path, "p")
    assert mine == java
    assert java["kind"] == "COMPACT" and java["delta"] == []
    assert java["base"] == [{"added": 4, "deleted": 0}]
    # nothing left to merge: neither commits a snapshot
    before = java_oracle.latest_snapshot_id(tmp_path, "db", "p")
    assert ours.compact_manifest(catalog, "db.p") is None
    compact_manifest(java_oracle, tmp_path, "db", "p")
    assert java_oracle.latest_snapshot_id(tmp_path, "db", "p") == before
    java_oracle.write_rows(tmp_path, "db", "p", [[5, "c"]])  # Java commits on our snapshot
    java_oracle.write_rows(tmp_path, "db", "j", [[5, "c"]])
    expected = _rows(catalog.get_table("db.j"))
    assert len(expected) == 5
    assert _java_rows(java_oracle, tmp_path, "p") == expected == _rows(catalog.get_table("db.p"))


def test_full_manifest_compaction_at_commit_as_java(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = _catalog(tmp_path)
    options = {
        **NO_MERGE,
        "manifest.full-compaction-threshold-size": "1 b",
        "bucket": "1",
        "bucket-key": "id",
    }
    java_oracle.create_table(tmp_path, "db", "j", FIELDS, partition_keys=["dt"], options=options)
    catalog.create_table(
        "db.p", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"], options=options)
    )
    table = catalog.get_table("db.p")
    for i in range(3):
        java_oracle.write_rows(tmp_path, "db", "j", [[i, "a"], [i + 10, "b"]])
        write_commit(table, pa.table({"id": [i, i + 10], "dt": ["a", "b"]}, schema=SCHEMA))
    java, mine = _state(java_oracle, tmp_path, "j"), _state(java_oracle, tmp_path, "p")
    assert mine == java
    # commit 3 merged the two small manifests of commits 1 and 2 (the default keeps them)
    assert java["base"] == [{"added": 4, "deleted": 0}]
    # a full compaction of the files deletes 6 and adds 2; the next commit drops the DELETEs
    java_oracle.compact(tmp_path, "db", "j", full=True)
    ours.compact(catalog, "db.p", compact_strategy="full")
    java_oracle.write_rows(tmp_path, "db", "j", [[7, "a"]])
    write_commit(table, pa.table({"id": [7], "dt": ["a"]}, schema=SCHEMA))
    java, mine = _state(java_oracle, tmp_path, "j"), _state(java_oracle, tmp_path, "p")
    assert mine == java
    assert sum(m["deleted"] for m in java["base"]) == 0
    assert sum(m["added"] for m in java["base"]) == 2
    assert _java_rows(java_oracle, tmp_path, "p") == _rows(catalog.get_table("db.j"))


def _drop_a_file(table: FileStoreTable) -> str:
    """Delete the data file of partition ``b`` written by the second commit."""
    store = table.store
    entries = store.manifest_io.live_entries(store.snapshot_manager.snapshot(2))
    first = store.manifest_io.live_entries(store.snapshot_manager.snapshot(1))
    old = {e.file.file_name for e in first}
    (e,) = [e for e in entries if e.file.file_name not in old and b"b" in e.partition]
    path = os.path.join(store.bucket_path_of(e.partition, e.bucket), e.file.file_name)
    os.remove(path)
    return path


def test_remove_unexisting_files_as_java(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    gone = {name: _drop_a_file(_history(catalog, name)) for name in ("j", "p")}
    assert remove_unexisting_files(java_oracle, tmp_path, "db", "j", True) == [gone["j"]]
    assert ours.remove_unexisting_files(catalog, "db.p", dry_run=True) == [gone["p"]]
    assert _state(java_oracle, tmp_path, "j") == _state(java_oracle, tmp_path, "p")
    remove_unexisting_files(java_oracle, tmp_path, "db", "j", False)
    assert ours.remove_unexisting_files(catalog, "db.p") == [gone["p"]]
    java, mine = _state(java_oracle, tmp_path, "j"), _state(java_oracle, tmp_path, "p")
    assert mine == java and java["kind"] == "OVERWRITE"
    expected = _java_rows(java_oracle, tmp_path, "j")
    assert len(expected) == 3  # dt=a: 99; dt=b: 10, 12 (the file of 11 is gone)
    assert _rows(catalog.get_table("db.j")) == expected == _java_rows(java_oracle, tmp_path, "p")
    assert ours.remove_unexisting_files(catalog, "db.j") == []


def _files(root: Path) -> list[str]:
    """The table's files, each name with its uuid and counter cut off."""
    out = []
    for path in root.rglob("*"):
        if path.is_file() and not path.name.startswith("."):
            rel = path.relative_to(root).as_posix()
            out.append(rel.split("-", 1)[0] if rel.startswith("manifest/") else rel)
    return sorted(out)


def test_purge_files_as_java(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    for name in ("j", "p"):
        table = _history(catalog, name)
        table.create_tag("t1", 2)
        table.store.consumer_manager.reset_consumer("c1", Consumer(3))
        create_branch(table.store, "b1", "t1")
    purge_files(java_oracle, tmp_path, "db", "j")
    assert ours.purge_files(catalog, "db.p") == "Success"
    java, mine = _state(java_oracle, tmp_path, "j"), _state(java_oracle, tmp_path, "p")
    assert mine == java
    assert java["kind"] == "OVERWRITE" and not java["tags"] + java["branches"] + java["consumers"]
    java_files = _files(tmp_path / "db.db" / "j")
    assert _files(tmp_path / "db.db" / "p") == java_files
    assert not [f for f in java_files if f.endswith(".parquet")]
    assert _java_rows(java_oracle, tmp_path, "p") == [] == _rows(catalog.get_table("db.j"))


def test_a_zero_full_compaction_threshold_fails_in_java_as_we_refuse_it(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """Java creates the table but fails its first commit (ManifestFileMerger's check); ours
    refuses the value at create (tests/integration/test_file_procedures.py)."""
    options = {"manifest.full-compaction-threshold-size": "0 b"}
    java_oracle.create_table(tmp_path, "db", "z", FIELDS, options=options)
    with pytest.raises(Exception, match="cannot be zero"):
        java_oracle.write_rows(tmp_path, "db", "z", [[1, "a"]])
