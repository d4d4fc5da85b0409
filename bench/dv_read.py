"""Deletion vectors: 100 upsert commits, then the read against the read after a full compaction.

Usage: ``.venv/bin/python bench/dv_read.py [--rows N] [--commits C] [--upserts U] [--repeat R]
[--tmpdir DIR] [--no-java] [--no-spark]``. Defaults: N = 2,000,000, C = 100, U = 20,000
(issue 37, item 4: the target of issue 15 restated).

The table and commits are bench/pk_write_compaction.py's: primary key (``p``, ``k``),
partitioned by ``p`` (4 partitions), no ``bucket`` option (dynamic bucket, the default mode),
parquet zstd level 1, a first commit of keys 0..N-1, then C commits of U upserts each. Two
runs, each into a fresh table, one after the other:

- ``deletion-vectors.enabled = true``;
- the same table without deletion vectors (compaction on write, Java's defaults).

Reported per run: the C commits' wall-clock and CPU time, the live files after them, then the
read of the whole table (median of R, every result checked against the model) through the
Python API (``to_arrow``) and through ``paimon_pyspark.spark.read`` (Spark ``local[2]``, an
aggregate over every column), then both again after a full compaction (``procedures.compact``,
``compact_strategy = 'full'``), and the ratios. Targets (the deletion-vector run): both reads
within 1.3x of the compacted ones. Spark's own Parquet reader on the same final rows in plain
files (written by pyarrow, one file per partition and about the compacted table's size) is
timed in the same session: the deletion-vector table read through Spark must reach 0.9x of it.

A third run is the Java connector (``java_connector_driver.py``'s ``pk_commits`` op, Spark 3.5,
Paimon 0.9.0) with ``deletion-vectors.enabled``, if ``make bench`` built it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "src"))

import benchlib  # noqa: E402
import pk_write_compaction as pkw  # noqa: E402

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema  # noqa: E402

READ_TARGET = 1.3
SPARK_TARGET = 0.9
DV = {"deletion-vectors.enabled": "true"}


def create(warehouse: str, options: dict[str, str]) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(
        benchlib.pk_arrow(1, 1).schema,
        partition_keys=benchlib.PK_PARTITION_KEYS,
        primary_keys=benchlib.PK_PRIMARY_KEYS,
        options={**pkw.OPTIONS, **options},
    )
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def python_read(table: FileStoreTable, expected: dict[str, float], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        rb = table.new_read_builder()
        data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        times.append(time.perf_counter() - start)
        problem = benchlib.totals_mismatch(expected, benchlib.pk_totals(data))
        if problem is not None:
            raise SystemExit(f"python read checksum mismatch: {problem}")
    return statistics.median(times)


def spark_totals(df: Any) -> dict[str, float]:
    row = df.selectExpr(*benchlib.PK_TOTALS_SQL).collect()[0]
    return dict(zip(benchlib.PK_TOTALS, [v or 0 for v in row], strict=True))


def spark_read(spark: Any, make_df: Any, expected: dict[str, float], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        got = spark_totals(make_df())
        times.append(time.perf_counter() - start)
        problem = benchlib.totals_mismatch(expected, got)
        if problem is not None:
            raise SystemExit(f"spark read checksum mismatch: {problem}")
    return statistics.median(times)


def plain_parquet(table: FileStoreTable, root: str) -> str:
    """The table's rows as plain Parquet files, one per partition (``p=<value>/``)."""
    rb = table.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    for part in benchlib.PK_PARTITIONS:
        rows = data.filter(pa.compute.equal(data.column("p"), part)).drop_columns(["p"])
        os.makedirs(os.path.join(root, f"p={part}"))
        pq.write_table(
            rows,
            os.path.join(root, f"p={part}", "part-0.parquet"),
            compression="zstd",
            compression_level=1,
        )
    return root


