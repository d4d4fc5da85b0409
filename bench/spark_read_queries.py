"""Spark read queries with pruning: ``paimon_pyspark.spark.read`` vs Spark's Parquet and Java.

A table of ``--rows`` rows (default 5,000,000), 8 columns, 16 partitions (``dt``), is read on
Spark ``local[2]`` by five queries, each an aggregate whose result every engine must match:

- (a) full scan: count plus a sum or total length over every column;
- (b) (a) on one partition (``dt = '2026-01-06'``), which should open only that partition's files;
- (c) (a) on an id range of 1% of the rows: the table is sorted by ``id`` within each partition
  (sort compaction for Paimon, range partitioning for Parquet), so file stats (Paimon) and row
  group stats (Parquet) skip most of it;
- (d) an aggregate over 2 of the 8 columns;
- (e) (a) on a primary-key table (``dt, id``, bucket 2) after 3 overlapping commits, merged on
  read; Parquet holds its final rows;
- (e_dv) (e) on the same table with ``deletion-vectors.enabled`` (issue 37): no merge, each
  file's vector applied; ours and Spark's Parquet only (the Java session builds no such table).

(b) and (c) take a fraction of a second, where this machine's jitter is tens of percent: each
round runs them ``SHORT_TIMES`` times on every engine (alternating), so their medians are over
that many times more runs.

Engines: ours (``paimon_pyspark.spark.read(spark, warehouse, table, where=, columns=)``, then
the same filter in Spark, since a source may return more rows), Spark's Parquet (partitioned by
``dt`` the same way) in the same session, and the Java Paimon Spark connector (Spark 3.5,
Paimon 0.9.0, bench/java_connector_driver.py's ``read_queries`` op) in its own process after
this session stops, which also times Spark 3.5's Parquet on the same queries so ours/Java can
be normalized by each session's Parquet. Side table: our ``format("paimon")`` write against
Spark's Parquet write of the same cached DataFrame.

Issue 42's legs, between the two: our engine on the tables this session built, through a Spark
Connect client (a server of this venv's pyspark on 127.0.0.1, the same ``local[2]`` and
settings; Spark's Parquet timed there too) and on pyspark 3.5.9 (``.venv-pyspark35``, writing
with ``spark.write``), each in its own process (bench/ours_session_driver.py, which calls
``run_queries`` and ``run_writes`` here); a last table sets them beside the classic session and
the Java connector, which runs on the same Spark 3.5.

Run: ``.venv/bin/python bench/spark_read_queries.py [--rows N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pyarrow as pa
from benchlib import load_average
from java_connector_driver import scan_metrics
from ours_session_driver import connect_server, pyspark35_python, run_driver
from pyspark.sql import DataFrame, SparkSession
from spark_write_read import (
    JAVA_DRIVER,
    JAVA_JAR,
    data_files,
    java_python,
    machine_facts,
    start_spark,
    timed,
)

import paimon_pyspark
from paimon_pyspark.procedures import compact
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.spark import read as paimon_read
from paimon_pyspark.spark import write as spark_write
from paimon_pyspark.spark.cluster import is_connect

DAYS = [f"2026-01-{d:02d}" for d in range(1, 17)]
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("k", pa.int32()),
        ("v", pa.float64()),
        ("w", pa.float64()),
        ("s", pa.string()),
        ("t", pa.string()),
        ("b", pa.bool_()),
        ("dt", pa.string()),
    ]
)
COLUMNS = SCHEMA.names
DDL = "id BIGINT, k INT, v DOUBLE, w DOUBLE, s STRING, t STRING, b BOOLEAN, dt STRING"
PK_DDL = "id BIGINT NOT NULL, k INT, v DOUBLE, w DOUBLE, s STRING, t STRING, b BOOLEAN, "
PK_DDL += "dt STRING NOT NULL"
PRIMARY_KEY = ["dt", "id"]
PK_BUCKETS = 2
SORT_BY = "id"
APPEND, PK, PK_DV = "db.t", "db.pk", "db.pk_dv"
MULTIPLIER = 2654435761  # a prime: id = i * MULTIPLIER % N permutes 0..N-1 (N not a multiple)

SHORT_TIMES = 4
"""Runs per round of (b) and (c) (``Query.times``)."""

# Targets from issue 16.
TARGET_FULL_SCAN = 0.75
TARGET_PRUNED = 0.8
TARGET_VS_JAVA = 1.0
TARGET_WRITE = 0.8


def row_exprs(ver: str) -> list[str]:
    """The 8 columns over a bigint ``id``; ``ver`` (SQL) is the commit that wrote the row, so
    a merge that keeps the wrong version changes k, v, w, t and b."""
    days = ", ".join(f"'{d}'" for d in DAYS)
    return [
        "id",
        f"cast((id * 31 + {ver}) % 100000 AS int) AS k",
        f"cast((id * 7919 + ({ver}) * 104729) % 1000003 AS double) / 1000003D AS v",
        f"cast(id % 10007 AS double) / 16D + ({ver}) AS w",
        "substr(md5(cast(id AS string)), 1, 16) AS s",
        f"concat('t', cast({ver} AS string), '-', cast(id % 9973 AS string)) AS t",
        f"(id + {ver}) % 3 = 0 AS b",
        f"element_at(array({days}), cast(id % {len(DAYS)} AS int) + 1) AS dt",
    ]


def append_selects(rows: int) -> list[list[str]]:
    """Over ``spark.range(rows)``: ids shuffled (so sorting has work to do), then the columns."""
    return [[f"id * {MULTIPLIER} % {rows} AS id"], row_exprs("1")]


def pk_commits(rows: int) -> list[tuple[int, int, int]]:
    """(first id, end id, version) of the 3 commits: half the keys each, each overlapping the
    previous one by a quarter; together every key 0..rows-1."""
    q = rows // 4
    return [(0, 2 * q, 1), (q, 3 * q, 2), (2 * q, rows, 3)]


def final_version(rows: int) -> str:
    q = rows // 4
    return f"CASE WHEN id >= {2 * q} THEN 3 WHEN id >= {q} THEN 2 ELSE 1 END"


ALL_AGGS = [
    "count(1)",
    "sum(id)",
    "sum(k)",
    "sum(v)",
    "sum(w)",
    "sum(length(s))",
    "sum(length(t))",
    "sum(cast(b AS int))",
    "sum(length(dt))",
]


@dataclass(frozen=True)
class Query:
    name: str
    title: str
    table: str  # APPEND or PK
    where: str | None
    columns: list[str]
    aggs: list[str]
    times: int = 1
    """Runs per round on every engine: the pruned queries take a fraction of a second, where a
    machine's jitter is tens of percent, so their medians are over this many times more runs."""


