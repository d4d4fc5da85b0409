"""What the Spark jobs here ask of a session, asked the same way of a classic session and of a
Spark Connect client, which has no SparkContext (``spark.sparkContext`` raises there)."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from paimon_pyspark.spec import murmur

_PARALLELISM: weakref.WeakKeyDictionary[SparkSession, int] = weakref.WeakKeyDictionary()


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect client session."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def is_session(value: object) -> bool:
    """Whether ``value`` is a SparkSession, classic or a Spark Connect client (whose class is
    not a subclass of the classic one)."""
    if isinstance(value, SparkSession):
        return True
    kind = type(value)
    return kind.__module__.startswith("pyspark.sql.connect") and kind.__name__ == "SparkSession"


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


def spread(df: DataFrame, index: str, tasks: int) -> DataFrame:
    """``df`` over exactly ``tasks`` tasks, the rows whose int column ``index`` is ``i`` in task
    ``i % tasks``, as an RDD's ``partitionBy`` with the identity lays keys out. Spark's hash
    partitioning puts a value in task ``pmod(murmur3(value, 42), tasks)`` (the hash that
    bucketed tables rely on), so each task is given a value that lands there
    (:func:`_routes`). A repartition to a number of tasks is never coalesced by AQE."""
    routes = F.array(*(F.lit(v) for v in _routes(tasks)))
    target = F.element_at(routes, (F.pmod(F.col(index), F.lit(tasks)) + 1).cast("int"))
    return df.repartition(tasks, target)


@functools.lru_cache(maxsize=64)
def _routes(tasks: int) -> tuple[int, ...]:
    """For each task ``t`` of ``tasks``, the least int whose Spark hash partition is ``t``."""
    found: dict[int, int] = {}
    value = 0
    while len(found) < tasks:
        found.setdefault(murmur.hash_bytes(value.to_bytes(4, "little")) % tasks, value)
        value += 1
    return tuple(found[t] for t in range(tasks))


def task_rows(
    spark: SparkSession, rows: Sequence[tuple[object, ...]], schema: StructType, tasks: int
) -> DataFrame:
    """Local ``rows``, their first column their index ``0..n-1``, for ``tasks`` tasks: with
    ``tasks >= n`` each row in a task of its own, else row ``i`` in task ``i % tasks``. Spark
    gives up to ``default_parallelism`` local rows a task each itself, laying them out as
    ``parallelize`` does; other layouts are a :func:`spread`."""
    df = spark.createDataFrame(list(rows), schema)
    if len(rows) <= tasks and len(rows) <= default_parallelism(spark):
        return df
    return spread(df, schema.names[0], tasks)
