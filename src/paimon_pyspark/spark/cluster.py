"""What the Spark jobs here ask of a session, asked the same way of a classic session and of a
Spark Connect client, which has no SparkContext (``spark.sparkContext`` raises there)."""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, BinaryType, StructField, StructType

_PARALLELISM: weakref.WeakKeyDictionary[SparkSession, int] = weakref.WeakKeyDictionary()
PAYLOADS = "payloads"
"""The column of :func:`payload_frame`: one task's payloads, an array of versioned bytes."""


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect client session."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """The cores a job spreads over: ``spark.default.parallelism`` when set, else the number
    of partitions Spark gives a range with none asked (its leaf-node default parallelism, which
    is SparkContext.defaultParallelism unless configured), found once per session by a tiny
    job, since a Connect client cannot ask the SparkContext."""
    known = _PARALLELISM.get(spark)
    if known is not None:
        return known
    conf = spark.conf.get("spark.default.parallelism", None)
    if conf:
        n = int(conf)
    else:
        ids = spark.range(0, 1 << 12).select(F.spark_partition_id().alias("p"))
        row = ids.agg(F.max("p")).head()
        n = 1 if row is None or row[0] is None else int(row[0]) + 1
    n = max(1, n)
    _PARALLELISM[spark] = n
    return n


def payload_frame(spark: SparkSession, groups: Sequence[Sequence[bytes]]) -> DataFrame:
    """A DataFrame of one row per group of payloads (versioned bytes: encoded splits, commit
    inputs), column :data:`PAYLOADS`. Spark lays local rows out as ``parallelize`` does, so
    up to ``default_parallelism`` groups get a task each; a job maps them with ``mapInArrow``.
    """
    schema = StructType([StructField(PAYLOADS, ArrayType(BinaryType(), False), False)])
    return spark.createDataFrame([(list(g),) for g in groups], schema)
