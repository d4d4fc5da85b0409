"""A TableWrite on many threads (``write.parallelism``, batches routed in slices) writes what one
thread writes: the same files per (partition, bucket), each with the same rows in the same
order, sequence numbers and statistics; and a writer thread that fails leaves nothing behind."""

from __future__ import annotations

import glob
import multiprocessing
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from faulty_file_io import FaultyFileIO, InjectedFault

import paimon_pyspark.write.table_write as table_write
from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog import FileSystemCatalog

ROWS = 24_000
PARTITIONS = 8


def _data(seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = rng.permutation(ROWS).astype(np.int64)
    return pa.table(
        {
            "id": ids,
            "v": rng.random(ROWS),
            "s": pa.array([f"s{int(i) % 997}-{int(i)}" for i in ids]),
            "n": pa.array(ids % 100, pa.int32(), mask=ids % 9 == 0),
            "dt": pa.array([f"2026-11-{int(i) % PARTITIONS + 1:02d}" for i in ids]),
        }
    )


LAYOUTS = {
    "unaware": ({}, None),
    "fixed-append": ({"bucket": "4", "bucket-key": "id"}, None),
    "fixed-pk": ({"bucket": "4"}, ["id", "dt"]),
}


def _table(catalog: FileSystemCatalog, name: str, layout: str, threads: int) -> FileStoreTable:
    options, keys = LAYOUTS[layout]
    schema = Schema.from_pyarrow_schema(
        _data(0).schema, partition_keys=["dt"], primary_keys=keys, options=options
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}").copy({"write.parallelism": str(threads)})


def _files(table: FileStoreTable) -> dict[tuple[bytes, int], list[tuple[Any, ...]]]:
    """Per (partition, bucket): every live file's metadata (but its name and time) and rows."""
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    out: dict[tuple[bytes, int], list[tuple[Any, ...]]] = {}
    for e in table.manifest_io.live_entries(snapshot):
        f = e.file
        found = glob.glob(f"{table.path}/**/{f.file_name}", recursive=True)
        assert len(found) == 1
        rows = pq.read_table(found[0]).to_pylist()
        meta = (
            f.row_count,
            f.min_sequence_number,
            f.max_sequence_number,
            f.value_stats,
            f.min_key,
            f.max_key,
            f.key_stats,
            f.level,
            f.delete_row_count,
        )
        out.setdefault((e.partition, e.bucket), []).append((meta, rows))
    return {k: sorted(v, key=lambda x: x[0][1]) for k, v in out.items()}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_many_threads_write_the_files_one_thread_writes(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    monkeypatch.setattr(table_write, "ROUTE_SLICE_ROWS", 1_000)  # every batch in slices
    written = {}
    for threads in (1, 4):
        table = _table(catalog, f"t{threads}", layout, threads)
        for seed in (1, 2):  # two batches, two commits: sequence numbers run on
            builder = table.new_batch_write_builder()
            with builder.new_write() as write:
                write.write_arrow(_data(seed))
                write.write_arrow(_data(seed + 10).slice(0, 5_000))
                builder.new_commit().commit(write.prepare_commit())
        written[threads] = _files(table)
    one, many = written[1], written[4]
    assert len(one) >= PARTITIONS
    assert one == many


class _FailingStream:
    """A data file's stream that fails once it has taken ``limit`` bytes."""

    def __init__(self, inner: BinaryIO, limit: int) -> None:
        self.inner = inner
        self.limit = limit
        self.taken = 0

    def write(self, data: Any) -> int:
        self.taken += len(data)
        if self.taken > self.limit:
            raise InjectedFault("injected failure writing a data file")
        return self.inner.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _OneBucketFails(FaultyFileIO):
    """Data files of one (partition, bucket) fail part-way; every other call is the store's."""

    def __init__(self, inner: Any, marker: str) -> None:
        super().__init__(inner)
        self.marker = marker
        self.failed = 0

    def open_output(self, path: str) -> BinaryIO:
        out = self.inner.open_output(path)
        if self.marker in path:
            self.failed += 1
            return _FailingStream(out, 2_000)  # type: ignore[return-value]
        return out


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_failing_writer_thread_commits_nothing_and_leaves_no_file(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    monkeypatch.setattr(table_write, "ROUTE_SLICE_ROWS", 1_000)
    table = _table(catalog, "t", layout, 4)
    faulty = _OneBucketFails(table.file_io, f"dt=2026-11-05{os.sep}bucket-")
    options = {"write.parallelism": "4"}
    clone = FileStoreTable(faulty, table.path, table.name, table.store.table_schema, options)
    builder = clone.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(_data(1))
        with pytest.raises(InjectedFault):
            write.prepare_commit()
    assert faulty.failed >= 1
    assert table.snapshot_manager.latest() is None
    left = [p for p in Path(table.path).rglob("*") if p.is_file() and "bucket-" in str(p)]
    assert left == []


def _write_all(table: FileStoreTable, seed: int) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(_data(seed))
        builder.new_commit().commit(write.prepare_commit())


def _ids(table: FileStoreTable) -> list[int]:
    builder = table.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted(rows.column("id").to_pylist())


def test_writes_on_many_user_threads_share_the_write_threads(catalog: FileSystemCatalog) -> None:
    """Four writes at once, each from its own thread, through the process's one pool."""
    tables = [_table(catalog, f"t{i}", "fixed-append", 2) for i in range(4)]
    before = _write_threads()
    with ThreadPoolExecutor(4) as users:
        list(users.map(_write_all, tables, range(4)))
    for table in tables:
        assert _ids(table) == list(range(ROWS))
    assert len(_write_threads() - before) <= 2  # not 2 per write


def _write_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("paimon-write")}


def test_a_write_started_inside_a_write_thread_does_not_wait_behind_itself(
    catalog: FileSystemCatalog,
) -> None:
    """A one-thread pool busy with a task that itself writes and commits: that inner write
    gets its own threads, so it finishes instead of queueing behind the task waiting for it."""
    outer = _table(catalog, "outer", "unaware", 1)
    inner = _table(catalog, "inner", "unaware", 1)
    pool = table_write._write_pool(1)
    assert pool is not None
    done = pool.submit(_write_all, inner, 3)
    done.result(timeout=120)
    _write_all(outer, 4)
    assert _ids(inner) == _ids(outer) == list(range(ROWS))


def _write_in_child(table: FileStoreTable, out: Any) -> None:
    _write_all(table, 5)
    out.put(len(_ids(table)))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_writes_with_threads_of_its_own(catalog: FileSystemCatalog) -> None:
    """Spark forks its Python workers: a child of a process whose write threads exist (they
    do not in the child) still writes, on a pool of its own."""
    table = _table(catalog, "t", "unaware", 2)
    _write_all(table, 6)  # the parent's pool now has threads
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_write_in_child, args=(table, out))
    child.start()
    child.join(timeout=120)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and child.exitcode == 0
    assert out.get(timeout=5) == 2 * ROWS
