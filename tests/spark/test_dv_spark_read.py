"""Spark reads of tables with deletion vectors (spark/native.py): the files with vectors go to
Spark's own Parquet reader, which keeps a row unless its file's vector marks its position
(``_metadata.row_index``); the rows equal the Python source (``native-read`` = ``false``) and
a model of what was written and deleted, through ``paimon_pyspark.spark.read``, the SQL door
and ``format("paimon")``. Primary-key tables with vectors are ours and Java's."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.spark import native, read, sql

pytestmark = pytest.mark.slow

INTEROP = Path(__file__).resolve().parents[1] / "interop"
if str(INTEROP) not in sys.path:
    sys.path.insert(0, str(INTEROP))

from dv_tables import BUILDERS  # noqa: E402
from java_oracle import JavaOracle, sorted_rows  # noqa: E402

DAYS = ["2026-11-01", "2026-11-02", "2026-11-03"]
SCHEMA = pa.schema(
    [
        ("dt", pa.string()),
        ("id", pa.int64()),
        ("name", pa.string()),
        ("flag", pa.bool_()),
        ("price", pa.decimal128(12, 3)),
        ("day", pa.date32()),
        ("_dv_row", pa.int32()),  # the name the native read would give its row-index column
    ]
)
MODES = {
    "unaware": {"bucket": "-1"},
    "fixed": {"bucket": "2", "bucket-key": "id", "deletion-vectors.bitmap64": "true"},
}

Row = dict[str, Any]
FILTERS: list[tuple[str | None, Callable[[Row], bool]]] = [
    (None, lambda r: True),
    ("id > 400", lambda r: r["id"] > 400),
    (f"dt = '{DAYS[1]}'", lambda r: r["dt"] == DAYS[1]),
    (
        "name LIKE 'n1%' OR flag = true",
        lambda r: (r["name"] is not None and r["name"].startswith("n1")) or r["flag"] is True,
    ),
    (
        "price >= 20.5 AND day < DATE '2026-03-01'",
        lambda r: (
            r["price"] is not None
            and r["price"] >= decimal.Decimal("20.5")
            and r["day"] is not None
            and r["day"] < dt.date(2026, 3, 1)
        ),
    ),
]
COLUMNS: list[list[str] | None] = [None, ["id", "name"]]


def _rows(lo: int, hi: int) -> list[Row]:
    def maybe(i: int, value: Any) -> Any:
        return None if i % 11 == 5 else value

    return [
        {
            "dt": DAYS[i % 3],
            "id": i,
            "name": maybe(i, f"n{i}"),
            "flag": maybe(i + 1, i % 3 == 1),
            "price": maybe(i + 2, decimal.Decimal(i * 250).scaleb(-3)),
            "day": maybe(i + 3, dt.date(2026, 1, 1) + dt.timedelta(days=i % 120)),
            "_dv_row": i * 2,
        }
        for i in range(lo, hi)
    ]


def _write(table: FileStoreTable, rows: list[Row]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(pa.Table.from_pylist(rows, SCHEMA))
        builder.new_commit().commit(write.prepare_commit())


def _catalog(warehouse: str) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    return catalog


def _delete(catalog: FileSystemCatalog, name: str, model: dict[int, Row], ids: list[int]) -> None:
    table = catalog.get_table(f"db.{name}")
    pb = table.new_read_builder().new_predicate_builder()
    assert table.delete(pb.is_in("id", ids)) == len(set(ids) & set(model))
    for i in ids:
        model.pop(i, None)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, dict[int, Row]]]:
    """Append tables with vectors (bucket-unaware, 32-bit; fixed buckets, 64-bit), partitioned
    by ``dt``: three commits, two deletes (the second adding to the first's vectors), a fourth
    commit whose files have no vector, then every row of its ``DAYS[0]`` files deleted. Returns
    the warehouse and each table's live rows by id."""
    warehouse = str(tmp_path_factory.mktemp("dv_read") / "wh")
    catalog = _catalog(warehouse)
    models: dict[str, dict[int, Row]] = {}
    for mode, options in MODES.items():
        schema = Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["dt"],
            options={"deletion-vectors.enabled": "true", **options},
        )
        catalog.create_table(f"db.{mode}", schema)
        model: dict[int, Row] = {}
        for c in range(3):
            rows = _rows(c * 200, c * 200 + 200)
            _write(catalog.get_table(f"db.{mode}"), rows)
            model.update((r["id"], r) for r in rows)
        _delete(catalog, mode, model, [i for i in range(600) if i % 7 == 0])
        _delete(catalog, mode, model, list(range(100, 181)))
        rows = _rows(600, 690)
        _write(catalog.get_table(f"db.{mode}"), rows)
        model.update((r["id"], r) for r in rows)
        _delete(catalog, mode, model, [i for i in range(600, 690) if i % 3 == 0])
        models[mode] = model
    return warehouse, models


