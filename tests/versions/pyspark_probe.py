"""Does this pyspark reuse a reader that ``pushFilters`` configured, and does our ``paimon``
source return every row to a query after a filtered one? On a pyspark without the Python Data
Source (3.5) neither applies: both answer UNSUPPORTED, and the doors that need no Data Source
run. ``results(spark, workdir)`` answers with counts; run as
``python tests/versions/pyspark_probe.py <dir>`` in a venv of the version matrix
(mk/pyspark_matrix.mk), it starts its own SparkSession and prints them as one JSON object.

tests/versions/test_pyspark_versions.py runs it so in each matrix venv, and calls ``results``
on its own session for its own pyspark. It imports nothing from ``tests`` and nothing a matrix
venv lacks (no pytest).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StructField, StructType

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.spark import compat, register
from paimon_pyspark.spark import read as paimon_read
from paimon_pyspark.spark import sql as paimon_sql
from paimon_pyspark.spark import write as paimon_write
from paimon_pyspark.spark.procedures import compact

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
PROBE_ROWS = 20
ROWS = 1000
DAYS = 4
ONE_DAY = "dt = '2026-11-01'"
SMALL_IDS = 100
"""A second filter, ``id < SMALL_IDS``, on a relation bound to ONE_DAY."""
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""A short-lived driver: C1 only and one GC thread take a third less CPU than the defaults."""
UNSUPPORTED = "unsupported"
"""What the Data Source parts answer on a pyspark that has no Python Data Source."""


def probe_source() -> Any:
    """PROBE_ROWS rows (k = 0..19 in 4 input partitions); once Spark pushes ``k = <value>``,
    the reader keeps only those rows (tests/spark/test_spark_push_filters.py runs it too).
    Defined in a function so that cloudpickle sends the classes to the workers by value, and
    so that this module imports on a pyspark without the Data Source API."""
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceReader,
        EqualTo,
        Filter,
        InputPartition,
    )

    class ProbeReader(DataSourceReader):
        def __init__(self) -> None:
            self.keep: set[int] | None = None

        def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
            for f in filters:
                if isinstance(f, EqualTo) and f.attribute == ("k",):
                    self.keep = {int(f.value)}
                else:
                    yield f

        def partitions(self) -> list[InputPartition]:
            return [InputPartition(i) for i in range(4)]

        def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
            for k in range(partition.value * 5, partition.value * 5 + 5):
                if self.keep is None or k in self.keep:
                    yield (k,)

    class ProbeSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "paimon_reuse_probe"

        def schema(self) -> StructType:
            return StructType([StructField("k", LongType(), False)])

        def reader(self, schema: StructType) -> DataSourceReader:
            return ProbeReader()

    return ProbeSource


def _count(spark: SparkSession, query: str) -> int:
    return int(spark.sql(query).collect()[0][0])


def probe(spark: SparkSession) -> dict[str, int]:
    """Counts of the probe source: a ``k = 1`` query, then an unfiltered count, on one
    DataFrame and on a temp view of another; ``fresh`` counts a new relation.

    What rules out telling the queries apart at read time: ``explained_later`` counts all rows
    after a ``k = 1`` query that was only explained, never run (planning alone hands the
    relation its pruned read); ``unpushed_filtered`` counts ``k = 3 OR k = 4`` after a
    ``k = 1`` query, a filter the Python side is not given (2 rows unless the pruned read is
    reused). ``pushdown_default``: 1 where pushdown is on in a session that leaves it unset."""
    source = probe_source()
    spark.dataSource.register(source)
    before = spark.conf.get(PUSHDOWN_CONF, None)
    pushdown_default = int(str(spark.conf.get(PUSHDOWN_CONF)).lower() == "true")
    spark.conf.set(PUSHDOWN_CONF, "true")
    try:
        df = spark.read.format(source.name()).load()
        filtered = df.filter("k = 1").count()
        later_df = df.count()
        spark.read.format(source.name()).load().createOrReplaceTempView("pyspark_probe")
        filtered_view = _count(spark, "SELECT count(*) FROM pyspark_probe WHERE k = 1")
        later_view = _count(spark, "SELECT count(*) FROM pyspark_probe")
        fresh = spark.read.format(source.name()).load().count()
        explained = spark.read.format(source.name()).load()
        with contextlib.redirect_stdout(io.StringIO()):
            explained.filter("k = 1").explain()
        explained_later = explained.count()
        unpushed = spark.read.format(source.name()).load()
        unpushed.filter("k = 1").count()
        unpushed_filtered = unpushed.filter("k = 3 OR k = 4").count()
    finally:
        if before is None:
            spark.conf.unset(PUSHDOWN_CONF)
        else:
            spark.conf.set(PUSHDOWN_CONF, before)
        spark.catalog.dropTempView("pyspark_probe")
    return {
        "filtered": filtered,
        "later_df": later_df,
        "filtered_view": filtered_view,
        "later_view": later_view,
        "fresh": fresh,
        "explained_later": explained_later,
        "unpushed_filtered": unpushed_filtered,
        "pushdown_default": pushdown_default,
    }


