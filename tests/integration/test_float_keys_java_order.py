"""FLOAT/DOUBLE primary keys compared as Java 1.4.2 compares them outside the merge: the
LSM key-range check of a commit (ConflictDetection.checkKeyRange), the overwrite upgrade
(FileStoreCommitImpl.tryUpgrade), first-row's lookup of a key in the levels above a
compaction, and the cross-partition key index (GlobalIndexAssigner).

Java's key comparator is ``a > b ? 1 : a < b ? -1 : 0`` per float field, so a NaN compares
equal to every key and -0.0 to +0.0 (``spec/float_keys.py``): a NaN at either end of a file's
key range overlaps the neighbouring file. The two lookups go by the key's bytes (first-row's
through the lookup file's bloom filter, the index through RocksDB), and the bytes Java stores
are canonical (its Parquet writer keeps one NaN): every NaN is one key, -0.0 is not +0.0.
Every decision is Java's own: Java commits the same messages, or writes the same rows, and its
result is compared with ours; the cases where Python's floats and Java agree are guards.
"""

from __future__ import annotations

import math
import os
import shutil
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from py4j.protocol import Py4JJavaError

from paimon_pyspark import CommitMessageSerializer, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CommitConflictError
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement
from paimon_pyspark.table.table_commit import TableCommit

INTEROP = Path(__file__).resolve().parents[1] / "interop"
if str(INTEROP) not in sys.path:
    sys.path.insert(0, str(INTEROP))

from java_oracle import (  # noqa: E402
    JavaOracle,
    canonical_rows,
    float_bits,
    read_table_by_bucket,
    sorted_rows,
    write_rows_float_bits,
)

pytestmark = pytest.mark.java

NAN, INF = math.nan, math.inf
SCHEMA = pa.schema([pa.field("k", pa.float64(), nullable=False), ("v", pa.int64())])
JAVA_VERSION = 11  # Java 1.4.2's CommitMessageSerializer version


@pytest.fixture(scope="module")
def java() -> Iterator[JavaOracle]:
    """Java Paimon 1.4.2 (tests/interop/conftest.py's oracle), one JVM for this module."""
    java_dir = INTEROP.parents[1] / ".cache" / "java"
    jar = java_dir / "paimon-bundle-1.4.2.jar"
    classes = java_dir / "classes"
    missing = [p for p in (jar, classes / "paimonoracle" / "PaimonOracle.class") if not p.is_file()]
    if missing:
        pytest.fail(f"Java Paimon oracle not built (missing {missing}); run `make test`")
    oracle = JavaOracle(jar, classes, log_path=java_dir / f"oracle-jvm-{os.getpid()}-float.log")
    try:
        yield oracle
    finally:
        oracle.close()


def create(catalog: FileSystemCatalog, name: str, **options: str) -> FileStoreTable:
    opts = {"bucket": "1", "write-only": "true", **options}
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options=opts)
    )
    return catalog.get_table(f"db.{name}")


def arrow(rows: list[tuple[float, int]]) -> pa.Table:
    return pa.Table.from_pylist([{"k": k, "v": v} for k, v in rows], SCHEMA)


def written(table: FileStoreTable, rows: list[tuple[float, int]]) -> CommitMessage:
    """One writer's message for ``rows`` (one level-0 file of bucket 0), not committed."""
    with table.new_batch_write_builder().new_write() as w:
        w.write_arrow(arrow(rows))
        (message,) = w.prepare_commit()
    return message


def committed_file(table: FileStoreTable, rows: list[tuple[float, int]]) -> CommitMessage:
    message = written(table, rows)
    table.new_batch_write_builder().new_commit().commit([message])
    return message


def moved(message: CommitMessage, level: int) -> CommitMessage:
    """A compaction of ``message``'s one file to ``level`` (Java upgrades a lone file so)."""
    (f,) = message.new_files
    increment = CompactIncrement(compact_before=(f,), compact_after=(f.with_level(level),))
    return CommitMessage(
        message.partition, message.bucket, message.total_buckets, compact_increment=increment
    )


def serialized(messages: list[CommitMessage]) -> bytes:
    return CommitMessageSerializer(JAVA_VERSION).serialize_list(messages)


