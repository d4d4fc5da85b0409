"""``changelog-producer`` tables are written by every writer here (tables Java wrote with each
producer: tests/interop/test_options_a_java.py), Java's checks of the option, and
``ignore-update-before`` (-U records dropped at the write, Java's RowKindFilter)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, Schema, procedures
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.errors import OptionError, SchemaChangeError
from paimon_pyspark.store.schema_change import SchemaChange

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _create(
    catalog: FileSystemCatalog, options: dict[str, str], pk: bool = True, name: str = "t"
) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, primary_keys=["id"] if pk else [], options={"bucket": "1", **options}
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def _write(
    table: FileStoreTable, rows: list[tuple[Any, ...]], kinds: list[int] | None = None
) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        data = pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA)
        w.write_arrow(data, row_kinds=kinds)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def _rows(table: FileStoreTable) -> list[tuple[Any, ...]]:
    rb = table.new_read_builder()
    out = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(tuple(r.values()) for r in out)


@pytest.mark.parametrize("producer", ["input", "lookup", "full-compaction"])
def test_every_writer_writes_a_changelog_table(catalog: FileSystemCatalog, producer: str) -> None:
    """Batch and stream writes, truncate, compact and rescale all commit on a table with a
    producer (once refused: nothing here produced changelog); input changelog comes with the
    batch write (tests/integration/test_changelog_input.py has the details)."""
    table = _create(catalog, {})
    _write(table, [(1, "a"), (2, "b")])
    catalog.alter_table("db.t", [SchemaChange.set_option("changelog-producer", producer)])
    table = catalog.get_table("db.t")
    assert _rows(table) == [(1, "a"), (2, "b")]
    _write(table, [(2, "b2"), (3, "c")])
    latest = table.snapshot_manager.latest()
    assert latest is not None
    appended = table.snapshot_manager.snapshot(latest.id - (latest.commit_kind == "COMPACT"))
    assert (appended.changelog_record_count == 2) == (producer == "input")
    stream = table.new_stream_write_builder()
    with stream.new_write() as w:
        w.write_arrow(pa.Table.from_pylist([{"id": 4, "v": "d"}], SCHEMA))
        stream.new_commit().commit(w.prepare_commit(1), 1)
    procedures.compact(catalog, "db.t", compact_strategy="full")
    assert _rows(catalog.get_table("db.t")) == [(1, "a"), (2, "b2"), (3, "c"), (4, "d")]
    assert procedures.rescale(catalog, "db.t", bucket_num=2) is not None
    assert _rows(catalog.get_table("db.t")) == [(1, "a"), (2, "b2"), (3, "c"), (4, "d")]
    catalog.get_table("db.t").new_batch_write_builder().new_commit().truncate_table()
    assert _rows(catalog.get_table("db.t")) == []


@pytest.mark.parametrize(
    ("options", "pk", "message"),
    [
        ({"changelog-producer": "nope"}, True, "'nope' is not one of"),
        ({"changelog-producer": "input"}, False, "without primary keys"),
        ({"changelog-producer": "input", "merge-engine": "first-row"}, True, "first-row"),
        (
            {"changelog-producer": "full-compaction", "deletion-vectors.enabled": "true"},
            True,
            "deletion vectors",
        ),
    ],
)
def test_changelog_producer_checks_as_java(
    catalog: FileSystemCatalog, options: dict[str, str], pk: bool, message: str
) -> None:
    with pytest.raises(OptionError, match=message):
        _create(catalog, options, pk)


@pytest.mark.parametrize("ignore", [True, False])
def test_ignore_update_before_drops_minus_u_at_the_write(
    catalog: FileSystemCatalog, ignore: bool
) -> None:
    table = _create(catalog, {"ignore-update-before": str(ignore).lower()})
    _write(table, [(1, "a"), (2, "b"), (3, "c")])
    # -U alone retracts its key unless ignored; +U and -D act either way
    _write(table, [(1, "a"), (2, "b2"), (3, "c")], kinds=[1, 2, 3])
    expected = [(1, "a"), (2, "b2")] if ignore else [(2, "b2")]
    assert _rows(table) == expected


def test_ignore_update_before_by_rowkind_field(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("k", pa.string())])
    options = {"bucket": "1", "rowkind.field": "k", "ignore-update-before": "true"}
    catalog.create_table(
        "db.r", Schema.from_pyarrow_schema(schema, primary_keys=["id"], options=options)
    )
    table = catalog.get_table("db.r")
    builder = table.new_batch_write_builder()
    rows = [{"id": 1, "v": "a", "k": "+I"}, {"id": 1, "v": "a", "k": "-U"}]
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist(rows, schema))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    rb = table.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist() == [rows[0]]


def test_ignore_update_before_cannot_go_from_true_to_false(catalog: FileSystemCatalog) -> None:
    _write(_create(catalog, {"ignore-update-before": "true"}), [(1, "a")])
    with pytest.raises(SchemaChangeError, match="ignore-update-before"):
        catalog.alter_table("db.t", [SchemaChange.set_option("ignore-update-before", "false")])