def _key(row: tuple[Any, ...]) -> str:
    return repr(row)


def _sorted(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=_key)


def _ids(df: DataFrame) -> list[int]:
    return sorted(r[0] for r in df.collect())


def _expected(
    model: dict[int, Row], keep: Callable[[Row], bool], columns: list[str] | None
) -> list[tuple[Any, ...]]:
    names = columns or SCHEMA.names
    return sorted((tuple(r[n] for n in names) for r in model.values() if keep(r)), key=_key)


PYTHON_READ = "MapInArrow"
"""The plan node of the splits our reader reads (spark/read.py ``payload_read``)."""


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def _file_paths(warehouse: str, name: str) -> dict[str, tuple[int, int | None]]:
    """The live files of ``db.name`` as Spark names them: (rows, rows their vector deletes)."""
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(f"db.{name}")
    out: dict[str, tuple[int, int | None]] = {}
    for split in table.new_read_builder().new_scan().plan().splits():
        deletions = split.deletion_files or (None,) * len(split.files)
        for f, d in zip(split.files, deletions, strict=True):
            deleted = None if d is None else d.cardinality
            out[f"file://{split.bucket_path}/{f.file_name}"] = (f.row_count, deleted)
    return out


@pytest.mark.parametrize("mode", sorted(MODES))
def test_files_with_vectors_are_read_by_spark_parquet_with_their_row_positions(
    spark: SparkSession, tables: tuple[str, dict[str, dict[int, Row]]], mode: str
) -> None:
    warehouse, models = tables
    files = _file_paths(warehouse, mode)
    marked = {p for p, (_, deleted) in files.items() if deleted is not None}
    gone = {p for p, (rows, deleted) in files.items() if deleted == rows}
    assert marked - gone and set(files) - marked and gone  # all three kinds are there

    df = read(spark, warehouse, f"db.{mode}")
    plan = _plan(df)
    assert "FileScan parquet" in plan
    assert PYTHON_READ not in plan
    assert "_tmp_metadata_row_index" in plan  # the scan of the files with vectors
    # every live file goes to Spark's Parquet reader, but one whose rows are all deleted
    assert {p.replace("file:///", "file:/") for p in files} - {
        p.replace("file:///", "file:/") for p in gone
    } == {p.replace("file:///", "file:/") for p in df.inputFiles()}
    assert df.count() == len(models[mode])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_rows_equal_the_python_source_and_the_model(
    spark: SparkSession, tables: tuple[str, dict[str, dict[int, Row]]], mode: str
) -> None:
    warehouse, models = tables
    for where, keep in FILTERS:
        for columns in COLUMNS:
            native_df = read(spark, warehouse, f"db.{mode}", where=where, columns=columns)
            assert PYTHON_READ not in _plan(native_df), where
            python_df = read(
                spark,
                warehouse,
                f"db.{mode}",
                where=where,
                columns=columns,
                options={"native-read": "false"},
            )
            assert PYTHON_READ in _plan(python_df)
            expected = _expected(models[mode], keep, columns)
            assert _sorted(native_df) == expected, (where, columns)
            assert _sorted(python_df) == expected, (where, columns)


@pytest.mark.datasource
def test_the_sql_door_and_format_paimon_apply_the_vectors(
    spark: SparkSession, tables: tuple[str, dict[str, dict[int, Row]]]
) -> None:
    warehouse, models = tables
    model = models["unaware"]
    door = sql(
        spark,
        "SELECT id, name FROM db.unaware WHERE id BETWEEN 90 AND 200 OR dt = '2026-11-03'",
        warehouse=warehouse,
    )
    assert "_tmp_metadata_row_index" in _plan(door)
    keep: Callable[[Row], bool] = lambda r: 90 <= r["id"] <= 200 or r["dt"] == DAYS[2]  # noqa: E731
    assert _sorted(door) == _expected(model, keep, ["id", "name"])
    count = sql(spark, "SELECT count(*) FROM db.fixed", warehouse=warehouse).collect()[0][0]
    assert count == len(models["fixed"])

    source = (
        spark.read.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.fixed")
        .load()
        .select("id", "name")
    )
    assert _sorted(source) == _expected(models["fixed"], lambda r: True, ["id", "name"])


