"""The commit protocol under failure: a killed committer, racing committers, vanished files."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import CommitError

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])

_KILLED_COMMIT = textwrap.dedent(
    """
    import os, signal, sys
    import pyarrow as pa
    from paimon_pyspark import CatalogFactory
    from paimon_pyspark.store.managers import SnapshotManager

    def die(self, snapshot):
        # manifests and manifest lists are written; the snapshot is not published yet
        os.kill(os.getpid(), signal.SIGKILL)

    SnapshotManager.try_publish = die
    table = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table("db.t")
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(pa.table({"id": [100, 101], "dt": ["b", "b"]}))
    builder.new_commit().commit(write.prepare_commit())
    """
)


def test_commit_killed_before_publishing_leaves_previous_snapshot(
    catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    write_commit(table, pa.table({"id": [1, 2], "dt": ["a", "a"]}))
    manifests_before = set(os.listdir(Path(table.path) / "manifest"))

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_COMMIT, warehouse], env=env, capture_output=True, timeout=120
    )
    assert proc.returncode == -9, proc.stderr.decode()
    manifests_after = set(os.listdir(Path(table.path) / "manifest"))
    assert manifests_after > manifests_before, "the killed commit had written its manifests"

    assert table.snapshot_manager.latest_id() == 1
    assert sorted(read_all(table).column("id").to_pylist()) == [1, 2]

    assert write_commit(table, pa.table({"id": [3], "dt": ["c"]})) == [2]
    assert sorted(read_all(table).column("id").to_pylist()) == [1, 2, 3]


def test_racing_committers_all_land_in_contiguous_snapshots(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    prepared = []
    for i in range(6):
        builder = table.new_batch_write_builder()
        write = builder.new_write()
        write.write_arrow(pa.table({"id": [i * 10, i * 10 + 1], "dt": [f"p{i % 2}"] * 2}))
        prepared.append((builder, write.prepare_commit()))
        write.close()
    barrier = threading.Barrier(len(prepared))
    results: list[list[int]] = []

    def commit(builder: object, messages: list[object]) -> None:
        barrier.wait()
        results.append(builder.new_commit().commit(messages))  # type: ignore[attr-defined]

    threads = [threading.Thread(target=commit, args=p) for p in prepared]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(sid for r in results for sid in r) == [1, 2, 3, 4, 5, 6]
    expected = sorted(i * 10 + k for i in range(6) for k in range(2))
    assert sorted(read_all(table).column("id").to_pylist()) == expected
    assert table.snapshot_manager.latest().total_record_count == 12  # type: ignore[union-attr]


def test_commit_of_vanished_files_fails_without_a_snapshot(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(pa.table({"id": [1], "dt": ["a"]}))
    messages = write.prepare_commit()
    for root, _, files in os.walk(table.path):
        for f in files:
            if f.startswith("data-"):
                os.remove(os.path.join(root, f))
    with pytest.raises(CommitError, match="missing; nothing was committed"):
        builder.new_commit().commit(messages)
    assert table.snapshot_manager.latest_id() is None


def test_aborted_write_leaves_no_files(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    write = table.new_batch_write_builder().new_write()
    write.write_arrow(pa.table({"id": list(range(1000)), "dt": ["a", "b"] * 500}))
    for key, w in write._writers.items():
        write._submit(key, w.flush).result()
    written = [f for _, _, files in os.walk(table.path) for f in files if f.startswith("data-")]
    assert len(written) == 2
    write.close()
    leftovers = [f for _, _, files in os.walk(table.path) for f in files if f.startswith("data-")]
    assert leftovers == []


def test_two_batch_commits_of_one_builder_both_land(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    for ids in ([1, 2], [3]):
        with builder.new_write() as write:
            write.write_arrow(pa.table({"id": ids, "dt": ["a"] * len(ids)}))
            messages = write.prepare_commit()
        builder.new_commit().commit(messages)
    assert sorted(read_all(table).column("id").to_pylist()) == [1, 2, 3]
    assert table.snapshot_manager.latest_id() == 2
