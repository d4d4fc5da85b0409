"""What differs between pyspark releases, looked up by feature: the Data Source API the
``paimon`` source is made of is checked once, when ``paimon_pyspark.spark`` is imported."""

from __future__ import annotations

import importlib

import pyspark

from paimon_pyspark.errors import UnsupportedPysparkError

NEEDED_DATASOURCE_API = (
    "DataSource",
    "DataSourceArrowWriter",  # format("paimon") writes (4.0)
    "DataSourceStreamArrowWriter",  # the Structured Streaming sink (4.1)
)


def check_pyspark() -> None:
    """Fail by name, on import, when the installed pyspark lacks the Data Source API the
    ``paimon`` source is made of (pyspark 4.0 and older), instead of deep in an import.

    The features are looked up, not the version number; what differs between supported
    releases (``SupportsTriggerAvailableNow``, 4.2) is looked up where it is used."""
    try:
        api = importlib.import_module("pyspark.sql.datasource")
    except ImportError:
        api = None
    missing = [name for name in NEEDED_DATASOURCE_API if not hasattr(api, name)]
    if missing:
        raise UnsupportedPysparkError(
            f"paimon_pyspark.spark needs pyspark >= 4.1.4 (pip install 'paimon-pyspark[spark]'): "
            f"pyspark {pyspark.__version__} has no {', '.join(missing)} in "
            "pyspark.sql.datasource."
        )


check_pyspark()
