"""The seed documents' examples, run as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_with_pk_table_example_reads_the_surviving_orders(tmp_path: Path) -> None:
    script = ROOT / "examples" / "with_pk_table.py"
    out = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "wh")],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    ids = [int(line.split()[0]) for line in out.splitlines()[1:]]
    assert ids == [1, 4, 5, 6, 7]
    assert "400.00 2025-04-05 11:45:03" in out
    index = tmp_path / "wh" / "ods.db" / "with_pk_table" / "index"
    assert any(index.iterdir())  # the seed's default mode, dynamic buckets: a hash index
