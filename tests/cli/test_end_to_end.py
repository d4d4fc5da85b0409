"""The command line as a user runs it: a process of its own, with its own Spark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY")}
    return subprocess.run(
        [sys.executable, "-m", "paimon_pyspark.cli", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.uses_spark  # its Spark runs in a subprocess; it goes with the Spark half
def test_load_a_csv_then_show_it_with_no_spark_noise(tmp_path: Path) -> None:
    rows = [f"{i},2026-11-0{i % 2 + 1},{i}.5" for i in range(40)]
    (tmp_path / "orders.csv").write_text("order_id,dt,amount\n" + "\n".join(rows) + "\n")
    load = _cli(
        "load",
        "--input",
        "orders.csv",
        "--format",
        "csv",
        "--warehouse",
        "wh",
        "--table",
        "db.orders",
        "--create",
        "--primary-keys",
        "order_id,dt",
        "--partition-keys",
        "dt",
        "--master",
        "local[2]",
        "--json",
        cwd=tmp_path,
    )
    assert load.returncode == 0, load.stderr
    assert load.stderr == ""  # no banner, no log lines, no progress in a pipe
    doc = json.loads(load.stdout)
    assert (doc["rows"], doc["created"]) == (40, True)

    show = _cli("show", "db.orders", "--warehouse", "wh", cwd=tmp_path)
    assert show.returncode == 0
    assert "dt=2026-11-01" in show.stdout and "dt=2026-11-02" in show.stdout

    missing = _cli("snapshots", "db.none", "--warehouse", "wh", cwd=tmp_path)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == "error: Table 'db.none' does not exist.\n"
