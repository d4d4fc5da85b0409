"""``paimon_pyspark.spark.read``'s own read of the splits Spark's Parquet reader cannot read: a
``mapInArrow`` job over a frame of versioned payloads (spark/read.py ``payload_read``), planned
by the code behind ``format("paimon")`` (spark/relation.py), with no Data Source in the plan."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.spark import read, sql
from paimon_pyspark.spark.relation import Relation, RelationRead, decode_rows, payload_task

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("dt", pa.string())]
)


def _pk_table(catalog: FileSystemCatalog) -> list[tuple[int, str]]:
    """Two overlapping commits to a two-bucket table: every bucket's split needs a merge."""
    catalog.create_table(
        "db.pk", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    )
    table = catalog.get_table("db.pk")
    for version, ids in ((0, range(0, 40)), (1, range(20, 60))):
        data = pa.table(
            {"id": list(ids), "v": [f"v{i}_{version}" for i in ids], "dt": ["d"] * len(ids)},
            schema=SCHEMA,
        )
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(data)
            builder.new_commit().commit(write.prepare_commit())
    return [(i, f"v{i}_{0 if i < 20 else 1}") for i in range(60)]


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def test_merged_splits_read_as_a_map_in_arrow_job_not_a_data_source(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    expected = _pk_table(catalog)
    for options in ({}, {"native-read": "false"}):
        df = read(spark, warehouse, "db.pk", columns=["id", "v"], options=options)
        plan = _plan(df)
        assert "MapInArrow" in plan and "BatchScan" not in plan, (options, plan)
        assert sorted(tuple(r) for r in df.collect()) == expected, options
    got = sql(spark, "SELECT v FROM paimon.db.pk WHERE id = 25", warehouse=warehouse)
    assert "BatchScan" not in _plan(got) and [r[0] for r in got.collect()] == ["v25_1"]
    empty = read(spark, warehouse, "db.pk", where="dt = 'none'", options={"native-read": "false"})
    assert empty.collect() == []


def test_tasks_get_versioned_payloads_and_no_warehouse_object(
    catalog: FileSystemCatalog, warehouse: str
) -> None:
    _pk_table(catalog)
    relation = Relation({"warehouse": warehouse, "table": "db.pk", "parallelism": "2"})
    reader = relation.read_for(relation.schema(), RelationRead)
    payloads = reader.plan()
    assert payloads and all(p[:4] == b"PPdl" for p in payloads)  # read/split_codec.py
    shipped = pickle.dumps(reader)
    assert b"FileStoreTable" not in shipped and b"DataSplit" not in shipped
    task = payload_task(reader)
    rows = [r for p in payloads for b in task(iter(_groups([p]))) for r in b.to_pylist()]
    assert sorted(r["id"] for r in rows) == list(range(60))

    system = Relation({"warehouse": warehouse, "table": "db.pk$snapshots"})
    (rows_payload,) = system.read_for(system.schema(), RelationRead).plan()
    assert rows_payload[:4] == b"PPsy" and decode_rows(rows_payload).num_rows == 2


def _groups(payloads: list[bytes]) -> list[pa.RecordBatch]:
    """A task's input as spark/read.py lays it out (spark/relation.py ``PAYLOADS``)."""
    return [pa.RecordBatch.from_pydict({"task": list(range(len(payloads))), "payload": payloads})]
