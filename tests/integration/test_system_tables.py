"""System tables through the Python API (table/system_tables.py): ``catalog.get_table('db.t$x')``
on append, primary-key and postpone tables after commits, an ALTER, tags and a compaction,
checked against what the table's own metadata says; and the names and calls that are refused.
Java's values for the same tables: tests/interop/test_system_tables_java.py."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from tests.integration.system_table_fixtures import batch, build, write

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    BranchNotExistError,
    IdentifierError,
    InvalidArgumentError,
    PredicateError,
    UnsupportedOperationError,
)
from paimon_pyspark.table.system_tables import SYSTEM_TABLES, SystemTable


@pytest.fixture
def pk(catalog: FileSystemCatalog) -> str:
    return build(catalog, "pk")


@pytest.fixture
def append(catalog: FileSystemCatalog) -> str:
    return build(catalog, "append")


def rows(catalog: FileSystemCatalog, name: str) -> list[dict[str, object]]:
    table = catalog.get_table(name)
    assert isinstance(table, SystemTable)
    return table.to_arrow().to_pylist()


@pytest.mark.parametrize("kind", ["append", "pk", "dynamic"])
def test_every_table_reads_with_its_schema(catalog: FileSystemCatalog, kind: str) -> None:
    ident = build(catalog, kind)
    for system in SYSTEM_TABLES:
        table = catalog.get_system_table(f"{ident}${system}")
        data = table.to_arrow()
        assert data.schema == table.arrow_schema
        if system == "table_indexes" and kind != "dynamic":
            assert data.num_rows == 0  # no index files without dynamic buckets or vectors
        else:
            assert data.num_rows > 0, system
        rb = table.new_read_builder()
        splits = rb.new_scan().plan().splits()
        assert len(splits) == 1
        assert rb.new_read().to_arrow(splits).equals(data)


def test_snapshots_list_every_commit(catalog: FileSystemCatalog, pk: str) -> None:
    got = rows(catalog, f"{pk}$snapshots")
    table = catalog.get_table(pk)
    sm = table.snapshot_manager
    assert [r["snapshot_id"] for r in got] == sm.list_ids()
    kinds = [r["commit_kind"] for r in got]
    assert "COMPACT" in kinds and kinds[0] == "APPEND"
    latest = sm.latest()
    assert latest is not None
    assert got[-1]["total_record_count"] == latest.total_record_count
    assert got[-1]["base_manifest_list"] == latest.base_manifest_list


def test_schemas_and_options(catalog: FileSystemCatalog, pk: str) -> None:
    schemas = rows(catalog, f"{pk}$schemas")
    assert [r["schema_id"] for r in schemas] == [0, 1]
    assert json.loads(str(schemas[0]["partition_keys"])) == ["dt", "hr"]
    assert json.loads(str(schemas[0]["primary_keys"])) == ["dt", "hr", "k"]
    assert "snapshot.num-retained.max" in json.loads(str(schemas[1]["options"]))
    assert [f["name"] for f in json.loads(str(schemas[1]["fields"]))][:2] == ["k", "v"]
    options = {r["key"]: r["value"] for r in rows(catalog, f"{pk}$options")}
    assert options == catalog.get_table(pk).table_schema.options


def test_files_are_the_live_files(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_table(pk)
    got = rows(catalog, f"{pk}$files")
    latest = table.snapshot_manager.latest()
    assert latest is not None
    live = {e.file.file_name: e for e in table.manifest_io.live_entries(latest)}
    assert sorted(str(r["file_path"]).rsplit("/", 1)[1] for r in got) == sorted(live)
    for r in got:
        entry = live[str(r["file_path"]).rsplit("/", 1)[1]]
        assert r["bucket"] == entry.bucket
        assert r["level"] == entry.file.level
        assert r["record_count"] == entry.file.row_count
        assert r["file_format"] == "parquet"
        assert str(r["partition"]).startswith("{2024-01-0")
        assert str(r["min_key"]).startswith("[") and str(r["null_value_counts"]).startswith("{d=")
    assert {r["file_source"] for r in got} >= {"COMPACT"}


def test_append_files_have_no_key(catalog: FileSystemCatalog, append: str) -> None:
    got = rows(catalog, f"{append}$files")
    assert got and all(r["min_key"] is None and r["max_key"] is None for r in got)
    assert all(r["bucket"] == 0 for r in got)


def test_partitions_and_buckets_add_up(catalog: FileSystemCatalog, pk: str) -> None:
    files = rows(catalog, f"{pk}$files")
    partitions = rows(catalog, f"{pk}$partitions")
    assert [r["partition"] for r in partitions] == ["dt=2024-01-01/hr=1", "dt=2024-01-02/hr=2"]
    assert sum(int(str(r["file_count"])) for r in partitions) == len(files)
    assert sum(int(str(r["record_count"])) for r in partitions) == sum(
        int(str(r["record_count"])) for r in files
    )
    buckets = rows(catalog, f"{pk}$buckets")
    assert sum(int(str(r["file_size_in_bytes"])) for r in buckets) == sum(
        int(str(r["file_size_in_bytes"])) for r in files
    )
    assert buckets == sorted(buckets, key=lambda r: (str(r["partition"]), int(str(r["bucket"]))))


def test_manifests_and_tags(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_table(pk)
    latest = table.snapshot_manager.latest()
    assert latest is not None
    names = [m.file_name for m in table.manifest_io.data_manifests(latest)]
    assert [r["file_name"] for r in rows(catalog, f"{pk}$manifests")] == names
    tags = rows(catalog, f"{pk}$tags")
    assert [t["tag_name"] for t in tags] == ["first", "retained"]
    assert tags[0]["snapshot_id"] == 1 and tags[0]["time_retained"] is None
    assert tags[1]["time_retained"] == "PT1H" and tags[1]["create_time"] is not None


def test_table_indexes_list_the_hash_index_of_each_bucket(catalog: FileSystemCatalog) -> None:
    ident = build(catalog, "dynamic")
    got = rows(catalog, f"{ident}$table_indexes")
    buckets = {(r["partition"], r["bucket"]) for r in rows(catalog, f"{ident}$buckets")}
    assert {(r["partition"], r["bucket"]) for r in got} == buckets
    assert {r["index_type"] for r in got} == {"HASH"}
    assert all(r["dv_ranges"] is None for r in got)
    keys = catalog.get_table(ident).new_read_builder()
    live = keys.new_read().to_arrow(keys.new_scan().plan().splits())
    # a hash index holds one int per key of its bucket
    assert sum(r["row_count"] for r in got) == live.num_rows
    assert all(r["file_size"] == 4 * r["row_count"] for r in got)


def test_postpone_bucket_only_in_buckets(catalog: FileSystemCatalog) -> None:
    ident = build(catalog, "postpone")
    assert -2 in [r["bucket"] for r in rows(catalog, f"{ident}$buckets")]
    files = rows(catalog, f"{ident}$files")
    assert files and -2 not in [r["bucket"] for r in files]


def test_table_without_snapshots(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.empty", Schema.from_pyarrow_schema(pa.schema([("a", pa.int32())])))
    for system in ("snapshots", "files", "manifests", "partitions", "buckets", "tags"):
        assert rows(catalog, f"db.empty${system}") == []
    assert len(rows(catalog, "db.empty$schemas")) == 1


def test_read_builder_projection_filter_limit(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_system_table(f"{pk}$snapshots")
    rb = table.new_read_builder()
    rb.with_filter(rb.new_predicate_builder().equal("commit_kind", "COMPACT"))
    rb.with_projection(["snapshot_id", "commit_kind"]).with_limit(1)
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    assert got.column_names == ["snapshot_id", "commit_kind"]
    assert (
        got.to_pylist()
        == [
            {"snapshot_id": r["snapshot_id"], "commit_kind": "COMPACT"}
            for r in rows(catalog, f"{pk}$snapshots")
            if r["commit_kind"] == "COMPACT"
        ][:1]
    )
    with pytest.raises(PredicateError, match="nope"):
        table.new_read_builder().with_projection(["nope"])
    with pytest.raises(InvalidArgumentError, match=r"pk\$snapshots"):
        table.new_read_builder().new_read().to_arrow(["x"])  # type: ignore[list-item]


def test_system_names_are_case_insensitive(catalog: FileSystemCatalog, pk: str) -> None:
    assert rows(catalog, f"{pk}$SNAPSHOTS") == rows(catalog, f"{pk}$snapshots")


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("db.pk$statistics", "'statistics' is not supported"),
        ("db.pk$nothing", "'nothing' is not a system table"),
        ("db.pk$branch_b$files$x", "must be '<table>\\$<system table>'"),
        ("db.pk$branch_a/b", "path separator"),
        ("db.pk$", "must be '<table>\\$<system table>'"),
        ("db.pk$files$x", "must be '<table>\\$<system table>'"),
        ("db.$files", "empty"),
    ],
)
def test_refused_names(catalog: FileSystemCatalog, pk: str, name: str, match: str) -> None:
    with pytest.raises(IdentifierError, match=match):
        catalog.get_table(name)


@pytest.mark.parametrize("name", ["db.pk$branch_b", "db.pk$branch_b$files"])
def test_missing_branch_is_named(catalog: FileSystemCatalog, pk: str, name: str) -> None:
    with pytest.raises(BranchNotExistError, match="'db.pk': branch 'b' does not exist"):
        catalog.get_table(name)


def test_system_tables_are_read_only(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_system_table(f"{pk}$files")
    with pytest.raises(UnsupportedOperationError, match=r"db\.pk\$files.*read-only"):
        table.new_batch_write_builder()
    with pytest.raises(UnsupportedOperationError, match="read-only"):
        table.delete(None)
    schema = Schema.from_pyarrow_schema(pa.schema([("a", pa.int32())]))
    with pytest.raises(IdentifierError, match=r"\$"):
        catalog.create_table("db.pk$files", schema)
    with pytest.raises(IdentifierError, match=r"\$"):
        catalog.drop_table("db.pk$files")
    with pytest.raises(IdentifierError, match="not a system table name"):
        catalog.get_system_table(pk)
    before = len(rows(catalog, f"{pk}$snapshots"))
    write(catalog, pk, batch(9))  # the data table stays writable
    assert len(rows(catalog, f"{pk}$snapshots")) == before + 1


def test_copy_keeps_the_system_table(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_system_table(f"{pk}$options")
    copied = table.copy({"snapshot.num-retained.min": "50"})
    assert copied.name == "db.pk$options" and copied.to_arrow().equals(table.to_arrow())
    with pytest.raises(InvalidArgumentError, match=r"pk\$options"):
        table.copy("x")  # type: ignore[arg-type]
