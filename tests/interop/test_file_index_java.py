"""File indexes against Java Paimon 1.4.2, both ways.

- Our bloom filter's bytes are Java's, for every type Java's FastHash hashes (nulls skipped,
  NaN, -0.0, extremes, every timestamp precision), so our hashing is Java's.
- Java writes append tables with each index type (bloom-filter, bitmap, bsi, range-bitmap),
  embedded in the manifest and in separate ``.index`` files: we read exactly Java's rows, each
  file's embedded index is byte for byte the one we build from its rows, and for equality, IN
  and range filters we skip exactly the files Java's own FileIndexPredicate skips.
- We write the same shapes: Java reads the same rows, and its FileIndexPredicate, run on each
  of our files' indexes, skips the same files as our scans do.
- The order of a blob's header is Java's HashMaps' (colliding names, resized and tree bins,
  several types, many options, map keys), for written and for rewritten indexes.

The data defeats min/max pruning (every file holds the smallest and largest id and name), so
a file is left out only by its index.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from file_index_oracle import decisions, index_bytes
from java_oracle import JavaOracle
from rewrite_file_index_oracle import java_rewrite

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.io.file_index_writer import DataFileIndexWriter, FileIndexSettings
from paimon_pyspark.procedures import rewrite_file_index
from paimon_pyspark.read.file_index_filter import FileIndexFilter
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.spec.file_index import bloom_filter
from paimon_pyspark.store.schema_change import SchemaChange
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import parse_type_json

pytestmark = [pytest.mark.java, pytest.mark.slow]

_TS = dt.datetime(2026, 11, 28, 12, 34, 56, 789123)
_BEFORE_EPOCH = dt.datetime(1969, 12, 31, 23, 59, 59, 999001)
BLOOM_CASES: list[tuple[str, list[Any]]] = [
    ("TINYINT", [0, 1, -1, 127, -128, None]),
    ("SMALLINT", [0, 7, -300, 32767, -32768, None]),
    ("INT", [0, 1, -1, 2**31 - 1, -(2**31), 123456, None]),
    ("BIGINT", [0, 1, -1, 2**63 - 1, -(2**63), 9876543210, None]),
    ("FLOAT", [0.0, -0.0, 1.5, -2.25, math.nan, math.inf, -math.inf, 3.4e38, None]),
    ("DOUBLE", [0.0, -0.0, 1.5, -2.25, math.nan, math.inf, 1e-300, None]),
    ("DATE", [dt.date(2026, 11, 28), dt.date(1960, 1, 1), dt.date(1970, 1, 1), None]),
    ("TIME(0)", [dt.time(0, 0), dt.time(12, 34, 56), dt.time(23, 59, 59), None]),
    ("TIMESTAMP(3)", [_TS.replace(microsecond=789000), _BEFORE_EPOCH.replace(microsecond=999000)]),
    ("TIMESTAMP(6)", [_TS, _BEFORE_EPOCH, None]),
    ("TIMESTAMP(9)", [_TS, _BEFORE_EPOCH, None]),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", [_TS.replace(microsecond=1000), None]),
    ("TIMESTAMP(6) WITH LOCAL TIME ZONE", [_TS, _BEFORE_EPOCH]),
    ("STRING", ["", "a", "héllo wörld", "日本語", "x" * 300, None]),
    ("CHAR(3)", ["abc", "xyz", None]),
    ("VARCHAR(10)", ["short", "", None]),
    ("BYTES", [b"", b"\x00\xff", b"abc" * 50, None]),
    ("BINARY(2)", [b"\x01\x02", b"\xff\xfe", None]),
]


@pytest.mark.parametrize("type_json, values", BLOOM_CASES, ids=[c[0] for c in BLOOM_CASES])
@pytest.mark.parametrize("options", [{}, {"items": "100", "fpp": "0.01"}, {"items": "7"}])
def test_bloom_filter_bytes_are_javas(
    java_oracle: JavaOracle, type_json: str, values: list[Any], options: dict[str, str]
) -> None:
    data_type = parse_type_json(type_json)
    writer = bloom_filter.create_writer(data_type, options)
    array = pa.array(values, to_arrow_type(data_type))
    writer.write(array.slice(0, 2))  # fed in pieces, as the rolling writer does
    writer.write(array.slice(2))
    ours = writer.serialize()
    java = index_bytes(java_oracle, "bloom-filter", type_json, options, values)
    assert ours == java
    reader = bloom_filter.create_reader(data_type, java)
    assert all(reader.may_match("equal", [v]) for v in array.to_pylist())


# --- tables ------------------------------------------------------------------------------------

INDEXED = {
    "bloom-filter": "id,name",
    "bitmap": "id,name",
    "bsi": "id",
    "range-bitmap": "id,name",
}
PLACEMENTS = {"embedded": "1 mb", "separate": "1 b"}
FIELDS = [("id", "BIGINT"), ("name", "STRING"), ("v", "INT")]
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("v", pa.int32())])


def batch(i: int) -> list[tuple[int, str, int]]:
    """File ``i``: ids 100*i+1 .. 100*i+40 and, in every file, ids 0 and 1000 with names "a"
    and "z", so min/max stats keep every file for any id or name probe in between."""
    rows = [(100 * i + k, f"n{100 * i + k}", k) for k in range(1, 41)]
    return [(0, "a", -1), *rows, (1000, "z", -2)]


# (op, field, literals) leaves; each filter is their AND
FILTERS: list[list[tuple[str, str, list[Any]]]] = [
    [("equal", "id", [115])],
    [("equal", "id", [77])],
    [("in", "id", [5, 215, 7777])],
    [("equal", "name", ["n315"])],
    [("in", "name", ["n5", "n390", "nope"])],
    [("notEqual", "id", [0])],
    [("between", "id", [41, 99])],
    [("between", "id", [141, 260])],
    [("greaterThan", "id", [340])],
    [("lessThan", "id", [1])],
    [("isNull", "name", [])],
    [("equal", "id", [115]), ("equal", "name", ["n115"])],
]


def predicate_of(table: FileStoreTable, leaves: list[tuple[str, str, list[Any]]]) -> Predicate:
    pb = PredicateBuilder(list(table.fields))
    built = []
    for op, field, lits in leaves:
        if op == "in":
            built.append(pb.is_in(field, lits))
        elif op == "between":
            built.append(pb.between(field, lits[0], lits[1]))
        elif op in ("isNull", "isNotNull"):
            built.append(pb.is_null(field) if op == "isNull" else pb.is_not_null(field))
        else:
            method = {
                "equal": pb.equal,
                "notEqual": pb.not_equal,
                "lessThan": pb.less_than,
                "lessOrEqual": pb.less_or_equal,
                "greaterThan": pb.greater_than,
                "greaterOrEqual": pb.greater_or_equal,
            }[op]
            built.append(method(field, lits[0]))
    out = PredicateBuilder.and_predicates(built)
    assert out is not None
    return out


def planned(table: FileStoreTable, leaves: list[tuple[str, str, list[Any]]]) -> set[str]:
    rb = table.new_read_builder().with_filter(predicate_of(table, leaves))
    return {f.file_name for s in rb.new_scan().plan().splits() for f in s.files}


def filtered_rows(table: FileStoreTable, leaves: list[tuple[str, str, list[Any]]]) -> list[Any]:
    rb = table.new_read_builder().with_filter(predicate_of(table, leaves))
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in got.to_pylist())


def all_rows(table: FileStoreTable) -> list[tuple[Any, ...]]:
    rb = table.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in got.to_pylist())


def table_options(index_type: str, placement: str) -> dict[str, str]:
    options = {
        f"file-index.{index_type}.columns": INDEXED[index_type],
        "file-index.in-manifest-threshold": PLACEMENTS[placement],
        "bucket": "-1",
    }
    if index_type == "bloom-filter":  # sized for the rows (Java's default: a million items)
        options["file-index.bloom-filter.id.items"] = "200"
        options["file-index.bloom-filter.name.fpp"] = "0.01"
        options["file-index.bloom-filter.name.items"] = "100"
    return options


def check_decisions(
    oracle: JavaOracle, warehouse: Path, table: FileStoreTable, placement: str
) -> None:
    """Per filter, the files our scan plans are those that min/max stats keep (our plan with
    ``file-index.read.enabled`` off) and Java's FileIndexPredicate keeps; the filtered rows are
    the matching rows of the whole table."""
    every = all_rows(table)
    no_index = table.copy({"file-index.read.enabled": "false"})
    skipped_any = False
    for leaves in FILTERS:
        java = decisions(oracle, warehouse, "db", "t", leaves)
        assert len(java) == 4
        want_kind = "embedded" if placement == "embedded" else "file"
        assert {d["index"] for d in java.values()} == {want_kind}
        kept = {name for name, d in java.items() if d["remain"]}
        skipped_any |= len(kept) < 4
        assert planned(table, leaves) == kept & planned(no_index, leaves), leaves
        expected = [r for r in every if _matches(r, leaves)]
        assert filtered_rows(table, leaves) == expected, leaves
    assert skipped_any


def _matches(row: tuple[Any, ...], leaves: list[tuple[str, str, list[Any]]]) -> bool:
    values = dict(zip(("id", "name", "v"), row, strict=True))
    return all(_leaf(op, values[field], lits) for op, field, lits in leaves)


def _leaf(op: str, x: Any, lits: list[Any]) -> bool:
    if op == "isNull":
        return x is None
    if x is None:
        return False
    if op == "in":
        return x in lits
    if op == "between":
        return bool(lits[0] <= x <= lits[1])
    compare = {
        "equal": x == lits[0],
        "notEqual": x != lits[0],
        "greaterThan": x > lits[0],
        "lessThan": x < lits[0],
    }
    return bool(compare[op])


@pytest.mark.parametrize("placement", list(PLACEMENTS))
@pytest.mark.parametrize("index_type", list(INDEXED))
def test_we_read_javas_indexed_tables(
    java_oracle: JavaOracle, tmp_path: Path, index_type: str, placement: str
) -> None:
    java_oracle.create_table(
        tmp_path, "db", "t", FIELDS, options=table_options(index_type, placement)
    )
    for i in range(4):
        java_oracle.write_rows(tmp_path, "db", "t", batch(i))
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.t")
    assert all_rows(table) == sorted(
        tuple(r) for r in java_oracle.read_table(tmp_path, "db", "t").rows
    )
    check_decisions(java_oracle, tmp_path, table, placement)
    # Java's embedded blobs are the bytes we build from the same rows
    if placement == "embedded":
        settings = FileIndexSettings.of(table.store)
        assert settings is not None
        rb = table.new_read_builder()
        for split in rb.new_scan().plan().splits():
            for f in split.files:
                rows = rb.new_read().to_arrow([split.with_files([f])])
                writer = DataFileIndexWriter(settings)
                writer.write(rows)
                assert writer.finish() == f.embedded_index, f.file_name


@pytest.mark.parametrize("placement", list(PLACEMENTS))
@pytest.mark.parametrize("index_type", list(INDEXED))
def test_java_reads_and_skips_our_indexed_tables(
    java_oracle: JavaOracle, tmp_path: Path, index_type: str, placement: str
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, options=table_options(index_type, placement))
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    for i in range(4):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            rows = batch(i)
            write.write_arrow(pa.table(list(zip(*rows, strict=True)), schema=SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
    table = catalog.get_table("db.t")
    java_rows = sorted(tuple(r) for r in java_oracle.read_table(tmp_path, "db", "t").rows)
    assert java_rows == all_rows(table)
    check_decisions(java_oracle, tmp_path, table, placement)


PK_FIELDS = [("id", "BIGINT NOT NULL"), ("name", "STRING"), ("v", "INT")]
PK_SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("v", pa.int32())]
)
KV_COLUMN = {"bloom-filter": "name", "bitmap": "name", "bsi": "id", "range-bitmap": "name"}


def pk_options(index_type: str) -> dict[str, str]:
    options = {
        "bucket": "1",
        "write-only": "true",
        f"file-index.{index_type}.columns": KV_COLUMN[index_type],
        "file-index.in-manifest-threshold": "1 mb",
    }
    if index_type == "bloom-filter":
        options["file-index.bloom-filter.name.items"] = "100"
    return options


@pytest.mark.parametrize("index_type", list(INDEXED))
@pytest.mark.parametrize("writer", ["java", "ours"])
def test_key_value_files_index_their_value_columns_as_java(
    java_oracle: JavaOracle, tmp_path: Path, writer: str, index_type: str
) -> None:
    """Key-value files (two level-0 files of one bucket): the embedded index covers the value
    columns by name (the key is one of them), its bytes are what each side builds from the
    file's rows, and Java's FileIndexPredicate and ours agree per file."""
    options = pk_options(index_type)
    if writer == "java":
        java_oracle.create_table(
            tmp_path, "db", "t", PK_FIELDS, primary_keys=["id"], options=options
        )
        for i in range(2):
            java_oracle.write_rows(tmp_path, "db", "t", batch(i)[1:-1])
    else:
        catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
        catalog.create_database("db", ignore_if_exists=True)
        schema = Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=options)
        catalog.create_table("db.t", schema)
        t = catalog.get_table("db.t")
        for i in range(2):
            builder = t.new_batch_write_builder()
            with builder.new_write() as write:
                rows = batch(i)[1:-1]
                write.write_arrow(pa.table(list(zip(*rows, strict=True)), schema=PK_SCHEMA))
                builder.new_commit().commit(write.prepare_commit())
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.t")
    java_rows = sorted(tuple(r) for r in java_oracle.read_table(tmp_path, "db", "t").rows)
    assert all_rows(table) == java_rows
    settings = FileIndexSettings.of(table.store)
    assert settings is not None
    rb = table.new_read_builder()
    listed = [(s.bucket_path, f) for s in rb.new_scan().plan().splits() for f in s.files]
    assert len(listed) == 2
    column = KV_COLUMN[index_type]
    probe: Any = "n115" if column == "name" else 115
    java = decisions(java_oracle, tmp_path, "db", "t", [("equal", column, [probe])])
    pb = rb.new_predicate_builder()
    with_dv = table.copy({"deletion-vectors.enabled": "true"}).store  # ours judges files then
    ours = FileIndexFilter(with_dv, pb.equal(column, probe))
    for bucket_path, f in listed:
        rows = pq.read_table(os.path.join(bucket_path, f.file_name))  # the KV layout
        built = DataFileIndexWriter(settings)
        built.write(rows)
        assert built.finish() == f.embedded_index
        assert java[f.file_name]["index"] == "embedded"
        assert ours.keep_embedded(f) == java[f.file_name]["remain"]
        assert java[f.file_name]["remain"] == (probe in rows.column(column).to_pylist())


@pytest.mark.parametrize("writer", ["java", "ours"])
def test_deletion_vector_tables_skip_the_files_javas_scan_skips(
    java_oracle: JavaOracle, tmp_path: Path, writer: str
) -> None:
    """A primary-key table with deletion vectors: Java's scan (KeyValueFileStoreScan's value
    filter with the embedded index) and ours plan the same files for a lookup by a value
    column, fewer than without the index, and read the same rows."""
    options = {
        "bucket": "4",
        "deletion-vectors.enabled": "true",
        "file-index.bloom-filter.columns": "name",
        "file-index.bloom-filter.name.items": "100",
        "file-index.in-manifest-threshold": "1 mb",
    }
    if writer == "java":
        java_oracle.create_table(
            tmp_path, "db", "t", PK_FIELDS, primary_keys=["id"], options=options
        )
        for i in range(4):
            java_oracle.write_rows(tmp_path, "db", "t", batch(i)[1:-1])
    else:
        catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
        catalog.create_database("db", ignore_if_exists=True)
        schema = Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=options)
        catalog.create_table("db.t", schema)
        t = catalog.get_table("db.t")
        for i in range(4):
            builder = t.new_batch_write_builder()
            with builder.new_write() as write:
                rows = batch(i)[1:-1]
                write.write_arrow(pa.table(list(zip(*rows, strict=True)), schema=PK_SCHEMA))
                builder.new_commit().commit(write.prepare_commit())
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.t")
    java_rows = sorted(tuple(r) for r in java_oracle.read_table(tmp_path, "db", "t").rows)
    assert all_rows(table) == java_rows
    leaves = [("equal", "name", ["n115"])]
    ours = planned(table, leaves)
    assert sorted(ours) == java_oracle.plan_files(tmp_path, "db", "t", "name", "equal", "n115")
    assert ours < planned(table.copy({"file-index.read.enabled": "false"}), leaves)
    assert filtered_rows(table, leaves) == [(115, "n115", 15)]


def test_several_index_types_in_one_blob_are_javas_bytes(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """Every type at once, two on one column: the blob's header lists columns and types in
    Java's HashMap orders, so Java's embedded blobs are ours byte for byte, and both skip the
    same files."""
    options = {
        "bucket": "-1",
        "file-index.in-manifest-threshold": "1 mb",
        "file-index.bloom-filter.columns": "name,v",
        "file-index.bloom-filter.name.items": "100",
        "file-index.bloom-filter.v.items": "100",
        "file-index.bitmap.columns": "name",
        "file-index.bsi.columns": "id",
        "file-index.range-bitmap.columns": "v,id",
    }
    java_oracle.create_table(tmp_path, "db", "t", FIELDS, options=options)
    for i in range(4):
        java_oracle.write_rows(tmp_path, "db", "t", batch(i))
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.t")
    settings = FileIndexSettings.of(table.store)
    assert settings is not None
    rb = table.new_read_builder()
    for split in rb.new_scan().plan().splits():
        for f in split.files:
            writer = DataFileIndexWriter(settings)
            writer.write(rb.new_read().to_arrow([split.with_files([f])]))
            assert writer.finish() == f.embedded_index, f.file_name
    check_decisions(java_oracle, tmp_path, table, "embedded")


def test_map_key_indexes_are_javas_bytes(java_oracle: JavaOracle, tmp_path: Path) -> None:
    """``m[a]`` indexes the values of key ``a`` of map column ``m`` (null where a row lacks
    it); the map's own options reach every key's index. Java's blobs are ours."""
    options = {
        "bucket": "-1",
        "file-index.in-manifest-threshold": "1 mb",
        "file-index.bloom-filter.columns": "m[a],m[b]",
        "file-index.bloom-filter.m.items": "50",
        "file-index.bitmap.columns": "m[a]",
    }
    fields = [("id", "BIGINT"), ("m", {"type": "MAP", "key": "STRING", "value": "BIGINT"})]
    java_oracle.create_table(tmp_path, "db", "t", fields, options=options)
    for i in range(2):
        rows = [
            (1 + i, {"a": 10 + i, "b": 20}),
            (3 + i, None),
            (5 + i, {"b": 7}),
            (7 + i, {"a": None, "c": 1}),
        ]
        java_oracle.write_rows(tmp_path, "db", "t", rows)
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.t")
    settings = FileIndexSettings.of(table.store)
    assert settings is not None
    rb = table.new_read_builder()
    listed = [(s, f) for s in rb.new_scan().plan().splits() for f in s.files]
    assert len(listed) == 2
    for split, f in listed:
        writer = DataFileIndexWriter(settings)
        writer.write(rb.new_read().to_arrow([split.with_files([f])]))
        assert writer.finish() == f.embedded_index, f.file_name


