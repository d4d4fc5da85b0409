"""The staging records of a distributed job (spark/job.py) are versioned bytes, and a file
planted in a job's staging directory is refused: a pickle crafted to run ``os.system`` when
unpickled never runs, the refusal is a CorruptRecordError naming the file, and the job still
commits or aborts cleanly. The job's tasks run here, in this process, as Spark would run them.
"""

from __future__ import annotations

import logging
import os
import pickle
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CorruptRecordError
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
    assert os.listdir(job.staging_dir(table)) == ["_FINISHED"]
