"""``write.merge-schema`` through every Spark door (spark/merge_schema.py): a write adds
columns and widens types, a narrowing needs ``write.merge-schema.explicit-cast``, the schema
change is committed before the write's one snapshot (which is written with it), and the SQL
door's ``INSERT ... BY NAME`` resolves as Java's PaimonAnalysis does. Java reading such a
table: tests/interop/test_schema_merge_java.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.errors import SchemaChangeError, SqlError
from paimon_pyspark.spark import sql, write


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("merge_schema"))


def table(wh: str, name: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(f"default.{name}")


def shape(t: FileStoreTable) -> dict[str, str]:
    return {f.name: str(f.type) for f in t.fields}


def state(t: FileStoreTable) -> tuple[list[int], int | None]:
    """The schema ids and the latest snapshot id."""
    return t.schema_manager.list_ids(), t.snapshot_manager.latest_id()


def rows(spark: SparkSession, wh: str, name: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in sql(spark, f"SELECT * FROM {name}", warehouse=wh).collect())


def test_spark_write_door(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE w (id INT NOT NULL, v STRING)", warehouse=wh)
    sql(spark, "INSERT INTO w VALUES (1, 'a')", warehouse=wh)
    df = spark.createDataFrame([(2, "b", 2.5)], "id BIGINT, v STRING, n DOUBLE")
    write(df, wh, "default.w", options={"write.merge-schema": "true"})
    t = table(wh, "w")
    assert shape(t) == {"id": "BIGINT NOT NULL", "v": "STRING", "n": "DOUBLE"}
    assert state(t) == ([0, 1], 2)  # one schema change, one snapshot, written with it
    snapshot = t.snapshot_manager.latest()
    assert snapshot is not None and snapshot.schema_id == 1
    assert "write.merge-schema" not in t.options.options

    narrower = spark.createDataFrame([("c", 3)], "v STRING, id INT")
    with pytest.raises(SchemaChangeError) as info:
        write(narrower, wh, "default.w", options={"write.merge-schema": "true"})
    assert "Failed to merge data types BIGINT and INT" in str(info.value)
    assert "'default.w'" in str(info.value) and "field 'id'" in str(info.value)
    assert state(table(wh, "w")) == ([0, 1], 2)  # refused before anything is written

    opts = {"write.merge-schema": "true", "write.merge-schema.explicit-cast": "true"}
    write(narrower, wh, "default.w", options=opts)
    assert shape(table(wh, "w"))["id"] == "INT NOT NULL"
    assert rows(spark, wh, "w") == [(1, "a", None), (2, "b", 2.5), (3, "c", None)]


@pytest.mark.datasource
def test_data_source_door(spark: SparkSession, wh: str) -> None:
    sql(
        spark,
        "CREATE TABLE d (id INT NOT NULL, v STRING) TBLPROPERTIES ('primary-key' = 'id', "
        "'bucket' = '1')",
        warehouse=wh,
    )

    def save(df: Any, **options: str) -> None:
        w = df.write.format("paimon").option("warehouse", wh).option("table", "default.d")
        for k, v in options.items():
            w = w.option(k, v)
        w.mode("append").save()

    data = spark.createDataFrame([("x", 1, 10), ("y", 2, 20)], "v STRING, id INT, n BIGINT")
    save(data, mergeSchema="true")  # Spark's spelling
    assert shape(table(wh, "d")) == {"id": "INT NOT NULL", "v": "STRING", "n": "BIGINT"}
    before = state(table(wh, "d"))
    narrower = spark.createDataFrame([(2, 5)], "id INT, n INT")
    with pytest.raises(Exception, match="Failed to merge data types BIGINT and INT"):
        save(narrower, **{"write.merge-schema": "true"})
    assert state(table(wh, "d")) == before
    save(narrower, **{"write.merge-schema": "true", "write.merge-schema.explicit-cast": "true"})
    assert shape(table(wh, "d"))["n"] == "INT"
    assert rows(spark, wh, "d") == [(1, "x", 10), (2, None, 5)]


def test_sql_door_by_name(spark: SparkSession, wh: str) -> None:
    sql(spark, "CREATE TABLE s (a INT, b STRING, info STRUCT<x: INT>)", warehouse=wh)
    # BY NAME without merging: any order, a missing nullable column is null, values cast
    sql(spark, "INSERT INTO s BY NAME SELECT 'p' AS b, 1L AS a", warehouse=wh)
    for statement, words in [
        ("INSERT INTO s BY NAME SELECT 2 AS a, 3 AS c", "unknown column names: `c`"),
        (
            "INSERT INTO s BY NAME SELECT 2 AS a, 'q' AS b, named_struct('x', 1) AS info, 4 AS c",
            "the number of data columns don't match",
        ),
        (
            "INSERT INTO s BY NAME SELECT named_struct('x', 1, 'y', 2) AS info",
            "nested struct has extra fields: y",
        ),
    ]:
        with pytest.raises(SqlError, match=words):
            sql(spark, statement, warehouse=wh)
    assert shape(table(wh, "s")) == {"a": "INT", "b": "STRING", "info": "ROW<x INT>"}

    sql(
        spark,
        "INSERT INTO s /*+ OPTIONS('write.merge-schema' = 'true') */ BY NAME "
        "SELECT 2 AS a, named_struct('y', 'new', 'x', 5) AS info, DATE'2026-01-02' AS d",
        warehouse=wh,
    )
    sql(spark, "SET `spark.paimon.write.merge-schema` = true", warehouse=wh)
    try:
        sql(spark, "INSERT INTO s BY NAME SELECT 3 AS a, 'r' AS b, 7 AS e", warehouse=wh)
        sql(spark, "INSERT INTO s VALUES (4, 's', null, null, 8)", warehouse=wh)  # by position
    finally:
        spark.conf.unset("spark.paimon.write.merge-schema")
    t = table(wh, "s")
    assert shape(t) == {
        "a": "INT",
        "b": "STRING",
        "info": "ROW<x INT, y STRING>",
        "d": "DATE",
        "e": "INT",
    }
    assert len(t.schema_manager.list_ids()) == 3
    got = [
        (r[0], r[1], None if r[2] is None else tuple(r[2]), r[3], r[4])
        for r in rows(spark, wh, "s")
    ]
    assert [(a, b, info, e) for a, b, info, _, e in got] == [
        (1, "p", None, None),
        (2, None, (5, "new"), None),
        (3, "r", None, 7),
        (4, "s", None, 8),
    ]
    assert str(got[1][3]) == "2026-01-02"


def test_a_failed_write_keeps_the_merged_schema(spark: SparkSession, wh: str) -> None:
    """As in Java, the schema change is committed before the data: a write that then fails
    leaves the new schema and no snapshot."""
    sql(spark, "CREATE TABLE f (id INT NOT NULL, v STRING)", warehouse=wh)
    df = spark.createDataFrame([(None, "x", 1)], "id INT, v STRING, extra INT")
    with pytest.raises(Exception, match="id"):
        write(df, wh, "default.f", options={"write.merge-schema": "true"})
    t = table(wh, "f")
    assert shape(t) == {"id": "INT NOT NULL", "v": "STRING", "extra": "INT"}
    assert state(t) == ([0, 1], None)
