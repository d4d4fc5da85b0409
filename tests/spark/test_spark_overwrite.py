"""Overwrite from Spark: ``format("paimon").mode("overwrite")`` (dynamic partition overwrite),
``option("overwrite-partition", "dt=...")`` (static) and ``spark.write(mode="overwrite")``
(SQL ``INSERT OVERWRITE`` is in test_spark_sql.py). Rows are compared with a plain-Python model.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.spark import write

pytestmark = pytest.mark.slow

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
Row = tuple[int, str, str]


def _rows(ids: Iterable[int], tag: str = "name") -> list[Row]:
    return [(i, f"{tag}-{i}", f"2026-11-0{i % 3 + 1}") for i in ids]


def _df(spark: SparkSession, rows: list[Row]) -> DataFrame:
    return spark.createDataFrame(rows, "id BIGINT, name STRING, dt STRING").repartition(3)


def _ours(table: FileStoreTable) -> list[Row]:
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((r["id"], r["name"], r["dt"]) for r in rows)


def _replace(model: list[Row], new: list[Row], partitions: set[str] | None) -> list[Row]:
    """Model of an overwrite: ``partitions`` None replaces the whole table."""
    kept = [r for r in model if partitions is not None and r[2] not in partitions]
    return sorted(kept + new)


def _create(catalog: FileSystemCatalog, partitioned: bool = True, **options: str) -> FileStoreTable:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"] if partitioned else [], options=options
        ),
    )
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(
            pa.Table.from_pylist(
                [dict(zip(SCHEMA.names, r, strict=True)) for r in _rows(range(30))], schema=SCHEMA
            )
        )
        builder.new_commit().commit(w.prepare_commit())
    return table


def _data_files(path: str) -> set[str]:
    return {os.path.join(r, f) for r, _, fs in os.walk(path) for f in fs if f.startswith("data-")}


@pytest.mark.datasource
def test_format_paimon_overwrite_dynamic_static_and_empty_static(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = _create(catalog, bucket="2", **{"bucket-key": "id"})
    model = _rows(range(30))

    def save(rows: list[Row], **options: str) -> None:
        writer = _df(spark, rows).write.format("paimon").option("warehouse", warehouse)
        for k, v in options.items():
            writer = writer.option(k, v)
        writer.option("table", "db.t").mode("overwrite").save()

    new = _rows([100, 103], "dyn")  # both in 2026-11-02
    save(new)
    model = _replace(model, new, {"2026-11-02"})
    assert _ours(table) == model
    assert table.snapshot_manager.latest().commit_kind == "OVERWRITE"  # type: ignore[union-attr]

    new = _rows([200], "static")  # 2026-11-03
    save(new, **{"overwrite-partition": "dt=2026-11-03"})
    model = _replace(model, new, {"2026-11-03"})
    assert _ours(table) == model

    # an empty DataFrame still empties a static partition
    empty = spark.createDataFrame([], "id BIGINT, name STRING, dt STRING")
    empty.write.format("paimon").option("warehouse", warehouse).option("table", "db.t").option(
        "overwrite-partition", "DT=2026-11-01"
    ).mode("overwrite").save()
    model = _replace(model, [], {"2026-11-01"})
    assert _ours(table) == model

    # rows outside the static partition: nothing committed, the job's files removed
    before = (table.snapshot_manager.latest_id(), _data_files(table.path))
    with pytest.raises(Exception, match="trying to overwrite partition dt='2026-11-01'"):
        save(_rows([7, 8]), **{"overwrite-partition": "dt=2026-11-01"})
    assert (table.snapshot_manager.latest_id(), _data_files(table.path)) == before
    # a wrong partition value type names the key and the value
    with pytest.raises(Exception, match=r"key 'nope' \(value '1'\) is not a partition key"):
        save(new, **{"overwrite-partition": "nope=1"})
    assert _ours(table) == model


def test_spark_write_overwrite_primary_key_and_whole_table(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table(
        "db.pk",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "2"}
        ),
    )
    pk = catalog.get_table("db.pk")
    model = _rows(range(30))
    write(_df(spark, model), warehouse, "db.pk")

    new = _rows([1, 4, 40], "dyn")  # only 2026-11-02 is touched
    write(_df(spark, new), warehouse, "db.pk", mode="overwrite")
    model = _replace(model, new, {"2026-11-02"})
    assert _ours(pk) == model

    new = _rows([2], "static")
    write(
        _df(spark, new),
        warehouse,
        "db.pk",
        mode="overwrite",
        options={"overwrite-partition": {"dt": "2026-11-03"}},
    )
    model = _replace(model, new, {"2026-11-03"})
    assert _ours(pk) == model

    new = _rows([0, 1, 2], "all")
    write(
        _df(spark, new),
        warehouse,
        "db.pk",
        mode="overwrite",
        options={"dynamic-partition-overwrite": "false"},
    )
    assert _ours(pk) == sorted(new)

    table = _create(catalog, partitioned=False)  # unpartitioned: replaced whole
    new = _rows([500, 501], "flat")
    write(_df(spark, new), warehouse, "db.t", mode="overwrite")
    assert _ours(table) == sorted(new)
