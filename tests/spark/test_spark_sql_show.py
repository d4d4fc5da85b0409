"""DESCRIBE and SHOW CREATE TABLE / PARTITIONS / TAGS / COLUMNS / TBLPROPERTIES through the SQL
door: Spark 4's columns and Java's connector's rows, their refusals, and SHOW CREATE TABLE's
output creating an equal table for every table kind."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.errors import (
    PartitionSpecError,
    SqlSyntaxError,
    TableNotExistError,
    UnsupportedOperationError,
    UnsupportedStatementError,
)
from paimon_pyspark.spark import register, sql
from paimon_pyspark.spark.sql_show import create_statement
from paimon_pyspark.spec.table_schema import TableSchema

pytestmark = [pytest.mark.slow, pytest.mark.datasource]


@pytest.fixture(scope="module")
def wh(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = str(tmp_path_factory.mktemp("show"))
    register(spark, warehouse=path)
    sql(spark, "CREATE DATABASE db").collect()
    yield path
    sql(spark, "USE default").collect()


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement).collect()]


def table(wh: str, identifier: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(identifier)


def _write(t: FileStoreTable, data: pa.Table) -> None:
    builder = t.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


@pytest.fixture(scope="module")
def orders(spark: SparkSession, wh: str) -> FileStoreTable:
    """A partitioned primary-key table with three partitions (one NULL) and two tags."""
    sql(
        spark,
        """CREATE TABLE db.orders (
             id BIGINT COMMENT 'order id', amount DECIMAL(10, 2), dt DATE, hh INT)
           USING paimon PARTITIONED BY (dt, hh) COMMENT 'the orders'
           TBLPROPERTIES ('primary-key' = 'dt,hh,id', 'bucket' = '2', 'k1' = 'v1')""",
    ).collect()
    t = table(wh, "db.orders")
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "amount": pa.array([1, 2, 3], pa.decimal128(10, 2)),
            "dt": pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 1), dt.date(2024, 1, 2)]),
            "hh": pa.array([1, 2, 1], pa.int32()),
        },
        schema=t.arrow_schema,
    )
    _write(t, data)
    t.create_tag("v1")
    t.create_tag("a-first")
    return t


def test_describe(spark: SparkSession, orders: FileStoreTable) -> None:
    basic = [
        ("id", "bigint", "order id"),
        ("amount", "decimal(10,2)", None),
        ("dt", "date", None),
        ("hh", "int", None),
        ("# Partition Information", "", ""),
        ("# col_name", "data_type", "comment"),
        ("dt", "date", None),
        ("hh", "int", None),
    ]
    frame = sql(spark, "DESCRIBE db.orders")
    assert frame.columns == ["col_name", "data_type", "comment"]
    assert [tuple(r) for r in frame.collect()] == basic
    assert rows(spark, "DESC TABLE paimon.db.orders") == basic
    assert rows(spark, "DESCRIBE db.orders PARTITION (DT = '2024-01-01', hh = 1)") == basic
    extended = rows(spark, "DESCRIBE EXTENDED db.orders")
    assert extended[: len(basic)] == basic
    rest = extended[len(basic) :]
    assert rest[:7] == [
        ("", "", ""),
        ("# Metadata Columns", "", ""),
        ("__paimon_file_path", "string", ""),
        ("__paimon_row_index", "bigint", ""),
        ("__paimon_partition", "struct<dt:date,hh:int>", ""),
        ("__paimon_bucket", "int", ""),
        ("", "", ""),
    ]
    details = {r[0]: r[1] for r in rest[7:]}
    assert details["# Detailed Table Information"] == ""
    assert (details["Catalog"], details["Database"], details["Table"]) == ("paimon", "db", "orders")
    assert (details["Type"], details["Provider"], details["Comment"]) == (
        "MANAGED",
        "paimon",
        "the orders",
    )
    assert details["Location"] == orders.path
    assert details["Table Properties"] == (
        f"[bucket=2,k1=v1,path={orders.path},primary-key=dt,hh,id]"
    )
    assert rest[-4:] == [
        ("# Column Not Null", "", ""),
        ("id", "bigint", "NOT NULL"),
        ("dt", "date", "NOT NULL"),
        ("hh", "int", "NOT NULL"),
    ]
    assert rows(spark, "DESCRIBE FORMATTED db.orders") == extended


def test_show_partitions_tags_columns_properties(
    spark: SparkSession, orders: FileStoreTable
) -> None:
    frame = sql(spark, "SHOW PARTITIONS db.orders")
    assert frame.columns == ["partition"]
    assert [tuple(r) for r in frame.collect()] == [
        ("dt=2024-01-01/hh=1",),
        ("dt=2024-01-01/hh=2",),
        ("dt=2024-01-02/hh=1",),
    ]
    assert rows(spark, "SHOW PARTITIONS db.orders PARTITION (dt = '2024-01-01')") == [
        ("dt=2024-01-01/hh=1",),
        ("dt=2024-01-01/hh=2",),
    ]
    assert rows(spark, "SHOW PARTITIONS db.orders PARTITION (HH = '01', dt = '2024-01-02')") == [
        ("dt=2024-01-02/hh=1",)
    ]
    assert rows(spark, "SHOW PARTITIONS db.orders PARTITION (hh = 9)") == []

    frame = sql(spark, "SHOW TAGS db.orders")
    assert frame.columns == ["tag"]
    assert [tuple(r) for r in frame.collect()] == [("a-first",), ("v1",)]

    frame = sql(spark, "SHOW COLUMNS FROM db.orders")
    assert frame.columns == ["column"]
    names = [("id",), ("amount",), ("dt",), ("hh",)]
    assert [tuple(r) for r in frame.collect()] == names
    assert rows(spark, "SHOW COLUMNS IN orders IN db") == names
    assert rows(spark, "SHOW COLUMNS IN db.orders FROM db") == names
    assert rows(spark, "SHOW COLUMNS IN db.orders IN other") == names  # Java: the name's own

    frame = sql(spark, "SHOW TBLPROPERTIES db.orders")
    assert frame.columns == ["key", "value"]
    assert [tuple(r) for r in frame.collect()] == [
        ("bucket", "2"),
        ("k1", "v1"),
        ("path", orders.path),
        ("primary-key", "dt,hh,id"),
    ]
    assert rows(spark, "SHOW TBLPROPERTIES db.orders ('primary-key')") == [
        ("primary-key", "dt,hh,id")
    ]
    assert rows(spark, "SHOW TBLPROPERTIES db.orders (nope.key)") == [
        ("nope.key", "Table paimon.db.orders does not have property: nope.key")
    ]


def test_null_and_escaped_partition_values(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE db.events (id INT, p STRING) PARTITIONED BY (p)").collect()
    t = table(wh, "db.events")
    _write(t, pa.table({"id": [1, 2], "p": [None, "a/b"]}, schema=t.arrow_schema))
    assert rows(spark, "SHOW PARTITIONS db.events") == [("p=a%2Fb",), ("p=null",)]
    assert rows(spark, "SHOW PARTITIONS db.events PARTITION (p = 'a/b')") == [("p=a%2Fb",)]
    assert rows(spark, "SHOW TAGS db.events") == []
    sql(
        spark,
        "CREATE TABLE db.typed (id INT, ts TIMESTAMP_NTZ, d DECIMAL(5, 2)) PARTITIONED BY (ts, d)",
    ).collect()
    t = table(wh, "db.typed")
    stamp = dt.datetime(2024, 1, 1, 10, 0, 0, 500000)
    _write(
        t,
        pa.table({"id": [1], "ts": [stamp], "d": [decimal.Decimal("1.50")]}, schema=t.arrow_schema),
    )
    assert rows(spark, "SHOW PARTITIONS db.typed PARTITION (d = '1.5')") == [
        ("ts=2024-01-01 10%3A00%3A00.5/d=1.50",)
    ]


def test_refusals(spark: SparkSession, wh: str, orders: FileStoreTable) -> None:
    sql(spark, "CREATE TABLE db.flat (id INT)").collect()
    for statement in (
        "DESCRIBE db.missing",
        "DESCRIBE EXTENDED nodb.missing",
        "SHOW CREATE TABLE db.missing",
        "SHOW PARTITIONS db.missing",
        "SHOW TAGS db.missing",
        "SHOW COLUMNS FROM db.missing",
        "SHOW TBLPROPERTIES db.missing",
    ):
        with pytest.raises(TableNotExistError, match="db.missing"):
            sql(spark, statement)
    with pytest.raises(UnsupportedOperationError, match=r"`?flat`? is not partitioned"):
        sql(spark, "SHOW PARTITIONS db.flat")
    with pytest.raises(PartitionSpecError, match=r"PARTITION \(nope"):
        sql(spark, "SHOW PARTITIONS db.orders PARTITION (nope = 1)")
    with pytest.raises(PartitionSpecError, match="all the correct partition columns"):
        sql(spark, "DESCRIBE db.orders PARTITION (dt = '2024-01-01')")
    with pytest.raises(UnsupportedStatementError, match="DESCRIBE EXTENDED"):
        sql(spark, "DESCRIBE EXTENDED db.orders PARTITION (dt = '2024-01-01', hh = 1)")
    with pytest.raises(UnsupportedStatementError, match="system table"):
        sql(spark, "DESCRIBE db.`orders$snapshots`")
    with pytest.raises(UnsupportedStatementError, match="AS SERDE"):
        sql(spark, "SHOW CREATE TABLE db.orders AS SERDE")
    with pytest.raises(SqlSyntaxError):
        sql(spark, "SHOW TBLPROPERTIES db.orders ('a', 'b')")


def test_show_create_table_text(spark: SparkSession, orders: FileStoreTable) -> None:
    frame = sql(spark, "SHOW CREATE TABLE db.orders")
    assert frame.columns == ["createtab_stmt"]
    assert [tuple(r) for r in frame.collect()] == [
        (
            "CREATE TABLE paimon.db.orders (\n"
            "  id BIGINT NOT NULL COMMENT 'order id',\n"
            "  amount DECIMAL(10,2),\n"
            "  dt DATE NOT NULL,\n"
            "  hh INT NOT NULL)\n"
            "USING paimon\n"
            "PARTITIONED BY (dt, hh)\n"
            "COMMENT 'the orders'\n"
            "TBLPROPERTIES (\n"
            "  'bucket' = '2',\n"
            "  'k1' = 'v1',\n"
            "  'primary-key' = 'dt,hh,id')\n",
        )
    ]


_KINDS = {
    "append_unaware": "CREATE TABLE t (id INT, v STRING) USING paimon",
    "append_fixed": """CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
        TBLPROPERTIES ('bucket' = '4', 'bucket-key' = 'id')""",
    "pk_fixed": """CREATE TABLE t (id BIGINT, v STRING, dt STRING) PARTITIONED BY (dt)
        TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '2', 'changelog-producer' = 'input')""",
    "pk_dynamic": "CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id')",
    "pk_cross_partition": """CREATE TABLE t (id BIGINT, v STRING, dt STRING) USING paimon
        PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '-1')""",
    "pk_postpone": """CREATE TABLE t (id BIGINT, v STRING)
        TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '-2')""",
    "partial_update": """CREATE TABLE t (k INT, a INT, b INT, g1 INT, c INT, g2 INT)
        TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '1', 'merge-engine' = 'partial-update',
        'fields.g1.sequence-group' = 'a,b', 'fields.g2.sequence-group' = 'c')""",
    "aggregation": """CREATE TABLE t (k INT, total BIGINT, hi INT, names STRING)
        TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '1', 'merge-engine' = 'aggregation',
        'fields.total.aggregate-function' = 'sum', 'fields.hi.aggregate-function' = 'max',
        'fields.names.aggregate-function' = 'listagg', 'fields.names.list-agg-delimiter' = ';',
        'fields.total.ignore-retract' = 'true')""",
    "deletion_vectors": """CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES (
        'primary-key' = 'id', 'bucket' = '1', 'deletion-vectors.enabled' = 'true')""",
    "file_index": """CREATE TABLE t (id BIGINT, v STRING, n INT) TBLPROPERTIES (
        'file-index.bloom-filter.columns' = 'v', 'file-index.bitmap.columns' = 'n')""",
    "nested": """CREATE TABLE t (
        a ARRAY<INT>, b ARRAY<INT NOT NULL>, m MAP<STRING NOT NULL, ARRAY<BIGINT>>,
        s STRUCT<x: INT NOT NULL COMMENT 'inner \\'x\\'', y: ARRAY<STRUCT<z: STRING>>>,
        mm MAP<INT, STRUCT<q: DOUBLE NOT NULL>> NOT NULL) USING paimon""",
    "primitives": """CREATE TABLE t (
        c1 BOOLEAN, c2 TINYINT, c3 SMALLINT, c4 INT, c5 BIGINT, c6 FLOAT, c7 DOUBLE,
        c8 DECIMAL(38, 10), c9 DECIMAL(5, 2), c10 DATE, c11 TIMESTAMP, c12 TIMESTAMP_NTZ,
        c13 TIMESTAMP(3), c14 TIMESTAMP_LTZ(3), c15 BINARY, c16 BINARY(4), c17 VARBINARY(8),
        c18 CHAR(3), c19 VARCHAR(10), c20 STRING, c21 TIMESTAMP(0), c22 TIMESTAMP_LTZ(9))
        USING paimon""",
    "comments_and_odd_names": """CREATE TABLE t (
        `a b` INT NOT NULL COMMENT 'it\\'s a \\\\ path', `x``y` STRING COMMENT '',
        `date` DATE, `1` INT, `order` BIGINT NOT NULL, `ü` STRING)
        USING paimon PARTITIONED BY (`date`)
        COMMENT 'a \\'quoted\\' table'
        TBLPROPERTIES ('primary-key' = 'date,a b', 'bucket' = '1', 'odd \\'key' = 'v\\\\al')""",
    "flink_spelled": """CREATE TABLE t (
        id BIGINT, v BYTES, ts TIMESTAMP, ts3 TIMESTAMP(3) WITH LOCAL TIME ZONE,
        PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket' = '3', 'file.format' = 'orc')""",
}


