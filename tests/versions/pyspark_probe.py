"""Does this pyspark reuse a reader that ``pushFilters`` configured, and does our ``paimon``
source return every row to a query after a filtered one? ``results(spark, workdir)`` answers
with counts; run as ``python tests/versions/pyspark_probe.py <dir>`` in a venv of the version
matrix (mk/pyspark_matrix.mk), it starts its own SparkSession and prints them as one JSON object.

tests/versions/test_pyspark_versions.py runs it so in each matrix venv, and calls ``results``
on its own session for its own pyspark. It imports nothing from ``tests`` and nothing a matrix
venv lacks (no pytest).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, EqualTo, Filter, InputPartition
from pyspark.sql.types import LongType, StructField, StructType

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.spark import read as paimon_read
from paimon_pyspark.spark import register
from paimon_pyspark.spark import write as paimon_write

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
PROBE_ROWS = 20
ROWS = 1000
DAYS = 4
ONE_DAY = "dt = '2026-11-01'"
SMALL_IDS = 100
"""A second filter, ``id < SMALL_IDS``, on a relation bound to ONE_DAY."""
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""A short-lived driver: C1 only and one GC thread take a third less CPU than the defaults."""


def probe_source() -> type[DataSource]:
    """PROBE_ROWS rows (k = 0..19 in 4 input partitions); once Spark pushes ``k = <value>``,
    the reader keeps only those rows (tests/spark/test_spark_push_filters.py runs it too).
    Defined in a function so that cloudpickle sends the classes to the workers by value."""

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
    DataFrame and on a temp view of another; ``fresh`` counts a new relation."""
    source = probe_source()
    spark.dataSource.register(source)
    before = spark.conf.get(PUSHDOWN_CONF, None)
    spark.conf.set(PUSHDOWN_CONF, "true")
    try:
        df = spark.read.format(source.name()).load()
        filtered = df.filter("k = 1").count()
        later_df = df.count()
        spark.read.format(source.name()).load().createOrReplaceTempView("pyspark_probe")
        filtered_view = _count(spark, "SELECT count(*) FROM pyspark_probe WHERE k = 1")
        later_view = _count(spark, "SELECT count(*) FROM pyspark_probe")
        fresh = spark.read.format(source.name()).load().count()
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


def doors(spark: SparkSession, warehouse: str) -> dict[str, Any]:
    """The other doors a user goes through: ``paimon_pyspark.spark.write`` upserting and
    deleting (``rowkind.field``) in a primary-key table, ``paimon_pyspark.spark.read`` of the
    latest and of the first snapshot, and a Structured Streaming query from the ``paimon``
    source into the ``paimon`` sink over two commits of the source."""
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
    return {
        "pk_latest": {str(r["id"]): r["v"] for r in latest},
        "pk_first_snapshot": first,
        "stream_ids": sorted(int(r["id"]) for r in streamed),
        "stream_values_ok": all(r["v"] == f"s-{r['id']}" for r in streamed),
        "stream_commits": [(s.commit_kind, s.commit_identifier) for s in snapshots],
    }


def results(spark: SparkSession, workdir: str, with_doors: bool = True) -> dict[str, Any]:
    """``with_doors``: False for the test venv's own pyspark, whose doors tests/spark tests."""
    found: dict[str, Any] = {
        "pyspark": pyspark.__version__,
        "probe": probe(spark),
        "paimon": paimon(spark, os.path.join(workdir, "warehouse")),
    }
    if with_doors:
        found["doors"] = doors(spark, os.path.join(workdir, "doors"))
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
    register(spark)
    try:
        return results(spark, workdir)
    finally:
        spark.stop()


if __name__ == "__main__":
    result = main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="pyspark-probe-"))
    print(json.dumps(result, separators=(",", ":")))
