"""``TRUNCATE TABLE``, ``[CREATE OR] REPLACE TABLE [AS SELECT]``, ``ALTER TABLE ... ADD | DROP
PARTITION`` and Spark's typed ``PARTITIONED BY (dt STRING)`` through ``paimon_pyspark.spark.sql``:
the rows each leaves, the snapshots it commits (kinds), time travel across a replace, and the
refusals, named. One warehouse for the module; each test its own tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.errors import (
    PartitionAlreadyExistError,
    PartitionNotExistError,
    PartitionSpecError,
    SqlError,
    SqlSyntaxError,
    TableNotExistError,
    UnsupportedOperationError,
)
from paimon_pyspark.spark import sql

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("table_ddl"))


@pytest.fixture()
def run(spark: SparkSession, wh: str) -> Iterator[Any]:
    def go(statement: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in sql(spark, statement, warehouse=wh).collect()]

    yield go


def table(wh: str, name: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(f"default.{name}")


def kinds(wh: str, name: str) -> list[str]:
    t = table(wh, name)
    sm = t.snapshot_manager
    return [sm.snapshot(i).commit_kind for i in sm.list_ids()]


def test_typed_partitioned_by_appends_the_columns_as_spark_does(run: Any, wh: str) -> None:
    """Spark 4 on a Parquet table (checked in a session): typed partition columns go after the
    column list, in PARTITIONED BY order, and hold NOT NULL and COMMENT."""
    run(
        "CREATE TABLE typed (id INT, v STRING) USING paimon "
        "PARTITIONED BY (dt STRING NOT NULL COMMENT 'day', h INT)"
    )
    t = table(wh, "typed")
    assert t.field_names == ["id", "v", "dt", "h"]
    assert t.partition_keys == ["dt", "h"]
    assert [f.description for f in t.fields] == [None, None, "day", None]
    assert not t.fields[2].type.nullable
    run("INSERT INTO typed VALUES (1, 'a', 'd1', 1), (2, 'b', 'd2', 2)")
    assert run("SELECT * FROM typed ORDER BY id") == [(1, "a", "d1", 1), (2, "b", "d2", 2)]
    with pytest.raises(SqlError, match="column 'dt' of PARTITIONED BY is declared"):
        run("CREATE TABLE typed2 (id INT, dt STRING) USING paimon PARTITIONED BY (dt STRING)")
    with pytest.raises(SqlSyntaxError, match="cannot mix"):
        run("CREATE TABLE typed2 (id INT, dt STRING) USING paimon PARTITIONED BY (dt, h INT)")
    with pytest.raises(SqlSyntaxError, match="may not be given in CREATE TABLE AS SELECT"):
        run("CREATE TABLE typed2 USING paimon PARTITIONED BY (dt STRING) AS SELECT 'x' AS dt")


def test_truncate_table_and_partitions(run: Any, wh: str) -> None:
    run(
        "CREATE TABLE tr_pk (id INT, v STRING, dt STRING) USING paimon PARTITIONED BY (dt) "
        "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')"
    )
    run("INSERT INTO tr_pk VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z')")
    run("TRUNCATE TABLE tr_pk PARTITION (DT = 'x')")
    assert run("SELECT id FROM tr_pk ORDER BY id") == [(2,), (3,)]
    run("TRUNCATE TABLE tr_pk PARTITION (dt = 'nope')")  # a full spec commits, as Java's
    run("TRUNCATE TABLE tr_pk")
    assert run("SELECT * FROM tr_pk") == []
    assert kinds(wh, "tr_pk") == ["APPEND", "OVERWRITE", "OVERWRITE", "OVERWRITE"]
    assert run("SELECT id FROM tr_pk VERSION AS OF 2 ORDER BY id") == [(2,), (3,)]

    run("CREATE TABLE tr_app (id INT, dt STRING, h INT) USING paimon PARTITIONED BY (dt, h)")
    run("INSERT INTO tr_app VALUES (1, 'x', 1), (2, 'x', 2), (3, 'y', 1)")
    run("TRUNCATE TABLE tr_app PARTITION (h = 1)")  # a partial spec: every partition under it
    assert run("SELECT id FROM tr_app") == [(2,)]
    run("TRUNCATE TABLE tr_app PARTITION (dt = 'nope')")  # partial, nothing matches: no commit
    assert kinds(wh, "tr_app") == ["APPEND", "OVERWRITE"]

    run("CREATE TABLE tr_flat (id INT) USING paimon")
    run("INSERT INTO tr_flat VALUES (1)")
    with pytest.raises(UnsupportedOperationError, match="'default.tr_flat'.*partitioned"):
        run("TRUNCATE TABLE tr_flat PARTITION (id = 1)")
    run("TRUNCATE TABLE tr_flat")
    assert run("SELECT * FROM tr_flat") == []
    with pytest.raises(PartitionSpecError, match="'default.tr_app'.*'nope', which is not a"):
        run("TRUNCATE TABLE tr_app PARTITION (nope = 1)")
    with pytest.raises(TableNotExistError, match="default.missing"):
        run("TRUNCATE TABLE missing")


def test_drop_and_add_partitions(run: Any, wh: str) -> None:
    run("CREATE TABLE parts (id INT, dt STRING, h INT) USING paimon PARTITIONED BY (dt, h)")
    run("INSERT INTO parts VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 1), (4, 'c', 1)")
    run("ALTER TABLE parts DROP PARTITION (dt = 'a', h = 1), PARTITION (dt = 'b')")
    assert run("SELECT id FROM parts ORDER BY id") == [(2,), (4,)]
    assert kinds(wh, "parts") == ["APPEND", "OVERWRITE"]

    with pytest.raises(PartitionNotExistError, match=r"'default.parts'.*\(dt = 'a', h = '1'\)"):
        run("ALTER TABLE parts DROP PARTITION (dt = 'a', h = 1)")
    run("ALTER TABLE parts DROP IF EXISTS PARTITION (dt = 'a', h = 1)")  # nothing left: no commit
    with pytest.raises(SqlError, match="prefix"):
        run("ALTER TABLE parts DROP PARTITION (h = 1)")
    with pytest.raises(UnsupportedOperationError, match="PURGE"):
        run("ALTER TABLE parts DROP PARTITION (dt = 'c') PURGE")
    assert len(kinds(wh, "parts")) == 2

    with pytest.raises(PartitionAlreadyExistError, match=r"'default.parts'.*\(dt = 'c', h = '1'\)"):
        run("ALTER TABLE parts ADD PARTITION (dt = 'c', h = 1)")
    with pytest.raises(SqlError, match="every partition key"):
        run("ALTER TABLE parts ADD PARTITION (dt = 'd')")
    # a filesystem catalog keeps no partition metadata: nothing is created, as in Java
    run(
        "ALTER TABLE parts ADD IF NOT EXISTS PARTITION (dt = 'c', h = 1) "
        "PARTITION (dt = 'd', h = 1)"
    )
    run("ALTER TABLE parts ADD PARTITION (dt = 'e', h = 1) LOCATION '/elsewhere'")
    assert len(kinds(wh, "parts")) == 2
    assert run("SELECT dt, h FROM parts ORDER BY dt, h") == [("a", 2), ("c", 1)]


def test_replace_keeps_history_and_time_travel(run: Any, wh: str) -> None:
    run(
        "CREATE TABLE rp (id BIGINT, data STRING) USING paimon "
        "TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')"
    )
    run("INSERT INTO rp VALUES (1, 'old'), (2, 'older')")
    run("REPLACE TABLE rp (id STRING, amount INT) USING paimon TBLPROPERTIES ('bucket' = '-1')")
    t = table(wh, "rp")
    assert t.table_schema.id == 1
    assert t.field_names == ["id", "amount"]
    assert t.primary_keys == []
    assert t.options.options.get("bucket") == "-1"
    assert run("SELECT * FROM rp") == []
    assert kinds(wh, "rp") == ["APPEND", "OVERWRITE"]
    assert run("SELECT * FROM rp VERSION AS OF 1 ORDER BY id") == [(1, "old"), (2, "older")]

    run("INSERT INTO rp VALUES ('a', 1), ('b', 2)")
    # the query reads the table it replaces at the snapshot before the replace, as Java pins it
    run(
        "CREATE OR REPLACE TABLE rp USING paimon TBLPROPERTIES ('primary-key' = 'id') "
        "AS SELECT id, amount * 10 AS amount FROM rp"
    )
    t = table(wh, "rp")
    assert (t.table_schema.id, t.primary_keys) == (2, ["id"])
    assert run("SELECT * FROM rp ORDER BY id") == [("a", 10), ("b", 20)]
    assert kinds(wh, "rp") == ["APPEND", "OVERWRITE", "APPEND", "OVERWRITE", "OVERWRITE"]
    run("REPLACE TABLE rp AS SELECT 'z' AS id, 7 AS amount")
    assert run("SELECT * FROM rp") == [("z", 7)]
    assert table(wh, "rp").primary_keys == []
    assert run("SELECT * FROM rp VERSION AS OF 1 ORDER BY id") == [(1, "old"), (2, "older")]
    assert run("SELECT * FROM rp VERSION AS OF 5 ORDER BY id") == [("a", 10), ("b", 20)]

    with pytest.raises(TableNotExistError, match="'default.nothing'.*CREATE OR REPLACE"):
        run("REPLACE TABLE nothing (id INT)")
    run("CREATE OR REPLACE TABLE fresh (id INT) USING paimon")
    assert table(wh, "fresh").field_names == ["id"]
    with pytest.raises(SqlSyntaxError, match="IF NOT EXISTS"):
        run("CREATE OR REPLACE TABLE IF NOT EXISTS fresh (id INT)")


def test_replace_changing_partition_keys_drops_and_creates(run: Any, wh: str) -> None:
    """Java's replace keeps the partition keys or falls back to drop and create."""
    run("CREATE TABLE rpp (id INT, dt STRING) USING paimon PARTITIONED BY (dt)")
    run("INSERT INTO rpp VALUES (1, 'x')")
    run("INSERT INTO rpp VALUES (2, 'y')")
    with pytest.raises(UnsupportedOperationError, match="'default.rpp'.*reads the same table"):
        run("CREATE OR REPLACE TABLE rpp USING paimon AS SELECT * FROM rpp")
    assert run("SELECT id FROM rpp ORDER BY id") == [(1,), (2,)]
    run("CREATE OR REPLACE TABLE rpp USING paimon AS SELECT 3 AS id, 'z' AS dt")
    t = table(wh, "rpp")
    assert (t.partition_keys, t.table_schema.id) == ([], 0)
    assert kinds(wh, "rpp") == ["OVERWRITE"]
    assert run("SELECT * FROM rpp") == [(3, "z")]
