"""Peak memory of a primary-key write into one bucket and of a full compaction of one bucket.

Usage: ``.venv/bin/python bench/memory_bounds.py [--rows N] [--runs R] [--tmpdir DIR]``.
Defaults: N = 10,000,000, R = 10 (issue 15, item 4).

Every measurement runs in a fresh child process of this interpreter and reports that child's
own peak resident set size (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at its end, which
counts every thread); a child that only imports the package gives the baseline.

- **write**: N rows (``id`` 0..N-1 in a fixed shuffled order, generated batch by batch, ``v``
  double, ``s`` a decimal string) written in batches of 500,000 into a fresh ``bucket = 1``
  table with ``write-only = true`` (so only the write buffer is measured, not compaction at
  commit) and one ``prepare_commit``; at
  ``write-buffer-size`` 64 mb for N/4, N/2 and N rows (all more than the buffer holds), and at
  256 mb (Java's default) for N.
- **compact**: a bucket holding N rows in R level-0 sorted runs whose key ranges all overlap
  (run i holds the keys ``k`` with ``k % R == i``), written by one child, then a full
  compaction of it (``mergetree.compaction.compact_kv_bucket``, what ``sys.compact`` runs per
  bucket) by another child, measured; for N/4, N/2 and N rows at the default batch of
  65,536 rows per run, and at 16,384 for N.

The peak must stay under 1.5 GB and grow with the buffer (batch) size, not with N. Nothing
is asserted: the figures are printed (rows, seconds, peak MB, peak minus baseline).
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

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "src"))

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema  # noqa: E402
from paimon_pyspark.mergetree.compaction import compact_kv_bucket  # noqa: E402

LIMIT_MB = 1536
BATCH = 500_000
SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.float64()), ("s", pa.string())]
)


def _table(warehouse: str, options: dict[str, str]) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    opts = {"bucket": "1", "write-only": "true", "file.compression.zstd-level": "1", **options}
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=opts)
    catalog.create_table("db.t", schema, ignore_if_exists=True)
    return catalog.get_table("db.t")


def _rows(ids: np.ndarray, rng: np.random.Generator) -> pa.Table:
    n = len(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array(rng.random(n)),
            "s": pa.array(rng.integers(0, 2**40, n)).cast(pa.string()),
        },
        schema=SCHEMA,
    )


def _shuffled(lo: int, hi: int, rows: int) -> np.ndarray:
    """Positions lo..hi-1 of a fixed permutation of 0..rows-1 (a multiplicative bijection),
    so the writer gets keys in no order without the bench holding all N of them."""
    a = 1_000_003 if rows % 1_000_003 else 999_983
    return (np.arange(lo, hi, dtype=np.int64) * a) % rows


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_write(warehouse: str, rows: int, buffer: str) -> dict[str, Any]:
    table = _table(warehouse, {"write-buffer-size": buffer})
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        for lo in range(0, rows, BATCH):
            write.write_arrow(_rows(_shuffled(lo, min(lo + BATCH, rows), rows), rng))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)
    seconds = time.perf_counter() - start
    files = sum(len(m.new_files) for m in messages)
    return {"seconds": seconds, "files": files}


def child_prepare(warehouse: str, rows: int, runs: int) -> dict[str, Any]:
    table = _table(warehouse, {})
    rng = np.random.default_rng(2)
    for i in range(runs):
        ids = np.arange(i, rows, runs, dtype=np.int64)
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            for lo in range(0, len(ids), BATCH):
                write.write_arrow(_rows(ids[lo : lo + BATCH], rng))
            builder.new_commit().commit(write.prepare_commit())
    return {}


def child_compact(warehouse: str, batch_rows: int) -> dict[str, Any]:
    table = _table(warehouse, {})
    latest = table.snapshot_manager.latest()
    assert latest is not None
    files = [e.file for e in table.manifest_io.live_entries(latest)]
    start = time.perf_counter()
    before, after, _ = compact_kv_bucket(
        table.store, [], 0, files, full=True, batch_rows=batch_rows
    )
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "runs": len(before),
        "files": len(after),
        "rows": sum(f.row_count for f in after),
    }


def _child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _report(label: str, rows: int, r: dict[str, Any], baseline: float, extra: str = "") -> None:
    peak = r["peak_mb"]
    verdict = "under" if peak < LIMIT_MB else "OVER"
    print(
        f"{label:<34} {rows:>11,} rows  {r.get('seconds', 0):7.1f} s  "
        f"peak {peak:7.0f} MB  (+{peak - baseline:5.0f} over baseline, {verdict} "
        f"{LIMIT_MB} MB)  {extra}",
        flush=True,
    )


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--tmpdir", default=None)
    p.add_argument("--child", nargs="+", default=None)
    a = p.parse_args()
    if a.child is not None:
        kind, *rest = a.child
        if kind == "baseline":
            result: dict[str, Any] = {}
        elif kind == "write":
            result = child_write(rest[0], int(rest[1]), rest[2])
        elif kind == "prepare":
            result = child_prepare(rest[0], int(rest[1]), int(rest[2]))
        else:
            result = child_compact(rest[0], int(rest[1]))
        result["peak_mb"] = _peak_mb()
        print(json.dumps(result))
        return

    base = Path(tempfile.mkdtemp(prefix="paimon-memory-", dir=a.tmpdir))
    try:
        baseline = _child(["baseline"])["peak_mb"]
        print(f"baseline (interpreter + imports): {baseline:.0f} MB", flush=True)
        n = a.rows
        sizes = [n // 4, n // 2, n]
        print("write into one bucket (write-buffer-size, rows):", flush=True)
        for rows, buffer in [*((r, "64 mb") for r in sizes), (n, "256 mb")]:
            wh = base / f"write-{rows}-{buffer.replace(' ', '')}"
            r = _child(["write", str(wh), str(rows), buffer])
            _report(f"  buffer {buffer}", rows, r, baseline, f"{r['files']} file(s)")
            shutil.rmtree(wh)
        print(f"full compaction of one bucket of {a.runs} overlapping runs (batch rows, rows):")
        for rows, batch in [*((r, 65_536) for r in sizes), (n, 16_384)]:
            wh = base / f"compact-{rows}"
            if not wh.exists():
                _child(["prepare", str(wh), str(rows), str(a.runs)])
            r = _child(["compact", str(wh), str(batch)])
            extra = f"{r['runs']} runs -> {r['files']} file(s), {r['rows']:,} rows"
            _report(f"  batch {batch:,} rows/run", rows, r, baseline, extra)
        for wh in base.glob("compact-*"):
            shutil.rmtree(wh)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
