"""Queries through ``paimon_pyspark.spark.sql`` as Java's Spark connector reads them: struct
subfields, ``VERSION AS OF`` preferring a tag, ``TIMESTAMP AS OF`` epoch seconds, the
incremental table functions, the hidden ``__paimon_*`` columns and per-table
``spark.paimon.<catalog>.<db>.<table>.<key>`` settings."""

from __future__ import annotations

import os
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.errors import (
    SqlError,
    TableNotExistError,
    UnsupportedOperationError,
    UnsupportedStatementError,
)
from paimon_pyspark.spark import sql
from paimon_pyspark.spark.sql import _used_columns, table_session_options
from paimon_pyspark.sql.dialect import parse_one

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("queries"))


def run(spark: SparkSession, wh: str, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement, warehouse=wh).collect()]


def table(wh: str, identifier: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(identifier)


@pytest.fixture(scope="module")
def history(spark: SparkSession, wh: str) -> FileStoreTable:
    """default.h, a primary-key table: snapshot n adds key n (n = 1..3), snapshot 4 updates
    key 1; tag '1' is snapshot 3, tag 'rel' snapshot 2."""
    run(
        spark,
        wh,
        "CREATE TABLE h (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '1')",
    )
    for k in (1, 2, 3):
        run(spark, wh, f"INSERT INTO h VALUES ({k}, 'v{k}')")
    run(spark, wh, "INSERT INTO h VALUES (1, 'new')")
    run(spark, wh, "CALL sys.create_tag('default.h', '1', 3)")
    run(spark, wh, "CALL sys.create_tag('default.h', 'rel', 2)")
    return table(wh, "default.h")


def test_struct_subfields_resolve_and_keep_their_column(spark: SparkSession, wh: str) -> None:
    run(spark, wh, "CREATE TABLE s (id INT, course STRUCT<name: STRING, grade: INT>, x INT)")
    run(
        spark,
        wh,
        "INSERT INTO s VALUES (1, named_struct('name', 'm', 'grade', 90), 0), "
        "(2, named_struct('name', 'p', 'grade', 70), 0)",
    )
    assert run(spark, wh, "SELECT course.grade FROM s ORDER BY 1") == [(70,), (90,)]
    assert run(spark, wh, "SELECT s.course.grade FROM s WHERE s.course.grade > 80") == [(90,)]
    assert run(spark, wh, "SELECT id FROM s AS t WHERE t.course.name = 'p'") == [(2,)]
    tree = parse_one("SELECT t.course.grade FROM s t WHERE id > 0")
    assert _used_columns(tree, table(wh, "default.s")) == ["id", "course"]


def test_version_as_of_reads_a_tag_before_a_snapshot(
    spark: SparkSession, wh: str, history: FileStoreTable
) -> None:
    three = [(1, "v1"), (2, "v2"), (3, "v3")]
    # tag '1' (snapshot 3) wins over snapshot 1, quoted or not, as in Java
    assert run(spark, wh, "SELECT * FROM h VERSION AS OF '1' ORDER BY k") == three
    assert run(spark, wh, "SELECT * FROM h VERSION AS OF 1 ORDER BY k") == three
    assert run(spark, wh, "SELECT * FROM h VERSION AS OF 2 ORDER BY k") == [(1, "v1"), (2, "v2")]
    assert run(spark, wh, "SELECT count(*) FROM h VERSION AS OF 'rel'") == [(2,)]
    with pytest.raises(UnsupportedStatementError, match="watermark"):
        run(spark, wh, "SELECT * FROM h VERSION AS OF 'watermark-1678883047356'")


def test_timestamp_as_of_takes_epoch_seconds(
    spark: SparkSession, wh: str, history: FileStoreTable
) -> None:
    snapshots = [history.snapshot_manager.snapshot(i) for i in history.snapshot_manager.list_ids()]
    first = snapshots[0].time_millis
    seconds = first // 1000 + 1  # the first second that includes snapshot 1
    expected = max(s.id for s in snapshots if s.time_millis <= seconds * 1000)
    count = min(expected, 3)  # snapshot n holds keys 1..n, the 4th updates key 1
    assert run(spark, wh, f"SELECT count(*) FROM h TIMESTAMP AS OF {seconds}") == [(count,)]
    assert run(spark, wh, "SELECT count(*) FROM h TIMESTAMP AS OF 4102444800") == [(3,)]
    assert run(spark, wh, "SELECT count(*) FROM h TIMESTAMP AS OF '2999-01-01 00:00:00'") == [(3,)]
    with pytest.raises(Exception, match="earlier than or equal"):
        run(spark, wh, f"SELECT * FROM h TIMESTAMP AS OF {first // 1000 - 1}")


def test_incremental_table_functions_read_as_the_hint_does(
    spark: SparkSession, wh: str, history: FileStoreTable
) -> None:
    times = [history.snapshot_manager.snapshot(i).time_millis for i in (1, 4)]
    cases = [
        ("paimon_incremental_query('h', 1, 4)", "'incremental-between' = '1,4'"),
        ("paimon_incremental_query('default.h', 'rel', '1')", "'incremental-between' = 'rel,1'"),
        (
            f"paimon_incremental_between_timestamp('h', {times[0]}, {times[1]})",
            f"'incremental-between-timestamp' = '{times[0]},{times[1]}'",
        ),
    ]
    for function, option in cases:
        ours = run(spark, wh, f"SELECT * FROM {function} ORDER BY k")
        hinted = run(spark, wh, f"SELECT * FROM h /*+ OPTIONS({option}) */ ORDER BY k")
        assert ours == hinted and ours, function
    assert run(spark, wh, "SELECT * FROM paimon_incremental_query('h', 1, 4) ORDER BY k") == [
        (1, "new"),
        (2, "v2"),
        (3, "v3"),
    ]
    joined = run(
        spark,
        wh,
        "SELECT i.k, h.v FROM paimon_incremental_query('h', '2', '3') AS i JOIN h ON i.k = h.k",
    )
    assert joined == [(3, "v3")]
    with pytest.raises(UnsupportedStatementError, match="paimon_incremental_to_auto_tag"):
        run(spark, wh, "SELECT * FROM paimon_incremental_to_auto_tag('h', '1')")
    with pytest.raises(UnsupportedStatementError, match="vector_search"):
        run(spark, wh, "SELECT * FROM vector_search('h', 'v', array(1.0), 5)")
    with pytest.raises(SqlError, match="three arguments"):
        run(spark, wh, "SELECT * FROM paimon_incremental_query('h', 1)")
    with pytest.raises(SqlError, match="literal"):
        run(spark, wh, "SELECT * FROM paimon_incremental_query('h', 1, k)")
    with pytest.raises(TableNotExistError, match="default.nope"):
        run(spark, wh, "SELECT * FROM paimon_incremental_query('nope', 1, 2)")


def test_incremental_query_across_a_rescale_is_the_end_except_the_start(
    spark: SparkSession, wh: str
) -> None:
    """Two tags with different bucket numbers cannot be diffed; Java's table function then
    returns the end's rows EXCEPT the start's, and so do we (the hint still refuses)."""
    run(
        spark,
        wh,
        "CREATE TABLE r (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '1')",
    )
    run(spark, wh, "INSERT INTO r VALUES (1, 'a'), (2, 'b')")
    run(spark, wh, "CALL sys.create_tag('r', 't1')")
    run(spark, wh, "ALTER TABLE r SET TBLPROPERTIES ('bucket' = '2')")
    run(spark, wh, "CALL sys.rescale(`table` => 'r', bucket_num => 2)")
    run(spark, wh, "INSERT INTO r VALUES (2, 'B'), (3, 'c')")
    run(spark, wh, "CALL sys.create_tag('r', 't2')")
    got = run(spark, wh, "SELECT * FROM paimon_incremental_query('r', 't1', 't2') ORDER BY k")
    assert got == [(2, "B"), (3, "c")]


def test_hidden_columns_of_an_append_table(spark: SparkSession, wh: str) -> None:
    run(
        spark,
        wh,
        "CREATE TABLE a (id INT, dt STRING) PARTITIONED BY (dt) "
        "TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')",
    )
    run(spark, wh, "INSERT INTO a VALUES (1, 'x'), (2, 'x'), (3, 'x'), (4, 'y')")
    assert run(spark, wh, "SELECT * FROM a ORDER BY id")[0] == (1, "x")  # no hidden column
    rows = run(
        spark,
        wh,
        "SELECT *, __paimon_file_path, __paimon_partition, __paimon_bucket, "
        "__paimon_row_index FROM a ORDER BY id",
    )
    assert [len(r) for r in rows] == [6] * 4
    for _, dt, path, partition, bucket, _ in rows:
        assert os.path.isfile(path) and f"/dt={dt}/bucket-{bucket}/" in path, path
        assert partition.asDict() == {"dt": dt}
    by_file: dict[str, list[int]] = {}
    for r in rows:
        by_file.setdefault(r[2], []).append(r[5])
    assert all(sorted(v) == list(range(len(v))) for v in by_file.values())
    assert run(spark, wh, "SELECT count(DISTINCT __paimon_bucket) FROM a x WHERE x.dt = 'x'") == [
        (len({r[4] for r in rows if r[1] == "x"}),)
    ]
    star = sql(spark, "SELECT a.*, b.* FROM a JOIN a AS b ON a.id = b.id", warehouse=wh)
    assert star.columns == ["id", "dt", "id", "dt"]
    mixed = sql(spark, "SELECT *, a.__paimon_bucket FROM a JOIN s ON a.id = s.id", warehouse=wh)
    assert mixed.columns == ["id", "dt", "id", "course", "x", "__paimon_bucket"]


def test_hidden_row_index_is_the_position_in_the_file_with_deletion_vectors(
    spark: SparkSession, wh: str
) -> None:
    run(spark, wh, "CREATE TABLE d (id INT) TBLPROPERTIES ('deletion-vectors.enabled' = 'true')")
    run(spark, wh, "INSERT INTO d VALUES (0), (1), (2), (3), (4)")
    run(spark, wh, "DELETE FROM d WHERE id = 2")
    got = run(spark, wh, "SELECT id, __paimon_row_index FROM d ORDER BY id")
    assert got == [(0, 0), (1, 1), (3, 3), (4, 4)]


def test_hidden_columns_of_a_primary_key_table(spark: SparkSession, wh: str) -> None:
    run(
        spark,
        wh,
        "CREATE TABLE k (id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '1')",
    )
    run(spark, wh, "INSERT INTO k VALUES (1, 'a')")
    one = run(spark, wh, "SELECT id, __paimon_file_path, __paimon_row_index FROM k")
    assert one[0][0] == 1 and os.path.isfile(one[0][1]) and one[0][2] == 0
    run(spark, wh, "INSERT INTO k VALUES (2, 'b')")
    # a bucket that needs a merge has no file path or row index, as in Java
    with pytest.raises(UnsupportedOperationError, match="__paimon_file_path"):
        run(spark, wh, "SELECT *, __paimon_file_path FROM k")
    assert run(spark, wh, "SELECT id, __paimon_bucket FROM k ORDER BY id") == [(1, 0), (2, 0)]
    run(spark, wh, "CALL sys.compact(`table` => 'default.k')")
    after = run(spark, wh, "SELECT id, __paimon_row_index FROM k ORDER BY id")
    assert after == [(1, 0), (2, 1)]


def test_per_table_session_options(spark: SparkSession, wh: str, history: FileStoreTable) -> None:
    run(spark, wh, "CREATE TABLE o (k INT)")
    for k in (1, 2):
        run(spark, wh, f"INSERT INTO o VALUES ({k})")
    keys = [
        "spark.paimon.*.default.h.scan.snapshot-id",
        "spark.paimon.paimon.default.o.scan.snapshot-id",
        "spark.paimon.scan.snapshot-id",
    ]
    try:
        run(spark, wh, f"SET {keys[0]} = 2")
        assert run(spark, wh, "SELECT count(*) FROM h") == [(2,)]
        assert run(spark, wh, "SELECT count(*) FROM o") == [(2,)]  # another table's setting
        run(spark, wh, f"SET {keys[2]} = 1")
        run(spark, wh, f"SET {keys[1]} = 2")
        both = "SELECT (SELECT count(*) FROM h), (SELECT count(*) FROM o)"
        assert run(spark, wh, both) == [(2, 2)]  # the table's settings override the plain one
        run(spark, wh, f"RESET `{keys[1]}`")  # Spark's RESET: a key with "-" is quoted
        assert run(spark, wh, both) == [(2, 1)]
    finally:
        for key in keys:
            spark.conf.unset(key)
    write_key = "spark.paimon.paimon.default.o.file.format"
    try:  # a write takes its table's settings too
        run(spark, wh, f"SET {write_key} = orc")
        run(spark, wh, "INSERT INTO o VALUES (3)")
    finally:
        spark.conf.unset(write_key)
    formats = run(spark, wh, "SELECT file_format FROM `o$files` ORDER BY file_format")
    assert formats == [("orc",), ("parquet",), ("parquet",)]
    scoped = {"*.*.t.a": "1", "paimon.db.t.a": "2", "*.db.*.b": "3", "x.db.t.c": "4", "a": "0"}
    assert table_session_options(scoped, "db.t") == {"a": "2", "b": "3", "x.db.t.c": "4"}
    assert table_session_options(scoped, "db.u") == {"a": "0", "b": "3", "x.db.t.c": "4"}