def queries(rows: int) -> list[Query]:
    lo = rows * 37 // 100
    hi = lo + max(rows // 100, 1) - 1
    return [
        Query("a", "full scan, all 8 columns", APPEND, None, COLUMNS, ALL_AGGS),
        Query(
            "b", "one partition of 16", APPEND, f"dt = '{DAYS[5]}'", COLUMNS, ALL_AGGS, SHORT_TIMES
        ),
        Query(
            "c",
            "id range, 1% of rows",
            APPEND,
            f"id BETWEEN {lo} AND {hi}",
            COLUMNS,
            ALL_AGGS,
            SHORT_TIMES,
        ),
        Query(
            "d",
            "2 of 8 columns",
            APPEND,
            None,
            ["v", "s"],
            ["count(1)", "sum(v)", "sum(length(s))"],
        ),
        Query("e", "(a) on the pk table, 3 commits", PK, None, COLUMNS, ALL_AGGS),
        Query("e_dv", "(e) with deletion vectors", PK_DV, None, COLUMNS, ALL_AGGS),
    ]


# --- ours and Spark's Parquet, in this session --------------------------------------------------


def catalog(warehouse: str) -> Any:
    return paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})


def create_table(warehouse: str, name: str, primary_key: bool, dv: bool = False) -> None:
    cat = catalog(warehouse)
    cat.create_database("db", ignore_if_exists=True)
    if primary_key:
        options = {"bucket": str(PK_BUCKETS)}
        if dv:
            options["deletion-vectors.enabled"] = "true"
        schema = paimon_pyspark.Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"], primary_keys=PRIMARY_KEY, options=options
        )
    else:
        schema = paimon_pyspark.Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"])
    cat.create_table(name, schema)


def files_of(paths: Sequence[str]) -> tuple[int, int]:
    files = [f for p in paths for f in data_files(p)]
    return len(files), sum(os.path.getsize(f) for f in files)


@dataclass
class Layout:
    """Where this session's tables are, and what was built."""

    root: str
    ours: str = ""
    parquet: str = ""
    parquet_pk: str = ""
    target_file_size: int = 0
    build_s: dict[str, float] = field(default_factory=dict)
    tables: dict[str, tuple[int, int]] = field(default_factory=dict)


