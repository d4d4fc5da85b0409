"""Statements through Java's Spark connector (Paimon 0.9.0 on Spark 3.5): the oracle of
tests/interop/test_show_create_java.py.

Runs in ``.venv-spark35`` (pyspark 3.5) with ``.cache/java/paimon-spark-3.5-0.9.0.jar`` as
catalog ``paimon`` (Paimon's session extensions on), as tests/interop/spark35_merge_driver.py
configures it. Imports only the standard library and pyspark.

Standard input: ``{"warehouse": "/path", "statements": ["...", ...]}``, run in order after
``USE paimon``. The last stdout line is ``{"results": [{"columns": [...], "rows": [[...]]} |
{"error": "..."}, ...]}``, one per statement; values are strings or null.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[2]
JAR = PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"


def main() -> None:
    from pyspark.sql import SparkSession

    command = json.loads(sys.stdin.read())
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("paimon-spark35-show-oracle")
        .config("spark.jars", str(JAR))
        .config("spark.sql.catalog.paimon", "org.apache.paimon.spark.SparkCatalog")
        .config("spark.sql.catalog.paimon.warehouse", command["warehouse"])
        .config(
            "spark.sql.extensions",
            "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
        )
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("USE paimon")
    results: list[dict[str, Any]] = []
    for statement in command["statements"]:
        try:
            frame = spark.sql(statement)
            rows = [[None if v is None else str(v) for v in r] for r in frame.collect()]
            results.append({"columns": frame.columns, "rows": rows})
        except Exception as e:  # the error is the answer
            results.append({"error": f"{type(e).__name__}: {str(e)[:500]}"})
    spark.stop()
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