_SAME_HASH = ["AaAa", "AaBB", "BBAa", "BBBB"]
"""Names with one String hash code: one HashMap bin at every size. (Eight such names would
make a tree bin of FileIndexOptions' Column keys, which Java cannot compare: it breaks the
ties by identity hash codes, so its order changes from run to run and cannot be matched.)"""
_ONE_BIN = ["t0", "t409", "t508", "t607", "t629", "t706", "t728", "t805"]
"""Eight names with distinct hash codes in one bin of 64: a tree bin, ordered by hash."""
_MANY = [f"c{i}" for i in range(40)]
ORDER_CASES: dict[str, dict[str, str]] = {
    # "a" and "q" share a bin of 16; "A1", "B2", "C3" another
    "one-bin": {"file-index.bloom-filter.columns": "a,q"},
    "mixed-case": {"file-index.bloom-filter.columns": "a,q,A1,B2,C3"},
    "same-hash": {"file-index.bloom-filter.columns": ",".join(_SAME_HASH)},
    "tree-bin": {"file-index.bitmap.columns": ",".join([*_MANY, *_ONE_BIN, *_SAME_HASH])},
    "resized": {"file-index.bloom-filter.columns": ",".join(["q", *_MANY, "a"])},
    "types": {
        "file-index.bloom-filter.columns": "a,q,A1,B2",
        "file-index.bitmap.columns": "q,a,C3",
        "file-index.bsi.columns": "B2,a",
        "file-index.range-bitmap.columns": "C3,q,A1",
    },
    "many-options": {
        "file-index.bloom-filter.columns": ",".join(["a", "q", *_MANY[:30]]),
        "file-index.bitmap.columns": "q,A1,a",
        **{f"file-index.bloom-filter.{c}.items": "20" for c in _MANY[:30]},
    },
    "map-keys": {
        "file-index.bloom-filter.columns": "m[a],m[q],q,m[A1],a",
        "file-index.bitmap.columns": "m[q],a,m[a]",
        "file-index.bloom-filter.m.items": "30",
    },
}


