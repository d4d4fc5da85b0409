"""Times the Java Paimon Spark connector, for bench/spark_write_read.py and bench/pk_write_read.py.

The only Paimon Spark connector on Maven Central here is ``paimon-spark-3.5`` 0.9.0 (none for
Spark 4, none of Paimon 1.x), so this script runs in its own venv, ``.venv-spark35`` (pyspark
3.5, built by ``make bench``), in its own process, with its own SparkSession on ``local[2]``:
the jar, the catalog ``paimon`` (``org.apache.paimon.spark.SparkCatalog`` on a warehouse under
the temp directory) and Paimon's session extensions. It imports only the standard library,
pyspark and bench/benchlib.py.

One JSON command in, one JSON object out (on the last stdout line; Spark logs go to stderr):

- ``{"op": "append", "rows": 5000000, "partitions": 2, "repeat": 3, "warmup": 1}``: the rows of
  bench/spark_write_read.py (benchlib.APPEND_EXPRS over ``spark.range(rows, numPartitions=
  partitions)``), cached; then per round, in fresh directories: ``df.writeTo(t).append()`` into
  a fresh append table partitioned by ``dt`` (bucket -1, parquet, zstd level 1), a full read of it
  (the aggregate over every column that spark_write_read.py times), and Spark 3.5's own
  ``df.write.parquet`` (zstd level 1) and read of the same rows, as the session's baseline.
- ``{"op": "pk", "rows": 2000000, "repeat": 1, "warmup": 0}``: a primary-key table (primary key
  ``p, k``, partitioned by ``p``, bucket 4, parquet zstd 1); timed: the first commit (all keys),
  the upsert commit (10% of the keys), and the merge-read (benchlib.PK_TOTALS_SQL).
- ``{"op": "dynamic_upsert", "rows": 2000000, "repeat": 1, "warmup": 0}``: the same columns in
  a primary-key table with no ``bucket`` option (dynamic bucket in 0.9); timed: the first
  commit (N keys), the upsert (N rows: N/2 existing keys, N/2 new) and the merge-read.
- ``{"op": "pk_commits", "rows": 2000000, "ids_dir": "/path", "commits": 100}``: the table
  of ``dynamic_upsert``, its first commit keys 0..rows-1, then ``commits`` upsert commits, the
  keys of commit c (version c + 2) read from ``ids_dir/c{c:04d}.parquet`` (column ``id``, as
  bench/pk_write_compaction.py wrote them). Timed: the upsert commits together; after each,
  untimed, the most live files in a bucket (``$files``); then the merge-read and, after a
  full compaction (``CALL sys.compact``, if this connector runs it), the read again.
  ``"options"``: more table properties (bench/dv_read.py: ``deletion-vectors.enabled``).
- ``{"op": "read_queries", ...}``: bench/spark_read_queries.py's tables and queries, all of
  them described in the command (the rows as Spark SQL select lists over ``spark.range``, the
  DDL, the sort and the target file size, the primary-key table's commits, the queries as a
  filter and aggregates), so this script needs no copy of them. Built once (timed for the
  record only): an append table partitioned by ``dt``, sort-compacted by ``CALL
  sys.compact(order_strategy => 'order')``, a primary-key table after the listed commits, and
  Spark 3.5's own Parquet of the same rows (range-partitioned and sorted, partitioned by
  ``dt``) and of the primary-key table's final rows. Then per round (warm-up, then
  ``repeat``) every query on the connector (``SELECT <aggregates> FROM paimon.db.t WHERE
  <filter>``) and on the Parquet, ``times`` times each (a query's own key, default 1,
  alternating), with the files and bytes Spark's scan metrics report.
- ``{"op": "merge", "rows": 2000000, "source_selects": [[...], ...], "merge_sql": "...",
  "repeat": 1, "warmup": 1}``: bench/merge_into.py. The primary-key table of ``pk`` holding
  ``rows`` keys (version 1, written untimed in each round), the changed rows as Spark SQL select
  lists over ``spark.range(changes)`` (cached, the temp view ``merge_src``), and timed: the
  MERGE (``merge_sql`` with ``{t}`` the table and ``{s}`` the view), then untimed its
  merge-read checksum; and this session's Parquet scan of the ``rows`` base rows (the
  checksum aggregate over ``spark.read.parquet``; the median of ``scans``, default 3, per
  round), the baseline the bench normalizes by.
- ``{"op": "changelog_commits", "rows": 2000000, "ids_dir": "/path", "commits": 100,
  "producers": ["lookup"]}``: bench/changelog_producers.py. Per producer, a fresh primary-key
  table (``p, k``, partitioned by ``p``, bucket 4, ``changelog-producer`` set) holding keys
  0..rows-1 (version 1, untimed), then ``commits`` upsert commits, the keys of commit c
  (version c + 2) read from ``ids_dir/c{c:04d}.parquet``; each commit's rows are written
  (timed) into the table and, right after, as this session's Parquet (``df.write.parquet``,
  zstd level 1), the baseline the bench normalizes by. Untimed after them: the merge-read
  checksum, the snapshot kinds and the changelog records of the timed commits' snapshots
  (``$snapshots``).
- ``{"op": "read_table", "warehouse": "/path", "table": "db.t"}``: reads any Paimon table (for
  interop, e.g. one paimon_pyspark wrote) and returns its columns, row count and a checksum: the
  sum over rows of ``xxhash64`` of all columns (Spark's, so pyspark 4 computes the same).

Every command may add ``"tmpdir"`` (where warehouses go) and ``"driver_memory"`` (default 4g).
Times are wall-clock seconds and CPU seconds of the process tree (this driver plus its JVM).

Usage: ``.venv-spark35/bin/python bench/java_connector_driver.py '{"op": "append", ...}'``
(or ``-`` to read the command from stdin). Exits with status 1 and a traceback on failure.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib

PROJECT = Path(__file__).resolve().parent.parent
CONNECTOR = "org.apache.paimon:paimon-spark-3.5:0.9.0"
JAR = PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"
ZSTD_LEVEL = 1
# Paimon 0.9's defaults differ from 1.x in places; say the file layout our tables use.
FILE_OPTIONS = {
    "file.format": "parquet",
    "file.compression": "zstd",
    "file.compression.zstd-level": str(ZSTD_LEVEL),
}


def start_spark(warehouse: str, driver_memory: str) -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    jar = os.environ.get("PAIMON_SPARK_JAR") or str(JAR)
    if not os.path.exists(jar):
        raise FileNotFoundError(f"no connector jar at {jar}: run make bench")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon-java-connector-bench")
        .config("spark.jars", jar)
        .config("spark.sql.catalog.paimon", "org.apache.paimon.spark.SparkCatalog")
        .config("spark.sql.catalog.paimon.warehouse", warehouse)
        .config(
            "spark.sql.extensions",
            "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
        )
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.parquet.compression.codec", "zstd")
        .config("spark.hadoop.parquet.compression.codec.zstd.level", str(ZSTD_LEVEL))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    gc.collect()
    cpu = benchlib.tree_cpu_seconds()
    start = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - start
    return wall, benchlib.tree_cpu_seconds() - cpu, out


def data_files(root: str) -> tuple[int, int]:
    """(count, bytes) of the Parquet files under ``root``."""
    sizes = [
        os.path.getsize(os.path.join(folder, name))
        for folder, _dirs, names in os.walk(root)
        for name in names
        if name.endswith(".parquet") and not name.startswith(".")
    ]
    return len(sizes), sum(sizes)


def tblproperties(extra: dict[str, str]) -> str:
    props = {**FILE_OPTIONS, **extra}
    return ", ".join(f"'{k}' = '{v}'" for k, v in props.items())


def append_totals(df: Any) -> dict[str, float]:
    """The aggregate spark_write_read.py times as the read: it touches every column."""
    from pyspark.sql import functions as F

    row = df.agg(
        F.count(F.lit(1)),
        F.sum("id"),
        F.sum("v"),
        F.sum(F.length("s")),
        F.sum(F.length("dt")),
    ).collect()[0]
    rows, sum_id, sum_v, len_s, len_dt = (x or 0 for x in row)
    return {
        "rows": int(rows),
        "sum_id": int(sum_id),
        "sum_v": float(sum_v),
        "len_s": int(len_s),
        "len_dt": int(len_dt),
    }


def check_append(expected: dict[str, float], got: dict[str, float], who: str) -> None:
    for key, want in expected.items():
        have = got[key]
        bad = abs(have - want) > 1e-9 * max(1.0, abs(want)) if key == "sum_v" else have != want
        if bad:
            raise AssertionError(f"{who} read back {key} = {have}, expected {want}")


def op_append(spark: Any, warehouse: str, cmd: dict[str, Any]) -> dict[str, Any]:
    rows = int(cmd.get("rows", 5_000_000))
    partitions = int(cmd.get("partitions", 2))
    repeat, warmup = int(cmd.get("repeat", 3)), int(cmd.get("warmup", 1))
    df = spark.range(0, rows, numPartitions=partitions).selectExpr(*benchlib.APPEND_EXPRS)
    df = df.cache()
    df.count()
    expected = append_totals(df)
    names = ("java write", "java read", "spark35 parquet write", "spark35 parquet read")
    out: dict[str, Any] = {name: {"wall_s": [], "cpu_s": []} for name in names}
    scratch = tempfile.mkdtemp(prefix="spark35-parquet-", dir=cmd.get("tmpdir"))
    try:
        for round_no in range(warmup + repeat):
            table = f"paimon.db.t{round_no}"
            spark.sql(
                f"CREATE TABLE {table} ({benchlib.APPEND_DDL_COLUMNS}) PARTITIONED BY (dt) "
                f"TBLPROPERTIES ({tblproperties({'bucket': '-1'})})"
            )
            parquet = os.path.join(scratch, f"r{round_no}")
            results = {
                "java write": timed(lambda t=table: df.writeTo(t).append()),
                "java read": timed(lambda t=table: append_totals(spark.table(t))),
                "spark35 parquet write": timed(lambda p=parquet: df.write.parquet(p)),
                "spark35 parquet read": timed(
                    lambda p=parquet: append_totals(spark.read.parquet(p))
                ),
            }
            for name in ("java read", "spark35 parquet read"):
                check_append(expected, results[name][2], name)
            table_dir = os.path.join(warehouse, "db.db", f"t{round_no}")
            for name, root in (("java write", table_dir), ("spark35 parquet write", parquet)):
                out[name]["files"], out[name]["data_bytes"] = data_files(root)
            out["java read"]["tasks"] = spark.table(table).rdd.getNumPartitions()
            out["spark35 parquet read"]["tasks"] = spark.read.parquet(
                parquet
            ).rdd.getNumPartitions()
            spark.sql(f"DROP TABLE {table}")
            shutil.rmtree(table_dir, ignore_errors=True)
            shutil.rmtree(parquet, ignore_errors=True)
            if round_no >= warmup:
                for name, (wall, cpu, _) in results.items():
                    out[name]["wall_s"].append(wall)
                    out[name]["cpu_s"].append(cpu)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        df.unpersist()
    return {"rows": rows, "partitions": partitions, "expected": expected, "results": out}


def pk_totals_sql(df: Any) -> dict[str, float]:
    row = df.selectExpr(*benchlib.PK_TOTALS_SQL).collect()[0]
    got = dict(zip(benchlib.PK_TOTALS, (x or 0 for x in row), strict=True))
    return {k: float(v) if k == "sum_v" else int(v) for k, v in got.items()}


def op_pk(spark: Any, warehouse: str, cmd: dict[str, Any]) -> dict[str, Any]:
    rows = int(cmd.get("rows", 2_000_000))
    partitions = int(cmd.get("partitions", 2))
    repeat, warmup = int(cmd.get("repeat", 1)), int(cmd.get("warmup", 0))
    base = spark.range(0, rows, numPartitions=partitions).selectExpr(*benchlib.pk_exprs(1))
    upsert_ids = spark.range(0, benchlib.pk_upsert_rows(rows), numPartitions=partitions)
    upsert = upsert_ids.selectExpr(benchlib.UPSERT_ID_EXPR).selectExpr(*benchlib.pk_exprs(2))
    base, upsert = base.cache(), upsert.cache()
    base.count()
    upsert.count()
    names = ("java pk write", "java pk upsert", "java pk merge-read")
    out: dict[str, Any] = {name: {"wall_s": [], "cpu_s": []} for name in names}
    props = {
        "primary-key": ",".join(benchlib.PK_PRIMARY_KEYS),
        "bucket": str(benchlib.PK_BUCKETS),
    }
    totals: dict[str, float] = {}
    files: dict[str, int] = {}
    try:
        for round_no in range(warmup + repeat):
            table = f"paimon.db.pk{round_no}"
            spark.sql(
                f"CREATE TABLE {table} ({benchlib.PK_DDL_COLUMNS}) "
                f"PARTITIONED BY ({', '.join(benchlib.PK_PARTITION_KEYS)}) "
                f"TBLPROPERTIES ({tblproperties(props)})"
            )
            results = {
                "java pk write": timed(lambda t=table: base.writeTo(t).append()),
                "java pk upsert": timed(lambda t=table: upsert.writeTo(t).append()),
                "java pk merge-read": timed(lambda t=table: pk_totals_sql(spark.table(t))),
            }
            totals = results["java pk merge-read"][2]
            table_dir = os.path.join(warehouse, "db.db", f"pk{round_no}")
            files["files"], files["data_bytes"] = data_files(table_dir)  # after both commits
            out["java pk merge-read"]["tasks"] = spark.table(table).rdd.getNumPartitions()
            spark.sql(f"DROP TABLE {table}")
            shutil.rmtree(table_dir, ignore_errors=True)
            if round_no >= warmup:
                for name, (wall, cpu, _) in results.items():
                    out[name]["wall_s"].append(wall)
                    out[name]["cpu_s"].append(cpu)
    finally:
        base.unpersist()
        upsert.unpersist()
    return {
        "rows": rows,
        "upsert_rows": benchlib.pk_upsert_rows(rows),
        "totals": totals,
        "table": files,
        "results": out,
    }


def op_dynamic_upsert(spark: Any, warehouse: str, cmd: dict[str, Any]) -> dict[str, Any]:
    """bench/dynamic_bucket_upsert.py: a primary-key table with no ``bucket`` option, which
    Paimon 0.9 makes a dynamic-bucket table (``bucket`` defaults to -1); timed: the first
    commit (N keys), the upsert (N rows, half of them existing keys) and the merge-read."""
    rows = int(cmd.get("rows", 2_000_000))
    partitions = int(cmd.get("partitions", 2))
    repeat, warmup = int(cmd.get("repeat", 1)), int(cmd.get("warmup", 0))
    base = spark.range(0, rows, numPartitions=partitions).selectExpr(*benchlib.pk_exprs(1))
    upsert_ids = spark.range(0, rows, numPartitions=partitions)
    upsert = upsert_ids.selectExpr(benchlib.dyn_upsert_id_expr(rows))
    upsert = upsert.selectExpr(*benchlib.pk_exprs(2))
    base, upsert = base.cache(), upsert.cache()
    base.count()
    upsert.count()
    steps = ("write", "upsert", "merge-read")
    out: dict[str, Any] = {f"java dyn {s}": {"wall_s": [], "cpu_s": []} for s in steps}
    props = {"primary-key": ",".join(benchlib.PK_PRIMARY_KEYS)}  # no bucket: dynamic
    totals: dict[str, float] = {}
    layout: dict[str, Any] = {}
    try:
        for round_no in range(warmup + repeat):
            table = f"paimon.db.dyn{round_no}"
            spark.sql(
                f"CREATE TABLE {table} ({benchlib.PK_DDL_COLUMNS}) "
                f"PARTITIONED BY ({', '.join(benchlib.PK_PARTITION_KEYS)}) "
                f"TBLPROPERTIES ({tblproperties(props)})"
            )
            results = {
                "java dyn write": timed(lambda t=table: base.writeTo(t).append()),
                "java dyn upsert": timed(lambda t=table: upsert.writeTo(t).append()),
                "java dyn merge-read": timed(lambda t=table: pk_totals_sql(spark.table(t))),
            }
            totals = results["java dyn merge-read"][2]
            table_dir = os.path.join(warehouse, "db.db", f"dyn{round_no}")
            layout["files"], layout["data_bytes"] = data_files(table_dir)
            layout["buckets"] = sorted(
                {
                    name
                    for _folder, dirs, _names in os.walk(table_dir)
                    for name in dirs
                    if name.startswith("bucket-")
                }
            )
            index_dir = os.path.join(table_dir, "index")
            layout["index_files"] = len(os.listdir(index_dir)) if os.path.isdir(index_dir) else 0
            spark.sql(f"DROP TABLE {table}")
            shutil.rmtree(table_dir, ignore_errors=True)
            if round_no >= warmup:
                for name, (wall, cpu, _) in results.items():
                    out[name]["wall_s"].append(wall)
                    out[name]["cpu_s"].append(cpu)
    finally:
        base.unpersist()
        upsert.unpersist()
    return {"rows": rows, "totals": totals, "table": layout, "results": out}


def op_pk_commits(spark: Any, warehouse: str, cmd: dict[str, Any]) -> dict[str, Any]:
    """bench/pk_write_compaction.py's run through the Java connector (see the docstring)."""
    rows, commits = int(cmd.get("rows", 2_000_000)), int(cmd.get("commits", 100))
    ids_dir = str(cmd["ids_dir"])
    props = {"primary-key": ",".join(benchlib.PK_PRIMARY_KEYS)}  # no bucket: dynamic
    props.update({str(k): str(v) for k, v in dict(cmd.get("options", {})).items()})
    table = "paimon.db.commits"
    spark.sql(
        f"CREATE TABLE {table} ({benchlib.PK_DDL_COLUMNS}) "
        f"PARTITIONED BY ({', '.join(benchlib.PK_PARTITION_KEYS)}) "
        f"TBLPROPERTIES ({tblproperties(props)})"
    )
    spark.range(0, rows, numPartitions=2).selectExpr(*benchlib.pk_exprs(1)).writeTo(table).append()

    def live_files() -> tuple[int, int]:
        per_bucket = spark.sql(
            "SELECT count(*) AS n FROM paimon.db.`commits$files` GROUP BY `partition`, bucket"
        ).collect()
        return max(r["n"] for r in per_bucket), sum(r["n"] for r in per_bucket)

    wall = cpu = 0.0
    most = 0
    for c in range(commits):
        ids = spark.read.parquet(os.path.join(ids_dir, f"c{c:04d}.parquet"))
        data = ids.selectExpr("coalesce(id, 0L) AS id").selectExpr(*benchlib.pk_exprs(c + 2))
        w, u, _ = timed(lambda d=data: d.writeTo(table).append())
        wall, cpu = wall + w, cpu + u
        most = max(most, live_files()[0])
    live = live_files()[1]
    snapshots = spark.sql(
        "SELECT commit_kind, count(*) AS n FROM paimon.db.`commits$snapshots` GROUP BY 1"
    )
    kinds = {r["commit_kind"]: r["n"] for r in snapshots.collect()}
    read_wall, read_cpu, totals = timed(lambda: pk_totals_sql(spark.table(table)))
    after: dict[str, Any] = {}
    errors = []
    for call in ("table => 'db.commits', compact_strategy => 'full'", "table => 'db.commits'"):
        try:
            spark.sql(f"CALL paimon.sys.compact({call})")
        except Exception as e:  # 0.9's procedure may not take this table or argument
            lines = [x for x in str(e).splitlines() if "Exception" in x] or str(e).splitlines()
            errors.append(f"CALL sys.compact({call}): {lines[0].strip()[:300]}")
            continue
        w, u, _ = timed(lambda: pk_totals_sql(spark.table(table)))
        after = {"read_after_full_compaction_s": w, "read_after_full_compaction_cpu_s": u}
        after["full_compaction"] = f"CALL sys.compact({call})"
        break
    if not after:
        after = {"full_compaction": "not run: " + "; ".join(errors)}
    return {
        "rows": rows,
        "commits": commits,
        "commits_s": wall,
        "commits_cpu_s": cpu,
        "snapshot_kinds": kinds,
        "max_files_per_bucket": most,
        "live_files": live,
        "merge_read_s": read_wall,
        "merge_read_cpu_s": read_cpu,
        "totals": totals,
        **after,
    }


