"""Reads over two branches (``scan.fallback-branch``, ``scan.primary-branch``,
read/fallback_read.py) and the Python API's writes and stream reads of ``db.t$branch_b``.

Java's rules, as FallbackReadFileStoreTable has them: a partition the first branch has (by the
partition filter alone) is read from it with the whole filter, the others from the second
branch; streams and writes see the handle's branch alone; the option must name a branch that
exists, and only one of the two options is set.
"""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from tests.integration.table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError, SchemaMismatchError
from paimon_pyspark.read.fallback_read import OtherBranchSplit
from paimon_pyspark.store.schema_change import SchemaChange

SCHEMA = pa.schema([("dt", pa.string()), ("k", pa.int64()), ("v", pa.string())])


def rows(dt: str, ks: list[int], tag: str) -> pa.Table:
    return pa.table({"dt": [dt] * len(ks), "k": ks, "v": [f"{tag}{k}" for k in ks]}, SCHEMA)


def table_with_branch(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    """``db.t`` (dt-partitioned, key (dt, k), 1 bucket) with branch ``b`` (2 buckets):
    main has dt=1 (k 1, 2), b has dt=1 (k 1, 9) and dt=2 (k 3); then ``options`` on main."""
    catalog.create_database("db", True)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "1"}
    )
    catalog.create_table("db.t", schema, False)
    main = catalog.get_table("db.t")
    main.branch_manager().create_branch("b")
    catalog.alter_table("db.t$branch_b", [SchemaChange.set_option("bucket", "2")])
    write_commit(main, rows("1", [1, 2], "main"))
    branch = catalog.get_table("db.t$branch_b")
    write_commit(branch, rows("1", [1, 9], "b"))
    write_commit(branch, rows("2", [3], "b"))
    if options:
        catalog.alter_table("db.t", [SchemaChange.set_option(k, v) for k, v in options.items()])
    return catalog.get_table("db.t")


def keys(t: pa.Table) -> list[tuple[str, int, str]]:
    return sorted(zip(t["dt"].to_pylist(), t["k"].to_pylist(), t["v"].to_pylist(), strict=True))


def test_fallback_takes_the_partitions_the_branch_lacks(catalog: FileSystemCatalog) -> None:
    table = table_with_branch(catalog, **{"scan.fallback-branch": "b"})
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    assert sorted((s.partition_values, isinstance(s, OtherBranchSplit)) for s in splits) == [
        (("1",), False),
        (("2",), True),
    ]
    assert keys(rb.new_read().to_arrow(splits)) == [
        ("1", 1, "main1"),
        ("1", 2, "main2"),
        ("2", 3, "b3"),
    ]
    # the filter's data part does not make dt=1 a missing partition (Java lists partitions
    # by the partition filter alone)
    pb = rb.new_predicate_builder()
    k9 = table.new_read_builder().with_filter(pb.equal("k", 9))
    assert keys(k9.new_read().to_arrow(k9.new_scan().plan().splits())) == []
    k3 = table.new_read_builder().with_filter(pb.equal("k", 3)).with_projection(["k", "v"])
    assert k3.new_read().to_arrow(k3.new_scan().plan().splits()).to_pylist() == [
        {"k": 3, "v": "b3"}
    ]
    # the catalog lists the partitions a read takes, with their own branch's counts
    listed = catalog.list_partitions_paged("db.t").elements
    assert [(p.spec, p.record_count) for p in listed] == [({"dt": "1"}, 2), ({"dt": "2"}, 1)]
    # a pickled read (Ray's) still reads each split with its branch
    assert keys(pickle.loads(pickle.dumps(rb.new_read())).to_arrow(splits)) == keys(read_all(table))
    # the fallback branch reads alone; a stream of main and a write to main see main alone
    assert keys(read_all(catalog.get_table("db.t$branch_b"))) == [
        ("1", 1, "b1"),
        ("1", 9, "b9"),
        ("2", 3, "b3"),
    ]
    stream = table.new_stream_read_builder()
    first = stream.new_scan().plan()
    assert keys(stream.new_read().to_arrow(first.splits())) == [
        ("1", 1, "main1"),
        ("1", 2, "main2"),
    ]
    write_commit(table, rows("2", [4], "main"))
    assert keys(read_all(catalog.get_table("db.t"))) == [
        ("1", 1, "main1"),
        ("1", 2, "main2"),
        ("2", 4, "main4"),
    ]


