"""The write cost of each changelog producer: 100 upsert commits into a 2,000,000-row table.

Usage: ``.venv/bin/python bench/changelog_producers.py [--rows N] [--commits C] [--upserts U]
[--producers none,input,lookup,full-compaction] [--java-producers none,lookup] [--quick]
[--no-spark] [--no-java] [--tmpdir DIR]``. Defaults: N = 2,000,000, C = 100, U = 20,000 (issue
40, item 4); ``--quick`` is N = 200,000, C = 10, U = 2,000, a smoke run of every part.

The table: bench/pk_write_read.py's columns (benchlib ``pk_rows``), primary key (``p``, ``k``),
partitioned by ``p`` (4 partitions), bucket 4, parquet zstd level 1, ``changelog-producer`` the
one measured, with its defaults (no ``full-compaction.delta-commits``: our batch writers then
compact fully at every commit, as Java's Flink writer; Java's Spark writer does not, see
docs/changelog.md). Its first commit holds keys
0..N-1 (version 1, untimed); then C commits of U upserts each (random existing keys, seeded,
every partition; commit c writes version c + 2, so every upsert changes the row). A fresh
table per producer and engine:

- python: the Python API (``new_batch_write_builder`` .. ``write_arrow`` .. ``commit``, the
  writer's compaction at commit included); baseline: ``pyarrow.parquet.write_table`` of the
  same Arrow rows, zstd level 1;
- spark.write: ``paimon_pyspark.spark.write`` on a Spark 4 ``local[2]`` session, each commit's
  rows Spark SQL over its keys read from a Parquet file (``pk_exprs``); baseline: the same
  DataFrame through ``df.write.parquet`` (zstd level 1);
- java: the Java connector (``paimon-spark-3.5`` 0.9.0 in ``.venv-spark35``,
  bench/java_connector_driver.py's ``changelog_commits`` op: ``df.writeTo(t).append()`` of the
  same DataFrame), with ``--java-producers`` (default none and lookup); baseline: that
  session's ``df.write.parquet`` of the same DataFrame.

Every commit is followed at once by its baseline write of the same rows, so load on the
machine hits both alike. Reported per producer and engine: the C commits' wall and CPU
seconds, the baseline's, the normalized cost (commits / baseline) and the commits' time over
the same engine's ``none``'s; then ``spark.write``'s lookup against Java's, each normalized
by its own Spark session's Parquet write. Java runs first and each run's figures go to stderr as it
ends, so a run cut short still tells what it measured. Untimed after each run: the merge-read
checksum against the model, the snapshot kinds and the changelog records of the C commits'
snapshots (lookup: a -U and a +U per upsert; input: the upserts as they came).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parent
PROJECT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(PROJECT / "src"))

import benchlib  # noqa: E402

from paimon_pyspark import CatalogFactory, Schema  # noqa: E402

PRODUCERS = ("none", "input", "lookup", "full-compaction")
OPTIONS = {
    "bucket": str(benchlib.PK_BUCKETS),
    "file.format": "parquet",
    "file.compression": "zstd",
    "file.compression.zstd-level": "1",
}
ZSTD_LEVEL = 1
QUICK = {"rows": 200_000, "commits": 10, "upserts": 2_000}
FULL = {"rows": 2_000_000, "commits": 100, "upserts": 20_000}


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall and process-tree CPU seconds of ``fn()``."""
    gc.collect()
    cpu = benchlib.tree_cpu_seconds()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start, benchlib.tree_cpu_seconds() - cpu


def upsert_ids(rows: int, commits: int, per_commit: int) -> list[np.ndarray]:
    rng = np.random.default_rng(40)
    return [rng.choice(rows, per_commit, replace=False).astype(np.int64) for _ in range(commits)]


def model(rows: int, ids: list[np.ndarray]) -> dict[str, float]:
    """PK_TOTALS of the table after every commit, from the generator alone."""
    version = np.ones(rows, dtype=np.int64)
    for c, keys in enumerate(ids):
        version[keys] = c + 2
    parts = [
        benchlib.pk_rows(np.flatnonzero(version == v).astype(np.int64), int(v))
        for v in np.unique(version)
    ]
    return benchlib.pk_totals(pa.concat_tables(parts))