@pytest.mark.parametrize("case", list(ORDER_CASES))
def test_index_header_order_is_javas(java_oracle: JavaOracle, tmp_path: Path, case: str) -> None:
    """Java lists a blob's columns and types in the orders of the HashMaps its FileIndexOptions
    and DataFileIndexWriter fill (``computeIfAbsent`` links a new key at the head of its bin):
    colliding names, resized and tree bins, several types per column, many options, map keys.
    Our blob for each of Java's files is Java's (embedded or its ``.index`` file), byte for
    byte."""
    options = {"bucket": "-1", "file-index.in-manifest-threshold": "1 mb", **ORDER_CASES[case]}
    names: list[str] = []
    for key, value in options.items():
        if key.endswith(".columns"):
            names += [
                n
                for n in dict.fromkeys(x.split("[")[0] for x in value.split(","))
                if n not in names
            ]
    map_type = {"type": "MAP", "key": "STRING", "value": "BIGINT"}
    fields = [(n, map_type if n == "m" else "BIGINT") for n in names]
    java_oracle.create_table(tmp_path, "db", "t", fields, options=options)
    for i in range(2):
        rows = [
            tuple(
                {"a": k, "q": i, "A1": None} if n == "m" else k * (j + 1) + i
                for j, n in enumerate(names)
            )
            for k in range(5)
        ]
        java_oracle.write_rows(tmp_path, "db", "t", rows)
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.t")
    settings = FileIndexSettings.of(table.store)
    assert settings is not None
    rb = table.new_read_builder()
    listed = [(s, f) for s in rb.new_scan().plan().splits() for f in s.files]
    assert len(listed) == 2
    for split, f in listed:
        java = f.embedded_index
        if java is None:  # default bloom filters are big: Java put the blob beside the file
            (name,) = f.extra_files
            java = (tmp_path / "db.db" / "t" / "bucket-0" / name).read_bytes()
        writer = DataFileIndexWriter(settings)
        writer.write(rb.new_read().to_arrow([split.with_files([f])]))
        assert writer.finish() == java, f.file_name


