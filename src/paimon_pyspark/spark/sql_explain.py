"""``EXPLAIN <query>`` over Paimon tables: the query bound as spark/sql.py binds any query, and
Spark's plan of it in Spark's ``plan`` column, as Spark's EXPLAIN returns it."""

from __future__ import annotations

import contextlib
import io
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import StringType, StructField, StructType

from paimon_pyspark.sql.explain import Explain

_PLAN = StructType([StructField("plan", StringType(), True)])


def explain(runner: Any, stmt: Explain) -> DataFrame:
    """``runner``: spark/sql.py's ``_Runner``. The plan is the text ``DataFrame.explain``
    prints, which a classic session and a Spark Connect client both print, and neither
    returns."""
    data: DataFrame = runner.query(stmt.query, stmt.text)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        data.explain(mode=stmt.mode)
    plan = printed.getvalue().removesuffix("\n")
    return runner.spark.createDataFrame([(plan,)], _PLAN)  # type: ignore[no-any-return]


HANDLERS = {Explain: explain}

__all__ = ["HANDLERS", "explain"]
