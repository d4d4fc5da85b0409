"""pypaimon's read calls over ours: ``TableScan.with_slice``, ``ReadBuilder.explain`` and the
projection of ROW subfields (``with_projection(["info.name"])``)."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, PredicateError, UnsupportedOperationError
from paimon_pyspark.read.explain import ExplainResult
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.split_codec import decode_splits, encode_splits
from paimon_pyspark.types.data_types import RowType

FLAT = pa.schema([("id", pa.int64()), ("pt", pa.string())])
INFO = pa.struct([("name", pa.string()), ("addr", pa.struct([("city", pa.string())]))])
NESTED = pa.schema([("id", pa.int64()), ("info", INFO), ("info_name", pa.string())])


def _flat(catalog: FileSystemCatalog, pk: bool = False) -> FileStoreTable:
    catalog.create_database("db", ignore_if_exists=True)
    options = {"bucket": "1"} if pk else {}
    schema = Schema.from_pyarrow_schema(
        FLAT, partition_keys=["pt"], primary_keys=["id", "pt"] if pk else None, options=options
    )
    catalog.create_table("db.flat", schema)
    table = catalog.get_table("db.flat")
    for start, pt in ((0, "a"), (10, "a"), (20, "b")):  # three files of 10 rows
        ids = list(range(start, start + 10))
        write_commit(table, pa.table({"id": ids, "pt": [pt] * 10}, schema=FLAT))
    return table


def _sliced_ids(table: FileStoreTable, start: int, end: int) -> list[int]:
    rb = table.new_read_builder()
    splits = rb.new_scan().with_slice(start, end).plan().splits()
    return list(rb.new_read().to_arrow(splits).column("id").to_pylist())


def test_with_slice_reads_exactly_the_rows_at_those_positions(
    catalog: FileSystemCatalog,
) -> None:
    table = _flat(catalog)
    rb = table.new_read_builder()
    in_plan_order = rb.new_read().to_arrow(rb.new_scan().plan().splits(), 1)
    everything = in_plan_order.column("id").to_pylist()
    assert sorted(everything) == list(range(30))
    for start, end in ((0, 30), (0, 7), (5, 15), (9, 21), (25, 100), (29, 30)):
        assert _sliced_ids(table, start, end) == everything[start:end]
    # consecutive slices read every row once
    parts = [_sliced_ids(table, s, s + 7) for s in range(0, 30, 7)]
    assert [i for p in parts for i in p] == everything
    splits = rb.new_scan().with_slice(5, 15).plan().splits()
    assert sum(s.row_count for s in splits) == 10
    assert [(r[1], r[2]) for s in splits for r in s.file_ranges] == [(5, 10), (0, 5)]
    assert _sliced_ids(table, 40, 50) == []


def test_with_slice_refuses_bad_arguments_and_primary_keys(catalog: FileSystemCatalog) -> None:
    table = _flat(catalog)
    scan = table.new_read_builder().new_scan()
    for start, end in ((-1, 3), (3, 3), (5, 2), (True, 3), (0, "9")):
        with pytest.raises(InvalidArgumentError, match="0 <= start_pos < end_pos"):
            scan.with_slice(start, end)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="cannot be used together"):
        table.new_read_builder().new_scan().with_shard(0, 2).with_slice(0, 3)
    with pytest.raises(InvalidArgumentError, match="cannot be used together"):
        table.new_read_builder().new_scan().with_slice(0, 3).with_shard(0, 2)
    catalog.drop_table("db.flat")
    pk = _flat(catalog, pk=True)
    with pytest.raises(UnsupportedOperationError, match="use with_shard"):
        pk.new_read_builder().new_scan().with_slice(0, 3)


def test_explain_reports_the_plan_and_the_pruning(catalog: FileSystemCatalog) -> None:
    table = _flat(catalog)
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.and_predicates([pb.equal("pt", "a"), pb.greater_or_equal("id", 10)]))
    rb = rb.with_projection(["id"]).with_limit(50)
    result = rb.explain()
    assert isinstance(result, ExplainResult)
    assert (result.snapshot_id, result.schema_id, result.is_primary_key_table) == (3, 0, False)
    assert result.bucket_mode == "BUCKET_UNAWARE" and result.projection == ["id"]
    assert result.limit == 50 and result.predicate is not None and "pt" in result.predicate
    assert result.partition_pruning is not None and result.file_skipping is not None
    assert (result.partition_pruning.before, result.partition_pruning.after) == (2, 1)
    assert (result.file_skipping.before, result.file_skipping.after) == (2, 1)
    assert result.file_skipping.pruned == 1
    splits = rb.new_scan().plan().splits()
    assert result.split_count == len(splits) and result.file_count == 1
    assert result.estimated_row_count == 10 and result.level_histogram == {0: 1}
    assert result.splits is None
    text = str(result)
    assert "Partition pruning:  2 -> 1  (pruned 1)" in text and "Projection:         [id]" in text
    verbose = table.new_read_builder().explain(verbose=True)
    assert verbose.splits is not None and verbose.file_count == 3
    assert sorted(s.partition["pt"] for s in verbose.splits) == ["a", "b"]
    assert "file: " in str(verbose)
    catalog.create_table("db.empty", Schema.from_pyarrow_schema(FLAT))
    empty = catalog.get_table("db.empty").new_read_builder().explain()
    assert empty.snapshot_id is None and empty.split_count == 0
    assert "Snapshot:           <none>" in str(empty)


def _nested(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table("db.n", Schema.from_pyarrow_schema(NESTED))
    table = catalog.get_table("db.n")
    data = pa.table(
        {
            "id": [1, 2, 3],
            "info": [
                {"name": "ann", "addr": {"city": "oslo"}},
                None,
                {"name": None, "addr": None},
            ],
            "info_name": ["x", "y", "z"],
        },
        schema=NESTED,
    )
    write_commit(table, data)
    return table


def test_projection_of_row_subfields_names_them_by_path(catalog: FileSystemCatalog) -> None:
    table = _nested(catalog)
    rb = table.new_read_builder().with_projection(["info.name", "id", "info.addr.city"])
    out = read_all_of(rb)
    assert out.column_names == ["info_name", "id", "info_addr_city"]
    rows = sorted(out.to_pylist(), key=lambda r: r["id"])
    assert rows == [
        {"info_name": "ann", "id": 1, "info_addr_city": "oslo"},
        {"info_name": None, "id": 2, "info_addr_city": None},  # a null ROW: null subfields
        {"info_name": None, "id": 3, "info_addr_city": None},
    ]
    read_type = rb.read_type()
    assert isinstance(read_type, RowType)
    assert read_type.field_names == ["info_name", "id", "info_addr_city"]
    ids = {f.name: f.id for f in table.fields}
    info = table.fields[1].type
    assert isinstance(info, RowType) and read_type.fields[0].id == info.field("name").id
    assert read_type.fields[1].id == ids["id"]
    # pickled reads (Ray's) keep the projection
    read = rb.new_read()
    clone = pickle.loads(pickle.dumps(read))
    assert clone.to_arrow(rb.new_scan().plan().splits()).column_names == out.column_names


def test_a_taken_name_gets_a_suffix_and_a_top_level_name_wins(
    catalog: FileSystemCatalog,
) -> None:
    table = _nested(catalog)
    out = read_all_of(table.new_read_builder().with_projection(["info_name", "info.name"]))
    assert out.column_names == ["info_name", "info_name__0"]
    assert sorted(out.column("info_name").to_pylist()) == ["x", "y", "z"]
    assert read_all(table).column_names == ["id", "info", "info_name"]


def test_a_bad_subfield_path_is_refused(catalog: FileSystemCatalog) -> None:
    table = _nested(catalog)
    rb = table.new_read_builder()
    with pytest.raises(PredicateError, match="ROW 'info' has no field 'nope'"):
        rb.with_projection(["info.nope"])
    with pytest.raises(UnsupportedOperationError, match="only ROW subfields"):
        rb.with_projection(["id.x"])
    with pytest.raises(PredicateError, match="'zz.a' does not exist"):
        rb.with_projection(["zz.a"])
    with pytest.raises(PredicateError, match=r"\['zz'\] do not exist"):
        rb.with_projection(["zz"])


def read_all_of(rb: ReadBuilder) -> pa.Table:
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def test_a_sliced_split_keeps_its_rows_through_the_split_codec(
    catalog: FileSystemCatalog,
) -> None:
    table = _flat(catalog)
    splits = table.new_read_builder().new_scan().with_slice(5, 15).plan().splits()
    decoded = decode_splits(encode_splits(splits), table.partition_types)
    assert [s.file_ranges for s in decoded] == [s.file_ranges for s in splits]
