"""Compaction while writing, against Java Paimon 1.4.2's writers.

The same one-row commits go into a table Java writes (BatchWriteBuilder, whose prepareCommit
compacts and waits) and into one we write. After every commit both tables must hold the same
live files by level and row count, and in the end the same snapshot kinds: the same commits are
followed by a COMPACT snapshot. Java reads our table and we read Java's; a plain-Python model
(last value of a key wins; an append table keeps every row) says what the rows must be.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("dt", pa.string())]
)
JAVA_FIELDS = [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING")]
Row = list[Any]

LAYOUTS: dict[str, dict[str, Any]] = {
    "fixed-pk": {"primary_keys": ["id"], "options": {"bucket": "1"}},
    "dynamic-pk": {"primary_keys": ["id"], "options": {}},
    "bucketed-append": {"primary_keys": [], "options": {"bucket": "1", "bucket-key": "id"}},
    "cross-partition-pk": {"primary_keys": ["id"], "partition_keys": ["dt"], "options": {}},
    "pk-trigger-3": {
        "primary_keys": ["id"],
        "options": {"bucket": "1", "num-sorted-run.compaction-trigger": "3"},
    },
}
COMMITS = 12
SIZES = (1, 5, 50, 400, 2000)


def batch(i: int) -> list[Row]:
    """Commit ``i``: a new key, or every third commit an update of key 0; ``dt`` alternates,
    so in a cross-partition table key 0 moves between partitions (a -D left behind)."""
    key = 0 if i % 3 == 2 else i
    return [[key, f"value-{i:03d}", "ab"[i % 2]]]


def model(layout: str, n: int) -> list[Row]:
    rows = [r for i in range(n) for r in batch(i)]
    if not LAYOUTS[layout]["primary_keys"]:
        return sorted_rows(rows)
    last = {r[0]: r for r in rows}
    return sorted_rows(last.values())


def open_table(warehouse: Path) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": str(warehouse)}).get_table(f"{DB}.t")


def state(warehouse: Path) -> list[tuple[bytes, int, int, int, int]]:
    """(partition, bucket, level, row count, min sequence number) of every live file, whoever
    wrote the table."""
    table = open_table(warehouse)
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    entries = table.manifest_io.live_entries(snapshot)
    return sorted(
        (e.partition, e.bucket, e.file.level, e.file.row_count, e.file.min_sequence_number)
        for e in entries
    )


def kinds(warehouse: Path) -> list[str]:
    table = open_table(warehouse)
    latest = table.snapshot_manager.latest_id() or 0
    return [table.snapshot_manager.snapshot(i).commit_kind for i in range(1, latest + 1)]


def read_ours(table: FileStoreTable) -> list[Row]:
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted_rows([r[n] for n in SCHEMA.names] for r in rows)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_same_commits_compact_as_java_does(
    java_oracle: JavaOracle, tmp_path: Path, layout: str
) -> None:
    spec = LAYOUTS[layout]
    java_wh, our_wh = tmp_path / "java", tmp_path / "ours"
    partition_keys = spec.get("partition_keys", [])
    java_oracle.create_table(
        java_wh,
        DB,
        "t",
        JAVA_FIELDS,
        partition_keys=partition_keys,
        primary_keys=spec["primary_keys"],
        options=spec["options"],
    )
    java_write = java_oracle.write_cross_partition if partition_keys else java_oracle.write_rows
    catalog = CatalogFactory.create({"warehouse": str(our_wh)})
    catalog.create_database(DB, ignore_if_exists=True)
    catalog.create_table(
        f"{DB}.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=partition_keys,
            primary_keys=spec["primary_keys"] or None,
            options=spec["options"],
        ),
    )
    table = catalog.get_table(f"{DB}.t")
    for i in range(COMMITS):
        java_write(java_wh, DB, "t", batch(i))
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            rows = [dict(zip(SCHEMA.names, r, strict=True)) for r in batch(i)]
            write.write_arrow(pa.Table.from_pylist(rows, SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
        assert state(our_wh) == state(java_wh), f"after commit {i + 1}"
    java_kinds = [s["commitKind"] for s in java_oracle.snapshots(java_wh, DB, "t")]
    assert kinds(our_wh) == java_kinds
    assert "COMPACT" in java_kinds
    want = model(layout, COMMITS)
    assert read_ours(table) == want
    assert read_ours(open_table(java_wh)) == want
    assert sorted_rows(java_oracle.read_table(our_wh, DB, "t").rows) == want


def test_write_only_makes_java_and_us_keep_every_file(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    options = {"bucket": "1", "write-only": "true"}
    java_wh, our_wh = tmp_path / "java", tmp_path / "ours"
    java_oracle.create_table(java_wh, DB, "t", JAVA_FIELDS, primary_keys=["id"], options=options)
    catalog = CatalogFactory.create({"warehouse": str(our_wh)})
    catalog.create_database(DB, ignore_if_exists=True)
    catalog.create_table(
        f"{DB}.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    )
    table = catalog.get_table(f"{DB}.t")
    for i in range(6):
        java_oracle.write_rows(java_wh, DB, "t", batch(i))
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            rows = [dict(zip(SCHEMA.names, r, strict=True)) for r in batch(i)]
            write.write_arrow(pa.Table.from_pylist(rows, SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
    assert state(our_wh) == state(java_wh)
    assert kinds(our_wh) == kinds(java_wh) == ["APPEND"] * 6


def test_commits_of_mixed_sizes_compact_as_java_does(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """Commits of 1 to 2,000 upserts (seeded): every universal pick (size amplification, size
    ratio, run count) and every output level must be Java 1.4.2's after each commit."""
    rng = random.Random(1)
    options = {"bucket": "1"}
    java_wh, our_wh = tmp_path / "java", tmp_path / "ours"
    java_oracle.create_table(java_wh, DB, "t", JAVA_FIELDS, primary_keys=["id"], options=options)
    catalog = CatalogFactory.create({"warehouse": str(our_wh)})
    catalog.create_database(DB, ignore_if_exists=True)
    catalog.create_table(
        f"{DB}.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    )
    table = catalog.get_table(f"{DB}.t")
    last: dict[int, Row] = {}
    for i in range(30):
        rows = [[rng.randrange(5000), f"v{i}-{k}", "a"] for k in range(rng.choice(SIZES))]
        last.update({r[0]: r for r in rows})
        java_oracle.write_rows(java_wh, DB, "t", rows)
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            data = [dict(zip(SCHEMA.names, r, strict=True)) for r in rows]
            write.write_arrow(pa.Table.from_pylist(data, SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
        assert state(our_wh) == state(java_wh), f"after commit {i + 1}"
    assert kinds(our_wh) == [s["commitKind"] for s in java_oracle.snapshots(java_wh, DB, "t")]
    assert read_ours(table) == sorted_rows(last.values())
