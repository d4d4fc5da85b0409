"""File indexes (``file-index.*``): every writer builds them, scans skip by them, maintenance
keeps them with their data files, and the options are checked as Java checks them.

The data defeats min/max pruning (every file holds the smallest and the largest id), so a file
is left out only by its index; "skipped" files are proven skipped by overwriting them with
garbage first (issue 38's "skipping, shown by damage").
"""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_pyspark import Schema
from paimon_pyspark.catalog import FileSystemCatalog
from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.io.file_index_writer import map_values, new_index_file_name
from paimon_pyspark.procedures import compact, expire_snapshots, remove_orphan_files
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.file_index import bloom_filter
from paimon_pyspark.spec.file_index.format import (
    java_index_items,
    java_index_map,
    read_index_file,
    read_utf,
    write_index_file,
    write_utf,
)
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.types.data_types import AtomicType, parse_type_json

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("v", pa.int32())])
PK_SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("v", pa.int32())]
)
BLOOM = {
    "file-index.bloom-filter.columns": "id,name",
    "file-index.bloom-filter.id.items": "500",
    "file-index.bloom-filter.name.items": "500",
    "file-index.bloom-filter.name.fpp": "0.01",
}


def batch(i: int, schema: pa.Schema = SCHEMA) -> pa.Table:
    """Batch ``i``: ids 100*i+1 .. 100*i+40, and ids 0 and 1000 in every batch."""
    ids = [0, *range(100 * i + 1, 100 * i + 41), 1000]
    return pa.table({"id": ids, "name": [f"n{x}" for x in ids], "v": [i] * len(ids)}, schema=schema)


def make(
    catalog: FileSystemCatalog,
    options: dict[str, str],
    batches: int = 4,
    primary_key: bool = False,
    name: str = "db.t",
) -> FileStoreTable:
    schema = PK_SCHEMA if primary_key else SCHEMA
    catalog.create_table(
        name,
        Schema.from_pyarrow_schema(
            schema, primary_keys=["id"] if primary_key else None, options=options
        ),
    )
    table = catalog.get_table(name)
    for i in range(batches):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            data = batch(i, schema)
            if primary_key:  # ids 0 and 1000 once, so every key lives in one file
                data = data.slice(1, 40)
            write.write_arrow(data)
            builder.new_commit().commit(write.prepare_commit())
    return catalog.get_table(name)


def files(table: FileStoreTable) -> list[tuple[str, DataFileMeta]]:
    """(bucket directory, meta) of every data file of the latest snapshot."""
    rb = table.new_read_builder()
    return [(s.bucket_path, f) for s in rb.new_scan().plan().splits() for f in s.files]


def planned(table: FileStoreTable, where: Any) -> set[str]:
    rb = table.new_read_builder().with_filter(where)
    return {f.file_name for s in rb.new_scan().plan().splits() for f in s.files}


def read(table: FileStoreTable, where: Any = None) -> list[dict[str, Any]]:
    rb = table.new_read_builder()
    if where is not None:
        rb = rb.with_filter(where)
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(got, key=lambda r: (r["id"], r["v"]))


def holding(table: FileStoreTable, ident: int) -> set[str]:
    """The data files whose rows include id ``ident``."""
    out = set()
    rb = table.new_read_builder()
    for split in rb.new_scan().plan().splits():
        for f in split.files:
            rows = rb.new_read().to_arrow([split.with_files([f])])
            if ident in rows.column("id").to_pylist():
                out.add(f.file_name)
    return out


def index_of(f: DataFileMeta, bucket_path: str) -> bytes:
    if f.embedded_index is not None:
        return f.embedded_index
    (name,) = [x for x in f.extra_files if x.endswith(".index")]
    return Path(bucket_path, name).read_bytes()


# --- the container and the bloom filter ------------------------------------------------------


