"""pypaimon's read-side spellings: ``ReadBuilder.with_partition_filter`` and
``TableScan.with_shard``, each compared with a plain read of the same table (the oracle: the
whole table, filtered in Python)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, PredicateError
from paimon_pyspark.read.read_builder import ReadBuilder

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])


def _table(
    catalog: FileSystemCatalog, primary_keys: list[str] | None = None, **options: str
) -> FileStoreTable:
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=primary_keys or [], options=dict(options)
    )
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    for start in range(0, 60, 10):  # six commits: several files per partition
        ids = list(range(start, start + 10))
        write_commit(
            table,
            pa.table(
                {"id": ids, "v": [f"v{i}" for i in ids], "dt": ["abc"[i % 3] for i in ids]},
                schema=SCHEMA,
            ),
        )
    return table


def _read(rb: ReadBuilder) -> list[tuple[Any, ...]]:
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((r["id"], r["v"], r["dt"]) for r in rows)


def _all(table: FileStoreTable) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["v"], r["dt"]) for r in read_all(table).to_pylist())


def test_partition_filter_reads_only_its_partitions(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    rb.with_partition_filter(pb.is_in("dt", ["b", "c"]))
    assert {s.partition_values for s in rb.new_scan().plan().splits()} == {("b",), ("c",)}
    assert _read(rb) == [r for r in _all(table) if r[2] in ("b", "c")]


def test_partition_filter_and_filter_combine_in_either_order(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    pb = table.new_read_builder().new_predicate_builder()
    on_dt, on_id = pb.equal("dt", "a"), pb.greater_or_equal("id", 30)
    first = table.new_read_builder().with_partition_filter(on_dt).with_filter(on_id)
    second = table.new_read_builder().with_filter(on_id).with_partition_filter(on_dt)
    expected = [r for r in _all(table) if r[2] == "a" and r[0] >= 30]
    assert _read(first) == _read(second) == expected
    assert len(expected) == 10


def test_partition_filter_refuses_other_fields(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    rb = table.new_read_builder()
    with pytest.raises(PredicateError, match=r"\['id'\]"):
        rb.with_partition_filter(rb.new_predicate_builder().equal("id", 1))
    with pytest.raises(InvalidArgumentError, match="with_partition_filter"):
        rb.with_partition_filter("dt = 'a'")  # type: ignore[arg-type]
    assert _read(rb.with_partition_filter(None)) == _all(table)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_append_shards_are_disjoint_and_cover_the_table(catalog: FileSystemCatalog, n: int) -> None:
    table = _table(catalog)
    shards = []
    files: Counter[str] = Counter()
    for idx in range(n):
        rb = table.new_read_builder()
        scan = rb.new_scan().with_shard(idx, n)
        splits = scan.plan().splits()
        files.update(f.file_name for s in splits for f in s.files)
        shards.append(sorted(rb.new_read().to_arrow(splits).to_pylist(), key=lambda r: r["id"]))
    assert all(c == 1 for c in files.values())
    union = sorted((r["id"], r["v"], r["dt"]) for shard in shards for r in shard)
    assert union == _all(table)
    if n <= 6:  # 18 files of 3-4 rows: every shard gets some
        assert all(shards)


def test_primary_key_shards_split_by_bucket(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, primary_keys=["id", "dt"], bucket="4")
    write_commit(  # an update of every fifth key: merging must happen inside one shard
        table,
        pa.table(
            {
                "id": list(range(0, 60, 5)),
                "v": ["new"] * 12,
                "dt": ["abc"[i % 3] for i in range(0, 60, 5)],
            },
            schema=SCHEMA,
        ),
    )
    union = []
    for idx in range(3):
        rb = table.new_read_builder()
        splits = rb.new_scan().with_shard(idx, 3).plan().splits()
        assert {s.bucket % 3 for s in splits} <= {idx}
        union += rb.new_read().to_arrow(splits).to_pylist()
    assert sorted((r["id"], r["v"], r["dt"]) for r in union) == _all(table)
    assert sum(1 for r in union if r["v"] == "new") == 12


@pytest.mark.parametrize("args", [(3, 3), (-1, 2), (0, 0), (True, 2), ("0", 2), (0, 1.5)])
def test_with_shard_refuses_bad_arguments(catalog: FileSystemCatalog, args: Any) -> None:
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table("db.e", Schema.from_pyarrow_schema(SCHEMA))
    scan = catalog.get_table("db.e").new_read_builder().new_scan()
    with pytest.raises(InvalidArgumentError, match="with_shard"):
        scan.with_shard(*args)


def test_to_iterator_yields_the_rows_of_to_arrow(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    rb = table.new_read_builder().with_projection(["dt", "id"])
    splits = rb.new_scan().plan().splits()
    rows = list(rb.new_read().to_iterator(splits))
    assert sorted(rows) == sorted((r["dt"], r["id"]) for r in read_all(table).to_pylist())
    assert rows[0].get_field(1) == rows[0][1] and isinstance(rows[0].get_field(0), str)
    limited = table.new_read_builder().with_limit(7)
    assert len(list(limited.new_read().to_iterator(limited.new_scan().plan().splits()))) == 7
    with pytest.raises(InvalidArgumentError, match="to_iterator"):
        rb.new_read().to_iterator(rb.new_scan().plan())  # type: ignore[arg-type]


@pytest.mark.parametrize("parallelism", [None, 1, 2, 16])
def test_parallelism_does_not_change_what_is_read(
    catalog: FileSystemCatalog, parallelism: int | None
) -> None:
    table = _table(catalog, primary_keys=["id", "dt"], bucket="2")
    rb = table.new_read_builder()
    read, splits = rb.new_read(), rb.new_scan().plan().splits()
    got = read.to_arrow(splits, parallelism=parallelism)
    assert sorted((r["id"], r["v"], r["dt"]) for r in got.to_pylist()) == _all(table)
    frame = read.to_pandas(splits, parallelism=parallelism)
    assert sorted(frame["id"].tolist()) == list(range(60))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_parallelism_refuses_bad_values(catalog: FileSystemCatalog, bad: object) -> None:
    table = _table(catalog)
    rb = table.new_read_builder()
    with pytest.raises(InvalidArgumentError, match=r"to_arrow\(parallelism\)"):
        rb.new_read().to_arrow(rb.new_scan().plan().splits(), parallelism=bad)  # type: ignore[arg-type]
