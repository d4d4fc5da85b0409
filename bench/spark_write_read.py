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
- reads: ``spark.read.format("paimon").load()`` and ``paimon_pyspark.spark.read`` of the table
  the format write produced and ``spark.read.parquet`` of Spark's files, each with one
  aggregate over every column (row count, sum of id and v, total length of s and dt), which
  also checks the rows came back.

Then, after this session stops, the Java Paimon Spark connector does the same write and read
through bench/java_connector_driver.py, in its own process and venv (``.venv-spark35``): the
only connector on Maven Central here is ``paimon-spark-3.5`` 0.9.0, so it runs on Spark 3.5, and
that session also times Spark 3.5's own Parquet write and read, so the ratios can be normalized
by each session's Parquet. Without ``make bench``'s venv and jar, the report says so.

Between the two, issue 42's legs run our doors on two other sessions, each in its own process
through bench/ours_session_driver.py (which calls ``run`` here): a Spark Connect client of a
server started from this venv's pyspark on 127.0.0.1 (the same ``local[2]`` and settings), and
pyspark 3.5.9 (``.venv-pyspark35``), where ``spark.write`` and ``spark.read`` stand for the
format doors it lacks; the last table sets them beside the classic session and the Java
connector (the same Spark 3.5, so ours/Java there needs no normalizing).

Every measurement warms up once, then takes the median of ``--repeat`` runs, each into fresh
directories; engines alternate within a run (within each session).

Run: ``.venv/bin/python bench/spark_write_read.py [--rows N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import benchlib
import pyarrow as pa
import pyspark
from benchlib import load_average, tree_cpu_seconds
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import paimon_pyspark
from paimon_pyspark.spark import read as spark_read
from paimon_pyspark.spark import register
from paimon_pyspark.spark import write as spark_write
from paimon_pyspark.spark.cluster import is_connect
from paimon_pyspark.spark.compat import has_datasource_api

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


MASTER = "local[2]"
SESSION_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "4g",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.parquet.compression.codec": "zstd",
    "spark.hadoop.parquet.compression.codec.zstd.level": str(ZSTD_LEVEL),
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}
"""Every session's settings: the classic one's here, a Spark Connect server's on its command
line (bench/ours_session_driver.py), so the legs differ only in how the client reaches Spark."""


def start_spark(arrow_batch: int | None, remote: str | None = None) -> SparkSession:
    """A classic ``local[2]`` session of this interpreter's pyspark, or with ``remote`` a Spark
    Connect client of that server; ``register`` where the pyspark has the Data Source API."""
    # Python workers must run this interpreter, where paimon_pyspark is installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    if remote:
        spark = SparkSession.builder.remote(remote).getOrCreate()
    else:
        builder = SparkSession.builder.master(MASTER).appName("paimon_pyspark-bench")
        for key, value in SESSION_CONF.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
    if arrow_batch is not None:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(arrow_batch))
    if has_datasource_api():
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
READS = ("ours format", "ours spark.read", "spark parquet")


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
    spark: SparkSession,
    df: DataFrame,
    expected: Totals,
    tmp_root: str | None,
    names: tuple[Sequence[str], Sequence[str]] = (WRITES, READS),
) -> tuple[dict[str, tuple[float, float, int, int]], dict[str, tuple[float, float, int]]]:
    """One round of the writes and reads ``names`` (of WRITES, READS), each into fresh
    directories; a read reads what the write of the same engine wrote."""
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
            if name not in names[0]:
                continue
            ours = name.startswith("ours")
            if ours:
                create_table(dirs[name])
            wall, cpu, _ = timed(job)
            if ours:
                files, size = check_table(dirs[name], rows, name)
            else:
                files, size = check_parquet(spark, dirs[name], rows, name)
            writes[name] = (wall, cpu, files, size)

        ours_table = next(dirs[n] for n in names[0] if n.startswith("ours"))
        sources = {
            "ours format": lambda: paimon_df(spark, ours_table),
            "ours spark.read": lambda: spark_read(spark, ours_table, TABLE),
            "spark parquet": lambda: spark.read.parquet(dirs["spark parquet"]),
        }
        for name, load in sources.items():
            if name not in names[1]:
                continue
            # a Connect client has no RDDs to ask
            tasks = 0 if is_connect(spark) else load().rdd.getNumPartitions()
            wall, cpu, got = timed(partial(read_totals, load))
            assert isinstance(got, Totals)
            expected.check(got, f"{name} read")
            reads[name] = (wall, cpu, tasks)
        return writes, reads
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(
    spark: SparkSession,
    df: DataFrame,
    expected: Totals,
    repeat: int,
    tmp_root: str | None,
    names: tuple[Sequence[str], Sequence[str]] = (WRITES, READS),
) -> tuple[dict[str, Measure], dict[str, Measure]]:
    print("  warm-up ...", file=sys.stderr)
    run_once(spark, df, expected, tmp_root, names)
    writes = {name: Measure() for name in names[0]}
    reads = {name: Measure() for name in names[1]}
    for i in range(repeat):
        print(f"  run {i + 1}/{repeat} ...", file=sys.stderr)
        w, r = run_once(spark, df, expected, tmp_root, names)
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


