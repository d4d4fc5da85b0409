"""Data files in Parquet, ORC and Avro: writing an Arrow table, reading one back.

Mirrors the Paimon format factories (paimon-format): Parquet columns carry their field ids, small
decimals are stored as INT32/INT64 as Java stores them, compression follows ``file.compression``.
FileIO moves the bytes; this module only encodes and decodes them.
"""

from __future__ import annotations

import io
from typing import Any, cast

import fastavro
import pyarrow as pa
import pyarrow.orc as porc
import pyarrow.parquet as pq

from paimon_pyspark.errors import CorruptTableError, UnsupportedOptionError
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.types.data_types import (
    ArrayType,
    AtomicType,
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    MapType,
    RowType,
    TimestampType,
    TimeType,
)

EXTENSIONS = {"parquet": "parquet", "orc": "orc", "avro": "avro"}
_PARQUET_CODECS = {"zstd", "snappy", "gzip", "lz4", "brotli", "none", "uncompressed"}


def write_file(
    file_io: FileIO,
    path: str,
    table: pa.Table,
    fmt: str,
    compression: str,
    zstd_level: int,
    fields: list[DataField],
) -> int:
    """Write ``table`` to ``path``; returns the file size in bytes."""
    if fmt == "parquet":
        codec = "none" if compression in ("none", "uncompressed") else compression
        if codec not in _PARQUET_CODECS:
            raise UnsupportedOptionError(f"file.compression '{compression}' for parquet")
        with file_io.open_output(path) as out:
            pq.write_table(
                table,
                out,
                compression=codec,
                compression_level=zstd_level if codec == "zstd" else None,
                store_decimal_as_integer=True,
                row_group_size=1024 * 1024,
            )
    elif fmt == "orc":
        codec = "uncompressed" if compression == "none" else compression
        with file_io.open_output(path) as out:
            porc.write_table(to_orc_table(table), out, compression=codec)
    elif fmt == "avro":
        data = _encode_avro(table, fields, compression)
        file_io.write_bytes(path, data)
    else:
        raise UnsupportedOptionError(f"file.format '{fmt}' is not supported.")
    return file_io.file_size(path)


def read_file(
    file_io: FileIO, path: str, fmt: str, columns: list[str] | None, schema: pa.Schema
) -> pa.Table:
    """Read ``columns`` (all when None) of a data file whose writing schema is ``schema``."""
    try:
        if fmt == "parquet":
            with file_io.open_input(path) as f:
                return pq.read_table(f, columns=columns, use_threads=False)
        if fmt == "orc":
            with file_io.open_input(path) as f:
                return from_orc_table(porc.ORCFile(f).read(columns=columns), schema)
        if fmt == "avro":
            t = _decode_avro(file_io.read_bytes(path), schema)
            return t if columns is None else t.select(columns)
    except (OSError, pa.ArrowInvalid) as e:
        raise CorruptTableError(f"Data file '{path}' cannot be read: {e}") from e
    raise UnsupportedOptionError(f"file.format '{fmt}' is not supported.")


# --- ORC data files -------------------------------------------------------------------------


def orc_arrow_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type of the ORC column that holds ``t``.

    ORC has no TIME type and pyarrow's ORC writer refuses time32; Java's OrcTypeUtil stores TIME
    as an ORC int of milliseconds of the day, which is exactly time32[ms] cast to int32.
    """
    if pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_list(t):
        vf = t.value_field
        return pa.list_(vf.with_type(orc_arrow_type(vf.type)))
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(orc_arrow_type(t.key_type)),
            t.item_field.with_type(orc_arrow_type(t.item_type)),
        )
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(orc_arrow_type(f.type)) for f in t])
    return t


def to_orc_table(table: pa.Table) -> pa.Table:
    """``table`` with every column in the Arrow type its ORC column holds."""
    target = pa.schema([f.with_type(orc_arrow_type(f.type)) for f in table.schema])
    return table if target.equals(table.schema) else table.cast(target)


def from_orc_table(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Undo :func:`to_orc_table` for the columns of ``schema`` (the writing schema) read."""
    columns = []
    changed = False
    for name, column in zip(table.column_names, table.columns, strict=True):
        index = schema.get_field_index(name)
        wanted = schema.field(index).type if index >= 0 else column.type
        if column.type != wanted and column.type == orc_arrow_type(wanted):
            column = column.cast(wanted)
            changed = True
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names) if changed else table


# --- Avro data files ------------------------------------------------------------------------


def avro_type(t: DataType, name: str) -> Any:
    """Java's AvroSchemaConverter mapping of a Paimon type."""
    base: Any
    if isinstance(t, AtomicType):
        base = {
            "BOOLEAN": "boolean",
            "TINYINT": "int",
            "SMALLINT": "int",
            "INT": "int",
            "BIGINT": "long",
            "FLOAT": "float",
            "DOUBLE": "double",
            "DATE": {"type": "int", "logicalType": "date"},
        }[t.name]
    elif isinstance(t, CharType):
        base = "string"
    elif isinstance(t, BinaryType):
        base = "bytes"
    elif isinstance(t, DecimalType):
        base = {
            "type": "bytes",
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
    elif isinstance(t, TimeType):
        base = {"type": "int", "logicalType": "time-millis"}
    elif isinstance(t, TimestampType):
        unit = "millis" if t.precision <= 3 else "micros"
        prefix = "local-timestamp" if t.local_tz else "timestamp"
        base = {"type": "long", "logicalType": f"{prefix}-{unit}"}
    elif isinstance(t, ArrayType):
        base = {"type": "array", "items": avro_type(t.element, name)}
    elif isinstance(t, MapType) and isinstance(t.key, CharType):
        base = {"type": "map", "values": avro_type(t.value, name)}
    elif isinstance(t, RowType):
        base = {
            "type": "record",
            "name": name,
            "fields": [avro_field(f.name, f.type, f"{name}_{f.name}") for f in t.fields],
        }
    else:
        raise UnsupportedOptionError(f"type {t} cannot be written to an avro data file")
    return ["null", base] if t.nullable else base


def avro_field(name: str, t: DataType, record_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "type": avro_type(t, record_name)}
    if t.nullable:
        out["default"] = None
    return out


def _avro_schema(fields: list[DataField]) -> dict[str, Any]:
    return {
        "type": "record",
        "name": "record",
        "namespace": "org.apache.paimon.avro.generated",
        "fields": [avro_field(f.name, f.type, f"record_{f.name}") for f in fields],
    }


def _encode_avro(table: pa.Table, fields: list[DataField], compression: str) -> bytes:
    codec = {"zstd": "zstandard", "none": "null", "uncompressed": "null"}.get(
        compression, compression
    )
    rows = table.to_pylist()
    for row in rows:
        for f in fields:
            if isinstance(f.type, MapType):
                v = row[f.name]
                row[f.name] = None if v is None else dict(v)
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(_avro_schema(fields)), rows, codec=codec)
    return buf.getvalue()


def _decode_avro(data: bytes, schema: pa.Schema) -> pa.Table:
    rows = [cast(dict[str, Any], r) for r in fastavro.reader(io.BytesIO(data))]
    columns = []
    for field in schema:
        values = [r.get(field.name) for r in rows]
        if pa.types.is_map(field.type):
            values = [None if v is None else list(v.items()) for v in values]
        if pa.types.is_timestamp(field.type) and field.type.tz is None:
            values = [v if v is None else v.replace(tzinfo=None) for v in values]
        columns.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(columns, schema=schema)
