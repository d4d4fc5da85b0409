"""Issue 21's scale run: 20,000,000 rows written into an append table and read back, with rows/s
and the peak RSS of each phase.

The rows are bench/append_write_read.py's (id, v double, s 16-char string, dt with 4 values):
one batch of ``--batch`` rows is made before the clock starts and handed to
``TableWrite.write_arrow`` again and again with the next ids (its other values repeat 40 MB
apart, far beyond what zstd's window sees), so the writer never holds the data whole and the
clock times the write, not the making of random strings; the whole write is one commit. Every
phase runs in a fresh Python process (its peak RSS is its own, ``ru_maxrss``), after the
imports, whose RSS is reported as the baseline:

- write: the batches through one TableWrite, ``prepare_commit`` and the commit;
- read (table): ``to_arrow`` of every split, the 20M rows in memory at once;
- read (stream): ``to_arrow_batch_reader``, the rows counted and their ids summed as they pass.

Run: ``.venv/bin/python bench/scale_write_read.py [--rows N] [--batch B] [--tmpdir DIR]``.
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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from append_write_read import PARTITIONS, SCHEMA, generate, machine_facts

import paimon_pyspark

PROJECT = Path(__file__).resolve().parents[1]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def table(warehouse: str, create: bool) -> paimon_pyspark.FileStoreTable:
    catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
    if create:
        catalog.create_database("db", True)
        schema = paimon_pyspark.Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"])
        catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def phase(name: str, warehouse: str, rows: int, batch: int) -> dict[str, float]:
    baseline = peak_rss_mb()
    t = table(warehouse, create=name == "write")
    template = generate(min(batch, rows)) if name == "write" else None
    cpu, start = time.process_time(), time.perf_counter()
    checked = 0
    if template is not None:
        builder = t.new_batch_write_builder()
        with builder.new_write() as write:
            for offset in range(0, rows, batch):
                n = min(batch, rows - offset)
                ids = pa.array(np.arange(offset, offset + n, dtype=np.int64))
                write.write_arrow(template.slice(0, n).set_column(0, SCHEMA.field("id"), ids))
            builder.new_commit().commit(write.prepare_commit())
        checked = rows
    else:
        rb = t.new_read_builder()
        splits = rb.new_scan().plan().splits()
        total = 0
        if name == "read-table":
            result = rb.new_read().to_arrow(splits)
            checked = result.num_rows
            total = pc.sum(result.column("id")).as_py() or 0
            del result
        else:
            for b in rb.new_read().to_arrow_batch_reader(splits):
                checked += b.num_rows
                total += pc.sum(b.column("id")).as_py() or 0
        if checked != rows or total != rows * (rows - 1) // 2:
            raise AssertionError(f"{name}: read {checked} rows summing to {total}")
    return {
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "rows": checked,
        "peak_rss_mb": peak_rss_mb(),
        "baseline_rss_mb": baseline,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--batch", type=int, default=1_000_000)
    parser.add_argument("--tmpdir", default=None)
    parser.add_argument("--phase", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--warehouse", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.warehouse, args.rows, args.batch)))
        return 0
    warehouse = tempfile.mkdtemp(prefix="scale-bench-", dir=args.tmpdir)
    results = {}
    try:
        for name in ("write", "read-table", "read-stream"):
            print(f"{name} ...", file=sys.stderr)
            command = [sys.executable, __file__, "--phase", name, "--warehouse", warehouse]
            command += ["--rows", str(args.rows), "--batch", str(args.batch)]
            out = subprocess.run(command, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                print(out.stderr, file=sys.stderr)
                return 1
            results[name] = json.loads(out.stdout.strip().splitlines()[-1])
        size = sum(p.stat().st_size for p in Path(warehouse).rglob("*.parquet"))
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)
    print(f"\nScale: {args.rows:,} rows ({len(PARTITIONS)} partitions), batches of {args.batch:,}")
    for key, value in machine_facts():
        print(f"  {key:<14} {value}")
    print(f"  data files     {size / 1e6:.0f} MB")
    print(f"{'phase':<13}{'s':>8}{'cpu s':>8}{'rows/s':>10}{'peak RSS':>11}{'baseline':>10}")
    for name, r in results.items():
        rate = r["rows"] / r["seconds"] / 1e6
        print(
            f"{name:<13}{r['seconds']:>8.2f}{r['cpu']:>8.2f}{rate:>8.2f} M"
            f"{r['peak_rss_mb']:>8.0f} MB{r['baseline_rss_mb']:>7.0f} MB"
        )
    print(json.dumps({"bench": "scale_write_read", "rows": args.rows, "phases": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
