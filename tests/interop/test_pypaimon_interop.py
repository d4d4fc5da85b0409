"""paimon_pyspark and pypaimon 2.1 read each other's tables, exactly.

pypaimon reads every table layout we write (unpartitioned, partitioned with null partition
values, bucket -1, fixed buckets with a bucket key) in parquet, orc and avro, with every type of
``test_java_reads_ours`` that pypaimon 2.1 maps to Arrow (all but MULTISET), and returns exactly
our rows, at the latest snapshot and by time travel. We read the tables pypaimon writes in several
commits, at each snapshot, exactly.

pypaimon runs in its own venv, one process per call (about three seconds each), so every test
makes few calls and the tables are small.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import canonical_rows, sorted_rows
from pypaimon_oracle import PypaimonOracle
from test_java_reads_ours import (
    ALL_TYPES,
    BUCKET_KEYS,
    CHAR_SHORT,
    DATE_KEY,
    DB,
    FORMATS,
    ID,
    INT_KEY,
    MAP_INT_KEY,
    PART_VALUE,
    STRING_KEY,
    TS9,
    Column,
    arrow_rows,
    create_ours,
    write_ours,
)

from paimon_pyspark import CatalogFactory, FileStoreTable

pytestmark = [pytest.mark.pypaimon, pytest.mark.slow]

TABLE = f"{DB}.t"
EXTRA_TYPES = [TS9, MAP_INT_KEY, CHAR_SHORT]
"""Types whose encoding differs per format; pypaimon reads them from each of our formats.