def after_commits(warehouse: str, loaded: int, expected: dict[str, float] | None) -> dict[str, Any]:
    """Untimed: the checksum (raises on a mismatch; none for the warm-up), the snapshot kinds
    and the changelog records of the snapshots after ``loaded``."""
    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    if expected is not None:
        rb = table.new_read_builder()
        got = benchlib.pk_totals(rb.new_read().to_arrow(rb.new_scan().plan().splits()))
        bad = benchlib.totals_mismatch(expected, got)
        if bad:
            raise AssertionError(f"the table holds {bad}")
    manager = table.snapshot_manager
    latest = manager.latest_id() or loaded
    kinds: Counter[str] = Counter()
    changelog = 0
    for sid in range(loaded + 1, latest + 1):
        snapshot = manager.snapshot_if_exists(sid)
        if snapshot is not None:
            kinds[snapshot.commit_kind] += 1
            changelog += snapshot.changelog_record_count or 0
    return {"snapshot_kinds": dict(kinds), "changelog_records": changelog}


def load(warehouse: str, producer: str, rows: int) -> int:
    """A fresh table holding keys 0..rows-1 (version 1); returns its snapshot id."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(
        benchlib.pk_arrow(1, 1).schema,
        partition_keys=benchlib.PK_PARTITION_KEYS,
        primary_keys=benchlib.PK_PRIMARY_KEYS,
        options={**OPTIONS, "changelog-producer": producer},
    )
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    benchlib.write_commit(table, benchlib.pk_arrow(rows, 1))
    return int(table.snapshot_manager.latest_id() or 0)


def run_python(
    producer: str, rows: int, ids: list[np.ndarray], expected: dict[str, float], tmp: str
) -> dict[str, Any]:
    root = tempfile.mkdtemp(dir=tmp, prefix=f"py-{producer}-")
    try:
        warehouse = os.path.join(root, "w")
        loaded = load(warehouse, producer, rows)
        table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
        out = dict.fromkeys(("commits_s", "commits_cpu_s", "parquet_s", "parquet_cpu_s"), 0.0)
        for c, keys in enumerate(ids):
            data = benchlib.pk_rows(keys, c + 2)
            wall, cpu = timed(lambda d=data: benchlib.write_commit(table, d))
            out["commits_s"] += wall
            out["commits_cpu_s"] += cpu
            target = os.path.join(root, f"c{c:04d}.parquet")
            wall, cpu = timed(
                lambda d=data, t=target: pq.write_table(
                    d, t, compression="zstd", compression_level=ZSTD_LEVEL
                )
            )
            out["parquet_s"] += wall
            out["parquet_cpu_s"] += cpu
        return {**out, **after_commits(warehouse, loaded, expected)}
    except Exception as e:  # a producer this build cannot write yet: report it, go on
        return {"note": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def start_spark() -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from paimon_pyspark.spark import register

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon-changelog-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.parquet.compression.codec", "zstd")
        .config("spark.hadoop.parquet.compression.codec.zstd.level", str(ZSTD_LEVEL))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def run_spark(
    spark: Any,
    producer: str,
    rows: int,
    ids_dir: str,
    commits: int,
    expected: dict[str, float] | None,
    tmp: str,
) -> dict[str, Any]:
    from paimon_pyspark.spark import write

    root = tempfile.mkdtemp(dir=tmp, prefix=f"spark-{producer}-")
    try:
        warehouse = os.path.join(root, "w")
        loaded = load(warehouse, producer, rows)
        out = dict.fromkeys(("commits_s", "commits_cpu_s", "parquet_s", "parquet_cpu_s"), 0.0)
        for c in range(commits):
            keys = spark.read.parquet(os.path.join(ids_dir, f"c{c:04d}.parquet"))
            data = keys.selectExpr("coalesce(id, 0L) AS id").selectExpr(*benchlib.pk_exprs(c + 2))
            wall, cpu = timed(lambda d=data, w=warehouse: write(d, w, "db.t"))
            out["commits_s"] += wall
            out["commits_cpu_s"] += cpu
            target = os.path.join(root, f"c{c:04d}")
            wall, cpu = timed(lambda d=data, t=target: d.write.parquet(t))
            out["parquet_s"] += wall
            out["parquet_cpu_s"] += cpu
        return {**out, **after_commits(warehouse, loaded, expected)}
    except Exception as e:
        return {"note": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_java(
    rows: int,
    ids_dir: str,
    commits: int,
    producers: list[str],
    expected: dict[str, float],
    tmp: str,
) -> dict[str, Any]:
    """The connector's runs, {producer: result}, or {"note": why} when it cannot run."""
    python = os.environ.get("JAVA_CONNECTOR_PYTHON") or str(PROJECT / ".venv-spark35/bin/python")
    jar = os.environ.get("PAIMON_SPARK_JAR") or str(
        PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"
    )
    if not os.path.exists(python) or not os.path.exists(jar):
        return {"note": "Java connector baseline not built: run make bench"}
    command = {
        "op": "changelog_commits",
        "rows": rows,
        "commits": commits,
        "ids_dir": ids_dir,
        "producers": producers,
        "tmpdir": tmp,
    }
    proc = subprocess.run(
        [python, str(BENCH / "java_connector_driver.py"), json.dumps(command)],
        capture_output=True,
        text=True,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"note": f"failed: {proc.stderr.strip().splitlines()[-1:]}"}
    result: dict[str, Any] = json.loads(lines[-1])
    runs: dict[str, Any] = result["producers"]
    for producer, run in runs.items():
        bad = benchlib.totals_mismatch(expected, run.pop("totals"))
        if bad:
            runs[producer] = {"note": f"wrong result: {bad}"}
    return {"versions": f"{result['connector']} on spark {result['spark']}", "runs": runs}


