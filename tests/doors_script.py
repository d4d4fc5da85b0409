"""Every Spark door of the package, run on whatever session it is given: ``results(spark,
workdir)`` returns one JSON-ready object of the rows each step saw, sorted, so the results of a
classic session, a Spark Connect client and pyspark 3.5 compare with ``==``.

Run as ``python tests/doors_script.py <local | sc://host:port> <workdir>``: ``local`` starts a
classic ``local[2]`` session, an ``sc://`` URL connects a Spark Connect client, and it prints the
object as one JSON line. tests/connect runs it so in the test venv (classic and Connect) and in
the pyspark 3.5 venv, where the package is installed as its wheel: it imports nothing from
``tests`` and nothing a matrix venv lacks (no pytest).

Each step writes its own tables in one warehouse under ``workdir``; the tables a step writes
are read back with the package's own reader (no Spark) so a write is checked apart from the
Spark read paths. A step that raises is recorded as ``{"error": [type, message]}`` and the rest
still run (``seconds`` holds each step's wall time, for reports, never asserted). The steps in
``DATASOURCE_STEPS`` need the Python Data Source API (pyspark >= 4.1.4); where it is missing
they are expected to raise ``UnsupportedPysparkError``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyspark
from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.spark import compat, procedures, register
from paimon_pyspark.spark import read as paimon_read
from paimon_pyspark.spark import sql as paimon_sql
from paimon_pyspark.spark import write as paimon_write

JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""A short-lived driver: C1 only and one GC thread take a third less CPU than the defaults."""

EVENTS = 400
"""db.events: ids 0..EVENTS-1 over three partitions, written in two commits (FIRST_COMMIT)."""
FIRST_COMMIT = 300
DATASOURCE_STEPS = (
    "format_write_append",
    "format_write_pk",
    "format_load",
    "format_where",
    "format_view",
    "format_option_filter",
    "streaming",
)
"""The steps through ``format("paimon")`` and Structured Streaming: a Python Data Source."""

Rows = list[list[Any]]


def event(i: int) -> tuple[int, str, float, str]:
    """Row ``i`` of db.events: (id, name, amount, dt)."""
    return (i, f"n{i}", i * 0.5, f"d{i % 3}")


def sorted_rows(rows: Iterable[Sequence[Any]]) -> Rows:
    return sorted(([*r] for r in rows), key=lambda r: json.dumps(r, default=str))


def collected(df: DataFrame) -> Rows:
    return sorted_rows(list(r) for r in df.collect())


def table_rows(catalog: FileSystemCatalog, name: str) -> Rows:
    """The rows of ``name`` read by the package's own reader, in the process that runs the
    script (the driver, or the Connect client)."""
    table = catalog.get_table(name)
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted_rows(zip(*(c.to_pylist() for c in data.columns), strict=True))


def commit_kinds(catalog: FileSystemCatalog, name: str) -> list[str]:
    manager = catalog.get_table(name).snapshot_manager
    return [manager.snapshot(i).commit_kind for i in range(1, (manager.latest_id() or 0) + 1)]


def events_frame(spark: SparkSession, lo: int, hi: int) -> DataFrame:
    return spark.range(lo, hi, numPartitions=3).selectExpr(
        "id", "concat('n', id) as name", "id * 0.5 as amount", "concat('d', id % 3) as dt"
    )


def kv_frame(spark: SparkSession, lo: int, hi: int, tag: str) -> DataFrame:
    return spark.range(lo, hi, numPartitions=3).selectExpr("id", f"concat('{tag}', id) as v")