def test_container_round_trips_and_names_use_javas_modified_utf8() -> None:
    blob = write_index_file(
        {"id": {"bloom-filter": b"\x01\x02", "bitmap": None}, "n\u00e9\x00\U0001f600": {"x": b""}}
    )
    magic, version, head = struct.unpack_from(">qii", blob)
    assert (magic, version) == (1493475289347502, 1)
    parsed = read_index_file(blob)
    assert parsed.column("id") == {"bloom-filter": b"\x01\x02", "bitmap": None}
    assert parsed.column("n\u00e9\x00\U0001f600") == {"x": b""}
    assert parsed.column("other") == {}
    assert blob[head:] == b"\x01\x02"
    # Java's writeUTF: NUL as two bytes, a supplementary character as two 3-byte surrogates
    assert write_utf("\x00") == b"\x00\x02\xc0\x80"
    assert len(write_utf("\U0001f600")) == 2 + 6
    assert read_utf(write_utf("a\U0001f600\x00"), 0) == ("a\U0001f600\x00", 2 + 1 + 6 + 2)
    with pytest.raises(Exception, match="not a file index"):
        read_index_file(b"\x00" * 40)


def test_java_index_map_is_filled_as_java_fills_it() -> None:
    # java.util.HashMap iterates bin by bin, bin = (h ^ h >>> 16) & (capacity - 1); Java's
    # index maps computeIfAbsent their columns, which links a new key at the head of its bin
    # (16 bins hold 12 keys, 64 hold 48), and put their types, which links it at the tail
    def columns(names: list[str]) -> list[str]:
        built = java_index_map((n, [("bitmap", None)]) for n in names)
        return [c for c, _ in java_index_items(built)]

    assert _bucket("a", 16) == _bucket("q", 16)
    assert columns(["a", "q"]) == ["q", "a"]
    many = [f"c{i}" for i in range(30)]
    assert columns(many) == sorted(many, key=lambda k: (_bucket(k, 64), -many.index(k)))
    types = ["range-bitmap", "bsi", "bloom-filter", "bitmap"]
    ((_, by_type),) = java_index_items(java_index_map([("a", [(t, None) for t in types])]))
    assert [t for t, _ in by_type] == sorted(types, key=lambda k: (_bucket(k, 16), types.index(k)))


def _bucket(key: str, capacity: int) -> int:
    h = 0
    for ch in key:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def test_bloom_filter_answers_equal_and_in_only() -> None:
    writer = bloom_filter.create_writer(AtomicType("BIGINT"), {"items": "100", "fpp": "0.001"})
    writer.write(pa.array([1, 2, None, 3], pa.int64()))
    reader = bloom_filter.create_reader(AtomicType("BIGINT"), writer.serialize())
    assert reader.may_match("equal", [2])
    assert not reader.may_match("equal", [99])
    assert reader.may_match("in", [99, 3])
    assert not reader.may_match("in", [98, 99])
    assert reader.may_match("equal", [None])  # Java: a null literal keeps the file
    assert reader.may_match("less_than", [0])  # no range answers from a bloom filter
    assert bloom_filter.filter_size(100, 0.001) == (1440, 10)  # BloomFilter64's sizing
    assert bloom_filter.filter_size(1_000_000, 0.1) == (4792536, 3)


def test_map_values_picks_each_rows_value_of_the_key() -> None:
    maps = pa.array(
        [[("a", 1), ("b", 2)], None, [("b", 3)], [], [("a", None)]],
        pa.map_(pa.string(), pa.int32()),
    )
    assert map_values(maps, "a").to_pylist() == [1, None, None, None, None]
    assert map_values(maps.slice(2), "b").to_pylist() == [3, None, None]


def test_new_index_file_name_follows_java() -> None:
    assert new_index_file_name("data-u-0.parquet.index") == "data-u-0.parquet-1.index"
    assert new_index_file_name("data-u-0.parquet-1.index") == "data-u-0.parquet-2.index"


# --- writers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold, where", [("1 mb", "embedded"), ("1 b", "separate")])
def test_append_writes_index_per_file_embedded_or_beside_it(
    catalog: FileSystemCatalog, threshold: str, where: str
) -> None:
    table = make(catalog, {**BLOOM, "file-index.in-manifest-threshold": threshold})
    for bucket_path, f in files(table):
        if where == "embedded":
            assert f.embedded_index is not None and f.extra_files == ()
        else:
            assert f.embedded_index is None
            assert f.extra_files == (f.file_name + ".index",)
            assert os.path.isfile(os.path.join(bucket_path, f.file_name + ".index"))
        index = read_index_file(index_of(f, bucket_path))
        assert set(index.header) == {"id", "name"}
        by_id = bloom_filter.create_reader(
            AtomicType("BIGINT"), index.column("id")["bloom-filter"] or b""
        )
        assert by_id.may_match("equal", [1000])


