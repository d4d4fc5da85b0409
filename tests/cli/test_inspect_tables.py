"""``tables``, ``show`` and ``snapshots`` on a real warehouse, read from the system tables."""

from __future__ import annotations

import pytest
from tests.cli.helpers import orders_table, run_error, run_json

from paimon_pyspark import FileSystemCatalog
from paimon_pyspark.cli import main


def test_tables_lists_every_table_of_every_database(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    orders_table(catalog, "db.orders", commits=1)
    catalog.create_database("other")
    orders_table(catalog, "other.t", commits=0)
    code, doc, err = run_json(["tables", "--warehouse", warehouse], capsys)
    assert (code, err) == (0, "")
    assert doc == {"warehouse": warehouse, "tables": ["db.orders", "other.t"]}

    assert main(["tables", "--warehouse", warehouse]) == 0
    out = capsys.readouterr().out
    assert "orders" in out and "other" in out


def test_show_gives_schema_options_latest_snapshot_and_partitions(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    orders_table(catalog, "db.orders", commits=2, options={"file.format": "parquet"})
    code, doc, _ = run_json(["show", "db.orders", "--warehouse", warehouse], capsys)
    assert code == 0
    assert [f["name"] for f in doc["schema"]["fields"]] == ["order_id", "dt", "amount"]
    assert doc["schema"]["fields"][0]["type"] == "BIGINT NOT NULL"
    assert (doc["schema"]["partition_keys"], doc["schema"]["primary_keys"]) == (
        ["dt"],
        ["order_id", "dt"],
    )
    assert doc["options"] == {"bucket": "2", "file.format": "parquet"}
    assert doc["latest_snapshot"]["snapshot_id"] == 2
    assert doc["latest_snapshot"]["total_record_count"] == 6
    table = catalog.get_table("db.orders")
    files = table.store.manifest_io.live_entries(table.store.snapshot_manager.latest())  # type: ignore[arg-type]
    by_partition = {p["partition"]: p for p in doc["partitions"]}
    assert set(by_partition) == {"dt=2026-11-01", "dt=2026-11-02"}
    assert by_partition["dt=2026-11-01"]["record_count"] == 4
    assert by_partition["dt=2026-11-02"]["record_count"] == 2
    assert doc["totals"]["file_count"] == len(files)
    assert doc["totals"]["file_size_in_bytes"] == sum(e.file.file_size for e in files)

    assert main(["show", "db.orders", "--warehouse", warehouse]) == 0
    out = capsys.readouterr().out
    assert "dt=2026-11-02" in out and "partition, primary" in out and "file.format" in out


def test_snapshots_lists_each_commit(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    orders_table(catalog, "db.orders", commits=3)
    code, doc, _ = run_json(["snapshots", "db.orders", "--warehouse", warehouse], capsys)
    assert code == 0
    assert [s["snapshot_id"] for s in doc["snapshots"]] == [1, 2, 3]
    assert [s["total_record_count"] for s in doc["snapshots"]] == [3, 6, 9]
    assert {s["commit_kind"] for s in doc["snapshots"]} == {"APPEND"}


@pytest.mark.parametrize("command", ["show", "snapshots"])
def test_a_missing_table_is_one_line_naming_it(
    command: str, catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, line = run_error([command, "db.nope", "--warehouse", warehouse], capsys)
    assert (code, out) == (2, "")
    assert line == "error: Table 'db.nope' does not exist."
    code, doc, err = run_json([command, "db.nope", "--warehouse", warehouse], capsys)
    assert code == 2
    assert doc == {
        "error": {
            "type": "TableNotExistError",
            "message": "Table 'db.nope' does not exist.",
            "table": "db.nope",
        }
    }
    assert err == "error: Table 'db.nope' does not exist.\n"


def test_tables_on_a_bad_warehouse_names_the_warehouse(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, line = run_error(["tables", "--warehouse", "nope://bucket/wh"], capsys)
    assert code == 2
    assert line.startswith("error: Warehouse 'nope://bucket/wh': the 'nope' filesystem has no")


def test_verbose_adds_the_traceback_before_the_one_line(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "db.nope", "--warehouse", warehouse, "--verbose"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "Traceback (most recent call last):"
    assert "paimon_pyspark.errors.TableNotExistError: Table 'db.nope' does not exist." in err
    assert err[-1] == "error: Table 'db.nope' does not exist."
