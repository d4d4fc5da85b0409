"""store/schema_merge.py: Java's SchemaMergingUtils, the rules of ``write.merge-schema``.

The expectations are Java 1.4.2's; tests/interop/test_schema_merge_java.py holds the same code
to Java itself on every pair of about thirty types, implicitly and with explicit casts.
"""

from __future__ import annotations

from typing import Any

import pytest

from paimon_pyspark.errors import SchemaChangeError, SqlSyntaxError
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.sql.statements import Insert, parse_statement
from paimon_pyspark.store.schema_merge import merge_schemas
from paimon_pyspark.types.data_types import DataField, RowType, parse_type_json

BASE = TableSchema(
    3,
    (
        DataField(0, "id", parse_type_json("INT NOT NULL")),
        DataField(1, "v", parse_type_json("VARCHAR(10)")),
        DataField(
            4,
            "info",
            parse_type_json(
                {
                    "type": "ROW",
                    "fields": [
                        {"id": 2, "name": "a", "type": "INT"},
                        {"id": 3, "name": "b", "type": "DECIMAL(10, 2)"},
                    ],
                }
            ),
        ),
        DataField(5, "ts", parse_type_json("TIMESTAMP(6)")),
    ),
    5,
    primary_keys=("id",),
    options={"bucket": "2"},
)


def data(**fields: Any) -> RowType:
    return RowType(
        tuple(DataField(i, n, parse_type_json(t)) for i, (n, t) in enumerate(fields.items()))
    )


def types(schema: TableSchema) -> dict[str, str]:
    return {f.name: str(f.type) for f in schema.fields}


def test_a_new_column_is_appended_nullable_with_the_next_id() -> None:
    merged = merge_schemas(BASE, data(id="INT NOT NULL", extra="BIGINT NOT NULL"), False, "db.t")
    assert (merged.id, merged.highest_field_id) == (4, 6)
    assert merged.fields[:4] == BASE.fields
    assert merged.fields[4] == DataField(6, "extra", parse_type_json("BIGINT"))
    assert (merged.primary_keys, merged.options) == (BASE.primary_keys, BASE.options)


def test_nested_fields_merge_by_name_and_new_ones_go_last_their_own_fields_numbered_first() -> None:
    info = {
        "type": "ROW",
        "fields": [
            {
                "id": 0,
                "name": "c",
                "type": {"type": "ROW", "fields": [{"id": 1, "name": "x", "type": "INT"}]},
            },
            {"id": 2, "name": "a", "type": "BIGINT"},
        ],
    }
    merged = merge_schemas(BASE, data(info=info), False, "db.t")
    row = merged.fields[2].type
    assert isinstance(row, RowType)
    assert [(f.id, f.name, str(f.type)) for f in row.fields] == [
        (2, "a", "BIGINT"),
        (3, "b", "DECIMAL(10, 2)"),
        (7, "c", "ROW<x INT>"),
    ]
    inner = row.fields[2].type
    assert isinstance(inner, RowType) and inner.fields[0].id == 6
    assert merged.highest_field_id == 7


@pytest.mark.parametrize(
    ("field", "new", "expected"),
    [
        ("id", "BIGINT", "BIGINT NOT NULL"),  # widened; nullability stays the table's
        ("id", "DOUBLE", "DOUBLE NOT NULL"),
        ("v", "STRING", "STRING"),
        ("v", "VARCHAR(20)", "VARCHAR(20)"),
        ("ts", "TIMESTAMP(9)", "TIMESTAMP(9)"),
        ("ts", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
    ],
)
def test_implicit_widenings(field: str, new: str, expected: str) -> None:
    assert types(merge_schemas(BASE, data(**{field: new}), False, "db.t"))[field] == expected


def test_decimals_take_the_larger_precision_of_the_same_scale_only() -> None:
    info = {"type": "ROW", "fields": [{"id": 0, "name": "b", "type": "DECIMAL(20, 2)"}]}
    merged = merge_schemas(BASE, data(info=info), False, "db.t")
    assert str(merged.fields[2].type) == "ROW<a INT, b DECIMAL(20, 2)>"
    narrower = {"type": "ROW", "fields": [{"id": 0, "name": "b", "type": "DECIMAL(5, 2)"}]}
    assert merge_schemas(BASE, data(info=narrower), False, "db.t") is BASE
    scaled = {"type": "ROW", "fields": [{"id": 0, "name": "b", "type": "DECIMAL(10, 3)"}]}
    with pytest.raises(SchemaChangeError) as info_error:
        merge_schemas(BASE, data(info=scaled), True, "db.t")
    assert "field 'info.b'" in str(info_error.value)
    assert "Failed to merge decimal types with different scale: DECIMAL(10, 2) and " in str(
        info_error.value
    )


@pytest.mark.parametrize(
    ("field", "new", "words"),
    [
        ("id", "SMALLINT", "Failed to merge data types INT and SMALLINT"),
        ("v", "DATE", "Failed to merge data types VARCHAR(10) and DATE"),
        ("v", "VARCHAR(5)", "Failed to merge the target type that has a smaller length"),
        ("ts", "TIMESTAMP(3)", "Failed to merge the target type that has a lower precision"),
    ],
)
def test_narrowings_need_explicit_cast(field: str, new: str, words: str) -> None:
    with pytest.raises(SchemaChangeError) as info:
        merge_schemas(BASE, data(**{field: new}), False, "db.t")
    text = str(info.value)
    assert "'db.t'" in text and f"field '{field}'" in text and words in text
    assert "write.merge-schema.explicit-cast" in text
    merged = merge_schemas(BASE, data(**{field: new}), True, "db.t")
    assert types(merged)[field].split(" NOT NULL")[0] == new


def test_what_no_cast_allows_is_refused_even_with_explicit_cast() -> None:
    with pytest.raises(SchemaChangeError) as info:
        merge_schemas(BASE, data(ts="BOOLEAN"), True, "db.t")
    assert "Failed to merge data types TIMESTAMP(6) and BOOLEAN" in str(info.value)
    assert "explicit-cast' = 'true'" not in str(info.value)
    with pytest.raises(SchemaChangeError, match="field 'info'"):
        merge_schemas(BASE, data(info="STRING"), False, "db.t")


def test_nothing_to_merge_keeps_the_schema() -> None:
    same = data(id="INT", v="VARCHAR(10)", ts="TIMESTAMP(6)")  # nullability alone differs
    assert merge_schemas(BASE, same, False, "db.t") is BASE
    assert merge_schemas(BASE, data(v="VARCHAR(10)"), False, "db.t") is BASE  # fewer columns


def test_a_data_field_given_twice_is_refused() -> None:
    twice = RowType(
        (DataField(0, "x", parse_type_json("INT")), DataField(1, "x", parse_type_json("INT")))
    )
    with pytest.raises(SchemaChangeError, match="'x' twice"):
        merge_schemas(BASE, twice, False, "db.t")


def test_insert_by_name_parses_and_a_column_list_with_it_is_refused() -> None:
    stmt = parse_statement(
        "INSERT INTO t /*+ OPTIONS('write.merge-schema' = 'true') */ BY NAME SELECT 1 AS a"
    )
    assert isinstance(stmt, Insert) and stmt.by_name
    assert stmt.hints == {"write.merge-schema": "true"}
    plain = parse_statement("INSERT INTO t SELECT 1 AS a")
    assert isinstance(plain, Insert) and not plain.by_name
    with pytest.raises(SqlSyntaxError, match="BY NAME"):
        parse_statement("INSERT INTO t (a) BY NAME SELECT 1 AS a")
