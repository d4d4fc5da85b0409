"""The command line through a real Spark Connect server (issue 42): ``--remote sc://...`` runs
``load``, ``compact``, ``rescale`` and ``sql`` as Connect clients, each in a process of its own
with no JVM; the driver-side planning and commits run there, the tasks on the server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.connect.connect_server import ConnectServer, run_json

from paimon_pyspark import CatalogFactory

pytestmark = pytest.mark.slow


def _cli(server: ConnectServer, cwd: Path, *argv: str) -> Any:
    """The JSON document of ``paimon-pyspark <argv> --remote <server> --json``."""
    command = [sys.executable, "-m", "paimon_pyspark.cli", *argv]
    return run_json([*command, "--remote", server.url, "--json"], cwd)


def _input(path: Path, ids: range, amount: float) -> str:
    """A Parquet file of orders, named relative to the client's directory (``path``'s), which
    the server's is not: the command resolves it where it runs."""
    days = [f"2026-11-0{i % 3 + 1}" for i in ids]
    pq.write_table(
        pa.table({"order_id": list(ids), "dt": days, "amount": [amount] * len(ids)}), path
    )
    return path.name


def test_load_compact_and_sql_through_spark_connect(
    connect_server: ConnectServer, tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "warehouse")
    common = ["--warehouse", warehouse, "--table", "db.orders"]
    created = [
        "--create",
        "--primary-keys",
        "order_id,dt",
        "--partition-keys",
        "dt",
        "--option",
        "bucket=2",
    ]
    first = _cli(
        connect_server,
        tmp_path,
        "load",
        "--input",
        _input(tmp_path / "a.parquet", range(300), 1.0),
        *common,
        *created,
    )
    assert (first["created"], first["snapshot_ids"], first["rows"]) == (True, [1], 300)
    second = _cli(
        connect_server,
        tmp_path,
        "load",
        "--input",
        _input(tmp_path / "b.parquet", range(200, 400), 2.0),
        *common,
    )
    assert (second["created"], second["snapshot_ids"], second["rows"]) == (False, [2], 200)

    compacted = _cli(connect_server, tmp_path, "compact", *common)
    assert compacted["procedure"] == "compact"
    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.orders")
    latest = table.snapshot_manager.latest()
    assert latest is not None and (latest.id, latest.commit_kind) == (3, "COMPACT")
    assert compacted["result"]["rows"] == 400  # every live row rewritten once, no duplicates
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted((r["order_id"], r["amount"]) for r in rows) == [
        (i, 1.0 if i < 200 else 2.0) for i in range(400)
    ]

    # rescale: its units go through Spark's shuffle, a repartition by key
    rescaled = _cli(connect_server, tmp_path, "rescale", *common, "--bucket-num", "3")
    assert rescaled["result"]["rows"] == 400
    catalog = CatalogFactory.create({"warehouse": warehouse})
    table = catalog.get_table("db.orders")
    buckets = catalog.get_system_table("db.orders$buckets")
    assert {b["bucket"] for b in buckets.to_arrow().to_pylist()} == {0, 1, 2}
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted((r["order_id"], r["amount"]) for r in rows) == [
        (i, 1.0 if i < 200 else 2.0) for i in range(400)
    ]

    script = (
        "SELECT dt, count(*) AS n, sum(amount) AS total FROM db.orders GROUP BY dt ORDER BY dt;"
        "SET spark.sql.warehouse.dir"
    )
    answered = _cli(connect_server, tmp_path, "sql", "--warehouse", warehouse, "-e", script)
    grouped, where = (s["rows"] for s in answered["statements"])
    expected: dict[str, tuple[int, float]] = {}
    for i in range(400):
        n, total = expected.get(f"2026-11-0{i % 3 + 1}", (0, 0.0))
        expected[f"2026-11-0{i % 3 + 1}"] = (n + 1, total + (1.0 if i < 200 else 2.0))
    assert grouped == [[dt, n, total] for dt, (n, total) in sorted(expected.items())]
    # the statements ran in the server's session: its warehouse directory, not a local one's
    assert where[0][-1].endswith(str(connect_server.workdir / "spark-warehouse"))
