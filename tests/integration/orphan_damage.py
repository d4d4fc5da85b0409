"""A table damaged on purpose, as crashes leave one, for the orphan-file tests.

Every kind of leftover comes from the real failure, not from files made up to look like one:
a writer that died after ``prepare_commit`` (its data files), a committer killed (SIGKILL)
after writing its manifests and before publishing its snapshot, a commit whose manifest write
went through but answered with an error (``FaultyFileIO``, no retries: its data files and that
manifest), a Spark job whose driver died after its task staged its files (``_OPEN``, the
record, the data files), and the hidden temp files an interrupted publish leaves beside a
snapshot, schema or tag file. ``damage`` returns what it left, found by listing the table
before and after, so the expectation does not depend on the code under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pyarrow as pa
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CommitError
from paimon_pyspark.procedures import compact
from paimon_pyspark.spark.job import TableRef, WriteJob

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)
ROOT = Path(__file__).resolve().parents[2]
TWO_DAYS_S = 2 * 86400

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
    table = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table(sys.argv[2])
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    rows = {"k": [900, 901], "v": ["killed", "killed"], "dt": [sys.argv[3]] * 2}
    write.write_arrow(pa.table(rows, schema=table.arrow_schema))
    builder.new_commit().commit(write.prepare_commit())
    """
)


def rows(keys: list[int], dt: str, v: str = "x") -> pa.Table:
    return pa.table({"k": keys, "v": [f"{v}{k}" for k in keys], "dt": [dt] * len(keys)}, SCHEMA)


def pk_table(catalog: FileSystemCatalog, name: str, **options: str) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "k"],
        options={"bucket": "2", **options},
    )
    catalog.create_table(name, schema)
    return catalog.get_table(name)


def build_history(catalog: FileSystemCatalog, name: str) -> FileStoreTable:
    """Four snapshots: three writes (the third updates keys of the first) and a full
    compaction, so retained snapshots reach files the latest no longer reads."""
    table = pk_table(catalog, name)
    write_commit(table, rows([1, 2, 3], "a"))
    write_commit(table, rows([4, 5], "b"))
    write_commit(table, rows([1, 4], "b", "u"))
    compact(catalog, name)
    return catalog.get_table(name)


def write_tag(table: FileStoreTable, tag: str, snapshot_id: int) -> None:
    """A tag file as Java's TagManager writes it: the snapshot's JSON plus the tag's fields."""
    obj = json.loads(table.snapshot_manager.snapshot(snapshot_id).to_json())
    obj["tagCreateTime"] = [2026, 1, 1, 0, 0, 0, 0]
    obj["tagTimeRetained"] = None
    os.makedirs(os.path.join(table.path, "tag"), exist_ok=True)
    Path(table.path, "tag", f"tag-{tag}").write_text(json.dumps(obj, indent=2))


def files_of(path: str) -> set[str]:
    """Every file under ``path``, relative to it."""
    return {
        os.path.relpath(os.path.join(root, n), path) for root, _, ns in os.walk(path) for n in ns
    }


def dirs_of(path: str) -> set[str]:
    return {
        os.path.relpath(os.path.join(root, d), path) for root, ds, _ in os.walk(path) for d in ds
    }


def age(path: str, seconds: float = TWO_DAYS_S) -> None:
    """Set every file and directory under ``path`` ``seconds`` back in time."""
    then = time.time() - seconds
    for root, ds, ns in os.walk(path):
        for n in [*ns, *ds]:
            os.utime(os.path.join(root, n), (then, then))


class _FailAfterManifest(FaultyFileIO):
    """Writes the first manifest of a commit, then reports an error: the request went through,
    its answer was lost, so the committer never learns the file is there."""

    def write_bytes(self, path: str, data: bytes) -> None:
        self.inner.write_bytes(path, data)
        name = os.path.basename(path)
        if self.recording and name.startswith("manifest-") and "list" not in name:
            self.recording = False
            raise InjectedFault(f"injected failure after writing {path}")


def abandoned_write(table: FileStoreTable, keys: list[int], dt: str) -> None:
    """A writer that died after ``prepare_commit``: its files are written, never committed."""
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(rows(keys, dt, "lost"))
    write.prepare_commit()


def killed_commit(warehouse: str, name: str, dt: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_COMMIT, warehouse, name, dt],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr.decode()


def failed_commit(table: FileStoreTable, keys: list[int], dt: str) -> None:
    faulty = _FailAfterManifest(table.file_io)
    options = {"commit.max-retries": "0", "write-only": "true"}
    clone = FileStoreTable(faulty, table.path, table.name, table.store.table_schema, options)
    builder = clone.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(rows(keys, dt, "failed"))
        messages = write.prepare_commit()
    faulty.recording = True
    try:
        builder.new_commit().commit(messages)
    except CommitError:
        pass
    else:
        raise AssertionError("the injected failure did not fail the commit")


def killed_spark_job(warehouse: str, name: str, keys: list[int], dt: str) -> None:
    """A job's task staged its files, then the driver died: nothing commits or aborts it."""
    job = WriteJob(TableRef(warehouse, name))
    job.write_task([pa.RecordBatch.from_pylist(rows(keys, dt, "spark").to_pylist(), SCHEMA)])


def interrupted_publishes(table: FileStoreTable) -> None:
    """The temp files a process killed inside ``try_write_atomic`` leaves (fs/file_io.py's
    ``temp_beside``: ``.<target>.<uuid>.tmp``)."""
    latest = table.snapshot_manager.latest_id() or 0
    for directory, target in (
        ("snapshot", f"snapshot-{latest + 1}"),
        ("schema", "schema-1"),
        ("tag", "tag-next"),
    ):
        d = Path(table.path, directory)
        d.mkdir(exist_ok=True)
        (d / f".{target}.{uuid.uuid4()}.tmp").write_text('{"half": ')


def damage(catalog: FileSystemCatalog, warehouse: str, name: str, *, kill: bool = True) -> set[str]:
    """Every kind of leftover above in table ``name`` (the killed committer, a process of its
    own, unless ``kill`` is False); returns the files it left (relative to the table).
    ``dt=z`` is a partition only the damage wrote to."""
    table = catalog.get_table(name)
    before = files_of(table.path)
    abandoned_write(table, [7, 8], "a")
    abandoned_write(table, [9], "z")
    if kill:
        killed_commit(warehouse, name, "b")
    failed_commit(table, [10, 11], "a")
    killed_spark_job(warehouse, name, [12, 13], "b")
    interrupted_publishes(table)
    left = files_of(table.path) - before
    assert before <= files_of(table.path)
    return left