def build(spark: SparkSession, df: DataFrame, rows: int, per_partition: int, root: str) -> Layout:
    """Our two tables and Spark's Parquet of the same rows; timed for the record only."""
    out = Layout(root, os.path.join(root, "ours"), os.path.join(root, "pq"))
    out.parquet_pk = os.path.join(root, "pq_pk")
    create_table(out.ours, APPEND, primary_key=False)
    writer = df.write.format("paimon").option("warehouse", out.ours).option("table", APPEND)
    out.build_s["ours write"] = timed(lambda: writer.mode("append").save())[0]
    _, unsorted_bytes = files_of([os.path.join(out.ours, "db.db", "t")])
    # Files of about 1/per_partition of a partition, so each covers a narrow id range.
    out.target_file_size = max(unsorted_bytes // (len(DAYS) * per_partition), 64 * 1024)
    out.build_s["ours sort compact"] = timed(
        lambda: compact(
            catalog(out.ours),
            APPEND,
            order_strategy="order",
            order_by=SORT_BY,
            options={"target-file-size": str(out.target_file_size)},
        )
    )[0]
    ranged = df.repartitionByRange(per_partition, SORT_BY).sortWithinPartitions(SORT_BY)
    out.build_s["spark parquet write"] = timed(
        lambda: ranged.write.partitionBy("dt").parquet(out.parquet)
    )[0]

    for name, dv, label in ((PK, False, "ours pk commits"), (PK_DV, True, "ours pk dv commits")):
        create_table(out.ours, name, primary_key=True, dv=dv)
        total = 0.0
        for start, end, ver in pk_commits(rows):
            commit = spark.range(start, end, numPartitions=2).selectExpr(*row_exprs(str(ver)))
            total += timed(lambda c=commit, n=name: spark_write(c, out.ours, n))[0]
        out.build_s[label] = total
    final = spark.range(0, rows, numPartitions=2).selectExpr(*row_exprs(final_version(rows)))
    out.build_s["spark parquet pk write"] = timed(
        lambda: final.write.partitionBy("dt").parquet(out.parquet_pk)
    )[0]
    out.tables = {
        "ours": count_files(planned_files(out.ours, APPEND, None)),
        "ours pk": count_files(planned_files(out.ours, PK, None)),
        "ours pk dv": count_files(planned_files(out.ours, PK_DV, None)),
        "spark parquet": files_of([out.parquet]),
        "spark parquet pk": files_of([out.parquet_pk]),
    }
    return out


NATIVE_READ = {"native-read": "true"}


def ours_relation(spark: SparkSession, layout: Layout, q: Query) -> DataFrame:
    """Our relation for ``q``: making it plans the scan (our manifests), then Spark lists the
    planned files; both are timed as part of the query."""
    return paimon_read(
        spark, layout.ours, q.table, where=q.where, columns=q.columns, options=NATIVE_READ
    )


def parquet_relation(spark: SparkSession, layout: Layout, q: Query) -> DataFrame:
    """Spark's Parquet relation, made before the timing: its listing is cached from here on, as
    the Java driver's temp views are."""
    return spark.read.parquet(layout.parquet if q.table == APPEND else layout.parquet_pk)


def query_of(df: DataFrame, q: Query) -> DataFrame:
    """The query on a relation: Spark analyzes it (the same work for every engine) untimed."""
    if q.where:
        df = df.where(q.where)
    return df.select(*q.columns).selectExpr(*q.aggs)


def planned_files(warehouse: str, name: str, where: str | None) -> dict[tuple[Any, ...], list[int]]:
    """Sizes of the live files our scan plans for ``where``, by partition: what a read opens."""
    table = catalog(warehouse).get_table(name)
    rb = table.new_read_builder()
    if where:
        rb = rb.with_filter(parse_predicate(where, table.fields, name))
    out: dict[tuple[Any, ...], list[int]] = {}
    for split in rb.new_scan().plan().splits():
        out.setdefault(split.partition_values, []).extend(f.file_size for f in split.files)
    return out


def count_files(planned: dict[tuple[Any, ...], list[int]]) -> tuple[int, int]:
    sizes = [size for part in planned.values() for size in part]
    return len(sizes), sum(sizes)


@dataclass
class Result:
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    files: int | None = None
    bytes: int | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.wall_s) if self.wall_s else math.nan

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_s) if self.cpu_s else math.nan


ENGINES = ("ours", "spark parquet")


def run_queries(
    spark: SparkSession,
    layout: Layout,
    qs: list[Query],
    repeat: int,
    engines: Sequence[str] = ENGINES,
) -> dict[str, dict[str, Result]]:
    """One warm-up round, then ``repeat``; in each round every query on each of ``engines``
    (of ENGINES) in turn."""
    out = {q.name: {e: Result() for e in engines} for q in qs}
    every: dict[str, Callable[[SparkSession, Layout, Query], DataFrame]] = {
        "ours": ours_relation,
        "spark parquet": parquet_relation,
    }
    relations = {e: every[e] for e in engines}
    for round_no in range(1 + repeat):
        print(f"  queries, round {round_no}/{repeat} (0 = warm-up) ...", file=sys.stderr)
        for q in qs:
            for engine, relation in [(e, r) for _ in range(q.times) for e, r in relations.items()]:
                # timed: ours, planning the relation (the Java connector plans inside its
                # query too); every engine, running the query. Untimed: Parquet's listing
                # (cached at load) and the query's analysis, which is the same for all.
                plan_wall = plan_cpu = 0.0
                if engine == "ours":
                    plan_wall, plan_cpu, rel = timed(partial(relation, spark, layout, q))
                else:
                    rel = relation(spark, layout, q)
                frame = query_of(rel, q)
                wall, cpu, got = timed(frame.collect)
                r = out[q.name][engine]
                r.values = list(got[0])
                if engine == "spark parquet" and r.files is None and not is_connect(spark):
                    metrics = scan_metrics(frame)
                    r.files, r.bytes = metrics.get("numFiles"), metrics.get("filesSize")
                if round_no:
                    r.wall_s.append(plan_wall + wall)
                    r.cpu_s.append(plan_cpu + cpu)
    for q in qs:
        if "ours" in out[q.name]:
            planned = planned_files(layout.ours, q.table, q.where)
            out[q.name]["ours"].files, out[q.name]["ours"].bytes = count_files(planned)
    return out