# Spark's and the connector's scan metrics: files and bytes a scan planned to read.
SCAN_METRICS = (
    "numFiles",
    "filesSize",
    "numSplits",
    "splitSize",
    "resultedTableFiles",
    "skippedTableFiles",
)


def scan_metrics(df: Any) -> dict[str, int]:
    """The SCAN_METRICS of the scans in ``df``'s executed plan, summed; call after an action
    on ``df`` itself (pyspark 3.5 and 4 alike: adaptive plans and query stages are walked)."""
    out: dict[str, int] = {}
    todo = [df._jdf.queryExecution().executedPlan()]
    while todo:
        node = todo.pop()
        kind = node.getClass().getSimpleName()
        if kind == "AdaptiveSparkPlanExec":
            todo.append(node.executedPlan())
            continue
        if kind.endswith("QueryStageExec"):
            todo.append(node.plan())
            continue
        metrics = node.metrics()
        for key in SCAN_METRICS:
            found = metrics.get(key)
            if found.isDefined():
                out[key] = out.get(key, 0) + int(found.get().value())
        children = node.children()
        todo.extend(children.apply(i) for i in range(children.size()))
    return out


def live_files(spark: Any, files_table: str) -> tuple[int, int]:
    """(count, bytes) of a table's live data files, from its ``$files`` system table (files a
    compaction replaced stay on disk until snapshots expire)."""
    row = spark.sql(f"SELECT count(1), sum(file_size_in_bytes) FROM {files_table}").collect()[0]
    return int(row[0]), int(row[1] or 0)


