"""``rewrite_file_index`` against Java Paimon 1.4.2.

Java's rewrite runs only in Flink or Spark jobs, but its work per file is paimon-core's
FileIndexProcessor, committed as one CompactIncrement per file; the oracle runs exactly that on
a copy of the table our rewrite runs on. Both give every file the same embedded index bytes,
the same extra files and the same separate ``.index`` bytes, in a COMPACT snapshot, through an
options change that keeps, rebuilds and drops old indexes. Where Java's result would put a file
back in a state its manifests DELETE (Java then refuses the commit, or its scan drops the
file), ours leaves the file as it is. After our rewrite Java reads the same rows, and Java's
FileIndexPredicate on each file skips the files our scans skip.

Every file holds ids 0 and 1000, so min/max stats keep every file for ``id = k``.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from file_index_oracle import decisions
from java_oracle import JavaOracle
from rewrite_file_index_oracle import java_files, java_rewrite

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.catalog import FileSystemCatalog
from paimon_pyspark.procedures import rewrite_file_index
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.store.schema_change import SchemaChange

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("name", pa.string())])


def write_unindexed(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    for i in range(3):
        ids = [0, *range(100 * i + 1, 100 * i + 41), 1000]
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            for dt in ("a", "b"):
                data = {"dt": [dt] * len(ids), "id": ids, "name": [f"{dt}{x}" for x in ids]}
                write.write_arrow(pa.table(data, SCHEMA))
            builder.new_commit().commit(write.prepare_commit())


def ours(table: FileStoreTable) -> dict[str, Any]:
    """Per data file of the latest snapshot, what :func:`java_files` says of it."""
    rb = table.new_read_builder()
    out: dict[str, Any] = {}
    for s in rb.new_scan().plan().splits():
        for f in s.files:
            embedded = None if f.embedded_index is None else f.embedded_index.hex()
            out[f.file_name] = {"embedded": embedded, "extra_files": list(f.extra_files)}
    return out


def index_bytes(warehouse: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in warehouse.rglob("*.index")}


def all_rows(table: FileStoreTable, where: str | None = None) -> list[tuple[Any, ...]]:
    rb = table.new_read_builder()
    if where is not None:
        rb = rb.with_filter(parse_predicate(where, table.fields, table.name))
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in got.to_pylist())


def planned(table: FileStoreTable, where: str) -> set[str]:
    rb = table.new_read_builder().with_filter(parse_predicate(where, table.fields, table.name))
    return {f.file_name for s in rb.new_scan().plan().splits() for f in s.files}


ROUNDS = [
    {"file-index.bloom-filter.columns": "id,name", "file-index.bloom-filter.id.items": "200"},
    {"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.items": "50"},
]
"""Options of each rewrite: two indexed columns; then one of them kept and rebuilt with other
options, the other dropped."""
NO_INDEX = {"file-index.bloom-filter.columns": None, "file-index.bloom-filter.id.items": None}


def alter(catalog: FileSystemCatalog, options: Mapping[str, str | None]) -> None:
    catalog.alter_table(
        "db.t",
        [
            SchemaChange.remove_option(k) if v is None else SchemaChange.set_option(k, v)
            for k, v in options.items()
        ],
    )


@pytest.mark.parametrize("threshold", ["1 mb", "1 b"])
def test_our_rewrite_gives_every_file_what_javas_gives_it(
    java_oracle: JavaOracle, tmp_path: Path, threshold: str
) -> None:
    ours_wh, java_wh = tmp_path / "ours", tmp_path / "java"
    catalog = CatalogFactory.create({"warehouse": str(ours_wh)})
    catalog.create_database("db", ignore_if_exists=True)
    write_unindexed(catalog)
    alter(catalog, {"file-index.in-manifest-threshold": threshold})
    shutil.copytree(ours_wh, java_wh)
    theirs = CatalogFactory.create({"warehouse": str(java_wh)})
    before = all_rows(catalog.get_table("db.t"))
    for options in ROUNDS:
        alter(catalog, options)
        alter(theirs, options)
        rewrite_file_index(catalog, "db.t")
        java = java_rewrite(java_oracle, java_wh, "db", "t")
        assert java.pop("_commit_kind") == "COMPACT"
        table = catalog.get_table("db.t")
        latest = table.snapshot_manager.latest()
        assert latest is not None and latest.commit_kind == "COMPACT"
        assert ours(table) == java, options
        assert index_bytes(ours_wh) == index_bytes(java_wh), options
        # Java reads what we committed as we wrote it
        read_back = java_files(java_oracle, ours_wh, "db", "t")
        read_back.pop("_commit_kind")
        assert read_back == java
        java_rows = sorted(tuple(r) for r in java_oracle.read_table(ours_wh, "db", "t").rows)
        assert java_rows == before == all_rows(table)

    # Without index options Java's processor gives each file a state it had before: embedded,
    # the same one (Java's commit refuses the ADD of an entry it DELETEs); separate, none, as
    # before its first rewrite (committed, and Java's scan then drops every re-added file).
    alter(catalog, NO_INDEX)
    alter(theirs, NO_INDEX)
    if threshold == "1 mb":
        with pytest.raises(Exception, match="which is already in the the map"):
            java_rewrite(java_oracle, java_wh, "db", "t")
    else:
        java = java_rewrite(java_oracle, java_wh, "db", "t")
        assert java == {"_commit_kind": "COMPACT"}
        assert java_oracle.read_table(java_wh, "db", "t").rows == []
    # ours leaves those files as they are, so Java still reads every row
    kept = ours(catalog.get_table("db.t"))
    latest = catalog.get_table("db.t").snapshot_manager.latest()
    assert rewrite_file_index(catalog, "db.t") == (2, 6, None)
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.latest() == latest and ours(table) == kept
    java_rows = sorted(tuple(r) for r in java_oracle.read_table(ours_wh, "db", "t").rows)
    assert java_rows == before


def test_java_skips_the_files_our_rewritten_indexes_skip(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    write_unindexed(catalog)
    changes = [
        SchemaChange.set_option("file-index.bloom-filter.columns", "id,name"),
        SchemaChange.set_option("file-index.in-manifest-threshold", "1 b"),
    ]
    catalog.alter_table("db.t", changes)
    result = rewrite_file_index(catalog, "db.t", where="dt = 'a'")
    assert result[:2] == (1, 3)
    table = catalog.get_table("db.t")
    every = all_rows(table)
    no_index = table.copy({"file-index.read.enabled": "false"})
    cases: list[tuple[str, list[tuple[str, str, list[Any]]]]] = [
        ("id = 215", [("equal", "id", [215])]),
        ("id IN (5, 315)", [("in", "id", [5, 315])]),
        ("name = 'a120'", [("equal", "name", ["a120"])]),
        ("name = 'b120'", [("equal", "name", ["b120"])]),
    ]
    for where, leaves in cases:
        java = decisions(java_oracle, tmp_path, "db", "t", leaves)
        assert len(java) == 6
        kept = {name for name, d in java.items() if d["remain"]}
        # ours: min/max stats, then the index; Java's FileIndexPredicate: the index alone
        assert planned(table, where) == kept & planned(no_index, where), where
        assert len(kept) < 6  # b's files have no index: Java and we keep them
        java_rows = java_oracle.read_table(tmp_path, "db", "t").rows
        assert sorted(tuple(r) for r in java_rows) == every
        assert all_rows(table, where) == [r for r in every if _match(r, where)]


def _match(row: tuple[Any, ...], where: str) -> bool:
    _, ident, name = row
    return bool(
        {
            "id = 215": ident == 215,
            "id IN (5, 315)": ident in (5, 315),
            "name = 'a120'": name == "a120",
            "name = 'b120'": name == "b120",
        }[where]
    )
