"""Partition mark-done (maintenance/partition_mark_done.py: Java's SuccessFileMarkDoneAction):
the ``mark_partition_done`` procedure, ``partition.end-input-to-done`` at a batch commit, the
actions a filesystem catalog cannot run, and a mark failing at every store call in turn."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, PartitionSpecError, UnsupportedOptionError
from paimon_pyspark.maintenance.partition_mark_done import (
    SuccessFile,
    mark_partitions_done,
    read_success_file,
)
from paimon_pyspark.procedures import mark_partition_done, remove_orphan_files
from paimon_pyspark.store.clock import ManualClock, injected

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("hr", pa.int32())])
T0 = 1_764_000_000_000


def make(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt", "hr"], options=options)
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def rows(*parts: tuple[str, int]) -> pa.Table:
    return pa.table(
        {
            "id": list(range(len(parts))),
            "dt": [p[0] for p in parts],
            "hr": [p[1] for p in parts],
        },
        schema=SCHEMA,
    )


def success_files(table: FileStoreTable) -> dict[str, str]:
    out = {}
    for root, _, names in os.walk(table.path):
        if "_SUCCESS" in names:
            with open(os.path.join(root, "_SUCCESS")) as f:
                out[os.path.relpath(root, table.path)] = f.read()
    return out


def test_the_procedure_writes_javas_success_file_and_a_second_mark_keeps_its_creation(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog)
    write_commit(table, rows(("2026-11-01", 1)))
    clock = ManualClock(T0)
    with injected(clock):
        marked = mark_partition_done(catalog, "db.t", "dt=2026-11-01,hr=1;dt=2026-11-02")
        clock.advance(hours=2)
        mark_partition_done(catalog, "db.t", [{"hr": 1, "dt": "2026-11-01"}])
    assert marked == ["dt=2026-11-01/hr=1", "dt=2026-11-02"]
    files = success_files(table)
    assert set(files) == {"dt=2026-11-01/hr=1", "dt=2026-11-02"}
    # Jackson's pretty print, byte for byte (JsonSerdeUtil.toJson)
    assert files["dt=2026-11-02"] == (
        f'{{\n  "creationTime" : {T0},\n  "modificationTime" : {T0}\n}}'
    )
    later = T0 + 2 * 3_600_000
    assert read_success_file(table.store, "dt=2026-11-01/hr=1") == SuccessFile(T0, later)
    # Java's reader ignores fields it does not know; so do we
    extra = '{"creationTime": 1, "modificationTime": 2, "other": "x"}'
    assert SuccessFile.from_json(extra, "x") == SuccessFile(1, 2)
    # success files lie beside the buckets: orphan cleaning leaves them
    for rel in files:
        os.utime(os.path.join(table.path, rel, "_SUCCESS"), (1, 1))
    assert remove_orphan_files(catalog, "db.t", dry_run=True).deleted_file_count == 0


def test_the_procedure_refuses_specs_that_would_mark_another_directory(
    catalog: FileSystemCatalog,
) -> None:
    make(catalog)
    with pytest.raises(PartitionSpecError, match="'x' is not a partition key"):
        mark_partition_done(catalog, "db.t", "x=1")
    with pytest.raises(PartitionSpecError, match="first partition keys in order"):
        mark_partition_done(catalog, "db.t", "hr=1")
    with pytest.raises(InvalidArgumentError, match="must specify partitions"):
        mark_partition_done(catalog, "db.t", " ")
    assert not success_files(catalog.get_table("db.t"))
    # escaped as Java escapes a path name: a value cannot leave its directory
    assert mark_partition_done(catalog, "db.t", "dt=../x") == ["dt=..%2Fx"]


@pytest.mark.parametrize("action", ["done-partition", "mark-event", "http-report", "custom"])
def test_actions_a_filesystem_catalog_cannot_run_are_refused_when_used(
    catalog: FileSystemCatalog, action: str
) -> None:
    table = make(catalog, **{"partition.mark-done-action": f"success-file,{action}"})
    write_commit(table, rows(("a", 1)))  # no mark asked for: the table writes as Java's does
    with pytest.raises(UnsupportedOptionError, match=f"'{action}' is refused"):
        mark_partition_done(catalog, "db.t", "dt=a")
    with_end = table.copy({"partition.end-input-to-done": "true"})
    with pytest.raises(UnsupportedOptionError):
        write_commit(with_end, rows(("b", 1)))
    assert table.snapshot_manager.latest_id() == 1  # refused before anything was committed
    assert not success_files(table)


def test_an_unknown_action_is_refused_as_javas_valueof_does(catalog: FileSystemCatalog) -> None:
    make(catalog, **{"partition.mark-done-action": "success-file, done-partition"})
    with pytest.raises(InvalidArgumentError, match="' done-partition'"):
        mark_partition_done(catalog, "db.t", "dt=a")


def test_end_input_to_done_marks_what_a_batch_commit_wrote_and_no_stream_commit(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, **{"partition.end-input-to-done": "true", "write-only": "true"})
    write_commit(table, rows(("a", 1), ("a", 2), ("b", 1)))
    assert set(success_files(table)) == {"dt=a/hr=1", "dt=a/hr=2", "dt=b/hr=1"}
    builder = table.new_stream_write_builder()
    write = builder.new_write()
    write.write_arrow(rows(("c", 1)))
    builder.new_commit().commit(write.prepare_commit(0), 0)
    write.close()
    assert "dt=c/hr=1" not in success_files(table)  # a micro-batch is not the end of input
    plain = catalog.get_table("db.t").copy({"partition.end-input-to-done": "false"})
    write_commit(plain, rows(("d", 1)))
    assert "dt=d/hr=1" not in success_files(table)


def test_a_mark_failing_at_any_store_call_is_finished_by_marking_again(
    catalog: FileSystemCatalog, tmp_path: Path
) -> None:
    table = make(catalog)
    clock = ManualClock(T0)
    with injected(clock):
        mark_partition_done(catalog, "db.t", "dt=a,hr=1")
    clock.advance(hours=1)
    k, finished = 0, False
    while not finished:
        k += 1
        assert k < 50
        faulty = FaultyFileIO(table.file_io)
        clone = FileStoreTable(faulty, table.path, table.name, table.table_schema, {})
        faulty.arm(k, "before" if k % 2 else "after")
        with injected(clock):
            try:
                mark_partitions_done(clone.store, ["dt=a/hr=1", "dt=b/hr=1"])
            except InjectedFault:
                pass
            finally:
                faulty.recording = False
            finished = len(faulty.calls) < k
            # what is there is whole: the old file or the new one
            assert read_success_file(table.store, "dt=a/hr=1").creation_time == T0, k
            read_success_file(table.store, "dt=b/hr=1")
            mark_partitions_done(table.store, ["dt=a/hr=1", "dt=b/hr=1"])
        assert read_success_file(table.store, "dt=a/hr=1") == SuccessFile(T0, clock.millis)
        assert read_success_file(table.store, "dt=b/hr=1") is not None
        assert os.listdir(os.path.join(table.path, "dt=a", "hr=1")) == ["_SUCCESS"]
        clock.advance(millis=1)
    assert k > 3
