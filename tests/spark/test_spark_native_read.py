"""Spark's own Parquet reader for the files that need no merge (spark/native.py).

Every read here is compared with the Python source (option ``native-read`` = ``false``) and with
the core reader; the plan shows which reader Spark used.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError
from paimon_pyspark.procedures import compact
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.spark import native, read, sql
from paimon_pyspark.spark.native import spark_condition

pytestmark = pytest.mark.slow

SCHEMA = pa.schema(
    [
        ("dt", pa.string()),
        ("id", pa.int64()),
        ("tiny", pa.int8()),
        ("small", pa.int16()),
        ("flag", pa.bool_()),
        ("name", pa.string()),
        ("raw", pa.binary()),
        ("price", pa.decimal128(12, 3)),
        ("day", pa.date32()),
        ("ts", pa.timestamp("ms")),
        ("ts_us", pa.timestamp("us")),
        ("ltz", pa.timestamp("us", tz="UTC")),
        ("score", pa.float64()),
    ]
)
DAYS = ["2026-11-01", "2026-11-02", "2026-11-03"]


def _rows(lo: int, hi: int, version: int = 0) -> pa.Table:
    ids = range(lo, hi)

    def maybe(i: int, value: object) -> object:
        return None if i % 7 == 3 else value

    base = dt.datetime(2026, 11, 1, 12, 0, 0)
    return pa.table(
        {
            "dt": [DAYS[i % 3] for i in ids],
            "id": list(ids),
            "tiny": [maybe(i, (i % 256) - 128) for i in ids],
            "small": [maybe(i, i - 30000) for i in ids],
            "flag": [maybe(i, i % 2 == 0) for i in ids],
            "name": [maybe(i, f"n{i}_{version}" if i % 5 else "a_b%c") for i in ids],
            "raw": [maybe(i, bytes([i % 256, version])) for i in ids],
            "price": [maybe(i, decimal.Decimal(i * 1000 + version).scaleb(-3)) for i in ids],
            "day": [maybe(i, dt.date(2026, 1, 1) + dt.timedelta(days=i)) for i in ids],
            "ts": [maybe(i, base + dt.timedelta(milliseconds=i * 1001)) for i in ids],
            "ts_us": [maybe(i, base + dt.timedelta(microseconds=i * 7)) for i in ids],
            "ltz": [maybe(i, (base + dt.timedelta(seconds=i)).replace(tzinfo=dt.UTC)) for i in ids],
            "score": [maybe(i, float("nan") if i % 11 == 0 else i / 4) for i in ids],
        },
        schema=SCHEMA,
    )


def _write(catalog: FileSystemCatalog, name: str, data: pa.Table) -> None:
    table = catalog.get_table(name)
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def _sorted(df: DataFrame) -> list[tuple[object, ...]]:
    """Rows in a fixed order, NaN as one value (two NaN floats never compare equal)."""

    def value(v: object) -> object:
        return "NaN" if isinstance(v, float) and math.isnan(v) else v

    return sorted((tuple(value(v) for v in r) for r in df.collect()), key=repr)


def _scan_kinds(df: DataFrame) -> set[str]:
    plan = df._jdf.queryExecution().executedPlan().toString()
    kinds = set()
    if "FileScan parquet" in plan:
        kinds.add("parquet")
    if "MapInArrow" in plan:  # our reader's job (spark/read.py payload_read)
        kinds.add("python")
    return kinds


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


def _catalog(warehouse: str) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    return catalog


WHERES = [
    None,
    "dt = '2026-11-02'",
    "dt IN ('2026-11-01', '2026-11-03') AND id > 40",
    "id BETWEEN 10 AND 50 OR name LIKE 'a\\_b%'",
    "name LIKE 'n1%' AND tiny < 0",
    "name IS NULL OR flag = true",
    "price >= 20.5 AND price < 70",
    "day > DATE '2026-01-20' AND NOT (small = -29990)",
    "ts < TIMESTAMP '2026-11-01 12:00:30.030' AND ts_us IS NOT NULL",
    "ltz >= TIMESTAMP '2026-11-01 12:00:50' AND id NOT IN (55, 60)",
    "score > 5",
]


def test_append_table_reads_through_spark_parquet_and_equals_the_python_source(
    spark: SparkSession, warehouse: str
) -> None:
    catalog = _catalog(warehouse)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    _write(catalog, "db.t", _rows(0, 60))
    _write(catalog, "db.t", _rows(60, 90, version=1))
    for where in WHERES:
        native = read(spark, warehouse, "db.t", where=where)
        python = read(spark, warehouse, "db.t", where=where, options={"native-read": "false"})
        kinds = _scan_kinds(native)
        inexact = where is not None and ("score" in where or "\\" in where)
        assert kinds == ({"python"} if inexact else {"parquet"}), (where, kinds)
        assert _scan_kinds(python) == {"python"}
        assert _sorted(native) == _sorted(python), where
    assert read(spark, warehouse, "db.t").count() == 90


def test_a_query_after_a_filtered_query_on_the_same_frame_returns_every_row(
    spark: SparkSession, warehouse: str
) -> None:
    catalog = _catalog(warehouse)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    _write(catalog, "db.t", _rows(0, 60))
    df = read(spark, warehouse, "db.t")
    assert df.filter("id = 1").count() == 1
    assert df.count() == 60
    df.createOrReplaceTempView("native_reuse")
    try:
        assert spark.sql("SELECT * FROM native_reuse WHERE dt = '2026-11-01'").count() == 20
        assert spark.sql("SELECT count(*) FROM native_reuse").collect()[0][0] == 60
    finally:
        spark.catalog.dropTempView("native_reuse")
    # the frame stays at the snapshot it was read at, as its plan lists that snapshot's files
    _write(catalog, "db.t", _rows(60, 70))
    assert df.count() == 60
    assert read(spark, warehouse, "db.t").count() == 70
    assert read(spark, warehouse, "db.t", snapshot_id=1).count() == 60


def test_text_literals_are_never_parsed_as_sql_and_unselected_filter_columns_are_dropped(
    spark: SparkSession, warehouse: str
) -> None:
    """The condition goes to Spark as SQL text: a value with quotes, backslashes, backticks,
    a newline or non-ASCII must select exactly its rows; a filter on a column the read does
    not select reads it and drops it."""
    catalog = _catalog(warehouse)
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema, partition_keys=["dt"]))
    odd = ["it's", "a\\b", "x`y", "line\nbreak", "ü€🙂", "') OR true --", "%_"]
    names = [odd[i % len(odd)] for i in range(40)]
    _write(catalog, "db.t", pa.table({"id": range(40), "name": names, "dt": ["d"] * 40}, schema))

    def quoted(value: str) -> str:  # a Spark SQL string literal (backslash escapes)
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

    for value in odd:
        where = f"name = {quoted(value)}"
        native = read(spark, warehouse, "db.t", where=where, columns=["id"])
        assert _scan_kinds(native) == {"parquet"}, value
        assert native.columns == ["id"]
        python = read(
            spark, warehouse, "db.t", where=where, columns=["id"], options={"native-read": "false"}
        )
        expected = sorted(i for i in range(40) if names[i] == value)
        assert sorted(r["id"] for r in native.collect()) == expected, value
        assert _sorted(native) == _sorted(python), value
    for value in ("it", "ü€"):
        where = f"name LIKE {quoted(value + '%')}"
        native = read(spark, warehouse, "db.t", where=where, columns=["ID", "Name"])
        assert native.columns == ["id", "name"]
        expected = sorted(i for i in range(40) if names[i].startswith(value))
        assert sorted(r["id"] for r in native.collect()) == expected, value


def test_a_relation_of_the_same_files_is_made_once_and_a_new_commit_is_seen(
    spark: SparkSession, warehouse: str
) -> None:
    catalog = _catalog(warehouse)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    _write(catalog, "db.t", _rows(0, 60))
    made: list[tuple[str, ...]] = []
    listed = native._listed

    def counting(*args: object) -> DataFrame:
        made.append(args)
        return listed(*args)  # type: ignore[arg-type]

    native._listed = counting  # type: ignore[assignment]
    try:
        first = read(spark, warehouse, "db.t", where="dt = '2026-11-02'", columns=["id"])
        again = read(spark, warehouse, "db.t", where="dt = '2026-11-02'", columns=["id"])
        assert len(made) == 1
        assert first.count() == again.count() == 20
        _write(catalog, "db.t", _rows(60, 90))
        after = read(spark, warehouse, "db.t", where="dt = '2026-11-02'", columns=["id"])
        assert len(made) == 2
        assert after.count() == 30
        assert first.count() == 20  # a frame keeps the snapshot it was read at
    finally:
        native._listed = listed  # type: ignore[assignment]


def test_primary_key_table_reads_compacted_buckets_natively_and_merges_the_rest(
    spark: SparkSession, warehouse: str
) -> None:
    catalog = _catalog(warehouse)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"}
    )
    catalog.create_table("db.pk", schema)
    _write(catalog, "db.pk", _rows(0, 60))
    _write(catalog, "db.pk", _rows(30, 90, version=1))
    assert compact(catalog, "db.pk", compact_strategy="full") is not None
    full = read(spark, warehouse, "db.pk")
    assert _scan_kinds(full) == {"parquet"}
    python = read(spark, warehouse, "db.pk", options={"native-read": "false"})
    assert _sorted(full) == _sorted(python)
    # new level-0 files in one partition: that partition's buckets merge in Python
    _write(catalog, "db.pk", _rows(0, 90, version=2).filter(pa.compute.field("dt") == DAYS[0]))
    for where in (None, "id > 20 AND name IS NOT NULL", "dt <> '2026-11-02'"):
        mixed = read(spark, warehouse, "db.pk", where=where, columns=["id", "name", "dt"])
        assert _scan_kinds(mixed) == {"parquet", "python"}, where
        python = read(
            spark,
            warehouse,
            "db.pk",
            where=where,
            columns=["id", "name", "dt"],
            options={"native-read": "false"},
        )
        assert _sorted(mixed) == _sorted(python), where
    core = catalog.get_table("db.pk").new_read_builder()
    expected = core.new_read().to_arrow(core.new_scan().plan().splits())
    assert read(spark, warehouse, "db.pk").count() == expected.num_rows == 90
    names = {r["id"]: r["name"] for r in read(spark, warehouse, "db.pk").collect()}
    assert names[3] is None and names[6] == "n6_2" and names[34] == "n34_1"


def test_primary_key_buckets_read_their_final_files_natively_and_merge_the_rest(
    spark: SparkSession, warehouse: str
) -> None:
    """Overlapping commits, no compaction: each bucket's newest file (no retraction in it) is
    final under deduplicate, so Spark's Parquet reader reads it and the Python source merges
    the older files without its keys; the union is the merged table, row for row."""
    catalog = _catalog(warehouse)
    schema = Schema.from_pyarrow_schema(
        SCHEMA.append(pa.field("op", pa.string())),
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "2", "write-only": "true", "rowkind.field": "op"},
    )
    catalog.create_table("db.pk", schema)

    def commit(rows: pa.Table, delete: set[int]) -> None:
        ops = ["-D" if i in delete else "+I" for i in rows.column("id").to_pylist()]
        _write(catalog, "db.pk", rows.append_column("op", pa.array(ops)))

    commit(_rows(0, 60), set())
    commit(_rows(30, 90, version=1), {30, 40, 41, 70})
    commit(_rows(50, 120, version=2), set())
    splits = catalog.get_table("db.pk").new_read_builder().new_scan().plan().splits()
    assert len(splits) == 6 and all(len(s.files) == 3 for s in splits)

    def python(where: str | None = None, columns: list[str] | None = None) -> DataFrame:
        options = {"native-read": "false"}
        return read(spark, warehouse, "db.pk", where=where, columns=columns, options=options)

    full = read(spark, warehouse, "db.pk")
    assert _scan_kinds(full) == {"parquet", "python"}
    plan = full._jdf.queryExecution().executedPlan().toString()
    assert "InMemoryFileIndex(6 paths)" in plan  # the six buckets' final files
    assert _sorted(full) == _sorted(python())
    assert full.count() == 120 - 3  # 70 is added back by the last commit
    names = {r["id"]: r["name"] for r in full.collect()}
    assert names[32] == "n32_1" and names[71] == "n71_2" and names[6] == "n6_0"
    for where in [*WHERES[:4], "op = '+I' AND id < 60"]:
        for columns in (None, ["id", "name", "dt"]):
            got = read(spark, warehouse, "db.pk", where=where, columns=columns)
            assert _sorted(got) == _sorted(python(where, columns)), (where, columns)

    # a delete in the newest commit: that bucket's newest file is no longer final
    commit(_rows(100, 103, version=3), {101})
    got = read(spark, warehouse, "db.pk")
    assert _sorted(got) == _sorted(python())
    assert got.count() == 116


def test_a_filter_the_partitions_decide_is_not_tested_again_row_by_row(
    spark: SparkSession, warehouse: str
) -> None:
    catalog = _catalog(warehouse)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    _write(catalog, "db.t", _rows(0, 60))
    for where, decided, count in (
        ("dt = '2026-11-02'", True, 20),
        ("dt IN ('2026-11-01', '2026-11-03') OR dt IS NULL", True, 40),
        ("dt = '2026-11-02' AND id > 40", False, 6),
        ("dt > '2026-11-01' OR id = 0", False, 41),
    ):
        df = read(spark, warehouse, "db.t", where=where)
        plan = df._jdf.queryExecution().executedPlan().toString()
        # a Filter node, not the scan's PartitionFilters/DataFilters/PushedFilters fields
        assert (re.search(r"(^|\s)Filter \(", plan) is None) is decided, (where, plan)
        python = read(spark, warehouse, "db.t", where=where, options={"native-read": "false"})
        assert _sorted(df) == _sorted(python) and df.count() == count, where


def test_sql_queries_read_natively_with_the_same_rows(spark: SparkSession, warehouse: str) -> None:
    catalog = _catalog(warehouse)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    _write(catalog, "db.t", _rows(0, 60))
    query = "SELECT dt, count(*) AS n, sum(price) AS p FROM db.t WHERE id >= 9 GROUP BY dt"
    native = sql(spark, query, warehouse=warehouse)
    python = sql(spark, query, warehouse=warehouse, options={"native-read": "false"})
    assert _scan_kinds(native) == {"parquet"}
    assert _sorted(native) == _sorted(python)
    assert sum(r["n"] for r in native.collect()) == 51


def test_native_read_option_is_checked(spark: SparkSession, warehouse: str) -> None:
    catalog = _catalog(warehouse)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    _write(catalog, "db.t", _rows(0, 6))
    with pytest.raises(OptionError, match="native-read"):
        read(spark, warehouse, "db.t", options={"native-read": "yes"})


def test_conditions_spark_cannot_match_exactly_are_left_to_the_python_source() -> None:
    row_type = Schema.from_pyarrow_schema(SCHEMA).to_table_schema(0, 0, "db.t").fields
    assert spark_condition(parse_predicate("score > 1", row_type, "db.t")) is None
    assert spark_condition(parse_predicate("id > 1 OR score < 0", row_type, "db.t")) is None
    assert spark_condition(parse_predicate("name LIKE 'a\\_b%'", row_type, "db.t")) is None
    both = parse_predicate("id > 1 AND name LIKE 'x%'", row_type, "db.t")
    assert spark_condition(both) is not None


def test_partition_values_that_look_like_paths_or_globs_read_every_row(
    spark: SparkSession, warehouse: str
) -> None:
    """Paimon escapes partition values in paths as Hive does (a path Spark would still read as a
    glob would go to the Python source)."""
    catalog = _catalog(warehouse)
    schema = pa.schema([("p", pa.string()), ("id", pa.int64())])
    catalog.create_table("db.odd", Schema.from_pyarrow_schema(schema, partition_keys=["p"]))
    values = ["a b", "x:y%z=1", "c,d}e", "ü/ñ", "q[1]*?{2}"]
    _write(
        catalog,
        "db.odd",
        pa.table({"p": values * 2, "id": list(range(10))}, schema=schema),
    )
    for where in (None, "p = 'x:y%z=1'", "p <> 'a b'"):
        native = read(spark, warehouse, "db.odd", where=where)
        python = read(spark, warehouse, "db.odd", where=where, options={"native-read": "false"})
        assert _sorted(native) == _sorted(python), where
        assert len(_sorted(native)) == {None: 10, "p = 'x:y%z=1'": 2, "p <> 'a b'": 8}[where]
    # every glob character is escaped in the partition path, so Spark reads them all
    assert _scan_kinds(read(spark, warehouse, "db.odd")) == {"parquet"}
