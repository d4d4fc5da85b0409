"""``CREATE TEMPORARY VIEW v AS SELECT ... FROM paimon_table``: the query is bound as any query
of the door (spark/sql.py: a fresh relation per Paimon table) and the analysed DataFrame
becomes Spark's temporary view, so later statements, Spark's own included, read ``v``. The
relation was planned when the view was made, so the view reads the snapshots of that moment
(Java's view over a catalog table reads the latest); ``CREATE OR REPLACE`` renews it."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame

from paimon_pyspark.sql.views import CreateTempView


def create_temp_view(runner: Any, stmt: CreateTempView) -> DataFrame:
    """``runner``: spark/sql.py's ``_Runner``. Spark's own errors for an existing view (without
    ``OR REPLACE``) and for a column list of the wrong length."""
    spark = runner.spark
    if stmt.if_not_exists and _exists(spark, stmt):
        return runner.empty()  # type: ignore[no-any-return]
    data: DataFrame = runner.query(stmt.query, stmt.text)
    if stmt.columns is not None:
        data = data.toDF(*stmt.columns)
    if stmt.global_view:
        (data.createOrReplaceGlobalTempView if stmt.replace else data.createGlobalTempView)(
            stmt.name
        )
    else:
        (data.createOrReplaceTempView if stmt.replace else data.createTempView)(stmt.name)
    return runner.empty()  # type: ignore[no-any-return]


def _exists(spark: Any, stmt: CreateTempView) -> bool:
    if stmt.global_view:
        database = spark.conf.get("spark.sql.globalTempDatabase", "global_temp")
        return bool(spark.catalog.tableExists(f"{database}.{stmt.name}"))
    return bool(spark.catalog.tableExists(stmt.name))


HANDLERS = {CreateTempView: create_temp_view}

__all__ = ["HANDLERS", "create_temp_view"]
