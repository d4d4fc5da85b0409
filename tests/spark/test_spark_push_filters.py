"""Why the paimon source never uses ``pushFilters``: the installed pyspark reuses the reader
that a filtered query configured for a later query on the same DataFrame or view.

A probe source of 20 rows (k = 0..19, in 4 input partitions) keeps the ``k = <value>`` filter
Spark pushes and drops the other rows. If a later unfiltered query on the same
DataFrame gets the pushed reader, it sees fewer than 20 rows. This test pins that behaviour of
the installed pyspark: when it fails, pyspark has stopped reusing the reader, and pushing
filters (partition pruning from Spark's own WHERE) may be safe on it (spark/datasource.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyspark
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    Filter,
    InputPartition,
)
from pyspark.sql.types import LongType, StructField, StructType

pytestmark = pytest.mark.slow

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def _probe_source() -> type[DataSource]:
    """Defined in a function so that cloudpickle sends the classes by value (Python workers
    cannot import a test module)."""

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


def test_installed_pyspark_reuses_a_reader_that_push_filters_configured(
    spark: SparkSession,
) -> None:
    source = _probe_source()
    spark.dataSource.register(source)
    before = spark.conf.get(PUSHDOWN_CONF, None)
    spark.conf.set(PUSHDOWN_CONF, "true")
    try:
        df = spark.read.format(source.name()).load()
        df.createOrReplaceTempView("reuse_probe")
        assert spark.sql("SELECT k FROM reuse_probe WHERE k = 1").collect() == [(1,)]
        later = spark.sql("SELECT count(*) FROM reuse_probe").collect()[0][0]
        fresh = spark.read.format(source.name()).load().count()
    finally:
        if before is None:
            spark.conf.unset(PUSHDOWN_CONF)
        else:
            spark.conf.set(PUSHDOWN_CONF, before)
    assert fresh == 20
    assert later < 20, (
        f"pyspark {pyspark.__version__} no longer reuses a pushed reader (a later query saw "
        f"all {later} rows): pushFilters may now be safe to use in spark/datasource.py"
    )
