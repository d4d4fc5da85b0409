"""``paimon_incremental_query`` and ``paimon_incremental_between_timestamp`` through
``paimon_pyspark.spark.sql`` return the rows Java 1.4.2's incremental read of the same bounds
returns (the options Java's table functions set), on an append and a primary-key table
(the history of tests/interop/test_incremental_java.py: deletes, a compaction, an overwrite,
tags)."""

from __future__ import annotations

from pathlib import Path

import pytest
from incremental_oracle import read_incremental, sorted_rows
from java_oracle import JavaOracle
from pyspark.sql import SparkSession
from test_incremental_java import FIELDS, history, option_sets

from paimon_pyspark.spark import sql

pytestmark = [pytest.mark.java, pytest.mark.slow]

_FUNCTIONS = {
    "incremental-between": "paimon_incremental_query",
    "incremental-between-timestamp": "paimon_incremental_between_timestamp",
}
_BOUNDS = {"1,3", "3,7", "t1,t7", "t2,t5"}


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_table_functions_read_what_java_reads(
    spark: SparkSession, java_oracle: JavaOracle, tmp_path: Path, primary_key: bool
) -> None:
    table = history(tmp_path, "t", primary_key)
    cases = [
        o
        for o in option_sets(table)
        if len(o) == 1
        and ("incremental-between-timestamp" in o or o.get("incremental-between") in _BOUNDS)
    ]
    assert len(cases) >= 8
    for options in cases:
        ((key, bounds),) = options.items()
        start, end = bounds.split(",")
        statement = f"SELECT * FROM {_FUNCTIONS[key]}('db.t', '{start}', '{end}')"
        rows = sql(spark, statement, warehouse=str(tmp_path)).collect()
        ours = sorted_rows([r.asDict() for r in rows], FIELDS)
        java = read_incremental(java_oracle, tmp_path, "db", "t", options)
        assert java.error is None, (options, java.error)
        assert ours == java.added(), statement
