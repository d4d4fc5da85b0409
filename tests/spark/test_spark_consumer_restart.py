"""A Spark stream with a ``consumer-id`` survives restarts (issue 40, item 2).

``spark.readStream.format("paimon")`` of ``src$audit_log`` with ``consumer-id`` reads a
primary-key table with ``changelog-producer = input``, written by 10 batches of inserts,
updates and deletes, into a Paimon sink, in a child process (consumer_stream_job.py) that is
SIGKILLed after 4 batches and restarted on its checkpoint: the sink ends with each change
(row kind, id, v) exactly once, and the consumer file records the snapshot after the last one.
The query's first start has no checkpoint, so it starts at its consumer, as Java's
PaimonMicroBatchStream does. ``CALL sys.reset_consumer`` / ``clear_consumers`` in Spark's and
Flink's spellings and ``t$consumers`` through Spark.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import reset_consumer
from paimon_pyspark.spark import register, sql
from paimon_pyspark.store.managers import ConsumerManager

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

JOB = Path(__file__).with_name("consumer_stream_job.py")
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
Change = tuple[str, int, str]

SOURCE_OPTIONS: dict[str, str] = {"bucket": "1", "changelog-producer": "input"}
"""The stream reads each snapshot's changelog files: the input as written."""


def _batches() -> list[list[Change]]:
    """10 batches of (kind, id, v): batch 1 inserts ids 0-9; every later one updates two live
    ids, deletes one and inserts two new ones (each id at most once per batch)."""
    live = list(range(10))
    batches: list[list[Change]] = [[("+I", i, f"v{i}-1") for i in live]]
    next_id = 10
    for b in range(2, 11):
        updated, deleted = live[b % len(live)], live[(b * 3) % len(live)]
        if updated == deleted:
            deleted = live[(b * 3 + 1) % len(live)]
        other = live[(b * 5 + 2) % len(live)]
        changes: list[Change] = [("+I", updated, f"v{updated}-{b}")]
        if other not in (updated, deleted):
            changes.append(("+I", other, f"v{other}-{b}"))
        row = next((c for bt in reversed(batches) for c in bt if c[1] == deleted), None)
        assert row is not None
        changes.append(("-D", deleted, row[2]))
        live.remove(deleted)
        for new in (next_id, next_id + 1):
            changes.append(("+I", new, f"v{new}-{b}"))
            live.append(new)
        next_id += 2
        batches.append(changes)
    return batches


def _write(table: FileStoreTable, changes: list[Change]) -> None:
    data = pa.Table.from_pylist([{"id": i, "v": v} for _, i, v in changes], schema=SCHEMA)
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data, row_kinds=[KINDS[k] for k, *_ in changes])
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def _next_snapshot(table: FileStoreTable, consumer_id: str) -> int | None:
    found = ConsumerManager(table.store.file_io, table.path).consumer(consumer_id)
    return None if found is None else found.next_snapshot


def _wait(what: str, done: Callable[[], bool], child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 240
    while not done():
        if child.poll() is not None:
            _, err = child.communicate()
            raise AssertionError(f"the job exited: {err.decode(errors='replace')[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _kill(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is None:
        os.killpg(child.pid, signal.SIGKILL)
    child.communicate(timeout=60)


def _sink_rows(catalog: FileSystemCatalog) -> tuple[list[str], list[tuple[Any, ...]]]:
    sink = catalog.get_table("db.sink")
    rb = sink.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    names = data.schema.names
    return names, sorted(tuple(r.values()) for r in data.to_pylist())


def test_killed_stream_query_resumes_and_writes_each_change_once(
    catalog: FileSystemCatalog, warehouse: str, tmp_path: Path
) -> None:
    """Batches 1-2 are in the table and consumer ``cdc`` is reset to snapshot 1 before the
    query first starts, so it starts at the consumer (each delta, not the merged latest
    snapshot); 3-4 follow one by one; the query is SIGKILLed while batch 5 lands; 6-10 are
    written while it is down; a restart on the checkpoint finishes (Trigger.AvailableNow)."""
    catalog.create_table(
        "db.src", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=SOURCE_OPTIONS)
    )
    source = catalog.get_table("db.src")
    batches = _batches()
    checkpoint = str(tmp_path / "checkpoint")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    args = [sys.executable, str(JOB), warehouse, "db.src$audit_log", "db.sink", checkpoint, "cdc"]

    def consumed(child: subprocess.Popen[bytes]) -> None:
        latest = source.snapshot_manager.latest_id()
        assert latest is not None
        _wait(
            f"consumer at {latest + 1}",
            lambda: _next_snapshot(source, "cdc") == latest + 1,
            child,
        )

    _write(source, batches[0])
    _write(source, batches[1])
    reset_consumer(catalog, "db.src", "cdc", 1)
    child = subprocess.Popen(
        [*args, "run"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        consumed(child)
        for changes in batches[2:4]:
            _write(source, changes)
            consumed(child)
        _write(source, batches[4])  # the kill lands while batch 5 is read, or just before
        time.sleep(0.3)
    finally:
        _kill(child)
    for changes in batches[5:]:  # written while the query is down
        _write(source, changes)

    done = subprocess.run(
        [*args, "finish"], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=400
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]

    latest = source.snapshot_manager.latest_id()
    assert latest is not None
    text = Path(source.path, "consumer", "consumer-cdc").read_text()
    assert text == '{\n  "nextSnapshot" : ' + str(latest + 1) + "\n}"

    names, rows = _sink_rows(catalog)
    assert names == ["kind", "id", "v"]
    assert rows == sorted(c for changes in batches for c in changes)

    sm = catalog.get_table("db.sink").store.snapshot_manager
    appends = [sm.snapshot_if_exists(s) for s in sm.list_ids()]
    ids = [s.commit_identifier for s in appends if s is not None and s.commit_kind == "APPEND"]
    assert len(ids) == len(set(ids)), "a micro-batch was committed twice"


def test_consumer_procedures_and_consumers_table_through_spark(
    spark: SparkSession, tmp_path: Path
) -> None:
    """``CALL sys.reset_consumer`` / ``clear_consumers`` through the SQL door in Spark's and
    Flink's spellings; ``t$consumers`` as Spark reads it."""
    warehouse = str(tmp_path / "wh")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    )
    table = catalog.get_table("db.t")
    for b in range(3):
        _write(table, [("+I", b * 10 + i, f"b{b}") for i in range(3)])
    register(spark, warehouse=warehouse)
    for call in (
        "reset_consumer('db.t', 'q', 3)",
        "reset_consumer(`table` => 'db.t', consumerId => 'old', nextSnapshotId => 1)",
        "reset_consumer(`table` => 'db.t', consumer_id => 'gone', next_snapshot_id => 2)",
    ):
        assert [tuple(r) for r in sql(spark, f"CALL sys.{call}").collect()] == [(True,)]
    consumers = (
        spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t$consumers")
    )
    assert sorted(tuple(r) for r in consumers.load().collect()) == [
        ("gone", 2),
        ("old", 1),
        ("q", 3),
    ]
    sql(
        spark, "CALL sys.clear_consumers(`table` => 'db.t', including_consumers => 'g.*')"
    ).collect()
    sql(spark, "CALL sys.clear_consumers('db.t', 'o.*', 'q')").collect()
    assert ConsumerManager(table.store.file_io, table.path).list_all_ids() == ["q"]
    sql(spark, "CALL sys.reset_consumer('db.t', 'q')").collect()  # no snapshot: deleted
    assert ConsumerManager(table.store.file_io, table.path).list_all_ids() == []
