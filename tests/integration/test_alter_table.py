"""``FileSystemCatalog.alter_table`` with option changes: Java's rules, the create-time checks,
nothing written on a refusal, and racing ALTERs that all land in order.

The rules are Java 1.4.2's (SchemaManager.checkAlterTableOption / checkResetTableOption, checked
only once the table has a snapshot); tests/interop/test_alter_table_java.py holds Java to the
same cases.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    InvalidArgumentError,
    OptionError,
    SchemaChangeError,
    SchemaError,
    TableNotExistError,
    UnsupportedOptionError,
)
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.managers import SchemaManager
from paimon_pyspark.store.schema_change import IMMUTABLE_OPTIONS, SchemaChange

ARROW = pa.schema([("id", pa.int64()), ("v", pa.string())])
ROWS = pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=ARROW)


def make(
    catalog: FileSystemCatalog,
    name: str = "t",
    *,
    pk: bool = True,
    options: dict[str, str] | None = None,
    write: bool = True,
) -> str:
    """Create ``db.<name>`` (primary key ``id`` unless ``pk`` is False), with one commit."""
    opts = {"bucket": "2"} if options is None else options
    schema = Schema.from_pyarrow_schema(ARROW, primary_keys=["id"] if pk else [], options=opts)
    catalog.create_table(f"db.{name}", schema)
    if write:
        write_commit(catalog.get_table(f"db.{name}"), ROWS)
    return f"db.{name}"


def schema_files(catalog: FileSystemCatalog, ident: str) -> dict[str, bytes]:
    directory = os.path.join(catalog.table_path(ident), "schema")
    return {n: Path(directory, n).read_bytes() for n in sorted(os.listdir(directory))}


def test_set_and_remove_publish_the_next_schema_and_a_new_load_sees_them(
    catalog: FileSystemCatalog,
) -> None:
    ident = make(catalog)
    before = catalog.get_table(ident)
    catalog.alter_table(
        ident,
        [
            SchemaChange.set_option("snapshot.num-retained.min", "3"),
            SchemaChange.set_option("target-file-size", 64 * 1024 * 1024),
            SchemaChange.set_option("write-only", True),
        ],
    )
    table = catalog.get_table(ident)
    assert table.table_schema.id == 1
    assert table.options.snapshot_num_retained_min == 3
    assert table.options.target_file_size(True) == 64 * 1024 * 1024
    assert table.table_schema.options["write-only"] == "true"
    assert before.table_schema.id == 0 and "write-only" not in before.table_schema.options

    catalog.alter_table(ident, [SchemaChange.remove_option("write-only")])
    table = catalog.get_table(ident)
    assert table.table_schema.id == 2
    assert table.table_schema.options == {
        "bucket": "2",
        "snapshot.num-retained.min": "3",
        "target-file-size": str(64 * 1024 * 1024),
    }
    # the rest of the schema is the old one's
    old = SchemaManager(catalog.file_io, catalog.table_path(ident)).schema(0)
    new = table.table_schema
    assert (new.fields, new.primary_keys, new.partition_keys) == (
        old.fields,
        old.primary_keys,
        old.partition_keys,
    )
    assert new.highest_field_id == old.highest_field_id
    assert sorted(schema_files(catalog, ident)) == ["schema-0", "schema-1", "schema-2"]


def test_a_write_after_the_alter_commits_under_the_new_schema(catalog: FileSystemCatalog) -> None:
    ident = make(catalog)
    catalog.alter_table(ident, [SchemaChange.set_option("file.format", "orc")])
    table = catalog.get_table(ident)
    write_commit(table, pa.table({"id": [4], "v": ["d"]}, schema=ARROW))
    latest = table.snapshot_manager.latest()
    assert latest is not None and latest.schema_id == 1
    assert sort_rows(read_all(catalog.get_table(ident))) == sort_rows(
        pa.concat_tables([ROWS, pa.table({"id": [4], "v": ["d"]}, schema=ARROW)])
    )
    files = [
        f for _, _, fs in os.walk(catalog.table_path(ident)) for f in fs if f.startswith("data-")
    ]
    assert any(f.endswith(".orc") for f in files) and any(f.endswith(".parquet") for f in files)


def test_removing_an_unset_option_still_publishes_as_java(catalog: FileSystemCatalog) -> None:
    ident = make(catalog)
    catalog.alter_table(ident, [SchemaChange.remove_option("no-such-option")])
    assert catalog.get_table(ident).table_schema.id == 1


@pytest.mark.parametrize("key", sorted(IMMUTABLE_OPTIONS))
def test_immutable_options_are_refused_once_there_is_a_snapshot(
    catalog: FileSystemCatalog, key: str
) -> None:
    ident = make(catalog)
    files = schema_files(catalog, ident)
    for change in (SchemaChange.set_option(key, "x"), SchemaChange.remove_option(key)):
        with pytest.raises(SchemaChangeError, match=f"Table 'db.t': option '{key}'"):
            catalog.alter_table(ident, [change])
    assert schema_files(catalog, ident) == files


def test_an_immutable_option_is_refused_even_at_its_current_value(
    catalog: FileSystemCatalog,
) -> None:
    ident = make(catalog, options={"bucket": "2", "merge-engine": "deduplicate"})
    with pytest.raises(SchemaChangeError, match="'merge-engine'.*'deduplicate'"):
        catalog.alter_table(ident, [SchemaChange.set_option("merge-engine", "deduplicate")])


def test_sequence_field_is_not_immutable_in_java(catalog: FileSystemCatalog) -> None:
    ident = make(catalog)
    catalog.alter_table(ident, [SchemaChange.set_option("sequence.field", "v")])
    assert catalog.get_table(ident).options.sequence_fields == ["v"]


def test_before_the_first_snapshot_any_option_may_change(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, options={"bucket": "-1"}, write=False)
    catalog.alter_table(
        ident,
        [
            SchemaChange.set_option("merge-engine", "first-row"),
            SchemaChange.set_option("bucket", 3),
        ],
    )
    table = catalog.get_table(ident)
    assert (table.options.merge_engine, table.options.bucket) == ("first-row", 3)
    write_commit(table, ROWS)
    assert sort_rows(read_all(catalog.get_table(ident))) == sort_rows(ROWS)


def test_a_primary_key_option_before_the_first_snapshot_becomes_the_key(
    catalog: FileSystemCatalog,
) -> None:
    ident = make(catalog, pk=False, options={}, write=False)
    catalog.alter_table(ident, [SchemaChange.set_option("primary-key", "id")])
    schema = catalog.get_table(ident).table_schema
    assert schema.primary_keys == ("id",) and "primary-key" not in schema.options
    assert not schema.field("id").type.nullable
    # ... and on a table that has a key already, Java refuses it (keys given twice)
    with pytest.raises(SchemaError, match="primary keys given twice"):
        catalog.alter_table(ident, [SchemaChange.set_option("primary-key", "id")])
    assert catalog.get_table(ident).table_schema.id == 1


@pytest.mark.parametrize(
    ("created", "new"),
    [("2", "4"), ("2", "1"), ("2", "-2"), ("-2", "3")],
)
def test_bucket_changes_between_fixed_and_postpone(
    catalog: FileSystemCatalog, created: str, new: str
) -> None:
    ident = make(catalog, options={"bucket": created})
    catalog.alter_table(ident, [SchemaChange.set_option("bucket", new)])
    assert catalog.get_table(ident).options.bucket == int(new)


@pytest.mark.parametrize(
    ("created", "change", "message"),
    [
        ({"bucket": "-1"}, SchemaChange.set_option("bucket", "4"), "when it is -1"),
        ({}, SchemaChange.set_option("bucket", "4"), "when it is -1"),
        ({"bucket": "-1"}, SchemaChange.set_option("bucket", "-1"), "when it is -1"),
        ({"bucket": "2"}, SchemaChange.set_option("bucket", "-1"), "from 2 to -1"),
        ({"bucket": "-2"}, SchemaChange.set_option("bucket", "-1"), "from -2 to -1"),
        ({"bucket": "2"}, SchemaChange.remove_option("bucket"), "cannot be removed"),
    ],
)
def test_bucket_changes_java_refuses(
    catalog: FileSystemCatalog, created: dict[str, str], change: SchemaChange, message: str
) -> None:
    ident = make(catalog, options=created)
    files = schema_files(catalog, ident)
    with pytest.raises(SchemaChangeError, match=message):
        catalog.alter_table(ident, [change])
    assert schema_files(catalog, ident) == files


def test_the_new_bucket_layout_is_taken_only_by_an_overwrite(catalog: FileSystemCatalog) -> None:
    """Java's rule after a bucket change: the old buckets stay until they are rewritten."""
    ident = make(catalog)
    catalog.alter_table(ident, [SchemaChange.set_option("bucket", "4")])
    table = catalog.get_table(ident)
    assert sort_rows(read_all(table)) == sort_rows(ROWS)
    with pytest.raises(Exception, match="previous bucket num is 2"):
        write_commit(table, ROWS)


