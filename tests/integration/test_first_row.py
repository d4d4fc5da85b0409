"""First-row tables are readable right after each commit, as with Java's writer.

Batch reads of first-row tables skip level 0 (Java's batchScanSkipLevel0), so Java's writer
compacts every commit's level-0 files up (ForceUpLevel0Compaction with the lookup rewriter).
These tests pin the same for ours against a plain-Python model (the first value written for a
key wins for ever), on real files: every commit leaves no level-0 file, makes an APPEND and a
COMPACT snapshot, drops keys that a higher level already holds, and an abort removes every file
the write and its compaction produced.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement
from paimon_pyspark.spec.manifest import ManifestEntry

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("s", pa.string()), ("dt", pa.string())])
Row = dict[str, Any]


def make_table(
    catalog: FileSystemCatalog, options: dict[str, str], partitioned: bool = False
) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        partition_keys=["dt"] if partitioned else [],
        primary_keys=["id", "dt"] if partitioned else ["id"],
        options={"merge-engine": "first-row", **options},
    )
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def rows(ids: list[int], version: int, dts: tuple[str, ...] = ("x",)) -> list[Row]:
    return [
        {"id": i, "v": version, "s": f"v{version}-{i}" * 3, "dt": dts[i % len(dts)]} for i in ids
    ]


def prepare(table: FileStoreTable, batch: list[Row]) -> list[CommitMessage]:
    with table.new_batch_write_builder().new_write() as w:
        w.write_arrow(pa.Table.from_pylist(batch, schema=SCHEMA))
        return w.prepare_commit()


def write(table: FileStoreTable, batch: list[Row]) -> list[CommitMessage]:
    messages = prepare(table, batch)
    table.new_batch_write_builder().new_commit().commit(messages)
    return messages


def remember_first(model: dict[tuple[Any, ...], Row], batch: list[Row]) -> None:
    for r in batch:
        model.setdefault((r["id"], r["dt"]), r)


def ours(table: FileStoreTable) -> list[Row]:
    return sorted(read_all(table).to_pylist(), key=lambda r: (r["id"], r["dt"]))


def expected(model: dict[tuple[Any, ...], Row]) -> list[Row]:
    return [model[k] for k in sorted(model)]


def live(table: FileStoreTable) -> list[ManifestEntry]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return table.manifest_io.live_entries(snapshot)


def kinds(table: FileStoreTable) -> list[str]:
    latest = table.snapshot_manager.latest_id() or 0
    return [table.snapshot_manager.snapshot(i).commit_kind for i in range(1, latest + 1)]


def data_files_on_disk(table: FileStoreTable) -> set[str]:
    found = set()
    for root, _, names in os.walk(table.path):
        found |= {os.path.join(root, n) for n in names if n.startswith("data-")}
    return found


@pytest.mark.parametrize("partitioned", [False, True], ids=["one-bucket", "partitioned-3-buckets"])
def test_rows_visible_after_every_commit_first_value_wins(
    catalog: FileSystemCatalog, partitioned: bool
) -> None:
    table = make_table(catalog, {"bucket": "3" if partitioned else "1"}, partitioned)
    dts = ("a", "b") if partitioned else ("x",)
    rng = random.Random(7)
    model: dict[tuple[Any, ...], Row] = {}
    for version in range(8):
        batch = rows(sorted(rng.sample(range(300), 60)), version, dts)
        messages = write(table, batch)
        remember_first(model, batch)

        assert ours(table) == expected(model)
        assert {e.file.level for e in live(table)} >= {5} and min(
            e.file.level for e in live(table)
        ) >= 1
        assert kinds(table) == ["APPEND", "COMPACT"] * (version + 1)
        for m in messages:  # one message per bucket, carrying both increments
            assert m.new_files and m.compact_increment.compact_before
            assert {f.file_name for f in m.new_files} <= {
                f.file_name for f in m.compact_increment.compact_before
            }
    if partitioned:  # 2 partitions x 3 buckets, every one compacted at each commit
        assert len({(e.partition, e.bucket) for e in live(table)}) == 6


def test_keys_already_above_are_dropped_as_java_lookup_does(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, {"bucket": "1"})
    model: dict[tuple[Any, ...], Row] = {}
    big = rows(list(range(2000)), 0)
    write(table, big)
    remember_first(model, big)
    assert [e.file.level for e in live(table)] == [5]

    small = rows([5, 7, 5000], 1)  # two keys the level-5 run holds, one new key
    (message,) = write(table, small)
    remember_first(model, small)
    (after,) = message.compact_increment.compact_after
    # a small level-0 file under a big level-5 run goes to level 4, without the two old keys
    assert (after.level, after.row_count) == (4, 1)
    assert sorted((e.file.level, e.file.row_count) for e in live(table)) == [(4, 1), (5, 2000)]
    assert ours(table) == expected(model)


def test_abort_deletes_new_files_and_compaction_outputs(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, {"bucket": "1"})
    write(table, rows(list(range(2000)), 0))
    on_disk = data_files_on_disk(table)
    rows_before = ours(table)

    messages = prepare(table, rows([5, 5000], 1))
    (m,) = messages
    assert m.new_files and m.compact_increment.compact_after
    written = {f.file_name for f in m.new_files + m.compact_increment.compact_after}
    assert {os.path.basename(p) for p in data_files_on_disk(table) - on_disk} == written
    table.new_batch_write_builder().new_commit().abort(messages)

    assert data_files_on_disk(table) == on_disk
    assert ours(table) == rows_before
    assert kinds(table) == ["APPEND", "COMPACT"]


def test_abort_keeps_live_files_a_compaction_upgraded(catalog: FileSystemCatalog) -> None:
    """An upgraded file (same name in compact_before and compact_after) is still the table's."""
    table = make_table(catalog, {"bucket": "1"})
    write(table, rows(list(range(100)), 0))
    (entry,) = live(table)
    on_disk = data_files_on_disk(table)
    upgrade = CompactIncrement((entry.file,), (entry.file.with_level(4),))
    message = CommitMessage(entry.partition, entry.bucket, 1, compact_increment=upgrade)
    table.new_batch_write_builder().new_commit().abort([message])
    assert data_files_on_disk(table) == on_disk
    assert len(ours(table)) == 100


