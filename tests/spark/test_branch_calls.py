"""The branch procedures through ``CALL`` in the SQL door (procedures/branch_calls.py): Java's
result row, positional and named arguments (Spark's and Flink's take the same, in the same
order), ``$branches`` and a typed error through the door."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory
from paimon_pyspark.errors import BranchNotExistError
from paimon_pyspark.spark import register, sql

pytestmark = pytest.mark.slow


def test_branch_procedures_through_call(spark: SparkSession, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    register(spark, warehouse=wh)
    catalog = CatalogFactory.create({"warehouse": wh})
    catalog.create_database("brc")
    try:
        sql(spark, "CREATE TABLE brc.t (id INT, v STRING)").collect()
        sql(spark, "INSERT INTO brc.t VALUES (1, 'a')").collect()
        sql(spark, "CALL sys.create_tag('brc.t', 'v1')").collect()
        result = sql(spark, "CALL sys.create_branch('brc.t', 'b', 'v1')")
        assert result.columns == ["result"] and [tuple(r) for r in result.collect()] == [(True,)]
        sql(spark, "CALL sys.create_branch(`table` => 'brc.t', branch => 'e')").collect()
        sql(spark, "CALL sys.create_branch('brc.t', 'e', '', 'true')").collect()
        assert catalog.list_branches("brc.t") == ["b", "e"]
        branch = catalog.get_table("brc.t$branch_b")
        builder = branch.new_batch_write_builder()
        with builder.new_write() as w:
            w.write_arrow(pa.table({"id": pa.array([2], pa.int32()), "v": ["b"]}))
            messages = w.prepare_commit()
        builder.new_commit().commit(messages)
        sql(spark, "CALL sys.fast_forward(`table` => 'brc.t', branch => 'b')").collect()
        ids = sorted(r[0] for r in sql(spark, "SELECT id FROM brc.t").collect())
        assert ids == [1, 2]
        sql(spark, "CALL sys.rename_branch('brc.t', 'e', 'e2')").collect()
        listed = sql(spark, "SELECT branch_name FROM brc.`t$branches`").collect()
        assert sorted(r[0] for r in listed) == ["b", "e2"]
        sql(spark, "CALL sys.delete_branch('brc.t', 'b,e2')").collect()
        assert catalog.list_branches("brc.t") == []
        with pytest.raises(BranchNotExistError):
            sql(spark, "CALL sys.delete_branch('brc.t', 'b')").collect()
    finally:
        sql(spark, "USE default").collect()