WRITES = ("ours format", "spark parquet by dt", "spark parquet", "python writer, no-op")
"""``spark parquet by dt`` is the target's baseline: partitioned as our table is. The other
two are for reference: an unpartitioned Parquet write, and the floor of any Python data
source, a writer that only receives Spark's Arrow batches. ``ours spark.write`` (not run here)
is the door of a session without ``format("paimon")`` (pyspark 3.5)."""
NOOP_SOURCE = "bench-noop-python-writer"


def register_noop_source(spark: SparkSession) -> None:
    """A Python data source whose writer only receives Spark's Arrow batches (pyspark 4)."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class NoopWriter(DataSourceArrowWriter):
        def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class NoopDataSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return NOOP_SOURCE

        def writer(self, schema: Any, overwrite: bool) -> DataSourceArrowWriter:
            return NoopWriter()

    spark.dataSource.register(NoopDataSource)


def run_writes(
    df: DataFrame, repeat: int, root: str, names: Sequence[str] = WRITES, warmup: int = 0
) -> dict[str, Result]:
    """The side table: the writes ``names`` (of WRITES and ``ours spark.write``), each
    ``repeat`` times into a fresh directory after ``warmup`` rounds (in the classic leg, build()
    wrote the same DataFrame both ways: the warm-up)."""
    if "python writer, no-op" in names:
        register_noop_source(df.sparkSession)
    out = {name: Result() for name in names}
    for round_no in range(1 - warmup, 1 + repeat):
        print(f"  writes, round {round_no}/{repeat} (<= 0: warm-up) ...", file=sys.stderr)
        base = tempfile.mkdtemp(prefix="writes-", dir=root)
        ours = os.path.join(base, "ours")
        create_table(ours, APPEND, primary_key=False)
        jobs: dict[str, Callable[[], object]] = {
            "ours format": lambda o=ours: (
                df.write.format("paimon")
                .option("warehouse", o)
                .option("table", APPEND)
                .mode("append")
                .save()
            ),
            "ours spark.write": partial(spark_write, df, ours, APPEND),
            "spark parquet by dt": partial(
                df.write.partitionBy("dt").parquet, os.path.join(base, "pq_dt")
            ),
            "spark parquet": partial(df.write.parquet, os.path.join(base, "pq")),
            "python writer, no-op": lambda: df.write.format(NOOP_SOURCE).mode("append").save(),
        }
        for name in names:
            wall, cpu, _ = timed(jobs[name])
            if round_no > 0:
                out[name].wall_s.append(wall)
                out[name].cpu_s.append(cpu)
        paths = {
            "ours format": os.path.join(ours, "db.db", "t"),
            "ours spark.write": os.path.join(ours, "db.db", "t"),
            "spark parquet by dt": os.path.join(base, "pq_dt"),
            "spark parquet": os.path.join(base, "pq"),
        }
        for name in names:
            if name in paths:
                out[name].files, out[name].bytes = files_of([paths[name]])
        shutil.rmtree(base, ignore_errors=True)
    return out


# --- the Java connector, in its own process ------------------------------------------------------


@dataclass
class JavaRun:
    results: dict[str, dict[str, Result]] = field(default_factory=dict)
    tables: dict[str, tuple[int, int]] = field(default_factory=dict)
    build_s: dict[str, float] = field(default_factory=dict)
    compaction: str = ""
    versions: str = ""
    note: str = ""


def run_java(
    rows: int, qs: list[Query], repeat: int, per_partition: int, target: int, tmp: str | None
) -> JavaRun:
    python = java_python()
    if not os.path.exists(python) or not (os.environ.get("PAIMON_SPARK_JAR") or JAVA_JAR.exists()):
        return JavaRun(note="Java connector baseline not built: run make bench")
    command: dict[str, Any] = {
        "op": "read_queries",
        "rows": rows,
        "partitions": 2,
        "repeat": repeat,
        "warmup": 1,
        "columns_ddl": DDL,
        "append_selects": append_selects(rows),
        "sort_by": SORT_BY,
        "files_per_partition": per_partition,
        "target_file_size": target,
        "pk": {
            "columns_ddl": PK_DDL,
            "primary_key": ",".join(PRIMARY_KEY),
            "bucket": PK_BUCKETS,
            "commits": [
                {"start": s, "end": e, "selects": [row_exprs(str(v))]}
                for s, e, v in pk_commits(rows)
            ],
            "final_selects": [row_exprs(final_version(rows))],
        },
        "queries": [
            {"name": q.name, "table": "append" if q.table == APPEND else "pk", "where": q.where}
            | {"aggs": q.aggs, "times": q.times}
            for q in qs
            if q.table != PK_DV
        ],
    }
    if tmp:
        command["tmpdir"] = tmp
    proc = subprocess.run(
        [python, str(JAVA_DRIVER), json.dumps(command)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return JavaRun(note=f"Java connector run failed: {tail[0]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    out = JavaRun(
        versions=f"spark {got['spark']}, java {got['java']}, {got['connector']}",
        compaction=got["compaction"],
        build_s=got["build_s"],
        tables={k: (v["files"], v["data_bytes"]) for k, v in got["tables"].items()},
    )
    for name, engines in got["results"].items():
        out.results[name] = {}
        for engine, r in engines.items():
            scan = r.get("scan", {})
            files = scan.get("numFiles", scan.get("resultedTableFiles"))
            size = scan.get("filesSize", scan.get("splitSize"))
            label = "java connector" if engine == "java" else engine
            out.results[name][label] = Result(r["wall_s"], r["cpu_s"], r["values"], files, size)
    return out


# --- ours on a Spark Connect session and on pyspark 3.5, each in its own process ----------------

LEGS = {
    "connect": (
        "Spark Connect client of a 4.3 server",
        {"ours": "ours connect", "spark parquet": "spark parquet connect"},
        ("ours format", "spark parquet by dt"),
    ),
    "pyspark35": ("pyspark 3.5, .venv-pyspark35", {"ours": "ours 3.5"}, ("ours spark.write",)),
}
"""Per leg: what it is, its engines (ours_session_driver.py's names -> this report's) and its
side-table writes (pyspark 3.5 has no ``format("paimon")``)."""
LEG_ENGINES = tuple(label for _, engines, _ in LEGS.values() for label in engines.values())
TARGET_CONNECT = 1.10
"""Issue 42: a Connect session's time at most 10% over the classic session's."""


@dataclass
class Leg:
    results: dict[str, dict[str, Result]] = field(default_factory=dict)
    writes: dict[str, Result] = field(default_factory=dict)
    versions: str = ""
    note: str = ""


def run_leg(
    kind: str, layout: Layout, qs: list[Query], rows: int, repeat: int, tmp: str | None
) -> Leg:
    """bench/ours_session_driver.py's ``read_queries`` on the tables ``layout`` holds: through
    a Spark Connect server of this venv's pyspark, or on pyspark 3.5."""
    what, labels, writes = LEGS[kind]
    print(f"ours, {what} (own process) ...", file=sys.stderr)
    command: dict[str, Any] = {
        "op": "read_queries",
        "rows": rows,
        "repeat": repeat,
        "warehouse": layout.ours,
        "parquet": layout.parquet,
        "parquet_pk": layout.parquet_pk,
        "queries": [q.name for q in qs],
        "engines": list(labels),
        "writes": list(writes),
        "native_read": NATIVE_READ["native-read"] == "true",
        "tmpdir": tmp,
    }
    try:
        if kind == "connect":
            with connect_server(layout.root) as (url, pid):
                command |= {"remote": url, "server_pid": pid}
                got, why = run_driver(sys.executable, command)
        else:
            got, why = run_driver(pyspark35_python(), command)
    except RuntimeError as e:
        got, why = None, str(e)
    if got is None:
        return Leg(note=f"{what}: {why}")
    out = Leg(versions=f"{what}: pyspark {got['pyspark']}, spark {got['spark']}")
    for name, engines in got["results"].items():
        out.results[name] = {labels[e]: Result(**r) for e, r in engines.items()}
    out.writes = {name: Result(**r) for name, r in got["writes"].items()}
    log_medians(what, out.results, out.writes)
    return out