def test_minor_compaction_of_first_row_table_with_level0_files(
    catalog: FileSystemCatalog,
) -> None:
    """``write-only`` writers leave level-0 files (invisible); a minor compaction pushes them up
    with the lookup rewriter, dropping keys the level-5 run already holds."""
    table = make_table(catalog, {"bucket": "1", "write-only": "true"})
    model: dict[tuple[Any, ...], Row] = {}
    big = rows(list(range(2000)), 0)
    write(table, big)
    remember_first(model, big)
    assert ours(table) == []  # only level 0 so far: skipped by the batch scan
    assert compact(catalog, "db.t", compact_strategy="full")
    table = catalog.get_table("db.t")
    assert ours(table) == expected(model)

    for version, ids in ((1, [1, 2, 3000]), (2, [2, 3000, 3001])):
        batch = rows(ids, version)
        write(table, batch)
        remember_first(model, batch)
    assert ours(table) != expected(model)  # the new keys sit at level 0
    assert compact(catalog, "db.t", compact_strategy="minor")
    table = catalog.get_table("db.t")

    assert ours(table) == expected(model)
    assert kinds(table)[-1] == "COMPACT"
    files = sorted((e.file.level, e.file.row_count) for e in live(table))
    assert files == [(4, 2), (5, 2000)]  # 3000 and 3001 only: 1 and 2 are found at level 5


@pytest.mark.parametrize("key", ["write-only", "write.compaction-skip"])
def test_write_only_and_its_old_name_skip_the_push_up(catalog: FileSystemCatalog, key: str) -> None:
    table = make_table(catalog, {"bucket": "1", key: "true"})
    write(table, rows([1, 2, 3], 1))
    assert kinds(table) == ["APPEND"]
    assert [e.file.level for e in live(table)] == [0]
    assert ours(table) == []  # level 0 is skipped by first-row batch reads, as in Java
