"""Why the paimon source never uses ``pushFilters``: the installed pyspark reuses the reader
that a filtered query configured for a later query on the same DataFrame or view.

A probe source of 20 rows (k = 0..19, in 4 input partitions) keeps the ``k = <value>`` filter
Spark pushes and drops the other rows. If a later unfiltered query on the same
DataFrame gets the pushed reader, it sees fewer than 20 rows. This test pins that behaviour of
the installed pyspark: when it fails, pyspark has stopped reusing the reader, and pushing
filters (partition pruning from Spark's own WHERE) may be safe on it (spark/datasource.py).
tests/versions/test_pyspark_versions.py runs the same probe on every supported line.
"""

from __future__ import annotations

import pyspark
import pytest
from pyspark.sql import SparkSession
from tests.versions.pyspark_probe import probe_source

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def test_installed_pyspark_reuses_a_reader_that_push_filters_configured(
    spark: SparkSession,
) -> None:
    source = probe_source()
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
