"""Deletion-vector primary-key tables, both ways with Java 1.4.2.

Ours: the commits of ``dv_tables.pk_commits`` (upserts, ``-U``/``+U`` pairs, deletes, keys
coming back) written by our ``TableWrite`` into a table of each bucket mode (fixed,
dynamic, cross-partition, postpone then our postpone compaction), 32- and 64-bit. Java reads
exactly the expected rows, its view of our index marks rows inside their files only, and after
Java's own full compaction of our table, and Java's further commits into it, both engines still
read what a model says. Java's tables (``dv_tables`` builders): our compaction (full and minor)
and our further commits keep Java reading the model's rows.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from dv_tables import (
    ARROW_SCHEMA,
    PARTITIONS,
    build_pk_cross_partition,
    build_pk_dynamic,
    build_pk_fixed,
    build_pk_postpone,
    pk_commits,
    pk_expected,
)
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
Row = list[Any]

MODES: dict[str, tuple[dict[str, str], list[str], list[str], bool]] = {
    # name: (options, partition keys, primary keys, key moves between partitions)
    "fixed": ({"bucket": "2"}, ["pt"], ["k", "pt"], False),
    "dynamic": (
        {"bucket": "-1", "dynamic-bucket.target-row-num": "100"},
        ["pt"],
        ["k", "pt"],
        False,
    ),
    "cross": ({"bucket": "-1", "dynamic-bucket.target-row-num": "100"}, ["pt"], ["k"], True),
    "postpone": (
        {
            "bucket": "-2",
            "postpone.default-bucket-num": "2",
            "postpone.batch-write-fixed-bucket": "false",
        },
        ["pt"],
        ["k", "pt"],
        False,
    ),
}


def catalog(warehouse: Path) -> Any:
    return CatalogFactory.create({"warehouse": str(warehouse)})


def table_of(warehouse: Path, name: str) -> FileStoreTable:
    table = catalog(warehouse).get_table(f"{DB}.{name}")
    assert isinstance(table, FileStoreTable)
    return table


def write_ours(warehouse: Path, name: str, batch: list[tuple[Row, str]]) -> None:
    table = table_of(warehouse, name)
    data = pa.Table.from_pylist(
        [dict(zip(ARROW_SCHEMA.names, r, strict=True)) for r, _ in batch], schema=ARROW_SCHEMA
    )
    kinds = np.array([KINDS[k] for _, k in batch], dtype=np.int8)
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data, row_kinds=kinds)
        builder.new_commit().commit(w.prepare_commit())
    if table.options.bucket == -2:
        compact(catalog(warehouse), f"{DB}.{name}")


def read_ours(warehouse: Path, name: str) -> list[Row]:
    rb = table_of(warehouse, name).new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def create_ours(warehouse: Path, name: str, mode: str, bitmap64: bool) -> None:
    options, partition_keys, primary_keys, _ = MODES[mode]
    options = {**options, "deletion-vectors.enabled": "true"}
    if bitmap64:
        options["deletion-vectors.bitmap64"] = "true"
    cat = catalog(warehouse)
    cat.create_database(DB, ignore_if_exists=True)
    cat.create_table(
        f"{DB}.{name}",
        Schema.from_pyarrow_schema(
            ARROW_SCHEMA, partition_keys=partition_keys, primary_keys=primary_keys, options=options
        ),
    )


def more_commits(rows: list[Row], seed: int, moves: bool) -> list[list[tuple[Row, str]]]:
    """Three more batches on a table holding ``rows``: updates (some moving partition when
    ``moves``), deletes naming each key's current partition, new keys."""
    rng = np.random.default_rng(seed)
    live = {r[0]: list(r) for r in rows}
    out = []
    for c in range(3):
        batch: list[tuple[Row, str]] = []
        keys = sorted(live)
        for k in rng.choice(keys, 60, replace=False).tolist():
            pt = str(rng.choice(PARTITIONS)) if moves and rng.random() < 0.25 else live[k][3]
            live[k] = [k, f"more{seed}-{c}-{k}", c, pt]
            batch.append((list(live[k]), "+U"))
        for k in rng.choice(sorted(live), 20, replace=False).tolist():
            batch.append(([k, None, None, live.pop(k)[3]], "-D"))
        for k in range(10_000 + 100 * c, 10_000 + 100 * c + 15):
            live[k] = [k, f"new{seed}-{c}", k, PARTITIONS[k % len(PARTITIONS)]]
            batch.append((list(live[k]), "+I"))
        out.append(batch)
    return out


