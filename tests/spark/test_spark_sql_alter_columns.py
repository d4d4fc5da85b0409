"""The SQL door's column statements: ``ALTER TABLE ... ADD COLUMNS / ADD COLUMN ... FIRST |
AFTER / DROP COLUMN / RENAME COLUMN / ALTER COLUMN ... TYPE | COMMENT`` and ``RENAME TO``, run
through Spark on tables with rows written before the change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.errors import SchemaChangeError, TableNotExistError
from paimon_pyspark.spark import register, sql

pytestmark = pytest.mark.slow


@pytest.fixture()
def wh(spark: SparkSession, tmp_path: Path) -> Iterator[str]:
    register(spark, warehouse=str(tmp_path))
    yield str(tmp_path)
    sql(spark, "USE default").collect()


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement).collect()]


def table(wh: str, identifier: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(identifier)


def test_alter_column_statements_change_the_schema_and_old_rows_follow(
    spark: SparkSession, wh: str
) -> None:
    sql(spark, "CREATE TABLE t (k INT, v STRING, n INT, PRIMARY KEY (k) NOT ENFORCED)").collect()
    sql(spark, "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20)").collect()
    sql(spark, "ALTER TABLE t ADD COLUMNS (c DOUBLE COMMENT 'added', d STRING)").collect()
    sql(spark, "ALTER TABLE t ADD COLUMN f INT FIRST").collect()
    sql(spark, "ALTER TABLE t ADD COLUMN e BIGINT AFTER k").collect()
    sql(spark, "ALTER TABLE t DROP COLUMN d").collect()
    sql(spark, "ALTER TABLE t RENAME COLUMN v TO w").collect()
    sql(spark, "ALTER TABLE t ALTER COLUMN n TYPE BIGINT").collect()
    sql(spark, "ALTER TABLE t ALTER COLUMN w COMMENT 'the value'").collect()
    t = table(wh, "default.t")
    assert [f.name for f in t.fields] == ["f", "k", "e", "w", "n", "c"]
    assert str(t.store.table_schema.field("n").type) == "BIGINT"
    assert t.store.table_schema.field("w").description == "the value"
    assert t.store.table_schema.field("c").description == "added"
    assert t.store.table_schema.id == 7
    sql(spark, "INSERT INTO t VALUES (9, 2, 5, 'B', 21, 1.5)").collect()
    assert rows(spark, "SELECT f, k, e, w, n, c FROM t ORDER BY k") == [
        (None, 1, None, "a", 10, None),
        (9, 2, 5, "B", 21, 1.5),
    ]
    with pytest.raises(SchemaChangeError, match="Cannot drop partition key or primary key"):
        sql(spark, "ALTER TABLE t DROP COLUMN k").collect()
    sql(spark, "ALTER TABLE t RENAME TO u").collect()
    assert rows(spark, "SELECT k FROM u ORDER BY k") == [(1,), (2,)]
    with pytest.raises(TableNotExistError):
        table(wh, "default.t")
