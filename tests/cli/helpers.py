"""Running the command line in this process and reading back what it printed."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.cli import main

ORDERS = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("amount", pa.float64()),
    ]
)


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    """Exit code, the one JSON document printed on stdout, and stderr."""
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def run_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout and the one line on stderr (any other line fails the test)."""
    code = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return code, captured.out, lines[0]


def orders_table(
    catalog: FileSystemCatalog, name: str, commits: int = 2, options: dict[str, str] | None = None
) -> None:
    """A fixed-bucket PK table partitioned by ``dt`` with ``commits`` snapshots of 3 rows."""
    catalog.create_table(
        name,
        Schema.from_pyarrow_schema(
            ORDERS,
            partition_keys=["dt"],
            primary_keys=["order_id", "dt"],
            options={"bucket": "2", **(options or {})},
        ),
    )
    table = catalog.get_table(name)
    for i in range(commits):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(
                pa.table(
                    {
                        "order_id": [3 * i, 3 * i + 1, 3 * i + 2],
                        "dt": ["2026-11-01", "2026-11-02", "2026-11-01"],
                        "amount": [1.0, 2.0, 3.0],
                    },
                    schema=ORDERS,
                )
            )
            builder.new_commit().commit(write.prepare_commit())


def read_ids(catalog: FileSystemCatalog, name: str) -> list[int]:
    table = catalog.get_table(name)
    rb = table.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(got.column("order_id").to_pylist())
