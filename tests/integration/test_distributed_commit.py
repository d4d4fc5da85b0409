"""Worker processes write, one driver commits: messages cross process boundaries intact.

Four ``spawn`` worker processes each write a slice of the input with their own TableWrite and
return their commit messages, serialized (CommitMessageSerializer bytes) or pickled; the driver
decodes them and commits once. The table must then hold every input row exactly once; a commit
repeated under the same commit user and identifier (a retrying driver) adds no snapshot; and
messages whose data files vanished fail to commit without leaving a snapshot.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all

from paimon_pyspark import (
    CatalogFactory,
    CommitMessage,
    CommitMessageSerializer,
    FileStoreTable,
    FileSystemCatalog,
    Schema,
)
from paimon_pyspark.errors import CommitError
from paimon_pyspark.spec.commit_message import ManifestCommittable

N_WORKERS = 4
N_ROWS = 2000
ENCODINGS = ("serialized", "pickled")
LAYOUTS = {"unaware": {}, "fixed": {"bucket": "2", "bucket-key": "id"}}
ROOT = Path(__file__).resolve().parents[2]
# one table per test, all written by the same four workers (spawning them is the slow part)
TABLES = {
    **{f"db.{enc}_{layout}": layout for enc in ENCODINGS for layout in LAYOUTS},
    "db.noop": "unaware",
    "db.batch_retry": "fixed",
    "db.pending": "unaware",
    "db.vanished": "unaware",
}


def input_rows(lo: int = 0, hi: int = N_ROWS) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"row-{i}" * (i % 3 + 1) for i in ids],
            "dt": [f"d{i % 3}" for i in ids],
        }
    )


def write_slice(warehouse: str, lo: int, hi: int) -> dict[str, tuple[bytes, bytes]]:
    """Runs in a spawned worker: its own catalog and a TableWrite per table; returns each
    table's messages serialized and pickled."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    out = {}
    for identifier in TABLES:
        with catalog.get_table(identifier).new_batch_write_builder().new_write() as write:
            write.write_arrow(input_rows(lo, hi))
            messages = write.prepare_commit()
        out[identifier] = (
            CommitMessageSerializer().serialize_list(messages),
            pickle.dumps(messages),
        )
    return out


