"""Cross-partition upsert tables (bucket = -1, primary key without every partition key) from
Spark: ``spark.write`` bootstraps the key index on the executors, routes keys by hash to
several assigner tasks and writes by (partition, bucket); the result must be the core write's
and a plain-Python model's, with every key in exactly one (partition, bucket)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.spark import write
from paimon_pyspark.store.bucket_mode import BucketMode

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
Triple = tuple[int, int | None, int]


def make(catalog: FileSystemCatalog, name: str, **options: str) -> FileStoreTable:
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": "3", **options}
    catalog.create_table(
        f"db.{name}",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["pt"], primary_keys=["pk"], options=opts
        ),
    )
    table = catalog.get_table(f"db.{name}")
    assert table.bucket_mode == BucketMode.KEY_DYNAMIC
    return table


def frame(spark: SparkSession, rows: list[Triple], tasks: int = 3) -> DataFrame:
    df = spark.createDataFrame(rows, "pk int, v int, pt int")
    return df.repartition(tasks)


def arrow(rows: list[Triple]) -> pa.Table:
    return pa.Table.from_pylist([dict(pk=a, v=b, pt=c) for a, b, c in rows], schema=SCHEMA)


def write_commit(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        builder.new_commit().commit(w.prepare_commit())


def read_all(table: FileStoreTable) -> pa.Table:
    rb = table.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def triples(table: FileStoreTable) -> list[Triple]:
    return sorted((r["pk"], r["v"], r["pt"]) for r in read_all(table).to_pylist())


def places(table: FileStoreTable) -> dict[int, set[tuple[int, int]]]:
    """pk -> the (pt, bucket)s holding a live row of it."""
    out: dict[int, set[tuple[int, int]]] = {}
    rb = table.new_read_builder()
    read = rb.new_read()
    for split in rb.new_scan().plan().splits():
        for r in read.to_arrow([split]).to_pylist():
            out.setdefault(r["pk"], set()).add((r["pt"], split.bucket))
    return out


def assert_one_place_per_key(table: FileStoreTable) -> None:
    spread = {k: p for k, p in places(table).items() if len(p) != 1}
    assert not spread, f"keys in several (partition, bucket)s: {spread}"


def test_seed_scenario_moves_the_key_to_its_new_partition(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    t = make(catalog, "t")
    write(frame(spark, [(1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1)]), warehouse, "db.t")
    write(frame(spark, [(1, 11, 2)]), warehouse, "db.t")
    assert triples(t) == [(1, 11, 2), (2, 20, 1), (3, 30, 1), (4, 40, 1)]
    assert places(t)[1] == {(2, 0)}
    assert_one_place_per_key(t)


def test_random_moves_match_a_model_and_the_core_write(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """Several writes, each moving keys across 4 partitions (and repeating keys in a write),
    through 3 input tasks and 3 assigners: the table must equal a dict model and the same
    writes made by the core API, and keys must never be in two places."""
    ours = make(catalog, "spark", **{"dynamic-bucket.assigner-parallelism": "3"})
    core = make(catalog, "core")
    rnd = random.Random(7)
    model: dict[int, tuple[int, int]] = {}
    for round_ in range(4):
        rows: list[Triple] = []
        for _ in range(60):
            k = rnd.randrange(40)
            rows.append((k, round_ * 1000 + len(rows), rnd.randrange(4)))
        # a key repeated in one write keeps its last row: keep one row per key so the result
        # does not depend on Spark's arrival order across input tasks
        last = {k: (k, v, p) for k, v, p in rows}
        batch = list(last.values())
        for k, v, p in batch:
            model[k] = (v, p)
        write(frame(spark, batch), warehouse, "db.spark")
        write_commit(core, arrow(batch))
    expected = sorted((k, v, p) for k, (v, p) in model.items())
    assert triples(ours) == expected
    assert triples(core) == expected
    assert_one_place_per_key(ours)
    # target 3 keys per bucket: the partitions hold several buckets, opened by 3 assigners
    assert len({b for ps in places(ours).values() for _, b in ps}) > 3


def test_first_row_keeps_the_old_row_and_partial_update_stays_in_the_old_partition(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    first = make(catalog, "first", **{"merge-engine": "first-row"})
    partial = make(catalog, "partial", **{"merge-engine": "partial-update"})
    for name in ("first", "partial"):
        write(frame(spark, [(1, 10, 1), (2, 20, 1), (3, 30, 1)]), warehouse, f"db.{name}")
        write(frame(spark, [(1, 11, 2), (2, None, 3), (6, 60, 3)]), warehouse, f"db.{name}")
    # first-row: rows of keys living elsewhere are dropped, new keys are written
    assert triples(first) == [(1, 10, 1), (2, 20, 1), (3, 30, 1), (6, 60, 3)]
    # partial-update: the rows go to the key's old partition; a null keeps the old value
    assert triples(partial) == [(1, 11, 1), (2, 20, 1), (3, 30, 1), (6, 60, 3)]
    assert_one_place_per_key(first)
    assert_one_place_per_key(partial)


def test_deduplicate_key_leaving_and_returning_in_one_write_ends_in_one_place(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """One input task keeps the arrival order, so key 2 leaves partition 1 and comes back."""
    t = make(catalog, "t")
    write(frame(spark, [(1, 10, 1), (2, 20, 1)], tasks=1), warehouse, "db.t")
    df = spark.createDataFrame(
        [(2, 21, 2), (2, 22, 1), (7, 70, 3), (7, 71, 2)], "pk int, v int, pt int"
    )
    write(df.coalesce(1), warehouse, "db.t")
    assert triples(t) == [(1, 10, 1), (2, 22, 1), (7, 71, 2)]
    assert_one_place_per_key(t)


@pytest.mark.datasource
def test_format_paimon_refuses_cross_partition_tables_naming_the_table(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    make(catalog, "t")
    df = frame(spark, [(1, 10, 1)])
    refused = r"db\.t.*KEY_DYNAMIC, cross-partition upsert.*paimon_pyspark\.spark\.write"
    with pytest.raises(Exception, match=refused):
        df.write.format("paimon").option("warehouse", warehouse).option("table", "db.t").mode(
            "append"
        ).save()


def test_overwrite_of_a_cross_partition_table_as_the_core_write_and_java(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """Java's rows (tests/interop/test_compact_bucket_modes_java.py): pk 1 moving from pt=1
    leaves a -D there, so the dynamic overwrite replaces pt=1 too, and pk 2 goes with it."""
    before: list[Triple] = [(1, 10, 1), (2, 20, 1), (3, 30, 2), (5, 50, 4)]
    new: list[Triple] = [(1, 11, 2), (4, 40, 3)]
    here, there = make(catalog, "here"), make(catalog, "there")
    write_commit(here, arrow(before))
    write_commit(there, arrow(before))
    builder = here.new_batch_write_builder().overwrite()
    with builder.new_write() as w:
        w.write_arrow(arrow(new))
        builder.new_commit().commit(w.prepare_commit())

    write(frame(spark, new), warehouse, "db.there", mode="overwrite")

    expected: list[Triple] = [(1, 11, 2), (4, 40, 3), (5, 50, 4)]
    assert triples(catalog.get_table("db.here")) == expected
    assert triples(catalog.get_table("db.there")) == expected
    assert catalog.get_table("db.there").snapshot_manager.latest().commit_kind == "OVERWRITE"
