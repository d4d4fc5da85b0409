"""Primary-key tables with fixed buckets: upserts, deletes and the merge-on-read, end to end.

Each test writes real tables through the public API and compares what a read returns with a
plain-Python model (a dict from key to the latest row), over several commits.
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import SchemaError
from paimon_pyspark.mergetree.sorted_run_writer import write_sorted_run
from paimon_pyspark.spec.binary_row import EMPTY_ROW
from paimon_pyspark.spec.commit_message import CommitMessage, DataIncrement
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER, VALUE_KIND

SCHEMA = pa.schema(
    [("id", pa.int64()), ("v", pa.int64()), ("name", pa.string()), ("dt", pa.string())]
)


def make_table(
    catalog: FileSystemCatalog,
    partitioned: bool = False,
    name: str = "t",
    schema: pa.Schema = SCHEMA,
    primary_keys: list[str] | None = None,
    **options: str,
) -> FileStoreTable:
    pk = primary_keys or (["id", "dt"] if partitioned else ["id"])
    catalog.create_table(
        f"db.{name}",
        Schema.from_pyarrow_schema(
            schema,
            partition_keys=["dt"] if partitioned else [],
            primary_keys=pk,
            options={"bucket": "3", **options},
        ),
    )
    return catalog.get_table(f"db.{name}")


def by_key(t: pa.Table, keys: tuple[str, ...] = ("id",)) -> dict[Any, dict[str, Any]]:
    out = {}
    for r in t.to_pylist():
        k = tuple(r[x] for x in keys)
        assert k not in out, f"key {k} read twice"
        out[k] = r
    return out


@pytest.mark.parametrize("partitioned", [False, True])
def test_upserts_over_commits_read_as_the_latest_row_per_key(
    catalog: FileSystemCatalog, partitioned: bool
) -> None:
    table = make_table(catalog, partitioned)
    rng = random.Random(7)
    model: dict[tuple[Any, ...], dict[str, Any]] = {}
    keys = ("id", "dt") if partitioned else ("id",)
    for commit_no in range(5):
        batch = []
        for _ in range(300):
            i = rng.randrange(200)
            dt = ("a", "b")[i % 2] if partitioned else "x"
            row = {"id": i, "v": commit_no * 1000 + rng.randrange(1000), "name": f"c{commit_no}"}
            row["dt"] = dt
            batch.append(row)
            model[tuple(row[k] for k in keys)] = row  # the last write of a key wins
        write_commit(table, pa.Table.from_pylist(batch, schema=SCHEMA))
        assert by_key(read_all(table), keys) == model
    splits = table.new_read_builder().new_scan().plan().splits()
    assert len({(s.partition, s.bucket) for s in splits}) == len(splits)  # one split per bucket
    # one level-0 file per commit, until the 5th made five sorted runs: compacted at its commit
    assert all([f.level for f in s.files] == [5] for s in splits)


def test_deletes_through_rowkind_field(catalog: FileSystemCatalog) -> None:
    schema = SCHEMA.append(pa.field("op", pa.string()))
    table = make_table(catalog, schema=schema, **{"rowkind.field": "op"})

    def batch(rows: list[tuple[int, int, str]]) -> pa.Table:
        return pa.Table.from_pylist(
            [{"id": i, "v": v, "name": "n", "dt": "x", "op": op} for i, v, op in rows],
            schema=schema,
        )

    write_commit(table, batch([(1, 10, "+I"), (2, 20, "+I"), (3, 30, "+I")]))
    write_commit(table, batch([(2, 20, "-D"), (3, 30, "-U"), (3, 31, "+U"), (4, 40, "+I")]))
    got = by_key(read_all(table))
    assert {k[0]: r["v"] for k, r in got.items()} == {1: 10, 3: 31, 4: 40}
    assert got[(3,)]["op"] == "+U"  # the row-kind column is data, read back as written
    # a delete inside one buffer: the later record of the key wins, even a delete
    write_commit(table, batch([(5, 50, "+I"), (5, 50, "-D"), (1, 10, "-D"), (1, 11, "+I")]))
    assert {k[0]: r["v"] for k, r in by_key(read_all(table)).items()} == {1: 11, 3: 31, 4: 40}


def test_table_delete_removes_matching_rows_in_one_snapshot(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, partitioned=True)
    data = pa.Table.from_pylist(
        [{"id": i, "v": i * 10, "name": f"n{i}", "dt": "ab"[i % 2]} for i in range(20)],
        schema=SCHEMA,
    )
    write_commit(table, data)
    before = table.snapshot_manager.latest()
    assert before is not None
    pb = table.new_read_builder().new_predicate_builder()
    assert table.delete(pb.and_(pb.greater_or_equal("v", 50), pb.equal("dt", "a"))) == 7
    after = table.snapshot_manager.latest()
    assert after is not None and after.id == before.id + 1
    left = sorted(r["id"] for r in read_all(table).to_pylist())
    assert left == [i for i in range(20) if not (i >= 5 and i % 2 == 0)]
    assert table.delete(pb.equal("id", 999)) == 0  # nothing matched: no snapshot
    assert table.snapshot_manager.latest().id == after.id  # type: ignore[union-attr]
    # the key comes back with a later upsert
    write_commit(table, data.filter(pa.compute.equal(data.column("id"), 6)))
    assert 6 in [r["id"] for r in read_all(table).to_pylist()]


def test_sequence_field_orders_records_before_arrival(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, **{"sequence.field": "v"})

    def one(i: int, v: int, name: str) -> pa.Table:
        return pa.Table.from_pylist([{"id": i, "v": v, "name": name, "dt": "x"}], schema=SCHEMA)

    write_commit(table, one(1, 5, "new"))
    write_commit(table, one(1, 3, "late but older"))  # a smaller sequence field loses
    write_commit(table, one(2, 3, "a"))
    write_commit(table, one(2, 3, "b"))  # equal sequence fields: arrival order decides
    got = {r["id"]: r["name"] for r in read_all(table).to_pylist()}
    assert got == {1: "new", 2: "b"}


def test_sequence_field_with_partition_keys_outside_the_primary_key_is_refused(
    catalog: FileSystemCatalog,
) -> None:
    """Java's SchemaValidation: no sequence.field when the key lacks a partition key.

    Such a key with bucket = N is written as Java does (tests/integration/test_dynamic_bucket.py).
    """
    table = make_table(
        catalog, partitioned=True, primary_keys=["id"], bucket="2", **{"sequence.field": "v"}
    )
    with pytest.raises(SchemaError, match="sequence.field in cross partition update"):
        write_commit(table, pa.Table.from_pylist([], schema=SCHEMA))


def test_value_filter_never_resurrects_an_overwritten_row(catalog: FileSystemCatalog) -> None:
    """Pruning the newer file by its value stats would bring the old row back."""
    table = make_table(catalog)
    row = {"id": 1, "v": 10, "name": "old", "dt": "x"}
    write_commit(table, pa.Table.from_pylist([row], schema=SCHEMA))
    write_commit(table, pa.Table.from_pylist([{**row, "v": 20, "name": "new"}], schema=SCHEMA))
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.equal("v", 10))
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 0
    rb = table.new_read_builder()
    rb = rb.with_filter(rb.new_predicate_builder().equal("v", 20)).with_projection(["name"])
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist() == [{"name": "new"}]


def test_scan_prunes_files_by_key_stats_and_buckets_by_value_stats(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, bucket="1")
    for lo in (0, 100, 200):
        ids = list(range(lo, lo + 10))
        write_commit(
            table,
            pa.Table.from_pylist(
                [{"id": i, "v": i, "name": "n", "dt": "x"} for i in ids], schema=SCHEMA
            ),
        )
    pb = table.new_read_builder().new_predicate_builder()

    def files(predicate: Any) -> int:
        rb = table.new_read_builder().with_filter(predicate)
        return sum(len(s.files) for s in rb.new_scan().plan().splits())

    assert files(None) == 3
    assert files(pb.equal("id", 105)) == 1  # key stats: only the file holding key 105
    assert files(pb.equal("v", 105)) == 3  # value stats: the whole bucket or nothing
    assert files(pb.equal("v", 5000)) == 0
    rb = table.new_read_builder().with_filter(pb.equal("id", 105))
    assert [r["id"] for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()] == [
        105
    ]


def _records(ids: list[int], seqs: list[int], kinds: list[int], name: str) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array(ids, pa.int64()),
            "name": [name] * len(ids),
            "dt": ["x"] * len(ids),
            SEQUENCE_NUMBER: pa.array(seqs, pa.int64()),
            VALUE_KIND: pa.array(kinds, pa.int8()),
        }
    )


def _commit_files(table: FileStoreTable, bucket: int, files: list[DataFileMeta]) -> None:
    message = CommitMessage(EMPTY_ROW, bucket, table.options.bucket, DataIncrement(tuple(files)))
    table.new_batch_write_builder().new_commit().commit([message])


def test_compacted_runs_read_without_merge_and_with_level0_on_top(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, bucket="1")
    top = write_sorted_run(table, [], 0, _records([1, 2, 3], [0, 1, 2], [0, 0, 0], "top"), 5, 1)
    assert all(f.level == 5 and f.file_source == FILE_SOURCE_COMPACT for f in top)
    _commit_files(table, 0, top)
    assert sorted(r["name"] for r in read_all(table).to_pylist()) == ["top"] * 3  # raw path
    # a level-0 delete of key 2 and an update of key 3 merge over the compacted run
    write_commit(
        table,
        pa.Table.from_pylist([{"id": 3, "v": 30, "name": "l0", "dt": "x"}], schema=SCHEMA),
    )
    pb = table.new_read_builder().new_predicate_builder()
    assert table.delete(pb.equal("id", 2)) == 1
    assert {r["id"]: r["name"] for r in read_all(table).to_pylist()} == {1: "top", 3: "l0"}


def test_first_row_batch_scan_skips_level0(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, bucket="1", **{"merge-engine": "first-row"})
    # a level-0 file committed as is (our TableWrite would compact it, as Java's writer does)
    _commit_files(table, 0, write_sorted_run(table, [], 0, _records([9], [0], [0], "l0"), 0, 0))
    assert table.new_read_builder().new_scan().plan().splits() == []  # only level 0 so far
    top = write_sorted_run(table, [], 0, _records([1], [0], [0], "top"), 5, 1)
    _commit_files(table, 0, top)
    (split,) = table.new_read_builder().new_scan().plan().splits()
    assert [f.level for f in split.files] == [5]


def test_limit_applies_to_merged_rows(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, bucket="1")
    data = pa.Table.from_pylist(
        [{"id": i % 5, "v": i, "name": "n", "dt": "x"} for i in range(50)], schema=SCHEMA
    )
    for _ in range(3):
        write_commit(table, data)
    rb = table.new_read_builder().with_limit(4)
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 4
    reader = rb.new_read().to_arrow_batch_reader(rb.new_scan().plan().splits())
    assert reader.read_all().num_rows == 4
    assert read_all(table).num_rows == 5