@dataclass
class Written:
    catalog: FileSystemCatalog
    payloads: list[dict[str, tuple[bytes, bytes]]]  # per worker

    def table(self, identifier: str) -> FileStoreTable:
        return self.catalog.get_table(identifier)

    def messages(self, identifier: str, encoding: str = "serialized") -> list[CommitMessage]:
        """What the driver decodes from every worker's payload for ``identifier``."""
        serializer = CommitMessageSerializer()
        out: list[CommitMessage] = []
        for payload in self.payloads:
            serialized, pickled = payload[identifier]
            if encoding == "serialized":
                out += serializer.deserialize_list(serializer.get_version(), serialized)
            else:
                out += pickle.loads(pickled)
        return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    warehouse = str(tmp_path_factory.mktemp("distributed") / "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    for identifier, layout in TABLES.items():
        options = LAYOUTS[layout]
        schema = Schema.from_pyarrow_schema(
            input_rows(0, 1).schema, partition_keys=["dt"], options=options
        )
        catalog.create_table(identifier, schema)
    step = N_ROWS // N_WORKERS
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(N_WORKERS, mp_context=context) as pool:
        futures = [
            pool.submit(write_slice, warehouse, i * step, (i + 1) * step) for i in range(N_WORKERS)
        ]
        payloads = [f.result() for f in futures]
    return Written(catalog, payloads)


def ids(table: FileStoreTable) -> list[int]:
    return sorted(read_all(table).column("id").to_pylist())


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_worker_messages_commit_once_and_every_row_lands_once(
    written: Written, encoding: str, layout: str
) -> None:
    identifier = f"db.{encoding}_{layout}"
    table = written.table(identifier)
    messages = written.messages(identifier, encoding)
    assert len(messages) >= N_WORKERS
    assert table.snapshot_manager.latest_id() is None  # workers commit nothing

    builder = table.new_batch_write_builder(commit_user="driver")
    assert builder.new_commit().commit(messages, commit_identifier=7) == [1]

    assert ids(table) == list(range(N_ROWS))
    assert sorted(map(tuple, read_all(table).to_pylist()), key=str) == sorted(
        map(tuple, input_rows().to_pylist()), key=str
    )
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    assert (snapshot.commit_user, snapshot.commit_identifier) == ("driver", 7)
    assert snapshot.total_record_count == N_ROWS


def test_serialized_and_pickled_messages_are_equal(written: Written) -> None:
    for identifier in TABLES:
        assert written.messages(identifier, "serialized") == written.messages(identifier, "pickled")


def test_repeated_commit_identifier_is_a_noop(written: Written) -> None:
    table = written.table("db.noop")
    messages = written.messages("db.noop")
    first = table.new_batch_write_builder(commit_user="driver")
    assert first.new_commit().commit(messages, commit_identifier=1) == [1]

    # the driver crashed after committing; its retry reuses commit user and identifier
    retry = table.new_batch_write_builder().with_commit_user("driver")
    assert retry.new_commit().commit(messages, commit_identifier=1) == []
    # an older identifier of this user is committed too (identifiers only grow)
    assert retry.new_commit().commit(messages, commit_identifier=0) == []
    assert table.snapshot_manager.list_ids() == [1]
    assert ids(table) == list(range(N_ROWS))

    commit = retry.new_commit()
    assert commit.filter_committed([3, 1, 2, 0]) == [2, 3]
    committables = [ManifestCommittable(i) for i in (2, 1)]
    assert commit.filter_committed(committables) == [committables[0]]
    # identifiers belong to a commit user: another user's identifier 1 is not committed
    assert table.new_batch_write_builder().new_commit().filter_committed([1]) == [1]


def test_retried_batch_commit_of_the_same_commit_user_is_a_noop(written: Written) -> None:
    table = written.table("db.batch_retry")
    messages = written.messages("db.batch_retry", "pickled")
    assert table.new_batch_write_builder("job-1").new_commit().commit(messages) == [1]
    assert table.new_batch_write_builder("job-1").new_commit().commit(messages) == []
    assert table.snapshot_manager.list_ids() == [1]
    assert ids(table) == list(range(N_ROWS))


def test_filter_and_commit_commits_only_what_is_pending(written: Written) -> None:
    table = written.table("db.pending")
    messages = written.messages("db.pending")
    half = len(messages) // 2
    commit = table.new_batch_write_builder("stream").new_commit()
    assert commit.commit(messages[:half], commit_identifier=1) == [1]
    pending = {1: messages[:half], 2: messages[half:]}
    assert commit.filter_and_commit(pending) == 1
    assert commit.filter_and_commit(pending) == 0
    assert table.snapshot_manager.list_ids() == [1, 2]
    assert ids(table) == list(range(N_ROWS))


def test_commit_of_vanished_files_fails_without_a_snapshot(written: Written) -> None:
    table = written.table("db.vanished")
    messages = written.messages("db.vanished")
    victim = messages[-1]
    commit = table.new_batch_write_builder(commit_user="driver").new_commit()
    os.remove(commit.data_file_path(victim, victim.new_files[0].file_name))
    with pytest.raises(CommitError, match="missing; nothing was committed"):
        commit.commit(messages, commit_identifier=1)
    assert table.snapshot_manager.latest_id() is None
    assert table.new_batch_write_builder("driver").new_commit().filter_committed([1]) == [1]


@pytest.mark.slow
@pytest.mark.uses_spark  # its Spark runs in a subprocess; it goes with the Spark half
def test_distributed_write_example_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "distributed_write.py"), str(tmp_path / "wh")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "retried -> []" in proc.stdout
    assert ": ok" in proc.stdout
