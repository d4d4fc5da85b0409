"""Many writers commit into one table at once, on S3 (moto's server) and on local disk.

Each writer is its own process, as on a cluster. Every commit must land exactly once: N
writers x M commits give N x M APPEND snapshots and every row once, with a compaction loop and
snapshot expiry (keeping 5 to 20 snapshots) running alongside in another process.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Mapping
from multiprocessing.context import ForkServerContext
from typing import Any

import pyarrow as pa
import pytest
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import CommitConflictError, CorruptTableError
from paimon_pyspark.procedures import compact, expire_snapshots

WRITERS = 8
COMMITS = 50
SCHEMA = pa.schema([("writer", pa.int32()), ("seq", pa.int32()), ("payload", pa.string())])
RACE_OPTIONS = {
    "commit.max-retries": "1000",
    "commit.min-retry-wait": "50 ms",
    "commit.max-retry-wait": "3 s",
}


def _writer(warehouse: str, options: Mapping[str, str], writer: int, commits: int) -> None:
    table = CatalogFactory.create({"warehouse": warehouse, **options}).get_table("db.t")
    for seq in range(commits):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(
                pa.table(
                    {"writer": [writer, writer], "seq": [seq, -seq - 1], "payload": ["x", "y"]},
                    schema=SCHEMA,
                )
            )
            builder.new_commit().commit(write.prepare_commit())


def _maintainer(warehouse: str, options: Mapping[str, str], stop: Any, done: Any) -> None:
    """Compacts and expires in a loop while the writers run; counts its COMPACT snapshots."""
    catalog = CatalogFactory.create({"warehouse": warehouse, **options})
    compacted = 0
    while not stop.is_set():
        try:
            if compact(catalog, "db.t", compact_strategy="full") is not None:
                compacted += 1
        except (CommitConflictError, CorruptTableError):
            pass  # a concurrent expiry removed what this plan read, or a writer raced it: again
        expire_snapshots(catalog, "db.t", retain_min=5, retain_max=20)
        time.sleep(0.3)
    done.put(compacted)


def _context() -> ForkServerContext:
    """Fresh processes, forked from a server that imported this module once per run.

    Spawned, each of the nine processes imported pyarrow and paimon_pyspark itself: on two
    shared cores they began writing about 20 s after the start, in every test; forked from the
    server, about 2 s. The server is single-threaded, so forking it is safe.
    """
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _race(
    warehouse: str, options: Mapping[str, str], table_options: Mapping[str, str], maintain: bool
) -> int:
    catalog = CatalogFactory.create({"warehouse": warehouse, **options})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, options={**RACE_OPTIONS, **table_options})
    catalog.create_table("db.t", schema)
    ctx = _context()
    stop, done = ctx.Event(), ctx.Queue()
    maintainer = None
    if maintain:
        maintainer = ctx.Process(target=_maintainer, args=(warehouse, options, stop, done))
        maintainer.start()
    writers = [
        ctx.Process(target=_writer, args=(warehouse, options, w, COMMITS)) for w in range(WRITERS)
    ]
    for p in writers:
        p.start()
    for p in writers:
        p.join(600)
    stop.set()
    compacted = 0
    if maintainer is not None:
        compacted = done.get(timeout=300)
        maintainer.join(60)
        assert maintainer.exitcode == 0
    assert [p.exitcode for p in writers] == [0] * WRITERS
    _check(catalog.get_table("db.t"), compacted, expiring=maintain)
    return compacted


def _check(table: Any, compacted: int, expiring: bool) -> None:
    sm = table.snapshot_manager
    latest = sm.latest()
    assert latest is not None
    assert latest.id == WRITERS * COMMITS + compacted
    if not expiring:
        kinds = [sm.snapshot(i).commit_kind for i in sm.list_ids()]
        assert kinds == ["APPEND"] * (WRITERS * COMMITS)
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    got = sorted(zip(rows["writer"].to_pylist(), rows["seq"].to_pylist(), strict=True))
    want = sorted((w, s) for w in range(WRITERS) for seq in range(COMMITS) for s in (seq, -seq - 1))
    assert got == want
    assert latest.total_record_count == len(want)


@pytest.mark.slow
@pytest.mark.spark_half
def test_racing_writers_on_s3(s3_server: S3Server, s3_bucket: str) -> None:
    _race(f"s3://{s3_bucket}/wh", s3_server.options(), {}, maintain=False)


@pytest.mark.slow
def test_racing_writers_with_compaction_and_expiry_on_s3(
    s3_server: S3Server, s3_bucket: str
) -> None:
    assert _race(f"s3://{s3_bucket}/wh", s3_server.options(), {}, maintain=True) > 0


@pytest.mark.slow
def test_racing_writers_on_local_disk(tmp_path: Any) -> None:
    _race(str(tmp_path / "wh"), {}, {}, maintain=False)


@pytest.mark.slow
def test_racing_writers_with_compaction_and_expiry_on_local_disk(tmp_path: Any) -> None:
    assert _race(str(tmp_path / "wh"), {}, {}, maintain=True) > 0