MULTISET is left out: pypaimon 2.1 has no Arrow type for it (``from_paimon_type`` raises
"Unsupported data type: MULTISET<...>" for any table that has one)."""


def assert_same_rows(got: pa.Table, expected: pa.Table) -> None:
    """Order-free equality of rows, column order included; on failure name the columns."""
    assert got.column_names == expected.column_names
    have, want = sorted_rows(canonical_rows(got)), sorted_rows(canonical_rows(expected))
    if have != want:
        assert len(have) == len(want), f"{len(have)} rows read, {len(want)} written"
        bad = [
            name
            for k, name in enumerate(expected.column_names)
            if sorted_rows([[r[k]] for r in have]) != sorted_rows([[r[k]] for r in want])
        ]
        pytest.fail(f"rows differ in columns {bad}")


# -- pypaimon reads ours --------------------------------------------------------------------------

Layout = tuple[list[str], dict[str, str], list[Column]]
"""Partition keys, table options, and the key columns added to the all-types columns."""

LAYOUTS: dict[str, Layout] = {
    "unpartitioned": ([], {}, []),
    "partitioned-date-int": (["day", "p"], {}, [DATE_KEY, INT_KEY]),
    "partitioned-string-bucket-key": (
        ["region"],
        {"bucket": "4", "bucket-key": "k,s"},
        [*BUCKET_KEYS["bigint-string"], STRING_KEY],
    ),
    "bucket-key-int": ([], {"bucket": "3", "bucket-key": "id"}, []),
}
READ_CASES = [
    pytest.param(layout, fmt, id=f"{layout}-{fmt}")
    for layout in ("unpartitioned", "partitioned-date-int", "partitioned-string-bucket-key")
    for fmt in FORMATS
] + [pytest.param("bucket-key-int", "parquet", id="bucket-key-int-parquet")]


@pytest.mark.parametrize(("layout", "file_format"), READ_CASES)
def test_pypaimon_reads_our_table_exactly(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path, layout: str, file_format: str
) -> None:
    partition_keys, options, keys = LAYOUTS[layout]
    columns = [*ALL_TYPES, *EXTRA_TYPES, *keys]
    if file_format == "avro":
        columns.remove(TS9)  # Java refuses TIMESTAMP(9) in avro tables
    table = create_ours(
        tmp_path, "t", columns, partition_keys, {"file.format": file_format, **options}
    )
    first, second = arrow_rows(columns, range(0, 70)), arrow_rows(columns, range(70, 160))
    write_ours(table, first)
    write_ours(table, second)

    assert_same_rows(pypaimon_oracle.read(tmp_path, TABLE), pa.concat_tables([first, second]))
    if layout == "unpartitioned":
        assert_same_rows(pypaimon_oracle.read(tmp_path, TABLE, snapshot_id=1), first)


def test_pypaimon_projection_of_our_table(pypaimon_oracle: PypaimonOracle, tmp_path: Path) -> None:
    columns = [*ALL_TYPES, DATE_KEY]
    table = create_ours(tmp_path, "t", columns, ["day"])
    data = arrow_rows(columns, range(50))
    write_ours(table, data)
    projection = ["row_nested", "day", "id", "map_si"]

    got = pypaimon_oracle.read(tmp_path, TABLE, projection=projection)

    assert_same_rows(got, data.select(projection))


# -- we read pypaimon's ---------------------------------------------------------------------------


def arrow_schema(columns: Sequence[Column]) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.arrow_type, c.nullable) for c in columns])


def our_table(warehouse: Path, snapshot_id: int | None = None) -> FileStoreTable:
    table = CatalogFactory.create({"warehouse": str(warehouse)}).get_table(TABLE)
    return table if snapshot_id is None else table.copy({"scan.snapshot-id": str(snapshot_id)})


def read_ours(table: FileStoreTable) -> pa.Table:
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def _avro_unwritable(t: pa.DataType) -> bool:
    """A map, or a list with nullable items, anywhere in ``t``."""
    if pa.types.is_map(t):
        return True
    if pa.types.is_list(t):
        return t.value_field.nullable or _avro_unwritable(t.value_type)
    return pa.types.is_struct(t) and any(_avro_unwritable(f.type) for f in t)


def pypaimon_writable(columns: Sequence[Column], file_format: str) -> list[Column]:
    """The columns pypaimon 2.1 can write in ``file_format``.

    Its avro writer has no map support ("Unsupported pyarrow type for Avro conversion:
    map<string, int32>") and declares array items NOT NULL whatever the schema says, so a null
    item fails the write; and Java refuses TIMESTAMP(9) in avro tables.
    """
    if file_format != "avro":
        return list(columns)
    return [c for c in columns if c is not TS9 and not _avro_unwritable(c.arrow_type)]


def pypaimon_write(
    oracle: PypaimonOracle, warehouse: Path, data: pa.Table, commits: int, file_format: str
) -> list[int]:
    """``commits`` pypaimon commits of consecutive slices of ``data``.

    For ORC each commit is its own call (its own IPC file, so no slice offset reaches pypaimon):
    the driver slices ``data`` per commit, and pyarrow's ORC writer, which pypaimon uses as it
    is, misplaces the children of a sliced struct column, so pypaimon itself would read other
    struct values back than it was given.
    """
    if file_format != "orc":
        return oracle.write(warehouse, TABLE, data, commits=commits)
    size = data.num_rows // commits
    return [oracle.write(warehouse, TABLE, data.slice(k * size, size))[0] for k in range(commits)]


# pypaimon 2.1 cannot write a null partition of a fixed-bucket table twice: its writer plans the
# partition's files with a partition filter that compares the null min/max stats ('<=' between
# str and None), so the bucketed layout it writes has no null partition value.
REGION_NOT_NULL = Column(
    "region", "STRING NOT NULL", lambda i: ["eu", "a/b=c", "ünï", "x%y"][i % 4]
)
PYPAIMON_LAYOUTS: dict[str, Layout] = {
    "unpartitioned": LAYOUTS["unpartitioned"],
    "partitioned-date-int": LAYOUTS["partitioned-date-int"],
    "partitioned-bucket-key": (
        ["region"],
        {"bucket": "4", "bucket-key": "k,s"},
        [*BUCKET_KEYS["bigint-string"], REGION_NOT_NULL],
    ),
}
PYPAIMON_CASES = [
    pytest.param(fmt, "unpartitioned", id=f"{fmt}-unpartitioned") for fmt in FORMATS
] + [
    pytest.param("parquet", layout, id=f"parquet-{layout}")
    for layout in ("partitioned-date-int", "partitioned-bucket-key")
]


@pytest.mark.parametrize(("file_format", "layout"), PYPAIMON_CASES)
def test_we_read_pypaimon_table_at_every_snapshot(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path, file_format: str, layout: str
) -> None:
    partition_keys, options, extra = PYPAIMON_LAYOUTS[layout]
    columns = pypaimon_writable([*ALL_TYPES, *EXTRA_TYPES, *extra], file_format)
    data = arrow_rows(columns, range(150))
    pypaimon_oracle.create_table(
        tmp_path,
        TABLE,
        arrow_schema(columns),
        partition_keys=partition_keys,
        options={"file.format": file_format, **options},
    )

    snapshots = pypaimon_write(pypaimon_oracle, tmp_path, data, 3, file_format)

    assert snapshots == [1, 2, 3]
    assert_same_rows(read_ours(our_table(tmp_path)), data)
    for sid, rows in zip(snapshots, (50, 100, 150), strict=True):
        assert_same_rows(read_ours(our_table(tmp_path, sid)), data.slice(0, rows))


def test_we_read_pypaimon_bucket_unaware_partitioned_table(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    columns = [ID, STRING_KEY, PART_VALUE]
    data = arrow_rows(columns, range(120))
    pypaimon_oracle.create_table(
        tmp_path, TABLE, arrow_schema(columns), partition_keys=["region"], options={"bucket": "-1"}
    )

    assert pypaimon_oracle.write(tmp_path, TABLE, data, commits=4) == [1, 2, 3, 4]

    for sid in (1, 2, 3, 4):
        assert_same_rows(read_ours(our_table(tmp_path, sid)), data.slice(0, 30 * sid))
