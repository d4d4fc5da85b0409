"""pypaimon's spellings of the data types (pypaimon.schema.data_types), over ours.

pypaimon builds types as ``AtomicType("STRING")``, ``ArrayType(nullable, element)``,
``MapType(nullable, key, value)`` and ``RowType(nullable, fields)``. The classes here take those
arguments and return the one representation in types/data_types.py (``AtomicType("STRING")`` is
our ``CharType`` of the maximum length, as Java's ``DataTypes.STRING()`` is a VARCHAR), and
``isinstance`` against them checks the types they build. So a pypaimon program can build a
schema, and a program that tests ``isinstance(t, AtomicType)`` sees our types as pypaimon's.
``DataField`` and ``DataType`` are ours: their constructors already take pypaimon's arguments.

``PyarrowFieldParser`` converts as types/arrow.py does (Java's Arrow mapping): where pypaimon
differs (an ARRAY's Arrow element is named ``element``, not ``item``; ``large_binary`` is BYTES,
not BLOB) the files we write keep Java's form.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.types import data_types as dt
from paimon_pyspark.types.arrow import assign_field_ids, from_arrow_type, to_arrow_type
from paimon_pyspark.types.data_types import DataField, DataType, parse_atomic_sql, parse_type_json

__all__ = [
    "ArrayType",
    "AtomicType",
    "DataField",
    "DataType",
    "DataTypeParser",
    "MapType",
    "MultisetType",
    "PyarrowFieldParser",
    "RowType",
    "VectorType",
]

_DESCRIPTION = b"description"


class _Spelling(type):
    """The metaclass of a pypaimon spelling: ``isinstance`` checks the classes it builds."""

    builds: tuple[type[DataType], ...] = ()

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls.builds)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.builds)


class _PypaimonType(metaclass=_Spelling):
    @staticmethod
    def from_dict(data: Any) -> DataType:
        """Parse a type's schema-file JSON (pypaimon's ``from_dict``)."""
        return parse_type_json(data)


def _nullable(nullable: object, call: str) -> bool:
    if not isinstance(nullable, bool):
        raise InvalidArgumentError(
            f"{call}: the first argument is nullable, a bool (pypaimon's order), got "
            f"{describe(nullable)}."
        )
    return nullable


def _type(value: object, call: str, arg: str) -> DataType:
    if not isinstance(value, DataType):
        raise InvalidArgumentError(f"{call}: {arg} must be a DataType, got {describe(value)}.")
    return value


class AtomicType(_PypaimonType):
    """``AtomicType("DECIMAL(10, 2)")``: a type by its SQL name (``"INTEGER"``, ``"STRING"``,
    ``"TIMESTAMP_LTZ(6)"``, a trailing ``NOT NULL``)."""

    builds = (
        dt.AtomicType,
        dt.CharType,
        dt.BinaryType,
        dt.DecimalType,
        dt.TimeType,
        dt.TimestampType,
    )

    def __new__(cls, type: str, nullable: bool = True) -> DataType:  # type: ignore[misc]
        if not isinstance(type, str):
            raise InvalidArgumentError(
                f"AtomicType(type, nullable): type must be a SQL type name such as 'INT', got "
                f"{describe(type)}."
            )
        parsed = parse_atomic_sql(type)
        return parsed.copy(nullable=_nullable(nullable, "AtomicType") and parsed.nullable)


class ArrayType(_PypaimonType):
    builds = (dt.ArrayType,)

    def __new__(cls, nullable: bool, element_type: DataType) -> DataType:  # type: ignore[misc]
        call = "ArrayType(nullable, element_type)"
        n = _nullable(nullable, call)
        return dt.ArrayType(_type(element_type, call, "element_type"), nullable=n)


class MultisetType(_PypaimonType):
    builds = (dt.MultisetType,)

    def __new__(cls, nullable: bool, element_type: DataType) -> DataType:  # type: ignore[misc]
        call = "MultisetType(nullable, element_type)"
        n = _nullable(nullable, call)
        return dt.MultisetType(_type(element_type, call, "element_type"), nullable=n)


class MapType(_PypaimonType):
    builds = (dt.MapType,)

    def __new__(  # type: ignore[misc]
        cls, nullable: bool, key_type: DataType, value_type: DataType
    ) -> DataType:
        call = "MapType(nullable, key_type, value_type)"
        n = _nullable(nullable, call)
        return dt.MapType(
            _type(key_type, call, "key_type"), _type(value_type, call, "value_type"), nullable=n
        )


class VectorType(_PypaimonType):
    builds = (dt.VectorType,)

    def __new__(  # type: ignore[misc]
        cls, nullable: bool, element_type: DataType, length: int
    ) -> DataType:
        call = "VectorType(nullable, element_type, length)"
        n = _nullable(nullable, call)
        if not isinstance(length, int) or isinstance(length, bool) or length < 1:
            raise InvalidArgumentError(f"{call}: length must be an int >= 1, got {length!r}.")
        return dt.VectorType(_type(element_type, call, "element_type"), length, nullable=n)


class RowType(_PypaimonType):
    builds = (dt.RowType,)

    def __new__(cls, nullable: bool, fields: list[DataField]) -> DataType:  # type: ignore[misc]
        call = "RowType(nullable, fields)"
        n = _nullable(nullable, call)
        for f in fields or []:
            if not isinstance(f, DataField):
                raise InvalidArgumentError(f"{call}: fields must be DataFields, got {describe(f)}.")
        return dt.RowType(tuple(fields or ()), nullable=n)


class DataTypeParser:
    """pypaimon's parser of schema-file JSON, over :func:`parse_type_json`."""

    @staticmethod
    def parse_data_type(json_data: Any) -> DataType:
        return parse_type_json(json_data)

    @staticmethod
    def parse_atomic_type_sql_string(type_string: str) -> DataType:
        return parse_atomic_sql(type_string)

    @staticmethod
    def parse_data_field(json_data: dict[str, Any]) -> DataField:
        return DataField.from_json(json_data)


