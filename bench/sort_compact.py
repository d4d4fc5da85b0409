"""Sort compaction (``CALL sys.compact`` with ``order_strategy``): throughput and peak memory.

Usage: ``.venv/bin/python bench/sort_compact.py [--rows N] [--strategy S] [--budgets B,...]
[--tmpdir DIR]``. Defaults: N = 4,000,000, S = zorder (by ``x, y``; ``order`` sorts by
``name``), budgets ``32 mb,256 mb``.

One partition of an unaware append table (``id`` bigint, ``x``/``y`` int, ``name`` 16-char
string) holds N rows in 8 commits of random rows, written by a child. Each budget's sort
runs in a fresh child process of this interpreter with ``write-buffer-size`` = the budget (the
Arrow bytes sorted in memory at once; more spills to local disk in ranges), on its own copy of
the table, and reports that child's own peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``); a child that only imports the package gives
the baseline. The peak should follow the budget, not N. Nothing is asserted: rows/s, peak MB
and peak minus baseline are printed.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

COMMITS = 8


def child(args: list[str]) -> dict[str, Any]:
    what, warehouse, strategy, budget = args
    import paimon_pyspark
    from paimon_pyspark.procedures import compact

    out: dict[str, Any] = {}
    if what == "write":
        start = time.perf_counter()
        write_table(warehouse, int(budget))
        out["seconds"] = time.perf_counter() - start
    if what == "sort":
        catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
        order_by = "name" if strategy == "order" else "x,y"
        start = time.perf_counter()
        sid = compact(
            catalog,
            "db.t",
            order_strategy=strategy,
            order_by=order_by,
            options=f"write-buffer-size={budget}",
        )
        out["seconds"] = time.perf_counter() - start
        out["snapshot"] = sid
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_child(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def write_table(warehouse: str, rows: int) -> None:
    import paimon_pyspark
    from paimon_pyspark import Schema

    catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema(
        [("id", pa.int64()), ("x", pa.int32()), ("y", pa.int32()), ("name", pa.string())]
    )
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    table = catalog.get_table("db.t")
    rng = np.random.default_rng(1)
    for part in np.array_split(rng.permutation(rows), COMMITS):
        ids = part.astype(np.int64)
        letters = rng.integers(0, 16, (len(ids), 16), dtype=np.uint8)
        names = np.frombuffer(
            np.frombuffer(b"0123456789abcdef", np.uint8)[letters].tobytes(), "S16"
        ).astype(str)
        data = pa.table(
            {
                "id": ids,
                "x": rng.integers(0, 1 << 20, len(ids), dtype=np.int32),
                "y": rng.integers(0, 1 << 20, len(ids), dtype=np.int32),
                "name": pa.array(names),
            },
            schema=schema,
        )
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(data)
            messages = write.prepare_commit()
        builder.new_commit().commit(messages)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--strategy", default="zorder", choices=["order", "zorder", "hilbert"])
    parser.add_argument("--budgets", default="32 mb,256 mb")
    parser.add_argument("--tmpdir", default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sort-compact-bench-", dir=args.tmpdir))
    try:
        source = root / "source"
        # every step runs in a child: a child's peak RSS starts from its parent's (the high
        # water mark survives exec), so the parent must stay small
        wrote = run_child("write", str(source), args.strategy, str(args.rows))
        print(f"wrote {args.rows:,} rows in {COMMITS} commits: {wrote['seconds']:.1f} s")
        baseline = run_child("import", str(source), args.strategy, "0")["peak_mb"]
        print(f"baseline (import only): {baseline:.0f} MB peak")
        for budget in [b.strip() for b in args.budgets.split(",")]:
            copy = root / f"copy-{budget.replace(' ', '')}"
            shutil.copytree(source, copy)
            r = run_child("sort", str(copy), args.strategy, budget)
            print(
                f"{args.strategy} sort, write-buffer-size {budget}: {r['seconds']:.1f} s, "
                f"{args.rows / r['seconds']:,.0f} rows/s, peak {r['peak_mb']:.0f} MB "
                f"({r['peak_mb'] - baseline:.0f} MB over baseline)"
            )
            shutil.rmtree(copy)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
