"""Paimon logical data types, and their JSON form as Java writes it in schema files.

Mirrors org.apache.paimon.types.* and DataType.serializeJson: atomic types are a JSON string
(the SQL name, ``NOT NULL`` appended when not nullable), nested types are JSON objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from paimon_pyspark.errors import UnsupportedTypeError

MAX_LENGTH = 2147483647


@dataclass(frozen=True)
class DataType:
    """Base of all types. ``root`` names the type family as Java's DataTypeRoot does."""

    nullable: bool = field(default=True, kw_only=True)

    @property
    def root(self) -> str:
        raise NotImplementedError

    def sql(self) -> str:
        raise NotImplementedError

    def copy(self, nullable: bool) -> DataType:
        return replace(self, nullable=nullable)

    def to_json(self) -> Any:
        return self.sql() + ("" if self.nullable else " NOT NULL")

    def to_dict(self) -> Any:
        """pypaimon's name for the schema-file JSON (a string for atomic types, a dict else)."""
        return self.to_json()

    @classmethod
    def from_dict(cls, data: Any) -> DataType:
        """pypaimon's name for parsing the schema-file JSON of a type."""
        return parse_type_json(data)

    def __str__(self) -> str:
        return self.sql() + ("" if self.nullable else " NOT NULL")


class _SqlNamed:
    """pypaimon's ``AtomicType.type``: the SQL name of an atomic type, without nullability."""

    def sql(self) -> str:
        raise NotImplementedError

    @property
    def type(self) -> str:
        return self.sql()


@dataclass(frozen=True)
class AtomicType(_SqlNamed, DataType):
    name: str = "INT"

    @property
    def root(self) -> str:
        return self.name

    def sql(self) -> str:
        return self.name