# --- ours on a Spark Connect session and on pyspark 3.5, each in its own process ----------------

LEGS = {
    "connect": (
        "Spark Connect client of a 4.3 server",
        ("ours format", "ours spark.write", "spark parquet"),
        ("ours format", "ours spark.read", "spark parquet"),
    ),
    "pyspark35": ("pyspark 3.5, .venv-pyspark35", ("ours spark.write",), ("ours spark.read",)),
}
"""Per leg: what it is, and the writes and reads it runs (pyspark 3.5 has no
``format("paimon")``)."""
TARGET_CONNECT = 1.10
"""Issue 42: a Connect session's time at most 10% over the classic session's."""


@dataclass
class LegRun:
    writes: dict[str, Measure] = field(default_factory=dict)
    reads: dict[str, Measure] = field(default_factory=dict)
    versions: str = ""
    note: str = ""


def run_leg(
    kind: str, rows: int, partitions: int, repeat: int, arrow: int | None, tmp: str | None
) -> LegRun:
    """bench/ours_session_driver.py's ``write_read``: through a Spark Connect server of this
    venv's pyspark, or on pyspark 3.5."""
    from ours_session_driver import connect_server, pyspark35_python, run_driver

    what, writes, reads = LEGS[kind]
    print(f"ours, {what} (own process) ...", file=sys.stderr)
    command: dict[str, Any] = {"op": "write_read", "rows": rows, "partitions": partitions}
    command |= {"repeat": repeat, "writes": list(writes), "reads": list(reads)}
    command |= {"arrow_batch": arrow, "tmpdir": tmp}
    logs = tempfile.mkdtemp(prefix="connect-server-", dir=tmp)
    try:
        if kind == "connect":
            with connect_server(logs) as (url, pid):
                command |= {"remote": url, "server_pid": pid}
                got, why = run_driver(sys.executable, command)
        else:
            got, why = run_driver(pyspark35_python(), command)
    except RuntimeError as e:
        got, why = None, str(e)
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    if got is None:
        return LegRun(note=f"{what}: {why}")
    out = LegRun(versions=f"{what}: pyspark {got['pyspark']}, spark {got['spark']}")
    out.writes = {k: Measure(**m) for k, m in got["writes"].items()}
    out.reads = {k: Measure(**m) for k, m in got["reads"].items()}
    medians = [
        f"{name} {op} {statistics.median(m.wall_s):.3f}"
        for op, group in (("write", out.writes), ("read", out.reads))
        for name, m in group.items()
    ]
    print(f"  {what}, median s: {'; '.join(medians)}", file=sys.stderr)
    return out


