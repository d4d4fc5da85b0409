"""Column changes of ``apply_changes`` on schemas in memory: ids, positions, renames in keys and
options, and the cast table, each against Java 1.4.2's SchemaManager.generateTableSchema and
DataTypeCasts / CastExecutors (tests/interop/test_schema_evolution_java.py runs the same cases
through Java)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_pyspark.errors import SchemaChangeError
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.schema_change import Move, SchemaChange, apply_changes
from paimon_pyspark.types.casts import has_cast_executor, is_implicit_widening, supports_cast
from paimon_pyspark.types.data_types import (
    ArrayType,
    DataField,
    DataType,
    RowType,
    parse_atomic_sql,
)

T = parse_atomic_sql


def schema(**options: str) -> TableSchema:
    return TableSchema(
        id=3,
        fields=(
            DataField(0, "pt", T("STRING NOT NULL")),
            DataField(1, "id", T("INT NOT NULL")),
            DataField(2, "v", T("STRING")),
            DataField(7, "n", T("INT")),
        ),
        highest_field_id=9,
        partition_keys=("pt",),
        primary_keys=("pt", "id"),
        options=dict(options),
    )


def apply(old: TableSchema, *changes: SchemaChange) -> TableSchema:
    return apply_changes(old, list(changes), lambda: True, "db.t")


def names(s: TableSchema) -> list[str]:
    return [f.name for f in s.fields]


def test_new_columns_take_ids_above_the_highest_ever_handed_out() -> None:
    new = apply(
        schema(), SchemaChange.add_column("a", pa.int32()), SchemaChange.add_column("b", T("INT"))
    )
    assert [(f.id, f.name) for f in new.fields[-2:]] == [(10, "a"), (11, "b")]
    assert new.highest_field_id == 11
    assert new.id == 4


def test_nested_fields_are_numbered_before_their_parent_as_java_row_builder() -> None:
    row = RowType(
        (
            DataField(0, "a", T("INT")),
            DataField(0, "b", RowType((DataField(0, "c", T("INT")),))),
        )
    )
    new = apply(schema(), SchemaChange.add_column("r", ArrayType(row)))
    added = new.fields[-1]
    assert added.id == 10
    assert isinstance(added.type, ArrayType) and isinstance(added.type.element, RowType)
    inner = added.type.element.fields
    assert [(f.name, f.id) for f in inner] == [("a", 11), ("b", 13)]
    assert isinstance(inner[1].type, RowType) and inner[1].type.fields[0].id == 12
    assert new.highest_field_id == 13


@pytest.mark.parametrize(
    ("move", "order"),
    [
        (Move.first("c"), ["c", "pt", "id", "v", "n"]),
        (Move.after("c", "id"), ["pt", "id", "c", "v", "n"]),
        (Move.before("c", "id"), ["pt", "c", "id", "v", "n"]),
        (Move.last("c"), ["pt", "id", "v", "n", "c"]),
        (None, ["pt", "id", "v", "n", "c"]),
    ],
)
def test_add_column_positions(move: Move | None, order: list[str]) -> None:
    assert names(apply(schema(), SchemaChange.add_column("c", T("INT"), None, move))) == order


def test_add_column_before_partition_option_puts_it_before_the_first_partition_key() -> None:
    new = apply(
        schema(**{"add-column-before-partition": "true"}), SchemaChange.add_column("c", T("INT"))
    )
    assert names(new) == ["c", "pt", "id", "v", "n"]


@pytest.mark.parametrize(
    ("move", "order"),
    [
        (Move.first("n"), ["n", "pt", "id", "v"]),
        (Move.last("pt"), ["id", "v", "n", "pt"]),
        (Move.after("pt", "v"), ["id", "v", "pt", "n"]),
        (Move.after("n", "pt"), ["pt", "n", "id", "v"]),
        (Move.before("pt", "n"), ["id", "v", "pt", "n"]),
        (Move.before("n", "id"), ["pt", "n", "id", "v"]),
    ],
)
def test_update_column_position_as_java_apply_move(move: Move, order: list[str]) -> None:
    assert names(apply(schema(), SchemaChange.update_column_position(move))) == order


def test_rename_follows_into_primary_keys_and_column_options() -> None:
    old = schema(
        **{
            "sequence.field": "n",
            "fields.v.aggregate-function": "max",
            "fields.n.sequence-group": "v",
        }
    )
    new = apply(old, SchemaChange.rename_column("v", "w"), SchemaChange.rename_column("id", "k"))
    assert new.primary_keys == ("pt", "k")
    assert [(f.id, f.name) for f in new.fields] == [(0, "pt"), (1, "k"), (2, "w"), (7, "n")]
    assert new.options == {
        "sequence.field": "n",
        "fields.w.aggregate-function": "max",
        "fields.n.sequence-group": "w",
    }


def test_type_nullability_and_comments() -> None:
    new = apply(
        schema(),
        SchemaChange.update_column_type("n", T("BIGINT NOT NULL"), keep_nullability=True),
        SchemaChange.update_column_comment("v", "a value"),
        SchemaChange.update_comment("the table"),
    )
    assert new.field("n").type == T("BIGINT")
    assert new.field("v").description == "a value"
    assert new.comment == "the table"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (SchemaChange.add_column("v", T("INT")), "Column v already exists in the db.t table."),
        (
            SchemaChange.add_column("c", T("INT NOT NULL")),
            "Column c cannot specify NOT NULL in the db.t table.",
        ),
        (SchemaChange.drop_column("id"), "Cannot drop partition key or primary key: [id]"),
        (SchemaChange.drop_column("x"), "Column x does not exist in the db.t table."),
        (SchemaChange.rename_column("pt", "p"), "Cannot rename partition column: [pt]"),
        (SchemaChange.update_column_type("id", T("BIGINT")), "Cannot update primary key"),
        (
            SchemaChange.update_column_type("n", T("DATE")),
            "Column type n[INT] cannot be converted to DATE without loosing information.",
        ),
        (
            SchemaChange.update_column_nullability("n", False),
            "Cannot update column type from nullable to non nullable for n.",
        ),
        (SchemaChange.update_column_nullability("id", True), "Cannot change nullability of"),
        (SchemaChange.update_column_position(Move.first("pt")), "Cannot move itself for column pt"),
        (SchemaChange.update_column_position(Move.first("x")), "Field name not found: x"),
    ],
)
def test_java_refusals(change: SchemaChange, message: str) -> None:
    with pytest.raises(SchemaChangeError) as refused:
        apply(schema(), change)
    assert message in str(refused.value)
    assert "db.t" in str(refused.value)


def test_null_to_not_null_allowed_when_the_option_says_so() -> None:
    old = schema(**{"alter-column-null-to-not-null.disabled": "false"})
    assert (
        not apply(old, SchemaChange.update_column_nullability("n", False)).field("n").type.nullable
    )


def test_dropping_every_column_is_refused() -> None:
    old = TableSchema(id=0, fields=(DataField(0, "a", T("INT")),), highest_field_id=0)
    with pytest.raises(SchemaChangeError, match="Cannot drop all fields in table"):
        apply(old, SchemaChange.drop_column("a"))


@pytest.mark.parametrize(
    ("source", "target", "implicit", "explicit", "executor"),
    [
        ("INT", "BIGINT", True, True, True),
        ("BIGINT", "INT", False, True, True),
        ("INT", "STRING", False, True, True),
        ("STRING", "INT", False, True, True),
        ("INT", "DATE", False, False, False),
        ("DATE", "DATE", True, True, False),
        ("TIMESTAMP(3)", "STRING", False, True, True),
        ("TIMESTAMP(3)", "VARCHAR(10)", False, True, False),
        ("DECIMAL(10, 2)", "DECIMAL(12, 2)", True, True, True),
        ("FLOAT", "DOUBLE", True, True, True),
        ("BOOLEAN", "INT", False, True, True),
        ("INT", "BOOLEAN", False, True, True),
        ("BYTES", "STRING", False, True, True),
    ],
)
def test_cast_tables_as_java(
    source: str, target: str, implicit: bool, explicit: bool, executor: bool
) -> None:
    s: DataType = T(source)
    t: DataType = T(target)
    assert supports_cast(s, t, False) is implicit
    assert supports_cast(s, t, True) is explicit
    assert has_cast_executor(s, t) is executor


def test_only_value_keeping_widenings_keep_old_stats() -> None:
    assert is_implicit_widening(T("INT"), T("BIGINT"))
    assert is_implicit_widening(T("INT NOT NULL"), T("INT"))
    assert not is_implicit_widening(T("BIGINT"), T("INT"))
    assert not is_implicit_widening(T("INT"), T("STRING"))


def test_nested_row_fields_change_by_path_and_keep_their_ids() -> None:
    row = RowType((DataField(10, "a", T("INT")), DataField(11, "b", T("STRING"))))
    old = TableSchema(
        id=0, fields=(DataField(0, "k", T("INT")), DataField(1, "r", row)), highest_field_id=11
    )
    new = apply(
        old,
        SchemaChange.add_column(["r", "c"], T("INT"), None, Move.first("c")),
        SchemaChange.rename_column(["r", "b"], "bb"),
        SchemaChange.update_column_type(["r", "a"], T("BIGINT")),
    )
    inner = new.field("r").type
    assert isinstance(inner, RowType)
    assert [(f.id, f.name, str(f.type)) for f in inner.fields] == [
        (12, "c", "INT"),
        (10, "a", "BIGINT"),
        (11, "bb", "STRING"),
    ]
    assert new.highest_field_id == 12
    with pytest.raises(SchemaChangeError, match=r"Column r\.a already exists in the db\.t table"):
        apply(old, SchemaChange.add_column(["r", "a"], T("INT")))
