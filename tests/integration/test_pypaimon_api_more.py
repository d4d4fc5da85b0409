"""More of pypaimon's table API over ours: a split's partition row, commit callbacks, the
catalog's partition calls and truncation, and pypaimon's typed errors for schema changes and
tags. Java reads what truncation leaves in tests/interop/test_java_reads_truncate.py."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.commit.commit_callback import CommitCallback, CommitCallbackContext
from paimon_pyspark.errors import (
    ColumnAlreadyExistError,
    ColumnNotExistError,
    CommitError,
    InvalidArgumentError,
    PartitionSpecError,
    SchemaChangeError,
    TableNotExistError,
    TagAlreadyExistError,
    TagNotExistError,
    UnsupportedOptionError,
)
from paimon_pyspark.read.scan import PartitionRow
from paimon_pyspark.read.split_codec import decode_splits, encode_splits
from paimon_pyspark.spec.manifest import KIND_ADD, KIND_DELETE
from paimon_pyspark.store.schema_change import Move, SchemaChange

SCHEMA = pa.schema([("dt", pa.string()), ("hr", pa.int32()), ("id", pa.int64())])


def _table(catalog: FileSystemCatalog, partition_keys: list[str], **options: str) -> FileStoreTable:
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, partition_keys=partition_keys, options=options)
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def _rows(dts: list[str], hrs: list[int], ids: list[int]) -> pa.Table:
    return pa.table({"dt": dts, "hr": hrs, "id": ids}, schema=SCHEMA)


def _fill(table: FileStoreTable) -> None:
    """Four partitions (dt, hr): (a, 1) (a, 2) (b, 1) (b, null), two rows each."""
    write_commit(
        table,
        pa.table(
            {
                "dt": ["a", "a", "a", "a", "b", "b", "b", "b"],
                "hr": [1, 1, 2, 2, 1, 1, None, None],
                "id": list(range(8)),
            },
            schema=SCHEMA,
        ),
    )


def _ids(table: FileStoreTable) -> list[int]:
    return sorted(read_all(table).column("id").to_pylist())


# --- DataSplit ---------------------------------------------------------------------------------


def test_split_partition_is_a_row_with_to_dict_and_still_the_binary_row(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, ["dt", "hr"])
    _fill(table)
    splits = table.new_read_builder().new_scan().plan().splits()
    seen = {}
    for s in splits:
        part = s.partition
        assert isinstance(part, PartitionRow) and isinstance(part, bytes)
        assert part.values == s.partition_values and part.arity == 2
        assert part.get_field(0) == s.partition_values[0]
        seen[(part.to_dict()["dt"], part.to_dict()["hr"])] = s.row_count
        assert s.file_size == sum(f.file_size for f in s.files) > 0
        assert s.file_paths and all(p.startswith(s.bucket_path + "/") for p in s.file_paths)
        assert s.bucket == 0 and s.snapshot_id == 1
        assert pickle.loads(pickle.dumps(part)).to_dict() == part.to_dict()
    assert seen == {("a", 1): 2, ("a", 2): 2, ("b", 1): 2, ("b", None): 2}
    first = splits[0]
    assert first.filter_file(lambda f: False) is None
    kept = first.filter_file(lambda f: True)
    assert kept == first and kept is not None
    assert isinstance(kept.partition, PartitionRow) and isinstance(first.partition, PartitionRow)
    assert kept.partition.to_dict() == first.partition.to_dict()


def test_a_split_without_key_names_refuses_to_name_its_values() -> None:
    row = PartitionRow(b"\x00", ("a",), ())
    with pytest.raises(InvalidArgumentError, match="cannot name them"):
        row.to_dict()
    with pytest.raises(IndexError, match="out of bounds"):
        row.get_field(1)


# --- commit callbacks --------------------------------------------------------------------------


class _Recorder(CommitCallback):
    def __init__(self) -> None:
        self.calls: list[tuple[int, str, int, list[tuple[int, str]]]] = []
        self.closed = False

    def call(self, context: CommitCallbackContext) -> None:
        entries = sorted((e.kind, e.file.file_name) for e in context.commit_entries)
        snap = context.snapshot
        self.calls.append((snap.id, snap.commit_kind, context.identifier, entries))

    def close(self) -> None:
        self.closed = True


def test_commit_callback_gets_the_snapshot_and_its_entries(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, ["dt"])
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(_rows(["a", "b"], [1, 2], [1, 2]))
        messages = write.prepare_commit()
    commit = builder.new_commit()
    recorder = _Recorder()
    commit.add_commit_callback(recorder)
    assert commit.commit(messages) == [1]
    names = sorted(f.file_name for m in messages for f in m.data_increment.new_files)
    assert recorder.calls == [
        (1, "APPEND", 2**63 - 1, [(KIND_ADD, n) for n in names]),
    ]
    commit.close()
    assert recorder.closed
    with pytest.raises(InvalidArgumentError, match="takes a CommitCallback"):
        commit.add_commit_callback(lambda c: None)  # type: ignore[arg-type]


def test_commit_callback_sees_the_deletes_of_a_truncate(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, ["dt"])
    write_commit(table, _rows(["a", "b"], [1, 2], [1, 2]))
    splits = table.new_read_builder().new_scan().plan().splits()
    live = sorted(f.file_name for s in splits for f in s.files)
    commit = table.new_batch_write_builder().new_commit()
    recorder = _Recorder()
    commit.add_commit_callback(recorder)
    commit.truncate_table()
    assert len(recorder.calls) == 1
    sid, kind, _, entries = recorder.calls[0]
    assert (sid, kind) == (2, "OVERWRITE")
    assert entries == [(KIND_DELETE, name) for name in live]


def test_a_retried_commit_calls_no_callback(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, ["dt"])
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(_rows(["a"], [1], [1]))
        messages = write.prepare_commit()
    assert builder.new_commit().commit(messages, 5) == [1]
    again = builder.new_commit()
    recorder = _Recorder()
    again.add_commit_callback(recorder)
    assert again.commit(messages, 5) == []
    assert recorder.calls == []


# --- truncate and the catalog's partition calls ------------------------------------------------


def test_truncate_table_empties_every_partition_in_one_overwrite(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog, ["dt", "hr"])
    _fill(table)
    commit = table.new_batch_write_builder().new_commit()
    commit.truncate_table()
    latest = table.snapshot_manager.latest()
    assert latest is not None and (latest.id, latest.commit_kind) == (2, "OVERWRITE")
    assert latest.total_record_count == 0 and _ids(table) == []
    with pytest.raises(CommitError, match="only be committed once"):
        commit.truncate_table()
    # an unpartitioned table, and an empty one, truncate too
    catalog.create_table("db.u", Schema.from_pyarrow_schema(SCHEMA))
    plain = catalog.get_table("db.u")
    plain.new_batch_write_builder().new_commit().truncate_table()
    write_commit(plain, _rows(["x"], [1], [9]))
    plain.new_batch_write_builder().new_commit().truncate_table()
    assert _ids(plain) == [] and [s.commit_kind for s in _snapshots(plain)] == [
        "OVERWRITE",
        "APPEND",
        "OVERWRITE",
    ]


def _snapshots(table: FileStoreTable) -> list:  # type: ignore[type-arg]
    sm = table.snapshot_manager
    return [sm.snapshot(i) for i in sm.list_ids()]


@pytest.mark.parametrize(
    ("specs", "left"),
    [
        ([{"dt": "a", "hr": 1}], [2, 3, 4, 5, 6, 7]),  # one full spec
        ([{"dt": "a", "hr": "2"}, {"dt": "b", "hr": 1}], [0, 1, 6, 7]),  # Java's strings
        ([{"dt": "a"}], [4, 5, 6, 7]),  # a partial spec: every hr under it
        ([{"hr": 1}, {"dt": "b", "hr": None}], [2, 3]),  # partial, and the null partition
        ([{"dt": "b", "hr": "__DEFAULT_PARTITION__"}], [0, 1, 2, 3, 4, 5]),
        ([{"dt": "zzz"}], list(range(8))),  # none match: still one snapshot, as Java
    ],
)
def test_truncate_partitions_deletes_what_any_spec_matches(
    catalog: FileSystemCatalog, specs: list[dict[str, object]], left: list[int]
) -> None:
    table = _table(catalog, ["dt", "hr"])
    _fill(table)
    table.new_batch_write_builder().new_commit().truncate_partitions(specs)
    latest = table.snapshot_manager.latest()
    assert latest is not None and (latest.id, latest.commit_kind) == (2, "OVERWRITE")
    assert _ids(table) == left


def test_truncate_partitions_refuses_bad_specs(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, ["dt", "hr"])
    _fill(table)
    commit = table.new_batch_write_builder().new_commit()
    with pytest.raises(InvalidArgumentError, match="non-empty list"):
        commit.truncate_partitions([])
    with pytest.raises(InvalidArgumentError, match="non-empty dict"):
        commit.truncate_partitions([{}])
    with pytest.raises(PartitionSpecError, match="'id'.*not a partition key"):
        commit.truncate_partitions([{"id": 1}])
    with pytest.raises(PartitionSpecError, match="does not fit"):
        commit.truncate_partitions([{"hr": "x"}])
    assert table.snapshot_manager.latest_id() == 1  # nothing was committed
    catalog.create_table("db.u", Schema.from_pyarrow_schema(SCHEMA))
    with pytest.raises(InvalidArgumentError, match="needs a partitioned table"):
        catalog.get_table("db.u").new_batch_write_builder().new_commit().truncate_partitions(
            [{"dt": "a"}]
        )


def test_catalog_drop_partitions_and_list_partitions_paged(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, ["dt", "hr"], bucket="2", **{"bucket-key": "id"})
    _fill(table)
    page = catalog.list_partitions_paged("db.t")
    assert [p.spec for p in page.elements] == [
        {"dt": "a", "hr": "1"},
        {"dt": "a", "hr": "2"},
        {"dt": "b", "hr": "1"},
        {"dt": "b", "hr": "__DEFAULT_PARTITION__"},
    ]
    assert page.next_page_token is None
    first = page.elements[0]
    assert (first.record_count, first.total_buckets, first.done) == (2, 2, False)
    assert first.file_count >= 1 and first.file_size_in_bytes > 0
    assert first.last_file_creation_time > 0
    one = catalog.list_partitions_paged("db.t", max_results=3)
    assert len(one.elements) == 3 and one.next_page_token == "3"
    rest = catalog.list_partitions_paged("db.t", max_results=3, page_token=one.next_page_token)
    assert [p.spec["hr"] for p in rest.elements] == ["__DEFAULT_PARTITION__"]
    assert rest.next_page_token is None
    only_a = catalog.list_partitions_paged("db.t", partition_name_pattern="dt=a,*")
    assert [p.spec["hr"] for p in only_a.elements] == ["1", "2"]

    catalog.drop_partitions("db.t", [{"dt": "a", "hr": "1"}, {"dt": "b"}])
    assert _ids(table) == [2, 3]
    assert [p.spec for p in catalog.list_partitions_paged("db.t").elements] == [
        {"dt": "a", "hr": "2"}
    ]
    with pytest.raises(InvalidArgumentError, match="page_token"):
        catalog.list_partitions_paged("db.t", page_token="x")
    with pytest.raises(TableNotExistError):
        catalog.drop_partitions("db.missing", [{"dt": "a"}])


def test_create_partitions_checks_and_creates_nothing(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, ["dt", "hr"])
    catalog.create_partitions("db.t", [{"dt": "a", "hr": "1"}])
    assert table.snapshot_manager.latest() is None
    assert catalog.list_partitions_paged("db.t").elements == []
    with pytest.raises(PartitionSpecError, match="not a partition key"):
        catalog.create_partitions("db.t", [{"nope": "a"}])
    with pytest.raises(TableNotExistError):
        catalog.create_partitions("db.missing", [{"dt": "a"}])


# --- pypaimon's typed errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "column", "message"),
    [
        (SchemaChange.drop_column("x"), "x", "Column x does not exist in the db.t table."),
        (SchemaChange.rename_column("x", "y"), "x", "Column x does not exist"),
        (SchemaChange.update_column_comment("x", "c"), "x", "Column x does not exist"),
        (SchemaChange.update_column_position(Move.first("x")), "x", "Field name not found: x"),
        (
            SchemaChange.update_column_position(Move.after("id", "x")),
            "x",
            "Reference field name not found: x",
        ),
    ],
)
def test_a_missing_column_raises_column_not_exist_error(
    catalog: FileSystemCatalog, change: SchemaChange, column: str, message: str
) -> None:
    _table(catalog, [])
    with pytest.raises(ColumnNotExistError, match=message) as info:
        catalog.alter_table("db.t", [change])
    assert isinstance(info.value, SchemaChangeError) and info.value.column == column


def test_an_existing_column_raises_column_already_exist_error(
    catalog: FileSystemCatalog,
) -> None:
    _table(catalog, [])
    with pytest.raises(ColumnAlreadyExistError, match="Column id already exists") as info:
        catalog.alter_table("db.t", [SchemaChange.add_column("id", pa.int64())])
    assert isinstance(info.value, SchemaChangeError) and info.value.column == "id"


def test_tag_errors_are_pypaimons_and_still_invalid_argument(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, [])
    write_commit(table, _rows(["a"], [1], [1]))
    table.create_tag("v1")
    with pytest.raises(TagAlreadyExistError, match="Tag 'v1' already exists") as info:
        table.create_tag("v1")
    assert isinstance(info.value, InvalidArgumentError) and info.value.tag == "v1"
    with pytest.raises(TagNotExistError, match="Tag 'v9' doesn't exist") as missing:
        table.rollback_to("v9")
    assert isinstance(missing.value, InvalidArgumentError)


def test_tag_manager_is_a_method_and_a_property(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, [])
    write_commit(table, _rows(["a"], [1], [1]))
    table.create_tag("v1")
    tm = table.tag_manager()
    assert tm.list_tags() == table.tag_manager.tag_names() == ["v1"]
    assert tm.tag_exists("v1") and tm.tag_directory().endswith("/tag")
    assert tm.get_or_throw("v1") == table.snapshot_manager.snapshot(1)
    with pytest.raises(TagNotExistError, match="tag 'v2' does not exist"):
        tm.get_or_throw("v2")


def test_postpone_fixed_bucket_write_builder_writes_real_buckets(
    catalog: FileSystemCatalog,
) -> None:
    catalog.create_database("db", ignore_if_exists=True)
    options = {
        "bucket": "-2",
        "postpone.batch-write-fixed-bucket": "false",
        "postpone.default-bucket-num": "3",
    }
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options
    )
    catalog.create_table("db.p", schema)
    table = catalog.get_table("db.p")
    write_commit(table, _rows(["a", "a"], [1, 2], [1, 2]))  # to the postpone bucket: unread
    assert _ids(table) == []
    builder = table.new_postpone_fixed_bucket_write_builder()
    with builder.new_write() as write:
        write.write_arrow(_rows(["a", "b", "b"], [3, 4, 5], [3, 4, 5]))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)
    assert {m.bucket for m in messages} <= {0, 1, 2} and {m.total_buckets for m in messages} == {3}
    assert _ids(table) == [3, 4, 5]
    plain = _table(catalog, ["dt"])
    with pytest.raises(UnsupportedOptionError, match="needs a postpone-bucket table"):
        plain.new_postpone_fixed_bucket_write_builder()


def test_a_decoded_split_still_names_its_partition(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, ["dt", "hr"])
    _fill(table)
    splits = table.new_read_builder().new_scan().plan().splits()
    decoded = decode_splits(encode_splits(splits), table.partition_types)
    assert [d.partition.to_dict() for d in decoded] == [
        s.partition.to_dict()  # type: ignore[attr-defined]
        for s in splits
    ]
