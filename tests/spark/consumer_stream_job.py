"""The streaming query test_spark_consumer_restart.py kills: a Paimon table read as a stream
with a ``consumer-id``, written into another Paimon table.

It runs as its own process (its own SparkSession, local[2]) so the test can SIGKILL the whole
process group, driver JVM and Python workers with it, as a crash would. Usage::

    python consumer_stream_job.py <warehouse> <source db.table> <sink db.table> <checkpoint>
        <consumer id> run|finish

``run`` streams until killed; ``finish`` processes what is there (Trigger.AvailableNow) and
exits 0.

The sink is an append table created from the stream's columns on the first batch (an
``$audit_log`` stream's ``rowkind`` lands as ``kind``); every
micro-batch is committed once under its batch id (spark/streaming.py), a replay included.
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

from paimon_pyspark.spark import register


def main(
    warehouse: str, source: str, sink: str, checkpoint: str, consumer_id: str, mode: str
) -> None:
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon_pyspark-consumer-job")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    frames = (
        spark.readStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", source)
        .option("consumer-id", consumer_id)
        .load()
    )
    if "rowkind" in frames.columns:  # a system field name of Paimon tables: renamed to land
        frames = frames.withColumnRenamed("rowkind", "kind")
    writer = (
        frames.writeStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", sink)
        .option("create", "true")
        .option("checkpointLocation", checkpoint)
    )
    if mode == "finish":
        writer.trigger(availableNow=True).start().awaitTermination()
    else:
        writer.trigger(processingTime="200 milliseconds").start().awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:7])
