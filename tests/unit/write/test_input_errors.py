"""Wrong arguments to the write side of the public API raise typed errors that name the call,
the argument and what came instead; what pypaimon accepts (a RecordBatch in write_arrow, a
Table in write_arrow_batch) is accepted. Each refusal writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    InvalidArgumentError,
    OptionError,
    PaimonError,
    SchemaMismatchError,
)

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])
ROWS = pa.table({"k": [1, 2], "v": ["a", "b"]}, schema=SCHEMA)


@pytest.fixture
def table(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    return catalog.get_table("db.t")


@pytest.fixture
def pk_table(catalog: FileSystemCatalog) -> FileStoreTable:
    """bucket = -1: the one kind of table whose writes take ``buckets``."""
    catalog.create_table("db.pk", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"]))
    return catalog.get_table("db.pk")


def _data_files(table: FileStoreTable) -> list[Path]:
    return [p for p in Path(table.path).rglob("data-*") if p.is_file()]


def _read(table: FileStoreTable) -> list[dict[str, Any]]:
    rb = table.new_read_builder()
    return sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist(), key=str)


@pytest.mark.parametrize(
    ("data", "hint"),
    [
        (None, "got NoneType None"),
        (ROWS.to_pandas(), "Use write_pandas"),
        (ROWS.to_pylist(), "pyarrow.Table.from_pylist"),
        (pa.RecordBatchReader.from_batches(SCHEMA, ROWS.to_batches()), "reader.read_all()"),
        (ROWS.column("k"), "got pyarrow.lib.ChunkedArray"),
    ],
)
def test_write_arrow_refuses_what_is_not_arrow_data(
    table: FileStoreTable, data: object, hint: str
) -> None:
    with table.new_batch_write_builder().new_write() as write:
        with pytest.raises(InvalidArgumentError, match="TableWrite.write_arrow") as e:
            write.write_arrow(data)  # type: ignore[arg-type]
        assert hint in str(e.value) and "Table 'db.t'" in str(e.value)
        assert isinstance(e.value, TypeError)  # callers catching TypeError still do
        assert write.prepare_commit() == []
    assert _data_files(table) == []


def test_record_batches_and_tables_go_either_way(table: FileStoreTable) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(ROWS.to_batches()[0])
        write.write_arrow_batch(ROWS)
        with pytest.raises(InvalidArgumentError, match="write_arrow_batch"):
            write.write_arrow_batch(None)  # type: ignore[arg-type]
        builder.new_commit().commit(write.prepare_commit())
    assert _read(table) == sorted(ROWS.to_pylist() * 2, key=str)


def test_write_pandas_refuses_arrow_and_names_the_failing_column(table: FileStoreTable) -> None:
    with table.new_batch_write_builder().new_write() as write:
        with pytest.raises(InvalidArgumentError, match="write_pandas.*use write_arrow"):
            write.write_pandas(ROWS)  # type: ignore[arg-type]
        with pytest.raises(SchemaMismatchError, match="column k"):
            write.write_pandas(pd.DataFrame({"k": [1, "x"], "v": ["a", "b"]}))
        with pytest.raises(SchemaMismatchError, match="Duplicate column names"):
            write.write_pandas(pd.DataFrame([[1, 2, "a"]], columns=["k", "k", "v"]))
        assert write.prepare_commit() == []


def test_a_field_given_twice_is_a_schema_mismatch(table: FileStoreTable) -> None:
    twice = pa.table([ROWS["k"], ROWS["k"], ROWS["v"]], names=["k", "k", "v"])
    with (
        table.new_batch_write_builder().new_write() as write,
        pytest.raises(SchemaMismatchError, match=r"\['k'\] more than once"),
    ):
        write.write_arrow(twice)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"buckets": [0]}, r"write_arrow\(buckets\) must hold one integer per row \(2\)"),
        ({"buckets": ["a", "b"]}, r"write_arrow\(buckets\).*dtype <U1"),
        ({"buckets": [2**40, 0]}, r"write_arrow\(buckets\) holds a value outside the int32"),
        ({"row_kinds": [0, 7]}, r"write_arrow\(row_kinds\) holds a value outside \[0, 1, 2, 3\]"),
        ({"row_kinds": 0}, r"write_arrow\(row_kinds\) must hold one integer per row"),
    ],
)
def test_per_row_arguments_are_checked(
    pk_table: FileStoreTable, kwargs: dict[str, Any], match: str
) -> None:
    with pk_table.new_batch_write_builder().new_write() as write:
        with pytest.raises(InvalidArgumentError, match=match):
            write.write_arrow(ROWS, **kwargs)
        assert write.prepare_commit() == []


def test_builder_arguments_are_checked(table: FileStoreTable) -> None:
    with pytest.raises(InvalidArgumentError, match=r"commit_user\) must be a string.*int 5"):
        table.new_batch_write_builder(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"with_commit_user.*got NoneType"):
        table.new_batch_write_builder().with_commit_user(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"overwrite\(static_partition\).*str 'p=1'"):
        table.new_batch_write_builder().overwrite("p=1")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"overwrite\(static_partition\).*int 1"):
        table.new_batch_write_builder().overwrite({1: "x"})  # type: ignore[dict-item]
    builder = table.new_batch_write_builder()
    with pytest.raises(InvalidArgumentError, match=r"sequence_slot\).*got int 3"):
        builder.new_write(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"sequence_slot\).*got tuple \('0', '2'\)"):
        builder.new_write(("0", "2"))  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="0 <= index < stride"):
        builder.new_write((2, 2))


def test_copy_takes_a_mapping_of_option_strings(table: FileStoreTable) -> None:
    with pytest.raises(InvalidArgumentError, match=r"copy\(dynamic_options\).*str 'bucket'"):
        table.copy("bucket")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"option 'bucket' the value NoneType None"):
        table.copy({"bucket": None})
    with pytest.raises(InvalidArgumentError, match=r"has the key int 1"):
        table.copy({1: "x"})  # type: ignore[dict-item]
    copied = table.copy({"target-file-size": 1024, "write-only": True})
    assert copied.dynamic_options == {"target-file-size": "1024", "write-only": "true"}
    assert copied.options.write_only


def test_delete_takes_a_predicate(pk_table: FileStoreTable) -> None:
    with pytest.raises(InvalidArgumentError, match=r"delete\(predicate\).*str 'k = 1'"):
        pk_table.delete("k = 1")  # type: ignore[arg-type]


def test_a_closed_write_says_so(table: FileStoreTable) -> None:
    write = table.new_batch_write_builder().new_write()
    write.close()
    with pytest.raises(PaimonError, match="this TableWrite is closed"):
        write.write_arrow(ROWS)
    assert _data_files(table) == []
