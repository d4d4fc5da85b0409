"""Column changes on real tables: reads of files written under older schemas (by field id),
merge-on-read and compaction across a change, stats pruning of renamed and retyped columns,
writes after a change, and ``rename_table``.

tests/interop/test_schema_evolution_java.py holds the same changes to Java Paimon 1.4.2.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    IdentifierError,
    InvalidArgumentError,
    SchemaChangeError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedOperationError,
)
from paimon_pyspark.procedures import compact
from paimon_pyspark.store.schema_change import Move, SchemaChange
from paimon_pyspark.types.data_types import CharType, parse_atomic_sql

ARROW = pa.schema(
    [
        pa.field("id", pa.int32(), nullable=False),
        ("v", pa.string()),
        ("n", pa.int32()),
    ]
)


def make(catalog: FileSystemCatalog, *, pk: bool, name: str = "t") -> str:
    options = {"bucket": "1"} if pk else {}
    schema = Schema.from_pyarrow_schema(ARROW, primary_keys=["id"] if pk else [], options=options)
    catalog.create_table(f"db.{name}", schema)
    write_commit(
        catalog.get_table(f"db.{name}"),
        pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "n": [10, 20, 30]}, schema=ARROW),
    )
    return f"db.{name}"


def files_of(table: FileStoreTable) -> list[tuple[str, int]]:
    """(file name, schema id) of every data file of the latest snapshot."""
    splits = table.new_read_builder().new_scan().plan().splits()
    return sorted((f.file_name, f.schema_id) for s in splits for f in s.files)


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_old_files_read_by_field_id_after_add_rename_widen_and_drop(
    catalog: FileSystemCatalog, pk: bool
) -> None:
    ident = make(catalog, pk=pk)
    catalog.alter_table(
        ident,
        [
            SchemaChange.add_column("x", pa.float64(), "added", Move.after("x", "id")),
            SchemaChange.rename_column("v", "w"),
            SchemaChange.update_column_type("n", pa.int64()),
        ],
    )
    table = catalog.get_table(ident)
    assert table.fields[1].name == "x" and table.fields[1].id == 3
    assert read_all(table).schema.field("n").type == pa.int64()
    assert sort_rows(read_all(table)) == [
        {"id": 1, "x": None, "w": "a", "n": 10},
        {"id": 2, "x": None, "w": "b", "n": 20},
        {"id": 3, "x": None, "w": "c", "n": 30},
    ]
    catalog.alter_table(ident, [SchemaChange.drop_column("w")])
    assert sort_rows(read_all(catalog.get_table(ident))) == [
        {"id": 1, "x": None, "n": 10},
        {"id": 2, "x": None, "n": 20},
        {"id": 3, "x": None, "n": 30},
    ]


def test_dropped_then_re_added_name_is_a_new_column(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, pk=False)
    catalog.alter_table(ident, [SchemaChange.drop_column("v")])
    catalog.alter_table(ident, [SchemaChange.add_column("v", pa.string())])
    table = catalog.get_table(ident)
    assert table.store.table_schema.highest_field_id == 3
    assert table.store.table_schema.field("v").id == 3
    assert read_all(table).column("v").to_pylist() == [None, None, None]


def test_merge_on_read_across_a_change_takes_the_newest_row_in_the_new_schema(
    catalog: FileSystemCatalog,
) -> None:
    ident = make(catalog, pk=True)
    catalog.alter_table(
        ident,
        [SchemaChange.rename_column("v", "w"), SchemaChange.add_column("x", pa.string())],
    )
    table = catalog.get_table(ident)
    new = pa.schema([pa.field("id", pa.int32(), nullable=False), ("w", pa.string())])
    new = new.append(pa.field("n", pa.int32())).append(pa.field("x", pa.string()))
    write_commit(
        table,
        pa.table({"id": [2, 4], "w": ["B", "d"], "n": [21, 40], "x": ["new", "new"]}, new),
    )
    table = catalog.get_table(ident)
    assert sorted({sid for _, sid in files_of(table)}) == [0, 1]
    expected = [
        {"id": 1, "w": "a", "n": 10, "x": None},
        {"id": 2, "w": "B", "n": 21, "x": "new"},
        {"id": 3, "w": "c", "n": 30, "x": None},
        {"id": 4, "w": "d", "n": 40, "x": "new"},
    ]
    assert sort_rows(read_all(table)) == expected
    assert compact(catalog, ident) is not None
    table = catalog.get_table(ident)
    assert {sid for _, sid in files_of(table)} == {1}
    assert sort_rows(read_all(table)) == expected


def test_append_compaction_after_a_change_writes_the_new_schema(
    catalog: FileSystemCatalog,
) -> None:
    ident = make(catalog, pk=False)
    for i in range(4, 8):
        write_commit(
            catalog.get_table(ident),
            pa.table({"id": [i], "v": ["d"], "n": [i * 10]}, schema=ARROW),
        )
    catalog.alter_table(ident, [SchemaChange.update_column_type("n", pa.int64())])
    before = sort_rows(read_all(catalog.get_table(ident)))
    assert compact(catalog, ident) is not None
    table = catalog.get_table(ident)
    assert {sid for _, sid in files_of(table)} == {1}
    assert sort_rows(read_all(table)) == before


def test_a_write_opened_before_a_change_commits_under_its_own_schema_id(
    catalog: FileSystemCatalog,
) -> None:
    """As Java: a data file carries the schema it was written with, and the commit takes it."""
    ident = make(catalog, pk=True)
    old = catalog.get_table(ident)
    builder = old.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(pa.table({"id": [5], "v": ["e"], "n": [50]}, schema=ARROW))
    catalog.alter_table(ident, [SchemaChange.rename_column("v", "w")])
    builder.new_commit().commit(write.prepare_commit())
    write.close()
    table = catalog.get_table(ident)
    assert table.store.table_schema.id == 1
    assert {"id": 5, "w": "e", "n": 50} in sort_rows(read_all(table))


def test_stats_of_old_files_prune_a_renamed_and_a_widened_column(
    catalog: FileSystemCatalog,
) -> None:
    ident = make(catalog, pk=False)
    write_commit(
        catalog.get_table(ident),
        pa.table({"id": [100], "v": ["z"], "n": [1000]}, schema=ARROW),
    )
    catalog.alter_table(
        ident,
        [SchemaChange.rename_column("v", "w"), SchemaChange.update_column_type("n", pa.int64())],
    )
    table = catalog.get_table(ident)
    for field, literal in (("w", "z"), ("n", 1000)):
        rb = table.new_read_builder()
        rb = rb.with_filter(rb.new_predicate_builder().equal(field, literal))
        splits = rb.new_scan().plan().splits()
        assert sum(len(s.files) for s in splits) == 1
        assert rb.new_read().to_arrow(splits).column("id").to_pylist() == [100]


def test_stats_of_a_column_retyped_to_string_are_not_used(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, pk=False)
    catalog.alter_table(ident, [SchemaChange.update_column_type("n", CharType(2147483647))])
    table = catalog.get_table(ident)
    rb = table.new_read_builder()
    rb = rb.with_filter(rb.new_predicate_builder().equal("n", "20"))
    splits = rb.new_scan().plan().splits()
    assert sum(len(s.files) for s in splits) == 1
    assert rb.new_read().to_arrow(splits).column("id").to_pylist() == [2]


def test_narrowing_reads_old_values_as_java_casts_them(catalog: FileSystemCatalog) -> None:
    """BIGINT to INT keeps the low 32 bits, as Java's ``(int)`` cast."""
    arrow = pa.schema([("k", pa.int32()), ("b", pa.int64())])
    catalog.create_table("db.narrow", Schema.from_pyarrow_schema(arrow))
    write_commit(
        catalog.get_table("db.narrow"), pa.table({"k": [1, 2], "b": [7, 2**32 + 5]}, arrow)
    )
    catalog.alter_table("db.narrow", [SchemaChange.update_column_type("b", pa.int32())])
    assert sorted(read_all(catalog.get_table("db.narrow")).column("b").to_pylist()) == [5, 7]


