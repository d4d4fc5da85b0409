"""The key-value writer of primary-key tables: the files it leaves and what their metadata says.

Every test writes real files through the public write API (or ``write_sorted_run``) and checks
them with pyarrow's Parquet reader and the DataFileMeta decoders; facts about Java's layout come
from files Java Paimon 1.4.2 wrote (see tests/interop/test_pk_java.py for the cross-checks).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError, SchemaMismatchError
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.mergetree.sorted_run_writer import write_sorted_run
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.spec.key_value import KEY_FIELD_ID_START, SEQUENCE_NUMBER, VALUE_KIND
from paimon_pyspark.types.data_types import AtomicType, CharType, DataType

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("op", pa.string())])
BIGINT: list[DataType] = [AtomicType("BIGINT")]


def make_table(catalog: FileSystemCatalog, name: str = "t", **options: str) -> FileStoreTable:
    opts = {"bucket": "1", **options}
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=opts)
    )
    return catalog.get_table(f"db.{name}")


def rows(ids: list[int], names: list[str] | None = None, ops: list[str] | None = None) -> pa.Table:
    names = names or [f"n{i}" for i in ids]
    ops = ops or ["+I"] * len(ids)
    return pa.table({"id": ids, "name": names, "op": ops}, schema=SCHEMA)


def write_messages(
    table: FileStoreTable, *batches: pa.Table, slot: tuple[int, int] | None = None
) -> list[CommitMessage]:
    builder = table.new_batch_write_builder()
    with builder.new_write(sequence_slot=slot) as write:
        for b in batches:
            write.write_arrow(b)
        messages = write.prepare_commit()
    return messages


def commit(table: FileStoreTable, *batches: pa.Table) -> list[DataFileMeta]:
    messages = write_messages(table, *batches)
    table.new_batch_write_builder().new_commit().commit(messages)
    return [f for m in messages for f in m.data_increment.new_files]


def bucket_file(table: FileStoreTable, f: DataFileMeta) -> str:
    return f"{table.path}/bucket-0/{f.file_name}"


def key(data: bytes, types: list[DataType] = BIGINT) -> list[Any]:
    return deserialize_with_arity(data, types)


def test_file_layout_and_parquet_field_ids_match_java(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog)
    (f,) = commit(table, rows([1, 2]))
    schema = pq.read_schema(bucket_file(table, f))
    assert schema.names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "name", "op"]
    ids = [int(fd.metadata[b"PARQUET:field_id"]) for fd in schema]
    assert ids == [KEY_FIELD_ID_START + 0, 2147483646, 2147483645, 0, 1, 2]
    parquet = pq.ParquetFile(bucket_file(table, f)).schema
    # Java: _SEQUENCE_NUMBER and _VALUE_KIND are REQUIRED, TINYINT is INT32 with INT(8).
    assert parquet.column(1).max_definition_level == 0
    assert parquet.column(2).physical_type == "INT32"
    logical = json.loads(parquet.column(2).logical_type.to_json())  # pyarrow 25 spaces it out
    assert logical == {"Type": "Int", "bitWidth": 8, "isSigned": True}


def test_flush_merges_the_buffer_to_one_sorted_record_per_key(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog)
    (f,) = commit(table, rows([3, 1, 3, 2], ["a", "b", "c", "d"]))
    data = pq.read_table(bucket_file(table, f))
    assert data.column("id").to_pylist() == [1, 2, 3]
    assert data.column("name").to_pylist() == ["b", "d", "c"]  # the later 3 wins
    assert data.column(SEQUENCE_NUMBER).to_pylist() == [1, 3, 2]  # arrival order
    assert data.column("_KEY_id").to_pylist() == [1, 2, 3]
    assert (f.row_count, f.level, f.file_source, f.delete_row_count) == (3, 0, 0, 0)
    assert (f.min_sequence_number, f.max_sequence_number) == (1, 3)
    assert key(f.min_key) == [1] and key(f.max_key) == [3]
    assert key(f.key_stats.min_values) == [1] and key(f.key_stats.max_values) == [3]
    assert f.key_stats.null_counts == (0,)
    assert f.value_stats_cols is None  # value stats cover every table column
    types = [AtomicType("BIGINT"), CharType(2147483647), CharType(2147483647)]
    assert deserialize_with_arity(f.value_stats.min_values, types) == [1, "b", "+I"]


def test_sequence_numbers_continue_after_the_bucket_maximum(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog)
    commit(table, rows([1, 2, 3]))
    (f,) = commit(table, rows([5, 4]))
    assert (f.min_sequence_number, f.max_sequence_number) == (3, 4)
    data = pq.read_table(bucket_file(table, f))
    assert data.column(SEQUENCE_NUMBER).to_pylist() == [4, 3]


def test_sequence_slot_interleaves_writers_of_one_bucket(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog)
    commit(table, rows([100]))  # bucket max sequence 0, so base = 1
    (m,) = write_messages(table, rows([1, 2]), rows([3]), slot=(1, 3))
    (f,) = m.data_increment.new_files
    data = pq.read_table(bucket_file(table, f))
    assert data.column(SEQUENCE_NUMBER).to_pylist() == [2, 5, 8]  # 1 + k*3 + 1
    assert (f.min_sequence_number, f.max_sequence_number) == (2, 8)
    (m0,) = write_messages(table, rows([1, 2, 3]), slot=(0, 3))
    seq0 = pq.read_table(bucket_file(table, m0.data_increment.new_files[0]))
    assert seq0.column(SEQUENCE_NUMBER).to_pylist() == [1, 4, 7]
    with pytest.raises(OptionError, match="sequence_slot"):
        table.new_batch_write_builder().new_write(sequence_slot=(3, 3))


def test_retractions_are_counted_and_kept_in_flushed_files(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, **{"rowkind.field": "op"})
    (f,) = commit(table, rows([1, 2, 3, 4], ops=["+I", "-D", "+U", "-U"]))
    data = pq.read_table(bucket_file(table, f))
    assert data.column(VALUE_KIND).to_pylist() == [0, 3, 2, 1]
    assert data.column("op").to_pylist() == ["+I", "-D", "+U", "-U"]  # an ordinary column
    assert (f.row_count, f.delete_row_count) == (4, 2)


def test_bad_row_kind_names_table_field_and_value(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, **{"rowkind.field": "op"})
    with pytest.raises(SchemaMismatchError, match=r"'db\.t'.*'op'.*'\+X'"):
        commit(table, rows([1, 2], ops=["+I", "+X"]))
    with pytest.raises(SchemaMismatchError, match="None"):
        commit(table, pa.table({"id": [1], "name": ["a"], "op": [None]}, schema=SCHEMA))


def test_write_buffer_spills_sorted_runs(catalog: FileSystemCatalog) -> None:
    # a buffer that may not spill to local disk flushes a level-0 run when full
    no_spill = {"write-buffer-size": "1 b", "write-buffer-spillable": "false"}
    table = make_table(catalog, **no_spill)
    files = commit(table, rows([2, 1]), rows([1, 3]), rows([2]))
    assert len(files) == 3  # one level-0 sorted run per spill
    assert [f.level for f in files] == [0, 0, 0]
    ranges = [(f.min_sequence_number, f.max_sequence_number) for f in files]
    assert ranges == [(0, 1), (2, 3), (4, 4)]
    assert [key(f.min_key) + key(f.max_key) for f in files] == [[1, 2], [1, 3], [2, 2]]


def test_rolling_splits_a_run_into_disjoint_key_ranges(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, **{"target-file-size": "1 b"})
    data = rows(list(range(10)))
    records = data.append_column(SEQUENCE_NUMBER, pa.array(range(10), pa.int64())).append_column(
        VALUE_KIND, pa.array([0] * 10, pa.int8())
    )
    settings_piece = 3
    files: list[DataFileMeta] = []
    for start in range(0, 10, settings_piece):  # three writes of one run
        files += write_sorted_run(table, [], 0, records.slice(start, settings_piece), 4, 1)
    assert all(f.level == 4 and f.file_source == FILE_SOURCE_COMPACT for f in files)
    keys = [(key(f.min_key)[0], key(f.max_key)[0]) for f in files]
    assert keys == sorted(keys)
    assert all(hi < lo2 for (_, hi), (lo2, _) in itertools.pairwise(keys))
    back = read_kv_records(table, f"{table.path}/bucket-0", files)
    assert back.column("id").to_pylist() == list(range(10))
    assert back.column(SEQUENCE_NUMBER).to_pylist() == list(range(10))  # kept, not renumbered


def test_thin_mode_omits_key_columns(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, **{"data-file.thin-mode": "true"})
    (f,) = commit(table, rows([2, 1]))
    schema = pq.read_schema(bucket_file(table, f))
    assert schema.names == ["_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "name", "op"]
    assert key(f.min_key) == [1] and key(f.key_stats.max_values) == [2]


def test_key_stats_truncate_strings_at_128_like_java(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("k", pa.string()), ("v", pa.int32())])
    catalog.create_table(
        "db.s",
        Schema.from_pyarrow_schema(
            schema, primary_keys=["k"], options={"bucket": "1", "metadata.stats-mode": "none"}
        ),
    )
    table = catalog.get_table("db.s")
    (f,) = commit(table, pa.table({"k": ["a" * 200, "b" * 300], "v": [1, 2]}, schema=schema))
    string: list[DataType] = [CharType(2147483647)]
    assert key(f.key_stats.min_values, string) == ["a" * 128]
    assert key(f.key_stats.max_values, string) == ["b" * 127 + "c"]
    assert key(f.min_key, string) == ["a" * 200]  # keys are never truncated
    assert f.value_stats_cols == ()  # stats-mode none still applies to value stats


def test_abort_removes_flushed_runs(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, **{"write-buffer-size": "1 b", "write-buffer-spillable": "false"})
    write = table.new_batch_write_builder().new_write()
    write.write_arrow(rows([1, 2]))
    write.write_arrow(rows([3]))
    write.write_arrow(rows([4]))  # waits for the bucket's previous write (one at a time)
    bucket = f"{table.path}/bucket-0"
    assert len(table.file_io.list_names(bucket)) >= 2  # spilled already
    write.close()
    assert table.file_io.list_names(bucket) == []
