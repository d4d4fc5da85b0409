"""``EXPLAIN <query>`` over Paimon tables: the query bound as spark/sql.py binds any query, and
Spark's plan of it in Spark's ``plan`` column, as Spark's EXPLAIN returns it."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import StringType, StructField, StructType

from paimon_pyspark.errors import UnsupportedStatementError
from paimon_pyspark.sql.explain import Explain

_PLAN = StructType([StructField("plan", StringType(), True)])


def explain(runner: Any, stmt: Explain) -> DataFrame:
    """``runner``: spark/sql.py's ``_Runner``."""
    data: DataFrame = runner.query(stmt.query, stmt.text)
    jvm = getattr(runner.spark, "_jvm", None)
    jdf = getattr(data, "_jdf", None)
    if jvm is None or jdf is None:
        raise UnsupportedStatementError(
            "EXPLAIN of a query over Paimon tables needs a classic (JVM) SparkSession; call "
            "DataFrame.explain() on paimon_pyspark.spark.sql(spark, query) instead."
        )
    plan = str(jvm.PythonSQLUtils.explainString(jdf.queryExecution(), stmt.mode))
    return runner.spark.createDataFrame([(plan,)], _PLAN)  # type: ignore[no-any-return]


HANDLERS = {Explain: explain}

__all__ = ["HANDLERS", "explain"]