def paimon(spark: SparkSession, warehouse: str) -> dict[str, int]:
    """Counts of a table of ROWS rows over DAYS partitions, written and read through
    ``format("paimon")``: each unfiltered count follows a filtered query on the same relation,
    on a DataFrame, on a temp view, and on a relation loaded with ``option("filter")``."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    fields = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(fields, partition_keys=["dt"]))
    spark.range(0, ROWS, numPartitions=4).selectExpr(
        "id", "concat('name-', id) as name", f"concat('2026-11-0', id % {DAYS} + 1) as dt"
    ).write.format("paimon").option("warehouse", warehouse).option("table", "db.t").mode(
        "append"
    ).save()

    def load(**options: str) -> DataFrame:
        reader = spark.read.format("paimon").option("warehouse", warehouse)
        return reader.option("table", "db.t").options(**options).load()

    df = load()
    filtered = df.filter(ONE_DAY).count()
    later_df = df.count()
    load().createOrReplaceTempView("pyspark_probe_paimon")
    try:
        filtered_view = _count(spark, f"SELECT count(*) FROM pyspark_probe_paimon WHERE {ONE_DAY}")
        later_view = _count(spark, "SELECT count(*) FROM pyspark_probe_paimon")
    finally:
        spark.catalog.dropTempView("pyspark_probe_paimon")
    one_day = load(filter=ONE_DAY, columns="id")
    option_filtered = one_day.filter(f"id < {SMALL_IDS}").count()
    option_later = one_day.count()
    return {
        "filtered": filtered,
        "later_df": later_df,
        "filtered_view": filtered_view,
        "later_view": later_view,
        "option_filtered": option_filtered,
        "option_later": option_later,
        "option_columns": len(one_day.columns),
    }


def pruning(spark: SparkSession, warehouse: str) -> dict[str, int]:
    """Whether a ``format("paimon")`` query of ONE_DAY opens only that partition's files, on
    a table of ROWS rows over DAYS partitions whose other partitions' data files are damaged:
    the rows counted, or -1 where the read failed on a damaged file. ``where``:
    ``load().where(ONE_DAY)``, Spark's filter on the natural path; ``filter_option``: the
    same filter bound to the relation with ``option("filter")``."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    fields = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    catalog.create_table("db.damaged", Schema.from_pyarrow_schema(fields, partition_keys=["dt"]))
    table = catalog.get_table("db.damaged")
    builder = table.new_batch_write_builder()
    ids = list(range(ROWS))
    days = [f"2026-11-0{i % DAYS + 1}" for i in ids]
    with builder.new_write() as write:
        write.write_arrow(pa.table({"id": ids, "dt": days}, schema=fields))
        builder.new_commit().commit(write.prepare_commit())
    for folder, _dirs, names in os.walk(str(table.path)):
        if os.path.basename(os.path.dirname(folder)) == "dt=2026-11-01":
            continue
        for name in names:
            if name.startswith("data-"):
                with open(os.path.join(folder, name), "wb") as f:
                    f.write(b"not a data file")

    def count(**options: str) -> int:
        reader = spark.read.format("paimon").option("warehouse", warehouse)
        relation = reader.option("table", "db.damaged").options(**options).load()
        try:
            return relation.where(ONE_DAY).count()
        except Exception:
            return -1

    return {"where": count(), "filter_option": count(filter=ONE_DAY)}


