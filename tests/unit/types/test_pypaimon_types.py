"""pypaimon's spellings of the data types build ours: one representation, two constructors."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_pyspark import Schema
from paimon_pyspark.errors import InvalidArgumentError, UnsupportedTypeError
from paimon_pyspark.types import data_types as ours
from paimon_pyspark.types.pypaimon_types import (
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    DataTypeParser,
    MapType,
    MultisetType,
    PyarrowFieldParser,
    RowType,
    VectorType,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("INT", ours.AtomicType("INT")),
        ("INTEGER", ours.AtomicType("INT")),
        ("BIGINT NOT NULL", ours.AtomicType("BIGINT", nullable=False)),
        ("STRING", ours.STRING()),
        ("VARCHAR(10)", ours.CharType(10, True)),
        ("BYTES", ours.BYTES()),
        ("DECIMAL(12, 2)", ours.DecimalType(12, 2)),
        ("TIMESTAMP(3)", ours.TimestampType(3)),
        ("TIMESTAMP_LTZ(6)", ours.TimestampType(6, True)),
        ("DATE", ours.AtomicType("DATE")),
    ],
)
def test_atomic_type_builds_our_type(text: str, expected: ours.DataType) -> None:
    built = AtomicType(text)
    assert built == expected
    assert isinstance(built, AtomicType) and isinstance(built, DataType)
    assert not isinstance(built, ArrayType)


def test_atomic_type_nullable_argument_and_type_attribute() -> None:
    t = AtomicType("DECIMAL(10, 2)", nullable=False)
    assert t == ours.DecimalType(10, 2, nullable=False)
    assert t.to_dict() == "DECIMAL(10, 2) NOT NULL"
    assert t.type == "DECIMAL(10, 2)"
    assert AtomicType("STRING").type == "STRING"  # type: ignore[attr-defined]


def test_nested_types_take_pypaimons_argument_order() -> None:
    arr = ArrayType(False, AtomicType("INT"))
    assert arr == ours.ArrayType(ours.AtomicType("INT"), nullable=False)
    m = MapType(True, AtomicType("STRING", False), AtomicType("DOUBLE"))
    assert m == ours.MapType(ours.STRING().copy(False), ours.AtomicType("DOUBLE"))
    ms = MultisetType(True, AtomicType("INT"))
    assert ms == ours.MultisetType(ours.AtomicType("INT"))
    v = VectorType(True, AtomicType("FLOAT"), 3)
    assert v == ours.VectorType(ours.AtomicType("FLOAT"), 3)
    row = RowType(True, [DataField(0, "name", AtomicType("STRING"))])
    assert row == ours.RowType((ours.DataField(0, "name", ours.STRING()),))
    assert isinstance(row, RowType) and isinstance(arr, ArrayType) and isinstance(m, MapType)
    assert issubclass(ours.RowType, RowType) and not issubclass(ours.RowType, MapType)
    assert row.get_field_index("name") == 0


def test_wrong_argument_order_or_type_is_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="nullable, a bool"):
        ArrayType(AtomicType("INT"), True)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="key_type must be a DataType"):
        MapType(True, "STRING", AtomicType("INT"))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="fields must be DataFields"):
        RowType(True, ["x"])  # type: ignore[list-item]
    with pytest.raises(InvalidArgumentError, match="length must be an int >= 1"):
        VectorType(True, AtomicType("FLOAT"), 0)
    with pytest.raises(UnsupportedTypeError, match="NOPE"):
        AtomicType("NOPE")
    with pytest.raises(InvalidArgumentError, match="SQL type name"):
        AtomicType(5)  # type: ignore[arg-type]


def test_to_dict_is_javas_schema_json_and_from_dict_reads_it_back() -> None:
    row = RowType(
        False,
        [
            DataField(0, "id", AtomicType("BIGINT", False)),
            DataField(1, "tags", ArrayType(True, AtomicType("STRING")), "the tags"),
            DataField(2, "attrs", MapType(True, AtomicType("STRING", False), AtomicType("INT"))),
        ],
    )
    as_dict = row.to_dict()
    assert as_dict == {
        "type": "ROW NOT NULL",
        "fields": [
            {"id": 0, "name": "id", "type": "BIGINT NOT NULL"},
            {
                "id": 1,
                "name": "tags",
                "type": {"type": "ARRAY", "element": "STRING"},
                "description": "the tags",
            },
            {
                "id": 2,
                "name": "attrs",
                "type": {"type": "MAP", "key": "STRING NOT NULL", "value": "INT"},
            },
        ],
    }
    assert RowType.from_dict(as_dict) == row
    assert DataType.from_dict(as_dict) == row
    assert DataTypeParser.parse_data_type(as_dict) == row
    field = row.fields[1]  # type: ignore[attr-defined]
    assert DataField.from_dict(field.to_dict()) == field
    assert AtomicType.from_dict("INT NOT NULL") == AtomicType("INT", False)


def test_pyarrow_field_parser_round_trips_nested_schema() -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field(
                "info",
                pa.struct([("name", pa.string()), ("age", pa.int32())]),
                metadata={b"description": b"who"},
            ),
            pa.field("tags", pa.list_(pa.string())),
        ]
    )
    fields = PyarrowFieldParser.to_paimon_schema(schema)
    assert [(f.id, f.name, str(f.type)) for f in fields] == [
        (0, "id", "BIGINT NOT NULL"),
        (1, "info", "ROW<name STRING, age INT>"),
        (4, "tags", "ARRAY<STRING>"),
    ]
    assert fields[1].description == "who"
    nested = fields[1].type
    assert isinstance(nested, ours.RowType)
    assert [f.id for f in nested.fields] == [2, 3]
    back = PyarrowFieldParser.from_paimon_schema(fields)
    assert back.field("id").type == pa.int64() and not back.field("id").nullable
    assert back.field("info").type == schema.field("info").type
    assert back.field("info").metadata == {b"description": b"who"}
    assert pa.types.is_list(back.field("tags").type)
    assert PyarrowFieldParser.to_paimon_type(pa.int16(), False) == AtomicType("SMALLINT", False)
    assert PyarrowFieldParser.from_paimon_type(AtomicType("DATE")) == pa.date32()
    f = PyarrowFieldParser.to_paimon_field(7, pa.field("x", pa.struct([("a", pa.int8())])))
    assert f.id == 7 and isinstance(f.type, ours.RowType)
    assert [(g.id, g.name) for g in f.type.fields] == [(0, "a")]
    assert PyarrowFieldParser.from_paimon_field(f).name == "x"


def test_schema_takes_pypaimon_fields_and_description_metadata() -> None:
    schema = Schema(
        fields=[
            DataField(0, "id", AtomicType("BIGINT")),
            DataField(1, "info", RowType(True, [DataField(2, "name", AtomicType("STRING"))])),
        ],
        primary_keys=["id"],
    )
    ts = schema.to_table_schema(0, 0, "db.t")
    assert ts.fields[0].type == ours.AtomicType("BIGINT", nullable=False)
    assert ts.highest_field_id == 2
    from_arrow = Schema.from_pyarrow_schema(
        pa.schema([pa.field("v", pa.string(), metadata={b"description": b"a value"})])
    )
    assert from_arrow.fields == [ours.DataField(0, "v", ours.STRING(), "a value")]
    assert Schema().fields == []