def _select(df: Any, selects: list[list[str]]) -> Any:
    for exprs in selects:
        df = df.selectExpr(*exprs)
    return df


def _plain(values: Any) -> list[Any]:
    return [v if v is None or isinstance(v, bool | int | float) else str(v) for v in values]


def op_read_queries(spark: Any, warehouse: str, cmd: dict[str, Any]) -> dict[str, Any]:
    """bench/spark_read_queries.py's tables and queries through the connector (see the
    docstring); the queries are timed, the builds only recorded."""
    rows, partitions = int(cmd["rows"]), int(cmd.get("partitions", 2))
    repeat, warmup = int(cmd.get("repeat", 3)), int(cmd.get("warmup", 1))
    sort_by, per_partition = str(cmd["sort_by"]), int(cmd["files_per_partition"])
    pk = cmd["pk"]
    scratch = tempfile.mkdtemp(prefix="spark35-parquet-", dir=cmd.get("tmpdir"))
    build: dict[str, float] = {}
    try:
        df = _select(spark.range(0, rows, numPartitions=partitions), cmd["append_selects"])
        df = df.cache()
        df.count()
        spark.sql(
            f"CREATE TABLE paimon.db.t ({cmd['columns_ddl']}) PARTITIONED BY (dt) "
            f"TBLPROPERTIES ({tblproperties({'bucket': '-1'})})"
        )
        build["java write"] = timed(lambda: df.writeTo("paimon.db.t").append())[0]
        call = (
            f"table => 'db.t', order_strategy => 'order', order_by => '{sort_by}', "
            f"options => 'target-file-size={int(cmd['target_file_size'])}'"
        )
        try:
            build["java sort compact"] = timed(
                lambda: spark.sql(f"CALL paimon.sys.compact({call})")
            )[0]
            compaction = f"CALL sys.compact({call})"
        except Exception as e:  # report it: the queries still run on the unsorted table
            lines = [x for x in str(e).splitlines() if "Exception" in x] or str(e).splitlines()
            compaction = f"not run: CALL sys.compact({call}): {lines[0].strip()[:300]}"
        parquet = os.path.join(scratch, "t")
        sorted_df = df.repartitionByRange(per_partition, sort_by).sortWithinPartitions(sort_by)
        build["spark35 parquet write"] = timed(
            lambda: sorted_df.write.partitionBy("dt").parquet(parquet)
        )[0]
        df.unpersist()

        props = {"primary-key": str(pk["primary_key"]), "bucket": str(pk["bucket"])}
        spark.sql(
            f"CREATE TABLE paimon.db.pk ({pk['columns_ddl']}) PARTITIONED BY (dt) "
            f"TBLPROPERTIES ({tblproperties(props)})"
        )
        commits_s = 0.0
        for commit in pk["commits"]:
            rng = spark.range(int(commit["start"]), int(commit["end"]), numPartitions=partitions)
            data = _select(rng, commit["selects"])
            commits_s += timed(lambda d=data: d.writeTo("paimon.db.pk").append())[0]
        build["java pk commits"] = commits_s
        parquet_pk = os.path.join(scratch, "pk")
        final = _select(spark.range(0, rows, numPartitions=partitions), pk["final_selects"])
        build["spark35 parquet pk write"] = timed(
            lambda: final.write.partitionBy("dt").parquet(parquet_pk)
        )[0]

        spark.read.parquet(parquet).createOrReplaceTempView("parquet_t")
        spark.read.parquet(parquet_pk).createOrReplaceTempView("parquet_pk")
        sources = {
            "java": {"append": "paimon.db.t", "pk": "paimon.db.pk"},
            "spark35 parquet": {"append": "parquet_t", "pk": "parquet_pk"},
        }
        tables = {
            "java": live_files(spark, "paimon.db.`t$files`"),
            "java pk": live_files(spark, "paimon.db.`pk$files`"),
            "spark35 parquet": data_files(parquet),
            "spark35 parquet pk": data_files(parquet_pk),
        }
        results: dict[str, dict[str, Any]] = {}
        for query in cmd["queries"]:
            results[query["name"]] = {e: {"wall_s": [], "cpu_s": []} for e in sources}
        for round_no in range(warmup + repeat):
            for query in cmd["queries"]:
                where = f" WHERE {query['where']}" if query.get("where") else ""
                runs = [e for _ in range(int(query.get("times", 1))) for e in sources.items()]
                for engine, names in runs:
                    sql = f"SELECT {', '.join(query['aggs'])} FROM {names[query['table']]}{where}"
                    frame = spark.sql(sql)
                    wall, cpu, got = timed(frame.collect)
                    out = results[query["name"]][engine]
                    out["values"] = _plain(got[0])
                    out["scan"] = scan_metrics(frame)
                    out["sql"] = sql
                    if round_no >= warmup:
                        out["wall_s"].append(wall)
                        out["cpu_s"].append(cpu)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "rows": rows,
        "compaction": compaction,
        "build_s": build,
        "tables": {k: {"files": n, "data_bytes": b} for k, (n, b) in tables.items()},
        "results": results,
    }