@dataclass(frozen=True)
class DecimalType(_SqlNamed, DataType):
    precision: int = 10
    scale: int = 0

    @property
    def root(self) -> str:
        return "DECIMAL"

    def sql(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"


@dataclass(frozen=True)
class CharType(_SqlNamed, DataType):
    """CHAR(n) / VARCHAR(n); VARCHAR of the maximum length is STRING."""

    length: int = 1
    variable: bool = True

    @property
    def root(self) -> str:
        return "VARCHAR" if self.variable else "CHAR"

    def sql(self) -> str:
        if self.variable:
            return "STRING" if self.length == MAX_LENGTH else f"VARCHAR({self.length})"
        return f"CHAR({self.length})"


@dataclass(frozen=True)
class BinaryType(_SqlNamed, DataType):
    """BINARY(n) / VARBINARY(n); VARBINARY of the maximum length is BYTES."""

    length: int = 1
    variable: bool = True

    @property
    def root(self) -> str:
        return "VARBINARY" if self.variable else "BINARY"

    def sql(self) -> str:
        if self.variable:
            return "BYTES" if self.length == MAX_LENGTH else f"VARBINARY({self.length})"
        return f"BINARY({self.length})"


@dataclass(frozen=True)
class TimeType(_SqlNamed, DataType):
    precision: int = 0

    @property
    def root(self) -> str:
        return "TIME"

    def sql(self) -> str:
        return f"TIME({self.precision})"


@dataclass(frozen=True)
class TimestampType(_SqlNamed, DataType):
    """TIMESTAMP(p), or with ``local_tz`` TIMESTAMP(p) WITH LOCAL TIME ZONE."""

    precision: int = 6
    local_tz: bool = False

    @property
    def root(self) -> str:
        return "TIMESTAMP_WITH_LOCAL_TIME_ZONE" if self.local_tz else "TIMESTAMP"

    def sql(self) -> str:
        suffix = " WITH LOCAL TIME ZONE" if self.local_tz else ""
        return f"TIMESTAMP({self.precision}){suffix}"


@dataclass(frozen=True)
class ArrayType(DataType):
    element: DataType = field(default_factory=lambda: AtomicType("INT"))

    @property
    def root(self) -> str:
        return "ARRAY"

    def sql(self) -> str:
        return f"ARRAY<{self.element}>"

    def to_json(self) -> Any:
        return {"type": "ARRAY" + _nn(self), "element": self.element.to_json()}


@dataclass(frozen=True)
class MultisetType(DataType):
    element: DataType = field(default_factory=lambda: AtomicType("INT"))

    @property
    def root(self) -> str:
        return "MULTISET"

    def sql(self) -> str:
        return f"MULTISET<{self.element}>"

    def to_json(self) -> Any:
        return {"type": "MULTISET" + _nn(self), "element": self.element.to_json()}


@dataclass(frozen=True)
class MapType(DataType):
    key: DataType = field(default_factory=lambda: AtomicType("INT"))
    value: DataType = field(default_factory=lambda: AtomicType("INT"))

    @property
    def root(self) -> str:
        return "MAP"

    def sql(self) -> str:
        return f"MAP<{self.key}, {self.value}>"

    def to_json(self) -> Any:
        return {"type": "MAP" + _nn(self), "key": self.key.to_json(), "value": self.value.to_json()}


@dataclass(frozen=True)
class VectorType(DataType):
    """VECTOR<T, n>: a fixed-length array, used by Paimon's vector indexes."""

    element: DataType = field(default_factory=lambda: AtomicType("FLOAT"))
    length: int = 1

    @property
    def root(self) -> str:
        return "VECTOR"

    def sql(self) -> str:
        return f"VECTOR<{self.element}, {self.length}>"

    def to_json(self) -> Any:
        return {
            "type": "VECTOR" + _nn(self),
            "element": self.element.to_json(),
            "length": self.length,
        }


@dataclass(frozen=True)
class DataField:
    """A named, id-carrying field of a row type (Java's DataField)."""

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type.to_json()}
        if self.description is not None:
            out["description"] = self.description
        if self.default_value is not None:
            out["defaultValue"] = self.default_value
        return out

    def to_dict(self) -> dict[str, Any]:
        """pypaimon's name for :meth:`to_json`."""
        return self.to_json()

    @staticmethod
    def from_dict(data: dict[str, Any]) -> DataField:
        """pypaimon's name for :meth:`from_json`."""
        return DataField.from_json(data)

    @staticmethod
    def from_json(obj: dict[str, Any]) -> DataField:
        return DataField(
            id=int(obj["id"]),
            name=obj["name"],
            type=parse_type_json(obj["type"]),
            description=obj.get("description"),
            default_value=obj.get("defaultValue"),
        )


@dataclass(frozen=True)
class RowType(DataType):
    fields: tuple[DataField, ...] = ()

    @property
    def root(self) -> str:
        return "ROW"

    def sql(self) -> str:
        inner = ", ".join(f"{f.name} {f.type}" for f in self.fields)
        return f"ROW<{inner}>"

    def to_json(self) -> Any:
        return {"type": "ROW" + _nn(self), "fields": [f.to_json() for f in self.fields]}

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def get_field_index(self, field_name: str) -> int:
        """pypaimon's RowType.get_field_index: the position of ``field_name``."""
        for i, f in enumerate(self.fields):
            if f.name == field_name:
                return i
        raise KeyError(f"Field '{field_name}' is not in {self}.")


def _nn(t: DataType) -> str:
    return "" if t.nullable else " NOT NULL"


# --- constructors, in the spirit of Java's DataTypes ---------------------------------------


def BOOLEAN() -> AtomicType:
    return AtomicType("BOOLEAN")


def TINYINT() -> AtomicType:
    return AtomicType("TINYINT")


def SMALLINT() -> AtomicType:
    return AtomicType("SMALLINT")


def INT() -> AtomicType:
    return AtomicType("INT")


def BIGINT() -> AtomicType:
    return AtomicType("BIGINT")


