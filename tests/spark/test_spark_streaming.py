"""Structured Streaming through format("paimon"): the sink commits every micro-batch exactly
once (also when Spark replays one after a crash, and after a SIGKILL), and the source hands out
the latest snapshot, then each new commit's rows, once each."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError, UnsupportedOperationError, UnsupportedOptionError
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
SPARK_SCHEMA = "id BIGINT, v STRING"
JOB = Path(__file__).with_name("streaming_job.py")
Row = tuple[int, str]


def _chunks(n: int, size: int, overlap: int = 0) -> list[list[Row]]:
    """``n`` input files; file ``i`` holds ids from ``i * (size - overlap)``, valued ``f<i>``."""
    step = size - overlap
    return [[(i * step + k, f"f{i}") for k in range(size)] for i in range(n)]


def _source(root: Path, chunks: list[list[Row]]) -> str:
    """Parquet files Spark's file source reads one per micro-batch, in order (by mtime)."""
    root.mkdir(parents=True, exist_ok=True)
    now = time.time() - 1000
    for i, rows in enumerate(chunks):
        path = root / f"part-{i:03d}.parquet"
        ids = pa.array([r[0] for r in rows], pa.int64())
        pq.write_table(pa.table({"id": ids, "v": [r[1] for r in rows]}), path)
        os.utime(path, (now + i, now + i))
    return str(root)


