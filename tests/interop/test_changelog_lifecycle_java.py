"""Long-lived changelogs both ways with Java 1.4.2 (java/ChangelogLifecycleOracle.java).

A table keeps its changelog longer than its snapshots (``changelog.num-retained.max`` above
``snapshot.num-retained.max``). Java writes it and its commits' expiry writes
``changelog/changelog-<id>``: we find the same changelogs, our stream read from the start
returns Java's stream read's changes, and after our ``expire_changelogs`` Java sees what we
kept, still reads it, and finds no orphan. Then the other way: we write, Java finds our
changelogs, its stream read returns ours, and its own changelog expiry (ExpireChangelogImpl,
then expireAll) works on what we wrote, leaving nothing behind that either side calls orphan.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean
from paimon_pyspark.procedures import expire_changelogs
from paimon_pyspark.store.changelog_manager import ChangelogManager, earliest_readable_id

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int64())])
FIELDS = {"k": "BIGINT NOT NULL", "v": "BIGINT"}
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
PRODUCERS = ["none", "input", "lookup", "full-compaction"]


def options(producer: str) -> dict[str, str]:
    return {
        "bucket": "1",
        "changelog-producer": producer,
        "snapshot.num-retained.min": "1",
        "snapshot.num-retained.max": "2",
        "changelog.num-retained.max": "5",
    }


def commits() -> list[list[tuple[str, int, int]]]:
    """Eight commits of inserts, updates and deletes (row kind, k, v)."""
    out = []
    for i in range(8):
        batch = [("+I", 10 + i, i), ("+U", i % 3, 100 + i)]
        if i % 3 == 2:
            batch.append(("-D", 10 + i - 2, i - 2))
        out.append(batch)
    return out


def java_call(oracle: JavaOracle) -> Any:
    return oracle._gateway.jvm.paimonoracle.ChangelogLifecycleOracle


def java_state(oracle: JavaOracle, wh: str) -> dict[str, Any]:
    return dict(json.loads(java_call(oracle).state(wh, "db", "t")))


def java_stream(oracle: JavaOracle, wh: str) -> list[tuple[int, list[list[Any]]]]:
    start = json.dumps({"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    out = json.loads(java_call(oracle).streamChanges(wh, "db", "t", start))
    assert out["error"] is None, out["error"]
    return [(p["snapshot"], sorted(p["rows"])) for p in out["plans"]]


def our_stream(table: FileStoreTable) -> list[tuple[int, list[list[Any]]]]:
    """Our stream read from the earliest readable id (restored there: Java's from-snapshot
    start at the earliest long-lived changelog is read/stream_scan.py's to make)."""
    builder = table.new_stream_read_builder().with_include_row_kind()
    scan, read = builder.new_scan(), builder.new_read()
    scan.restore(earliest_readable_id(table.store))
    latest = table.snapshot_manager.latest_id()
    assert latest is not None
    plans: list[tuple[int, list[list[Any]]]] = []
    for _ in range(64):
        plan = scan.plan()
        if not plan.splits():
            position = scan.checkpoint()
            if position is None or position > latest:
                break
            continue
        rows = read.to_arrow(plan.splits()).to_pylist()
        assert plan.snapshot_id is not None
        plans.append((plan.snapshot_id, sorted([r["_row_kind"], r["k"], r["v"]] for r in rows)))
    return plans


def our_state(table: FileStoreTable) -> dict[str, Any]:
    cm = ChangelogManager(table.file_io, table.path)
    return {
        "snapshots": table.snapshot_manager.list_ids(),
        "changelogs": cm.list_ids(),
        "earliestChangelog": cm.earliest_long_lived_changelog_id(),
        "latestChangelog": cm.latest_long_lived_changelog_id(),
        "decoupled": table.options.changelog_lifecycle_decoupled,
    }


def no_orphans(oracle: JavaOracle, wh: str, table: FileStoreTable) -> None:
    """Neither Java's remove_orphan_files nor ours finds a file nothing uses."""
    future = int(time.time() * 1000) + 86_400_000
    assert json.loads(java_call(oracle).orphans(wh, "db", "t", future)) == []
    ours = OrphanFilesClean(table.store, future, dry_run=True).run()
    assert ours.deleted_files == ()


@pytest.mark.parametrize("producer", PRODUCERS)
def test_we_read_and_expire_what_java_keeps(
    java_oracle: JavaOracle, warehouse: str, catalog: FileSystemCatalog, producer: str
) -> None:
    java_oracle.create_table(
        warehouse, "db", "t", FIELDS, primary_keys=["k"], options=options(producer)
    )
    for batch in commits():
        rows = [[k, v] for _, k, v in batch]
        java_oracle.write_rows_kinds(warehouse, "db", "t", rows, [kind for kind, *_ in batch])
    table = catalog.get_table("db.t")
    state = java_state(java_oracle, warehouse)
    assert len(state["changelogs"]) >= 2 and state["decoupled"]
    assert our_state(table) == state
    assert earliest_readable_id(table.store) == state["earliestChangelog"]
    java = java_stream(java_oracle, warehouse)
    assert state["earliestChangelog"] <= java[0][0] < state["snapshots"][0]
    assert our_stream(table) == java

    kept = state["changelogs"][-2:]
    expire_changelogs(catalog, "db.t", retain_max=state["snapshots"][-1] - kept[0] + 1)
    after = java_state(java_oracle, warehouse)
    assert after["changelogs"] == kept == our_state(table)["changelogs"]
    assert after["earliestChangelog"] == kept[0]
    java_after = java_stream(java_oracle, warehouse)
    assert java_after == [p for p in java if p[0] >= kept[0]] == our_stream(table)
    no_orphans(java_oracle, warehouse, table)


@pytest.mark.parametrize("producer", PRODUCERS)
def test_java_reads_and_expires_what_we_keep(
    java_oracle: JavaOracle, warehouse: str, catalog: FileSystemCatalog, producer: str
) -> None:
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options=options(producer))
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    for batch in commits():
        data = pa.table({"k": [k for _, k, _ in batch], "v": [v for *_, v in batch]}, SCHEMA)
        builder = table.new_batch_write_builder()
        with builder.new_write() as w:
            w.write_arrow(data, row_kinds=[KINDS[kind] for kind, *_ in batch])
            builder.new_commit().commit(w.prepare_commit())
    ours = our_state(table)
    assert len(ours["changelogs"]) >= 2
    assert java_state(java_oracle, warehouse) == ours
    stream = our_stream(table)
    assert ours["earliestChangelog"] <= stream[0][0] < ours["snapshots"][0]
    assert java_stream(java_oracle, warehouse) == stream
    no_orphans(java_oracle, warehouse, table)

    keep = {"changelog.num-retained.max": str(ours["snapshots"][-1] - ours["changelogs"][-1] + 2)}
    snapshots, expired = json.loads(
        java_call(java_oracle).expire(warehouse, "db", "t", json.dumps(keep))
    )
    assert snapshots == 0 and expired == len(ours["changelogs"]) - 2
    after = our_state(table)
    assert (
        after["changelogs"]
        == ours["changelogs"][-2:]
        == java_state(java_oracle, warehouse)["changelogs"]
    )
    assert our_stream(table) == [p for p in stream if p[0] >= after["changelogs"][0]]
    assert java_stream(java_oracle, warehouse) == our_stream(table)
    no_orphans(java_oracle, warehouse, table)

    java_call(java_oracle).expireAllChangelogs(warehouse, "db", "t")
    assert our_state(table)["changelogs"] == [] and not os.listdir(
        ChangelogManager(table.file_io, table.path).changelog_directory()
    )
    assert earliest_readable_id(table.store) == ours["snapshots"][0]
    no_orphans(java_oracle, warehouse, table)


@pytest.mark.parametrize(
    ("retention", "refused"),
    [
        ({"changelog.num-retained.max": "4"}, True),  # its min falls back to the snapshots' 10
        ({"changelog.num-retained.min": "0"}, True),
        ({"changelog.num-retained.min": "3", "changelog.num-retained.max": "30"}, False),
    ],
)
def test_changelog_retention_is_checked_as_java_checks_it(
    java_oracle: JavaOracle,
    warehouse: str,
    catalog: FileSystemCatalog,
    retention: dict[str, str],
    refused: bool,
) -> None:
    try:
        java_oracle.create_table(
            warehouse, "db", "j", FIELDS, primary_keys=["k"], options=retention
        )
        java_error = None
    except Exception as e:  # py4j carries Java's IllegalArgumentException
        java_error = str(e)
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options=retention)
    try:
        catalog.create_table("db.p", schema)
        ours = None
    except OptionError as e:
        ours = str(e)
    assert (java_error is not None) == refused == (ours is not None), (java_error, ours)
    if ours is not None:
        assert "changelog.num-retained.min" in ours
        assert java_error is not None and "changelog.num-retained.min" in java_error
