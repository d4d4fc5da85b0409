"""Writes to ``row-tracking.enabled`` tables: the commit numbers new files' rows from the base
snapshot's ``nextRowId`` and gives a writer's first file the snapshot id as its sequence
numbers (commit/row_tracking.py, Java's RowTrackingCommitUtils), every attempt from its own
base; a compaction keeps each row's ids in the files it writes; what would lose ids is refused.
Against Java: tests/interop/test_row_tracking_java.py."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.commit.file_store_commit import FileStoreCommit
from paimon_pyspark.commit.row_tracking import assign_row_tracking
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.procedures import compact
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.data_file_meta import (
    EMPTY_STATS,
    FILE_SOURCE_APPEND,
    FILE_SOURCE_COMPACT,
    DataFileMeta,
)
from paimon_pyspark.spec.manifest import ManifestEntry

SCHEMA = pa.schema([("a", pa.int64()), ("p", pa.string())])
ALL = ["a", "p", "_ROW_ID", "_SEQUENCE_NUMBER"]
TRACKING = {"row-tracking.enabled": "true"}


def _table(tmp_path: Path, options: dict[str, str] | None = None, name: str = "t") -> Any:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["p"], options={**TRACKING, **(options or {})}
    )
    catalog.create_table(f"db.{name}", schema, ignore_if_exists=True)
    return catalog, catalog.get_table(f"db.{name}")


def _data(start: int, n: int, parts: int = 1) -> pa.Table:
    return pa.table(
        {
            "a": pa.array(range(start, start + n), pa.int64()),
            "p": [f"p{i % parts}" for i in range(n)],
        }
    )


def _write(table: Any, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def _read(table: Any, projection: list[str] = ALL) -> list[dict[str, Any]]:
    rb = table.new_read_builder().with_projection(projection)
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda r: r["a"])


def _meta(
    name: str,
    rows: int,
    min_seq: int,
    source: int | None = FILE_SOURCE_APPEND,
    first_row_id: int | None = None,
    write_cols: tuple[str, ...] | None = None,
) -> DataFileMeta:
    return DataFileMeta(
        file_name=name,
        file_size=1,
        row_count=rows,
        min_key=b"",
        max_key=b"",
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=min_seq,
        max_sequence_number=min_seq + rows - 1,
        schema_id=0,
        level=0,
        file_source=source,
        first_row_id=first_row_id,
        write_cols=write_cols,
    )


def _entry(f: DataFileMeta, kind: int = mf.KIND_ADD) -> ManifestEntry:
    return ManifestEntry(kind, b"", 0, -1, f)


def test_assignment_follows_java_rules() -> None:
    delta = [
        _entry(_meta("first.parquet", 10, 0)),  # a writer's first file
        _entry(_meta("rolled.parquet", 5, 10)),  # its next file: sequence numbers kept
        _entry(_meta("compacted.parquet", 7, 3, FILE_SOURCE_COMPACT)),  # no id, holds none
        _entry(_meta("holds.parquet", 4, 0, write_cols=("a", "_ROW_ID"))),  # ids in the file
        _entry(_meta("old.parquet", 6, 2, first_row_id=3), mf.KIND_DELETE),  # keeps its id
        _entry(_meta("other.parquet", 2, 0)),
    ]
    next_id, out = assign_row_tracking("t", 9, 100, delta)
    got = [
        (
            e.file.file_name,
            e.file.first_row_id,
            e.file.min_sequence_number,
            e.file.max_sequence_number,
        )
        for e in out
    ]
    assert got == [
        ("first.parquet", 100, 9, 9),
        ("rolled.parquet", 110, 10, 14),
        ("compacted.parquet", None, 3, 9),
        ("holds.parquet", None, 9, 9),
        ("old.parquet", 3, 2, 7),
        ("other.parquet", 115, 9, 9),
    ]
    assert next_id == 117
    assert [e.kind for e in out] == [e.kind for e in delta]
    with pytest.raises(UnsupportedOptionError, match="blob"):
        assign_row_tracking("t", 9, 0, [_entry(_meta("data-1.blob", 1, 0))])


def test_commits_number_rows_and_snapshots_carry_next_row_id(tmp_path: Path) -> None:
    _, table = _table(tmp_path)
    _write(table, _data(0, 6, parts=2))
    _write(table, _data(100, 3))
    rows = _read(table)
    assert sorted(r["_ROW_ID"] for r in rows) == list(range(9))
    assert {r["a"]: r["_SEQUENCE_NUMBER"] for r in rows if r["a"] >= 100} == {
        100: 2,
        101: 2,
        102: 2,
    }
    sm = table.snapshot_manager
    assert [sm.snapshot(i).next_row_id for i in (1, 2)] == [6, 9]


def test_a_commit_numbers_from_the_snapshot_it_lands_on(tmp_path: Path) -> None:
    """Messages prepared on snapshot 1 and committed after another writer's snapshot 2 get
    ids after snapshot 2's: the ids come from the commit's base, not the write's."""
    _, table = _table(tmp_path)
    _write(table, _data(0, 4))
    slow = table.new_batch_write_builder()
    with slow.new_write() as write:
        write.write_arrow(_data(100, 3))
        messages = write.prepare_commit()
    _write(table, _data(200, 5))
    slow.new_commit().commit(messages)
    ids = {r["a"]: r["_ROW_ID"] for r in _read(table)}
    assert [ids[a] for a in (100, 101, 102)] == [9, 10, 11]
    assert table.snapshot_manager.latest().next_row_id == 12


