"""Spark jobs on an S3 warehouse (moto's S3 server on 127.0.0.1): a million rows through both
write doors (``df.write.format("paimon")`` and ``paimon_pyspark.spark.write``) into an append and
a primary-key table, read back by Spark and by our own reader; and a job that fails mid-way
leaves no object (and no open multipart upload) in the bucket."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from tests.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.spark import write

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

ROWS = 1_000_000
TABLES = {"append": {}, "primary-key": {"primary-keys": "id", "bucket": "3"}}
"""Three buckets: spark.write's shuffle by bucket spreads them over two of four write tasks."""
DOORS = ["format", "write"]
COALESCE = "spark.sql.adaptive.coalescePartitions.enabled"
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("v", pa.string(), nullable=False),
        pa.field("k", pa.int32()),
    ]
)


def _df(spark: SparkSession, n: int, offset: int = 0, partitions: int = 4) -> DataFrame:
    return spark.range(offset, offset + n, numPartitions=partitions).selectExpr(
        "id", "concat('v-', id) as v", "cast(id % 7 as int) as k"
    )


def _write(door: str, df: DataFrame, warehouse: str, s3: S3Server, options: dict[str, str]) -> None:
    opts = {**s3.options(), **options}
    if door == "format":
        df.write.format("paimon").option("warehouse", warehouse).option("table", "db.t").options(
            **opts
        ).mode("append").save()
    else:
        write(df, warehouse, "db.t", options=opts)


def _spark_checksum(spark: SparkSession, warehouse: str, s3: S3Server) -> tuple[int, ...]:
    """(rows, sum of ids, distinct ids, rows whose v is not 'v-<id>') as Spark reads them."""
    reader = spark.read.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    df = reader.options(**s3.options()).load()
    bad = F.when(F.col("v") != F.concat(F.lit("v-"), F.col("id").cast("string")), 1).otherwise(0)
    row = df.agg(F.count("*"), F.sum("id"), F.countDistinct("id"), F.sum(bad)).collect()[0]
    return tuple(int(x or 0) for x in row)


def _our_checksum(warehouse: str, s3: S3Server) -> tuple[int, ...]:
    """The same checksum through our own reader."""
    table = CatalogFactory.create({"warehouse": warehouse, **s3.options()}).get_table("db.t")
    rb = table.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    ids = data.column("id")
    expected_v = pc.binary_join_element_wise("v-", pc.cast(ids, pa.string()), "")
    bad = pc.sum(pc.cast(pc.not_equal(data.column("v"), expected_v), pa.int64())).as_py()
    return (data.num_rows, pc.sum(ids).as_py() or 0, pc.count_distinct(ids).as_py(), bad or 0)


def _expected(n: int, offset: int = 0) -> tuple[int, ...]:
    return (n, sum(range(offset, offset + n)), n, 0)


def _leftovers(s3: S3Server, bucket: str) -> list[str]:
    return [k for k in s3.list_keys(bucket) if "/.paimon-staging/" in k]


@pytest.mark.parametrize("kind", list(TABLES))
@pytest.mark.parametrize("door", DOORS)
def test_a_million_rows_through_each_door_read_back_by_spark_and_by_us(
    spark: SparkSession, s3_server: S3Server, s3_bucket: str, door: str, kind: str
) -> None:
    warehouse = f"s3://{s3_bucket}/wh"
    _write(door, _df(spark, ROWS), warehouse, s3_server, {"create": "true", **TABLES[kind]})

    table = CatalogFactory.create({"warehouse": warehouse, **s3_server.options()}).get_table("db.t")
    assert table.primary_keys == (["id"] if kind == "primary-key" else [])
    assert not [k for k in table.store.table_schema.options if k.startswith("s3.")]  # no secrets
    assert table.snapshot_manager.latest_id() == 1
    assert _spark_checksum(spark, warehouse, s3_server) == _expected(ROWS)
    assert _our_checksum(warehouse, s3_server) == _expected(ROWS)
    assert any(k.endswith(".parquet") for k in s3_server.list_keys(s3_bucket, "wh/db.db/t/"))
    assert _leftovers(s3_server, s3_bucket) == []
    assert s3_server.open_uploads(s3_bucket) == []


def _fail_after_the_others(
    s3: S3Server, bucket: str, others: int
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A pass-through UDF whose partition 0 passes half its rows on, then waits until the
    ``others`` other tasks saved their staging records (in the bucket), then fails, in every
    attempt: the job fails mid-way, with every other task's files written, and no attempt
    still running when Spark gives up."""
    endpoint = s3.endpoint
    prefix = "wh/db.db/t/.paimon-staging/"

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import boto3
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is None or context.partitionId() != 0:
            yield from batches
            return
        got = list(batches)
        yield from got[: len(got) // 2]
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )
        deadline = time.time() + 300
        while time.time() < deadline:
            listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
            if sum(not o["Key"].endswith("/_OPEN") for o in listed) >= others:
                raise RuntimeError("task failure injected by the test")
            time.sleep(0.2)
        raise RuntimeError("the other tasks never saved their records")

    return run


def _nulls_in_one_task(df: DataFrame) -> DataFrame:
    """``df`` with a null ``v`` in one row: the write task that gets it fails on the NOT NULL
    column, in every attempt, after the rows before it went into its writer."""
    return df.selectExpr("id", "if(id = 31337, null, v) as v", "k")


@pytest.mark.parametrize("kind", list(TABLES))
@pytest.mark.parametrize("door", DOORS)
def test_a_job_failing_mid_way_leaves_no_object_in_the_bucket(
    spark: SparkSession,
    s3_server: S3Server,
    s3_bucket: str,
    s3_catalog: FileSystemCatalog,
    door: str,
    kind: str,
) -> None:
    options = TABLES[kind]
    pk = [options["primary-keys"]] if "primary-keys" in options else []
    table_options = {k: v for k, v in options.items() if k != "primary-keys"}
    s3_catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=pk, options=table_options)
    )
    warehouse = s3_catalog.uri
    _write(door, _df(spark, 1000), warehouse, s3_server, {})
    before = s3_server.list_keys(s3_bucket)

    df = _df(spark, 40_000, offset=10_000)
    if door == "write" and pk:
        # the write tasks sit behind the bucket shuffle: fail one on the data, not in a UDF,
        # and keep all shuffle partitions so that other write tasks save records
        bad = _nulls_in_one_task(df)
        match = "NOT NULL"
        spark.conf.set(COALESCE, "false")
    else:
        fail = _fail_after_the_others(s3_server, s3_bucket, others=3)
        bad = df.mapInArrow(fail, df.schema)
        match = "task failure injected"
    try:
        with pytest.raises(Exception, match=match):
            _write(door, bad, warehouse, s3_server, {})
    finally:
        spark.conf.unset(COALESCE)

    assert _settled_keys(s3_server, s3_bucket, before) == before
    assert s3_server.open_uploads(s3_bucket) == []
    assert _our_checksum(warehouse, s3_server) == _expected(1000)


def _settled_keys(s3: S3Server, bucket: str, expected: list[str]) -> list[str]:
    """The bucket's keys once they equal ``expected``, or after a minute: an attempt Spark
    killed when the job failed may still be finishing, and removes its own files."""
    deadline = time.time() + 60
    keys = s3.list_keys(bucket)
    while keys != expected and time.time() < deadline:
        time.sleep(0.5)
        keys = s3.list_keys(bucket)
    return keys