class Doors:
    """The steps, in order; each returns what it saw, JSON-ready."""

    def __init__(self, spark: SparkSession, warehouse: str) -> None:
        self.spark = spark
        self.warehouse = warehouse
        self.catalog = CatalogFactory.create({"warehouse": warehouse})
        self.catalog.create_database("db", ignore_if_exists=True)
        events = pa.schema(
            [
                ("id", pa.int64()),
                ("name", pa.string()),
                ("amount", pa.float64()),
                ("dt", pa.string()),
            ]
        )
        kv = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
        for name, schema, keys, options in (
            ("db.events", events, {"partition_keys": ["dt"]}, {}),
            ("db.pk", kv, {"primary_keys": ["id"]}, {"bucket": "2"}),
            ("db.fmt", events, {"partition_keys": ["dt"]}, {}),
            ("db.fmt_pk", kv, {"primary_keys": ["id"]}, {"bucket": "2"}),
            ("db.src", kv, {}, {}),
            ("db.sink", kv, {}, {}),
        ):
            self.catalog.create_table(
                name, Schema.from_pyarrow_schema(schema, options=options, **keys)
            )

    def steps(self) -> list[tuple[str, Callable[[], Any]]]:
        return [
            ("write_append", self.write_append),
            ("write_pk", self.write_pk),
            ("format_write_append", self.format_write_append),
            ("format_write_pk", self.format_write_pk),
            ("read_where_columns", self.read_where_columns),
            ("read_snapshot", self.read_snapshot),
            ("format_load", self.format_load),
            ("format_where", self.format_where),
            ("format_view", self.format_view),
            ("format_option_filter", self.format_option_filter),
            ("sql_select", self.sql_select),
            ("sql_snapshots", self.sql_snapshots),
            ("sql_files", self.sql_files),
            ("sql_script", self.sql_script),
            ("streaming", self.streaming),
            ("compact_job", self.compact_job),
            ("orphan_files_job", self.orphan_files_job),
        ]

    # -- write doors ----------------------------------------------------------------------------

    def write_append(self) -> Any:
        """``paimon_pyspark.spark.write`` into a partitioned append table, in two commits."""
        first = paimon_write(events_frame(self.spark, 0, FIRST_COMMIT), self.warehouse, "db.events")
        second = paimon_write(
            events_frame(self.spark, FIRST_COMMIT, EVENTS), self.warehouse, "db.events"
        )
        return {"snapshots": [first, second], "rows": table_rows(self.catalog, "db.events")}

    def write_pk(self) -> Any:
        """Two writes into a primary-key table, the second upserting half of the first's keys."""
        for frame in (kv_frame(self.spark, 0, 200, "a"), kv_frame(self.spark, 100, 300, "b")):
            paimon_write(frame, self.warehouse, "db.pk")
        return {"rows": table_rows(self.catalog, "db.pk")}

    def _format_write(self, df: DataFrame, table: str) -> None:
        register(self.spark)
        writer = df.write.format("paimon").option("warehouse", self.warehouse)
        writer.option("table", table).mode("append").save()

    def format_write_append(self) -> Any:
        self._format_write(events_frame(self.spark, 0, 200), "db.fmt")
        return {"rows": table_rows(self.catalog, "db.fmt")}

    def format_write_pk(self) -> Any:
        for frame in (kv_frame(self.spark, 0, 150, "x"), kv_frame(self.spark, 100, 200, "y")):
            self._format_write(frame, "db.fmt_pk")
        return {"rows": table_rows(self.catalog, "db.fmt_pk")}

    # -- read paths -----------------------------------------------------------------------------

    def read_where_columns(self) -> Any:
        df = paimon_read(
            self.spark,
            self.warehouse,
            "db.events",
            where="dt = 'd1' AND id < 200",
            columns=["id", "name"],
        )
        return {"columns": df.columns, "rows": collected(df)}

    def read_snapshot(self) -> Any:
        df = paimon_read(self.spark, self.warehouse, "db.events", columns="id", snapshot_id=1)
        return {"rows": collected(df)}

    def _load(self, **options: str) -> DataFrame:
        register(self.spark)
        reader = self.spark.read.format("paimon").option("warehouse", self.warehouse)
        return reader.option("table", "db.events").options(**options).load()

    def format_load(self) -> Any:
        return {"rows": collected(self._load())}

    def format_where(self) -> Any:
        """A filter after ``load()``, then every row again from the same DataFrame."""
        loaded = self._load()
        rows = collected(loaded.where("dt = 'd2' AND id >= 300"))
        return {"rows": rows, "later_count": loaded.count()}

    def format_view(self) -> Any:
        self._load().createOrReplaceTempView("doors_events")
        try:
            picked = self.spark.sql("SELECT id, dt FROM doors_events WHERE id >= 390")
            return {"rows": collected(picked)}
        finally:
            self.spark.catalog.dropTempView("doors_events")

    def format_option_filter(self) -> Any:
        df = self._load(filter="dt = 'd0'", columns="id")
        return {"columns": df.columns, "rows": collected(df)}

    def _sql(self, statement: str) -> Rows:
        return collected(paimon_sql(self.spark, statement, warehouse=self.warehouse))

    def sql_select(self) -> Any:
        return {
            "rows": self._sql(
                "SELECT dt, count(*) AS n, sum(id) AS s FROM db.events WHERE id >= 10 GROUP BY dt"
            )
        }

    def sql_snapshots(self) -> Any:
        return {"rows": self._sql("SELECT snapshot_id, commit_kind FROM db.`events$snapshots`")}

    def sql_files(self) -> Any:
        return {
            "rows": self._sql(
                "SELECT `partition`, sum(record_count) FROM db.`events$files` GROUP BY `partition`"
            )
        }

    def sql_script(self) -> Any:
        """INSERT, MERGE INTO and CALL through ``paimon_pyspark.spark.sql`` (docs/sql.md)."""
        statements = [
            "CREATE TABLE db.m (id INT, qty INT, note STRING) TBLPROPERTIES ('primary-key' = 'id')",
            "INSERT INTO db.m VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), (5, 50, 'e')",
            "CREATE TABLE db.m_changes (id INT, qty INT, op STRING)",
            "INSERT INTO db.m_changes VALUES (1, 5, 'U'), (2, 0, 'D'), (4, 40, 'I')",
            "MERGE INTO db.m t USING db.m_changes c ON t.id = c.id "
            "WHEN MATCHED AND c.op = 'D' THEN DELETE "
            "WHEN MATCHED THEN UPDATE SET qty = t.qty + c.qty "
            "WHEN NOT MATCHED THEN INSERT (id, qty, note) VALUES (c.id, c.qty, 'new') "
            "WHEN NOT MATCHED BY SOURCE AND t.id = 3 THEN UPDATE SET note = 'untouched'",
            "CALL sys.create_tag(`table` => 'db.m', tag => 'merged')",
            "CALL sys.compact(`table` => 'db.m')",
        ]
        calls = []
        for statement in statements:
            rows = self._sql(statement)
            if statement.startswith("CALL"):
                calls.append(rows)
        return {
            "calls": calls,
            "rows": self._sql("SELECT * FROM db.m"),
            "tag": self._sql("SELECT * FROM db.m VERSION AS OF 'merged' WHERE id > 3"),
            "kinds": commit_kinds(self.catalog, "db.m"),
        }

    def streaming(self) -> Any:
        """``readStream.format("paimon")`` of a table into ``writeStream.format("paimon")``,
        over two commits of the source."""
        register(self.spark)
        paimon_write(kv_frame(self.spark, 0, 40, "s"), self.warehouse, "db.src")
        stream = self.spark.readStream.format("paimon").option("warehouse", self.warehouse)
        query = (
            stream.option("table", "db.src")
            .load()
            .writeStream.format("paimon")
            .option("warehouse", self.warehouse)
            .option("table", "db.sink")
            .option("checkpointLocation", os.path.join(self.warehouse, "checkpoint"))
            .start()
        )
        try:
            query.processAllAvailable()
            paimon_write(kv_frame(self.spark, 40, 100, "s"), self.warehouse, "db.src")
            query.processAllAvailable()
        finally:
            query.stop()
        return {"rows": table_rows(self.catalog, "db.sink")}

    # -- procedures as Spark jobs ---------------------------------------------------------------

    def compact_job(self) -> Any:
        snapshot = procedures.compact(self.spark, self.warehouse, "db.pk")
        return {
            "snapshot": snapshot,
            "kinds": commit_kinds(self.catalog, "db.pk"),
            "rows": table_rows(self.catalog, "db.pk"),
        }

    def orphan_files_job(self) -> Any:
        """A file no snapshot uses, three days old, beside db.events' data files."""
        bucket_dir = os.path.join(self.catalog.get_table("db.events").path, "dt=d0", "bucket-0")
        orphan = os.path.join(bucket_dir, "data-orphan-doors-script.parquet")
        with open(orphan, "wb") as f:
            f.write(b"not a parquet file")
        old = (dt.datetime.now() - dt.timedelta(days=3)).timestamp()
        os.utime(orphan, (old, old))
        result = procedures.remove_orphan_files(self.spark, self.warehouse, "db.events")
        return {
            "deleted": sorted(os.path.basename(p) for p in result.deleted_files),
            "deleted_file_count": result.deleted_file_count,
            "orphan_left": os.path.exists(orphan),
            "rows": len(table_rows(self.catalog, "db.events")),
        }


