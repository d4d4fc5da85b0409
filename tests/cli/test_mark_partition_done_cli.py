"""``paimon-pyspark mark-partition-done``: CALL sys.mark_partition_done as a command."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest
from tests.cli.helpers import run_error, run_json

from paimon_pyspark import FileSystemCatalog, Schema


def test_mark_partition_done_command(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema, partition_keys=["dt"]))
    argv = ["mark-partition-done", "--warehouse", warehouse, "--table", "db.t"]
    code, doc, _ = run_json([*argv, "--partitions", "dt=2026-11-01;dt=2026-11-02"], capsys)
    assert code == 0
    assert doc["procedure"] == "mark_partition_done"
    assert doc["result"] == {"result": True, "partitions": ["dt=2026-11-01", "dt=2026-11-02"]}
    path = os.path.join(catalog.get_table("db.t").path, "dt=2026-11-02", "_SUCCESS")
    with open(path) as f:
        assert set(json.load(f)) == {"creationTime", "modificationTime"}
    code, _, err = run_error([*argv, "--partitions", "hr=1"], capsys)
    assert code == 2 and "'hr' is not a partition key" in err