REWRITE_ROUNDS = [
    {
        "file-index.bloom-filter.columns": "a,q,A1,B2,C3",
        "file-index.bloom-filter.a.items": "20",
    },
    {
        "file-index.bloom-filter.columns": "q,C3,a",
        "file-index.bitmap.columns": "A1,q,a",
        "file-index.bloom-filter.a.items": "30",
    },
]


def test_rewritten_index_order_is_javas(java_oracle: JavaOracle, tmp_path: Path) -> None:
    """``rewrite_file_index`` orders the blob as FileIndexProcessor does: the old ``.index``
    file read into HashMaps (the Reader's header, then readAll's), the dropped columns removed,
    the new indexes ``computeIfAbsent``ed in. Colliding names, our ``.index`` files are Java's."""
    names = ["a", "q", "A1", "B2", "C3", *_MANY[:20]]
    ours_wh, java_wh = tmp_path / "ours", tmp_path / "java"
    catalog = CatalogFactory.create({"warehouse": str(ours_wh)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([(n, pa.int64()) for n in names])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    table = catalog.get_table("db.t")
    for i in range(2):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            data = {n: [k * (j + 1) + i for k in range(5)] for j, n in enumerate(names)}
            write.write_arrow(pa.table(data, schema))
            builder.new_commit().commit(write.prepare_commit())
    alter_options(catalog, {"file-index.in-manifest-threshold": "1 b"})
    shutil.copytree(ours_wh, java_wh)
    theirs = CatalogFactory.create({"warehouse": str(java_wh)})
    for options in REWRITE_ROUNDS:
        alter_options(catalog, options)
        alter_options(theirs, options)
        rewrite_file_index(catalog, "db.t")
        java = java_rewrite(java_oracle, java_wh, "db", "t")
        java.pop("_commit_kind")
        got = {p.name: p.read_bytes() for p in ours_wh.rglob("*.index")}
        assert got == {p.name: p.read_bytes() for p in java_wh.rglob("*.index")}, options
        assert len(got) == 2 * (REWRITE_ROUNDS.index(options) + 1)
        rb = catalog.get_table("db.t").new_read_builder()
        files = [f for s in rb.new_scan().plan().splits() for f in s.files]
        assert {f.file_name: list(f.extra_files) for f in files} == {
            k: v["extra_files"] for k, v in java.items()
        }


def alter_options(catalog: Any, options: dict[str, str]) -> None:
    catalog.alter_table("db.t", [SchemaChange.set_option(k, v) for k, v in options.items()])