def test_a_frame_keeps_its_snapshot_vectors_and_a_new_delete_is_seen(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The filtered relation is kept per files and vectors: a read after another delete gets
    new vectors, a frame read before keeps the rows of its snapshot."""
    warehouse = str(tmp_path / "wh")
    catalog = _catalog(warehouse)
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(SCHEMA, options={"deletion-vectors.enabled": "true"}),
    )
    model: dict[int, Row] = {}
    rows = _rows(0, 300)
    _write(catalog.get_table("db.t"), rows)
    model.update((r["id"], r) for r in rows)
    _delete(catalog, "t", model, list(range(0, 300, 4)))
    before = read(spark, warehouse, "db.t", columns=["id"])
    again = read(spark, warehouse, "db.t", columns=["id"])
    assert _ids(before) == _ids(again) == sorted(model)
    kept = sorted(model)
    _delete(catalog, "t", model, list(range(1, 300, 4)))
    after = read(spark, warehouse, "db.t", columns=["id"])
    assert _ids(after) == sorted(model)
    assert _ids(before) == kept
    _delete(catalog, "t", model, list(range(300)))  # every row of the file: it is not read
    empty = read(spark, warehouse, "db.t", columns=["id", "name"])
    assert empty.columns == ["id", "name"] and empty.collect() == []


def test_files_of_one_size_find_their_own_vectors(spark: SparkSession, tmp_path: Path) -> None:
    """A row finds its file's vector by the file's size: two files of the same size, with
    different rows deleted, each keep their own rows."""
    warehouse = str(tmp_path / "wh")
    catalog = _catalog(warehouse)
    schema = pa.schema([("id", pa.int64()), ("tag", pa.string())])
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(schema, options={"deletion-vectors.enabled": "true"}),
    )
    for tag in ("a", "b"):
        table = catalog.get_table("db.t")
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.table({"id": list(range(20)), "tag": [tag] * 20}, schema))
            builder.new_commit().commit(write.prepare_commit())
    sizes = [os.path.getsize(p[len("file://") :]) for p in _file_paths(warehouse, "t")]
    assert len(sizes) == 2 and sizes[0] == sizes[1]
    table = catalog.get_table("db.t")
    pb = table.new_read_builder().new_predicate_builder()
    assert table.delete(pb.and_(pb.equal("tag", "a"), pb.less_than("id", 5))) == 5
    table = catalog.get_table("db.t")
    assert table.delete(pb.and_(pb.equal("tag", "b"), pb.greater_or_equal("id", 12))) == 8
    df = read(spark, warehouse, "db.t")
    assert "_tmp_metadata_row_index" in _plan(df)
    expected = [(i, "a") for i in range(5, 20)] + [(i, "b") for i in range(12)]
    assert _sorted(df) == sorted(expected, key=_key)


PK_SCHEMA = pa.schema(
    [
        pa.field("pt", pa.string(), nullable=False),
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        ("n", pa.int32()),
    ]
)


@pytest.mark.parametrize("bucket", ["2", "-1"])
def test_our_primary_key_table_with_vectors_reads_through_spark_alone(
    spark: SparkSession, tmp_path: Path, bucket: str
) -> None:
    """Upserts and a delete into a primary-key table with vectors leave files above level 0
    whose superseded rows are marked: every split is raw, read by Spark with the vectors."""
    warehouse = str(tmp_path / "wh")
    catalog = _catalog(warehouse)
    options = {"deletion-vectors.enabled": "true", "bucket": bucket}
    catalog.create_table(
        "db.pk",
        Schema.from_pyarrow_schema(
            PK_SCHEMA, partition_keys=["pt"], primary_keys=["pt", "k"], options=options
        ),
    )
    model: dict[tuple[str, int], tuple[Any, ...]] = {}

    def upsert(keys: range, version: int) -> None:
        rows = [(DAYS[k % 2], k, f"v{k}-{version}", version) for k in keys]
        table = catalog.get_table("db.pk")
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            data = [dict(zip(PK_SCHEMA.names, r, strict=True)) for r in rows]
            write.write_arrow(pa.Table.from_pylist(data, PK_SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
        model.update(((r[0], r[1]), r) for r in rows)

    upsert(range(200), 1)
    upsert(range(0, 200, 3), 2)
    upsert(range(150, 260), 3)
    table = catalog.get_table("db.pk")
    pb = table.new_read_builder().new_predicate_builder()
    table.delete(pb.between("k", 40, 60))
    model = {key: r for key, r in model.items() if not 40 <= key[1] <= 60}
    upsert(range(50, 55), 4)
    assert any(f.level > 0 for f in _files_with_vectors(catalog.get_table("db.pk")))

    reads: list[tuple[str | None, list[str] | None, Callable[[Row], bool]]] = [
        (None, None, lambda r: True),
        ("k > 100 AND n = 3", ["k", "v"], lambda r: r["k"] > 100 and r["n"] == 3),
        (f"pt = '{DAYS[1]}'", None, lambda r: r["pt"] == DAYS[1]),
    ]
    rows = [dict(zip(PK_SCHEMA.names, r, strict=True)) for r in model.values()]
    for where, columns, keep in reads:
        df = read(spark, warehouse, "db.pk", where=where, columns=columns)
        plan = _plan(df)
        assert "_tmp_metadata_row_index" in plan and PYTHON_READ not in plan, where
        python_df = read(
            spark,
            warehouse,
            "db.pk",
            where=where,
            columns=columns,
            options={"native-read": "false"},
        )
        names = columns or PK_SCHEMA.names
        expected = sorted((tuple(r[n] for n in names) for r in rows if keep(r)), key=_key)
        assert _sorted(df) == expected, where
        assert _sorted(python_df) == expected, where


def _files_with_vectors(table: FileStoreTable) -> list[Any]:
    return [
        f
        for s in table.new_read_builder().new_scan().plan().splits()
        for f, d in zip(s.files, s.deletion_files or (None,) * len(s.files), strict=True)
        if d is not None
    ]


@pytest.fixture(scope="module")
def java() -> Iterator[JavaOracle]:
    """Java Paimon 1.4.2 (tests/interop/conftest.py's oracle, for this module's Java test)."""
    java_dir = INTEROP.parents[1] / ".cache" / "java"
    jar = java_dir / "paimon-bundle-1.4.2.jar"
    classes = java_dir / "classes"
    missing = [str(p) for p in (jar, classes / "paimonoracle" / "PaimonOracle.class")]
    missing = [p for p in missing if not Path(p).is_file()]
    if missing:
        pytest.fail(f"Java Paimon oracle not built (missing {', '.join(missing)})", pytrace=False)
    oracle = JavaOracle(jar, classes, log_path=java_dir / f"oracle-jvm-{os.getpid()}-dv.log")
    try:
        yield oracle
    finally:
        oracle.close()


JAVA_TABLES = ["pk_fixed_partitioned", "pk_dynamic_partitioned", "pk_cross", "append_fixed_64"]


@pytest.mark.java
def test_java_written_tables_with_vectors_read_natively(
    spark: SparkSession, java: JavaOracle, tmp_path: Path
) -> None:
    """Tables Java wrote with vectors (primary-key upserts and deletes over several commits,
    Spark's DELETE on an append table): Spark's Parquet reader applies Java's vectors."""
    warehouse = str(tmp_path / "wh")
    for name in JAVA_TABLES:
        expected = BUILDERS[name](java, warehouse, "db", name)
        table = CatalogFactory.create({"warehouse": warehouse}).get_table(f"db.{name}")
        assert _files_with_vectors(table), name
        df = read(spark, warehouse, f"db.{name}", columns=["k", "v", "n", "pt"])
        plan = _plan(df)
        assert "_tmp_metadata_row_index" in plan and PYTHON_READ not in plan, name
        assert sorted_rows(tuple(r) for r in df.collect()) == expected, name
        some = read(spark, warehouse, f"db.{name}", where="k >= 100", columns=["k", "pt"])
        assert sorted_rows(tuple(r) for r in some.collect()) == sorted_rows(
            [r[0], r[3]] for r in expected if r[0] >= 100
        ), name


def test_native_module_reads_the_vectors_once_per_files_and_vectors(
    spark: SparkSession, tables: tuple[str, dict[str, dict[int, Row]]]
) -> None:
    warehouse, _ = tables
    native._deleting_frames.clear()
    first = read(spark, warehouse, "db.unaware", columns=["id"])
    kept = dict(native._deleting_frames[spark])
    second = read(spark, warehouse, "db.unaware", columns=["id"])
    assert dict(native._deleting_frames[spark]) == kept and len(kept) == 1
    assert _sorted(first) == _sorted(second)