def test_writes_after_a_change_use_the_new_schema(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, pk=False)
    catalog.alter_table(ident, [SchemaChange.add_column("x", pa.int64(), None, Move.first("x"))])
    table = catalog.get_table(ident)
    assert table.fields[0].name == "x"
    new = pa.schema([("x", pa.int64()), pa.field("id", pa.int32(), nullable=False)])
    new = new.append(pa.field("v", pa.string())).append(pa.field("n", pa.int32()))
    write_commit(table, pa.table({"x": [9], "id": [4], "v": ["d"], "n": [40]}, schema=new))
    table = catalog.get_table(ident)
    assert sorted(sid for _, sid in files_of(table)) == [0, 1]
    assert {"x": 9, "id": 4, "v": "d", "n": 40} in sort_rows(read_all(table))


def test_schema_file_records_ids_and_highest_field_id(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, pk=True)
    catalog.alter_table(
        ident,
        [
            SchemaChange.add_column("a", parse_atomic_sql("INT")),
            SchemaChange.add_column("b", parse_atomic_sql("INT")),
            SchemaChange.drop_column("a"),
            SchemaChange.rename_column("id", "key"),
            SchemaChange.update_column_comment("b", "bee"),
            SchemaChange.update_comment("table comment"),
        ],
    )
    schema = catalog.get_table(ident).store.table_schema
    assert [(f.id, f.name) for f in schema.fields] == [(0, "key"), (1, "v"), (2, "n"), (4, "b")]
    assert schema.highest_field_id == 4
    assert schema.primary_keys == ("key",)
    assert schema.field("b").description == "bee"
    assert schema.comment == "table comment"