def _stream_into(
    spark: SparkSession,
    source: str,
    warehouse: str,
    table: str,
    checkpoint: str,
    per_batch: int,
    **options: str,
) -> str:
    """Stream the files into ``table`` until none is left; returns the query's id."""
    frames = spark.readStream.schema(SPARK_SCHEMA).option("maxFilesPerTrigger", per_batch)
    query = (
        frames.parquet(source)
        .writeStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", table)
        .option("checkpointLocation", checkpoint)
        .options(**options)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return str(query.id)


def _snapshots(table: FileStoreTable) -> list[tuple[str, int, str]]:
    """(commit user, commit identifier, kind) of every snapshot, oldest first."""
    sm = table.snapshot_manager
    shots = [sm.snapshot(i) for i in sm.list_ids()]
    return [(s.commit_user, s.commit_identifier, s.commit_kind) for s in shots]


def _rows(table: FileStoreTable) -> list[Row]:
    rb = table.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(zip(data.column("id").to_pylist(), data.column("v").to_pylist(), strict=True))


def _files_on_disk(table: FileStoreTable) -> set[str]:
    return {f for _, _, names in os.walk(table.path) for f in names if f.startswith("data-")}


def _live_files(table: FileStoreTable) -> set[str]:
    latest = table.snapshot_manager.latest()
    assert latest is not None
    return {e.file.file_name for e in table.store.manifest_io.live_entries(latest)}


def _staging(table: FileStoreTable) -> list[str]:
    root = Path(table.path) / ".paimon-staging"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def _create(catalog: FileSystemCatalog, name: str, kind: str) -> FileStoreTable:
    """``kind``: append (bucket -1), primary-key (2 fixed buckets) or dynamic-bucket."""
    if kind == "append":
        schema = Schema.from_pyarrow_schema(SCHEMA)
    else:
        bucket = "2" if kind == "primary-key" else "-1"
        schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": bucket})
    catalog.create_table(name, schema)
    return catalog.get_table(name)


def _expected(chunks: list[list[Row]], kind: str) -> list[Row]:
    if kind == "append":
        return sorted(r for rows in chunks for r in rows)
    latest = {r[0]: r for rows in chunks for r in rows}  # later files upsert earlier ones
    return sorted(latest.values())


# --- sink ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["append", "primary-key", "dynamic-bucket"])
def test_stream_sink_commits_each_micro_batch_as_one_snapshot_with_its_batch_id(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: Path, kind: str
) -> None:
    """The commit user is named by the query id, or given (option ``commit-user``)."""
    table = _create(catalog, "db.t", kind)
    chunks = _chunks(3, 10, overlap=4)
    checkpoint = str(tmp_path / "checkpoint")
    given = {"commit-user": "orders-sink"} if kind == "primary-key" else {}
    source = _source(tmp_path / "in", chunks)
    query_id = _stream_into(spark, source, warehouse, "db.t", checkpoint, 1, **given)

    user = given.get("commit-user", f"spark-streaming-{query_id}")
    assert _snapshots(table) == [(user, batch, "APPEND") for batch in range(3)]
    assert _rows(table) == _expected(chunks, kind)
    assert _files_on_disk(table) == _live_files(table)
    assert _staging(table) == []


def test_replayed_micro_batch_is_not_committed_twice(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: Path
) -> None:
    """Deleting the last commit-log entry leaves the checkpoint as a crash between our Paimon
    commit and Spark's commit log leaves it: Spark runs that batch again, with its id."""
    table = _create(catalog, "db.t", "append")
    chunks = _chunks(3, 10)
    source = _source(tmp_path / "in", chunks)
    checkpoint = tmp_path / "checkpoint"
    query_id = _stream_into(spark, source, warehouse, "db.t", str(checkpoint), 1)
    before = _snapshots(table)
    assert [identifier for _, identifier, _ in before] == [0, 1, 2]

    for name in ("2", ".2.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    assert _stream_into(spark, source, warehouse, "db.t", str(checkpoint), 1) == query_id

    assert (checkpoint / "commits" / "2").is_file()  # Spark ran batch 2 again
    assert _snapshots(table) == before
    assert _rows(table) == _expected(chunks, "append")
    assert _files_on_disk(table) == _live_files(table)  # the replay's files are gone
    assert _staging(table) == []


def test_new_checkpoint_is_a_new_query_whose_batches_are_committed(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: Path
) -> None:
    """A wiped checkpoint restarts the batch ids at 0: under a new commit user (a new query
    id) they are new commits, not replays to drop."""
    table = _create(catalog, "db.t", "append")
    chunks = _chunks(2, 10)
    source = _source(tmp_path / "in", chunks)
    checkpoint = tmp_path / "checkpoint"
    first = _stream_into(spark, source, warehouse, "db.t", str(checkpoint), 1)
    shutil.rmtree(checkpoint)
    second = _stream_into(spark, source, warehouse, "db.t", str(checkpoint), 1)

    users = [f"spark-streaming-{first}"] * 2 + [f"spark-streaming-{second}"] * 2
    assert _snapshots(table) == [(u, b % 2, "APPEND") for b, u in enumerate(users)]
    assert _rows(table) == sorted(_expected(chunks, "append") * 2)


def test_failed_micro_batch_is_aborted_and_leaves_no_file(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: Path
) -> None:
    """One task of the batch fails on a null key (every attempt), the other writes its file:
    Spark aborts the batch and the sink deletes that file and the batch's staging records."""
    table = _create(catalog, "db.t", "primary-key")
    source = tmp_path / "in"
    _source(source, [[(1, "a"), (2, "b")]])
    pq.write_table(
        pa.table({"id": pa.array([None, 5], pa.int64()), "v": ["x", "y"]}),
        source / "part-001.parquet",
    )
    with pytest.raises(StreamingQueryException, match="(?i)null"):
        _stream_into(spark, str(source), warehouse, "db.t", str(tmp_path / "checkpoint"), 2)

    assert table.snapshot_manager.latest_id() is None
    assert _files_on_disk(table) == set()
    assert _staging(table) == []


def test_killed_stream_query_commits_every_micro_batch_once(
    catalog: FileSystemCatalog, warehouse: str, tmp_path: Path
) -> None:
    """The query runs in a child process whose whole process group (driver JVM and Python
    workers) is SIGKILLed once some batches are in the table; a restart on the same
    checkpoint finishes the stream, and every batch id is committed exactly once."""
    table = _create(catalog, "db.t", "append")
    chunks = _chunks(6, 50)
    source = _source(tmp_path / "in", chunks)
    checkpoint = str(tmp_path / "checkpoint")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    args = [sys.executable, str(JOB), source, warehouse, "db.t", checkpoint]

    child = subprocess.Popen(
        [*args, "run"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and child.poll() is None:
            if len(table.snapshot_manager.list_ids()) >= 2:
                break
            time.sleep(0.05)
        landed = len(table.snapshot_manager.list_ids())
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        _, err = child.communicate(timeout=60)
    assert 2 <= landed < 6, err.decode(errors="replace")[-3000:]

    done = subprocess.run(
        [*args, "finish"], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=400
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]

    query_id = json.loads((Path(checkpoint) / "metadata").read_text())["id"]
    user = f"spark-streaming-{query_id}"
    assert _snapshots(table) == [(user, batch, "APPEND") for batch in range(6)]
    assert _rows(table) == _expected(chunks, "append")


def test_stream_commit_user_is_given_or_named_by_the_query_id() -> None:
    from paimon_pyspark.spark.streaming import stream_commit_user  # the Data Source API

    assert stream_commit_user("db.t", "orders-sink", "q1") == "orders-sink"
    assert stream_commit_user("db.t", None, "q1") == "spark-streaming-q1"
    assert stream_commit_user("db.t", " ", "q1") == "spark-streaming-q1"
    with pytest.raises(OptionError, match="commit-user"):
        stream_commit_user("db.t", None, None)


def test_stream_sink_refuses_what_the_batch_door_refuses(
    catalog: FileSystemCatalog, warehouse: str
) -> None:
    from paimon_pyspark.spark.datasource import PaimonDataSource  # the Data Source API

    cross_partition = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["v"], primary_keys=["id"], options={"bucket": "-1"}
    )
    catalog.create_table("db.cross", cross_partition)
    _create(catalog, "db.t", "append")
    schema = StructType([StructField("id", LongType()), StructField("v", StringType())])

    def source(table: str, **extra: str) -> PaimonDataSource:
        return PaimonDataSource({"warehouse": warehouse, "table": table, **extra})

    with pytest.raises(UnsupportedOptionError, match="cross-partition"):
        source("db.cross", checkpointlocation="/ck").streamWriter(schema, False)
    with pytest.raises(UnsupportedOperationError, match="complete"):
        source("db.t", checkpointlocation="/ck").streamWriter(schema, True)
    for key in ("write.merge-schema", "mergeschema"):
        with pytest.raises(UnsupportedOptionError, match="does not merge schemas"):
            source("db.t", **{key: "true"}).streamWriter(schema, False)
    with pytest.raises(UnsupportedOptionError, match="scan.snapshot-id"):
        source("db.t", **{"scan.snapshot-id": "1"}).streamReader(schema)
    with pytest.raises(UnsupportedOptionError, match="from-timestamp"):
        source("db.t", **{"scan.mode": "from-timestamp"}).streamReader(schema)


# --- source --------------------------------------------------------------------------------


def _commit(table: FileStoreTable, rows: list[Row]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        ids = pa.array([r[0] for r in rows], pa.int64())
        write.write_arrow(pa.table({"id": ids, "v": [r[1] for r in rows]}, schema=SCHEMA))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def _memory_rows(spark: SparkSession, name: str) -> list[Row]:
    return sorted((r["id"], r["v"]) for r in spark.sql(f"SELECT id, v FROM {name}").collect())


def test_stream_source_reads_the_latest_snapshot_then_each_new_commit_once(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = _create(catalog, "db.t", "append")
    first = [(i, "a") for i in range(10)]
    second = [(i, "b") for i in range(10, 20)]
    _commit(table, first)
    _commit(table, second)
    frames = spark.readStream.format("paimon").option("warehouse", warehouse)
    queries = [
        frames.option("table", "db.t")
        .option("scan.mode", mode)
        .load()
        .writeStream.format("memory")
        .queryName(f"paimon_stream_{mode.replace('-', '_')}")
        .start()
        for mode in ("latest-full", "latest")
    ]
    try:
        for query in queries:
            query.processAllAvailable()
        assert _memory_rows(spark, "paimon_stream_latest_full") == first + second
        assert _memory_rows(spark, "paimon_stream_latest") == []

        third = [(i, "c") for i in range(20, 30)]
        _commit(table, third)
        assert compact(catalog, "db.t", options={"compaction.min.file-num": "2"})
        fourth = [(i, "d") for i in range(30, 35)]
        _commit(table, fourth)
        for query in queries:
            query.processAllAvailable()
    finally:
        for query in queries:
            query.stop()
    kinds = [kind for _, _, kind in _snapshots(table)]
    assert kinds == ["APPEND", "APPEND", "APPEND", "COMPACT", "APPEND"]
    assert _memory_rows(spark, "paimon_stream_latest_full") == first + second + third + fourth
    assert _memory_rows(spark, "paimon_stream_latest") == third + fourth


def test_stream_source_of_a_primary_key_table_reads_merged_rows_then_upserts(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """The first batch is the merged table; a later batch holds the rows the commit wrote."""
    table = _create(catalog, "db.t", "primary-key")
    _commit(table, [(i, "a") for i in range(10)])
    _commit(table, [(i, "b") for i in range(10)])
    frames = spark.readStream.format("paimon").option("warehouse", warehouse)
    query = (
        frames.option("table", "db.t")
        .option("filter", "id < 12")
        .load()
        .writeStream.format("memory")
        .queryName("paimon_stream_pk")
        .start()
    )
    try:
        query.processAllAvailable()
        assert _memory_rows(spark, "paimon_stream_pk") == [(i, "b") for i in range(10)]
        _commit(table, [(i, "c") for i in range(5, 15)])
        query.processAllAvailable()
    finally:
        query.stop()
    expected = [(i, "b") for i in range(10)] + [(i, "c") for i in range(5, 12)]
    assert _memory_rows(spark, "paimon_stream_pk") == sorted(expected)
