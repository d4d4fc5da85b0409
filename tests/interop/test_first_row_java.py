"""First-row tables between paimon_pyspark and Java Paimon 1.4.2.

Java's batch reads skip level-0 files of first-row tables, so Java seeing our rows after every
commit proves that our writer pushed them up, as Java's writer does (ForceUpLevel0Compaction
with the lookup rewriter). The same commits written by Java and by us leave the same levels and
row counts (keys a higher level already holds are dropped), and we read the tables Java writes.
A plain-Python model (the first value written for a key wins) says what the rows must be.
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
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int32()), ("s", pa.string()), ("dt", pa.string())])
JAVA_FIELDS = [("id", "BIGINT NOT NULL"), ("v", "INT"), ("s", "STRING"), ("dt", "STRING NOT NULL")]
OPTIONS = {"bucket": "2", "merge-engine": "first-row"}
Row = list[Any]


def commits(seed: int, sizes: tuple[int, ...]) -> tuple[list[list[Row]], list[Row]]:
    """Batches of [id, v, s, dt] over two partitions, and the rows left: first write wins."""
    rng = random.Random(seed)
    batches: list[list[Row]] = []
    model: dict[tuple[int, str], Row] = {}
    for c, n in enumerate(sizes):
        batch = []
        for i in rng.sample(range(3 * max(sizes)), n):
            row = [i, c, f"c{c}-{i}" * (1 + i % 4), ("2026-01-01", "2026-01-02")[i % 2]]
            batch.append(row)
            model.setdefault((i, row[3]), row)
        batches.append(batch)
    return batches, sorted_rows(model.values())


def create_java(java_oracle: JavaOracle, warehouse: Path) -> None:
    """Java creates ``t`` as ``create_ours`` does: JAVA_FIELDS, by dt, keyed by (id, dt)."""
    java_oracle.create_table(
        warehouse,
        DB,
        "t",
        JAVA_FIELDS,
        partition_keys=["dt"],
        primary_keys=["id", "dt"],
        options=OPTIONS,
    )


def create_ours(warehouse: Path) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"], options=OPTIONS
    )
    catalog.create_table(f"{DB}.t", schema)
    return catalog.get_table(f"{DB}.t")


def write(table: FileStoreTable, batch: list[Row]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(
            pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in batch], SCHEMA)
        )
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def read_ours(table: FileStoreTable) -> list[Row]:
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted_rows([r[n] for n in SCHEMA.names] for r in rows)


def layout(warehouse: Path) -> list[tuple[Any, ...]]:
    """(partition, bucket, level, row count) of every live file, whoever wrote the table."""
    table = CatalogFactory.create({"warehouse": str(warehouse)}).get_table(f"{DB}.t")
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    entries = table.manifest_io.live_entries(snapshot)
    return sorted((e.partition, e.bucket, e.file.level, e.file.row_count) for e in entries)


def test_java_reads_our_first_row_table_after_every_commit(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    table = create_ours(tmp_path)
    batches, _ = commits(seed=3, sizes=(150,) * 6)
    seen: dict[tuple[int, str], Row] = {}
    for n, batch in enumerate(batches, start=1):
        write(table, batch)
        for r in batch:
            seen.setdefault((r[0], r[3]), r)
        want = sorted_rows(seen.values())
        assert read_ours(table) == want
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == want
        kinds = [s["commitKind"] for s in java_oracle.snapshots(tmp_path, DB, "t")]
        assert kinds == ["APPEND", "COMPACT"] * n


def test_same_commits_leave_the_same_levels_as_java(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """Shrinking commits: each level-0 file is much smaller than the run below it, so both
    writers push it to the level just above that run, dropping the keys found further up."""
    batches, model = commits(seed=5, sizes=(4000, 600, 60, 4))
    java_wh, our_wh = tmp_path / "java", tmp_path / "ours"
    create_java(java_oracle, java_wh)
    table = create_ours(our_wh)
    for batch in batches:
        java_oracle.write_rows(java_wh, DB, "t", batch)
        write(table, batch)
        assert layout(our_wh) == layout(java_wh)
    assert {level for _, _, level, _ in layout(our_wh)} == {2, 3, 4, 5}
    assert read_ours(table) == model
    assert sorted_rows(java_oracle.read_table(our_wh, DB, "t").rows) == model


def test_we_read_a_first_row_table_java_wrote(java_oracle: JavaOracle, tmp_path: Path) -> None:
    create_java(java_oracle, tmp_path)
    batches, model = commits(seed=11, sizes=(200, 150, 100, 150))
    for batch in batches:
        java_oracle.write_rows(tmp_path, DB, "t", batch)
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table(f"{DB}.t")
    assert min(level for _, _, level, _ in layout(tmp_path)) >= 1
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == model
    assert read_ours(table) == model
    # and our next commit on Java's files keeps the first values and pushes its own level 0 up
    extra = [[i, 99, "late", ("2026-01-01", "2026-01-02")[i % 2]] for i in range(0, 1000, 7)]
    write(table, extra)
    want = {(r[0], r[3]): r for r in model}
    for r in extra:
        want.setdefault((r[0], r[3]), r)
    assert read_ours(table) == sorted_rows(want.values())
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == sorted_rows(want.values())
