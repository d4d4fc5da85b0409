"""Tag DDL (``ALTER TABLE t CREATE / REPLACE / CREATE OR REPLACE / DELETE / RENAME TAG``) and
column positions and nested paths in ``ALTER TABLE`` through the SQL door, read back through
the tag files, the ``$tags`` system table, ``VERSION AS OF 'tag'`` and queries of old rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.errors import (
    InvalidArgumentError,
    SchemaChangeError,
    SqlSyntaxError,
    TableNotExistError,
    TagAlreadyExistError,
    TagNotExistError,
    UnsupportedOperationError,
)
from paimon_pyspark.spark import register, sql

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wh(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = str(tmp_path_factory.mktemp("tags_columns"))
    register(spark, warehouse=path)
    yield path
    sql(spark, "USE default").collect()


def run(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement).collect()]


def table(wh: str, identifier: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(identifier)


def tags_on_disk(wh: str) -> dict[str, tuple[int, Any]]:
    """Each tag file's snapshot id and Java's ``tagTimeRetained`` (seconds), or None."""
    out = {}
    for path in Path(wh, "default.db", "tg", "tag").iterdir():
        data = json.loads(path.read_text())
        out[path.name[len("tag-") :]] = (data["id"], data.get("tagTimeRetained"))
    return out


def test_tag_ddl(spark: SparkSession, wh: str) -> None:
    run(spark, "CREATE TABLE tg (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k')")
    for i in (1, 2, 3):
        run(spark, f"INSERT INTO tg VALUES ({i}, 'v{i}')")

    run(spark, "ALTER TABLE tg CREATE TAG `tag-1`")
    run(spark, "alter table tg create tag `tag-2` RETAIN 2 DAYS")
    run(spark, "ALTER TABLE default.tg CREATE TAG `tag-3` AS OF VERSION 1")
    run(spark, "ALTER TABLE tg CREATE TAG `tag-4` AS OF VERSION 2 RETAIN 3 HOURS")
    run(spark, "ALTER TABLE tg CREATE TAG t5 RETAIN 30 MINUTES")
    # Java's Tag: no retention is the bare snapshot; a retention is seconds with 9 decimals
    assert tags_on_disk(wh) == {
        "tag-1": (3, None),
        "tag-2": (3, 172800),
        "tag-3": (1, None),
        "tag-4": (2, 10800),
        "t5": (3, 1800),
    }
    got = run(spark, "SELECT tag_name, snapshot_id, time_retained FROM `tg$tags`")
    assert sorted(got) == [
        ("t5", 3, "PT30M"),
        ("tag-1", 3, None),
        ("tag-2", 3, "PT48H"),
        ("tag-3", 1, None),
        ("tag-4", 2, "PT3H"),
    ]
    assert (
        '"tagTimeRetained" : 10800.000000000'
        in Path(wh, "default.db", "tg", "tag", "tag-tag-4").read_text()
    )

    with pytest.raises(TagAlreadyExistError, match="Table 'default.tg': Tag 'tag-1' already"):
        run(spark, "ALTER TABLE tg CREATE TAG `tag-1`")
    run(spark, "ALTER TABLE tg CREATE TAG IF NOT EXISTS `tag-1` AS OF VERSION 1 RETAIN 1 HOURS")
    assert tags_on_disk(wh)["tag-1"] == (3, None)

    run(spark, "ALTER TABLE tg REPLACE TAG `tag-1` AS OF VERSION 2 RETAIN 1 HOURS")
    run(spark, "ALTER TABLE tg CREATE OR REPLACE TAG `tag-5` AS OF VERSION 1")
    assert tags_on_disk(wh)["tag-5"] == (1, None)
    run(spark, "ALTER TABLE tg CREATE OR REPLACE TAG `tag-5` AS OF VERSION 2 RETAIN 1 HOURS")
    run(spark, "ALTER TABLE tg REPLACE TAG `tag-6`")  # Java creates a missing one
    on_disk = tags_on_disk(wh)
    assert [on_disk[n] for n in ("tag-1", "tag-5", "tag-6")] == [(2, 3600), (2, 3600), (3, None)]
    with pytest.raises(InvalidArgumentError, match="snapshot #99 doesn't exist"):
        run(spark, "ALTER TABLE tg CREATE OR REPLACE TAG `tag-5` AS OF VERSION 99")

    before = Path(wh, "default.db", "tg", "tag", "tag-tag-1").read_bytes()
    run(spark, "ALTER TABLE tg RENAME TAG `tag-1` TO renamed")
    assert Path(wh, "default.db", "tg", "tag", "tag-renamed").read_bytes() == before
    assert run(spark, "SELECT k FROM tg VERSION AS OF 'renamed' ORDER BY k") == [(1,), (2,)]
    with pytest.raises(TagNotExistError, match="Tag 'tag-1' doesn't exist"):
        run(spark, "ALTER TABLE tg RENAME TAG `tag-1` TO other")
    with pytest.raises(TagAlreadyExistError, match="Tag 'tag-2' already exists"):
        run(spark, "ALTER TABLE tg RENAME TAG renamed TO `tag-2`")

    run(spark, "ALTER TABLE tg DELETE TAG `tag-3`")
    run(spark, "ALTER TABLE tg DELETE TAG `tag-4, tag-5`")  # Java's list in one name
    run(spark, "ALTER TABLE tg DELETE TAG IF EXISTS `nope`")
    run(spark, "ALTER TABLE tg DELETE TAG nope")  # Java: a warning, no error
    run(spark, "ALTER TABLE tg DELETE TAG t5, `tag-6`")
    assert sorted(table(wh, "default.tg").tag_manager().list_tags()) == ["renamed", "tag-2"]

    with pytest.raises(TableNotExistError):
        run(spark, "ALTER TABLE missing CREATE TAG x")
    with pytest.raises(SqlSyntaxError, match="DAYS, HOURS or MINUTES"):
        run(spark, "ALTER TABLE tg CREATE TAG x RETAIN 2 WEEKS")


def test_replace_and_rename_tag_procedures(spark: SparkSession, wh: str) -> None:
    run(spark, "CREATE TABLE tp (k INT, v STRING)")
    for i in (1, 2):
        run(spark, f"INSERT INTO tp VALUES ({i}, 'v{i}')")
    run(spark, "CALL sys.create_tag('tp', 'a', 1)")
    assert run(spark, "CALL sys.replace_tag(`table` => 'tp', tag => 'a', snapshot => 2)") == [
        (True,)
    ]
    run(spark, "CALL sys.replace_tag('default.tp', 'a', 1, '1 h')")
    t = table(wh, "default.tp")
    assert t.tag_manager().get_or_throw("a").id == 1
    run(spark, "CALL sys.rename_tag(`table` => 'tp', tag => 'a', target_tag => 'b')")
    run(spark, "CALL sys.rename_tag(`table` => 'tp', tagName => 'b', targetTagName => 'c')")
    assert t.tag_manager().list_tags() == ["c"]
    with pytest.raises(TagNotExistError):
        run(spark, "CALL sys.replace_tag(`table` => 'tp', tag => 'zz')")


def test_column_positions_and_nested_paths(spark: SparkSession, wh: str) -> None:
    run(
        spark,
        "CREATE TABLE tc (k INT NOT NULL, a STRING, s STRUCT<x: INT, y: STRING>, "
        "arr ARRAY<STRUCT<p: INT, q: INT>>, m MAP<STRING, STRUCT<u: INT>>) "
        "TBLPROPERTIES ('primary-key' = 'k')",
    )
    run(
        spark,
        "INSERT INTO tc VALUES (1, 'a1', named_struct('x', 10, 'y', 'y1'), "
        "array(named_struct('p', 1, 'q', 2)), map('k1', named_struct('u', 5)))",
    )
    run(spark, "ALTER TABLE tc ALTER COLUMN a FIRST")
    run(spark, "ALTER TABLE tc ALTER COLUMN m AFTER a")
    # Hive's form repeats the type: an unchanged one is no change (Spark drops it), so the key
    # column takes a comment and a position
    run(spark, "ALTER TABLE tc CHANGE COLUMN k k INT COMMENT 'the key' AFTER s")
    run(spark, "ALTER TABLE tc ADD COLUMN s.z DOUBLE FIRST")
    run(spark, "ALTER TABLE tc ADD COLUMNS (s.w STRING AFTER x, arr.element.r STRING)")
    run(spark, "ALTER TABLE tc RENAME COLUMN s.y TO yy")
    run(spark, "ALTER TABLE tc DROP COLUMN arr.element.q")
    run(spark, "ALTER TABLE tc ALTER COLUMN s.x TYPE BIGINT")
    run(spark, "ALTER TABLE tc ALTER COLUMN s.x COMMENT 'nested'")
    run(spark, "ALTER TABLE tc ALTER COLUMN m.value.u TYPE BIGINT")
    run(spark, "ALTER TABLE tc RENAME COLUMN m.value.u TO uu")
    schema = table(wh, "default.tc").store.table_schema
    assert [f.name for f in schema.fields] == ["a", "m", "s", "k", "arr"]
    assert schema.field("k").description == "the key"
    assert str(schema.field("k").type) == "INT NOT NULL"
    s_fields = schema.field("s").type.fields
    assert [(f.name, str(f.type)) for f in s_fields] == [
        ("z", "DOUBLE"),
        ("x", "BIGINT"),
        ("w", "STRING"),
        ("yy", "STRING"),
    ]
    assert s_fields[1].description == "nested"
    # old rows keep their values: the reader follows field ids through every change
    run(
        spark,
        "INSERT INTO tc VALUES ('a2', map('k2', named_struct('uu', 6)), "
        "named_struct('z', 0.5, 'x', 20, 'w', 'w2', 'yy', 'y2'), 2, "
        "array(named_struct('p', 3, 'r', 'r2')))",
    )
    got = run(
        spark,
        "SELECT k, a, s.z, s.x, s.w, s.yy, arr[0].p, arr[0].r, m['k1'].uu, m['k2'].uu "
        "FROM tc ORDER BY k",
    )
    assert got == [
        (1, "a1", None, 10, None, "y1", 1, None, 5, None),
        (2, "a2", 0.5, 20, "w2", "y2", 3, "r2", None, 6),
    ]

    with pytest.raises(UnsupportedOperationError, match="top-level column 's'"):
        run(spark, "ALTER TABLE tc ALTER COLUMN s.x FIRST")
    with pytest.raises(UnsupportedOperationError, match="RENAME COLUMN instead"):
        run(spark, "ALTER TABLE tc CHANGE COLUMN a b STRING")
    with pytest.raises(UnsupportedOperationError, match="goes through 'value', not 'key'"):
        run(spark, "ALTER TABLE tc ALTER COLUMN m.key TYPE STRING")
    with pytest.raises(SchemaChangeError, match="Column s.nope does not exist"):
        run(spark, "ALTER TABLE tc RENAME COLUMN s.nope TO n")
    with pytest.raises(SchemaChangeError, match="Reference field name not found: nope"):
        run(spark, "ALTER TABLE tc ALTER COLUMN a AFTER nope")
    with pytest.raises(SchemaChangeError, match="Cannot move itself"):
        run(spark, "ALTER TABLE tc ALTER COLUMN a FIRST")
