"""Spark write and read throughput: the paimon Python Data Source vs Spark's own Parquet.

One SparkSession on ``local[2]``, one cached DataFrame (``--rows`` rows: id bigint 0..N-1,
v random double, s 16-char hex string, dt string with 4 values spread evenly), timed on the same
session in the same run:

- ours (format): ``df.write.format("paimon")`` into a fresh append table partitioned by dt
  (bucket -1, parquet, zstd level 1), created beforehand with the catalog API (not timed);
- ours (spark.write): ``paimon_pyspark.spark.write(df, warehouse, "db.t")`` the same way;
- ours (format*): the format write again with Spark's own spark.sql.execution.arrow.maxBytesPerBatch
  (64 MiB), i.e. with the per-row size check that ``register()`` lifts by default (bench/README.md);
- spark parquet: ``df.write.parquet`` with zstd at the same level (Paimon's default, 1);
- reference only: ``df.write.partitionBy("dt").parquet``, the same layout as ours;
- reads: ``spark.read.format("paimon").load()`` of the table the format write produced and
  ``spark.read.parquet`` of Spark's files, each with one aggregate over every column (row count,
  sum of id and v, total length of s and dt), which also checks the rows came back.

Then, after this session stops, the Java Paimon Spark connector does the same write and read
through bench/java_connector_driver.py, in its own process and venv (``.venv-spark35``): the
only connector on Maven Central here is ``paimon-spark-3.5`` 0.9.0, so it runs on Spark 3.5, and
that session also times Spark 3.5's own Parquet write and read, so the ratios can be normalized
by each session's Parquet. Without ``make bench``'s venv and jar, the report says so.

Every measurement warms up once, then takes the median of ``--repeat`` runs, each into fresh
directories; engines alternate within a run (within each of the two sessions).

Run: ``.venv/bin/python bench/spark_write_read.py [--rows N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import benchlib
import pyarrow as pa
import pyspark
from benchlib import load_average, tree_cpu_seconds
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import paimon_pyspark
from paimon_pyspark.spark import register
from paimon_pyspark.spark import write as spark_write

PARTITIONS = benchlib.APPEND_PARTITIONS
SCHEMA = pa.schema(
    [("id", pa.int64()), ("v", pa.float64()), ("s", pa.string()), ("dt", pa.string())]
)
ZSTD_LEVEL = 1  # Paimon's default file.compression.zstd-level; Spark's writer is set to match
TABLE = "db.t"

# Targets from the issue.
TARGET_WRITE_VS_SPARK = 0.8
TARGET_READ_VS_SPARK = 0.6
TARGET_WRITE_VS_JAVA = 1.0
PROJECT = Path(__file__).resolve().parent.parent
JAVA_DRIVER = Path(__file__).resolve().parent / "java_connector_driver.py"
JAVA_JAR = PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"
JAVA_NOTE = (
    "-- Spark 3.5 session, own process: the Java connector is paimon-spark-3.5 0.9.0\n"
    "   (Maven Central here has no Paimon connector for Spark 4); spark35 = its own Parquet"
)


# --- machine ------------------------------------------------------------------------------------


def machine_facts(spark: SparkSession) -> list[tuple[str, str]]:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    jvm = spark.sparkContext._jvm
    java = jvm.System.getProperty("java.version") if jvm is not None else "?"
    conf = spark.conf
    return [
        ("cpu", cpu),
        ("cores", f"{os.cpu_count()} logical, {usable} usable by this process"),
        ("spark", f"{pyspark.__version__}, {spark.sparkContext.master}, java {java}"),
        ("python", f"{platform.python_version()} ({platform.platform()})"),
        ("pyarrow", pa.__version__),
        (
            "arrow batches",
            f"maxRecordsPerBatch = {conf.get('spark.sql.execution.arrow.maxRecordsPerBatch')}, "
            f"maxBytesPerBatch = {conf.get(MAX_BYTES)} (spark.sql.execution.arrow.*)",
        ),
        (
            "spark parquet",
            f"codec {conf.get('spark.sql.parquet.compression.codec')}, "
            f"zstd level {ZSTD_LEVEL} (parquet.compression.codec.zstd.level)",
        ),
    ]


# --- session and data ---------------------------------------------------------------------------


def start_spark(arrow_batch: int | None) -> SparkSession:
    # Python workers must run this interpreter, where paimon_pyspark is installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("paimon_pyspark-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.parquet.compression.codec", "zstd")
        .config("spark.hadoop.parquet.compression.codec.zstd.level", str(ZSTD_LEVEL))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    if arrow_batch is not None:
        builder = builder.config("spark.sql.execution.arrow.maxRecordsPerBatch", str(arrow_batch))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def generate(spark: SparkSession, rows: int, partitions: int) -> DataFrame:
    """The benchmark rows, cached; dt cycles row by row, so each value gets rows // 4 rows.

    benchlib.APPEND_EXPRS defines them, so the Java connector's session generates the same.
    """
    df = spark.range(0, rows, numPartitions=partitions).selectExpr(*benchlib.APPEND_EXPRS)
    df = df.cache()
    df.count()
    return df


@dataclass(frozen=True)
class Totals:
    """What reading every column back must give."""

    rows: int
    sum_id: int
    sum_v: float
    len_s: int
    len_dt: int

    def check(self, other: Totals, who: str) -> None:
        exact = (self.rows, self.sum_id, self.len_s, self.len_dt)
        got = (other.rows, other.sum_id, other.len_s, other.len_dt)
        if exact != got:
            raise AssertionError(f"{who} read back {other}, expected {self}")
        if abs(other.sum_v - self.sum_v) > 1e-9 * max(1.0, abs(self.sum_v)):
            raise AssertionError(f"{who} read back sum(v) = {other.sum_v}, expected {self.sum_v}")


def totals(df: DataFrame) -> Totals:
    """One action over every column: the read being timed."""
    row = df.agg(
        F.count(F.lit(1)),
        F.sum("id"),
        F.sum("v"),
        F.sum(F.length("s")),
        F.sum(F.length("dt")),
    ).collect()[0]
    rows, sum_id, sum_v, len_s, len_dt = (x or 0 for x in row)
    return Totals(int(rows), int(sum_id), float(sum_v), int(len_s), int(len_dt))


# --- what is timed ------------------------------------------------------------------------------


@dataclass
class Measure:
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    data_bytes: int = 0
    files: int = 0
    tasks: int = 0

    def add(self, wall: float, cpu: float) -> None:
        self.wall_s.append(wall)
        self.cpu_s.append(cpu)


def timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    """Wall-clock seconds and CPU seconds of the whole process tree for one call."""
    gc.collect()
    cpu = tree_cpu_seconds()
    start = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - start
    return wall, tree_cpu_seconds() - cpu, out


def data_files(root: str) -> list[str]:
    return [
        os.path.join(folder, name)
        for folder, _dirs, names in os.walk(root)
        for name in names
        if name.endswith(".parquet") and not name.startswith(".")
    ]


def create_table(warehouse: str) -> None:
    catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        TABLE, paimon_pyspark.Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"])
    )


def check_table(warehouse: str, rows: int, who: str) -> tuple[int, int]:
    """(files, bytes) of the one snapshot a write made; raises unless it holds ``rows`` rows."""
    table = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse}).get_table(TABLE)
    if table.snapshot_manager.latest_id() != 1:
        raise AssertionError(f"{who}: expected exactly one snapshot")
    splits = table.new_read_builder().new_scan().plan().splits()
    count = sum(s.row_count for s in splits)
    if count != rows:
        raise AssertionError(f"{who} wrote {count} rows, expected {rows}")
    files = data_files(os.path.join(warehouse, "db.db", "t"))
    return len(files), sum(os.path.getsize(f) for f in files)


def check_parquet(spark: SparkSession, path: str, rows: int, who: str) -> tuple[int, int]:
    count = spark.read.parquet(path).count()
    if count != rows:
        raise AssertionError(f"{who} wrote {count} rows, expected {rows}")
    files = data_files(path)
    return len(files), sum(os.path.getsize(f) for f in files)


def paimon_df(spark: SparkSession, warehouse: str) -> DataFrame:
    return spark.read.format("paimon").option("warehouse", warehouse).option("table", TABLE).load()


MAX_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"
INT_MAX = 2**31 - 1
SPARK_DEFAULT_MAX_BYTES = str(64 * 1024 * 1024)
# register() sets MAX_BYTES = INT_MAX unless the user set it: Spark then skips the Arrow size check
# it makes after every row sent to Python (see bench/README.md); its record limit still bounds
# batches. The row marked * puts Spark's default back, to show what the check costs.
WRITES = (
    "ours format",
    "ours spark.write",
    "ours format*",
    "spark parquet",
    "spark parquet by dt",
)
READS = ("ours format", "spark parquet")


def with_spark_byte_cap(spark: SparkSession, fn: Callable[[], object]) -> Callable[[], object]:
    def run() -> None:
        previous = spark.conf.get(MAX_BYTES, None)
        spark.conf.set(MAX_BYTES, SPARK_DEFAULT_MAX_BYTES)
        try:
            fn()
        finally:
            if previous is None:
                spark.conf.unset(MAX_BYTES)
            else:
                spark.conf.set(MAX_BYTES, previous)

    return run


def read_totals(load: Callable[[], DataFrame]) -> Totals:
    return totals(load())


def run_once(
    spark: SparkSession, df: DataFrame, expected: Totals, tmp_root: str | None
) -> tuple[dict[str, tuple[float, float, int, int]], dict[str, tuple[float, float, int]]]:
    """One round of every write and read, each into fresh directories."""
    rows = expected.rows
    root = tempfile.mkdtemp(prefix="spark-bench-", dir=tmp_root)
    writes: dict[str, tuple[float, float, int, int]] = {}
    reads: dict[str, tuple[float, float, int]] = {}
    try:
        dirs = {name: os.path.join(root, f"w{i}") for i, name in enumerate(WRITES)}

        def format_write(warehouse: str) -> Callable[[], None]:
            def run() -> None:
                df.write.format("paimon").option("warehouse", warehouse).option(
                    "table", TABLE
                ).mode("append").save()

            return run

        def api_write(warehouse: str) -> Callable[[], object]:
            return lambda: spark_write(df, warehouse, TABLE)

        def parquet_write(path: str, by_dt: bool) -> Callable[[], object]:
            writer = df.write.mode("overwrite")
            return lambda: (writer.partitionBy("dt") if by_dt else writer).parquet(path)

        jobs: dict[str, Callable[[], object]] = {
            "ours format": format_write(dirs["ours format"]),
            "ours spark.write": api_write(dirs["ours spark.write"]),
            "ours format*": with_spark_byte_cap(spark, format_write(dirs["ours format*"])),
            "spark parquet": parquet_write(dirs["spark parquet"], by_dt=False),
            "spark parquet by dt": parquet_write(dirs["spark parquet by dt"], by_dt=True),
        }
        for name, job in jobs.items():
            ours = name.startswith("ours")
            if ours:
                create_table(dirs[name])
            wall, cpu, _ = timed(job)
            if ours:
                files, size = check_table(dirs[name], rows, name)
            else:
                files, size = check_parquet(spark, dirs[name], rows, name)
            writes[name] = (wall, cpu, files, size)

        sources = {
            "ours format": lambda: paimon_df(spark, dirs["ours format"]),
            "spark parquet": lambda: spark.read.parquet(dirs["spark parquet"]),
        }
        for name, load in sources.items():
            tasks = load().rdd.getNumPartitions()
            wall, cpu, got = timed(partial(read_totals, load))
            assert isinstance(got, Totals)
            expected.check(got, f"{name} read")
            reads[name] = (wall, cpu, tasks)
        return writes, reads
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(
    spark: SparkSession, df: DataFrame, expected: Totals, repeat: int, tmp_root: str | None
) -> tuple[dict[str, Measure], dict[str, Measure]]:
    print("  warm-up ...", file=sys.stderr)
    run_once(spark, df, expected, tmp_root)
    writes = {name: Measure() for name in WRITES}
    reads = {name: Measure() for name in READS}
    for i in range(repeat):
        print(f"  run {i + 1}/{repeat} ...", file=sys.stderr)
        w, r = run_once(spark, df, expected, tmp_root)
        for name, (wall, cpu, files, size) in w.items():
            writes[name].add(wall, cpu)
            writes[name].files, writes[name].data_bytes = files, size
        for name, (wall, cpu, tasks) in r.items():
            reads[name].add(wall, cpu)
            reads[name].tasks = tasks
    return writes, reads


# --- the Java connector, in its own process ------------------------------------------------------

JAVA_NAMES = {
    "java write": ("write", "java connector"),
    "java read": ("read", "java connector"),
    "spark35 parquet write": ("write", "spark35 parquet"),
    "spark35 parquet read": ("read", "spark35 parquet"),
}


@dataclass
class JavaRun:
    """The Spark 3.5 session's measurements, or why there are none."""

    writes: dict[str, Measure] = field(default_factory=dict)
    reads: dict[str, Measure] = field(default_factory=dict)
    versions: str = ""
    note: str = ""


