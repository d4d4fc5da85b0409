"""The Spark doors on a real local[2] SparkSession: format("paimon") and spark.write."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.errors import TableNotExistError
from paimon_pyspark.spark import write

pytestmark = pytest.mark.slow

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
LAYOUTS = {
    "unpartitioned": ([], {}),
    "partitioned": (["dt"], {}),
    "bucketed": (["dt"], {"bucket": "3", "bucket-key": "id"}),
}


def _df(spark: SparkSession, n: int, offset: int = 0) -> DataFrame:
    return spark.range(offset, offset + n, numPartitions=4).selectExpr(
        "id", "concat('name-', id) as name", "concat('2026-11-0', id % 3 + 1) as dt"
    )


def _ours(catalog: FileSystemCatalog, name: str) -> list[tuple[int, str, str]]:
    t = catalog.get_table(name)
    rb = t.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((r["id"], r["name"], r["dt"]) for r in rows)


def _expected(n: int, offset: int = 0) -> list[tuple[int, str, str]]:
    return [(i, f"name-{i}", f"2026-11-0{i % 3 + 1}") for i in range(offset, offset + n)]


def _data_files(path: str) -> list[str]:
    return sorted(
        os.path.join(r, f) for r, _, fs in os.walk(path) for f in fs if f.startswith("data-")
    )


@pytest.mark.datasource
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_format_paimon_writes_one_snapshot_and_reads_back(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, layout: str
) -> None:
    partition_keys, options = LAYOUTS[layout]
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=partition_keys, options=options)
    )
    _df(spark, 1000).write.format("paimon").option("warehouse", warehouse).option(
        "table", "db.t"
    ).mode("append").save()
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.latest_id() == 1
    assert _ours(catalog, "db.t") == _expected(1000)
    back = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t").load()
    assert sorted(tuple(r) for r in back.collect()) == _expected(1000)
    assert not os.path.exists(os.path.join(table.path, ".paimon-staging", "x"))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_spark_write_shuffles_by_bucket_and_commits_once(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, layout: str
) -> None:
    partition_keys, options = LAYOUTS[layout]
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=partition_keys, options=options)
    )
    assert write(_df(spark, 1000), warehouse, "db.t") == [1]
    assert write(_df(spark, 500, 1000), warehouse, "db.t") == [2]
    assert _ours(catalog, "db.t") == _expected(1500)
    table = catalog.get_table("db.t")
    if table.options.bucket > 0:
        # one task per bucket: each bucket of each commit holds exactly one new file
        snapshot = table.snapshot_manager.latest()
        assert snapshot is not None
        delta = table.manifest_io.read_entries(
            table.manifest_io.read_manifest_list(snapshot.delta_manifest_list)
        )
        keys = [(e.partition, e.bucket) for e in delta]
        assert len(keys) == len(set(keys))


@pytest.mark.datasource
def test_save_to_a_table_path_and_create_from_the_dataframe(
    spark: SparkSession, warehouse: str
) -> None:
    path = os.path.join(warehouse, "db2.db", "created")
    _df(spark, 100).write.format("paimon").option("create", "true").option(
        "partition-keys", "dt"
    ).option("bucket", "2").option("bucket-key", "id").mode("append").save(path)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    table = catalog.get_table("db2.created")
    assert table.partition_keys == ["dt"]
    assert table.options.bucket == 2
    assert _ours(catalog, "db2.created") == _expected(100)


def test_writing_a_missing_table_names_it(spark: SparkSession, warehouse: str) -> None:
    with pytest.raises(TableNotExistError, match="'db.nope'"):
        write(_df(spark, 10), warehouse, "db.nope")


@pytest.mark.datasource
def test_filters_and_time_travel_through_spark_read(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    write(_df(spark, 300), warehouse, "db.t")
    write(_df(spark, 300, 300), warehouse, "db.t")
    reader = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    df = reader.load()
    filtered = df.where("dt = '2026-11-01' and id >= 100 and name like 'name-1%'").collect()
    expected = [
        r
        for r in _expected(600)
        if r[2] == "2026-11-01" and r[0] >= 100 and r[1].startswith("name-1")
    ]
    assert sorted(tuple(r) for r in filtered) == expected
    first = reader.option("snapshot-id", "1").load()
    assert first.count() == 300


@pytest.mark.datasource
def test_a_read_schema_selects_columns(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    write(_df(spark, 300), warehouse, "db.t")
    reader = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    df = reader.schema("DT string, id bigint").load()
    assert df.columns == ["DT", "id"]
    rows = sorted((r["id"], r["DT"]) for r in df.collect())
    assert rows == [(i, d) for i, _, d in _expected(300)]
    with pytest.raises(Exception, match="fields \\['nope'\\] that the table does not have"):
        reader.schema("id bigint, nope string").load().collect()


@pytest.mark.datasource
def test_register_lifts_the_arrow_byte_limit_unless_set(spark: SparkSession) -> None:
    assert spark.conf.get("spark.sql.execution.arrow.maxBytesPerBatch") == str(2**31 - 1)


@pytest.mark.datasource
def test_failing_task_leaves_no_snapshot_and_no_files(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    staging = os.path.join(table.path, ".paimon-staging")

    def boom(batches):  # type: ignore[no-untyped-def]
        import time

        for b in batches:
            if 777 in b.column("id").to_pylist():
                # Fail once the other three tasks have recorded their files: a sibling still
                # writing when the job fails is killed by Spark, and a worker killed between
                # writing a file and recording it keeps that file (spark/job.py says so).
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    try:
                        done = [
                            n
                            for j in os.listdir(staging)
                            for n in os.listdir(os.path.join(staging, j))
                            if not n.startswith("_")
                        ]
                    except OSError:  # not created yet, or an ended job's directory going
                        done = []
                    if len(done) >= 3:
                        break
                    time.sleep(0.05)
                raise RuntimeError("task failure injected by the test")
            yield b

    bad = _df(spark, 1000).mapInArrow(boom, _df(spark, 1).schema)
    with pytest.raises(Exception, match="task failure injected"):
        bad.write.format("paimon").option("warehouse", warehouse).option("table", "db.t").mode(
            "append"
        ).save()
    with pytest.raises(Exception, match="task failure injected"):
        write(bad, warehouse, "db.t")
    assert table.snapshot_manager.latest_id() is None
    assert _data_files(table.path) == []


@pytest.mark.datasource
def test_retried_task_commits_each_row_once(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, tmp_path: object
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    marker_dir = str(tmp_path)

    def flaky(batches):  # type: ignore[no-untyped-def]
        from pyspark import TaskContext

        ctx = TaskContext.get()
        yield from batches
        if ctx is not None and ctx.partitionId() == 1 and ctx.attemptNumber() == 0:
            open(os.path.join(marker_dir, "failed-once"), "w").close()
            raise RuntimeError("first attempt fails after writing its rows")

    df = _df(spark, 1000).mapInArrow(flaky, _df(spark, 1).schema)
    df.write.format("paimon").option("warehouse", warehouse).option("table", "db.t").mode(
        "append"
    ).save()
    assert os.path.exists(os.path.join(marker_dir, "failed-once"))
    assert _ours(catalog, "db.t") == _expected(1000)
    table = catalog.get_table("db.t")
    committed = {
        f.file_name
        for e in table.manifest_io.live_entries(table.snapshot_manager.latest())  # type: ignore[arg-type]
        for f in [e.file]
    }
    assert {os.path.basename(p) for p in _data_files(table.path)} == committed


@pytest.mark.datasource
def test_reading_an_empty_table_gives_no_rows(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    catalog.create_table("db.empty", Schema.from_pyarrow_schema(SCHEMA))
    df = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.empty")
    loaded = df.load()
    assert loaded.columns == ["id", "name", "dt"]
    assert loaded.count() == 0


@pytest.mark.datasource
def test_a_filtered_query_does_not_leak_into_the_next_one(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """pyspark 4.3 reuses a reader configured by pushFilters for a later unfiltered query."""
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    write(_df(spark, 20), warehouse, "db.t")
    df = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t").load()
    assert df.where("id < 5").count() == 5
    assert df.count() == 20
    assert df.where("id >= 15").count() == 5
    assert df.count() == 20
