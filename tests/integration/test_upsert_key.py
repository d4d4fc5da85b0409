"""``upsert-key`` on append tables through the Python door (table/upsert.py): Java's MERGE INTO
semantics (tests/interop/test_options_a_java.py holds Java to them), the one commit, the files
rewritten, the doors that refuse, and Java's schema checks."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.errors import OptionError, PaimonError, UnsupportedOptionError

SCHEMA = pa.schema(
    [("id", pa.int64()), ("k2", pa.string()), ("v", pa.string()), ("ts", pa.int32())]
)
Row = dict[str, Any]


def _create(catalog: FileSystemCatalog, options: dict[str, str], name: str = "t") -> FileStoreTable:
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, options=options))
    return catalog.get_table(f"db.{name}")


def _write(table: FileStoreTable, rows: list[Row]) -> list[int]:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist(rows, SCHEMA))
        messages = w.prepare_commit()
    return builder.new_commit().commit(messages)


def _rows(table: FileStoreTable) -> list[tuple[Any, ...]]:
    rb = table.new_read_builder()
    out = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((tuple(r.values()) for r in out), key=repr)


def _row(i: int | None, v: str, ts: int | None = 0, k2: str = "x") -> Row:
    return {"id": i, "k2": k2, "v": v, "ts": ts}


@pytest.mark.parametrize(
    "layout",
    [{}, {"deletion-vectors.enabled": "true"}, {"bucket": "3", "bucket-key": "id"}],
)
def test_insert_replaces_rows_with_the_same_key_null_safely(
    catalog: FileSystemCatalog, layout: dict[str, str]
) -> None:
    table = _create(catalog, {"upsert-key": "id", **layout})
    _write(table, [_row(1, "a"), _row(2, "b"), _row(None, "n")])
    _write(table, [_row(2, "b2"), _row(None, "n2"), _row(3, "c")])
    assert _rows(table) == sorted(
        [(1, "x", "a", 0), (2, "x", "b2", 0), (None, "x", "n2", 0), (3, "x", "c", 0)], key=repr
    )


def test_composite_key_and_each_matched_row_gets_its_own_copy(
    catalog: FileSystemCatalog,
) -> None:
    """A key the table holds twice (written without upsert, e.g. by Java's core writer) is
    replaced twice: MERGE INTO updates every matched target row."""
    table = _create(catalog, {"upsert-key": "id,k2"})
    plain = table.copy({"upsert-key": ""})
    _write(plain, [_row(1, "a", k2="p"), _row(1, "a", k2="p"), _row(1, "other", k2="q")])
    _write(table, [_row(1, "new", k2="p")])
    assert _rows(table) == sorted(
        [(1, "p", "new", 0), (1, "p", "new", 0), (1, "q", "other", 0)], key=repr
    )


def test_sequence_field_keeps_the_highest_and_never_goes_back(
    catalog: FileSystemCatalog,
) -> None:
    table = _create(catalog, {"upsert-key": "id", "sequence.field": "ts"})
    # the first write is reduced to one row per key too: the highest ts, NULL lowest
    _write(table, [_row(1, "a1", 1), _row(1, "a3", 3), _row(1, "a2", 2), _row(2, "bn", None)])
    assert _rows(table) == [(1, "x", "a3", 3), (2, "x", "bn", None)]
    _write(table, [_row(1, "older", 2), _row(2, "b", 0)])
    # 3 <= 2 is false: the old row stays; NULL <= 0 is NULL: the old row stays too
    assert _rows(table) == [(1, "x", "a3", 3), (2, "x", "bn", None)]
    _write(table, [_row(1, "same", 3)])
    assert _rows(table) == [(1, "x", "same", 3), (2, "x", "bn", None)]


def test_a_table_row_matched_twice_is_refused_and_nothing_committed(
    catalog: FileSystemCatalog,
) -> None:
    table = _create(catalog, {"upsert-key": "id"})
    _write(table, [_row(1, "a")])
    with pytest.raises(PaimonError, match="more than one incoming row"):
        _write(table, [_row(1, "b"), _row(1, "c")])
    assert table.snapshot_manager.latest_id() == 1
    # keys the table does not hold are all inserted, duplicates included (Java's MERGE INTO)
    _write(table, [_row(7, "b"), _row(7, "c")])
    assert _rows(table) == [(1, "x", "a", 0), (7, "x", "b", 0), (7, "x", "c", 0)]


def test_one_overwrite_commit_rewrites_only_the_touched_files(
    catalog: FileSystemCatalog,
) -> None:
    table = _create(catalog, {"upsert-key": "id"})
    for first in (0, 100, 200):
        _write(table, [_row(i, "old") for i in range(first, first + 10)])
    base = table.snapshot_manager.latest()
    assert base is not None
    files = {e.file.file_name for e in table.manifest_io.live_entries(base)}
    ids = _write(table, [_row(105, "new"), _row(500, "fresh")])
    assert len(ids) == 1
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None and snapshot.commit_kind == "OVERWRITE"
    after = {e.file.file_name for e in table.manifest_io.live_entries(snapshot)}
    assert len(files - after) == 1  # the file of keys 100..109 only
    rows = _rows(table)
    assert len(rows) == 31 and (105, "x", "new", 0) in rows and (500, "x", "fresh", 0) in rows


def test_overwrite_keeps_overwrite_semantics(catalog: FileSystemCatalog) -> None:
    table = _create(catalog, {"upsert-key": "id"})
    _write(table, [_row(1, "a")])
    builder = table.new_batch_write_builder().overwrite()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist([_row(1, "b"), _row(1, "c")], SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    assert _rows(table) == [(1, "x", "b", 0), (1, "x", "c", 0)]


def test_writers_that_cannot_upsert_refuse(catalog: FileSystemCatalog) -> None:
    from paimon_pyspark.write.table_write import TableWrite

    table = _create(catalog, {"upsert-key": "id"})
    with pytest.raises(UnsupportedOptionError, match="upsert-key"):
        table.new_stream_write_builder().new_write()
    with pytest.raises(UnsupportedOptionError, match="upsert-key"):
        TableWrite(table.store, "user")
    with pytest.raises(UnsupportedOptionError, match="upsert-key"):
        table.new_batch_write_builder().new_write(sequence_slot=(0, 2))
    with pytest.raises(Exception, match="no buckets, no row kinds"):
        table.new_batch_write_builder().new_write().write_arrow(
            pa.Table.from_pylist([_row(1, "a")], SCHEMA), buckets=[0]
        )


@pytest.mark.parametrize(
    ("options", "primary_keys", "message"),
    [
        ({"upsert-key": "id"}, ["id"], "with 'primary-key'"),
        ({"upsert-key": "nope"}, [], "cannot find field 'nope'"),
    ],
)
def test_schema_checks_as_java(
    catalog: FileSystemCatalog, options: dict[str, str], primary_keys: list[str], message: str
) -> None:
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=primary_keys, options=options)
    with pytest.raises(OptionError, match=message):
        catalog.create_table("db.t", schema)


def test_nested_upsert_key_refused_and_sequence_field_needs_it(
    catalog: FileSystemCatalog,
) -> None:
    nested = pa.schema([("id", pa.int64()), ("l", pa.list_(pa.int32()))])
    with pytest.raises(OptionError, match="unsupported"):
        catalog.create_table(
            "db.n", Schema.from_pyarrow_schema(nested, options={"upsert-key": "l"})
        )
    plain = _create(catalog, {"sequence.field": "ts"}, name="p")
    with pytest.raises(UnsupportedOptionError, match="sequence.field"):
        _write(plain, [_row(1, "a")])


def test_keys_of_every_primitive_family_match_null_safely(catalog: FileSystemCatalog) -> None:
    from datetime import date
    from decimal import Decimal

    schema = pa.schema(
        [("d", pa.date32()), ("m", pa.decimal128(10, 2)), ("b", pa.bool_()), ("v", pa.string())]
    )
    options = {"upsert-key": "d,m,b"}
    catalog.create_table("db.k", Schema.from_pyarrow_schema(schema, options=options))
    table = catalog.get_table("db.k")

    def write(rows: list[tuple[Any, ...]]) -> None:
        builder = table.new_batch_write_builder()
        with builder.new_write() as w:
            data = [dict(zip(schema.names, r, strict=True)) for r in rows]
            w.write_arrow(pa.Table.from_pylist(data, schema))
            messages = w.prepare_commit()
        builder.new_commit().commit(messages)

    day, one = date(2026, 1, 2), Decimal("1.50")
    write([(day, one, True, "a"), (None, None, None, "n"), (day, one, False, "f")])
    write([(day, one, True, "a2"), (None, None, None, "n2")])
    rb = table.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("v").to_pylist()
    assert sorted(got) == ["a2", "f", "n2"]
