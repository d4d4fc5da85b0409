"""Commit messages from outside are not trusted as paths (issue 14).

A victim file sits outside the table (``tmp_path/outside/victim.parquet``, a real Parquet file
with rows). ``../../../../outside/victim.parquet`` names it from a bucket directory, from
``index/`` and from ``manifest/``. A message naming it (as a data file, an extra file, an
index file or an external path) is refused with InvalidCommitMessageError by every entry:
deserialized bytes, objects given to ``commit``, ``filter_and_commit`` and ``abort``, and a
Spark job's staging records. Nothing is committed, nothing is deleted, and the snapshot does
not move. A manifest on disk that names the victim (as another engine could write one) is
refused by reads with CorruptTableError and skipped, with a warning, by expiry, which still
expires what it should.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.commit.file_store_commit import new_store_commit
from paimon_pyspark.errors import CorruptTableError, InvalidCommitMessageError
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots
from paimon_pyspark.spark.job import STAGING_DIR, TableRef, TaskResult, WriteJob, staging_record
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import EMPTY_ROW
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement, DataIncrement
from paimon_pyspark.spec.commit_message_serde import CommitMessageSerializer
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.manifest import DeletionVectorRange, IndexFileMeta

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
TRAVERSAL = "../../../../outside/victim.parquet"
"""The victim, named from ``<table>/bucket-0``, ``<table>/index`` or ``<table>/manifest``."""


def rows(*ids: int) -> pa.Table:
    return pa.table({"id": list(ids), "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "victim.parquet"
    path.parent.mkdir()
    pq.write_table(rows(666, 667), path)
    return path


@pytest.fixture
def table(catalog: FileSystemCatalog, victim: Path) -> FileStoreTable:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    table = catalog.get_table("db.t")
    write_commit(table, rows(1, 2))
    for sub in ("bucket-0", "index", "manifest"):
        assert os.path.normpath(os.path.join(table.path, sub, TRAVERSAL)) == str(victim)
    return table


def prepared(table: FileStoreTable, *ids: int) -> CommitMessage:
    """A real message of one new data file (written, not committed)."""
    with table.new_batch_write_builder().new_write() as write:
        write.write_arrow(rows(*ids))
        (message,) = write.prepare_commit()
    return message


def with_file(message: CommitMessage, **changes: object) -> CommitMessage:
    (f,) = message.new_files
    increment = replace(message.data_increment, new_files=(replace(f, **changes),))
    return replace(message, data_increment=increment)


def with_index(message: CommitMessage, index: IndexFileMeta) -> CommitMessage:
    increment = replace(message.data_increment, new_index_files=(index,))
    return replace(message, data_increment=increment)


def through_bytes(message: CommitMessage) -> CommitMessage:
    """The message as a driver gets it from another process: CommitMessageSerializer bytes."""
    serializer = CommitMessageSerializer()
    return serializer.deserialize(serializer.get_version(), serializer.serialize(message))


def victim_meta(victim: Path, base: DataFileMeta) -> DataFileMeta:
    return replace(base, file_name=TRAVERSAL, file_size=victim.stat().st_size, row_count=2)


def assert_untouched(table: FileStoreTable, victim: Path, latest: int | None = 1) -> None:
    assert table.snapshot_manager.latest_id() == latest
    assert victim.is_file()
    assert pq.read_table(victim).num_rows == 2


FORGERIES: dict[str, Callable[[CommitMessage, Path], CommitMessage]] = {
    "data file name": lambda m, v: with_file(m, file_name=TRAVERSAL, file_size=v.stat().st_size),
    "extra file": lambda m, v: with_file(m, extra_files=(TRAVERSAL,)),
    "data external path": lambda m, v: with_file(m, external_path=str(v)),
    "index file name": lambda m, v: with_index(m, IndexFileMeta("HASH", TRAVERSAL, 8, 2)),
    "index external path": lambda m, v: with_index(
        m, IndexFileMeta("HASH", "index-x-0", 8, 2, external_path=str(v))
    ),
    "deletion vector's data file": lambda m, v: with_index(
        m,
        IndexFileMeta(
            "DELETION_VECTORS", "index-x-1", 8, 1, (DeletionVectorRange(TRAVERSAL, 1, 4, 1),)
        ),
    ),
}


@pytest.mark.parametrize("where", list(FORGERIES))
def test_commit_refuses_a_deserialized_message_naming_a_file_outside_the_table(
    table: FileStoreTable, victim: Path, where: str
) -> None:
    forged = through_bytes(FORGERIES[where](prepared(table, 3), victim))

    with pytest.raises(InvalidCommitMessageError) as raised:
        table.new_batch_write_builder().new_commit().commit([forged])

    assert "'db.t'" in str(raised.value)
    assert str(victim) in str(raised.value) or TRAVERSAL in str(raised.value)
    assert_untouched(table, victim)
    assert sort_rows(read_all(table)) == sort_rows(rows(1, 2))


def test_an_external_path_inside_the_table_is_refused_too(
    table: FileStoreTable, victim: Path
) -> None:
    """No ``data-file.external-paths`` is configured (the option is not supported yet), so no
    external path is one of the table's, even one that points into the table itself."""
    message = prepared(table, 3)
    inside = os.path.join(table.path, "bucket-0", message.new_files[0].file_name)
    forged = with_file(message, external_path=inside)

    with pytest.raises(InvalidCommitMessageError, match="external path"):
        table.new_batch_write_builder().new_commit().commit([forged])
    assert_untouched(table, victim)