def test_an_append_table_with_buckets_needs_a_bucket_key(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, pk=False, options={}, write=False)
    with pytest.raises(OptionError, match="bucket-key"):
        catalog.alter_table(ident, [SchemaChange.set_option("bucket", "3")])
    catalog.alter_table(
        ident, [SchemaChange.set_option("bucket", "3"), SchemaChange.set_option("bucket-key", "id")]
    )
    assert catalog.get_table(ident).bucket_keys == ["id"]


def test_ignore_delete_true_to_false_refused_but_removal_allowed(
    catalog: FileSystemCatalog,
) -> None:
    """Java refuses ignore-update-before the same way
    (tests/integration/test_changelog_producer_read.py)."""
    key = "ignore-delete"
    ident = make(catalog, options={"bucket": "2", key: "true"})
    with pytest.raises(SchemaChangeError, match=f"'{key}' cannot be changed from true"):
        catalog.alter_table(ident, [SchemaChange.set_option(key, "false")])
    catalog.alter_table(ident, [SchemaChange.remove_option(key)])
    assert key not in catalog.get_table(ident).table_schema.options


def test_deletion_vectors_change_refused_as_java(catalog: FileSystemCatalog) -> None:
    ident = make(catalog)
    with pytest.raises(SchemaChangeError, match="deletion-vectors.modifiable"):
        catalog.alter_table(ident, [SchemaChange.set_option("deletion-vectors.enabled", "true")])


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (SchemaChange.set_option("changelog-producer", "nope"), OptionError, "'nope'"),
        (SchemaChange.set_option("scan.watermark", "1"), UnsupportedOptionError, "scan.watermark"),
        (SchemaChange.set_option("file.format", "csv"), UnsupportedOptionError, "csv"),
        (SchemaChange.set_option("bucket", "0"), OptionError, "'bucket' = '0'"),
        (SchemaChange.set_option("bucket", "abc"), OptionError, "'bucket' = 'abc'"),
        (SchemaChange.set_option("num-levels", "1"), OptionError, "'num-levels' = '1'"),
        (SchemaChange.set_option("write-only", "yes"), OptionError, "'write-only' = 'yes'"),
        (SchemaChange.set_option("sequence.field", "nope"), OptionError, "'nope'"),
        (SchemaChange.set_option("path", "/elsewhere"), SchemaChangeError, "'/elsewhere'"),
        (SchemaChange.remove_option("path"), SchemaChangeError, "'path' cannot be removed"),
    ],
)
def test_new_options_pass_the_create_checks_and_a_refusal_writes_nothing(
    catalog: FileSystemCatalog, change: SchemaChange, error: type[Exception], message: str
) -> None:
    ident = make(catalog)
    files = schema_files(catalog, ident)
    with pytest.raises(error, match=message) as info:
        catalog.alter_table(
            ident, [SchemaChange.set_option("snapshot.num-retained.min", "2"), change]
        )
    assert "db.t" in str(info.value)
    assert schema_files(catalog, ident) == files
    assert catalog.get_table(ident).table_schema.id == 0


