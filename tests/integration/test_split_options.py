"""``source.split.target-size`` and ``source.split.open-file-cost`` shape a scan's splits as
Java's split generators do, and the options we do not implement are refused, not ignored.

Append buckets: files, oldest first, packed into splits of the target size, each file
weighing at least the open-file cost (AppendOnlySplitGenerator). Primary-key buckets: files
whose key ranges overlap stay in one split, and those sections are packed in key order
(MergeTreeSplitGenerator). Whatever the packing, the rows read are the same.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.read.scan import pack_ordered

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def create(warehouse: Path, options: dict[str, str], primary_key: bool) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", ignore_if_exists=True)
    keys = ["id"] if primary_key else []
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys, options=options)
    )
    return catalog.get_table("db.t")


def rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]}, SCHEMA)


def split_files(table: FileStoreTable) -> list[int]:
    return [len(s.files) for s in table.new_read_builder().new_scan().plan().splits()]


def test_pack_ordered_closes_a_bin_before_it_overflows() -> None:
    assert pack_ordered([3, 3, 3, 3], lambda w: w, 6) == [[3, 3], [3, 3]]
    assert pack_ordered([3, 4, 3], lambda w: w, 6) == [[3], [4], [3]]
    assert pack_ordered([10, 1, 1], lambda w: w, 6) == [[10], [1, 1]]
    assert pack_ordered([], lambda w: w, 6) == []


def test_append_splits_follow_target_size_and_open_file_cost(tmp_path: Path) -> None:
    table = create(tmp_path, {"bucket": "-1"}, primary_key=False)
    for k in range(4):
        write_commit(table, rows(range(k * 10, k * 10 + 10)))
    everything = sort_rows(read_all(table))
    assert split_files(table) == [4]  # 4 small files of 4 mb weight each: one 128 mb split
    two_per_split = table.copy({"source.split.target-size": "8 mb"})
    assert split_files(two_per_split) == [2, 2]
    one_per_split = table.copy({"source.split.target-size": "1 mb"})
    assert split_files(one_per_split) == [1, 1, 1, 1]
    cheap_files = table.copy(
        {"source.split.target-size": "1 mb", "source.split.open-file-cost": "1 kb"}
    )
    assert split_files(cheap_files) == [4]  # real sizes (~1 kb each) all fit in 1 mb
    for t in (two_per_split, one_per_split, cheap_files):
        assert sort_rows(read_all(t)) == everything


def test_primary_key_bucket_splits_by_disjoint_key_sections(tmp_path: Path) -> None:
    table = create(tmp_path, {"bucket": "1", "write-only": "true"}, primary_key=True)
    for k in range(4):
        write_commit(table, rows(range(k * 10, k * 10 + 10)))  # disjoint key ranges
    everything = sort_rows(read_all(table))
    assert len(everything) == 40
    assert split_files(table) == [4]
    packed = table.copy({"source.split.target-size": "8 mb"})
    assert split_files(packed) == [2, 2]
    assert sort_rows(read_all(packed)) == everything
    rb = packed.new_read_builder()
    splits = rb.new_scan().plan().splits()
    ids = [sorted(rb.new_read().to_arrow([s]).column("id").to_pylist()) for s in splits]
    assert ids == [list(range(20)), list(range(20, 40))]  # sections packed in key order


def test_overlapping_primary_key_files_stay_in_one_split(tmp_path: Path) -> None:
    table = create(tmp_path, {"bucket": "1", "write-only": "true"}, primary_key=True)
    for k in range(4):
        write_commit(table, rows(range(k, k + 10)))  # every file overlaps the next
    tiny = table.copy({"source.split.target-size": "1 b"})
    assert split_files(tiny) == [4]
    assert sort_rows(read_all(tiny)) == sort_rows(read_all(table))
    assert len(read_all(tiny)) == 13


def test_split_sizes_must_be_memory_sizes(tmp_path: Path) -> None:
    table = create(tmp_path, {"bucket": "-1"}, primary_key=False)
    with pytest.raises(OptionError, match=r"source\.split\.target-size"):
        table.copy({"source.split.target-size": "big"})


@pytest.mark.parametrize(
    ("key", "value"),
    [("target-file-row-num", "1000"), ("primary-key.nullable", "true")],
)
def test_unimplemented_write_options_are_refused(tmp_path: Path, key: str, value: str) -> None:
    with pytest.raises(UnsupportedOptionError, match=rf"'db\.t'.*'{key}'"):
        create(tmp_path, {"bucket": "1", key: value}, primary_key=True)


@pytest.mark.parametrize(
    ("key", "value"),
    [("target-file-row-num", "9223372036854775807"), ("primary-key.nullable", "false")],
)
def test_their_defaults_are_accepted(tmp_path: Path, key: str, value: str) -> None:
    table = create(tmp_path, {"bucket": "1", key: value}, primary_key=True)
    write_commit(table, rows(range(3)))
    assert len(read_all(table)) == 3
