"""Paimon data types and their mapping to Arrow."""

from paimon_pyspark.types.arrow import from_arrow_type, to_arrow_schema, to_arrow_type
from paimon_pyspark.types.data_types import (
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
    parse_type_json,
)

__all__ = [
    "ArrayType",
    "AtomicType",
    "BinaryType",
    "CharType",
    "DataField",
    "DataType",
    "DecimalType",
    "MapType",
    "MultisetType",
    "RowType",
    "TimeType",
    "TimestampType",
    "from_arrow_type",
    "parse_type_json",
    "to_arrow_schema",
    "to_arrow_type",
]
