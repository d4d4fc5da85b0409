"""How spark/cluster.py lays local rows out over Spark tasks, which the procedures' and the
row-level writes' jobs rely on (one task per bucket group, a shuffle by key): asked of Spark
itself with ``spark_partition_id``."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from paimon_pyspark.spark.cluster import default_parallelism, spread, task_rows


def test_spread_puts_key_k_in_task_k_mod_n(spark: SparkSession) -> None:
    keys = spark.createDataFrame(
        [(k,) for k in range(50)], StructType([StructField("k", LongType())])
    )
    for n in (1, 3, 7, 16):
        placed = spread(keys, "k", n).select("k", F.spark_partition_id().alias("task")).collect()
        assert sorted((r.k, r.task) for r in placed) == [(k, k % n) for k in range(50)]


def test_task_rows_gives_each_row_its_own_task_or_spreads_them(spark: SparkSession) -> None:
    schema = StructType([StructField("i", IntegerType(), False), StructField("v", StringType())])
    many = default_parallelism(spark) * 3
    for count, tasks in ((1, 1), (2, 2), (many, many), (many, 4)):
        rows = [(i, f"row {i}") for i in range(count)]
        frame = task_rows(spark, rows, schema, tasks)
        placed = {
            r.i: r.task for r in frame.select("i", F.spark_partition_id().alias("task")).collect()
        }
        assert sorted(placed) == list(range(count))  # every row once
        if tasks >= count:
            assert len(set(placed.values())) == count, (count, tasks, placed)
        else:
            assert placed == {i: i % tasks for i in range(count)}
