"""TableRead judges a filter's partition conjuncts once per split, on the split's partition
values: a split they reject is never opened, and the rows of the others are filtered by the
remaining conjuncts, with the same rows as a row-by-row filter; a Parquet file lacking a
column still fails as a corrupt file."""

from __future__ import annotations

import re
from dataclasses import replace

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.format.files import read_file
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.sql_predicate import parse_predicate

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.float64()), ("dt", pa.string())])


def _table(catalog: FileSystemCatalog, primary_key: bool) -> FileStoreTable:
    options = {"bucket": "2"} if primary_key else {}
    keys = ["dt", "id"] if primary_key else []
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=keys, options=options
    )
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    ids = list(range(40))
    data = pa.table(
        {"id": ids, "v": [i / 2 for i in ids], "dt": [f"d{i % 3}" for i in ids]}, schema=SCHEMA
    )
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())
    return table


def _ids(table: FileStoreTable, predicate: Predicate | None, splits: list[DataSplit]) -> list[int]:
    read = table.new_read_builder().with_filter(predicate).new_read()
    return sorted(read.to_arrow(splits).column("id").to_pylist())


def _expected(where: str) -> list[int]:
    rows = [{"id": i, "v": i / 2, "dt": f"d{i % 3}"} for i in range(40)]
    checks = {
        "dt = 'd1'": lambda r: r["dt"] == "d1",
        "dt = 'd1' AND id >= 20": lambda r: r["dt"] == "d1" and r["id"] >= 20,
        "dt = 'd1' OR id = 3": lambda r: r["dt"] == "d1" or r["id"] == 3,
        "dt IN ('d0', 'd2') AND v < 10": lambda r: r["dt"] in ("d0", "d2") and r["v"] < 10,
    }
    return [r["id"] for r in rows if checks[where](r)]


@pytest.mark.parametrize("primary_key", [False, True])
@pytest.mark.parametrize(
    "where",
    ["dt = 'd1'", "dt = 'd1' AND id >= 20", "dt = 'd1' OR id = 3", "dt IN ('d0', 'd2') AND v < 10"],
)
def test_filtered_read_of_unfiltered_splits_keeps_exactly_the_matching_rows(
    catalog: FileSystemCatalog, primary_key: bool, where: str
) -> None:
    table = _table(catalog, primary_key)
    splits = table.new_read_builder().new_scan().plan().splits()  # every partition
    predicate = parse_predicate(where, table.fields, "db.t")
    assert _ids(table, predicate, splits) == _expected(where)


@pytest.mark.parametrize("primary_key", [False, True])
def test_a_split_whose_partition_the_filter_rejects_is_never_opened(
    catalog: FileSystemCatalog, primary_key: bool
) -> None:
    table = _table(catalog, primary_key)
    splits = table.new_read_builder().new_scan().plan().splits()
    # the other partitions' splits now point at a directory of the table that does not exist
    # (one outside it is refused before anything is read: test_untrusted_paths.py)
    moved = [
        s
        if s.partition_values == ("d1",)
        else replace(s, bucket_path=re.sub(r"/dt=[^/]+/", "/dt=nowhere/", s.bucket_path))
        for s in splits
    ]
    with pytest.raises(CorruptTableError):
        _ids(table, None, moved)
    predicate = parse_predicate("dt = 'd1' AND id >= 20", table.fields, "db.t")
    assert _ids(table, predicate, moved) == _expected("dt = 'd1' AND id >= 20")


def test_a_parquet_file_without_a_requested_column_is_corrupt(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, primary_key=False)
    split = table.new_read_builder().new_scan().plan().splits()[0]
    path = f"{split.bucket_path}/{split.files[0].file_name}"
    assert read_file(table.file_io, path, "parquet", ["id"], SCHEMA).column_names == ["id"]
    with pytest.raises(CorruptTableError, match="no columns \\['nope'\\]"):
        read_file(table.file_io, path, "parquet", ["id", "nope"], SCHEMA)
