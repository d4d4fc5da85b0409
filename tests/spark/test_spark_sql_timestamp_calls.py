"""``CALL sys.create_tag_from_timestamp / rollback_to_timestamp / rollback_to_watermark /
create_tag_from_watermark`` through ``paimon_pyspark.spark.sql``: Java's result columns and
both argument spellings (procedures/timestamp_calls.py)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import InvalidArgumentError, SqlError
from paimon_pyspark.spark import register, sql
from paimon_pyspark.store.clock import ManualClock, injected

pytestmark = pytest.mark.slow

SCHEMA = pa.schema([("id", pa.int64())])
T0 = 1_700_000_000_000


def test_timestamp_procedures_by_call(spark: SparkSession, tmp_path: Path) -> None:
    wh = str(tmp_path)
    catalog = CatalogFactory.create({"warehouse": wh})
    catalog.create_database("ts")
    catalog.create_table("ts.t", Schema.from_pyarrow_schema(SCHEMA))
    table = catalog.get_table("ts.t")
    clock = ManualClock(T0)
    with injected(clock):
        for i in range(4):  # snapshot i + 1 at T0 + i * 1000
            builder = table.new_batch_write_builder()
            with builder.new_write() as write:
                write.write_arrow(pa.table({"id": [i]}, schema=SCHEMA))
                builder.new_commit().commit(write.prepare_commit())
            clock.advance(millis=1000)
    register(spark, warehouse=wh)
    sql(spark, "USE ts").collect()

    df = sql(spark, f"CALL sys.create_tag_from_timestamp('ts.t', 'a', {T0 + 1})")
    assert df.columns == ["tagName", "snapshot", "commit_time", "watermark"]
    assert [tuple(r) for r in df.collect()] == [("a", 2, T0 + 1000, "null")]
    df = sql(
        spark,
        "CALL sys.create_tag_from_timestamp(`table` => 't', tag => 'b', "
        f"`timestamp` => {T0 + 2000}, time_retained => '1 d')",
    )
    assert [tuple(r) for r in df.collect()] == [("b", 3, T0 + 2000, "null")]
    assert table.tag_manager.tag_names() == ["a", "b"]

    df = sql(
        spark, f"CALL sys.rollback_to_timestamp(`table` => 'ts.t', `timestamp` => {T0 + 1500})"
    )
    assert df.columns == ["previous_snapshot_id", "current_snapshot_id"]
    assert [tuple(r) for r in df.collect()] == [(4, 2)]
    assert table.tag_manager.tag_names() == ["a"]  # tag b (snapshot 3) went with it
    with pytest.raises(InvalidArgumentError, match="has no watermark"):
        sql(spark, "CALL sys.rollback_to_watermark('ts.t', 10)")
    with pytest.raises(InvalidArgumentError, match="has no watermark"):
        sql(spark, "CALL sys.create_tag_from_watermark('ts.t', 'w', 10)")
    with pytest.raises(SqlError, match="at most 2 arguments"):
        sql(spark, "CALL sys.rollback_to_timestamp('ts.t', 1, 2)")
    sql(spark, "USE default").collect()
