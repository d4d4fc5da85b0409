"""Spark's option("table", ...) reaches the catalog's name checks before anything is created
(issue 14): a name pointing outside the warehouse fails the write, and nothing appears there."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark.errors import IdentifierError
from paimon_pyspark.spark import write

pytestmark = [pytest.mark.slow, pytest.mark.datasource]


def test_table_option_cannot_escape_the_warehouse(spark: SparkSession, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "sentinel.txt").write_text("keep me")
    df = spark.range(3).selectExpr("id", "cast(id as string) as name")
    escape = f"db.{outside}/t"
    with pytest.raises(Exception, match="IdentifierError"):
        df.write.format("paimon").option("warehouse", str(warehouse)).option(
            "table", escape
        ).option("create", "true").mode("append").save()
    with pytest.raises(Exception, match="IdentifierError"):
        spark.read.format("paimon").option("warehouse", str(warehouse)).option(
            "table", "db.../outside/t"
        ).load().collect()
    for name in [escape, "db.../outside/t", "../outside.t", "db.t$branch_b", "sys.t"]:
        with pytest.raises(IdentifierError):
            write(df, str(warehouse), name, options={"create": "true"})
    assert sorted(p.name for p in outside.iterdir()) == ["sentinel.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside"]
