"""``paimon-pyspark expire-partitions``: CALL sys.expire_partitions as a command."""

from __future__ import annotations

import pyarrow as pa
import pytest
from tests.cli.helpers import run_json

from paimon_pyspark import FileSystemCatalog, Schema


def test_expire_partitions_command(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"id": [1, 2], "dt": ["20200101", "29990101"]}, schema))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    argv = ["expire-partitions", "--warehouse", warehouse, "--table", "db.t"]
    code, doc, _ = run_json(
        [*argv, "--expiration-time", "7 d", "--timestamp_formatter", "yyyyMMdd"], capsys
    )
    assert code == 0
    assert doc["procedure"] == "expire_partitions"
    assert doc["result"] == {"expired_partitions": ["dt=20200101"]}
    rb = catalog.get_table("db.t").new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits())["dt"].to_pylist() == ["29990101"]