def doors(spark: SparkSession, warehouse: str, streaming: bool = True) -> dict[str, Any]:
    """The other doors a user goes through: ``paimon_pyspark.spark.write`` upserting and
    deleting (``rowkind.field``) in a primary-key table, ``paimon_pyspark.spark.read`` of the
    latest and of the first snapshot, ``procedures.compact`` as a Spark job, a ``CREATE`` /
    ``INSERT`` / ``MERGE INTO`` / ``SELECT`` script through ``paimon_pyspark.spark.sql``, and
    (``streaming``) a Structured Streaming query from the ``paimon`` source into the ``paimon``
    sink over two commits of the source."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    fields = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    with_kind = fields.append(pa.field("kind", pa.string()))
    options = {"bucket": "2", "rowkind.field": "kind"}
    catalog.create_table(
        "db.pk", Schema.from_pyarrow_schema(with_kind, primary_keys=["id"], options=options)
    )

    def rows(lo: int, hi: int, tag: str, kind: str = "+I") -> DataFrame:
        return spark.range(lo, hi, numPartitions=4).selectExpr(
            "id", f"concat('{tag}-', id) as v", f"'{kind}' as kind"
        )

    for frame in (rows(0, 100, "a"), rows(50, 150, "b"), rows(0, 10, "gone", "-D")):
        paimon_write(frame, warehouse, "db.pk")
    latest = paimon_read(spark, warehouse, "db.pk", columns=["id", "v"]).collect()
    first = paimon_read(spark, warehouse, "db.pk", snapshot_id=1).count()
    compact(spark, warehouse, "db.pk")
    pk = catalog.get_table("db.pk")
    compacted = pk.snapshot_manager.get_latest_snapshot()
    after_compact = paimon_read(spark, warehouse, "db.pk", columns=["id", "v"]).collect()

    script = [
        "CREATE TABLE db.q (id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id', "
        "'bucket' = '1')",
        "INSERT INTO db.q VALUES (1, 'one'), (2, 'two'), (3, 'three')",
        "MERGE INTO db.q t USING (SELECT 2 AS id, 'TWO' AS v UNION ALL SELECT 4, 'four') s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)",
    ]
    for statement in script:
        paimon_sql(spark, statement, warehouse=warehouse).collect()
    queried = paimon_sql(spark, "SELECT id, v FROM db.q ORDER BY id", warehouse=warehouse)
    found: dict[str, Any] = {
        "pk_latest": {str(r["id"]): r["v"] for r in latest},
        "pk_first_snapshot": first,
        "compact_kind": compacted.commit_kind if compacted else None,
        "pk_after_compact_same": sorted(map(tuple, after_compact)) == sorted(map(tuple, latest)),
        "sql_rows": [[r["id"], r["v"]] for r in queried.collect()],
    }
    if not streaming:
        return {**found, "stream": UNSUPPORTED}

    for name in ("db.src", "db.sink"):
        catalog.create_table(name, Schema.from_pyarrow_schema(fields))
    source = catalog.get_table("db.src")

    def commit(lo: int, hi: int) -> None:
        builder = source.new_batch_write_builder()
        with builder.new_write() as write:
            ids = pa.array(range(lo, hi), pa.int64())
            write.write_arrow(pa.table({"id": ids, "v": [f"s-{i}" for i in range(lo, hi)]}))
            builder.new_commit().commit(write.prepare_commit())

    commit(0, 40)
    stream = spark.readStream.format("paimon").option("warehouse", warehouse)
    query = (
        stream.option("table", "db.src")
        .load()
        .writeStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.sink")
        .option("checkpointLocation", os.path.join(warehouse, "checkpoint"))
        .start()
    )
    try:
        query.processAllAvailable()
        commit(40, 100)
        query.processAllAvailable()
    finally:
        query.stop()
    sink = catalog.get_table("db.sink")
    manager = sink.snapshot_manager
    snapshots = [manager.snapshot(i) for i in range(1, (manager.latest_id() or 0) + 1)]
    streamed = paimon_read(spark, warehouse, "db.sink").collect()
    found["stream"] = {
        "ids": sorted(int(r["id"]) for r in streamed),
        "values_ok": all(r["v"] == f"s-{r['id']}" for r in streamed),
        "commits": [(s.commit_kind, s.commit_identifier) for s in snapshots],
    }
    return found


def results(spark: SparkSession, workdir: str, with_doors: bool = True) -> dict[str, Any]:
    """``with_doors``: False for the test venv's own pyspark, whose doors tests/spark tests.
    ``missing_datasource_api`` lists what this pyspark lacks of the Data Source API (empty on
    4.1.4+); where it is not empty, the Data Source parts answer UNSUPPORTED."""
    missing = compat.missing_datasource_api()
    workdirs = {name: os.path.join(workdir, name) for name in ("warehouse", "pruning", "doors")}
    found: dict[str, Any] = {
        "pyspark": pyspark.__version__,
        "missing_datasource_api": missing,
        "probe": UNSUPPORTED if missing else probe(spark),
        "paimon": UNSUPPORTED if missing else paimon(spark, workdirs["warehouse"]),
        "pruning": UNSUPPORTED if missing else pruning(spark, workdirs["pruning"]),
    }
    if with_doors:
        found["doors"] = doors(spark, workdirs["doors"], streaming=not missing)
    return found


def main(workdir: str) -> dict[str, Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon_pyspark-version-probe")
        .config("spark.driver.extraJavaOptions", JVM_OPTIONS)
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.warehouse.dir", os.path.join(workdir, "spark-warehouse"))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    if compat.has_datasource_api():
        register(spark)
    try:
        return results(spark, workdir)
    finally:
        spark.stop()


if __name__ == "__main__":
    result = main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="pyspark-probe-"))
    print(json.dumps(result, separators=(",", ":")))