def FLOAT() -> AtomicType:
    return AtomicType("FLOAT")


def DOUBLE() -> AtomicType:
    return AtomicType("DOUBLE")


def DATE() -> AtomicType:
    return AtomicType("DATE")


def STRING() -> CharType:
    return CharType(MAX_LENGTH, True)


def BYTES() -> BinaryType:
    return BinaryType(MAX_LENGTH, True)


_ATOMIC_NAMES = {
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "DATE",
    "VARIANT",
    "BLOB",
}
_ALIASES = {"INTEGER": "INT", "BOOL": "BOOLEAN"}
_SQL_RE = re.compile(
    r"^(?P<name>[A-Z_]+(?: [A-Z]+)*?)\s*(?:\((?P<args>[^)]*)\))?"
    r"(?P<ltz>\s+WITH LOCAL TIME ZONE)?$"
)


def parse_type_json(obj: Any) -> DataType:
    """Parse a type as written in a schema file (string for atomic, object for nested)."""
    if isinstance(obj, str):
        return parse_atomic_sql(obj)
    if isinstance(obj, dict):
        kind, nullable = _split_not_null(str(obj["type"]))
        if kind == "ARRAY":
            return ArrayType(parse_type_json(obj["element"]), nullable=nullable)
        if kind == "MULTISET":
            return MultisetType(parse_type_json(obj["element"]), nullable=nullable)
        if kind == "MAP":
            return MapType(
                parse_type_json(obj["key"]), parse_type_json(obj["value"]), nullable=nullable
            )
        if kind == "VECTOR":
            return VectorType(
                parse_type_json(obj["element"]), int(obj["length"]), nullable=nullable
            )
        if kind == "ROW":
            fields = tuple(DataField.from_json(f) for f in obj["fields"])
            return RowType(fields, nullable=nullable)
    raise UnsupportedTypeError(f"Unsupported Paimon type in schema JSON: {obj!r}")


def _split_not_null(text: str) -> tuple[str, bool]:
    text = text.strip()
    if text.upper().endswith(" NOT NULL"):
        return text[: -len(" NOT NULL")].strip(), False
    return text, True


def parse_atomic_sql(text: str) -> DataType:
    """Parse an atomic SQL type string such as ``DECIMAL(10, 2) NOT NULL``."""
    body, nullable = _split_not_null(text)
    m = _SQL_RE.match(body.upper())
    if not m:
        raise UnsupportedTypeError(f"Unsupported Paimon type: {text!r}")
    name = _ALIASES.get(m.group("name"), m.group("name"))
    args = [int(a) for a in m.group("args").split(",")] if m.group("args") else []
    ltz = m.group("ltz") is not None
    if name in _ATOMIC_NAMES and not args:
        return AtomicType(name, nullable=nullable)
    if name == "STRING":
        return CharType(MAX_LENGTH, True, nullable=nullable)
    if name == "BYTES":
        return BinaryType(MAX_LENGTH, True, nullable=nullable)
    if name in ("VARCHAR", "CHAR"):
        return CharType(args[0] if args else 1, name == "VARCHAR", nullable=nullable)
    if name in ("VARBINARY", "BINARY"):
        return BinaryType(args[0] if args else 1, name == "VARBINARY", nullable=nullable)
    if name in ("DECIMAL", "NUMERIC", "DEC"):
        p = args[0] if args else 10
        s = args[1] if len(args) > 1 else 0
        return DecimalType(p, s, nullable=nullable)
    if name == "TIME":
        return TimeType(args[0] if args else 0, nullable=nullable)
    if name == "TIMESTAMP":
        return TimestampType(args[0] if args else 6, ltz, nullable=nullable)
    if name == "TIMESTAMP_LTZ":
        return TimestampType(args[0] if args else 6, True, nullable=nullable)
    raise UnsupportedTypeError(f"Unsupported Paimon type: {text!r}")