def report_legs(
    writes: dict[str, Measure],
    reads: dict[str, Measure],
    legs: dict[str, LegRun],
    java: JavaRun,
) -> None:
    """The table of issue 42: ours on classic 4.3, on Connect and on 3.5, and Java on 3.5."""
    connect, py35 = legs.get("connect", LegRun()), legs.get("pyspark35", LegRun())
    jw, jr = java.writes.get("java connector"), java.reads.get("java connector")
    pq35_w, pq35_r = java.writes.get("spark35 parquet"), java.reads.get("spark35 parquet")
    lines = [
        ("write: ours format", "ours format", "w", None),
        ("write: ours spark.write", "ours spark.write", "w", jw),
        ("read: ours format", "ours format", "r", None),
        ("read: ours spark.read", "ours spark.read", "r", jr),
        ("write: spark parquet", "spark parquet", "w", pq35_w),
        ("read: spark parquet", "spark parquet", "r", pq35_r),
    ]

    def secs(m: Measure | None) -> str:
        return "n/a" if m is None or not m.wall_s else f"{statistics.median(m.wall_s):.3f}"

    print()
    print("sessions (issue 42): median s of the same rows")
    print(
        f"  {'':<26}{'classic 4.3':>12}{'connect':>9}{'3.5':>9}{'java 3.5':>10}"
        f"{'connect/classic':>17}{'3.5 vs java 3.5':>18}{'cpu: c/c':>10}{'3.5/java':>10}"
    )
    for label, name, op, java35 in lines:
        classic = (writes if op == "w" else reads).get(name)
        conn = (connect.writes if op == "w" else connect.reads).get(name)
        ours35 = (py35.writes if op == "w" else py35.reads).get(name)
        over = over_cpu = math.nan
        if classic and conn and classic.wall_s and conn.wall_s:
            over = statistics.median(conn.wall_s) / statistics.median(classic.wall_s)
            over_cpu = statistics.median(conn.cpu_s) / statistics.median(classic.cpu_s)
        c_verdict = "n/a" if over != over else ("MET" if over <= TARGET_CONNECT else "NOT MET")
        if name == "spark parquet":
            c_verdict = ""  # reference: what Connect costs Spark's own source
        vs_java, vs_java_cpu = ratio(ours35, java35) if ours35 and java35 else (math.nan,) * 2
        target = label == "write: ours spark.write"
        j_verdict = verdict(vs_java, TARGET_WRITE_VS_JAVA) if target else ""
        print(
            f"  {label:<26}{secs(classic):>12}{secs(conn):>9}{secs(ours35):>9}{secs(java35):>10}"
            f"{'n/a' if over != over else f'{over:.2f}':>9} {c_verdict:<7}"
            f"{fmt_ratio(vs_java):>10} {j_verdict:<7}"
            f"{'n/a' if over_cpu != over_cpu else f'{over_cpu:.2f}':>10}"
            f"{fmt_ratio(vs_java_cpu):>10}"
        )
    print(
        f"  targets: connect/classic (time) <= {TARGET_CONNECT:.2f} for our doors; 3.5 vs java "
        f"3.5 (speed, same Spark, raw) >= {TARGET_WRITE_VS_JAVA:.1f}x for the write"
    )
    print(
        '  3.5: spark.write and spark.read (no format("paimon") there); java 3.5: the '
        "connector's writeTo().append() and read, parquet rows: Spark 3.5's own"
    )
    print(
        "  cpu: the same two ratios from CPU seconds (Connect: the client's and the server's "
        "process trees), steadier on a shared machine"
    )
    for leg in (connect, py35):
        if leg.versions:
            print(f"  {leg.versions}")
        if leg.note:
            print(f"  NOT RUN: {leg.note}")


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
    parser.add_argument("--no-connect", action="store_true", help="skip the Spark Connect leg")
    parser.add_argument("--no-pyspark35", action="store_true", help="skip ours on pyspark 3.5")
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
    # Each after the one before stops, so no two sessions compete for the cores.
    legs = {
        kind: run_leg(kind, args.rows, args.partitions, args.repeat, args.arrow_batch, args.tmpdir)
        for kind, skip in (("connect", args.no_connect), ("pyspark35", args.no_pyspark35))
        if not skip
    }
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
    report_legs(writes, reads, legs, java)
    return 0


if __name__ == "__main__":
    sys.exit(main())
