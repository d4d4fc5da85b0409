"""What differs between pyspark releases, looked up by feature, per door.

``paimon_pyspark.spark.write``, ``read``, ``sql`` and ``procedures`` run on ``mapInArrow``,
``applyInPandas`` and Spark's Parquet reader, which pyspark 3.5 has; ``format("paimon")`` and
Structured Streaming are a Python Data Source, which needs the API of pyspark 4.1.4. The
package imports on either; a door whose features are missing raises
``UnsupportedPysparkError`` naming them and what to use instead. What differs between the
releases that have a door's API (``SupportsTriggerAvailableNow``, 4.2) is looked up where it is
used."""

from __future__ import annotations

import importlib

import pyspark
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame

from paimon_pyspark.errors import UnsupportedPysparkError

NEEDED_DATASOURCE_API = (
    "DataSource",
    "DataSourceArrowWriter",  # format("paimon") writes (4.0)
    "DataSourceStreamArrowWriter",  # the Structured Streaming sink (4.1)
)
NEEDED_DATAFRAME_API = ("mapInArrow",)  # every Spark job here (3.3)

INSTEAD = (
    "paimon_pyspark.spark.write(df, warehouse, 'db.t') and "
    "paimon_pyspark.spark.read(spark, warehouse, 'db.t') work on this pyspark"
)


def missing_datasource_api() -> list[str]:
    """The Data Source API names this pyspark lacks (all of them before 4.0)."""
    try:
        api = importlib.import_module("pyspark.sql.datasource")
    except ImportError:
        return list(NEEDED_DATASOURCE_API)
    return [name for name in NEEDED_DATASOURCE_API if not hasattr(api, name)]


def has_datasource_api() -> bool:
    return not missing_datasource_api()


def require_datasource(door: str) -> None:
    """Fail by name when ``door`` (``format("paimon")``, Structured Streaming) needs the Data
    Source API this pyspark lacks."""
    missing = missing_datasource_api()
    if missing:
        raise UnsupportedPysparkError(
            f"{door} is a Python Data Source, which needs pyspark >= 4.1.4: pyspark "
            f"{pyspark.__version__} has no {', '.join(missing)} in pyspark.sql.datasource. "
            f"Use {INSTEAD}."
        )


def error_condition(error: PySparkException) -> str:
    """A Spark error's class (``UNRESOLVED_COLUMN.WITH_SUGGESTION``): ``getCondition`` on
    pyspark 4, where ``getErrorClass`` is deprecated; pyspark 3.5 has only the latter."""
    get = getattr(error, "getCondition", None) or error.getErrorClass
    return str(get() or "")


def check_pyspark() -> None:
    """Fail by name, on import, when the installed pyspark lacks what every Spark door runs on
    (pyspark 3.2 and older), instead of deep in a job."""
    missing = [name for name in NEEDED_DATAFRAME_API if not hasattr(DataFrame, name)]
    if missing:
        raise UnsupportedPysparkError(
            f"paimon_pyspark.spark needs pyspark 3.5.9 or >= 4.1.4 (pip install "
            f"'paimon-pyspark[spark]'): pyspark {pyspark.__version__} has no DataFrame."
            f"{', DataFrame.'.join(missing)}."
        )


check_pyspark()