def test_a_missing_table_raises_unless_ignored(catalog: FileSystemCatalog) -> None:
    change = [SchemaChange.set_option("write-only", "true")]
    for ident in ("db.missing", "nodb.missing"):
        with pytest.raises(TableNotExistError, match=ident):
            catalog.alter_table(ident, change)
        catalog.alter_table(ident, change, ignore_if_not_exists=True)
        assert not os.path.exists(catalog.table_path(ident))


@pytest.mark.parametrize(
    "changes",
    [SchemaChange.set_option("a", "b"), None, "bucket", [("bucket", "2")], [None]],
)
def test_changes_must_be_a_list_of_schema_changes(
    catalog: FileSystemCatalog, changes: object
) -> None:
    ident = make(catalog)
    with pytest.raises(InvalidArgumentError, match="alter_table\\('db.t'\\)"):
        catalog.alter_table(ident, changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: SchemaChange.set_option(1, "x"), "key must be a string, got int 1"),  # type: ignore[arg-type]
        (lambda: SchemaChange.set_option("k", None), "value must be a string, got NoneType"),  # type: ignore[arg-type]
        (lambda: SchemaChange.remove_option(b"k"), "key must be a string, got bytes"),  # type: ignore[arg-type]
    ],
)
def test_a_change_takes_strings(build: object, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        build()  # type: ignore[operator]


# --- racing ALTERs ------------------------------------------------------------------------------


def test_racing_alters_from_threads_and_catalogs_all_land_in_order(warehouse: str) -> None:
    catalogs = [CatalogFactory.create({"warehouse": warehouse}) for _ in range(8)]
    catalogs[0].create_database("db")
    ident = make(catalogs[0])
    start = threading.Barrier(len(catalogs))
    errors: list[BaseException] = []

    def alter(i: int) -> None:
        try:
            start.wait()
            for round_ in range(3):
                catalogs[i].alter_table(ident, [SchemaChange.set_option(f"k{i}", str(round_))])
        except BaseException as e:  # reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=alter, args=(i,)) for i in range(len(catalogs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    manager = SchemaManager(catalogs[0].file_io, catalogs[0].table_path(ident))
    assert manager.list_ids() == list(range(25))
    final = manager.schema(24).options
    assert {k: final[k] for k in final if k.startswith("k")} == {f"k{i}": "2" for i in range(8)}
    # every schema holds the one before it plus one change: none was lost on the way
    for sid in range(1, 25):
        before, after = manager.schema(sid - 1).options, manager.schema(sid).options
        changed = {k for k in after if before.get(k) != after[k]}
        assert len(changed) == 1 and set(before) <= set(after), sid


def _race(
    catalog: FileSystemCatalog, ident: str, rival: SchemaChange, ours: SchemaChange
) -> TableSchema:
    """Run ``ours`` through the store's retry loop with ``rival`` published by another catalog
    between our first generation and our first publish (the lost race, made certain)."""
    other = CatalogFactory.create({"warehouse": catalog.uri})
    path = catalog.table_path(ident)
    attempts: list[int] = []

    def finish(generated: TableSchema) -> TableSchema:
        attempts.append(generated.id)
        if len(attempts) == 1:
            other.alter_table(ident, [rival])
        return generated

    try:
        return SchemaManager(catalog.file_io, path).commit_changes(
            [ours], ident, lambda: True, finish
        )
    finally:
        assert attempts[0] == 1


def test_a_lost_race_is_retried_on_top_of_the_winner(catalog: FileSystemCatalog) -> None:
    ident = make(catalog)
    won = _race(
        catalog,
        ident,
        SchemaChange.set_option("snapshot.num-retained.min", "4"),
        SchemaChange.set_option("write-only", "true"),
    )
    assert won.id == 2
    schema = catalog.get_table(ident).table_schema
    assert schema.id == 2
    assert schema.options == {"bucket": "2", "snapshot.num-retained.min": "4", "write-only": "true"}


def test_a_change_the_winner_made_invalid_is_refused_on_retry(catalog: FileSystemCatalog) -> None:
    """Each retry checks the changes again, against the winner's options, as Java does."""
    ident = make(catalog)
    with pytest.raises(SchemaChangeError, match="'ignore-delete' cannot be changed from true"):
        _race(
            catalog,
            ident,
            SchemaChange.set_option("ignore-delete", "true"),
            SchemaChange.set_option("ignore-delete", "false"),
        )
    manager = SchemaManager(catalog.file_io, catalog.table_path(ident))
    assert manager.list_ids() == [0, 1]
    assert manager.schema(1).options["ignore-delete"] == "true"
