"""Table schemas in Spark's terms: the StructType a read returns and the Arrow form of it."""

from __future__ import annotations

import inspect

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

from paimon_pyspark.errors import UnsupportedTypeError
from paimon_pyspark.table.file_store_table import FileStoreTable


def _spark_compatible(t: pa.DataType, where: str, table: str) -> pa.DataType:
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return pa.timestamp("us", tz=t.tz)  # Spark timestamps stop at microseconds
    if pa.types.is_time(t):
        raise UnsupportedTypeError(
            f"Table '{table}': field '{where}' is a TIME column, which Spark cannot read."
        )
    if pa.types.is_struct(t):
        return pa.struct(
            [f.with_type(_spark_compatible(f.type, f"{where}.{f.name}", table)) for f in t]
        )
    if pa.types.is_list(t):
        vf = t.value_field
        return pa.list_(vf.with_type(_spark_compatible(vf.type, where, table)))
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(_spark_compatible(t.key_type, where, table)),
            t.item_field.with_type(_spark_compatible(t.item_type, where, table)),
        )
    return t


def spark_schema(table: FileStoreTable) -> StructType:
    fields = [
        pa.field(f.name, _spark_compatible(f.type, f.name, table.name), f.nullable)
        for f in table.arrow_schema
    ]
    return from_arrow_schema(pa.schema(fields))


def spark_arrow_schema(schema: StructType) -> pa.Schema:
    """The exact Arrow schema Spark expects batches of ``schema`` in (nullability included).

    Spark's TIMESTAMP (an instant) travels as UTC microseconds; pyspark 4.3 asks for the zone
    to label them with, earlier releases label them UTC themselves."""
    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)