def _schema_of(t: FileStoreTable) -> dict[str, Any]:
    s: TableSchema = t.table_schema
    return {
        "fields": [f.to_json() for f in s.fields],
        "highest_field_id": s.highest_field_id,
        "partition_keys": s.partition_keys,
        "primary_keys": s.primary_keys,
        "options": s.options,
        "comment": s.comment,
    }


def _round_trip(spark: SparkSession, wh: str, identifier: str) -> str:
    """SHOW CREATE TABLE of ``identifier``, the table dropped and its statement run unchanged:
    the new table equals the old one."""
    before = _schema_of(table(wh, identifier))
    [(text,)] = rows(spark, f"SHOW CREATE TABLE {identifier}")
    sql(spark, f"DROP TABLE {identifier}").collect()
    sql(spark, text).collect()
    after = table(wh, identifier)
    assert _schema_of(after) == before, text
    assert create_statement(identifier, after) == text
    return str(text)


@pytest.fixture(scope="module")
def kinds(spark: SparkSession, wh: str) -> str:
    sql(spark, "CREATE DATABASE kinds").collect()
    return "kinds"


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_show_create_table_round_trips(spark: SparkSession, wh: str, kinds: str, kind: str) -> None:
    sql(spark, _KINDS[kind].replace("TABLE t (", f"TABLE {kinds}.{kind} (", 1)).collect()
    text = _round_trip(spark, wh, f"{kinds}.{kind}")
    assert text.startswith(f"CREATE TABLE paimon.{kinds}.{kind} (\n")


def test_show_create_table_round_trips_a_python_api_table(spark: SparkSession, wh: str) -> None:
    """Arrow's shapes: a non-null list element, a map (keys never null), a nested struct."""
    catalog = CatalogFactory.create({"warehouse": wh})
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("tags", pa.list_(pa.field("item", pa.string(), nullable=False))),
            pa.field("attrs", pa.map_(pa.string(), pa.int32())),
            pa.field(
                "info",
                pa.struct([pa.field("n", pa.int32(), nullable=False), ("w", pa.float64())]),
                metadata={"description": "the info"},
            ),
            pa.field("at", pa.timestamp("ms")),
        ]
    )
    catalog.create_table(
        "db.api_made",
        Schema.from_pyarrow_schema(
            schema,
            primary_keys=["id"],
            options={"bucket": "2"},
            comment="made by the API",
        ),
    )
    text = _round_trip(spark, wh, "db.api_made")
    assert "  tags ARRAY<STRING NOT NULL>,\n" in text
    assert "  at TIMESTAMP(3)" in text
