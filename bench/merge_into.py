"""MERGE INTO a primary-key table: ``paimon_pyspark.spark.sql`` against the Java Spark connector.

The table is bench/pk_write_read.py's (benchlib ``pk_exprs``): ``--rows`` keys ``k`` in four
partitions ``p``, primary key (``p``, ``k``), bucket 4, parquet zstd level 1, holding version 1
of every key, written untimed in a fresh warehouse each round. The source: ``--changes`` rows,
Spark SQL over ``spark.range(changes)`` (``SOURCE_SELECTS``), cached, a third each of deletes of
existing keys, updates of existing keys (version 2 values) and inserts of new keys, spread over
every partition and bucket. Timed: one MERGE (``MERGE_SQL``) through each engine:

- ours: ``paimon_pyspark.spark.sql`` on Spark 4 (``local[2]``), the source a temp view;
- java: bench/java_connector_driver.py's ``merge`` op in ``.venv-spark35`` (``paimon-spark-3.5``
  0.9.0 on Spark 3.5, ``local[2]``; Maven Central here has no Paimon connector for Spark 4).

After each MERGE, untimed, the table's merge-read checksum (benchlib ``PK_TOTALS``) must equal
what the generator says the merged table holds. Each session also times its own Parquet scan of
the ``--rows`` base rows (the checksum aggregate over ``spark.read.parquet``), and the ratio is
normalized by it: (java MERGE / java session's scan) / (ours / our session's scan), so the two
Spark versions' speeds cancel (each round's MERGE over the same round's scan, the median of
three scans, then the median over rounds). Target: >= 1.0x.

Run: ``.venv/bin/python bench/merge_into.py [--rows N] [--changes M] [--repeat R] [--warmup W]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchlib
import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession

import paimon_pyspark
from paimon_pyspark.spark import register, sql

BENCH = Path(__file__).resolve().parent
PROJECT = BENCH.parent
TARGET = 1.0


def source_selects(rows: int) -> list[list[str]]:
    """The changed rows over ``spark.range(changes)``: ``id % 3`` 0 deletes and 1 updates the
    existing key ``id * 10 + id % 4``, 2 inserts the new key ``rows + id``."""
    return [
        [
            f"CASE WHEN id % 3 = 2 THEN {rows} + id ELSE id * 10 + id % 4 END AS id",
            "CASE id % 3 WHEN 0 THEN 'D' WHEN 1 THEN 'U' ELSE 'I' END AS op",
        ],
        [*benchlib.pk_exprs(2), "op"],
    ]


MERGE_SQL = (
    "MERGE INTO {t} AS tgt USING {s} AS src ON tgt.p = src.p AND tgt.k = src.k "
    "WHEN MATCHED AND src.op = 'D' THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET ver = src.ver, v = src.v, s = src.s "
    "WHEN NOT MATCHED AND src.op = 'I' THEN "
    "INSERT (k, p, ver, v, s) VALUES (src.k, src.p, src.ver, src.v, src.s)"
)


def expected_totals(rows: int, changes: int) -> dict[str, float]:
    """PK_TOTALS of the merged table, from the generator alone."""
    i = np.arange(changes, dtype=np.int64)
    existing = i * 10 + i % 4
    deleted, updated, inserted = existing[i % 3 == 0], existing[i % 3 == 1], rows + i[i % 3 == 2]
    keep = np.ones(rows, dtype=bool)
    keep[deleted] = False
    keep[updated] = False
    parts = [
        benchlib.pk_rows(np.arange(rows, dtype=np.int64)[keep], 1),
        benchlib.pk_rows(updated, 2),
        benchlib.pk_rows(inserted, 2),
    ]
    return benchlib.pk_totals(pa.concat_tables(parts))


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    gc.collect()
    cpu = benchlib.tree_cpu_seconds()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, benchlib.tree_cpu_seconds() - cpu, out


def totals_of(df: Any) -> list[Any]:
    return list(df.selectExpr(*benchlib.PK_TOTALS_SQL).collect()[0])


def run_ours(args: argparse.Namespace, expected: dict[str, float]) -> dict[str, Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon-merge-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    root = tempfile.mkdtemp(prefix="ours-merge-bench-", dir=args.tmpdir)
    out: dict[str, Any] = {k: {"wall_s": [], "cpu_s": []} for k in ("ours", "parquet")}
    try:
        rng = spark.range(0, args.changes, numPartitions=2)
        for exprs in source_selects(args.rows):
            rng = rng.selectExpr(*exprs)
        source = rng.cache()
        source.count()
        source.createOrReplaceTempView("merge_src")
        parquet = os.path.join(root, "base")
        base = spark.range(0, args.rows, numPartitions=2).selectExpr(*benchlib.pk_exprs(1))
        base.write.parquet(parquet)
        data = benchlib.pk_arrow(args.rows, 1)
        for round_no in range(args.warmup + args.repeat):
            print(f"  ours round {round_no + 1}/{args.warmup + args.repeat} ...", file=sys.stderr)
            warehouse = os.path.join(root, f"wh{round_no}")
            catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
            catalog.create_database("db", ignore_if_exists=True)
            catalog.create_table(
                "db.pk",
                paimon_pyspark.Schema.from_pyarrow_schema(
                    data.schema,
                    partition_keys=benchlib.PK_PARTITION_KEYS,
                    primary_keys=benchlib.PK_PRIMARY_KEYS,
                    options={"bucket": str(benchlib.PK_BUCKETS)},
                ),
            )
            benchlib.write_commit(catalog.get_table("db.pk"), data)
            statement = MERGE_SQL.format(t="db.pk", s="merge_src")
            results = {
                "ours": timed(lambda s=statement, w=warehouse: sql(spark, s, warehouse=w)),
            }
            scans = [timed(lambda: totals_of(spark.read.parquet(parquet))) for _ in range(3)]
            results["parquet"] = sorted(scans, key=lambda x: x[0])[1]
            table = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse}).get_table(
                "db.pk"
            )
            rb = table.new_read_builder()
            got = benchlib.pk_totals(rb.new_read().to_arrow(rb.new_scan().plan().splits()))
            bad = benchlib.totals_mismatch(expected, got)
            if bad:
                raise AssertionError(f"ours: the merged table holds {bad}")
            shutil.rmtree(warehouse, ignore_errors=True)
            if round_no >= args.warmup:
                for name, (wall, cpu, _) in results.items():
                    out[name]["wall_s"].append(wall)
                    out[name]["cpu_s"].append(cpu)
        out["versions"] = f"spark {spark.version}"
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out


def run_java(args: argparse.Namespace, expected: dict[str, float]) -> dict[str, Any]:
    python = os.environ.get("JAVA_CONNECTOR_PYTHON") or str(
        PROJECT / ".venv-spark35" / "bin" / "python"
    )
    if not os.path.exists(python):
        return {"note": "Java connector baseline not built: run make bench"}
    command: dict[str, Any] = {
        "op": "merge",
        "rows": args.rows,
        "changes": args.changes,
        "source_selects": source_selects(args.rows),
        "merge_sql": MERGE_SQL,
        "repeat": args.repeat,
        "warmup": args.warmup,
    }
    if args.tmpdir:
        command["tmpdir"] = args.tmpdir
    proc = subprocess.run(
        [python, str(BENCH / "java_connector_driver.py"), "-"],
        input=json.dumps(command),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return {"note": f"failed: {tail[0]}"}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    bad = benchlib.totals_mismatch(expected, result["totals"])
    if bad:
        return {"note": f"java: the merged table holds {bad}"}
    return {
        "java": result["results"]["java merge"],
        "parquet": result["results"]["spark35 parquet scan"],
        "versions": f"spark {result['spark']}, java {result['java']}, {result['connector']}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--changes", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--tmpdir", default=None, help="where the warehouses go (default: TMP)")
    args = parser.parse_args()
    if args.changes < 3 or args.changes * 10 > args.rows or args.repeat < 1 or args.warmup < 0:
        parser.error("need 3 <= --changes <= --rows / 10, --repeat >= 1, --warmup >= 0")

    load_before = benchlib.load_average()
    expected = expected_totals(args.rows, args.changes)
    print("ours ...", file=sys.stderr)
    ours = run_ours(args, expected)
    print("java connector (spark 3.5, own process) ...", file=sys.stderr)
    java = run_java(args, expected)

    def med(side: dict[str, Any], key: str, clock: str = "wall_s") -> float:
        return statistics.median(side[key][clock])

    print()
    print(
        f"MERGE INTO a {args.rows:,}-row primary-key table ({len(benchlib.PK_PARTITIONS)} "
        f"partitions, bucket {benchlib.PK_BUCKETS}) of {args.changes:,} changed rows (a third "
        f"each deleted, updated, inserted); median of {args.repeat} (after {args.warmup} warm-up)"
    )
    print(f"  ours: {ours['versions']}; java: {java.get('versions', java.get('note'))}")
    print(f"  load average: {load_before} before, {benchlib.load_average()} after")
    print()
    header = f"{'':<28}{'median s':>9}{'cpu s':>8}   runs (s)"
    print(header)
    print("-" * len(header))
    rows = [("ours merge", ours, "ours"), ("spark 4 parquet scan", ours, "parquet")]
    if "note" not in java:
        rows += [("java merge", java, "java"), ("spark 3.5 parquet scan", java, "parquet")]
    for label, side, key in rows:
        runs = " ".join(f"{w:.3f}" for w in side[key]["wall_s"])
        print(f"{label:<28}{med(side, key):>9.3f}{med(side, key, 'cpu_s'):>8.2f}   {runs}")
    if "note" in java:
        print(f"java: {java['note']}")
        return 0

    def per_scan(side: dict[str, Any], key: str, clock: str) -> float:
        """The median over rounds of the MERGE's time over the same round's scan time."""
        pairs = zip(side[key][clock], side["parquet"][clock], strict=True)
        return statistics.median(m / p for m, p in pairs)

    raw = med(java, "java") / med(ours, "ours")
    norm = per_scan(java, "java", "wall_s") / per_scan(ours, "ours", "wall_s")
    norm_cpu = per_scan(java, "java", "cpu_s") / per_scan(ours, "ours", "cpu_s")
    print()
    print(f"ours vs java, raw (wall):        {raw:.2f}x")
    print(
        f"ours vs java, normalized (wall): {norm:.2f}x "
        f"({'meets' if norm >= TARGET else 'misses'} the {TARGET:.1f}x target)"
    )
    print(f"ours vs java, normalized (cpu):  {norm_cpu:.2f}x")
    print(
        "  normalized: median over rounds of (java merge / spark 3.5 parquet scan), over the"
        " same of (ours / spark 4 parquet scan); each round's scan is the median of 3"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