@pytest.mark.parametrize(
    "name",
    [TRAVERSAL, "ABSOLUTE", "bucket-0/data.parquet", "..\\data.parquet", "..", ".", "", "a\0b"],
)
def test_only_bare_file_names_are_committed(table: FileStoreTable, victim: Path, name: str) -> None:
    name = str(victim) if name == "ABSOLUTE" else name
    forged = with_file(prepared(table, 3), file_name=name)

    with pytest.raises(InvalidCommitMessageError, match="not a bare file name"):
        table.new_batch_write_builder().new_commit().commit([forged])
    assert_untouched(table, victim)


def test_filter_and_commit_checks_every_message_before_committing_any(
    table: FileStoreTable, victim: Path
) -> None:
    good = prepared(table, 3)
    forged = with_file(prepared(table, 4), file_name=TRAVERSAL, file_size=victim.stat().st_size)
    commit = table.new_batch_write_builder().new_commit()

    with pytest.raises(InvalidCommitMessageError, match="victim.parquet"):
        commit.filter_and_commit({1: [good], 2: [forged]})

    assert_untouched(table, victim)
    assert sort_rows(read_all(table)) == sort_rows(rows(1, 2))


def test_abort_refuses_the_whole_call_and_deletes_nothing(
    table: FileStoreTable, victim: Path
) -> None:
    good = prepared(table, 3)
    good_path = os.path.join(table.path, "bucket-0", good.new_files[0].file_name)
    forged = with_file(prepared(table, 4), file_name=TRAVERSAL)
    commit = table.new_batch_write_builder().new_commit()

    with pytest.raises(InvalidCommitMessageError, match="victim.parquet"):
        commit.abort([good, through_bytes(forged)])

    assert_untouched(table, victim)
    assert os.path.isfile(good_path)  # refused before the first deletion
    commit.abort([good])
    assert not os.path.exists(good_path)


# --- manifests on disk that name a file outside the table ---------------------------------


def store_commit(table: FileStoreTable, *messages: CommitMessage) -> None:
    """Commit below TableCommit's checks, as another engine could write the manifests."""
    new_store_commit(table.store, "other-engine").commit(list(messages))


def expire_all_but_latest(table: FileStoreTable) -> int:
    return ExpireSnapshots(table.store, ExpireConfig(retain_max=1, retain_min=1)).expire()


def test_a_read_refuses_a_manifest_entry_naming_a_file_outside_the_table(
    table: FileStoreTable, victim: Path
) -> None:
    message = prepared(table, 3)
    store_commit(table, with_file(message, file_name=TRAVERSAL, file_size=victim.stat().st_size))
    assert table.snapshot_manager.latest_id() == 2

    with pytest.raises(CorruptTableError, match="victim.parquet"):
        read_all(table)


def test_expiry_skips_data_and_extra_files_outside_the_table(
    table: FileStoreTable, victim: Path, caplog: pytest.LogCaptureFixture
) -> None:
    extra = victim.parent / "victim.extra"
    extra.write_bytes(b"not paimon's")
    base = prepared(table, 3).new_files[0]
    outside = victim_meta(victim, base)
    with_extra = replace(base, extra_files=("../../../../outside/victim.extra",))
    store_commit(table, CommitMessage(EMPTY_ROW, 0, -1, DataIncrement((outside, with_extra))))
    store_commit(table, CommitMessage(EMPTY_ROW, 0, -1, DataIncrement((), (outside, with_extra))))
    write_commit(table, rows(5))
    latest = table.snapshot_manager.latest_id()
    assert latest == 4

    with caplog.at_level(logging.WARNING, logger="paimon_pyspark.maintenance"):
        assert expire_all_but_latest(table) == 3

    assert_untouched(table, victim, latest)
    assert extra.read_bytes() == b"not paimon's"
    assert TRAVERSAL in caplog.text and "victim.extra" in caplog.text
    assert table.snapshot_manager.earliest_id() == latest
    assert not os.path.exists(os.path.join(table.path, "bucket-0", base.file_name))
    assert sort_rows(read_all(table)) == sort_rows(rows(1, 2, 5))