def report(
    args: argparse.Namespace, engines: dict[str, dict[str, Any]], java_versions: str
) -> None:
    print()
    print(
        f"changelog producers: {args.commits} commits of {args.upserts:,} upserts into "
        f"{args.rows:,} rows ({len(benchlib.PK_PARTITIONS)} partitions, bucket "
        f"{benchlib.PK_BUCKETS})"
    )
    print(f"load average: {benchlib.load_average()}; java: {java_versions}")
    print(
        "wall and CPU seconds of the commits and of the same session's Parquet writes of the "
        "same rows; /parquet = commits over Parquet; vs none = commits over the engine's none"
    )
    header = (
        f"{'engine':<12}{'producer':<16}{'commits s':>10}{'cpu':>7}{'parquet s':>10}{'cpu':>6}"
        f"{'/parquet':>9}{'cpu':>7}{'vs none':>8}{'cpu':>7}{'changelog rows':>16}  snapshots"
    )
    print(header)
    print("-" * len(header))
    for engine, runs in engines.items():
        none = runs.get("none", {})
        for producer, run in runs.items():
            if "note" in run:
                print(f"{engine:<12}{producer:<16}{run['note']}")
                continue
            vs = vs_cpu = "-"
            if "commits_s" in none:
                vs = f"{run['commits_s'] / none['commits_s']:.2f}x"
                vs_cpu = f"{run['commits_cpu_s'] / none['commits_cpu_s']:.2f}x"
            kinds = " ".join(f"{k}={n}" for k, n in sorted(run["snapshot_kinds"].items()))
            print(
                f"{engine:<12}{producer:<16}{run['commits_s']:>10.2f}{run['commits_cpu_s']:>7.1f}"
                f"{run['parquet_s']:>10.2f}{run['parquet_cpu_s']:>6.1f}"
                f"{ratio(run, 'commits_s', 'parquet_s'):>9}"
                f"{ratio(run, 'commits_cpu_s', 'parquet_cpu_s'):>7}{vs:>8}{vs_cpu:>7}"
                f"{run['changelog_records']:>16,}  {kinds}"
            )
    java = engines.get("java", {}).get("lookup", {})
    print()
    for engine in ("spark.write",):  # the two Spark sessions; the Python API has no Spark
        ours = engines.get(engine, {}).get("lookup", {})
        if "commits_s" not in ours or "commits_s" not in java:
            continue
        for clock, (c, b) in (("wall", ("commits_s", "parquet_s")), ("cpu", CPU_KEYS)):
            if not ours[b] or not java[b]:
                continue
            mine, theirs = ours[c] / ours[b], java[c] / java[b]
            print(
                f"lookup, {engine} vs java 0.9, normalized ({clock}): java/ours "
                f"{theirs / mine:.2f}x (ours {mine:.2f}x its Parquet write, java {theirs:.2f}x)"
            )