def test_refused_change_writes_nothing(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, pk=True)
    with pytest.raises(SchemaChangeError, match="Cannot drop partition key or primary key"):
        catalog.alter_table(
            ident, [SchemaChange.add_column("ok", pa.int32()), SchemaChange.drop_column("id")]
        )
    assert os.listdir(os.path.join(catalog.table_path(ident), "schema")) == ["schema-0"]


def test_nested_paths_and_bad_arguments_are_refused(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, pk=False)
    with pytest.raises(UnsupportedOperationError, match="nested"):
        catalog.alter_table(ident, [SchemaChange.drop_column(["v", "inner"])])
    with pytest.raises(InvalidArgumentError, match="data_type"):
        SchemaChange.add_column("c", "INT")
    with pytest.raises(InvalidArgumentError, match="field_name"):
        SchemaChange.drop_column([])


def test_rename_table_moves_the_table(catalog: FileSystemCatalog) -> None:
    ident = make(catalog, pk=True)
    rows = sort_rows(read_all(catalog.get_table(ident)))
    catalog.create_database("other")
    catalog.rename_table(ident, "other.u")
    assert catalog.list_tables("db") == []
    assert sort_rows(read_all(catalog.get_table("other.u"))) == rows
    with pytest.raises(TableNotExistError):
        catalog.get_table(ident)
    with pytest.raises(TableNotExistError):
        catalog.rename_table(ident, "db.v")
    catalog.rename_table(ident, "db.v", ignore_if_not_exists=True)
    make(catalog, pk=False, name="w")
    with pytest.raises(TableAlreadyExistError):
        catalog.rename_table("db.w", "other.u")
    with pytest.raises(IdentifierError, match="system table"):
        catalog.rename_table("db.w$files", "db.z")
    with pytest.raises(IdentifierError, match="system table"):
        catalog.alter_table("db.w$files", [SchemaChange.drop_column("v")])


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_time_travel_reads_with_the_schema_of_that_snapshot(
    catalog: FileSystemCatalog, pk: bool
) -> None:
    """As Java's copy: a snapshot, tag or time from before a change reads its own columns;
    a handle pinned without time travel keeps the latest schema."""
    ident = make(catalog, pk=pk)
    catalog.get_table(ident).create_tag("before")
    catalog.alter_table(
        ident,
        [
            SchemaChange.rename_column("v", "label"),
            SchemaChange.add_column("extra", pa.int64()),
        ],
    )
    table = catalog.get_table(ident)
    write_commit(
        table,
        pa.table(
            {"id": [4], "label": ["d"], "n": [40], "extra": [7]},
            schema=table.arrow_schema,
        ),
    )
    old_rows = [
        {"id": 1, "v": "a", "n": 10},
        {"id": 2, "v": "b", "n": 20},
        {"id": 3, "v": "c", "n": 30},
    ]
    for options in ({"scan.snapshot-id": "1"}, {"scan.tag-name": "before"}):
        old = catalog.get_table(ident).copy(options)
        assert old.field_names == ["id", "v", "n"]
        assert sort_rows(read_all(old)) == old_rows
    latest = catalog.get_table(ident).copy({"scan.snapshot-id": "2"})
    assert latest.field_names == ["id", "label", "n", "extra"]
    assert len(read_all(latest)) == 4
    assert catalog.get_table(ident).copy(
        {"scan.snapshot-id": "1"}, time_travel=False
    ).field_names == [
        "id",
        "label",
        "n",
        "extra",
    ]
    compact(catalog, ident, compact_strategy="full")
    after = catalog.get_table(ident)
    assert sort_rows(read_all(after.copy({"scan.tag-name": "before"}))) == old_rows