def test_an_attempt_that_lost_the_race_is_numbered_again_from_the_winner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer commits after our first attempt read its base: that attempt loses the
    id, and the retry numbers our rows after the winner's (Java's tryCommitOnce assigns from
    each attempt's latest snapshot); the lost attempt's manifests are removed."""
    _, table = _table(tmp_path, {"commit.min-retry-wait": "1 ms"})
    _write(table, _data(0, 4))
    builder = table.new_batch_write_builder()
    ours = builder.commit_user
    with builder.new_write() as write:
        write.write_arrow(_data(100, 3))
        messages = write.prepare_commit()
    real = FileStoreCommit._try_commit_once
    attempts: list[int | None] = []
    raced: list[bool] = []

    def racing(self: FileStoreCommit, *args: Any, **kwargs: Any) -> Any:
        if raced:  # the winner's own commit, or our retry
            result = real(self, *args, **kwargs)
        else:
            raced.append(True)
            _write(table, _data(200, 5))  # the winner takes snapshot 2
            result = real(self, *args, **kwargs)
        if self.commit_user == ours:
            attempts.append(result)
        return result

    monkeypatch.setattr(FileStoreCommit, "_try_commit_once", racing)
    assert builder.new_commit().commit(messages) == [3]
    assert attempts == [None, 3]
    ids = {r["a"]: r["_ROW_ID"] for r in _read(table)}
    assert [ids[a] for a in (100, 101, 102)] == [9, 10, 11]
    assert [ids[a] for a in (200, 204)] == [4, 8]
    sm, mio = table.snapshot_manager, table.store.manifest_io
    assert sm.latest().next_row_id == 12
    referenced: set[str] = set()
    for sid in sm.list_ids():
        snapshot = sm.snapshot(sid)
        for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
            referenced.add(name)
            referenced.update(m.file_name for m in mio.read_manifest_list(name))
    assert set(os.listdir(tmp_path / "db.db" / "t" / "manifest")) == referenced


def test_racing_commits_get_distinct_contiguous_ids(tmp_path: Path) -> None:
    """Writers committing at once lose races and retry; each attempt numbers from its own
    base, so every row ends with its own id and nextRowId counts every row."""
    _, table = _table(tmp_path, {"commit.min-retry-wait": "1 ms", "commit.max-retries": "100"})
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            _, mine = _table(tmp_path)
            for c in range(4):
                _write(mine, _data(w * 1000 + c * 10, 3 + w))
        except BaseException as e:  # pragma: no cover - surfaced below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    rows = _read(table)
    total = 4 * (3 + 4 + 5 + 6)
    assert len(rows) == total
    assert sorted(r["_ROW_ID"] for r in rows) == list(range(total))
    assert table.snapshot_manager.latest().next_row_id == total
    # a commit's rows share its snapshot id as their sequence number
    by_commit: dict[int, set[int]] = {}
    for r in rows:
        by_commit.setdefault(r["a"] // 10, set()).add(r["_SEQUENCE_NUMBER"])
    assert all(len(s) == 1 for s in by_commit.values())
    assert len({next(iter(s)) for s in by_commit.values()}) == 16


def test_rolled_files_keep_their_sequence_numbers(tmp_path: Path) -> None:
    """Only a writer's first file (sequence numbers from 0) gets the snapshot id; the files it
    rolls to keep theirs, as Java's commit leaves them (a 1-byte target: a file per row)."""
    _, table = _table(tmp_path, {"target-file-size": "1 b"})
    _write(table, _data(0, 6))
    files = sorted(
        (f.first_row_id, f.min_sequence_number, f.max_sequence_number)
        for s in table.new_read_builder().new_scan().plan().splits()
        for f in s.files
    )
    assert files == [(0, 1, 1), *((k, k, k) for k in range(1, 6))]
    assert [r["_SEQUENCE_NUMBER"] for r in _read(table)] == [1, 1, 2, 3, 4, 5]