def test_primary_branch_reads_first(catalog: FileSystemCatalog) -> None:
    table = table_with_branch(catalog, **{"scan.primary-branch": "b"})
    write_commit(table, rows("3", [5], "main"))
    assert keys(read_all(table)) == [
        ("1", 1, "b1"),
        ("1", 9, "b9"),
        ("2", 3, "b3"),
        ("3", 5, "main5"),
    ]


def test_time_travel_maps_to_the_other_branch_by_time(catalog: FileSystemCatalog) -> None:
    """Java's rewriteOtherOptions: main's snapshot 1 is read with b's latest snapshot
    committed at or before it (none yet: b's first)."""
    table = table_with_branch(catalog, **{"scan.fallback-branch": "b"})
    pinned = table.copy({"scan.snapshot-id": "1"})
    assert keys(read_all(pinned)) == [("1", 1, "main1"), ("1", 2, "main2")]


def test_options_name_an_existing_branch_and_only_one(catalog: FileSystemCatalog) -> None:
    table_with_branch(catalog)
    with pytest.raises(OptionError, match="branch 'nope' does not exist"):
        catalog.alter_table("db.t", [SchemaChange.set_option("scan.fallback-branch", "nope")])
    with pytest.raises(OptionError, match="cannot set both"):
        catalog.alter_table(
            "db.t",
            [
                SchemaChange.set_option("scan.fallback-branch", "b"),
                SchemaChange.set_option("scan.primary-branch", "b"),
            ],
        )
    assert "scan.fallback-branch" not in catalog.get_table("db.t").options.options


def test_branches_with_other_columns_are_refused(catalog: FileSystemCatalog) -> None:
    table_with_branch(catalog)
    catalog.alter_table("db.t$branch_b", [SchemaChange.add_column("extra", pa.int32())])
    catalog.alter_table("db.t", [SchemaChange.set_option("scan.fallback-branch", "b")])
    with pytest.raises(SchemaMismatchError, match="same row type"):
        read_all(catalog.get_table("db.t"))


def test_branch_handle_overwrites_and_streams(catalog: FileSystemCatalog) -> None:
    """Overwrite, stream write and stream read of ``db.t$branch_b``: the branch changes,
    main does not."""
    table = table_with_branch(catalog)
    branch = catalog.get_table("db.t$branch_b")
    stream = branch.new_stream_read_builder()
    scan, read = stream.new_scan(), stream.new_read()
    assert len(keys(read.to_arrow(scan.plan().splits()))) == 3
    builder = branch.new_batch_write_builder()
    builder.overwrite({"dt": "1"})
    with builder.new_write() as w:
        w.write_arrow(rows("1", [7], "o"))
        builder.new_commit().commit(w.prepare_commit())
    writer = branch.new_stream_write_builder()
    with writer.new_write() as w, writer.new_commit() as c:
        w.write_arrow(rows("4", [8], "s"))
        c.commit(w.prepare_commit(1), 1)
    assert keys(read_all(catalog.get_table("db.t$branch_b"))) == [
        ("1", 7, "o7"),
        ("2", 3, "b3"),
        ("4", 8, "s8"),
    ]
    changes = []
    while splits := scan.plan().splits():
        changes += keys(read.to_arrow(splits))
    assert ("4", 8, "s8") in changes
    assert keys(read_all(table)) == [("1", 1, "main1"), ("1", 2, "main2")]


def test_row_subfields_are_read_from_each_branch(catalog: FileSystemCatalog) -> None:
    nested = pa.schema([("dt", pa.string()), ("s", pa.struct([("a", pa.int64())]))])
    catalog.create_database("db", True)
    catalog.create_table("db.n", Schema.from_pyarrow_schema(nested, partition_keys=["dt"]), False)
    main = catalog.get_table("db.n")
    main.branch_manager().create_branch("b")
    write_commit(main, pa.table({"dt": ["1"], "s": [{"a": 1}]}, nested))
    write_commit(
        catalog.get_table("db.n$branch_b"), pa.table({"dt": ["2"], "s": [{"a": 2}]}, nested)
    )
    catalog.alter_table("db.n", [SchemaChange.set_option("scan.fallback-branch", "b")])
    rb = catalog.get_table("db.n").new_read_builder().with_projection(["dt", "s.a"])
    read = pickle.loads(pickle.dumps(rb.new_read()))
    assert sorted(read.to_arrow(rb.new_scan().plan().splits()).to_pylist(), key=str) == [
        {"dt": "1", "s_a": 1},
        {"dt": "2", "s_a": 2},
    ]