def java_overwrite(java: JavaOracle, warehouse: str, name: str, data: bytes) -> None:
    """Java's BatchTableCommit of ``data`` as an insert overwrite of the whole table."""
    jvm = java._gateway.jvm
    paimon = jvm.org.apache.paimon
    messages = paimon.table.sink.CommitMessageSerializer().deserializeList(
        JAVA_VERSION, paimon.io.DataInputDeserializer(bytearray(data))
    )
    options = paimon.options.Options()
    options.set("warehouse", warehouse)
    catalog = paimon.catalog.CatalogFactory.createCatalog(
        paimon.catalog.CatalogContext.create(options)
    )
    try:
        table = catalog.getTable(paimon.catalog.Identifier.create("db", name))
        # a default method of the Table interface, which py4j finds only through reflection
        gateway = java._gateway
        builder = (
            jvm.java.lang.Class.forName("org.apache.paimon.table.Table")
            .getMethod("newBatchWriteBuilder", gateway.new_array(jvm.java.lang.Class, 0))
            .invoke(table, gateway.new_array(jvm.java.lang.Object, 0))
        )
        commit = builder.withOverwrite().newCommit()
        try:
            commit.commit(messages)
        finally:
            commit.close()
    finally:
        catalog.close()


def levels(table: FileStoreTable) -> dict[str, int]:
    """File name -> level of the latest snapshot's live files (read by us from either)."""
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return {e.file.file_name: e.file.level for e in table.manifest_io.live_entries(snapshot)}