def java_python() -> str:
    return os.environ.get("JAVA_CONNECTOR_PYTHON") or str(
        PROJECT / ".venv-spark35" / "bin" / "python"
    )


def run_java(rows: int, partitions: int, repeat: int, tmp_root: str | None) -> JavaRun:
    """bench/java_connector_driver.py's append op: same rows, same write, same read aggregate."""
    python = java_python()
    if not os.path.exists(python) or not (os.environ.get("PAIMON_SPARK_JAR") or JAVA_JAR.exists()):
        return JavaRun(note="Java connector baseline not built: run make bench")
    command = {"op": "append", "rows": rows, "partitions": partitions, "repeat": repeat}
    command["warmup"] = 1
    if tmp_root:
        command["tmpdir"] = tmp_root
    proc = subprocess.run(
        [python, str(JAVA_DRIVER), json.dumps(command)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return JavaRun(note=f"Java connector run failed: {tail[0]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    out = JavaRun(versions=f"spark {result['spark']}, java {result['java']}, {result['connector']}")
    for key, (op, name) in JAVA_NAMES.items():
        got = result["results"][key]
        m = Measure(list(got["wall_s"]), list(got["cpu_s"]))
        m.files, m.data_bytes = got.get("files", 0), got.get("data_bytes", 0)
        m.tasks = got.get("tasks", partitions)
        (out.writes if op == "write" else out.reads)[name] = m
    return out


# --- report -------------------------------------------------------------------------------------


def rate(rows: int, seconds: list[float]) -> float:
    return rows / statistics.median(seconds) if seconds else float("nan")


def fmt_rate(value: float) -> str:
    return "n/a" if value != value else f"{value / 1e6:,.2f} M"


def fmt_ratio(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}x"


def verdict(value: float, target: float) -> str:
    return "n/a" if value != value else ("MET" if value >= target else "NOT MET")


def ratio(ours: Measure | None, theirs: Measure | None) -> tuple[float, float]:
    """(rows/s ratio from wall-clock medians, the same from tree CPU medians); NaN if missing."""
    if ours is None or theirs is None:
        return float("nan"), float("nan")
    wall = statistics.median(theirs.wall_s) / statistics.median(ours.wall_s)
    cpu = statistics.median(theirs.cpu_s) / statistics.median(ours.cpu_s)
    return wall, cpu


def print_rows(
    rows: int, partitions: int, writes: dict[str, Measure], reads: dict[str, Measure]
) -> None:
    for op, results in (("write", writes), ("read", reads)):
        for name, m in results.items():
            label = f"{name} {op}"
            size = f"{m.data_bytes / 1e6:.1f}" if op == "write" else ""
            files = str(m.files) if op == "write" else ""
            tasks = str(m.tasks) if op == "read" else str(partitions)
            print(
                f"{label:<26}{statistics.median(m.wall_s):>9.3f}{statistics.median(m.cpu_s):>8.2f}"
                f"{fmt_rate(rate(rows, m.wall_s)):>11}{size:>8}{files:>7}{tasks:>7}   "
                + " ".join(f"{s:.3f}" for s in m.wall_s)
            )


def report(
    facts: list[tuple[str, str]],
    rows: int,
    repeat: int,
    partitions: int,
    writes: dict[str, Measure],
    reads: dict[str, Measure],
    java: JavaRun,
    loads: tuple[str, str],
) -> None:
    print()
    print(
        f"Spark append-table write/read: {rows:,} rows in {partitions} cached partitions, "
        f"median of {repeat} (after 1 warm-up)"
    )
    for key, value in facts:
        print(f"  {key:<14} {value}")
    if java.versions:
        print(f"  {'java session':<14} {java.versions} (.venv-spark35)")
    print(f"  {'load average':<14} {loads[0]} before, {loads[1]} after (1, 5, 15 min)")
    print()
    header = (
        f"{'':<26}{'median s':>9}{'cpu s':>8}{'rows/s':>11}{'MB':>8}{'files':>7}{'tasks':>7}"
        "   runs (s)"
    )
    print(header)
    print("-" * len(header))
    print_rows(rows, partitions, writes, reads)
    print(JAVA_NOTE)
    if java.note:
        print(f"{'java connector':<26}{java.note}")
    else:
        print_rows(rows, partitions, java.writes, java.reads)
    print("  cpu s: driver + JVM + Python workers; 'by dt': a reference with our layout")
    print(f"  *: written with Spark's default {MAX_BYTES} = {SPARK_DEFAULT_MAX_BYTES}; the other")
    print(f"     rows run with {INT_MAX}, which register() sets unless the user set it")

    pq_write, pq_read = writes["spark parquet"], reads["spark parquet"]
    jw, jr = java.writes.get("java connector"), java.reads.get("java connector")
    pq35_w, pq35_r = java.writes.get("spark35 parquet"), java.reads.get("spark35 parquet")
    fmt_w = ratio(writes["ours format"], pq_write)
    api_w = ratio(writes["ours spark.write"], pq_write)
    fmt_u = ratio(writes["ours format*"], pq_write)
    ours_r = ratio(reads["ours format"], pq_read)
    java_w, java_r = ratio(jw, pq35_w), ratio(jr, pq35_r)
    print()
    print(f"{'ratio (rows/s)':<52}{'wall':>7}{'cpu':>7}")
    for label, (wall, cpu) in (
        ("ours format write       / spark parquet write", fmt_w),
        ("ours spark.write write  / spark parquet write", api_w),
        ("ours format* write      / spark parquet write", fmt_u),
        (
            "spark parquet by dt     / spark parquet write",
            ratio(writes["spark parquet by dt"], pq_write),
        ),
        ("ours format read        / spark parquet read", ours_r),
        ("java connector write    / spark35 parquet write", java_w),
        ("java connector read     / spark35 parquet read", java_r),
        ("spark parquet write     / spark35 parquet write", ratio(pq_write, pq35_w)),
        ("spark parquet read      / spark35 parquet read", ratio(pq_read, pq35_r)),
        ("ours format write       / java connector write", ratio(writes["ours format"], jw)),
        ("ours spark.write write  / java connector write", ratio(writes["ours spark.write"], jw)),
        ("ours format read        / java connector read", ratio(reads["ours format"], jr)),
    ):
        print(f"  {label:<50}{fmt_ratio(wall):>7}{fmt_ratio(cpu):>7}")
    # Each engine against its own session's Parquet, then the two against each other: this
    # takes out what differs between the Spark 4.3 and the Spark 3.5 sessions.
    normalized = [
        ("ours format write       / java connector write", fmt_w, java_w),
        ("ours spark.write write  / java connector write", api_w, java_w),
        ("ours format read        / java connector read", ours_r, java_r),
    ]
    print("  normalized: each engine's ratio to its own session's parquet, then divided")
    for label, (ow, oc), (jw_, jc) in normalized:
        print(f"  {label:<50}{fmt_ratio(ow / jw_):>7}{fmt_ratio(oc / jc):>7}")
    print("  (cpu: the same ratio from CPU seconds, steadier when the machine is shared)")
    print("  (java connector and spark35 parquet: Spark 3.5.x session, own process, same rows)")
    print()
    print("targets (from the issue)")
    t_w, t_r = TARGET_WRITE_VS_SPARK, TARGET_READ_VS_SPARK
    print(
        f"  write (format)      >= {t_w:.1f}x spark parquet write: {fmt_ratio(fmt_w[0]):>7}  "
        + verdict(fmt_w[0], t_w)
    )
    print(
        f"  write (spark.write) >= {t_w:.1f}x spark parquet write: {fmt_ratio(api_w[0]):>7}  "
        + verdict(api_w[0], t_w)
    )
    print(
        f"  read                >= {t_r:.1f}x spark parquet read:  {fmt_ratio(ours_r[0]):>7}  "
        + verdict(ours_r[0], t_r)
    )
    for door, key in (("format", "ours format"), ("spark.write", "ours spark.write")):
        vs = ratio(writes[key], jw)[0]
        norm = ratio(writes[key], pq_write)[0] / java_w[0]
        print(
            f"  write ({door:<11}) >= {TARGET_WRITE_VS_JAVA:.1f}x java connector write: "
            f"{fmt_ratio(vs):>7}  {verdict(vs, TARGET_WRITE_VS_JAVA)}"
            f"  (normalized: {fmt_ratio(norm)} {verdict(norm, TARGET_WRITE_VS_JAVA)}; "
            "java on Spark 3.5)"
        )
    vs_java = ratio(reads["ours format"], jr)[0]
    normalized_read = ours_r[0] / java_r[0]
    print(
        f"  read vs java connector read (reported beside, no target): {fmt_ratio(vs_java)}"
        f"  (normalized: {fmt_ratio(normalized_read)})"
    )
    print(f"  (with *: write (format) {fmt_ratio(fmt_u[0])} {verdict(fmt_u[0], t_w)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--partitions", type=int, default=2, help="partitions of the cached DataFrame (default 2)"
    )
    parser.add_argument(
        "--arrow-batch",
        type=int,
        default=None,
        help="spark.sql.execution.arrow.maxRecordsPerBatch (default: Spark's, 10000)",
    )
    parser.add_argument("--tmpdir", default=None, help="where tables and files go (default: TMP)")
    parser.add_argument("--no-java", action="store_true", help="skip the Java connector runs")
    args = parser.parse_args()
    if args.rows < len(PARTITIONS) or args.repeat < 1 or args.partitions < 1:
        parser.error("need --rows >= 4, --repeat >= 1 and --partitions >= 1")

    load_before = load_average()
    print("starting spark ...", file=sys.stderr)
    spark = start_spark(args.arrow_batch)
    try:
        print(f"generating and caching {args.rows:,} rows ...", file=sys.stderr)
        df = generate(spark, args.rows, args.partitions)
        expected = totals(df)
        writes, reads = run(spark, df, expected, args.repeat, args.tmpdir)
        facts = machine_facts(spark)
        df.unpersist()
    finally:
        spark.stop()
    # After our session stops, so the two JVMs never compete for the cores.
    if args.no_java:
        java = JavaRun(note="skipped (--no-java)")
    else:
        print("java connector (spark 3.5, own process) ...", file=sys.stderr)
        java = run_java(args.rows, args.partitions, args.repeat, args.tmpdir)
    report(
        facts,
        args.rows,
        args.repeat,
        args.partitions,
        writes,
        reads,
        java,
        (load_before, load_average()),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