CPU_KEYS = ("commits_cpu_s", "parquet_cpu_s")


def progress(what: str, result: dict[str, Any]) -> None:
    """Each run's figures as it ends (stderr), so a run cut short still tells them."""
    print(f"  {what}: {json.dumps(result)} (load {benchlib.load_average()})", file=sys.stderr)


def ratio(run: dict[str, Any], over: str, under: str) -> str:
    return f"{run[over] / run[under]:.1f}" if run[under] else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int)
    parser.add_argument("--commits", type=int)
    parser.add_argument("--upserts", type=int)
    parser.add_argument("--quick", action="store_true", help="a smoke run: " + str(QUICK))
    parser.add_argument("--producers", default=",".join(PRODUCERS))
    parser.add_argument("--java-producers", default="none,lookup")
    parser.add_argument("--no-spark", action="store_true", help="skip spark.write")
    parser.add_argument("--no-java", action="store_true", help="skip the Java connector")
    parser.add_argument("--tmpdir", default=None)
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    for key, value in sizes.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.upserts > args.rows or args.commits < 1:
        parser.error("need --upserts <= --rows and --commits >= 1")
    producers = [p for p in args.producers.split(",") if p]
    tmp = tempfile.mkdtemp(dir=args.tmpdir, prefix="changelog-producers-")
    engines: dict[str, dict[str, Any]] = {}
    java_versions = "skipped (--no-java)"
    try:
        ids = upsert_ids(args.rows, args.commits, args.upserts)
        expected = model(args.rows, ids)
        ids_dir = os.path.join(tmp, "ids")
        os.makedirs(ids_dir)
        for c, keys in enumerate(ids):
            pq.write_table(pa.table({"id": keys}), os.path.join(ids_dir, f"c{c:04d}.parquet"))
        if not args.no_java:  # first: the baseline the issue asks for is there if cut short
            print("java connector (spark 3.5, own process) ...", file=sys.stderr)
            java_producers = [p for p in args.java_producers.split(",") if p]
            java = run_java(args.rows, ids_dir, args.commits, java_producers, expected, tmp)
            if "note" in java:
                java_versions = java["note"]
            else:
                java_versions = java["versions"]
                engines["java"] = java["runs"]
            progress("java", engines.get("java", java))
        engines["python"] = {}
        for producer in producers:
            print(f"python API, {producer} ...", file=sys.stderr)
            engines["python"][producer] = run_python(producer, args.rows, ids, expected, tmp)
            progress(f"python {producer}", engines["python"][producer])
        if not args.no_spark:
            spark = start_spark()
            engines["spark.write"] = {}
            try:
                print("spark.write, warm-up ...", file=sys.stderr)
                run_spark(spark, "none", args.rows, ids_dir, 1, None, tmp)
                for producer in producers:
                    print(f"spark.write, {producer} ...", file=sys.stderr)
                    engines["spark.write"][producer] = run_spark(
                        spark, producer, args.rows, ids_dir, args.commits, expected, tmp
                    )
                    progress(f"spark.write {producer}", engines["spark.write"][producer])
            finally:
                spark.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(args, engines, java_versions)
    print(json.dumps({"args": vars(args), "engines": engines, "java": java_versions}))


if __name__ == "__main__":
    main()
