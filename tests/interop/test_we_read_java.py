"""paimon_pyspark reads the tables Java Paimon writes, exactly as Java reads them.

Java creates and writes real tables in ``tmp_path`` (the layouts, formats and types of
``test_java_reads_ours``) in several commits; we read the latest snapshot and time-travel to each
one (``table.copy({"scan.snapshot-id": ...})``), and must return the rows Java's own reader
returns. Our filters and projections on Java's tables must equal the same filter applied in plain
Python to Java's rows, and our scan must prune Java's files by the value stats Java wrote.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from test_java_reads_ours import (
    ALL_TYPES,
    BUCKET_KEYS,
    CHAR_SHORT,
    DATE_KEY,
    DB,
    FORMATS,
    ID,
    INT_KEY,
    LTZ9,
    MAP_INT_KEY,
    MULTISET,
    N_ROWS,
    PART_VALUE,
    PRE_EPOCH_MICROS,
    STRING_KEY,
    TS9,
    Column,
    arrow_rows,
)

from paimon_pyspark import CatalogFactory, FileStoreTable, Predicate, PredicateBuilder

pytestmark = [pytest.mark.java, pytest.mark.slow]

COMMITS = [range(0, 100), range(100, 101), range(101, N_ROWS)]


def create_java(
    java_oracle: JavaOracle,
    warehouse: Path,
    name: str,
    columns: Sequence[Column],
    partition_keys: Sequence[str] = (),
    options: dict[str, str] | None = None,
) -> None:
    java_oracle.create_table(
        warehouse,
        DB,
        name,
        [(c.name, c.type_json) for c in columns],
        partition_keys=partition_keys,
        options=options,
    )


def write_java(
    java_oracle: JavaOracle,
    warehouse: Path,
    name: str,
    columns: Sequence[Column],
    commits: Sequence[range],
) -> list[int]:
    """One Java commit per range of rows; returns the snapshot id after each."""
    return [
        java_oracle.write_rows(warehouse, DB, name, arrow_rows(columns, rows)) for rows in commits
    ]


def our_table(warehouse: Path, name: str, snapshot_id: int | None = None) -> FileStoreTable:
    table = CatalogFactory.create({"warehouse": str(warehouse)}).get_table(f"{DB}.{name}")
    return table if snapshot_id is None else table.copy({"scan.snapshot-id": str(snapshot_id)})


def read_ours(
    table: FileStoreTable,
    predicate: Predicate | None = None,
    projection: list[str] | None = None,
) -> pa.Table:
    builder = table.new_read_builder()
    if predicate is not None:
        builder = builder.with_filter(predicate)
    if projection is not None:
        builder = builder.with_projection(projection)
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def assert_we_read_what_java_reads(
    java_oracle: JavaOracle, warehouse: Path, name: str, snapshot_id: int | None = None
) -> list[list[Any]]:
    """Compare our read with Java's (latest or ``snapshot_id``); returns Java's rows."""
    java = java_oracle.read_table(warehouse, DB, name, snapshot_id=snapshot_id)
    ours = read_ours(our_table(warehouse, name, snapshot_id))
    assert ours.column_names == java.fields
    want, have = sorted_rows(java.rows), sorted_rows(canonical_rows(ours))
    if have != want:
        assert len(have) == len(want), f"we read {len(have)} rows, Java {len(want)}"
        bad = [
            f
            for k, f in enumerate(java.fields)
            if sorted_rows([[r[k]] for r in have]) != sorted_rows([[r[k]] for r in want])
        ]
        pytest.fail(f"snapshot {snapshot_id}: our rows differ from Java's in columns {bad}")
    return java.rows


# -- types and formats ----------------------------------------------------------------------------


@pytest.mark.parametrize("file_format", FORMATS)
def test_we_read_every_type_java_writes_at_every_snapshot(
    java_oracle: JavaOracle, tmp_path: Path, file_format: str
) -> None:
    create_java(java_oracle, tmp_path, "types", ALL_TYPES, options={"file.format": file_format})
    ids = write_java(java_oracle, tmp_path, "types", ALL_TYPES, COMMITS)

    latest = assert_we_read_what_java_reads(java_oracle, tmp_path, "types")
    written = canonical_rows(arrow_rows(ALL_TYPES, range(N_ROWS)))
    assert sorted_rows(latest) == sorted_rows(written)
    for sid in ids:
        assert_we_read_what_java_reads(java_oracle, tmp_path, "types", sid)


JAVA_EDGE_CASES = [
    *(pytest.param(fmt, col) for fmt in ("parquet", "orc") for col in (TS9, LTZ9)),
    *(
        pytest.param(fmt, col)
        for fmt in FORMATS
        for col in (MAP_INT_KEY, MULTISET, PRE_EPOCH_MICROS)
    ),
    pytest.param("parquet", CHAR_SHORT),
    pytest.param("orc", CHAR_SHORT),
    pytest.param("avro", CHAR_SHORT),
]


@pytest.mark.parametrize(
    ("file_format", "column"), JAVA_EDGE_CASES, ids=lambda v: getattr(v, "name", v)
)
def test_we_read_java_type_with_format_specific_encoding(
    java_oracle: JavaOracle, tmp_path: Path, file_format: str, column: Column
) -> None:
    columns = [ID, column]
    create_java(java_oracle, tmp_path, "t", columns, options={"file.format": file_format})
    write_java(java_oracle, tmp_path, "t", columns, [range(60)])

    rows = assert_we_read_what_java_reads(java_oracle, tmp_path, "t")
    assert sorted_rows(rows) == sorted_rows(canonical_rows(arrow_rows(columns, range(60))))


# -- layouts --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param([INT_KEY], id="int-key"),
        pytest.param([DATE_KEY], id="date-key"),
        pytest.param([STRING_KEY], id="string-key"),
        pytest.param([DATE_KEY, INT_KEY], id="date-and-int-keys"),
        pytest.param([STRING_KEY, DATE_KEY], id="string-and-date-keys"),
    ],
)
def test_we_read_java_partitioned_table_and_filter_on_partition_keys(
    java_oracle: JavaOracle, tmp_path: Path, keys: list[Column]
) -> None:
    columns = [ID, *keys, PART_VALUE]
    create_java(java_oracle, tmp_path, "t", columns, partition_keys=[k.name for k in keys])
    ids = write_java(java_oracle, tmp_path, "t", columns, [range(0, 90), range(90, 150)])

    for sid in ids:
        assert_we_read_what_java_reads(java_oracle, tmp_path, "t", sid)
    rows = assert_we_read_what_java_reads(java_oracle, tmp_path, "t")
    table = our_table(tmp_path, "t")
    builder = table.new_read_builder().new_predicate_builder()
    first = keys[0].name
    position = [c.name for c in columns].index(first)
    some_value = next(r[position] for r in rows if r[position] not in (None, ""))
    literal = _literal(keys[0], some_value)
    for predicate, keep in [
        (builder.is_null(first), lambda r: r[position] is None),
        (builder.equal(first, literal), lambda r: r[position] == some_value),
        (builder.is_not_null(first), lambda r: r[position] is not None),
    ]:
        got = canonical_rows(read_ours(table, predicate))
        assert sorted_rows(got) == sorted_rows(r for r in rows if keep(r)), predicate


def _literal(column: Column, canonical: Any) -> Any:
    """A canonical value as the Python literal a user passes to the predicate builder."""
    if column.type_json == "DATE":
        return dt.date(1970, 1, 1) + dt.timedelta(days=canonical)
    return canonical


@pytest.mark.parametrize("key_name", list(BUCKET_KEYS))
def test_we_read_java_fixed_bucket_table(
    java_oracle: JavaOracle, tmp_path: Path, key_name: str
) -> None:
    keys = BUCKET_KEYS[key_name]
    columns = [ID, *keys, STRING_KEY, PART_VALUE]
    create_java(
        java_oracle,
        tmp_path,
        "t",
        columns,
        partition_keys=["region"],
        options={"bucket": "5", "bucket-key": ",".join(k.name for k in keys)},
    )
    ids = write_java(java_oracle, tmp_path, "t", columns, [range(0, 120), range(120, 200)])

    for sid in [*ids, None]:
        assert_we_read_what_java_reads(java_oracle, tmp_path, "t", sid)


def test_we_read_java_bucket_unaware_table_written_in_many_commits(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    columns = [ID, STRING_KEY, PART_VALUE]
    create_java(
        java_oracle, tmp_path, "t", columns, partition_keys=["region"], options={"bucket": "-1"}
    )
    ids = write_java(
        java_oracle, tmp_path, "t", columns, [range(s, s + 30) for s in range(0, 150, 30)]
    )

    assert len(ids) == 5
    for sid in ids:
        assert_we_read_what_java_reads(java_oracle, tmp_path, "t", sid)


# -- filters and projection on a Java table -------------------------------------------------------


@dataclass(frozen=True)
class FilterCase:
    """A predicate through our builder, and the same test in Python on canonical rows."""

    id: str
    build: Callable[[PredicateBuilder], Predicate]
    keep: Callable[[dict[str, Any]], bool]


def _nanos(value: dt.datetime) -> int:
    return (value - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1) * 1000


def _dec(text: str | None) -> Decimal | None:
    return None if text is None else Decimal(text)


_TS_LO = dt.datetime(1990, 1, 1)
_TS_HI = dt.datetime(2010, 6, 30, 12, 0, 0, 123000)
_DAY_LO, _DAY_HI = dt.date(1950, 1, 1), dt.date(2000, 1, 1)
FILTERS = [
    FilterCase("id-less-than", lambda b: b.less_than("id", 50), lambda r: r["id"] < 50),
    FilterCase(
        "id-between-files",
        lambda b: b.between("id", 95, 105),
        lambda r: 95 <= r["id"] <= 105,
    ),
    FilterCase("int-equal", lambda b: b.equal("int", 7919), lambda r: r["int"] == 7919),
    FilterCase(
        "big-not-equal", lambda b: b.not_equal("big", 0), lambda r: r["big"] not in (None, 0)
    ),
    FilterCase(
        "tiny-in",
        lambda b: b.is_in("tiny", [-128, 0, 5, 127]),
        lambda r: r["tiny"] in (-128, 0, 5, 127),
    ),
    FilterCase(
        "small-not-in",
        lambda b: b.is_not_in("small", [-32_768, 997]),
        lambda r: r["small"] is not None and r["small"] not in (-32_768, 997),
    ),
    FilterCase("flag-is-null", lambda b: b.is_null("flag"), lambda r: r["flag"] is None),
    FilterCase(
        "double-greater-than-nan-free",
        lambda b: b.greater_than("double", 1.5),
        lambda r: r["double"] is not None and not math.isnan(r["double"]) and r["double"] > 1.5,
    ),
    FilterCase(
        "float-less-or-equal",
        lambda b: b.less_or_equal("float", -10.0),
        lambda r: r["float"] is not None and r["float"] <= -10.0,
    ),
    FilterCase(
        "decimal-greater-or-equal",
        lambda b: b.greater_or_equal("dec10", Decimal("12.34")),
        lambda r: r["dec10"] is not None and Decimal(r["dec10"]) >= Decimal("12.34"),
    ),
    FilterCase(
        "wide-decimal-less-than",
        lambda b: b.less_than("dec38", Decimal("-1.5")),
        lambda r: (d := _dec(r["dec38"])) is not None and d < Decimal("-1.5"),
    ),
    FilterCase(
        "string-starts-with",
        lambda b: b.startswith("str", "ssssssssss"),
        lambda r: r["str"] is not None and r["str"].startswith("ssssssssss"),
    ),
    FilterCase(
        "long-string-greater-than-truncated-stats",
        lambda b: b.greater_than("str", "ssssssssssssssssssss"),
        lambda r: r["str"] is not None and r["str"] > "ssssssssssssssssssss",
    ),
    FilterCase(
        "varchar-contains",
        lambda b: b.contains("vc20", "☃"),
        lambda r: r["vc20"] is not None and "☃" in r["vc20"],
    ),
    FilterCase("char-equal", lambda b: b.equal("char5", "héllo"), lambda r: r["char5"] == "héllo"),
    FilterCase(
        "date-between",
        lambda b: b.between("date", _DAY_LO, _DAY_HI),
        lambda r: (
            r["date"] is not None
            and (_DAY_LO - dt.date(1970, 1, 1)).days
            <= r["date"]
            <= (_DAY_HI - dt.date(1970, 1, 1)).days
        ),
    ),
    FilterCase(
        "timestamp-range",
        lambda b: b.and_(b.greater_or_equal("ts3", _TS_LO), b.less_than("ts3", _TS_HI)),
        lambda r: r["ts3"] is not None and _nanos(_TS_LO) <= r["ts3"] < _nanos(_TS_HI),
    ),
    FilterCase(
        "ltz-greater-than",
        lambda b: b.greater_than("ltz6", dt.datetime(1990, 1, 1, tzinfo=dt.UTC)),
        lambda r: r["ltz6"] is not None and r["ltz6"] > _nanos(dt.datetime(1990, 1, 1)),
    ),
    FilterCase(
        "or-of-and",
        lambda b: b.or_(
            b.and_(b.greater_than("id", 200), b.is_not_null("str")),
            b.equal("name", "name-0007"),
        ),
        lambda r: (r["id"] > 200 and r["str"] is not None) or r["name"] == "name-0007",
    ),
    FilterCase("nothing-matches", lambda b: b.greater_than("id", 10_000), lambda r: False),
]


@pytest.fixture(scope="module")
def java_types_table(java_oracle: JavaOracle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Java parquet table of every type, written in three commits (three files)."""
    warehouse = tmp_path_factory.mktemp("java_types")
    create_java(java_oracle, warehouse, "types", ALL_TYPES)
    write_java(java_oracle, warehouse, "types", ALL_TYPES, COMMITS)
    return warehouse


