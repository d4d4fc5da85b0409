"""The jobs behind the CLI and ``make demo``: land data in Paimon tables through Spark, read back.

Each stage prints one progress line, so a long run shows where it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from decimal import Decimal

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.procedures import rescale
from paimon_pyspark.schema import Schema
from paimon_pyspark.spark.procedures import compact as spark_compact
from paimon_pyspark.spark.schema import spark_arrow_schema, spark_schema
from paimon_pyspark.spark.tables import catalog_options, open_catalog

Progress = Callable[[str], None]


def progress_printer() -> Progress:
    start = time.perf_counter()

    def say(message: str) -> None:
        print(f"  [{time.perf_counter() - start:7.2f}s] {message}", flush=True)

    return say


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


def read_paimon(
    spark: SparkSession, warehouse: str, table: str, options: Mapping[str, str] | None = None
) -> DataFrame:
    """``table`` through ``format("paimon")``, its catalog opened with the catalog options
    among ``options`` (``metastore``, ``uri``, ``s3.*``, ...)."""
    reader = spark.read.format("paimon").option("warehouse", warehouse).option("table", table)
    for k, v in catalog_options(options or {}).items():
        reader = reader.option(k, v)
    return reader.load()


def demo(
    spark: SparkSession,
    warehouse: str,
    rows: int,
    say: Progress,
    options: Mapping[str, str] | None = None,
) -> None:
    """Create the seed tables, land ``rows`` generated orders in each, read them back;
    ``options``: the catalog's (``metastore``, ``uri``, ...), the filesystem catalog's none."""
    options = catalog_options(options or {})
    catalog = open_catalog(warehouse, options)
    catalog.create_database("demo", ignore_if_exists=True)
    data = orders(spark, rows)
    arrow_schema = spark_arrow_schema(data.schema)
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
        write_paimon(data, warehouse, name, options)
        snapshot = catalog.get_table(name).snapshot_manager.latest_id()
        say(f"wrote {rows:,} rows into {name} with df.write.format('paimon') (snapshot {snapshot})")
        back = read_paimon(spark, warehouse, name, options)
        say(f"read back {back.count():,} rows from {name} with spark.read.format('paimon')")
        summary = back.groupBy("status").agg(
            F.count("*").alias("orders"), F.sum("amount").alias("amount")
        )
        for row in summary.orderBy("status").collect():
            status, count, amount = row["status"], row["orders"], row["amount"]
            print(f"      {status:<8} orders={count:>10,} amount={amount:>16,.2f}")
    day = read_paimon(spark, warehouse, "demo.orders_by_day", options).where(
        "order_date = '2026-11-02'"
    )
    say(f"filtered read of partition order_date=2026-11-02: {day.count():,} rows")
    say("postpone bucket (bucket = -2): the seed's scenario, compactions as Spark jobs")
    catalog.drop_table("demo.postpone_bucket_table", ignore_if_not_exists=True)
    postpone_seed(
        catalog,
        "demo.postpone_bucket_table",
        lambda name: spark_compact(spark, catalog, name, compact_strategy="full"),
        say,
    )


POSTPONE_SCHEMA = pa.schema(
    [
        pa.field("order_id", pa.int32(), nullable=False),
        ("customer_id", pa.int32()),
        pa.field("order_date", pa.string(), nullable=False),
        ("total_amount", pa.decimal128(10, 2)),
        ("status", pa.string()),
    ]
)
POSTPONE_OPTIONS = {
    "bucket": "-2",
    "postpone.batch-write-fixed-bucket": "false",
    "postpone.default-bucket-num": "2",
    "file.format": "parquet",
}
FIXED_BUCKET = {"postpone.batch-write-fixed-bucket": "true"}  # the seed's /*+ OPTIONS(...) */
Compact = Callable[[str], object]


def postpone_seed(
    catalog: Catalog, name: str, compact: Compact, say: Progress
) -> list[tuple[str, list[int]]]:
    """The seed's postpone-bucket scenario on table ``name``; the visible order ids per step.

    ``compact(name)`` runs the full compaction (``procedures.compact`` or its Spark job).
    """
    catalog.create_table(
        name,
        Schema.from_pyarrow_schema(
            POSTPONE_SCHEMA,
            partition_keys=["order_date"],
            primary_keys=["order_date", "order_id"],
            options=POSTPONE_OPTIONS,
        ),
    )
    table = catalog.get_table(name)
    steps: list[tuple[str, list[int]]] = []

    def insert(rows: list[tuple[int, int, str, str, str]], fixed: bool = False) -> None:
        data = pa.Table.from_pylist(
            [
                dict(zip(POSTPONE_SCHEMA.names, (*r[:3], Decimal(r[3]), r[4]), strict=True))
                for r in rows
            ],
            schema=POSTPONE_SCHEMA,
        )
        target = table.copy(FIXED_BUCKET) if fixed else table
        builder = target.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(data)
            builder.new_commit().commit(write.prepare_commit())

    def visible(step: str) -> None:
        rb = table.new_read_builder().with_projection(["order_id"])
        ids = sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits())["order_id"].to_pylist())
        steps.append((step, ids))
        say(f"{name}: after {step}, visible order_id {ids}")

    insert(
        [
            (1, 1001, "2023-10-01", "100.50", "COMPLETED"),
            (2, 1002, "2023-10-01", "200.75", "PENDING"),
            (3, 1001, "2023-10-02", "150.20", "COMPLETED"),
        ]
    )
    visible("insert 1-3 (postpone)")
    insert([(4, 1003, "2023-10-02", "300.00", "COMPLETED")], fixed=True)
    visible("insert 4 (fixed bucket)")
    insert(
        [
            (5, 1004, "2023-10-03", "450.80", "PENDING"),
            (6, 1005, "2023-10-03", "220.30", "COMPLETED"),
        ],
        fixed=True,
    )
    visible("insert 5-6 (fixed bucket)")
    compact(name)
    visible("compact")
    rescale(catalog, name, bucket_num=1, partition="order_date=2023-10-02")
    visible("rescale 2023-10-02 to 1 bucket")
    insert([(7, 1006, "2023-10-03", "500.00", "COMPLETED")], fixed=True)
    insert([(8, 1007, "2023-10-03", "600.00", "COMPLETED")])
    insert([(9, 1008, "2023-10-03", "700.00", "COMPLETED")])
    insert([(10, 1009, "2023-10-03", "800.00", "COMPLETED")], fixed=True)
    visible("insert 7, 10 (fixed bucket) and 8, 9 (postpone)")
    compact(name)
    visible("compact")
    return steps


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
    paimon_table = open_catalog(warehouse, options).get_table(table)
    snapshot = paimon_table.snapshot_manager.latest()
    total = snapshot.total_record_count if snapshot else 0
    say(
        f"committed snapshot {snapshot.id if snapshot else '-'} of {table}: {total:,} rows in table"
    )
    back = read_paimon(spark, warehouse, table, options)
    say(f"read back {back.count():,} rows; schema {spark_schema(paimon_table).simpleString()}")
