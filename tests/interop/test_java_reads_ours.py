"""Java Paimon reads the tables paimon_pyspark writes, row for row.

We write real tables in ``tmp_path`` with the public API and read them back with Java Paimon
1.4.2 through the session's JVM (``java_oracle``): every layout (unpartitioned, one and two
partition keys with null and odd partition values, bucket -1, fixed buckets with a bucket key),
every data-file format (parquet, orc, avro) and every data type, at the latest snapshot and by
time travel to each snapshot we committed.

Where Java fixes the layout (partition directory names, the bucket of a row), Java is asked too:
it writes a twin table from the same rows, and ``java_oracle.buckets`` hashes each row we put in
a bucket directory. Known product gaps are kept as ``xfail(strict=True)`` cases whose reason
names the bug, so a fix turns them red until the mark is removed.

Two Java behaviours shape the data: CHAR values in the all-types table have the full length (Java's
ORC reader strips trailing blanks, also from files Java wrote itself; ``CHAR_SHORT`` covers short
ones), and timestamps stay within Arrow's nanosecond range.

The column definitions and table helpers here are shared with ``test_we_read_java`` and
``test_pypaimon_interop``, so the three directions check the same types and layouts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from java_oracle import JavaOracle, TypeJson, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.errors import PaimonError
from paimon_pyspark.types.arrow import assign_field_ids, to_arrow_type
from paimon_pyspark.types.data_types import DataType, parse_type_json

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
N_ROWS = 240
FORMATS = ["parquet", "orc", "avro"]


# -- columns: a Paimon type and a value for row i ------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column: its Paimon type as schema-file JSON and its (non-null) value in row ``i``."""

    name: str
    type_json: TypeJson
    value: Callable[[int], Any]

    @property
    def nullable(self) -> bool:
        return self.paimon_type.nullable

    @property
    def paimon_type(self) -> DataType:
        return parse_type_json(_with_field_ids(self.type_json))

    @property
    def arrow_type(self) -> pa.DataType:
        return to_arrow_type(self.paimon_type)


def _with_field_ids(type_json: TypeJson) -> TypeJson:
    """Row fields in our schema parser need an id; ``assign_field_ids`` renumbers them."""
    if isinstance(type_json, str):
        return type_json
    out = dict(type_json)
    for key in ("element", "key", "value"):
        if key in out:
            out[key] = _with_field_ids(out[key])
    if "fields" in out:
        out["fields"] = [
            {**f, "id": f.get("id", 0), "type": _with_field_ids(f["type"])} for f in out["fields"]
        ]
    return out


def _row(*fields: tuple[str, TypeJson]) -> dict[str, Any]:
    return {"type": "ROW", "fields": [{"name": n, "type": t} for n, t in fields]}


_FLOAT_SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0]
# About 90 days: 240 rows cover 1940 .. 1999, and no value falls in (-1 s, 0), where Java misreads
# the ORC files it writes itself.
_MS_SPAN = 7_777_777_777
_DATE_EDGES = {1: -719_162, 2: 2_932_896}  # 0001-01-01 and 9999-12-31