def test_expiry_skips_a_manifest_outside_the_table(
    table: FileStoreTable, victim: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_commit(table, rows(3))
    mio = table.manifest_io
    first = table.snapshot_manager.snapshot(1)
    metas = mio.read_manifest_list(first.delta_manifest_list)
    forged = [*metas, replace(metas[0], file_name=TRAVERSAL)]
    data = mf.encode_manifest_list(forged, mio.codec)
    Path(mio.path(first.delta_manifest_list)).write_bytes(data)

    with caplog.at_level(logging.WARNING, logger="paimon_pyspark.maintenance"):
        assert expire_all_but_latest(table) == 1

    assert_untouched(table, victim, 2)
    assert TRAVERSAL in caplog.text
    assert not os.path.exists(mio.path(first.delta_manifest_list))
    assert sort_rows(read_all(table)) == sort_rows(rows(1, 2, 3))


def test_expiry_skips_an_index_file_outside_the_table(
    table: FileStoreTable, victim: Path, caplog: pytest.LogCaptureFixture
) -> None:
    empty = CommitMessage(EMPTY_ROW, 0, -1)
    store_commit(table, with_index(empty, IndexFileMeta("HASH", TRAVERSAL, 8, 2)))
    index_dir = os.path.join(table.path, "index")
    os.makedirs(index_dir, exist_ok=True)
    Path(index_dir, "index-legit-0").write_bytes(b"\0" * 8)
    store_commit(table, with_index(empty, IndexFileMeta("HASH", "index-legit-0", 8, 2)))
    assert table.snapshot_manager.latest_id() == 3

    with caplog.at_level(logging.WARNING, logger="paimon_pyspark.maintenance"):
        assert expire_all_but_latest(table) == 2

    assert_untouched(table, victim, 3)
    assert TRAVERSAL in caplog.text
    assert os.path.isfile(os.path.join(index_dir, "index-legit-0"))


# --- a Spark job's staging records ----------------------------------------------------------


def test_a_job_refuses_a_staged_message_naming_a_file_outside_the_table(
    warehouse: str, table: FileStoreTable, victim: Path, caplog: pytest.LogCaptureFixture
) -> None:
    forged = with_file(prepared(table, 3), file_name=TRAVERSAL, file_size=victim.stat().st_size)
    job = WriteJob(TableRef(warehouse, "db.t"))
    with pytest.raises(InvalidCommitMessageError, match="victim.parquet"):
        job.commit([TaskResult("", (forged,))])
    assert_untouched(table, victim)

    planted = os.path.join(job.staging_dir(table), "planted")
    Path(planted).write_bytes(staging_record([forged]))
    with caplog.at_level(logging.WARNING, logger="paimon_pyspark.spark.job"):
        job.abort()

    assert_untouched(table, victim)
    assert any("refused" in r.getMessage() and planted in r.getMessage() for r in caplog.records)
    assert os.listdir(os.path.join(table.path, STAGING_DIR)) == []


def test_compact_increment_files_are_checked_too(table: FileStoreTable, victim: Path) -> None:
    f = prepared(table, 3).new_files[0]
    forged = CommitMessage(
        b"\0" * 4, 0, -1, compact_increment=CompactIncrement((), (victim_meta(victim, f),))
    )
    with pytest.raises(InvalidCommitMessageError, match="compact_after"):
        table.new_batch_write_builder().new_commit().commit([forged])
    assert_untouched(table, victim)


def test_a_manifest_name_with_a_nul_fails_the_read_as_a_corrupt_table(
    table: FileStoreTable,
) -> None:
    """A damaged manifest list can decode to a name holding a NUL byte (the fuzzer's find):
    opening it would raise Python's ValueError from deep inside the file IO."""
    mio = table.manifest_io
    first = table.snapshot_manager.snapshot(1)
    metas = mio.read_manifest_list(first.delta_manifest_list)
    forged = [replace(metas[0], file_name="manifest-\0-0")]
    data = mf.encode_manifest_list(forged, mio.codec)
    Path(mio.path(first.delta_manifest_list)).write_bytes(data)
    with pytest.raises(CorruptTableError, match="NUL character"):
        read_all(table)
