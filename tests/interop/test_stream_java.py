"""Java Paimon 1.4.2 and our streaming write and read agree.

A table written by our StreamTableWrite/StreamTableCommit, one commit per checkpoint
identifier, is read by Java row for row; Java parses every snapshot file to the commit user,
identifier and kind we committed; Java's own stream commit (``filterAndCommitMultiple``) of the
same commit user skips exactly the identifiers we committed, and the empty snapshot it then
writes counts as committed for ours. Java's stream scan (``newStreamScan``), started where ours
starts, plans the same snapshots with the same data files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
USER = "stream-job"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _table(warehouse: Path, primary_key: bool) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    options = {"bucket": "2", "num-sorted-run.compaction-trigger": "3"}
    if not primary_key:
        options["bucket-key"] = "id"
    keys = ["id"] if primary_key else None
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys, options=options)
    catalog.create_table(f"{DB}.t", schema)
    return catalog.get_table(f"{DB}.t")


def _rows(k: int) -> pa.Table:
    ids = [k * 10 + j for j in range(4)] + [j for j in range(3)]
    return pa.table({"id": ids, "v": [f"{k}-{i}" for i in ids]}, SCHEMA)


def _java_table(oracle: JavaOracle, warehouse: Path) -> Any:
    jvm = oracle._gateway.jvm
    options = jvm.org.apache.paimon.options.Options()
    options.set("warehouse", str(warehouse))
    options.set("cache-enabled", "false")
    context = jvm.org.apache.paimon.catalog.CatalogContext.create(options)
    catalog = jvm.org.apache.paimon.catalog.CatalogFactory.createCatalog(context)
    return catalog.getTable(jvm.org.apache.paimon.catalog.Identifier.create(DB, "t"))


def _table_call(oracle: JavaOracle, table: Any, method: str) -> Any:
    """``table.<method>()`` through reflection: py4j does not find the default methods of
    Java's Table interface (newReadBuilder, newStreamWriteBuilder) on the table's class."""
    gateway = oracle._gateway
    jvm = gateway.jvm
    interface = jvm.java.lang.Class.forName("org.apache.paimon.table.Table")
    found = interface.getMethod(method, gateway.new_array(jvm.java.lang.Class, 0))
    return found.invoke(table, gateway.new_array(jvm.java.lang.Object, 0))


def _drain_java(scan: Any) -> list[tuple[int, list[str]]]:
    out: list[tuple[int, list[str]]] = []
    while True:
        splits = list(scan.plan().splits())
        if not splits:
            return out
        names = sorted(str(f.fileName()) for s in splits for f in s.dataFiles())
        out.append((int(splits[0].snapshotId()), names))


def _drain_ours(table: FileStoreTable, scan: Any) -> list[tuple[int, list[str]]]:
    out: list[tuple[int, list[str]]] = []
    while True:
        plan = scan.plan()
        if not plan.splits():
            return out
        names = sorted(f.file_name for s in plan.splits() for f in s.files)
        out.append((plan.snapshot_id, names))


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_java_reads_and_recommits_a_stream_written_table(
    java_oracle: JavaOracle, tmp_path: Path, primary_key: bool
) -> None:
    table = _table(tmp_path, primary_key)
    builder = table.new_stream_write_builder(USER)
    write, commit = builder.new_write(), builder.new_commit()

    def checkpoint(k: int) -> None:
        write.write_arrow(_rows(k))
        commit.commit(write.prepare_commit(k), k)

    for k in range(1, 4):
        checkpoint(k)
    ours_scan = table.new_stream_read_builder().new_scan()
    java_table = _java_table(java_oracle, tmp_path)
    java_scan = _table_call(java_oracle, java_table, "newReadBuilder").newStreamScan()
    assert _drain_ours(table, ours_scan) == _drain_java(java_scan)  # the full latest snapshot
    for k in range(4, 9):
        checkpoint(k)
    write.close()
    follow_ups = _drain_ours(table, ours_scan)
    assert len(follow_ups) == 5
    assert follow_ups == _drain_java(java_scan)

    rb = table.new_read_builder()
    ours = sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == ours

    sm = table.store.snapshot_manager
    jvm = java_oracle._gateway.jvm
    snapshots = [sm.snapshot(i) for i in sm.list_ids()]
    for s in snapshots:
        text = Path(sm.snapshot_path(s.id)).read_text()
        java = jvm.org.apache.paimon.Snapshot.fromJson(text)
        assert (java.commitUser(), java.commitIdentifier(), java.commitKind().name()) == (
            USER,
            s.commit_identifier,
            s.commit_kind,
        )
    appends = [s.commit_identifier for s in snapshots if s.commit_kind == "APPEND"]
    assert appends == list(range(1, 9))
    java_kinds = [(s["id"], s["commitKind"]) for s in java_oracle.snapshots(tmp_path, DB, "t")]
    assert java_kinds == [(s.id, s.commit_kind) for s in snapshots]

    # Java's stream commit of the same user: 1..8 are ours already, 9 is new (and empty,
    # which a Java stream commit still writes as a snapshot)
    java_builder = _table_call(java_oracle, java_table, "newStreamWriteBuilder")
    java_commit = java_builder.withCommitUser(USER).newCommit()
    committables = jvm.java.util.ArrayList()
    for k in range(1, 10):
        committables.add(jvm.org.apache.paimon.manifest.ManifestCommittable(k))
    assert java_commit.filterAndCommitMultiple(committables) == 1
    java_commit.close()
    latest = sm.latest()
    assert latest is not None
    assert (latest.commit_user, latest.commit_identifier, latest.commit_kind) == (USER, 9, "APPEND")
    assert table.new_stream_write_builder(USER).new_commit().filter_committed([9, 10]) == [10]