def test_key_value_postpone_and_compaction_writers_index_their_files(
    catalog: FileSystemCatalog,
) -> None:
    make(catalog, {**BLOOM, "bucket": "1", "write-only": "true"}, 2, True, "db.pk")
    post_options = {**BLOOM, "bucket": "-2", "postpone.batch-write-fixed-bucket": "false"}
    make(catalog, post_options, 2, True, "db.post")
    # before compaction: key-value files at level 0, postpone files in bucket-postpone
    pk_level0 = files(catalog.get_table("db.pk"))
    assert len(pk_level0) == 2 and {f.level for _, f in pk_level0} == {0}
    post_dir = Path(catalog.get_table("db.post").path, "bucket-postpone")
    assert len(list(post_dir.glob("*.parquet.index"))) == 2  # one per postpone file
    assert compact(catalog, "db.pk", compact_strategy="full") is not None
    assert compact(catalog, "db.post") is not None
    for name in ("db.pk", "db.post"):
        table = catalog.get_table(name)
        listed = files(table) if name == "db.post" else pk_level0 + files(table)
        assert max(f.level for _, f in listed) > 0  # compaction's output is indexed too
        for bucket_path, f in listed:
            index = read_index_file(index_of(f, bucket_path))
            assert set(index.header) == {"id", "name"}  # the value columns, by name
            data = index.column("name")["bloom-filter"]
            assert data is not None
            by_name = bloom_filter.create_reader(parse_type_json("STRING"), data)
            names = pq.read_table(os.path.join(bucket_path, f.file_name)).column("name")
            assert len(names) == f.row_count
            assert all(by_name.may_match("equal", [n]) for n in names.to_pylist())
            assert not by_name.may_match("equal", ["nothing-like-this"])


def test_append_compaction_indexes_its_output_and_expiry_removes_old_index_files(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, {**BLOOM, "file-index.in-manifest-threshold": "1 b"})
    before = files(table)
    old_indexes = [Path(b, f.file_name + ".index") for b, f in before]
    assert all(p.is_file() for p in old_indexes)
    assert compact(catalog, "db.t", options={"compaction.min.file-num": "2"}) is not None
    table = catalog.get_table("db.t")
    after = files(table)
    assert len(after) == 1
    bucket_path, f = after[0]
    assert f.extra_files == (f.file_name + ".index",)
    # expiry deletes the compacted-away files together with their index files
    expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1)
    assert not any(p.exists() for p in old_indexes)
    assert Path(bucket_path, f.file_name + ".index").is_file()
    # orphan cleaning keeps the live index file, removes a stray one
    stray = Path(bucket_path, "data-stray-0.parquet.index")
    stray.write_bytes(b"x")
    for p in Path(table.path).rglob("*"):  # every file old enough to be a candidate
        os.utime(p, (0, 0))
    an_hour_ago = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() - 3600))
    remove_orphan_files(catalog, "db.t", older_than=an_hour_ago)
    assert not stray.exists()
    assert Path(bucket_path, f.file_name + ".index").is_file()
    pb = table.new_read_builder().new_predicate_builder()
    assert [r["id"] for r in read(table, pb.equal("id", 215))] == [215]


def test_an_aborted_commit_removes_the_index_files_of_its_data_files(
    catalog: FileSystemCatalog,
) -> None:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, options={**BLOOM, "file-index.in-manifest-threshold": "1 b"}
        ),
    )
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(batch(0))
        messages = write.prepare_commit()
    written = [f for m in messages for f in m.new_files]
    assert written and all(f.extra_files for f in written)
    assert list(Path(table.path).rglob("*.index"))
    builder.new_commit().abort(messages)
    assert list(Path(table.path).rglob("*.index")) == []
    assert list(Path(table.path).rglob("*.parquet")) == []