def log_medians(
    what: str, results: dict[str, dict[str, Result]], writes: dict[str, Result] | None = None
) -> None:
    """A session's medians on stderr as soon as it ends, in case a later one never does."""
    medians = [f"{q} {e} {r.median:.3f}" for q, by in results.items() for e, r in by.items()]
    medians += [f"write {name} {r.median:.3f}" for name, r in (writes or {}).items()]
    print(f"  {what}, median s: {'; '.join(medians)}", file=sys.stderr)


def time_ratio(slow: Result | None, base: Result | None) -> float:
    """``slow``'s median seconds over ``base``'s; NaN if missing."""
    if slow is None or base is None or not slow.wall_s or not base.wall_s:
        return math.nan
    return slow.median / base.median


def print_legs(
    qs: list[Query],
    results: dict[str, dict[str, Result]],
    writes: dict[str, Result],
    legs: dict[str, Leg],
    java: JavaRun,
) -> dict[str, Any]:
    """The table of issue 42: ours on classic 4.3, on Connect and on 3.5, and Java on 3.5."""
    connect, py35 = legs.get("connect", Leg(note="skipped")), legs.get("pyspark35", Leg())
    print("sessions (issue 42): median s; our engine on the classic session's tables")
    header = (
        f"  {'query':<8}{'classic 4.3':>12}{'connect':>9}{'ours 3.5':>10}{'java 3.5':>10}"
        f"{'connect/classic':>17}{'ours35 vs java35':>18}{'pq connect/classic':>20}"
        f"{'cpu: c/c':>10}"
    )
    print(header)
    out: dict[str, Any] = {}
    java_write = java.build_s.get("java write")
    rows: list[tuple[str, Result | None, Result | None, Result | None, Result | None]] = [
        (
            f"({q.name})",
            results[q.name].get("ours"),
            results[q.name].get("ours connect"),
            results[q.name].get("ours 3.5"),
            results[q.name].get("java connector"),
        )
        for q in qs
    ]
    java_w = Result([java_write], [math.nan]) if java_write is not None else None
    rows.append(
        (
            "write",
            writes.get("ours format"),
            connect.writes.get("ours format"),
            py35.writes.get("ours spark.write"),
            java_w,
        )
    )

    def secs(r: Result | None) -> str:
        return "n/a" if r is None or not r.wall_s else f"{r.median:.3f}"

    for label, classic, conn, ours35, java35 in rows:
        over = time_ratio(conn, classic)
        over_cpu = conn.cpu / classic.cpu if conn and classic and conn.cpu_s else math.nan
        vs_java = ratio(ours35, java35)
        name = label.strip("()")
        pq = (
            time_ratio(results[name].get("spark parquet connect"), results[name]["spark parquet"])
            if name in results
            else time_ratio(
                connect.writes.get("spark parquet by dt"), writes["spark parquet by dt"]
            )
        )
        c_verdict = "n/a" if over != over else ("MET" if over <= TARGET_CONNECT else "NOT MET")
        j_verdict = "-" if name == "e_dv" else verdict(vs_java, TARGET_VS_JAVA)
        print(
            f"  {label:<8}{secs(classic):>12}{secs(conn):>9}{secs(ours35):>10}{secs(java35):>10}"
            f"{'n/a' if over != over else f'{over:.2f}':>9} {c_verdict:<7}"
            f"{fx(vs_java):>10} {j_verdict:<7}{'n/a' if pq != pq else f'{pq:.2f}':>12}"
            f"{'n/a' if over_cpu != over_cpu else f'{over_cpu:.2f}':>10}"
        )
        out[name] = {
            "connect_over_classic": over,
            "connect_over_classic_cpu": over_cpu,
            "connect_verdict": c_verdict,
            "ours35_vs_java35": vs_java,
            "java_verdict": j_verdict,
            "parquet_connect_over_classic": pq,
        }
    print(
        f"  targets: connect/classic (time) <= {TARGET_CONNECT:.2f}; ours 3.5 vs java 3.5 "
        f"(speed, same Spark, raw) >= {TARGET_VS_JAVA:.1f}x for (a)-(e) and the write"
    )
    print(
        "  write: ours format (classic, connect) and spark.write (3.5) of the cached rows, "
        "median of R after a warm-up;"
    )
    print("         java: its build's writeTo(...).append() of the same rows, one run")
    print("  pq connect/classic: Spark's own Parquet, Connect over classic (what Connect costs)")
    print("  cpu: connect/classic from CPU seconds (Connect: the client's and the server's trees)")
    for leg in (connect, py35):
        if leg.versions:
            print(f"  {leg.versions}")
        if leg.note:
            print(f"  NOT RUN: {leg.note}")
    print()
    return out