def check_index(java: JavaOracle, warehouse: Path, name: str, expected: list[Row]) -> None:
    """Java's view of the table's vectors: inside their files, and files minus marks = rows."""
    index = java.dv_index(warehouse, DB, name)
    rows_of = {f["file_name"]: f["row_count"] for f in index["files"]}
    marked = 0
    for entry in index["entries"]:
        assert entry["row_count"] == len(entry["ranges"])
        for data_file, positions in entry["vectors"].items():
            assert data_file in rows_of, f"a vector for {data_file}, not a live file"
            assert positions and positions[-1] < rows_of[data_file]
            marked += len(positions)
    assert all(f["level"] > 0 for f in index["files"]), "a level-0 file after a commit"
    assert sum(rows_of.values()) - marked == len(expected)


@pytest.mark.parametrize(
    ("mode", "bitmap64"),
    [*((m, False) for m in MODES), ("fixed", True)],
    ids=[*MODES, "fixed-bitmap64"],
)
def test_java_reads_ours_and_compacts_and_writes_on(
    java_oracle: JavaOracle, tmp_path: Path, mode: str, bitmap64: bool
) -> None:
    name = f"ours_{mode}"
    create_ours(tmp_path, name, mode, bitmap64)
    commits = pk_commits(101, moves=MODES[mode][3])
    for batch in commits:
        write_ours(tmp_path, name, batch)
    expected = pk_expected(commits)
    assert read_ours(tmp_path, name) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected
    check_index(java_oracle, tmp_path, name, expected)

    if mode != "postpone":  # Java's TableWrite.compact refuses a bucket = -2 table's buckets
        java_oracle.compact(tmp_path, DB, name, full=True)
        assert read_ours(tmp_path, name) == expected
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected

    more = more_commits(expected, 202, MODES[mode][3])
    for batch in more:
        java_oracle.write_rows_kinds(
            tmp_path, DB, name, [r for r, _ in batch], [k for _, k in batch]
        )
        if mode == "postpone":
            java_oracle.compact_postpone(tmp_path, DB, name)
    expected = pk_expected([[(r, "+I") for r in expected], *more])
    assert read_ours(tmp_path, name) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected


JAVA_BUILDERS: dict[str, Callable[..., list[Row]]] = {
    "fixed": build_pk_fixed,
    "dynamic": build_pk_dynamic,
    "cross": build_pk_cross_partition,
    "postpone": build_pk_postpone,
}


@pytest.mark.parametrize("strategy", ["full", "minor"])
@pytest.mark.parametrize("mode", list(JAVA_BUILDERS))
def test_our_compaction_and_writes_on_javas_tables(
    java_oracle: JavaOracle, tmp_path: Path, mode: str, strategy: str
) -> None:
    name = f"java_{mode}"
    expected = JAVA_BUILDERS[mode](java_oracle, tmp_path, DB, name)
    compact(catalog(tmp_path), f"{DB}.{name}", compact_strategy=strategy)
    assert read_ours(tmp_path, name) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected
    check_index(java_oracle, tmp_path, name, expected)

    more = more_commits(expected, 303, mode == "cross")
    for batch in more:
        write_ours(tmp_path, name, batch)
    expected = pk_expected([[(r, "+I") for r in expected], *more])
    assert read_ours(tmp_path, name) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected
    check_index(java_oracle, tmp_path, name, expected)