def run(
    tmp: str,
    rows: int,
    batches: list[pa.Table],
    options: dict[str, str],
    repeat: int,
    spark: Any,
) -> dict[str, Any]:
    warehouse = tempfile.mkdtemp(dir=tmp)
    try:
        table = create(warehouse, options)
        pkw.commit(table, benchlib.pk_arrow(rows, 1))
        wall = cpu = 0.0
        for data in batches:
            gc.collect()
            cpu0, start = time.process_time(), time.perf_counter()
            pkw.commit(table, data)
            wall, cpu = wall + time.perf_counter() - start, cpu + time.process_time() - cpu0
        expected = pkw.model(rows, batches)
        live = sum(pkw.files_per_bucket(table).values())
        out: dict[str, Any] = {
            "options": options,
            "commits_s": round(wall, 2),
            "commits_cpu_s": round(cpu, 2),
            "live_files": live,
            "python_read_s": round(python_read(table, expected, repeat), 3),
        }
        if spark is not None:
            from paimon_pyspark.spark import read as paimon_read

            def ours() -> Any:
                return paimon_read(spark, warehouse, "db.t")

            out["spark_read_s"] = round(spark_read(spark, ours, expected, repeat), 3)
        pkw.full_compaction(warehouse)
        table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
        out["python_read_compacted_s"] = round(python_read(table, expected, repeat), 3)
        out["python_ratio"] = round(out["python_read_s"] / out["python_read_compacted_s"], 2)
        if spark is not None:
            out["spark_read_compacted_s"] = round(spark_read(spark, ours, expected, repeat), 3)
            out["spark_ratio"] = round(out["spark_read_s"] / out["spark_read_compacted_s"], 2)
            root = plain_parquet(table, tempfile.mkdtemp(dir=tmp, prefix="parquet-"))

            def parquet() -> Any:
                return spark.read.parquet(root)

            out["spark_parquet_s"] = round(spark_read(spark, parquet, expected, repeat), 3)
            out["spark_vs_parquet"] = round(out["spark_parquet_s"] / out["spark_read_s"], 2)
        return out
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--upserts", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tmpdir", default=None)
    parser.add_argument("--no-java", action="store_true", help="skip the Java connector run")
    parser.add_argument("--no-spark", action="store_true", help="skip the Spark reads")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(dir=args.tmpdir, prefix="dv-read-")
    spark = None
    if not args.no_spark:
        from spark_write_read import start_spark

        spark = start_spark(None)
    try:
        ids = pkw.upsert_ids(args.rows, args.commits, args.upserts)
        batches = pkw.upserts(ids)
        dv = run(tmp, args.rows, batches, DV, args.repeat, spark)
        plain = run(tmp, args.rows, batches, {}, args.repeat, spark)
        if spark is not None:
            spark.stop()
            spark = None
        java: dict[str, Any] = {"note": "skipped (--no-java)"}
        if not args.no_java:
            java = pkw.run_java(args.rows, ids, pkw.model(args.rows, batches), tmp, DV)
    finally:
        if spark is not None:
            spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"{args.commits} commits of {args.upserts:,} upserts into {args.rows:,} rows, "
        f"4 partitions, dynamic bucket"
    )
    print(f"load average: {benchlib.load_average()}")
    keys = [
        ("commits, wall s", "commits_s"),
        ("commits, CPU s", "commits_cpu_s"),
        ("live files after", "live_files"),
        ("python read s", "python_read_s"),
        ("python read, compacted s", "python_read_compacted_s"),
        ("python read / compacted", "python_ratio"),
        ("spark read s", "spark_read_s"),
        ("spark read, compacted s", "spark_read_compacted_s"),
        ("spark read / compacted", "spark_ratio"),
        ("spark's parquet read s", "spark_parquet_s"),
        ("parquet time / spark read time", "spark_vs_parquet"),
    ]
    print(f"{'':<34}{'deletion vectors':>18}{'without':>12}")
    for label, key in keys:
        print(f"{label:<34}{dv.get(key, '-')!s:>18}{plain.get(key, '-')!s:>12}")
    ok = dv["python_ratio"] <= READ_TARGET
    print(f"python read within {READ_TARGET}x of compacted: {'met' if ok else 'MISSED'}")
    if "spark_ratio" in dv:
        ok = dv["spark_ratio"] <= READ_TARGET
        print(f"spark read within {READ_TARGET}x of compacted: {'met' if ok else 'MISSED'}")
        ok = dv["spark_vs_parquet"] >= SPARK_TARGET
        print(f"spark read >= {SPARK_TARGET}x of Spark's parquet: {'met' if ok else 'MISSED'}")
    print(f"write cost with vectors vs without: {dv['commits_s'] / plain['commits_s']:.2f}x")
    if "note" in java:
        print(f"java connector: {java['note']}")
    else:
        print(f"java connector ({java['connector']} on spark {java['spark']}, with vectors):")
        print(f"  commits, wall s {java['commits_s']:.2f}, CPU s {java['commits_cpu_s']:.2f}")
        print(f"  live files after {java['live_files']}, snapshots {java['snapshot_kinds']}")
        print(f"  read s {java['merge_read_s']:.3f}")
        if "read_after_full_compaction_s" in java:
            after = java["read_after_full_compaction_s"]
            print(f"  read after full compaction s {after:.3f}")
        print(f"  ours vs java, commits wall: {dv['commits_s'] / java['commits_s']:.2f}x")
    print(json.dumps({"deletion_vectors": dv, "without": plain, "java": java}))


if __name__ == "__main__":
    main()
