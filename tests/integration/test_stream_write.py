"""Streaming writes (``new_stream_write_builder``): one write kept open across checkpoints, one
commit per checkpoint identifier, each identifier committed once across restarts.

The model a test compares with: append tables hold every written row once; primary-key tables
hold the last value written for each key, in checkpoint order.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from stream_write_job import checkpoint_rows
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
JOB = Path(__file__).with_name("stream_write_job.py")


def _table(
    catalog: FileSystemCatalog, name: str, primary_key: bool, **options: str
) -> FileStoreTable:
    keys = ["id"] if primary_key else None
    opts = {"bucket": "2", **({} if primary_key else {"bucket-key": "id"}), **options}
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys, options=opts)
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def _snapshots(table: FileStoreTable) -> list[Snapshot]:
    sm = table.store.snapshot_manager
    return [sm.snapshot(i) for i in sm.list_ids()]


def _expected(checkpoints: range, primary_key: bool) -> list[dict[str, object]]:
    if not primary_key:
        rows = [r for k in checkpoints for r in checkpoint_rows(k, False).to_pylist()]
        return sort_rows(pa.Table.from_pylist(rows, SCHEMA))
    last: dict[int, str] = {}
    for k in checkpoints:
        for r in checkpoint_rows(k, True).to_pylist():
            last[r["id"]] = r["v"]
    return sort_rows(pa.table({"id": list(last), "v": list(last.values())}, SCHEMA))


def _run_job(warehouse: str, name: str, user: str, n: int, pause: float) -> subprocess.Popen[str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    args = [sys.executable, str(JOB), warehouse, name, user, str(n), str(pause)]
    return subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _newest_identifier(table: FileStoreTable, user: str) -> int | None:
    newest = table.store.snapshot_manager.latest_snapshot_of_user(user)
    return None if newest is None else newest.commit_identifier


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_job_killed_and_replayed_commits_each_identifier_once(
    catalog: FileSystemCatalog, warehouse: str, primary_key: bool
) -> None:
    n, user = 24, "stream-job"
    options = {"num-sorted-run.compaction-trigger": "3"} if primary_key else {}
    table = _table(catalog, "t", primary_key, **options)
    job = _run_job(warehouse, "db.t", user, n, 0.05)
    deadline = time.monotonic() + 120
    while (_newest_identifier(table, user) or 0) < 4:
        assert job.poll() is None, job.communicate()[1]
        assert time.monotonic() < deadline, "the job committed nothing in time"
        time.sleep(0.01)
    job.send_signal(signal.SIGKILL)
    _, err = job.communicate(timeout=60)
    assert job.returncode == -signal.SIGKILL, err
    killed_at = _newest_identifier(table, user)
    assert killed_at is not None and 4 <= killed_at < n

    restarted = _run_job(warehouse, "db.t", user, n, 0.0)
    out, err = restarted.communicate(timeout=300)
    assert restarted.returncode == 0, err
    assert out.split() == [str(k) for k in range(1, n + 1)]

    ours = [s for s in _snapshots(table) if s.commit_user == user]
    appends = Counter(s.commit_identifier for s in ours if s.commit_kind == "APPEND")
    compacts = Counter(s.commit_identifier for s in ours if s.commit_kind == "COMPACT")
    assert appends == Counter(range(1, n + 1))
    assert all(c == 1 for c in compacts.values())
    if primary_key:
        assert compacts, "the PK write compacted across checkpoints"
    assert [s.commit_identifier for s in ours] == sorted(s.commit_identifier for s in ours)
    assert sort_rows(read_all(table)) == _expected(range(1, n + 1), primary_key)


def test_pk_write_continues_sequence_and_levels_across_checkpoints(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, "t", True, **{"num-sorted-run.compaction-trigger": "2"})
    builder = table.new_stream_write_builder("job")
    write, commit = builder.new_write(), builder.new_commit()
    max_seq: dict[int, int] = {}
    for k in range(1, 9):
        write.write_arrow(pa.table({"id": [1, 2, 10 + k], "v": [f"v{k}"] * 3}, SCHEMA))
        messages = write.prepare_commit(k)
        for m in messages:
            new = m.data_increment.new_files
            assert min(f.min_sequence_number for f in new) == max_seq.get(m.bucket, -1) + 1
            max_seq[m.bucket] = max(f.max_sequence_number for f in new)
        assert commit.commit(messages, k)
    write.close()
    kinds = Counter(s.commit_kind for s in _snapshots(table))
    assert kinds["APPEND"] == 8 and kinds["COMPACT"] >= 2
    rows = sort_rows(read_all(table))
    assert rows == sort_rows(
        pa.table({"id": [1, 2, *range(11, 19)], "v": ["v8", "v8", *(f"v{k}" for k in range(1, 9))]})
    )


def test_dynamic_bucket_write_keeps_its_hash_index_across_checkpoints(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, "t", True, bucket="-1", **{"dynamic-bucket.target-row-num": "4"})
    builder = table.new_stream_write_builder("job")
    with builder.new_write() as write:
        commit = builder.new_commit()
        for k in range(3):
            ids = list(range(k * 6, k * 6 + 6))
            write.write_arrow(pa.table({"id": ids, "v": ["s"] * 6}, SCHEMA))
            commit.commit(write.prepare_commit(k + 1), k + 1)
    store = table.store
    handler = IndexFileHandler(store.file_io, store.path, store.manifest_io.codec)
    entries = handler.scan(store.snapshot_manager.latest(), HASH_INDEX)
    assert sum(len(handler.read_hash(e.index_file)) for e in entries) == 18
    # a later batch write finds every key in the index, so each stays in its bucket
    write_commit(table, pa.table({"id": list(range(18)), "v": ["b"] * 18}, SCHEMA))
    rows = read_all(table)
    assert rows.num_rows == 18
    assert set(rows["v"].to_pylist()) == {"b"}


def test_filter_and_commit_commits_the_pending_identifiers_once(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, "t", False)
    builder = table.new_stream_write_builder("job")
    pending = {}
    with builder.new_write() as write:
        for k in (1, 2, 3):
            write.write_arrow(checkpoint_rows(k, False))
            pending[k] = write.prepare_commit(k)
    commit = builder.new_commit()
    assert commit.commit(pending[1], 1) == [1]
    assert commit.filter_committed([3, 1, 2]) == [2, 3]
    assert commit.filter_and_commit(pending) == 2
    assert table.new_stream_write_builder("job").new_commit().filter_and_commit(pending) == 0
    assert [s.commit_identifier for s in _snapshots(table)] == [1, 2, 3]
    assert sort_rows(read_all(table)) == _expected(range(1, 4), False)


def test_replayed_identifier_prepares_nothing_and_leaves_no_files(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, "t", False)
    builder = table.new_stream_write_builder("job")
    with builder.new_write() as write:
        write.write_arrow(checkpoint_rows(1, False))
        builder.new_commit().commit(write.prepare_commit(1), 1)
    files_before = sorted(p.name for p in Path(table.path).rglob("data-*"))
    restarted = table.new_stream_write_builder("job")
    with restarted.new_write() as write:
        write.write_arrow(checkpoint_rows(1, False))
        assert write.prepare_commit(1) == []
        assert restarted.new_commit().commit([], 1) == []
        write.write_arrow(checkpoint_rows(2, False))
        assert restarted.new_commit().commit(write.prepare_commit(2), 2) == [2]
    files_after = sorted(p.name for p in Path(table.path).rglob("data-*"))
    assert len(files_after) == len(files_before) + 2  # checkpoint 2's files, one per bucket
    assert set(files_before) < set(files_after)
    assert sort_rows(read_all(table)) == _expected(range(1, 3), False)


def test_empty_checkpoint_commits_nothing(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, "t", True)
    builder = table.new_stream_write_builder("job")
    with builder.new_write() as write:
        assert write.prepare_commit(1) == []
        assert builder.new_commit().commit([], 1) == []
    assert table.store.snapshot_manager.latest_id() is None


def test_identifiers_are_checked(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, "t", False)
    builder = table.new_stream_write_builder("job")
    with builder.new_write() as write:
        write.prepare_commit(5)
        with pytest.raises(InvalidArgumentError, match="identifiers must increase"):
            write.prepare_commit(5)
        with pytest.raises(InvalidArgumentError, match="commit identifier"):
            write.prepare_commit(True)
    commit = builder.new_commit()
    with pytest.raises(InvalidArgumentError, match="commit identifier"):
        commit.commit([], "7")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="commit identifier"):
        commit.filter_and_commit({2**63: []})
    with pytest.raises(InvalidArgumentError, match="non-empty string"):
        table.new_stream_write_builder().with_commit_user(3)  # type: ignore[arg-type]


def test_generated_commit_user_differs_per_builder(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, "t", False)
    first, second = table.new_stream_write_builder(), table.new_stream_write_builder()
    assert first.commit_user != second.commit_user
    with first.new_write() as write:
        write.write_arrow(checkpoint_rows(1, False))
        first.new_commit().commit(write.prepare_commit(1), 1)
    assert _snapshots(table)[0].commit_user == first.commit_user
    assert _snapshots(table)[0].commit_identifier == 1
