"""A primary-key bucket's final file (read/kv_read.py ``final_file``): under deduplicate, the
newest file without retractions wins every key it holds, so its rows may be read as they are
(Spark's Parquet reader does, spark/native.py) while the rest of the bucket merges without
them. Each test checks the split: final-file rows plus the rest are exactly the merged rows."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import write_commit

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.io.data_file_reader import read_data_file
from paimon_pyspark.merge.merge_function import MergeSettings
from paimon_pyspark.read.kv_read import final_file
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.spec.data_file_meta import DataFileMeta

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("v", pa.int64()),
        ("name", pa.string()),
        ("op", pa.string()),
    ]
)


def _table(catalog: FileSystemCatalog, name: str, **options: str) -> FileStoreTable:
    opts = {"bucket": "2", "write-only": "true", "rowkind.field": "op", **options}
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=opts)
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def _batch(ids: range, version: int, op: Any = "+I") -> pa.Table:
    rows = [
        {
            "id": i,
            "v": version * 1000 + i,
            "name": f"n{i}_{version}",
            "op": op(i) if callable(op) else op,
        }
        for i in ids
    ]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _splits(table: FileStoreTable) -> list[DataSplit]:
    return table.new_read_builder().new_scan().plan().splits()


def _rows(table: FileStoreTable) -> dict[int, dict[str, Any]]:
    rb = table.new_read_builder()
    return {r["id"]: r for r in rb.new_read().to_arrow(_splits(table)).to_pylist()}


def _key(row: dict[str, Any]) -> str:
    return repr(sorted(row.items(), key=lambda kv: kv[0]))


def _check_split(table: FileStoreTable, split: DataSplit) -> DataFileMeta | None:
    """The split read whole equals its final file's rows plus the rest read without them."""
    settings = MergeSettings.from_table(table.store)
    rb = table.new_read_builder()
    whole = rb.new_read().to_arrow([split]).to_pylist()
    rest = rb.new_read().leaving_out_final_files().to_arrow([split]).to_pylist()
    final = final_file(split.files, settings)
    mine = []
    if final is not None:
        data = read_data_file(table.store, split.bucket_path, final, list(table.store.fields))
        mine = data.to_pylist()
    else:
        assert rest == whole
    assert len(mine) + len(rest) == len(whole)
    assert sorted(map(_key, mine + rest)) == sorted(map(_key, whole))
    return final


def test_overlapping_commits_read_as_final_rows_plus_the_rest(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, "t")
    write_commit(table, _batch(range(0, 60), 1))
    # deletes and updates of the first commit's keys, a key deleted then added back later
    write_commit(table, _batch(range(30, 90), 2, lambda i: "-D" if i % 10 == 0 else "+U"))
    write_commit(table, _batch(range(50, 120), 3))
    for split in _splits(table):
        assert len(split.files) == 3
        final = _check_split(table, split)
        assert final is not None
        assert final.min_sequence_number == max(f.min_sequence_number for f in split.files)
    got = {
        r["id"]: r for r in table.new_read_builder().new_read().to_arrow(_splits(table)).to_pylist()
    }
    deleted = {i for i in range(30, 50) if i % 10 == 0}
    assert set(got) == set(range(120)) - deleted
    assert got[45]["name"] == "n45_2" and got[10]["name"] == "n10_1" and got[60]["v"] == 3060

    # a newest file holding a retraction is not final: its bucket merges whole
    write_commit(table, _batch(range(100, 110), 4, lambda i: "-D" if i == 104 else "+I"))
    kinds = []
    for split in _splits(table):
        kinds.append(_check_split(table, split) is None)
    assert True in kinds  # id 104's bucket
    ids = {
        r["id"] for r in table.new_read_builder().new_read().to_arrow(_splits(table)).to_pylist()
    }
    assert 104 not in ids and 105 in ids


def test_only_deduplicate_without_sequence_fields_and_strictly_newer_files_qualify(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, "rules")
    write_commit(table, _batch(range(0, 40), 1))
    write_commit(table, _batch(range(20, 60), 2))
    split = _splits(table)[0]
    dedup = MergeSettings.from_table(table.store)
    newest = final_file(split.files, dedup)
    assert newest is not None
    for engine in ("partial-update", "aggregation", "first-row"):
        assert final_file(split.files, dataclasses.replace(dedup, engine=engine)) is None
    assert final_file(split.files, dataclasses.replace(dedup, sequence_fields=("v",))) is None
    assert final_file(split.files[:1], dedup) is None  # one file: raw already
    older = next(f for f in split.files if f is not newest)
    # two writers' files whose sequence numbers interleave: neither wins every key
    overlapping = dataclasses.replace(older, max_sequence_number=newest.min_sequence_number)
    assert final_file([overlapping, newest], dedup) is None
    unknown = dataclasses.replace(newest, delete_row_count=None)  # written before the count
    assert final_file([older, unknown], dedup) is None


def test_float_keys_merge_with_the_final_files_keys(catalog: FileSystemCatalog) -> None:
    """-0.0 and +0.0 are one key, and a NaN joins the key before it (spec/float_keys.py): the
    final file's keys still take part in the merge of the rest, so these joins hold."""
    schema = pa.schema([pa.field("k", pa.float64(), nullable=False), ("v", pa.int64())])
    options = {"bucket": "1", "write-only": "true"}
    catalog.create_table(
        "db.f", Schema.from_pyarrow_schema(schema, primary_keys=["k"], options=options)
    )
    table = catalog.get_table("db.f")
    commits = [
        [0.0, 1.0, math.nan, 2.0, -math.inf],
        [-0.0, 3.0, math.inf],
        [math.nan, -0.0, 5.0],
    ]
    for version, keys in enumerate(commits):
        write_commit(table, pa.Table.from_pylist([{"k": k, "v": version} for k in keys], schema))
    (split,) = _splits(table)
    settings = MergeSettings.from_table(table.store)
    final = final_file(split.files, settings)
    assert final is not None
    whole = table.new_read_builder().new_read().to_arrow([split])
    rest = table.new_read_builder().new_read().leaving_out_final_files().to_arrow([split])
    mine = read_data_file(table.store, split.bucket_path, final, list(table.store.fields))
    assert rest.num_rows + mine.num_rows == whole.num_rows

    def text(t: pa.Table) -> list[tuple[str, int]]:
        return sorted(
            ("NaN" if math.isnan(r["k"]) else r["k"].hex(), r["v"]) for r in t.to_pylist()
        )

    assert sorted(text(rest) + text(mine)) == text(whole)


@pytest.mark.parametrize("engine", ["partial-update", "first-row"])
def test_other_engines_read_whole_buckets(catalog: FileSystemCatalog, engine: str) -> None:
    table = _table(catalog, engine.replace("-", "_"), **{"merge-engine": engine})
    write_commit(table, _batch(range(0, 40), 1))
    write_commit(table, _batch(range(20, 60), 2))
    for split in _splits(table):
        assert _check_split(table, split) is None