def test_compaction_keeps_ids_and_later_commits_number_on(tmp_path: Path) -> None:
    catalog, table = _table(tmp_path, {"deletion-vectors.enabled": "false"})
    for i in range(3):
        _write(table, _data(i * 10, 4, parts=2))
    before = _read(table)
    compact(catalog, "db.t", options="compaction.min.file-num=2")
    table = catalog.get_table("db.t")
    files = [f for s in table.new_read_builder().new_scan().plan().splits() for f in s.files]
    assert len(files) == 2
    assert all(f.file_source == FILE_SOURCE_COMPACT and f.first_row_id is None for f in files)
    assert all(f.write_cols == ("a", "p", "_ROW_ID", "_SEQUENCE_NUMBER") for f in files)
    assert _read(table) == before
    assert table.snapshot_manager.latest().next_row_id == 12
    _write(table, _data(100, 2))
    after = _read(table)
    assert [r["_ROW_ID"] for r in after if r["a"] >= 100] == [12, 13]
    # the compacted files' ids are read back from them, whatever the projection
    assert _read(table, ["_ROW_ID", "a"]) == [{"_ROW_ID": r["_ROW_ID"], "a": r["a"]} for r in after]
    # compacted again (a compacted file with a new one): the stored ids are carried over
    compact(catalog, "db.t", options="compaction.min.file-num=2")
    table = catalog.get_table("db.t")
    assert [len(s.files) for s in table.new_read_builder().new_scan().plan().splits()] == [1, 1]
    assert _read(table) == after


def test_rewrites_that_would_lose_ids_are_refused(tmp_path: Path) -> None:
    catalog, table = _table(tmp_path)
    _write(table, _data(0, 4))
    with pytest.raises(UnsupportedOptionError, match="row-tracking.enabled.*order_strategy"):
        compact(catalog, "db.t", order_strategy="order", order_by="a")
    _, upsert = _table(tmp_path, {"upsert-key": "a"}, name="u")
    with pytest.raises(UnsupportedOptionError, match="row-tracking.enabled.*upsert-key"):
        upsert.new_batch_write_builder().new_write()
    assert len(_read(table)) == 4


def test_data_evolution_stays_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedOptionError, match="data-evolution.enabled"):
        _table(tmp_path, {"data-evolution.enabled": "true"})


def test_spark_copy_on_write_delete_and_update_are_refused(tmp_path: Path, spark: Any) -> None:
    from paimon_pyspark.spark.dml import delete, update

    _, table = _table(tmp_path)
    _write(table, _data(0, 4))
    with pytest.raises(UnsupportedOptionError, match="row-tracking.enabled.*deletion-vectors"):
        delete(spark, str(tmp_path), "db.t", "a = 1")
    with pytest.raises(UnsupportedOptionError, match="row-tracking.enabled"):
        update(spark, str(tmp_path), "db.t", {"a": "a + 1"}, "a = 2")
    # a delete of whole partitions drops files and assigns nothing
    assert delete(spark, str(tmp_path), "db.t", "p = 'p0'") is not None
    assert _read(table) == []
    assert table.snapshot_manager.latest().next_row_id == 4


def test_spark_writes_are_numbered_at_commit(tmp_path: Path, spark: Any) -> None:
    """A Spark job's tasks write files whose rows the driver's commit numbers, in every mode."""
    from paimon_pyspark.spark.write import write

    _, table = _table(tmp_path)
    _write(table, _data(0, 5))
    df = spark.createDataFrame(_data(100, 20, parts=3).to_pandas()).repartition(3)
    write(df, str(tmp_path), "db.t")
    rows = _read(table)
    assert sorted(r["_ROW_ID"] for r in rows) == list(range(25))
    assert {r["_SEQUENCE_NUMBER"] for r in rows if r["a"] >= 100} == {2}
    write(df.limit(4), str(tmp_path), "db.t", mode="overwrite")
    rows = _read(table)
    assert sorted(r["_ROW_ID"] for r in rows) == list(range(25, 29))
