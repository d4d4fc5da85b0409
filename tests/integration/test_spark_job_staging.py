"""The staging records of a distributed job (spark/job.py) are versioned bytes, and a file
planted in a job's staging directory is refused: a pickle crafted to run ``os.system`` when
unpickled never runs, the refusal is a CorruptRecordError naming the file, and the job still
commits or aborts cleanly. A job leaves nothing in its staging directory, and an attempt that
outlives it removes its own files. The job's tasks run here, in this process, as Spark would
run them.
"""

from __future__ import annotations

import logging
import os
import pickle
import time
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CorruptRecordError, PaimonError
from paimon_pyspark.spark.job import (
    STAGING_DIR,
    TableRef,
    TaskResult,
    WriteJob,
    read_staging_record,
)

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string())])


class RunsCode:
    """Unpickling it calls ``os.system`` to create ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def rows(ids: range) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [{"id": i, "dt": "a" if i % 2 else "b"} for i in ids], schema=SCHEMA
    )


def data_files(table: FileStoreTable) -> set[str]:
    return {f for _, _, fs in os.walk(table.path) for f in fs if f.startswith("data-")}


@pytest.fixture
def table(catalog: FileSystemCatalog) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], options={"bucket": "2", "bucket-key": "id"}
    )
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def plant(job: WriteJob, table: FileStoreTable, marker: Path) -> str:
    """A file in the job's staging directory, as a tampering user or process could put it."""
    directory = job.staging_dir(table)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "planted")
    with open(path, "wb") as out:
        out.write(pickle.dumps([RunsCode(marker)]))
    return path


def test_staging_records_are_versioned_bytes(warehouse: str, table: FileStoreTable) -> None:
    job = WriteJob(TableRef(warehouse, "db.t"))
    result = job.write_task([rows(range(10))])
    path = os.path.join(job.staging_dir(table), result.record)
    with open(path, "rb") as f:
        assert f.read(4) == b"PPsr"
    written = {f.file_name for m in result.messages for f in m.new_files}
    listed = read_staging_record(table.file_io, path)
    assert {f.file_name for m in listed for f in m.new_files} == written
    assert TaskResult.from_bytes(result.to_bytes()) == result
    job.abort()


def test_a_planted_pickle_is_refused_and_the_job_commits_cleanly(
    warehouse: str,
    table: FileStoreTable,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    marker = tmp_path / "code-ran"
    job = WriteJob(TableRef(warehouse, "db.t"))
    kept = job.write_task([rows(range(0, 20))])
    lost = job.write_task([rows(range(100, 120))])  # an attempt Spark did not keep
    lost_files = {f.file_name for m in lost.messages for f in m.new_files}
    planted = plant(job, table, marker)

    with pytest.raises(CorruptRecordError, match=f"staging record {planted} does not decode"):
        read_staging_record(table.file_io, planted)
    with pytest.raises(CorruptRecordError, match="task result does not decode"):
        TaskResult.from_bytes(pickle.dumps(kept))
    with caplog.at_level(logging.WARNING, logger="paimon_pyspark.spark.job"):
        ids = job.commit([kept])

    assert not marker.exists()
    assert any("refused" in r.getMessage() and planted in r.getMessage() for r in caplog.records)
    assert ids == [1]
    assert sort_rows(read_all(table)) == sort_rows(pa.Table.from_batches([rows(range(20))]))
    assert not data_files(table) & lost_files
    assert data_files(table) == {f.file_name for m in kept.messages for f in m.new_files}
    assert os.listdir(os.path.join(table.path, STAGING_DIR)) == []


def test_a_planted_pickle_is_refused_and_the_job_aborts_cleanly(
    warehouse: str,
    table: FileStoreTable,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    marker = tmp_path / "code-ran"
    job = WriteJob(TableRef(warehouse, "db.t"))
    job.write_task([rows(range(0, 20))])
    job.write_task([rows(range(100, 120))])
    planted = plant(job, table, marker)

    with caplog.at_level(logging.WARNING, logger="paimon_pyspark.spark.job"):
        job.abort()

    assert not marker.exists()
    assert any(planted in r.getMessage() for r in caplog.records)
    assert table.snapshot_manager.latest_id() is None
    assert data_files(table) == set()
    assert os.listdir(os.path.join(table.path, STAGING_DIR)) == []


def staged_files(table: FileStoreTable) -> list[str]:
    root = os.path.join(table.path, STAGING_DIR)
    return [f for _, _, fs in os.walk(root) for f in fs]


@pytest.mark.parametrize("end", ["commit", "abort"])
def test_an_attempt_that_outlives_its_job_removes_its_own_files(
    warehouse: str, table: FileStoreTable, end: str
) -> None:
    """The job leaves no marker behind, yet an attempt still running when it ends (a
    speculative one, or one of a failed job) finds it closed and cleans up after itself."""
    job = WriteJob(TableRef(warehouse, "db.t"))
    kept = job.write_task([rows(range(20))])
    if end == "commit":
        job.commit([kept])
    else:
        job.abort()
    committed = data_files(table)

    with pytest.raises(PaimonError, match="committed or aborted while this task attempt ran"):
        job.write_task([rows(range(100, 120))])

    assert committed == (
        {f.file_name for m in kept.messages for f in m.new_files} if end == "commit" else set()
    )
    assert data_files(table) == committed
    assert staged_files(table) == []


def test_a_later_job_removes_staging_directories_over_for_an_hour(
    warehouse: str, table: FileStoreTable
) -> None:
    """Directories of earlier versions' jobs (a ``_FINISHED`` marker) and empty ones go once
    an hour old; a live job's directory (``_OPEN``) stays, however old."""
    root = os.path.join(table.path, STAGING_DIR)
    old = time.time() - 2 * 3600

    def job_dir(name: str, files: list[str], mtime: float) -> str:
        directory = os.path.join(root, name)
        os.makedirs(directory)
        for f in files:
            open(os.path.join(directory, f), "wb").close()
            os.utime(os.path.join(directory, f), (mtime, mtime))
        os.utime(directory, (mtime, mtime))
        return directory

    job_dir("legacy-old", ["_FINISHED", "record"], old)
    job_dir("legacy-recent", ["_FINISHED"], time.time())
    job_dir("empty-old", [], old)
    job_dir("live-old", ["_OPEN", "record"], old)

    job = WriteJob(TableRef(warehouse, "db.t"))
    job.commit([job.write_task([rows(range(10))])])

    assert sorted(os.listdir(root)) == ["legacy-recent", "live-old"]
