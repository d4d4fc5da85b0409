"""The streaming query test_spark_streaming.py kills: Parquet files into a Paimon table.

It runs as its own process (its own SparkSession, local[2]) so the test can SIGKILL the whole
process group, driver JVM and Python workers with it, as a crash would. Usage::

    python streaming_job.py <source dir> <warehouse> <db.table> <checkpoint> run|finish

The source directory holds Parquet files of (id BIGINT, v STRING); each micro-batch takes one
file. ``run`` streams until killed; ``finish`` processes what is left (Trigger.AvailableNow)
and exits 0.
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

from paimon_pyspark.spark import register


def main(source: str, warehouse: str, table: str, checkpoint: str, mode: str) -> None:
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon_pyspark-streaming-job")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    frames = spark.readStream.schema("id BIGINT, v STRING").option("maxFilesPerTrigger", 1)
    writer = (
        frames.parquet(source)
        .writeStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", table)
        .option("checkpointLocation", checkpoint)
    )
    if mode == "finish":
        writer.trigger(availableNow=True).start().awaitTermination()
    else:
        writer.start().awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:6])
