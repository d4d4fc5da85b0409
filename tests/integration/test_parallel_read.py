"""Reads on many threads: a batch reader hands out the files' rows in the order one thread does,
reading ahead at most its thread count, and partition columns are filled from the split's
partition values exactly as the files hold them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from table_helpers import write_commit

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog import FileSystemCatalog
from paimon_pyspark.errors import InvalidArgumentError
from paimon_pyspark.io import data_file_reader
from paimon_pyspark.read import table_read

PARTITION_TYPES = {
    "s": pa.string(),
    "i": pa.int32(),
    "d": pa.date32(),
    "dec": pa.decimal128(10, 2),
    "ts": pa.timestamp("us"),
}


def _partitioned(catalog: FileSystemCatalog, commits: int = 3) -> tuple[FileStoreTable, pa.Table]:
    schema = pa.schema([("id", pa.int64()), *PARTITION_TYPES.items()])
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(schema, partition_keys=list(PARTITION_TYPES))
    )
    table = catalog.get_table("db.t")
    written = []
    for c in range(commits):
        ids = list(range(c * 100, c * 100 + 100))
        data = pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "s": [None if i % 5 == 0 else f"p{i % 3}" for i in ids],
                "i": pa.array([i % 2 for i in ids], pa.int32()),
                "d": [dt.date(2026, 1, 1 + i % 2) for i in ids],
                "dec": [Decimal(f"{i % 2}.25") for i in ids],
                "ts": [dt.datetime(2026, 1, 1, i % 2) for i in ids],
            },
            schema=schema,
        )
        write_commit(table, data)
        written.append(data)
    return table, pa.concat_tables(written)


def _raw_files(table: FileStoreTable) -> pa.Table:
    """Every file read as it is, partition columns included (the reference)."""
    rb = table.new_read_builder()
    parts = []
    for split in rb.new_scan().plan().splits():
        for f in split.files:
            parts.append(
                data_file_reader.read_data_file(table.store, split.bucket_path, f, table.fields)
            )
    return pa.concat_tables(parts)


def _rows(t: pa.Table) -> list[tuple[object, ...]]:
    return sorted((tuple(r.values()) for r in t.to_pylist()), key=repr)


def test_partition_columns_come_from_the_split_as_the_files_hold_them(
    catalog: FileSystemCatalog,
) -> None:
    table, written = _partitioned(catalog)
    rb = table.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    assert got.schema == written.schema
    assert _rows(got) == _rows(written) == _rows(_raw_files(table).select(written.column_names))
    only = table.new_read_builder().with_projection(["ts", "s"])
    part = only.new_read().to_arrow(only.new_scan().plan().splits())
    assert _rows(part) == _rows(written.select(["ts", "s"]))
    sliced = table.new_read_builder()
    splits = sliced.new_scan().with_slice(10, 250).plan().splits()
    assert sliced.new_read().to_arrow(splits).num_rows == 240


@pytest.mark.parametrize("threads", [1, 3])
def test_a_batch_reader_reads_ahead_and_keeps_the_order(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    monkeypatch.setattr(table_read, "_READ_THREADS", threads)
    table, _ = _partitioned(catalog, commits=6)
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    read = rb.new_read()
    serial = pa.concat_tables(read._parts(splits, threads=1))
    assert len([f for s in splits for f in s.files]) > 3 * threads
    batches = read.to_arrow_batch_reader(splits).read_all()
    assert batches.equals(serial)
    limited = table.new_read_builder().with_limit(150)
    head = limited.new_read().to_arrow_batch_reader(splits).read_all()
    assert head.equals(serial.slice(0, 150))
    for n in (1, 2, 5):
        assert read.to_arrow_batch_reader(splits, parallelism=n).read_all().equals(serial)
    with pytest.raises(InvalidArgumentError, match="parallelism"):
        read.to_arrow_batch_reader(splits, parallelism=0)


def test_a_stream_reads_a_big_file_one_row_group_at_a_time(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream holds row groups, not whole files: a file's row groups are read one per task
    (here every file counts as big), and the rows are those of to_arrow, in order."""
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    options = {"target-file-size": "256 kb"}
    catalog.create_table("db.big", Schema.from_pyarrow_schema(schema, options=options))
    table = catalog.get_table("db.big")
    n = 60_000
    write_commit(table, pa.table({"id": range(n), "s": [f"value-{i:08d}" for i in range(n)]}))
    monkeypatch.setattr(table_read, "_WHOLE_FILE_ROWS", 0)
    seen: list[int | None] = []
    real = table_read.read_data_file

    def spy(*args: object, row_group: int | None = None, **kwargs: object) -> pa.Table:
        seen.append(row_group)
        return real(*args, row_group=row_group, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(table_read, "read_data_file", spy)
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    streamed = rb.new_read().to_arrow_batch_reader(splits).read_all()
    assert streamed.column("id").to_pylist() == sorted(streamed.column("id").to_pylist())
    assert streamed.equals(rb.new_read().to_arrow(splits))
    assert streamed.num_rows == n
    assert None in seen  # to_arrow reads whole files
    assert max(g for g in seen if g is not None) >= 1  # some file had several row groups
