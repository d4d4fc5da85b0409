"""PySpark integration: the ``paimon`` Python Data Source and Spark jobs.

``register(spark)`` makes ``format("paimon")`` (and the clash-free ``format("paimon_pyspark")``)
available on a session; importing this package registers them on the active session, if any.
``write(df, warehouse, "db.t")`` writes with the right shuffle for every bucket mode;
every door takes the catalog's options (``metastore = jdbc`` or ``rest``, ``uri``, ...) with the
table options (docs/catalogs.md);
``read(spark, warehouse, "db.t", where=..., columns=...)`` reads only the rows and columns asked;
``sql(spark, "...", warehouse=...)`` runs Paimon's SQL statements (docs/sql.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import SparkSession

from paimon_pyspark.spark import compat  # first: an old pyspark fails there, by name
from paimon_pyspark.spark.magic import install as install_magic
from paimon_pyspark.spark.read import read
from paimon_pyspark.spark.sql import set_warehouse, sql
from paimon_pyspark.spark.write import MAX_BYTES_PER_BATCH, write


def register(
    spark: SparkSession | None = None,
    *,
    lift_arrow_byte_limit: bool = True,
    warehouse: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Register the sources on ``spark`` (or the active session); with ``warehouse`` (and its
    catalog's ``options``: ``metastore``, ``uri``, ``jdbc.*``, ``token``, the filesystem's
    ``s3.*``), make it the default warehouse of ``sql(spark, ...)`` and, in an
    IPython shell, install the ``%%paimon_sql`` cell magic (spark/magic.py).

    On a pyspark without the Python Data Source API (3.5) no source is registered and only the
    ``warehouse`` part runs, since ``sql`` works there; without ``warehouse`` nothing is left to
    do, so it raises UnsupportedPysparkError naming what is missing.

    Spark checks the size of every row it packs into an Arrow batch for a Python writer, which
    halves the speed of ``df.write.format("paimon")``; a Python data source cannot change that
    per write, so unless the user set ``spark.sql.execution.arrow.maxBytesPerBatch`` (or passes
    ``lift_arrow_byte_limit=False``) it is raised session-wide. Batches stay bounded by
    ``spark.sql.execution.arrow.maxRecordsPerBatch``. Without a source it stays untouched.
    """
    if warehouse is None:
        compat.require_datasource('format("paimon")')
    session = spark or SparkSession.getActiveSession()
    if session is None:
        raise RuntimeError("No active SparkSession to register the paimon data source on.")
    if compat.has_datasource_api():
        from paimon_pyspark.spark.datasource import PaimonDataSource, PaimonPySparkDataSource

        session.dataSource.register(PaimonDataSource)
        session.dataSource.register(PaimonPySparkDataSource)
        if lift_arrow_byte_limit and session.conf.get(MAX_BYTES_PER_BATCH, None) is None:
            session.conf.set(MAX_BYTES_PER_BATCH, str(2**31 - 1))
    if warehouse is not None:
        set_warehouse(session, warehouse, options)
        install_magic(session)


def __getattr__(name: str) -> Any:
    """The Data Source classes, imported when asked for: pyspark 3.5 has no Data Source API."""
    if name in ("PaimonDataSource", "PaimonPySparkDataSource"):
        compat.require_datasource('format("paimon")')
        from paimon_pyspark.spark import datasource

        return getattr(datasource, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if compat.has_datasource_api() and SparkSession.getActiveSession() is not None:
    register()

__all__ = ["PaimonDataSource", "PaimonPySparkDataSource", "read", "register", "sql", "write"]