def op_merge(spark: Any, warehouse: str, cmd: dict[str, Any]) -> dict[str, Any]:
    """bench/merge_into.py's MERGE through the connector (see the docstring)."""
    rows, changes = int(cmd.get("rows", 2_000_000)), int(cmd.get("changes", 200_000))
    partitions = int(cmd.get("partitions", 2))
    repeat, warmup = int(cmd.get("repeat", 1)), int(cmd.get("warmup", 1))
    base = spark.range(0, rows, numPartitions=partitions).selectExpr(*benchlib.pk_exprs(1))
    source = _select(spark.range(0, changes, numPartitions=partitions), cmd["source_selects"])
    base, source = base.cache(), source.cache()
    base.count()
    source.count()
    source.createOrReplaceTempView("merge_src")
    props = {
        "primary-key": ",".join(benchlib.PK_PRIMARY_KEYS),
        "bucket": str(benchlib.PK_BUCKETS),
    }
    scratch = tempfile.mkdtemp(prefix="spark35-parquet-", dir=cmd.get("tmpdir"))
    parquet = os.path.join(scratch, "base")
    base.write.parquet(parquet)
    names = ("java merge", "spark35 parquet scan")
    out: dict[str, Any] = {name: {"wall_s": [], "cpu_s": []} for name in names}
    totals: dict[str, float] = {}
    try:
        for round_no in range(warmup + repeat):
            table = f"paimon.db.merge{round_no}"
            spark.sql(
                f"CREATE TABLE {table} ({benchlib.PK_DDL_COLUMNS}) "
                f"PARTITIONED BY ({', '.join(benchlib.PK_PARTITION_KEYS)}) "
                f"TBLPROPERTIES ({tblproperties(props)})"
            )
            base.writeTo(table).append()
            statement = str(cmd["merge_sql"]).format(t=table, s="merge_src")
            results = {
                "java merge": timed(lambda s=statement: spark.sql(s).collect()),
            }
            scans = [
                timed(lambda: pk_totals_sql(spark.read.parquet(parquet)))
                for _ in range(int(cmd.get("scans", 3)))
            ]
            results["spark35 parquet scan"] = sorted(scans, key=lambda x: x[0])[len(scans) // 2]
            totals = pk_totals_sql(spark.table(table))
            spark.sql(f"DROP TABLE {table}")
            shutil.rmtree(os.path.join(warehouse, "db.db", f"merge{round_no}"), ignore_errors=True)
            if round_no >= warmup:
                for name, (wall, cpu, _) in results.items():
                    out[name]["wall_s"].append(wall)
                    out[name]["cpu_s"].append(cpu)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        base.unpersist()
        source.unpersist()
    return {"rows": rows, "changes": changes, "totals": totals, "results": out}


def op_changelog_commits(spark: Any, warehouse: str, cmd: dict[str, Any]) -> dict[str, Any]:
    """bench/changelog_producers.py's commits through the connector (see the docstring)."""
    rows, commits = int(cmd.get("rows", 2_000_000)), int(cmd.get("commits", 100))
    ids_dir = str(cmd["ids_dir"])
    scratch = tempfile.mkdtemp(prefix="spark35-parquet-", dir=cmd.get("tmpdir"))
    out: dict[str, Any] = {}
    try:
        for producer in cmd.get("producers", ["lookup"]):
            props = {
                "primary-key": ",".join(benchlib.PK_PRIMARY_KEYS),
                "bucket": str(cmd.get("bucket", benchlib.PK_BUCKETS)),
                "changelog-producer": str(producer),
            }
            props.update({str(k): str(v) for k, v in dict(cmd.get("options", {})).items()})
            name = f"cl_{str(producer).replace('-', '_')}"
            table = f"paimon.db.{name}"
            spark.sql(
                f"CREATE TABLE {table} ({benchlib.PK_DDL_COLUMNS}) "
                f"PARTITIONED BY ({', '.join(benchlib.PK_PARTITION_KEYS)}) "
                f"TBLPROPERTIES ({tblproperties(props)})"
            )
            base = spark.range(0, rows, numPartitions=2).selectExpr(*benchlib.pk_exprs(1))
            base.writeTo(table).append()
            first = spark.sql(f"SELECT max(snapshot_id) FROM paimon.db.`{name}$snapshots`")
            loaded = int(first.collect()[0][0])
            wall = cpu = pq_wall = pq_cpu = 0.0
            for c in range(commits):
                ids = spark.read.parquet(os.path.join(ids_dir, f"c{c:04d}.parquet"))
                data = ids.selectExpr("coalesce(id, 0L) AS id")
                data = data.selectExpr(*benchlib.pk_exprs(c + 2))
                w, u, _ = timed(lambda d=data, t=table: d.writeTo(t).append())
                wall, cpu = wall + w, cpu + u
                target = os.path.join(scratch, f"{name}-c{c:04d}")
                w, u, _ = timed(lambda d=data, t=target: d.write.parquet(t))
                pq_wall, pq_cpu = pq_wall + w, pq_cpu + u
            snapshots = spark.sql(
                "SELECT commit_kind, count(*) AS n, sum(changelog_record_count) AS changelog "
                f"FROM paimon.db.`{name}$snapshots` WHERE snapshot_id > {loaded} GROUP BY 1"
            ).collect()
            out[str(producer)] = {
                "commits_s": wall,
                "commits_cpu_s": cpu,
                "parquet_s": pq_wall,
                "parquet_cpu_s": pq_cpu,
                "snapshot_kinds": {r["commit_kind"]: r["n"] for r in snapshots},
                "changelog_records": sum(int(r["changelog"] or 0) for r in snapshots),
                "totals": pk_totals_sql(spark.table(table)),
            }
            spark.sql(f"DROP TABLE {table}")
            shutil.rmtree(os.path.join(warehouse, "db.db", name), ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"rows": rows, "commits": commits, "producers": out}


def op_read_table(spark: Any, cmd: dict[str, Any]) -> dict[str, Any]:
    """Row count and an order-free checksum of any Paimon table, through the Java connector."""
    from pyspark.sql import functions as F

    spark.conf.set("spark.sql.catalog.interop", "org.apache.paimon.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.interop.warehouse", str(cmd["warehouse"]))
    name = f"interop.{cmd.get('table', 'db.t')}"
    df = spark.table(name)

    def read() -> tuple[int, int]:
        hashed = F.xxhash64(*[F.col(f"`{c}`") for c in df.columns]).cast("decimal(38,0)")
        row = df.agg(F.count(F.lit(1)), F.sum(hashed)).collect()[0]
        return int(row[0]), int(row[1] or 0)

    wall, cpu, (count, checksum) = timed(read)
    return {
        "table": name,
        "columns": [[f.name, f.dataType.simpleString(), f.nullable] for f in df.schema.fields],
        "rows": count,
        "checksum": str(checksum),
        "checksum_of": "sum(cast(xxhash64(all columns) as decimal(38,0)))",
        "wall_s": wall,
        "cpu_s": cpu,
    }


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        cmd = json.loads(sys.stdin.read() if sys.argv[1] == "-" else sys.argv[1])
        op = cmd["op"]
        ops = ("append", "pk", "dynamic_upsert", "pk_commits", "read_queries", "read_table")
        ops += ("merge", "changelog_commits")
        if op not in ops:
            raise ValueError(f"unknown op {op!r}")
        root = tempfile.mkdtemp(prefix="java-connector-bench-", dir=cmd.get("tmpdir"))
        try:
            warehouse = os.path.join(root, "warehouse")
            spark = start_spark(warehouse, str(cmd.get("driver_memory", "4g")))
            try:
                if op != "read_table":
                    spark.sql("CREATE DATABASE IF NOT EXISTS paimon.db")
                if op == "append":
                    result = op_append(spark, warehouse, cmd)
                elif op == "pk":
                    result = op_pk(spark, warehouse, cmd)
                elif op == "dynamic_upsert":
                    result = op_dynamic_upsert(spark, warehouse, cmd)
                elif op == "pk_commits":
                    result = op_pk_commits(spark, warehouse, cmd)
                elif op == "read_queries":
                    result = op_read_queries(spark, warehouse, cmd)
                elif op == "merge":
                    result = op_merge(spark, warehouse, cmd)
                elif op == "changelog_commits":
                    result = op_changelog_commits(spark, warehouse, cmd)
                else:
                    result = op_read_table(spark, cmd)
                jvm = spark.sparkContext._jvm
                versions = {
                    "spark": spark.version,
                    "java": jvm.System.getProperty("java.version") if jvm is not None else "?",
                    "connector": CONNECTOR,
                }
            finally:
                spark.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)
    except BaseException:  # the caller reads the traceback from stderr
        import traceback

        traceback.print_exc()
        return 1
    print(json.dumps({"op": op, **versions, **result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