@pytest.fixture(scope="module")
def java_types_rows(java_oracle: JavaOracle, java_types_table: Path) -> list[dict[str, Any]]:
    read = java_oracle.read_table(java_types_table, DB, "types")
    return [dict(zip(read.fields, row, strict=True)) for row in read.rows]


@pytest.mark.parametrize("case", FILTERS, ids=lambda c: c.id)
def test_our_filter_on_java_table_equals_python_filtering(
    java_types_table: Path, java_types_rows: list[dict[str, Any]], case: FilterCase
) -> None:
    table = our_table(java_types_table, "types")
    predicate = case.build(table.new_read_builder().new_predicate_builder())

    got = canonical_rows(read_ours(table, predicate))

    expected = [list(r.values()) for r in java_types_rows if case.keep(r)]
    assert sorted_rows(got) == sorted_rows(expected)


def _planned_files(table: FileStoreTable, predicate: Predicate) -> int:
    splits = table.new_read_builder().with_filter(predicate).new_scan().plan().splits()
    return sum(len(s.files) for s in splits)


def test_our_scan_prunes_java_files_by_javas_value_stats(java_types_table: Path) -> None:
    table = our_table(java_types_table, "types")
    b = table.new_read_builder().new_predicate_builder()

    assert _planned_files(table, b.is_not_null("id")) == 3
    assert _planned_files(table, b.less_than("id", 50)) == 1
    assert _planned_files(table, b.equal("id", 100)) == 1
    assert _planned_files(table, b.greater_than("id", 10_000)) == 0
    assert _planned_files(table, b.equal("name", "name-0150")) == 1


@pytest.mark.parametrize(
    "projection",
    [["str", "id"], ["map_si", "row_nested", "ts6"], ["ltz3"], [c.name for c in ALL_TYPES][::-1]],
    ids=["two", "nested", "one", "all-reversed"],
)
def test_our_projection_on_java_table_returns_javas_columns(
    java_types_table: Path, java_types_rows: list[dict[str, Any]], projection: list[str]
) -> None:
    table = our_table(java_types_table, "types")
    b = table.new_read_builder().new_predicate_builder()

    got = read_ours(table, b.greater_or_equal("id", 90), projection)

    assert got.column_names == projection
    expected = [[r[n] for n in projection] for r in java_types_rows if r["id"] >= 90]
    assert sorted_rows(canonical_rows(got)) == sorted_rows(expected)


def test_time_travel_on_java_table_reads_each_snapshot(
    java_oracle: JavaOracle, java_types_table: Path
) -> None:
    snapshots = java_oracle.snapshots(java_types_table, DB, "types")
    assert [s["id"] for s in snapshots] == [1, 2, 3]
    for s in snapshots:
        table = our_table(java_types_table, "types", s["id"])
        assert read_ours(table, projection=["id"]).num_rows == s["totalRecordCount"]