# --- reads -----------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", ["1 mb", "1 b"])
def test_scans_skip_by_index_shown_by_damage(catalog: FileSystemCatalog, threshold: str) -> None:
    table = make(catalog, {**BLOOM, "file-index.in-manifest-threshold": threshold})
    pb = table.new_read_builder().new_predicate_builder()
    every = read(table)
    listed = files(table)
    by_name = {f.file_name: os.path.join(b, f.file_name) for b, f in listed}
    cases = [
        (pb.equal("id", 215), lambda r: r["id"] == 215),
        (pb.is_in("id", [5, 315]), lambda r: r["id"] in (5, 315)),
        (pb.equal("name", "n120"), lambda r: r["name"] == "n120"),
        (pb.and_(pb.equal("id", 215), pb.greater_or_equal("v", 0)), lambda r: r["id"] == 215),
        (pb.or_(pb.equal("id", 5), pb.equal("name", "n301")), lambda r: r["id"] in (5, 301)),
    ]
    no_index = table.copy({"file-index.read.enabled": "false"})
    for where, match in cases:
        kept = planned(table, where)
        assert planned(no_index, where) == set(by_name)  # min/max stats keep every file
        expected_files = set().union(*(holding(table, r["id"]) for r in every if match(r)))
        assert expected_files <= kept < set(by_name)
    # damage every file the point lookup skips: the reads never open them
    where = pb.equal("id", 215)
    skipped = set(by_name) - planned(table, where)
    assert len(skipped) == 3
    for name in skipped:
        Path(by_name[name]).write_bytes(b"garbage, not parquet")
    assert read(table, where) == [r for r in every if r["id"] == 215]
    with pytest.raises(Exception):  # noqa: B017 - the unindexed read opens a damaged file
        read(no_index, where)


def test_primary_key_tables_use_indexes_only_with_deletion_vectors(
    catalog: FileSystemCatalog,
) -> None:
    plain = make(catalog, {**BLOOM, "bucket": "1"}, 4, True, "db.plain")
    pb = plain.new_read_builder().new_predicate_builder()
    where = pb.equal("name", "n215")
    # Java's KeyValueFileStore: fileIndexReadEnabled && deletionVectorsEnabled; without
    # vectors a bucket's files merge, so none is left out by its index
    assert planned(plain, where) == {f.file_name for _, f in files(plain)}
    assert [r["id"] for r in read(plain, where)] == [215]
    dv = make(
        catalog, {**BLOOM, "bucket": "4", "deletion-vectors.enabled": "true"}, 4, True, "db.dv"
    )
    no_index = dv.copy({"file-index.read.enabled": "false"})
    assert len(planned(no_index, where)) == 4  # one compacted file per bucket, stats keep all
    kept = planned(dv, where)
    assert holding(dv, 215) <= kept < planned(no_index, where)
    assert [r["id"] for r in read(dv, where)] == [215]


def test_a_renamed_column_keeps_using_the_index_its_files_have(
    catalog: FileSystemCatalog,
) -> None:
    from paimon_pyspark.store.schema_change import SchemaChange

    table = make(catalog, BLOOM)
    with pytest.raises(OptionError, match="'name' is not a column"):  # a write would fail
        catalog.alter_table("db.t", [SchemaChange.rename_column("name", "label")])
    catalog.alter_table(
        "db.t",
        [
            SchemaChange.rename_column("name", "label"),
            SchemaChange.set_option("file-index.bloom-filter.columns", "id,label"),
            SchemaChange.remove_option("file-index.bloom-filter.name.items"),
            SchemaChange.remove_option("file-index.bloom-filter.name.fpp"),
        ],
    )
    table = catalog.get_table("db.t")
    pb = table.new_read_builder().new_predicate_builder()
    # the files' indexes name the column "name": found through its field id
    assert len(planned(table, pb.equal("label", "n215"))) == 1
    assert [r["id"] for r in read(table, pb.equal("label", "n215"))] == [215]


