"""MERGE INTO through Java's Spark connector (Paimon 0.9.0 on Spark 3.5): the oracle of
tests/interop/test_merge_into_java.py.

Runs in ``.venv-spark35`` (pyspark 3.5; built by ``make``) with the connector jar
``.cache/java/paimon-spark-3.5-0.9.0.jar``, configured as bench/java_connector_driver.py
configures its session (catalog ``paimon``, Paimon's session extensions). Imports only the
standard library and pyspark. One process runs every case of one command.

Standard input: ``{"cases": [case, ...]}``, a case being ``{"name", "ddl", "columns",
"target", "source_columns", "source", "merge"}``: ``ddl`` creates the target table (``{t}``
stands for its name in the connector's catalog), ``target`` are its first rows (one commit),
``source`` the rows of the temp view ``{s}`` (columns as a Spark DDL schema string), and
``merge`` the statement. The last stdout line is ``{"results": {name: {"rows": [...]}} | {name:
{"error": "..."}}}``; rows are sorted lists of plain JSON values.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[2]
JAR = PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"


def start_spark(warehouse: str) -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon-spark35-merge-oracle")
        .config("spark.jars", os.environ.get("PAIMON_SPARK_JAR") or str(JAR))
        .config("spark.sql.catalog.paimon", "org.apache.paimon.spark.SparkCatalog")
        .config("spark.sql.catalog.paimon.warehouse", warehouse)
        .config(
            "spark.sql.extensions",
            "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
        )
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _sort_key(row: list[Any]) -> str:
    return json.dumps(row)


def run_case(spark: Any, case: dict[str, Any]) -> dict[str, Any]:
    name = str(case["name"])
    table = f"paimon.db.{name}"
    view = f"src_{name}"
    try:
        spark.sql(str(case["ddl"]).format(t=table))
        if case["target"]:
            schema = spark.table(table).schema
            spark.createDataFrame(case["target"], schema).writeTo(table).append()
        spark.createDataFrame(case["source"], str(case["source_columns"])).createOrReplaceTempView(
            view
        )
        spark.sql(str(case["merge"]).format(t=table, s=view))
        rows = [[_plain(v) for v in r] for r in spark.table(table).collect()]
    except Exception as e:  # the oracle's refusal (or a table it cannot read back) is a result
        lines = [x for x in str(e).splitlines() if "Exception" in x] or str(e).splitlines()
        return {"error": (lines or [type(e).__name__])[0].strip()[:500]}
    return {"rows": sorted(rows, key=_sort_key)}


def main() -> int:
    cmd = json.loads(sys.stdin.read())
    with tempfile.TemporaryDirectory(prefix="spark35-merge-") as root:
        spark = start_spark(os.path.join(root, "warehouse"))
        try:
            spark.sql("CREATE DATABASE IF NOT EXISTS paimon.db")
            results = {str(c["name"]): run_case(spark, c) for c in cmd["cases"]}
            version = spark.version
        finally:
            spark.stop()
    print(json.dumps({"spark": version, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