class PyarrowFieldParser:
    """pypaimon's Arrow <-> Paimon conversions, as types/arrow.py converts."""

    @staticmethod
    def from_paimon_type(data_type: DataType) -> pa.DataType:
        return to_arrow_type(_type(data_type, "PyarrowFieldParser.from_paimon_type", "data_type"))

    @staticmethod
    def from_paimon_field(data_field: DataField) -> pa.Field:
        """The Arrow field; its description, if any, in the field metadata as pypaimon puts it."""
        metadata = (
            {_DESCRIPTION: data_field.description.encode("utf-8")}
            if data_field.description
            else None
        )
        return pa.field(
            data_field.name,
            to_arrow_type(data_field.type),
            nullable=data_field.type.nullable,
            metadata=metadata,
        )

    @staticmethod
    def from_paimon_schema(data_fields: list[DataField] | tuple[DataField, ...]) -> pa.Schema:
        return pa.schema([PyarrowFieldParser.from_paimon_field(f) for f in data_fields])

    @staticmethod
    def to_paimon_type(pa_type: pa.DataType, nullable: bool) -> DataType:
        """The Paimon type; a ROW's fields are numbered by position, as pypaimon numbers them."""
        return _positional_ids(from_arrow_type(pa_type, nullable))

    @staticmethod
    def to_paimon_field(field_idx: int, pa_field: pa.Field) -> DataField:
        return DataField(
            field_idx,
            pa_field.name,
            PyarrowFieldParser.to_paimon_type(pa_field.type, pa_field.nullable),
            arrow_description(pa_field),
        )

    @staticmethod
    def to_paimon_schema(pa_schema: pa.Schema) -> list[DataField]:
        """The fields with ids as Schema.from_pyarrow_schema gives them."""
        columns = [(f.name, from_arrow_type(f.type, f.nullable, f.name)) for f in pa_schema]
        fields, _ = assign_field_ids(columns)
        return [
            DataField(f.id, f.name, f.type, arrow_description(pa_field))
            for f, pa_field in zip(fields, pa_schema, strict=True)
        ]


def arrow_description(pa_field: pa.Field) -> str | None:
    """The column comment pypaimon keeps in an Arrow field's ``description`` metadata."""
    metadata = pa_field.metadata or {}
    raw = metadata.get(_DESCRIPTION)
    return None if raw is None else bytes(raw).decode("utf-8")


def _positional_ids(t: DataType) -> DataType:
    if isinstance(t, dt.RowType):
        fields = tuple(
            DataField(i, f.name, _positional_ids(f.type), f.description)
            for i, f in enumerate(t.fields)
        )
        return dt.RowType(fields, nullable=t.nullable)
    if isinstance(t, dt.ArrayType):
        return dt.ArrayType(_positional_ids(t.element), nullable=t.nullable)
    if isinstance(t, dt.MapType):
        return dt.MapType(t.key, _positional_ids(t.value), nullable=t.nullable)
    return t
