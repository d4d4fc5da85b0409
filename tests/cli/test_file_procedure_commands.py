"""The file procedures as commands: ``compact-manifest``, ``compact-database`` and
``purge-files`` in this process, with Java's result names."""

from __future__ import annotations

import pytest
from tests.cli.helpers import orders_table, read_ids, run_json

from paimon_pyspark import FileSystemCatalog


def test_file_procedure_commands(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    orders_table(catalog, "db.orders", commits=3)
    table = ["--warehouse", warehouse, "--table", "db.orders"]
    code, doc, _ = run_json(["compact-manifest", *table], capsys)
    latest = catalog.get_table("db.orders").snapshot_manager.latest()
    assert code == 0 and latest is not None and latest.commit_kind == "COMPACT"
    assert doc["result"] == {"result": True, "snapshot_id": latest.id}

    argv = ["compact-database", "--warehouse", warehouse, "--including_databases", "db"]
    code, doc, _ = run_json(argv, capsys)
    assert code == 0 and doc["table"] is None
    assert doc["result"] == {"result": "Compact database finished. Success: 1, Failed: 0"}

    code, doc, _ = run_json(["purge-files", *table], capsys)
    assert code == 0 and doc["result"] == {"result": "Success"}
    assert read_ids(catalog, "db.orders") == []
