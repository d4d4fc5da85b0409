"""Paimon types <-> Arrow types, both ways.

The Arrow side is what data files hold and what users hand us. Timestamps keep the unit that
Java's Parquet writer uses for the precision (millis up to 3, micros up to 6, nanos above), and
TIMESTAMP WITH LOCAL TIME ZONE becomes a UTC-zoned Arrow timestamp.
"""

from __future__ import annotations

import dataclasses

import pyarrow as pa

from paimon_pyspark.errors import UnsupportedTypeError
from paimon_pyspark.types.data_types import (
    MAX_LENGTH,
    ArrayType,
    AtomicType,
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
    VectorType,
)

FIELD_ID_KEY = b"PARQUET:field_id"

_ATOMIC_TO_ARROW: dict[str, pa.DataType] = {
    "BOOLEAN": pa.bool_(),
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "DATE": pa.date32(),
}


def timestamp_unit(precision: int) -> str:
    if precision <= 3:
        return "ms"
    if precision <= 6:
        return "us"
    return "ns"


def to_arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type that holds values of Paimon type ``t``."""
    if isinstance(t, AtomicType) and t.name in _ATOMIC_TO_ARROW:
        return _ATOMIC_TO_ARROW[t.name]
    if isinstance(t, VectorType):
        return pa.list_(to_arrow_field_for_element("element", t.element), t.length)
    if isinstance(t, CharType):
        return pa.string()
    if isinstance(t, BinaryType):
        return pa.binary()
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, TimeType):
        return pa.time32("ms") if t.precision <= 3 else pa.time64(timestamp_unit(t.precision))
    if isinstance(t, TimestampType):
        return pa.timestamp(timestamp_unit(t.precision), tz="UTC" if t.local_tz else None)
    if isinstance(t, ArrayType):
        return pa.list_(to_arrow_field_for_element("element", t.element))
    if isinstance(t, MultisetType):
        return pa.map_(to_arrow_type(t.element), pa.field("value", pa.int32(), nullable=False))
    if isinstance(t, MapType):
        return pa.map_(
            pa.field("key", to_arrow_type(t.key), nullable=False),
            pa.field("value", to_arrow_type(t.value), nullable=t.value.nullable),
        )
    if isinstance(t, RowType):
        return pa.struct([to_arrow_field(f) for f in t.fields])
    raise UnsupportedTypeError(f"No Arrow type for Paimon type {t}")


def to_arrow_field_for_element(name: str, t: DataType) -> pa.Field:
    return pa.field(name, to_arrow_type(t), nullable=t.nullable)


def to_arrow_field(f: DataField) -> pa.Field:
    return pa.field(
        f.name, to_arrow_type(f.type), nullable=f.type.nullable, metadata={FIELD_ID_KEY: str(f.id)}
    )


def to_arrow_schema(fields: list[DataField] | tuple[DataField, ...]) -> pa.Schema:
    return pa.schema([to_arrow_field(f) for f in fields])


def from_arrow_type(t: pa.DataType, nullable: bool = True, where: str = "") -> DataType:
    """The Paimon type for an Arrow type; ``where`` names the field in error messages."""
    if pa.types.is_dictionary(t):
        return from_arrow_type(t.value_type, nullable, where)
    if pa.types.is_boolean(t):
        return AtomicType("BOOLEAN", nullable=nullable)
    for arrow, name in (
        (pa.int8(), "TINYINT"),
        (pa.int16(), "SMALLINT"),
        (pa.int32(), "INT"),
        (pa.int64(), "BIGINT"),
        (pa.float32(), "FLOAT"),
        (pa.float64(), "DOUBLE"),
        (pa.date32(), "DATE"),
        (pa.date64(), "DATE"),
    ):
        if t == arrow:
            return AtomicType(name, nullable=nullable)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return CharType(MAX_LENGTH, True, nullable=nullable)
    if pa.types.is_fixed_size_binary(t):
        return BinaryType(t.byte_width, False, nullable=nullable)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return BinaryType(MAX_LENGTH, True, nullable=nullable)
    if pa.types.is_decimal(t) and t.precision <= 38:
        return DecimalType(t.precision, t.scale, nullable=nullable)
    if pa.types.is_time(t):
        return TimeType({"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit], nullable=nullable)
    if pa.types.is_timestamp(t):
        precision = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        return TimestampType(precision, t.tz is not None, nullable=nullable)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        vf = t.value_field
        return ArrayType(from_arrow_type(vf.type, vf.nullable, where), nullable=nullable)
    if pa.types.is_map(t):
        return MapType(
            from_arrow_type(t.key_type, False, where),
            from_arrow_type(t.item_type, t.item_field.nullable, where),
            nullable=nullable,
        )
    if pa.types.is_struct(t):
        fields = tuple(
            DataField(-1, t.field(i).name, from_arrow_type(t.field(i).type, t.field(i).nullable))
            for i in range(t.num_fields)
        )
        return RowType(fields, nullable=nullable)
    raise UnsupportedTypeError(
        f"Arrow type {t} of field '{where}' has no Paimon type "
        "(unsigned integers, float16, null and union types are not supported)"
    )


def assign_field_ids(fields: list[tuple[str, DataType]]) -> tuple[list[DataField], int]:
    """Give ids the way Java's Schema.Builder does: each column, then its nested fields, where
    ReassignFieldId numbers a nested field after its own type (RowType.Builder takes the next id
    once the type is built): ``info ROW<name, addr ROW<city>>`` is info 0, name 1, city 2,
    addr 3.

    Returns the fields and the highest id handed out (-1 for none).
    """
    counter = [-1]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    def reassign(t: DataType) -> DataType:
        if isinstance(t, RowType):
            new_fields = []
            for f in t.fields:
                inner = reassign(f.type)
                new_fields.append(
                    DataField(next_id(), f.name, inner, f.description, f.default_value)
                )
            return RowType(tuple(new_fields), nullable=t.nullable)
        if isinstance(t, ArrayType):
            return ArrayType(reassign(t.element), nullable=t.nullable)
        if isinstance(t, MultisetType):
            return MultisetType(reassign(t.element), nullable=t.nullable)
        if isinstance(t, VectorType):
            return dataclasses.replace(t, element=reassign(t.element))
        if isinstance(t, MapType):
            key = reassign(t.key)
            return MapType(key, reassign(t.value), nullable=t.nullable)
        return t

    out = []
    for name, t in fields:
        fid = next_id()
        out.append(DataField(fid, name, reassign(t)))
    return out, counter[0]


def highest_field_id(fields: list[DataField] | tuple[DataField, ...]) -> int:
    best = -1

    def visit(t: DataType) -> None:
        nonlocal best
        if isinstance(t, RowType):
            for f in t.fields:
                best = max(best, f.id)
                visit(f.type)
        elif isinstance(t, ArrayType | MultisetType):
            visit(t.element)
        elif isinstance(t, MapType):
            visit(t.key)
            visit(t.value)

    for f in fields:
        best = max(best, f.id)
        visit(f.type)
    return best


def one_array(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """``column`` as one Array: its only chunk as it is (``combine_chunks`` copies even one)."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column
