"""PySpark integration: the ``paimon`` Python Data Source and Spark jobs.

``register(spark)`` makes ``format("paimon")`` (and the clash-free ``format("paimon_pyspark")``)
available on a session; importing this package registers them on the active session, if any.
``write(df, warehouse, "db.t")`` writes with the right shuffle for every bucket mode.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from paimon_pyspark.spark.datasource import PaimonDataSource, PaimonPySparkDataSource
from paimon_pyspark.spark.write import write


def register(spark: SparkSession | None = None) -> None:
    session = spark or SparkSession.getActiveSession()
    if session is None:
        raise RuntimeError("No active SparkSession to register the paimon data source on.")
    session.dataSource.register(PaimonDataSource)
    session.dataSource.register(PaimonPySparkDataSource)


if SparkSession.getActiveSession() is not None:
    register()

__all__ = ["PaimonDataSource", "PaimonPySparkDataSource", "register", "write"]
