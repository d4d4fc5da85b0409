"""``paimon-pyspark load``: an input through ``spark.write`` into every table kind."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from tests.cli.helpers import run_error, run_json

from paimon_pyspark import CatalogFactory, FileSystemCatalog
from paimon_pyspark.store.bucket_mode import BucketMode

PK_TABLE = ["--create", "--primary-keys", "order_id,dt", "--partition-keys", "dt"]


def _csv(path: Path, rows: Sequence[tuple[object, ...]]) -> str:
    lines = [
        "order_id,dt,amount",
        *(",".join("" if v is None else str(v) for v in r) for r in rows),
    ]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return str(path)


def _amounts(catalog: FileSystemCatalog, name: str) -> dict[tuple[int, str], float]:
    table = catalog.get_table(name)
    rb = table.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    keys = [(r["order_id"], str(r["dt"])) for r in got]
    assert len(keys) == len(set(keys)), "a key is there twice"
    return {(r["order_id"], str(r["dt"])): r["amount"] for r in got}


@pytest.mark.slow
def test_load_csv_into_a_default_primary_key_table_is_dynamic_bucket(
    spark: SparkSession, warehouse: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = [(i, f"2026-11-0{i % 3 + 1}", i * 1.5) for i in range(300)]
    path = _csv(tmp_path / "orders.csv", first)
    argv = ["load", "--input", path, "--format", "csv", "--warehouse", warehouse]
    code, doc, err = run_json([*argv, "--table", "db.orders", *PK_TABLE], capsys)
    assert (code, err) == (0, "")
    assert (doc["table"], doc["created"], doc["snapshot_ids"], doc["rows"]) == (
        "db.orders",
        True,
        [1],
        300,
    )
    assert doc["files"] >= 3  # three partitions
    catalog = CatalogFactory.create({"warehouse": warehouse})
    table = catalog.get_table("db.orders")
    assert table.bucket_mode == BucketMode.HASH_DYNAMIC
    assert "bucket" not in table.table_schema.options
    assert _amounts(catalog, "db.orders") == {(i, d): a for i, d, a in first}

    # a second load upserts: keys already in the table keep one row, with the new value
    second = [(i, f"2026-11-0{i % 3 + 1}", -1.0) for i in range(250, 350)]
    path2 = _csv(tmp_path / "more.csv", second)
    code, doc, _ = run_json(
        [
            "load",
            "--input",
            path2,
            "--format",
            "csv",
            "--warehouse",
            warehouse,
            "--table",
            "db.orders",
        ],
        capsys,
    )
    assert (code, doc["created"], doc["snapshot_ids"], doc["rows"]) == (0, False, [2], 100)
    expected = {(i, d): a for i, d, a in first} | {(i, d): a for i, d, a in second}
    assert _amounts(catalog, "db.orders") == expected


@pytest.mark.slow
def test_load_into_a_missing_table_without_create_is_one_line(
    spark: SparkSession, warehouse: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _csv(tmp_path / "orders.csv", [(1, "2026-11-01", 1.0)])
    argv = ["load", "--input", path, "--format", "csv", "--warehouse", warehouse]
    code, out, line = run_error([*argv, "--table", "db.orders"], capsys)
    assert (code, out) == (2, "")
    assert line.startswith("error: Table 'db.orders' does not exist. Set option create=true")
    code, out, line = run_error(
        [
            "load",
            "--input",
            str(tmp_path / "none.csv"),
            "--format",
            "csv",
            "--warehouse",
            warehouse,
            "--table",
            "db.orders",
            *PK_TABLE,
        ],
        capsys,
    )
    assert code == 2
    assert line.startswith("error: db.orders: [PATH_NOT_FOUND] Path does not exist: ")
    assert "none.csv" in line
    assert CatalogFactory.create({"warehouse": warehouse}).list_databases() == []


@pytest.mark.slow
def test_a_failed_load_create_leaves_no_table_behind(
    spark: SparkSession,
    warehouse: str,
    catalog: FileSystemCatalog,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # a null primary key fails the write after the table was created
    path = _csv(tmp_path / "bad.csv", [(1, "2026-11-01", 1.0), (None, "2026-11-02", 2.0)])
    argv = ["load", "--input", path, "--format", "csv", "--warehouse", warehouse]
    code, doc, err = run_json([*argv, "--table", "fresh.orders", *PK_TABLE], capsys)
    assert code == 2
    assert doc["error"]["type"] == "NullViolationError"
    assert "order_id" in doc["error"]["message"]
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert catalog.list_databases() == ["db"]  # the database it created went too

    # into a database that was there: only the table goes
    code, _, line = run_error([*argv, "--table", "db.orders", *PK_TABLE], capsys)
    assert code == 2
    assert "order_id" in line
    assert catalog.list_databases() == ["db"]
    assert catalog.list_tables("db") == []