# --- options ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, error, words",
    [
        ({"file-index.bloom-filter.columns": "nope"}, OptionError, ["'nope'", "not a column"]),
        ({"file-index.bloom-filter.columns": "id,,name"}, OptionError, ["empty column"]),
        ({"file-index.zorder.columns": "id"}, UnsupportedOptionError, ["'zorder'"]),
        (
            {"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.v.items": "9"},
            OptionError,
            ["column 'v'"],
        ),
        (
            {"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.size": "9"},
            UnsupportedOptionError,
            ["'size'", "items, fpp"],
        ),
        (
            {"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.fpp": "2"},
            OptionError,
            ["fpp", "'2'", "column 'id'"],
        ),
        ({"file-index.bloom-filter.columns": "flag"}, UnsupportedOptionError, ["BOOLEAN"]),
        ({"file-index.bloom-filter.columns": "id[k]"}, OptionError, ["not a map"]),
        ({"file-index.in-manifest-threshold": "lots"}, OptionError, ["in-manifest-threshold"]),
        ({"file-index.read.enabled": "maybe"}, OptionError, ["file-index.read.enabled"]),
        ({"file-index.whatever": "1"}, UnsupportedOptionError, ["file-index.whatever"]),
    ],
)
def test_bad_file_index_options_are_refused_at_create(
    catalog: FileSystemCatalog, options: dict[str, str], error: type[Exception], words: list[str]
) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.int32()), ("flag", pa.bool_())])
    with pytest.raises(error) as info:
        catalog.create_table("db.bad", Schema.from_pyarrow_schema(schema, options=options))
    for w in ["'db.bad'", *words]:
        assert w in str(info.value), str(info.value)


def test_map_key_index_is_written_and_used(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("m", pa.map_(pa.string(), pa.int64()))])
    options = {
        "file-index.bloom-filter.columns": "m[a]",
        "file-index.bloom-filter.m.items": "100",
    }
    catalog.create_table("db.m", Schema.from_pyarrow_schema(schema, options=options))
    table = catalog.get_table("db.m")
    for i in range(2):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            rows = [(i, [("a", 10 * i + 1), ("b", 7)]), (i + 10, None)]
            write.write_arrow(pa.table(list(zip(*rows, strict=True)), schema=schema))
            builder.new_commit().commit(write.prepare_commit())
    for bucket_path, f in files(table):
        index = read_index_file(index_of(f, bucket_path))
        assert set(index.header) == {"m[a]"}
        data = index.column("m[a]")["bloom-filter"]
        assert data is not None
        reader = bloom_filter.create_reader(AtomicType("BIGINT"), data)
        values = pq.read_table(os.path.join(bucket_path, f.file_name)).column("m")
        mine = {v for row in values.to_pylist() if row for k, v in row if k == "a"}
        assert len(mine) == 1 and reader.may_match("equal", [mine.pop()])
        assert not reader.may_match("equal", [7])  # key b's value is not indexed


def test_unknown_index_types_keep_files_and_empty_indexes_skip_as_java(
    catalog: FileSystemCatalog,
) -> None:
    from paimon_pyspark.read.file_index_filter import FileIndexFilter

    table = make(catalog, {}, 1)
    ((_, f),) = files(table)
    pb = table.new_read_builder().new_predicate_builder()

    def keep(blob: bytes, where: Any) -> bool:
        return FileIndexFilter(table.store, where).keep(f, read_index_file(blob))

    unknown = write_index_file({"id": {"some-future-index": b"\x00junk"}})
    assert keep(unknown, pb.equal("id", 99999))
    # an empty index (start -1): Java's EmptyFileIndexReader, no value in the file
    empty = write_index_file({"id": {"bloom-filter": None}})
    assert not keep(empty, pb.equal("id", 5))
    assert not keep(empty, pb.is_in("id", [5, 6]))
    assert not keep(empty, pb.greater_than("id", 5))
    assert keep(empty, pb.is_null("id"))
    assert keep(empty, pb.not_equal("id", 5))
    assert keep(empty, pb.equal("name", "n5"))  # no index on that column
    assert keep(empty, pb.or_(pb.equal("id", 5), pb.equal("name", "n5")))
    assert not keep(empty, pb.and_(pb.equal("id", 5), pb.equal("name", "n5")))
