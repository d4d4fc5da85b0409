"""The jobs behind the CLI and ``make demo``: land data in Paimon tables through Spark, read back.

Each stage prints one progress line, so a long run shows where it is.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from paimon_pyspark.catalog.filesystem_catalog import CatalogFactory
from paimon_pyspark.schema import Schema
from paimon_pyspark.spark import register
from paimon_pyspark.spark.schema import spark_schema

Progress = Callable[[str], None]


def progress_printer() -> Progress:
    start = time.perf_counter()

    def say(message: str) -> None:
        print(f"  [{time.perf_counter() - start:7.2f}s] {message}", flush=True)

    return say


def local_session(app: str, master: str = "local[*]") -> SparkSession:
    """A local session whose Python workers run this interpreter (where we are installed)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        # no per-row Arrow size check: it halves the speed of writes through Python
        .config("spark.sql.execution.arrow.maxBytesPerBatch", str(2**31 - 1))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def orders(spark: SparkSession, rows: int) -> DataFrame:
    statuses = F.array(F.lit("NEW"), F.lit("PAID"), F.lit("SHIPPED"))
    return spark.range(0, rows, numPartitions=8).select(
        F.col("id").alias("order_id"),
        (F.col("id") * 7919 % 10_000).cast("int").alias("customer_id"),
        F.round((F.col("id") * 31 % 50_000) / 100.0, 2).cast("decimal(10,2)").alias("amount"),
        F.element_at(
            statuses,
            (F.col("id") % 3 + 1).cast("int"),
        ).alias("status"),
        F.concat(F.lit("2026-11-0"), (F.col("id") % 4 + 1).cast("string")).alias("order_date"),
    )


def write_paimon(df: DataFrame, warehouse: str, table: str, options: Mapping[str, str]) -> None:
    writer = df.write.format("paimon").option("warehouse", warehouse).option("table", table)
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.mode("append").save()


def read_paimon(spark: SparkSession, warehouse: str, table: str) -> DataFrame:
    return spark.read.format("paimon").option("warehouse", warehouse).option("table", table).load()


def demo(spark: SparkSession, warehouse: str, rows: int, say: Progress) -> None:
    """Create the seed tables, land ``rows`` generated orders in each, read them back."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("demo", ignore_if_exists=True)
    data = orders(spark, rows)
    arrow_schema = to_arrow_schema(data.schema)
    catalog.create_table(
        "demo.orders",
        Schema.from_pyarrow_schema(arrow_schema, options={"bucket": "2", "bucket-key": "order_id"}),
        ignore_if_exists=True,
    )
    catalog.create_table(
        "demo.orders_by_day",
        Schema.from_pyarrow_schema(arrow_schema, partition_keys=["order_date"]),
        ignore_if_exists=True,
    )
    say("created demo.orders (bucket = 2, bucket-key = order_id) and demo.orders_by_day")
    for name in ("demo.orders", "demo.orders_by_day"):
        write_paimon(data, warehouse, name, {})
        snapshot = catalog.get_table(name).snapshot_manager.latest_id()
        say(f"wrote {rows:,} rows into {name} with df.write.format('paimon') (snapshot {snapshot})")
        back = read_paimon(spark, warehouse, name)
        say(f"read back {back.count():,} rows from {name} with spark.read.format('paimon')")
        summary = back.groupBy("status").agg(
            F.count("*").alias("orders"), F.sum("amount").alias("amount")
        )
        for row in summary.orderBy("status").collect():
            status, count, amount = row["status"], row["orders"], row["amount"]
            print(f"      {status:<8} orders={count:>10,} amount={amount:>16,.2f}")
    day = read_paimon(spark, warehouse, "demo.orders_by_day").where("order_date = '2026-11-02'")
    say(f"filtered read of partition order_date=2026-11-02: {day.count():,} rows")


def load(
    spark: SparkSession,
    input_path: str,
    input_format: str,
    warehouse: str,
    table: str,
    options: Mapping[str, str],
    say: Progress,
) -> None:
    """Land a Parquet/CSV/JSON input in ``table`` (created from its schema with create=true)."""
    reader = spark.read.format(input_format)
    if input_format == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    df = reader.load(input_path)
    say(f"opened {input_format} input {input_path} ({len(df.columns)} columns)")
    write_paimon(df, warehouse, table, options)
    paimon_table = CatalogFactory.create({"warehouse": warehouse}).get_table(table)
    snapshot = paimon_table.snapshot_manager.latest()
    total = snapshot.total_record_count if snapshot else 0
    say(
        f"committed snapshot {snapshot.id if snapshot else '-'} of {table}: {total:,} rows in table"
    )
    back = read_paimon(spark, warehouse, table)
    say(f"read back {back.count():,} rows; schema {spark_schema(paimon_table).simpleString()}")