def _float(i: int) -> float:
    return _FLOAT_SPECIALS[(i // 8) % 5] if i % 8 == 0 else (i - 120) * 0.375


def _date(i: int) -> int:
    return _DATE_EDGES.get(i, (i - 120) * 211)


def _millis(i: int) -> int:
    return (i - 120) * _MS_SPAN + i


def _sub_milli(millis: int, fraction: int, per_milli: int) -> int:
    """``millis`` in units of 1/per_milli ms, with a sub-millisecond part after the epoch only
    (before it, ORC files we write are unreadable by Java: see ``PRE_EPOCH_MICROS``)."""
    return millis * per_milli + (fraction % per_milli if millis >= 0 else 0)


# Every column but the NOT NULL ones is null in about one row of nine.
ID = Column("id", "INT NOT NULL", lambda i: i)
ALL_TYPES: list[Column] = [
    ID,
    Column("name", "STRING NOT NULL", lambda i: f"name-{i:04d}"),
    Column("flag", "BOOLEAN", lambda i: i % 3 == 0),
    Column("tiny", "TINYINT", lambda i: (i * 37) % 256 - 128),
    Column("small", "SMALLINT", lambda i: (i * 997) % 65_536 - 32_768),
    Column("int", "INT", lambda i: [-(2**31), 2**31 - 1][i % 2] if i < 4 else (i - 120) * 7919),
    Column("big", "BIGINT", lambda i: [-(2**63), 2**63 - 1][i % 2] if i < 4 else (i - 99) << 40),
    Column("float", "FLOAT", _float),
    Column("double", "DOUBLE", lambda i: _float(i) if i % 8 == 0 else (i - 120) / 7),
    Column("dec10", "DECIMAL(10, 2)", lambda i: Decimal(i * 83_333_333 - 9_999_999_999) / 100),
    Column(
        "dec38",
        "DECIMAL(38, 6)",
        lambda i: Decimal((i - 120) * 7 * 10**34 + i).scaleb(-6),
    ),
    Column("dec18", "DECIMAL(18, 4)", lambda i: Decimal((i - 120) * 10**15 + i).scaleb(-4)),
    Column("char5", "CHAR(5)", lambda i: ["héllo", f"c{i:04d}", "zzzzz", "ab cd"][i % 4]),
    Column("vc20", "VARCHAR(20)", lambda i: f"v-{i}-" + "☃𝄞é"[: i % 4] if i % 10 else ""),
    Column("str", "STRING", lambda i: "s" * (i % 37) + f"{i}" + "𝄞" * (i % 2)),
    Column("bytes", "BYTES", lambda i: bytes([i % 256, 255 - i % 256]) * (i % 4)),
    Column("bin4", "BINARY(4)", lambda i: i.to_bytes(4, "big")),
    Column("varbin", "VARBINARY(10)", lambda i: b"\x00\xff"[: i % 3] + b"vb"),
    Column("date", "DATE", _date),
    Column("time", "TIME", lambda i: (i * 3_599_000) % 86_400_000),
    Column("time3", "TIME(3)", lambda i: (i * 1_234_567) % 86_400_000),
    Column("ts0", "TIMESTAMP(0)", lambda i: (i - 120) * _MS_SPAN // 1000 * 1000),
    Column("ts3", "TIMESTAMP(3)", _millis),
    Column("ts6", "TIMESTAMP(6)", lambda i: _sub_milli(_millis(i), i * 37, 1000)),
    Column("ltz3", "TIMESTAMP(3) WITH LOCAL TIME ZONE", lambda i: _millis(239 - i)),
    Column(
        "ltz6",
        "TIMESTAMP(6) WITH LOCAL TIME ZONE",
        lambda i: _sub_milli(_millis(239 - i), i, 1000),
    ),
    Column("arr_int", {"type": "ARRAY", "element": "INT"}, lambda i: [i, None, -i][: i % 4]),
    Column(
        "arr_str", {"type": "ARRAY", "element": "STRING"}, lambda i: [f"a{i}", None, ""][: i % 4]
    ),
    Column(
        "arr_nn",
        {"type": "ARRAY NOT NULL", "element": "BIGINT NOT NULL"},
        lambda i: list(range(i % 3)),
    ),
    Column(
        "map_si",
        {"type": "MAP", "key": "STRING NOT NULL", "value": "INT"},
        lambda i: [(f"k{j}", None if j == 1 else i * j) for j in range(i % 4)],
    ),
    Column("row", _row(("a", "INT"), ("b", "STRING")), lambda i: {"a": i, "b": f"b{i}"}),
    Column(
        "arr_row",
        {
            "type": "ARRAY",
            "element": _row(("x", "INT"), ("tags", {"type": "ARRAY", "element": "STRING"})),
        },
        lambda i: [{"x": i, "tags": [f"t{i}", None]}, None, {"x": None, "tags": None}][: i % 4],
    ),
    Column(
        "map_arr",
        {"type": "MAP", "key": "STRING NOT NULL", "value": {"type": "ARRAY", "element": "INT"}},
        lambda i: [("k", [i, None]), ("e", []), ("n", None)][: i % 4],
    ),
    Column(
        "row_nested",
        _row(("inner", _row(("q", "BIGINT"))), ("l", {"type": "ARRAY", "element": "DOUBLE"})),
        lambda i: {"inner": None if i % 4 == 0 else {"q": i << 33}, "l": [i / 3, None]},
    ),
    Column(
        "row_map",
        _row(("m", {"type": "MAP", "key": "STRING NOT NULL", "value": "INT"})),
        lambda i: {"m": [(f"r{i}", i)] if i % 5 else None},
    ),
]

# Types whose encoding differs per format (or has a known gap in one); each is checked alone, per
# format, below.
TS9 = Column("ts9", "TIMESTAMP(9)", lambda i: _sub_milli(_millis(i), i * 1001, 1_000_000))
LTZ9 = Column(
    "ltz9",
    "TIMESTAMP(9) WITH LOCAL TIME ZONE",
    lambda i: _sub_milli(_millis(239 - i), i, 1_000_000),
)
# CHAR values shorter than the length: Java's ORC writer pads them, its reader strips the blanks.
CHAR_SHORT = Column("char_short", "CHAR(5)", lambda i: ["a", "ab", "", "héll", "a b"][i % 5])
# Before 1970 with a sub-millisecond part (never in (-1 s, 0): Java misreads its own ORC there).
PRE_EPOCH_MICROS = Column("ts6_pre", "TIMESTAMP(6)", lambda i: -(10**6) * (i + 1) - 1 - i % 999)
MAP_INT_KEY = Column(
    "map_is",
    {"type": "MAP", "key": "INT NOT NULL", "value": "STRING"},
    lambda i: [(j - 1, f"m{j}" if j else None) for j in range(i % 4)],
)
MULTISET = Column(
    "mset",
    {"type": "MULTISET", "element": "STRING NOT NULL"},
    lambda i: [(f"e{j}", j + 1) for j in range(i % 3)],
)

_ORC_PRE_EPOCH = (
    "product bug: pyarrow's ORC writer encodes a pre-1970 timestamp with a sub-millisecond part "
    "so that Java's OrcTimestampColumnVector fails (IllegalArgumentException in "
    "Timestamp.fromEpochMillis); whole-millisecond and post-1970 values are read fine"
)
EDGE_CASES = [
    pytest.param("parquet", TS9),
    pytest.param("orc", TS9),
    pytest.param("parquet", LTZ9),
    pytest.param("orc", LTZ9),
    *(
        pytest.param(fmt, column)
        for fmt in FORMATS
        for column in (MAP_INT_KEY, MULTISET, CHAR_SHORT)
    ),
    pytest.param("parquet", PRE_EPOCH_MICROS),
    pytest.param(
        "orc", PRE_EPOCH_MICROS, marks=pytest.mark.xfail(strict=True, reason=_ORC_PRE_EPOCH)
    ),
    pytest.param("avro", PRE_EPOCH_MICROS),
]


def arrow_rows(columns: Sequence[Column], rows: range | Sequence[int]) -> pa.Table:
    """Rows ``rows`` of ``columns`` as an Arrow table in the table's own Arrow types."""
    arrays = []
    for position, col in enumerate(columns):
        values = [None if col.nullable and (i + position) % 9 == 4 else col.value(i) for i in rows]
        arrays.append(pa.array(values, col.arrow_type))
    return pa.table(arrays, names=[c.name for c in columns])


# -- our side -------------------------------------------------------------------------------------


def create_ours(
    warehouse: Path,
    name: str,
    columns: Sequence[Column],
    partition_keys: Sequence[str] = (),
    options: dict[str, str] | None = None,
) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    fields, _ = assign_field_ids([(c.name, c.paimon_type) for c in columns])
    schema = Schema(fields=fields, partition_keys=list(partition_keys), options=options or {})
    catalog.create_table(f"{DB}.{name}", schema)
    return catalog.get_table(f"{DB}.{name}")


def write_ours(table: FileStoreTable, data: pa.Table) -> int:
    """One batch write and commit; returns the id of the snapshot it made."""
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)
    latest = table.snapshot_manager.latest_id()
    assert latest is not None
    return latest


def assert_same_rows(got: Sequence[Sequence[Any]], expected: pa.Table) -> None:
    """Order-free row equality; on failure name the columns that differ."""
    want = sorted_rows(canonical_rows(expected))
    have = sorted_rows(got)
    if have == want:
        return
    assert len(have) == len(want), f"{len(have)} rows read, {len(want)} written"
    names = expected.column_names
    bad = [
        name
        for k, name in enumerate(names)
        if sorted_rows([[r[k]] for r in have]) != sorted_rows([[r[k]] for r in want])
    ]
    first = next(k for k, (a, b) in enumerate(zip(have, want, strict=True)) if a != b)
    pytest.fail(
        f"Java read other rows than we wrote; differing columns {bad}; first differing row:\n"
        f"  read    {have[first]}\n  written {want[first]}"
    )


def data_files(table_dir: Path) -> list[Path]:
    return sorted(p for p in table_dir.rglob("data-*") if p.is_file())


# -- types and formats ----------------------------------------------------------------------------


@pytest.mark.parametrize("file_format", FORMATS)
def test_java_reads_every_type_we_write_at_every_snapshot(
    java_oracle: JavaOracle, tmp_path: Path, file_format: str
) -> None:
    table = create_ours(tmp_path, "types", ALL_TYPES, options={"file.format": file_format})
    commits = [range(0, 100), range(100, 101), range(101, N_ROWS)]
    written = [arrow_rows(ALL_TYPES, rows) for rows in commits]
    ids = [write_ours(table, data) for data in written]

    assert ids == [1, 2, 3]
    read = java_oracle.read_table(tmp_path, DB, "types")
    assert read.fields == [c.name for c in ALL_TYPES]
    assert_same_rows(read.rows, pa.concat_tables(written))
    for sid in ids:
        expected = pa.concat_tables(written[:sid])
        assert_same_rows(
            java_oracle.read_table(tmp_path, DB, "types", snapshot_id=sid).rows, expected
        )
    snapshots = java_oracle.snapshots(tmp_path, DB, "types")
    assert [(s["id"], s["commitKind"], s["totalRecordCount"]) for s in snapshots] == [
        (1, "APPEND", 100),
        (2, "APPEND", 101),
        (3, "APPEND", N_ROWS),
    ]
    table_dir = tmp_path / f"{DB}.db" / "types"
    assert {p.parent.name for p in data_files(table_dir)} == {"bucket-0"}
    assert all(p.suffix == f".{file_format}" for p in data_files(table_dir))


@pytest.mark.parametrize(("file_format", "column"), EDGE_CASES, ids=lambda v: getattr(v, "name", v))
def test_java_reads_type_with_format_specific_encoding(
    java_oracle: JavaOracle, tmp_path: Path, file_format: str, column: Column
) -> None:
    columns = [ID, column]
    table = create_ours(tmp_path, "t", columns, options={"file.format": file_format})
    data = arrow_rows(columns, range(60))
    write_ours(table, data)

    assert_same_rows(java_oracle.read_table(tmp_path, DB, "t").rows, data)


@pytest.mark.parametrize("column", [TS9, LTZ9], ids=lambda c: c.name)
def test_avro_table_with_nanosecond_timestamp_is_refused_like_java(
    tmp_path: Path, column: Column
) -> None:
    columns = [ID, column]
    with pytest.raises(PaimonError):
        table = create_ours(tmp_path, "t", columns, options={"file.format": "avro"})
        write_ours(table, arrow_rows(columns, range(3)))


# -- partitions -----------------------------------------------------------------------------------

PART_VALUE = Column("v", "STRING", lambda i: f"value-{i}")
INT_KEY = Column("p", "INT", lambda i: [7, -1, 0, 2**31 - 1][i % 4])
DATE_KEY = Column("day", "DATE", lambda i: [19_782, -1, 0, 2_932_896][i % 4])
# Odd texts: escaped characters, a blank (Java's default partition too) and non-ASCII.
STRING_KEY = Column("region", "STRING", lambda i: ["eu", "a/b=c", " ", "ünï", "x%y", ""][i % 6])


def java_twin_partitions(
    java_oracle: JavaOracle,
    warehouse: Path,
    columns: Sequence[Column],
    partition_keys: Sequence[str],
    data: pa.Table,
) -> set[str]:
    """The partition directories Java makes for the same rows in the same table layout."""
    java_oracle.create_table(
        warehouse,
        DB,
        "java_twin",
        [(c.name, c.type_json) for c in columns],
        partition_keys=partition_keys,
    )
    java_oracle.write_rows(warehouse, DB, "java_twin", data)
    return partition_dirs(warehouse / f"{DB}.db" / "java_twin")


def partition_dirs(table_dir: Path) -> set[str]:
    return {str(p.parent.parent.relative_to(table_dir)) for p in data_files(table_dir)}


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
def test_java_reads_partitioned_table_with_null_partition_values(
    java_oracle: JavaOracle, tmp_path: Path, keys: list[Column]
) -> None:
    columns = [ID, *keys, PART_VALUE]
    names = [k.name for k in keys]
    first, second = arrow_rows(columns, range(0, 90)), arrow_rows(columns, range(90, 150))
    table = create_ours(tmp_path, "t", columns, partition_keys=names)
    write_ours(table, first)
    write_ours(table, second)

    assert_same_rows(
        java_oracle.read_table(tmp_path, DB, "t").rows, pa.concat_tables([first, second])
    )
    assert_same_rows(java_oracle.read_table(tmp_path, DB, "t", snapshot_id=1).rows, first)
    ours = partition_dirs(tmp_path / f"{DB}.db" / "t")
    assert any("__DEFAULT_PARTITION__" in d for d in ours)
    expected = java_twin_partitions(
        java_oracle, tmp_path, columns, names, pa.concat_tables([first, second])
    )
    assert ours == expected


@pytest.mark.parametrize("file_format", FORMATS)
@pytest.mark.parametrize(
    ("keys", "options"),
    [
        pytest.param([DATE_KEY, INT_KEY], {}, id="date-int-keys"),
        pytest.param([STRING_KEY], {"bucket": "3", "bucket-key": "id"}, id="string-key-bucketed"),
    ],
)
def test_java_reads_every_type_in_partitioned_tables_of_every_format(
    java_oracle: JavaOracle,
    tmp_path: Path,
    file_format: str,
    keys: list[Column],
    options: dict[str, str],
) -> None:
    """Rows are regrouped per partition and bucket here (take + slice), unlike in one file."""
    columns = [*ALL_TYPES, *keys]
    table = create_ours(
        tmp_path,
        "t",
        columns,
        partition_keys=[k.name for k in keys],
        options={"file.format": file_format, **options},
    )
    data = arrow_rows(columns, range(120))
    write_ours(table, data)

    assert_same_rows(java_oracle.read_table(tmp_path, DB, "t").rows, data)


# -- buckets --------------------------------------------------------------------------------------

BUCKET_KEYS = {
    "int": [Column("k", "INT", lambda i: i * 7 - 500)],
    "bigint-string": [
        Column("k", "BIGINT", lambda i: (i - 100) << 35),
        Column("s", "STRING", lambda i: f"key-{i % 17}-é"),
    ],
    "date-decimal-timestamp": [
        Column("k", "DATE", _date),
        Column("dec", "DECIMAL(10, 2)", lambda i: Decimal(i * 1_234_567 - 99_999_999) / 100),
        Column("ts", "TIMESTAMP(3)", lambda i: (i - 120) * _MS_SPAN),
    ],
    "wide-decimal-ts6-bytes": [
        Column("k", "DECIMAL(38, 6)", lambda i: Decimal((i - 120) * 10**30 + i).scaleb(-6)),
        Column("ts", "TIMESTAMP(6)", lambda i: (i - 120) * _MS_SPAN * 1000 + 1),
        Column("raw", "BYTES", lambda i: bytes([i % 256]) * (i % 20)),
    ],
}


def file_rows(path: Path) -> pa.Table:
    return pq.read_table(path)


@pytest.mark.parametrize("key_name", list(BUCKET_KEYS))
@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_java_reads_fixed_bucket_table_and_each_row_is_in_javas_bucket(
    java_oracle: JavaOracle, tmp_path: Path, key_name: str, partitioned: bool
) -> None:
    keys = BUCKET_KEYS[key_name]
    num_buckets = 5
    columns = [ID, *keys, PART_VALUE] + ([STRING_KEY] if partitioned else [])
    key_names = [k.name for k in keys]
    table = create_ours(
        tmp_path,
        "t",
        columns,
        partition_keys=["region"] if partitioned else [],
        options={"bucket": str(num_buckets), "bucket-key": ",".join(key_names)},
    )
    first, second = arrow_rows(columns, range(0, 120)), arrow_rows(columns, range(120, 200))
    write_ours(table, first)
    write_ours(table, second)

    assert_same_rows(
        java_oracle.read_table(tmp_path, DB, "t").rows, pa.concat_tables([first, second])
    )
    assert_same_rows(java_oracle.read_table(tmp_path, DB, "t", snapshot_id=1).rows, first)
    files = data_files(tmp_path / f"{DB}.db" / "t")
    assert len({f.parent.name for f in files}) > 1
    for path in files:
        bucket = int(path.parent.name.removeprefix("bucket-"))
        key_rows = canonical_rows(file_rows(path).select(key_names))
        java = java_oracle.buckets([k.type_json for k in keys], key_rows, [num_buckets])
        assert set(java.buckets[num_buckets]) == {bucket}, f"{path} holds rows of other buckets"


def test_java_reads_bucket_unaware_table_written_in_many_commits(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    columns = [ID, STRING_KEY, PART_VALUE]
    table = create_ours(tmp_path, "t", columns, partition_keys=["region"], options={"bucket": "-1"})
    batches = [arrow_rows(columns, range(start, start + 30)) for start in range(0, 150, 30)]
    ids = [write_ours(table, data) for data in batches]

    for sid in ids:
        rows = java_oracle.read_table(tmp_path, DB, "t", snapshot_id=sid).rows
        assert_same_rows(rows, pa.concat_tables(batches[:sid]))
    assert {p.parent.name for p in data_files(tmp_path / f"{DB}.db" / "t")} == {"bucket-0"}