def _error(e: BaseException) -> list[str]:
    return [type(e).__name__, str(e)[:3000]]


def results(spark: SparkSession, workdir: str) -> dict[str, Any]:
    """Every step's result (or error) on ``spark``, with a warehouse under ``workdir``."""
    from paimon_pyspark.spark.cluster import is_connect

    found: dict[str, Any] = {
        "pyspark": pyspark.__version__,
        "connect": is_connect(spark),
        "datasource_api": compat.has_datasource_api(),
        "datasource_steps": list(DATASOURCE_STEPS),
        "steps": {},
        "seconds": {},
    }
    doors = Doors(spark, os.path.join(workdir, "warehouse"))
    for name, step in doors.steps():
        start = time.monotonic()
        try:
            found["steps"][name] = step()
        except Exception as e:
            found["steps"][name] = {"error": _error(e)}
            print(f"step {name}:", file=sys.stderr)
            traceback.print_exc()
        found["seconds"][name] = round(time.monotonic() - start, 2)
    # a Connect client plans and commits in this process without ever starting a JVM
    found["jvm_in_process"] = SparkContext._gateway is not None
    return found


def session(where: str, workdir: str) -> SparkSession:
    """``local``: a classic local[2] session; ``sc://...``: a Spark Connect client."""
    if where != "local":
        return SparkSession.builder.remote(where).getOrCreate()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon_pyspark-doors-script")
        .config("spark.driver.extraJavaOptions", JVM_OPTIONS)
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.warehouse.dir", os.path.join(workdir, "spark-warehouse"))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(where: str, workdir: str) -> dict[str, Any]:
    spark = session(where, workdir)
    try:
        return results(spark, workdir)
    finally:
        spark.stop()


if __name__ == "__main__":
    workdir = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="doors-script-")
    text = json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "local", workdir))
    with open(os.path.join(workdir, "results.json"), "w") as f:  # kept for a look after a run
        f.write(text)
    print(text)
