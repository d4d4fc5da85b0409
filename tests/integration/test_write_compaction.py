"""Compaction while writing, as Java 1.4.2's writers do it at a batch commit.

Each commit of a bucket the write owns ends with one compaction pick: a primary-key bucket
(fixed, dynamic, cross-partition) gets the universal pick, a fixed-bucket append bucket the
oldest ``compaction.min.file-num`` files. Such a commit is an APPEND snapshot followed by a
COMPACT one. Checked here on real files against a plain-Python model of the rows: which commits
compact, how many live files and at which levels, the rows unchanged, ``write-only`` turning it
off, ``full-compaction.delta-commits``, and an aborted commit leaving no file behind.
tests/interop/test_write_compaction_java.py holds the snapshots to Java's own.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.spec.manifest import ManifestEntry

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("dt", pa.string())]
)
Row = dict[str, Any]

LAYOUTS: dict[str, dict[str, Any]] = {
    "fixed": {"primary_keys": ["id"], "options": {"bucket": "1"}},
    "dynamic": {"primary_keys": ["id"], "options": {}},
    "cross-partition": {"primary_keys": ["id"], "partition_keys": ["dt"], "options": {}},
}


def make_table(catalog: FileSystemCatalog, layout: str, **options: str) -> FileStoreTable:
    spec = LAYOUTS[layout]
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        primary_keys=spec["primary_keys"],
        partition_keys=spec.get("partition_keys", []),
        options={**spec["options"], **options},
    )
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def make_append_table(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    opts = {"bucket": "1", "bucket-key": "id", **options}
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options=opts))
    return catalog.get_table("db.t")


def batch(i: int) -> pa.Table:
    """Commit ``i``'s one row: a new key, or (every third commit) an update of key 0."""
    key = 0 if i % 3 == 2 else i
    return pa.Table.from_pylist([{"id": key, "v": f"v{i}", "dt": "a"}], schema=SCHEMA)


def kinds(table: FileStoreTable) -> list[str]:
    latest = table.snapshot_manager.latest_id() or 0
    return [table.snapshot_manager.snapshot(i).commit_kind for i in range(1, latest + 1)]


def live(table: FileStoreTable) -> list[ManifestEntry]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return table.manifest_io.live_entries(snapshot)


def rows(table: FileStoreTable) -> list[Row]:
    return sorted(read_all(table).to_pylist(), key=lambda r: (r["id"], r["v"]))


def run_commits(table: FileStoreTable, n: int) -> tuple[list[bool], list[list[int]]]:
    """Write ``n`` one-row commits; per commit, whether it compacted and its live levels."""
    compacted, levels = [], []
    for i in range(n):
        ids = write_commit(table, batch(i))
        compacted.append(len(ids) == 2)
        levels.append(sorted(e.file.level for e in live(table)))
    return compacted, levels


def upsert_model(n: int) -> list[Row]:
    model: dict[int, Row] = {}
    for i in range(n):
        for r in batch(i).to_pylist():
            model[r["id"]] = r
    return sorted(model.values(), key=lambda r: (r["id"], r["v"]))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_pk_commits_compact_once_five_sorted_runs_pile_up(
    catalog: FileSystemCatalog, layout: str
) -> None:
    table = make_table(catalog, layout)
    compacted, levels = run_commits(table, 10)
    # commits 1-4 leave one level-0 run each; the 5th brings five runs (the trigger), whose
    # newer four outweigh the oldest twice over: everything goes to the top level
    assert compacted[:5] == [False, False, False, False, True]
    assert levels[3] == [0, 0, 0, 0] and levels[4] == [5]
    assert all(len(lv) <= 5 for lv in levels)
    assert sum(compacted) >= 2  # the runs pile up again after the 5th commit
    for i, did in enumerate(compacted):
        if did:
            assert levels[i] == [5]
    per_commit = [["APPEND", "COMPACT"] if did else ["APPEND"] for did in compacted]
    assert kinds(table) == [k for commit in per_commit for k in commit]
    assert rows(table) == upsert_model(10)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_write_only_never_compacts(catalog: FileSystemCatalog, layout: str) -> None:
    table = make_table(catalog, layout, **{"write-only": "true"})
    compacted, levels = run_commits(table, 10)
    assert not any(compacted)
    assert levels[-1] == [0] * 10
    assert kinds(table) == ["APPEND"] * 10
    assert rows(table) == upsert_model(10)


def test_compaction_trigger_and_size_amplification_options_steer_the_pick(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(
        catalog,
        "fixed",
        **{
            "num-sorted-run.compaction-trigger": "3",
            "compaction.max-size-amplification-percent": "100000",
        },
    )
    compacted, levels = run_commits(table, 6)
    # three runs trigger a pick; no size amplification, so the size-ratio pick takes the runs
    # of similar size, here all three, and they go to the top level (num-levels = trigger + 1)
    assert compacted[:3] == [False, False, True]
    assert levels[2] == [3]
    assert all(len(lv) <= 3 for lv in levels)
    assert rows(table) == upsert_model(6)


def test_full_compaction_delta_commits_compacts_every_commit_fully(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, "fixed", **{"full-compaction.delta-commits": "1"})
    compacted, levels = run_commits(table, 4)
    assert compacted == [True] * 4
    assert all(lv == [5] for lv in levels)
    assert kinds(table) == ["APPEND", "COMPACT"] * 4
    assert rows(table) == upsert_model(4)


def test_bucketed_append_rewrites_the_oldest_five_files(catalog: FileSystemCatalog) -> None:
    table = make_append_table(catalog)
    compacted, levels = run_commits(table, 10)
    # five small files are rewritten into one; it waits with the next four new files, so the
    # 9th commit again finds five
    assert compacted == [False] * 4 + [True] + [False] * 3 + [True, False]
    counts = [len(lv) for lv in levels]
    assert counts == [1, 2, 3, 4, 1, 2, 3, 4, 1, 2]
    entries = sorted(live(table), key=lambda e: e.file.min_sequence_number)
    assert [(e.file.min_sequence_number, e.file.max_sequence_number) for e in entries] == [
        (0, 8),
        (9, 9),
    ]
    written = [r for i in range(10) for r in batch(i).to_pylist()]
    assert read_all(table).to_pylist() == written  # the bucket's rows keep their order


def test_bucketed_append_write_only_keeps_every_file(catalog: FileSystemCatalog) -> None:
    table = make_append_table(catalog, **{"write-only": "true"})
    compacted, levels = run_commits(table, 6)
    assert not any(compacted) and len(levels[-1]) == 6


def test_unaware_append_and_postpone_tables_do_not_compact_while_writing(
    catalog: FileSystemCatalog,
) -> None:
    catalog.create_table("db.a", Schema.from_pyarrow_schema(SCHEMA))
    catalog.create_table(
        "db.p", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": "-2"})
    )
    for name in ("db.a", "db.p"):
        table = catalog.get_table(name)
        compacted, _ = run_commits(table, 6)
        assert not any(compacted), name


def test_an_aborted_commit_leaves_no_file_of_its_write_or_compaction(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, "fixed")
    run_commits(table, 4)
    before = data_files(table)
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(batch(4))
        messages = write.prepare_commit()
    assert messages[0].compact_increment.compact_after  # the 5th commit compacts
    builder.new_commit().abort(messages)
    assert data_files(table) == before
    assert rows(table) == upsert_model(4)


def data_files(table: FileStoreTable) -> set[str]:
    found = set()
    for root, _, names in os.walk(table.path):
        found |= {os.path.join(root, n) for n in names if n.startswith("data-")}
    return found
