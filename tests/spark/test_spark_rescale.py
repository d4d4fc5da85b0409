"""Rescale as a Spark job (``paimon_pyspark.spark.procedures.rescale``): a partition's real
buckets are read per split, rehashed to ``bucket_num`` buckets, written one task per bucket and
committed as one OVERWRITE. The in-process ``procedures.rescale`` is the oracle: both must leave
the same rows in the same buckets. Postpone files and other partitions are left alone, and a
failed job leaves no snapshot and no files."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from pyspark.sql import SparkSession
from tests.integration.table_helpers import read_all, sort_rows, write_commit
from tests.integration.test_postpone import live, make, postpone, rows

from paimon_pyspark import FileStoreTable, FileSystemCatalog
from paimon_pyspark.procedures import compact as compact_here
from paimon_pyspark.procedures import rescale as rescale_here
from paimon_pyspark.spark.job import STAGING_DIR
from paimon_pyspark.spark.procedures import rescale
from paimon_pyspark.spec.binary_row import serialize_with_arity

pytestmark = pytest.mark.slow


def part(table: FileStoreTable, pt: str) -> bytes:
    return serialize_with_arity([pt], table.partition_types)


def layout(table: FileStoreTable, pt: str) -> list[tuple[int, int, int]]:
    """(bucket, total buckets, row count) of every live file of partition ``pt``."""
    return sorted(
        (e.bucket, e.total_buckets, e.file.row_count)
        for e in live(table)
        if e.partition == part(table, pt)
    )


def files_of(table: FileStoreTable, pt: str, bucket_filter: Any = None) -> set[str]:
    return {
        e.file.file_name
        for e in live(table)
        if e.partition == part(table, pt) and (bucket_filter is None or bucket_filter(e.bucket))
    }


def data_files(table: FileStoreTable) -> set[str]:
    return {
        os.path.join(r, f) for r, _, fs in os.walk(table.path) for f in fs if f.startswith("data-")
    }


def fill_postpone_table(table: FileStoreTable) -> None:
    """Rows in real buckets of pt=x and pt=y (after a postpone compaction and a fixed-bucket
    write), then postpone files of pt=x that nothing has compacted yet."""
    write_commit(table, rows(*[(k, k, f"a{k}", "x" if k % 3 else "y", "+I") for k in range(60)]))
    fixed = table.copy({"postpone.batch-write-fixed-bucket": "true"})
    write_commit(fixed, rows(*[(k, -k, f"b{k}", "x", "+U") for k in range(40, 80)]))
    write_commit(table, rows(*[(k, k, None, "x", "+I") for k in range(200, 210)]))


def test_spark_rescale_of_a_postpone_partition_equals_in_process_rescale(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    ours, here = postpone(catalog, "s"), postpone(catalog, "h")
    for t in (ours, here):
        write_commit(t, rows(*[(k, k, f"a{k}", "x" if k % 3 else "y", "+I") for k in range(60)]))
        compact_here(catalog, t.name)
        fixed = t.copy({"postpone.batch-write-fixed-bucket": "true"})
        write_commit(fixed, rows(*[(k, -k, f"b{k}", "x", "+U") for k in range(40, 80)]))
        write_commit(t, rows(*[(k, k, None, "x", "+I") for k in range(200, 210)]))
    before = sort_rows(read_all(ours))
    postponed = files_of(ours, "x", lambda b: b == -2)
    y_files = files_of(ours, "y")
    assert postponed and {b for b, _, _ in layout(ours, "x")} == {-2, 0, 1}

    snapshot = rescale(spark, warehouse, "db.s", bucket_num=4, partition="pt=x")
    assert rescale_here(catalog, "db.h", bucket_num=4, partition="pt=x") is not None

    assert snapshot is not None
    assert ours.snapshot_manager.snapshot(snapshot).commit_kind == "OVERWRITE"
    assert sort_rows(read_all(ours)) == before == sort_rows(read_all(here))
    real = [(b, total) for b, total, _ in layout(ours, "x") if b != -2]
    assert {total for _, total in real} == {4} and {b for b, _ in real} == {0, 1, 2, 3}
    assert len(real) == 4  # one new file per bucket: each bucket had one writer
    assert files_of(ours, "x", lambda b: b == -2) == postponed
    assert files_of(ours, "y") == y_files
    assert layout(ours, "x") == layout(here, "x") and layout(ours, "y") == layout(here, "y")
    # the kept postpone files still compact into the partition's new bucket count
    compact_here(catalog, "db.s")
    compact_here(catalog, "db.h")
    assert sort_rows(read_all(ours)) == sort_rows(read_all(here))
    assert {total for _, total, _ in layout(ours, "x")} == {4}
    assert read_all(ours).num_rows == len(before) + 10
    assert not os.listdir(os.path.join(ours.path, STAGING_DIR))


def test_spark_rescale_of_a_fixed_bucket_primary_key_table(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    ours, here = (make(catalog, name, {"bucket": "2"}) for name in ("fs", "fh"))
    for t in (ours, here):
        write_commit(t, rows(*[(k, k, f"a{k}", "x" if k % 2 else "y", "+I") for k in range(50)]))
        write_commit(t, rows(*[(k, -k, None, "x", "+U") for k in range(1, 30, 2)]))
        write_commit(t, rows((3, 3, "a3", "x", "-D"), (101, 1, "n", "x", "+I")))
    before = sort_rows(read_all(ours))
    y_files = files_of(ours, "y")

    snapshot = rescale(spark, warehouse, "db.fs", bucket_num=3, partition=[{"pt": "x"}])
    rescale_here(catalog, "db.fh", bucket_num=3, partition=[{"pt": "x"}])

    assert snapshot is not None
    assert ours.snapshot_manager.snapshot(snapshot).commit_kind == "OVERWRITE"
    assert sort_rows(read_all(ours)) == before == sort_rows(read_all(here))
    assert {(b, total) for b, total, _ in layout(ours, "x")} == {(0, 3), (1, 3), (2, 3)}
    assert files_of(ours, "y") == y_files
    assert {total for _, total, _ in layout(ours, "y")} == {2}
    assert layout(ours, "x") == layout(here, "x")
    # a rescale of partitions without real-bucket data commits nothing
    assert rescale(spark, warehouse, "db.fs", bucket_num=3, partition="pt=none") is None


def test_a_failed_rescale_job_leaves_no_snapshot_and_no_files(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = postpone(catalog, "broken")
    fill_postpone_table(table)
    compact_here(catalog, "db.broken")
    latest = table.snapshot_manager.latest_id()
    before = data_files(table)
    # a regular file where the new bucket 3 of pt=x would go: writing that bucket always fails,
    # while other tasks write their buckets
    blocker = os.path.join(table.path, "pt=x", "bucket-3")
    open(blocker, "w").close()

    with pytest.raises(Exception, match="bucket-3"):
        rescale(spark, warehouse, "db.broken", bucket_num=4, partition="pt=x")

    assert catalog.get_table("db.broken").snapshot_manager.latest_id() == latest
    deadline = time.monotonic() + 20  # a task cancelled late cleans up after itself
    while data_files(table) != before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert data_files(table) == before
