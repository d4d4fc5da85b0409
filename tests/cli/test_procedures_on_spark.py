"""``compact``, ``rescale`` and ``remove-orphan-files`` run as their Spark jobs."""

from __future__ import annotations

import datetime
import os
import time

import pytest
from pyspark.sql import SparkSession
from tests.cli.helpers import orders_table, read_ids, run_error, run_json

from paimon_pyspark import FileSystemCatalog


@pytest.mark.slow
def test_compact_json_and_its_error(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    warehouse: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    orders_table(catalog, "db.orders", commits=3)
    table = catalog.get_table("db.orders")
    before = len(table.store.manifest_io.live_entries(table.store.snapshot_manager.latest()))  # type: ignore[arg-type]
    common = ["compact", "--warehouse", warehouse, "--table", "db.orders"]
    code, doc, err = run_json([*common, "--compact_strategy", "full"], capsys)
    assert (code, err) == (0, "")
    latest = catalog.get_table("db.orders").snapshot_manager.latest()
    assert latest is not None and latest.commit_kind == "COMPACT"
    assert doc["procedure"] == "compact"
    assert doc["arguments"] == {"table": "db.orders", "compact_strategy": "full"}
    assert doc["result"]["snapshot_id"] == latest.id == 4
    # full compaction: one file per bucket written, every old one removed
    after = catalog.get_table("db.orders").store.manifest_io.live_entries(latest)
    assert (doc["result"]["files"], doc["result"]["removed_files"]) == (len(after), before)
    assert read_ids(catalog, "db.orders") == list(range(9))

    code, _, line = run_error([*common, "--partitions", "region=eu"], capsys)
    assert code == 2
    assert line.startswith("error: Table 'db.orders': ['region'] are not partition keys")


@pytest.mark.slow
def test_rescale_json_and_its_error(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    warehouse: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    orders_table(catalog, "db.orders", commits=2)
    common = ["rescale", "--warehouse", warehouse]
    code, doc, _ = run_json(
        [*common, "--table", "db.orders", "--bucket-num", "1", "--partition", "dt=2026-11-01"],
        capsys,
    )
    assert code == 0
    table = catalog.get_table("db.orders")
    latest = table.snapshot_manager.latest()
    assert latest is not None and latest.commit_kind == "OVERWRITE"
    assert doc["result"]["snapshot_id"] == latest.id
    assert doc["result"]["rows"] == 4  # the rows of dt=2026-11-01, rewritten
    buckets = catalog.get_system_table("db.orders$buckets").to_arrow().to_pylist()
    rescaled = {b["bucket"] for b in buckets if "2026-11-01" in b["partition"]}
    assert rescaled == {0}
    assert read_ids(catalog, "db.orders") == list(range(6))

    code, _, line = run_error([*common, "--table", "db.missing", "--bucket_num", "1"], capsys)
    assert code == 2
    assert line == "error: Table 'db.missing' does not exist."


@pytest.mark.slow
def test_remove_orphan_files_json_and_its_error(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    warehouse: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    orders_table(catalog, "db.orders", commits=1)
    table = catalog.get_table("db.orders")
    orphan = os.path.join(table.path, "dt=2026-11-01", "bucket-0", "data-orphan-0.parquet")
    with open(orphan, "wb") as f:
        f.write(b"x" * 10)
    old = time.time() - 7200
    os.utime(orphan, (old, old))
    cutoff = (datetime.datetime.now() - datetime.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S")
    common = ["remove-orphan-files", "--warehouse", warehouse, "--table", "db.orders"]
    code, doc, _ = run_json([*common, "--older_than", cutoff, "--dry_run", "true"], capsys)
    assert code == 0
    assert doc["result"]["deletedFileCount"] == 1
    assert doc["result"]["deletedFileTotalLenInBytes"] == 10
    assert [os.path.basename(p) for p in doc["result"]["deleted_files"]] == [
        "data-orphan-0.parquet"
    ]
    assert os.path.exists(orphan)  # a dry run

    code, _, line = run_error([*common, "--mode", "sideways"], capsys)
    assert code == 2
    assert line == (
        "error: db.orders: Unknown mode: sideways. Only 'DISTRIBUTED' and 'LOCAL' are supported."
    )
