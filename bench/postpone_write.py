"""Postpone-bucket writes against fixed-bucket writes, then the postpone compaction.

One data set, bench/benchlib.py's primary-key rows (``pk_arrow``): ``--rows`` keys in four
partitions, primary key (``p``, ``k``), parquet zstd level 1. Each run, in a fresh warehouse,
alternating the two tables so drift hits both, times

- fixed write: the N rows into a table with ``bucket = 4`` (hash, sort and merge per bucket);
- postpone write: the same N rows into a table with ``bucket = -2`` (arrival order, no sort);
- compact: ``procedures.compact`` of the postpone table, full: every row replayed into 4 real
  buckets per partition (``postpone.default-bucket-num = 4``), merged and written sorted;
- postpone upsert + compact-merge: the 10% upsert written postpone, then compacted into the
  buckets the first compaction made (merged with their files by the merge engine).

Reads check every column (``benchlib.pk_totals``): after the first compaction the postpone
table equals the fixed table, after the second it equals ``benchlib.pk_expected``.

Run: ``.venv/bin/python bench/postpone_write.py [--rows N] [--repeat R] [--warmup W]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import benchlib
import pyarrow as pa

import paimon_pyspark
from paimon_pyspark.procedures import compact

STEPS = ("fixed write", "postpone write", "compact", "postpone upsert", "compact-merge")


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    gc.collect()
    cpu = time.process_time()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def read_totals(table: paimon_pyspark.FileStoreTable) -> dict[str, float]:
    rb = table.new_read_builder()
    return benchlib.pk_totals(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def once(data: pa.Table, upsert: pa.Table, tmp_root: str | None) -> dict[str, tuple[float, float]]:
    warehouse = tempfile.mkdtemp(prefix="ours-postpone-bench-", dir=tmp_root)
    try:
        catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("db", ignore_if_exists=True)
        tables = {}
        for name, options in (
            ("fixed", {"bucket": str(benchlib.PK_BUCKETS)}),
            (
                "postpone",
                {
                    "bucket": "-2",
                    "postpone.batch-write-fixed-bucket": "false",
                    "postpone.default-bucket-num": str(benchlib.PK_BUCKETS),
                },
            ),
        ):
            schema = paimon_pyspark.Schema.from_pyarrow_schema(
                data.schema,
                partition_keys=benchlib.PK_PARTITION_KEYS,
                primary_keys=benchlib.PK_PRIMARY_KEYS,
                options=options,
            )
            catalog.create_table(f"db.{name}", schema)
            tables[name] = catalog.get_table(f"db.{name}")

        def commit(table: paimon_pyspark.FileStoreTable, rows: pa.Table) -> None:
            builder = table.new_batch_write_builder()
            with builder.new_write() as write:
                write.write_arrow(rows)
                messages = write.prepare_commit()
            builder.new_commit().commit(messages)

        out = {
            "fixed write": timed(lambda: commit(tables["fixed"], data)),
            "postpone write": timed(lambda: commit(tables["postpone"], data)),
        }
        if read_totals(tables["postpone"])["rows"] != 0:
            raise AssertionError("postpone rows are visible before compaction")
        out["compact"] = timed(lambda: compact(catalog, "db.postpone", compact_strategy="full"))
        fixed, postponed = read_totals(tables["fixed"]), read_totals(tables["postpone"])
        bad = benchlib.totals_mismatch(fixed, postponed)
        if bad:
            raise AssertionError(f"compacted postpone table differs from the fixed one: {bad}")
        out["postpone upsert"] = timed(lambda: commit(tables["postpone"], upsert))
        out["compact-merge"] = timed(lambda: compact(catalog, "db.postpone"))
        bad = benchlib.totals_mismatch(
            benchlib.pk_expected(data.num_rows), read_totals(tables["postpone"])
        )
        if bad:
            raise AssertionError(f"merged postpone table is wrong: {bad}")
        return out
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--tmpdir", default=None)
    args = parser.parse_args()
    data, upsert = benchlib.pk_arrow(args.rows, 1), benchlib.pk_arrow(args.rows, 2)
    wall: dict[str, list[float]] = {s: [] for s in STEPS}
    cpu: dict[str, list[float]] = {s: [] for s in STEPS}
    for i in range(args.warmup + args.repeat):
        print(f"  run {i + 1}/{args.warmup + args.repeat} ...", file=sys.stderr)
        got = once(data, upsert, args.tmpdir)
        if i >= args.warmup:
            for step in STEPS:
                wall[step].append(got[step][0])
                cpu[step].append(got[step][1])
    load = os.getloadavg()
    print(f"postpone-bucket write vs fixed-bucket write: {args.rows:,} rows, 4 partitions,")
    print(f"  4 buckets, median of {args.repeat} runs after {args.warmup} warm-up")
    print(f"  machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}")
    print(f"  {'step':<16} {'rows':>10} {'wall s':>8} {'cpu s':>8} {'rows/s':>12}  runs")
    for step in STEPS:
        upserted = step in ("postpone upsert", "compact-merge")
        n = benchlib.pk_upsert_rows(args.rows) if upserted else args.rows
        w, c = statistics.median(wall[step]), statistics.median(cpu[step])
        runs = " ".join(f"{x:.2f}" for x in wall[step])
        print(f"  {step:<16} {n:>10,} {w:>8.2f} {c:>8.2f} {n / w:>12,.0f}  {runs}")
    ratio = statistics.median(wall["fixed write"]) / statistics.median(wall["postpone write"])
    verdict = "met" if ratio > 1.0 else "NOT met"
    print(
        f"  postpone write is {ratio:.2f}x the fixed-bucket write's speed (target > 1.0x: "
        f"{verdict})"
    )


if __name__ == "__main__":
    main()