# --- checks and report --------------------------------------------------------------------------


def mismatch(want: list[Any], have: list[Any]) -> str | None:
    if len(want) != len(have):
        return f"{len(have)} values, expected {len(want)}"
    for i, (a, b) in enumerate(zip(want, have, strict=True)):
        if isinstance(a, float) or isinstance(b, float):
            if a is None or b is None or abs(float(a) - float(b)) > 1e-9 * max(1.0, abs(float(a))):
                return f"value {i} = {b}, expected {a}"
        elif a != b:
            return f"value {i} = {b}, expected {a}"
    return None


def ratio(ours: Result | None, theirs: Result | None, cpu: bool = False) -> float:
    """How many times faster ``ours`` is (their median seconds over ours); NaN if missing."""
    if ours is None or theirs is None or not ours.wall_s or not theirs.wall_s:
        return math.nan
    return theirs.cpu / ours.cpu if cpu else theirs.median / ours.median


def no_nan(value: Any) -> Any:
    """``value`` with NaN as null, so the JSON line is strict JSON."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {str(k): no_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [no_nan(v) for v in value]
    return value


def fx(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}x"


def verdict(value: float, target: float) -> str:
    return "n/a" if value != value else ("MET" if value >= target else "NOT MET")


def fmt_count(value: int | None) -> str:
    return "n/a" if value is None else f"{value:,}"


def fmt_mb(value: int | None) -> str:
    return "n/a" if value is None else f"{value / 1e6:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--files-per-partition",
        type=int,
        default=8,
        help="sorted files per partition (Paimon: target-file-size; Parquet: range partitions)",
    )
    parser.add_argument("--tmpdir", default=None, help="where tables and files go (default: TMP)")
    parser.add_argument("--no-java", action="store_true", help="skip the Java connector")
    parser.add_argument("--no-connect", action="store_true", help="skip the Spark Connect leg")
    parser.add_argument("--no-pyspark35", action="store_true", help="skip ours on pyspark 3.5")
    parser.add_argument(
        "--python-source",
        action="store_true",
        help="read ours through the Python data source only (native-read = false)",
    )
    args = parser.parse_args()
    if args.rows < 1600 or args.repeat < 1 or args.files_per_partition < 1:
        parser.error("need --rows >= 1600, --repeat >= 1 and --files-per-partition >= 1")
    rows, repeat = args.rows, args.repeat
    if args.python_source:
        NATIVE_READ["native-read"] = "false"
    qs = queries(rows)

    load_before = load_average()
    print("starting spark ...", file=sys.stderr)
    spark = start_spark(None)
    root = tempfile.mkdtemp(prefix="spark-read-queries-", dir=args.tmpdir)
    try:
        print(f"generating and caching {rows:,} rows ...", file=sys.stderr)
        df = spark.range(0, rows, numPartitions=2)
        for exprs in append_selects(rows):
            df = df.selectExpr(*exprs)
        df = df.cache()
        df.count()
        print("building the tables ...", file=sys.stderr)
        layout = build(spark, df, rows, args.files_per_partition, root)
        writes = run_writes(df, repeat, root)
        df.unpersist()
        results = run_queries(spark, layout, qs, repeat)
        log_medians("classic", results, writes)
        by_partition = planned_files(layout.ours, APPEND, None)
        day_files = len(by_partition.get((DAYS[5],), []))
        b_partitions = list(planned_files(layout.ours, APPEND, qs[1].where))
        facts = machine_facts(spark)
        spark.stop()
        # Each after the one before stops, so no two sessions compete for the cores; on the
        # tables the classic session built.
        legs = {
            kind: run_leg(kind, layout, qs, rows, repeat, args.tmpdir)
            for kind, skip in (("connect", args.no_connect), ("pyspark35", args.no_pyspark35))
            if not skip
        }
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    for leg in legs.values():
        for name, engines in leg.results.items():
            results[name].update(engines)
    if args.no_java:
        java = JavaRun(note="skipped (--no-java)")
    else:
        print("java connector (spark 3.5, own process) ...", file=sys.stderr)
        java = run_java(rows, qs, repeat, args.files_per_partition, layout.target_file_size, None)
        log_medians("java", java.results, None)
        print(f"  java build s: {java.build_s} {java.note}", file=sys.stderr)
        for name, engines in java.results.items():
            results[name].update(engines)

    engines = ("ours", "spark parquet", *LEG_ENGINES, "java connector", "spark35 parquet")
    errors = []
    for q in qs:
        want = results[q.name]["spark parquet"].values
        for engine in engines:
            got = results[q.name].get(engine)
            if got is not None and engine != "spark parquet":
                why = mismatch(want, got.values)
                if why:
                    errors.append(f"({q.name}) {engine}: {why}")

    print()
    print(
        f"Spark read queries: {rows:,} rows, 8 columns, {len(DAYS)} partitions (dt), "
        f"median of {repeat} after 1 warm-up"
    )
    for key, value in facts:
        print(f"  {key:<14} {value}")
    if java.versions:
        print(f"  {'java session':<14} {java.versions} (.venv-spark35)")
    print(f"  {'load average':<14} {load_before} before, {load_average()} after (1, 5, 15 min)")
    print()
    print("tables (data files)                      files        MB   built in s")
    built = {
        "ours": ("ours write", "ours sort compact"),
        "ours pk": ("ours pk commits",),
        "ours pk dv": ("ours pk dv commits",),
        "spark parquet": ("spark parquet write",),
        "spark parquet pk": ("spark parquet pk write",),
        "java": ("java write", "java sort compact"),
        "java pk": ("java pk commits",),
        "spark35 parquet": ("spark35 parquet write",),
        "spark35 parquet pk": ("spark35 parquet pk write",),
    }
    all_tables = {**layout.tables, **java.tables}
    all_build = {**layout.build_s, **java.build_s}
    for name, (n, size) in all_tables.items():
        steps = " + ".join(f"{all_build[s]:.1f}" for s in built[name] if s in all_build)
        print(f"  {name:<38}{n:>7,}{size / 1e6:>10.1f}   {steps}")
    print(
        f"  sorted by {SORT_BY} within each partition: ours and java by sort compaction "
        f"(target-file-size {layout.target_file_size:,} bytes),"
    )
    print(f"  parquet by repartitionByRange({args.files_per_partition}, {SORT_BY}) + sort")
    if java.compaction:
        print(f"  java: {java.compaction}")
    print(f"  pk tables: primary key ({', '.join(PRIMARY_KEY)}), bucket {PK_BUCKETS}, 3 commits")
    print()
    header = (
        f"{'query / engine':<30}{'median s':>9}{'cpu s':>8}{'rows/s':>10}{'files':>7}{'MB':>8}"
        "   runs (s)"
    )
    print(header)
    print("-" * len(header))
    for q in qs:
        where = f" WHERE {q.where}" if q.where else ""
        print(f"({q.name}) {q.title}: {', '.join(q.columns)}{where}")
        for engine in engines:
            r = results[q.name].get(engine)
            if r is None:
                continue
            rate = f"{rows / r.median / 1e6:.2f} M"
            print(
                f"    {engine:<26}{r.median:>9.3f}{r.cpu:>8.2f}{rate:>10}{fmt_count(r.files):>7}"
                f"{fmt_mb(r.bytes):>8}   " + " ".join(f"{s:.3f}" for s in r.wall_s)
            )
    if java.note:
        print(f"  java connector: {java.note}")
    print("  rows/s: table rows / median wall; files, MB: what the scan planned to open")
    print("  (ours: our plan's splits; parquet: Spark's scan metrics; java: the connector's)")
    print()

    ratios: dict[str, dict[str, float]] = {}
    print(
        f"{'ratio (speed)':<12}{'ours/parquet':>14}{'cpu':>7}{'java/pq35':>11}"
        f"{'ours/java':>11}{'normalized':>12}"
    )
    for q in qs:
        r = results[q.name]
        ours_pq = ratio(r["ours"], r["spark parquet"])
        java_pq = ratio(r.get("java connector"), r.get("spark35 parquet"))
        ratios[q.name] = {
            "ours_vs_parquet": ours_pq,
            "ours_vs_parquet_cpu": ratio(r["ours"], r["spark parquet"], cpu=True),
            "java_vs_spark35_parquet": java_pq,
            "ours_vs_java": ratio(r["ours"], r.get("java connector")),
            "ours_vs_java_normalized": ours_pq / java_pq if java_pq == java_pq else math.nan,
        }
        x = ratios[q.name]
        print(
            f"  ({q.name}){'':<7}{fx(x['ours_vs_parquet']):>14}{fx(x['ours_vs_parquet_cpu']):>7}"
            f"{fx(java_pq):>11}{fx(x['ours_vs_java']):>11}{fx(x['ours_vs_java_normalized']):>12}"
        )
    print("  normalized: (ours / spark 4.3 parquet) / (java / spark 3.5 parquet)")
    print()
    print("writes (side table; same cached DataFrame)   median s   rows/s   files      MB")
    for name, w in writes.items():
        print(
            f"  {name:<42}{w.median:>9.3f}{rows / w.median / 1e6:>7.2f} M{fmt_count(w.files):>7}"
            f"{fmt_mb(w.bytes):>8}   " + " ".join(f"{s:.3f}" for s in w.wall_s)
        )
    write_ratio = ratio(writes["ours format"], writes["spark parquet by dt"])
    unpartitioned_ratio = ratio(writes["ours format"], writes["spark parquet"])
    print(
        f"  ours format / spark parquet by dt: {fx(write_ratio)}; / unpartitioned: "
        f"{fx(unpartitioned_ratio)}"
    )
    print()

    legs_summary = print_legs(qs, results, writes, legs, java)

    print("targets (issue 16)")
    b_files = results["b"]["ours"].files
    b_only = b_files == day_files and b_partitions == [(DAYS[5],)]
    checks: list[tuple[str, float, float]] = [
        (
            f"(a) >= {TARGET_FULL_SCAN:.2f}x spark parquet",
            ratios["a"]["ours_vs_parquet"],
            TARGET_FULL_SCAN,
        ),
        (
            f"(b) >= {TARGET_PRUNED:.2f}x spark parquet",
            ratios["b"]["ours_vs_parquet"],
            TARGET_PRUNED,
        ),
        (
            f"(d) >= {TARGET_PRUNED:.2f}x spark parquet",
            ratios["d"]["ours_vs_parquet"],
            TARGET_PRUNED,
        ),
    ]
    checks += [
        (
            f"({q.name}) >= {TARGET_VS_JAVA:.1f}x java normalized",
            ratios[q.name]["ours_vs_java_normalized"],
            TARGET_VS_JAVA,
        )
        for q in qs
        if q.table != PK_DV
    ]
    checks.append((f"write >= {TARGET_WRITE:.1f}x parquet write by dt", write_ratio, TARGET_WRITE))
    verdicts = {}
    for label, value, target in checks:
        verdicts[label] = verdict(value, target)
        print(f"  {label:<40}{fx(value):>8}  {verdicts[label]}")
    opened = "MET" if b_only else "NOT MET"
    verdicts["(b) opens only that partition's files"] = opened
    print(
        f"  {'(b) opens only that partition':<40}{fmt_count(b_files):>8}  {opened} "
        f"(of {day_files} files in dt={DAYS[5]}, {layout.tables['ours'][0]} in the table)"
    )
    print()
    if errors:
        print("RESULT MISMATCH (every engine must return spark parquet's aggregate):")
        for e in errors:
            print(f"  {e}")
    else:
        print("results: all engines returned the same aggregates for every query")

    def as_json(r: Result) -> dict[str, Any]:
        return {
            "median_s": r.median,
            "cpu_s": r.cpu,
            "runs_s": r.wall_s,
            "files": r.files,
            "bytes": r.bytes,
        }

    summary = {
        "bench": "spark_read_queries",
        "rows": rows,
        "repeat": repeat,
        "target_file_size": layout.target_file_size,
        "tables": {k: {"files": n, "bytes": b} for k, (n, b) in all_tables.items()},
        "build_s": all_build,
        "java_compaction": java.compaction or None,
        "java_note": java.note or None,
        "queries": {
            q.name: {
                "where": q.where,
                "columns": q.columns,
                "aggs": q.aggs,
                "values": results[q.name]["spark parquet"].values,
                "engines": {e: as_json(r) for e, r in results[q.name].items()},
                "ratios": ratios[q.name],
            }
            for q in qs
        },
        "writes": {name: as_json(w) for name, w in writes.items()},
        "legs": {
            "ratios": legs_summary,
            "writes": {k: {n: as_json(w) for n, w in g.writes.items()} for k, g in legs.items()},
            "notes": {k: g.note or g.versions for k, g in legs.items()},
        },
        "write_ratio": write_ratio,
        "write_ratio_unpartitioned": unpartitioned_ratio,
        "targets": verdicts,
        "mismatches": errors,
    }
    print(json.dumps(no_nan(summary)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