def read(table: FileStoreTable) -> list[list[Any]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def bits(value: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", value))[0])


# --- conflict detection: the key ranges of a level ------------------------------------------

# (keys of the file already at level 5, keys of the file a compaction moves beside it)
NAN_BOUNDS = {
    "nan-file-after": ([1.0, 2.0], [NAN]),
    "nan-max-before": ([1.0, NAN], [2.0]),
    "nan-min-after": ([-INF, 1.0], [NAN, 5.0]),
}


def level_race(
    catalog: FileSystemCatalog, name: str, first: list[float], second: list[float]
) -> tuple[FileStoreTable, CommitMessage]:
    """Two level-0 files, the first already moved to level 5 by one compaction; returns the
    other compaction, moving the second file to level 5 too, not committed."""
    table = create(catalog, name)
    a = committed_file(table, [(k, i) for i, k in enumerate(first)])
    b = committed_file(table, [(k, 10 + i) for i, k in enumerate(second)])
    TableCommit(table.store, "compactor-a").commit([moved(a, 5)])
    return table, moved(b, 5)


@pytest.mark.parametrize("case", NAN_BOUNDS)
def test_a_nan_bound_overlaps_its_neighbour_as_in_java(
    java: JavaOracle, catalog: FileSystemCatalog, warehouse: str, case: str
) -> None:
    """Java refuses the second compaction (LSM conflict: a NaN bound compares 0 with the
    neighbour's key); so must we, and the table stays as it was."""
    first, second = NAN_BOUNDS[case]
    table, late = level_race(catalog, "t", first, second)
    before = table.snapshot_manager.latest_id()
    with pytest.raises(Py4JJavaError, match="LSM conflicts detected"):
        java.commit_serialized_messages(warehouse, "db", "t", JAVA_VERSION, serialized([late]))
    assert table.snapshot_manager.latest_id() == before
    with pytest.raises(CommitConflictError, match="LSM conflicts detected!"):
        TableCommit(table.store, "compactor-b").commit([late])
    assert table.snapshot_manager.latest_id() == before


# ordinary keys, where Python's float order and Java's comparator agree: a guard for the fix
AGREED = {
    "apart": ([1.0, 2.0], [3.0, INF], False),
    "zeros-touch": ([-1.0, -0.0], [0.0, 1.0], True),
    "infinities-apart": ([-INF, -0.0], [1.0, INF], False),
}


@pytest.mark.parametrize("case", AGREED)
def test_key_ranges_without_nan_decide_as_java(
    java: JavaOracle, catalog: FileSystemCatalog, warehouse: str, case: str
) -> None:
    first, second, conflict = AGREED[case]
    table, late = level_race(catalog, "t", first, second)
    data = serialized([late])
    if conflict:
        with pytest.raises(Py4JJavaError, match="LSM conflicts detected"):
            java.commit_serialized_messages(warehouse, "db", "t", JAVA_VERSION, data)
        with pytest.raises(CommitConflictError, match="LSM conflicts detected!"):
            TableCommit(table.store, "compactor-b").commit([late])
    else:
        copy = copy_table(warehouse, "t", "j", catalog)
        java.commit_serialized_messages(warehouse, "db", "j", JAVA_VERSION, data)
        TableCommit(table.store, "compactor-b").commit([late])
        assert levels(table) == levels(copy)
        assert read(table) == sorted_rows(java.read_table(warehouse, "db", "j").rows)


def copy_table(warehouse: str, name: str, to: str, catalog: FileSystemCatalog) -> FileStoreTable:
    """A byte copy of table ``name`` (its files, snapshots and uncommitted data files)."""
    shutil.copytree(Path(warehouse) / "db.db" / name, Path(warehouse) / "db.db" / to)
    return catalog.get_table(f"db.{to}")


# --- overwrite: which level-0 files go straight to the top level ---------------------------

OVERWRITES = {
    # a file ending at NaN overlaps the next one in Java: both stay at level 0
    "nan-max": ([(1.0, 1), (NAN, 2)], [(2.0, 3)], True),
    # a file starting at NaN, the same; its rows are not compared, as Java's merge read of a
    # NaN first in one of several runs is not a function of the rows (test_float_pk_table.py)
    "nan-min": ([(NAN, 1)], [(2.0, 3), (3.0, 4)], False),
}


@pytest.mark.parametrize("case", OVERWRITES)
def test_overwrite_upgrades_the_files_java_upgrades(
    java: JavaOracle, catalog: FileSystemCatalog, warehouse: str, case: str
) -> None:
    """The same two level-0 files committed as an insert overwrite, by Java into one copy of
    the table and by us into the other: each file lands at Java's level, and both tables read
    the same rows."""
    first, second, rows_defined = OVERWRITES[case]
    table = create(catalog, "t")
    messages = [written(table, first), written(table, second)]
    copy = copy_table(warehouse, "t", "j", catalog)
    java_overwrite(java, warehouse, "j", serialized(messages))
    builder = table.new_batch_write_builder().overwrite()
    builder.new_commit().commit(messages)
    assert levels(table) == levels(copy)
    if rows_defined:
        assert read(table) == sorted_rows(java.read_table(warehouse, "db", "j").rows)


def test_overwrite_without_nan_upgrades_as_java(
    java: JavaOracle, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """A guard: files apart (-INF..-0.0, then 0.0..INF touching at the zeros stays at level 0
    in both; 1.0..2.0 beside 3.0 goes up in both)."""
    for name, first, second in (
        ("zeros", [(-INF, 1), (-0.0, 2)], [(0.0, 3), (INF, 4)]),
        ("apart", [(1.0, 1), (2.0, 2)], [(3.0, 3)]),
    ):
        table = create(catalog, name)
        messages = [written(table, first), written(table, second)]
        copy = copy_table(warehouse, name, f"{name}_j", catalog)
        java_overwrite(java, warehouse, f"{name}_j", serialized(messages))
        table.new_batch_write_builder().overwrite().new_commit().commit(messages)
        assert levels(table) == levels(copy)
        assert read(table) == sorted_rows(java.read_table(warehouse, "db", f"{name}_j").rows)


# --- first-row: a level-0 key looked up in the levels above ---------------------------------

PAYLOAD_NAN = bits(0x7FF8_0000_0000_0001)
NEGATIVE_NAN = bits(0xFFF8_0000_0000_0000)
CANONICAL_NAN = "7ff8000000000000"
JAVA_FIELDS = [("k", "DOUBLE NOT NULL"), ("v", "BIGINT")]


FIRST_ROW_SCHEMA = pa.schema(
    [
        pa.field("a", pa.int32(), nullable=False),
        pa.field("k", pa.float64(), nullable=False),
        ("v", pa.int64()),
    ]
)
FIRST_ROW_FIELDS = [("a", "INT NOT NULL"), ("k", "DOUBLE NOT NULL"), ("v", "BIGINT")]
BIG = [(i, float(i)) for i in range(1, 100)]
"""The first commit's other keys: a run much larger than the later one-key commits, so each of
those goes to the level just above it (ForceUpLevel0Compaction) and is looked up there."""

# the keys (a, k) of each commit after the first; the first holds BIG and (0, its key)
FIRST_ROW_COMMITS = {
    "nan-payloads": (NAN, [PAYLOAD_NAN, NEGATIVE_NAN, NAN]),
    "payload-nan-first": (PAYLOAD_NAN, [NAN, NEGATIVE_NAN]),
    "zeros": (0.0, [-0.0, 0.0, -0.0]),
}


def layout_and_bits(warehouse: str, name: str, java: JavaOracle) -> Any:
    """Java's read of a table, per bucket: its files (level, row count), and each row's key
    bits (every NaN as the canonical one) and value."""

    def key(hexbits: str) -> str:
        return CANONICAL_NAN if math.isnan(bits(int(hexbits, 16))) else hexbits

    return [
        (
            sorted((level, n) for _, level, n in s.files),
            sorted((r[0], key(b[1] or ""), r[2]) for b, r in zip(s.bits, s.rows, strict=True)),
        )
        for s in read_table_by_bucket(java, warehouse, "db", name)
    ]


@pytest.mark.parametrize("case", FIRST_ROW_COMMITS)
def test_first_row_lookup_finds_the_keys_java_finds(
    java: JavaOracle, catalog: FileSystemCatalog, warehouse: str, case: str
) -> None:
    """Java looks a level-0 key up above by its bytes, and the bytes in its files are
    canonical (its Parquet writer stores every NaN as the canonical one): any NaN finds a NaN
    above and is dropped, -0.0 does not find +0.0. The same commits leave the same files, rows
    and key bits in Java's table and ours. Keys are (a, k), so a NaN key merges with no other
    key in a commit (a NaN joins the key before it under the same prefix)."""
    first, later = FIRST_ROW_COMMITS[case]
    opts = {"bucket": "1", "merge-engine": "first-row"}
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(FIRST_ROW_SCHEMA, primary_keys=["a", "k"], options=opts),
    )
    table = catalog.get_table("db.t")
    # Java's writer gets a temp directory for lookups only through the oracle's compact call
    java.create_table(
        warehouse,
        "db",
        "j",
        FIRST_ROW_FIELDS,
        primary_keys=["a", "k"],
        options={**opts, "write-only": "true"},
    )
    commits = [[(0, first), *BIG], *[[(0, k)] for k in later]]
    v = 0
    for keys in commits:
        rows = [(a, k, v + i) for i, (a, k) in enumerate(keys)]
        v += len(keys)
        builder = table.new_batch_write_builder()
        with builder.new_write() as w:
            w.write_arrow(
                pa.Table.from_pylist(
                    [dict(zip(("a", "k", "v"), r, strict=True)) for r in rows], FIRST_ROW_SCHEMA
                )
            )
            builder.new_commit().commit(w.prepare_commit())
        wire = [[a, float_bits(k), n] for a, k, n in rows]
        write_rows_float_bits(java, warehouse, "db", "j", wire)
        java.compact(warehouse, "db", "j", full=False)
        assert layout_and_bits(warehouse, "t", java) == layout_and_bits(warehouse, "j", java)


def test_java_stores_the_canonical_nan(java: JavaOracle, warehouse: str) -> None:
    """Why a NaN of any payload is one key to Java's lookups: its files hold only the
    canonical NaN, whatever bits were written."""
    options = {"bucket": "1", "write-only": "true"}
    java.create_table(warehouse, "db", "j", JAVA_FIELDS, primary_keys=["k"], options=options)
    write_rows_float_bits(java, warehouse, "db", "j", [[float_bits(PAYLOAD_NAN), 1]])
    (split,) = read_table_by_bucket(java, warehouse, "db", "j")
    assert [b[0] for b in split.bits] == [CANONICAL_NAN]


# --- the cross-partition key index ----------------------------------------------------------

CROSS_SCHEMA = pa.schema(
    [pa.field("k", pa.float64(), nullable=False), ("v", pa.int64()), ("p", pa.int32())]
)
CROSS_FIELDS = [("k", "DOUBLE NOT NULL"), ("v", "BIGINT"), ("p", "INT NOT NULL")]


def test_cross_partition_index_routes_float_keys_as_java(
    java: JavaOracle, catalog: FileSystemCatalog, warehouse: str
) -> None:
    """Java's GlobalIndexAssigner matches keys by their bytes (RocksDB) after bootstrapping
    them from its files, where every NaN is the canonical one: a NaN written into another
    partition moves the NaN key there (deduplicate), whatever payload either had, and -0.0 is
    a key of its own beside +0.0. We write a NaN with a payload where Java's writer stores the
    canonical NaN anyway. (A third commit is left out: Java's bootstrap then fails on a table
    holding both -0.0 and +0.0, its bulk-load sort calling them equal.)"""
    options = {"bucket": "-1"}
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            CROSS_SCHEMA, partition_keys=["p"], primary_keys=["k"], options=options
        ),
    )
    table = catalog.get_table("db.t")
    java.create_table(
        warehouse,
        "db",
        "j",
        CROSS_FIELDS,
        partition_keys=["p"],
        primary_keys=["k"],
        options=options,
    )
    # a partition each, so no NaN shares a bucket with another key (a NaN joins the key before
    # it in a merge, and a -D of a moved NaN would take that key with it)
    commits = [
        ([(PAYLOAD_NAN, 1, 1), (0.0, 2, 3)], [(NAN, 1, 1), (0.0, 2, 3)]),
        ([(NAN, 3, 2), (-0.0, 4, 4)], [(NAN, 3, 2), (-0.0, 4, 4)]),
    ]
    for ours, theirs in commits:
        builder = table.new_batch_write_builder()
        with builder.new_write() as w:
            names = ("k", "v", "p")
            w.write_arrow(
                pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in ours], CROSS_SCHEMA)
            )
            builder.new_commit().commit(w.prepare_commit())
        java.write_cross_partition(warehouse, "db", "j", [list(r) for r in theirs])
        assert sorted_rows(java.read_table(warehouse, "db", "t").rows) == sorted_rows(
            java.read_table(warehouse, "db", "j").rows
        )
    assert sorted_rows(java.read_table(warehouse, "db", "j").rows) == sorted_rows(
        [[NAN, 3, 2], [0.0, 2, 3], [-0.0, 4, 4]]
    )
