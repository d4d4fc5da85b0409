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
import pyarrow.compute as pc
import pyarrow.orc as porc
import pyarrow.parquet as pq

from paimon_pyspark.errors import (
    CorruptTableError,
    SchemaMismatchError,
    UnsupportedOptionError,
    UnsupportedTypeError,
)
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
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
)

EXTENSIONS = {"parquet": "parquet", "orc": "orc", "avro": "avro"}


def write_avro_file(
    file_io: FileIO, path: str, table: pa.Table, fields: list[DataField], compression: str
) -> int:
    """Write ``table`` as an Avro data file; returns its size in bytes.

    Parquet and ORC are streamed by format/writers.py; Avro is encoded whole, row by row.
    """
    file_io.write_bytes(path, _encode_avro(table, fields, compression))
    return file_io.file_size(path)


def read_file(
    file_io: FileIO,
    path: str,
    fmt: str,
    columns: list[str] | None,
    schema: pa.Schema,
    row_group: int | None = None,
) -> pa.Table:
    """Read ``columns`` (all when None) of a data file whose writing schema is ``schema``; of a
    Parquet file, only ``row_group`` when one is given."""
    try:
        if fmt == "parquet":
            # ParquetFile, not read_table: the same decode without the dataset layer, which
            # costs a Spark task a fifth more CPU per file.
            with file_io.open_input(path) as f:
                parquet = pq.ParquetFile(f)
                if row_group is None:
                    table = parquet.read(columns=columns, use_threads=False)
                else:
                    table = parquet.read_row_group(row_group, columns=columns, use_threads=False)
            missing = [c for c in columns or () if c not in table.column_names]
            if missing:  # ParquetFile skips them where read_table raised
                raise CorruptTableError(f"Data file '{path}' cannot be read: no columns {missing}.")
            return table
        if fmt == "orc":
            with file_io.open_input(path) as f:
                return from_orc_table(porc.ORCFile(f).read(columns=columns), schema)
        if fmt == "avro":
            t = _decode_avro(file_io.read_bytes(path), schema)
            return t if columns is None else t.select(columns)
    except (OSError, pa.ArrowInvalid) as e:
        raise CorruptTableError(f"Data file '{path}' cannot be read: {e}") from e
    raise UnsupportedOptionError(f"file.format '{fmt}' is not supported.")


def parquet_row_groups(file_io: FileIO, path: str) -> int:
    """How many row groups a Parquet file has (its footer is read)."""
    try:
        with file_io.open_input(path) as f:
            return int(pq.ParquetFile(f).metadata.num_row_groups)
    except (OSError, pa.ArrowInvalid) as e:
        raise CorruptTableError(f"Data file '{path}' cannot be read: {e}") from e


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


# pyarrow reads every ORC timestamp, and every INT96 one, as timestamp[ns]: a value outside
# this range would be written fine and make the file unreadable.
_MIN_NS = -(2**63) + 1
_MAX_NS = 2**63 - 1


def check_nanosecond_timestamps(table: pa.Table, why: str) -> None:
    """Raise SchemaMismatchError, naming the field and the value, for a timestamp of ``table``
    outside the years a nanosecond timestamp holds; ``why`` says which file kind needs it."""
    for f, col in zip(table.schema, table.columns, strict=True):
        for chunk in col.chunks:
            _check_timestamps(f.name, chunk, why)


def _check_timestamps(name: str, arr: pa.Array, why: str) -> None:
    t = arr.type
    if pa.types.is_timestamp(t):
        if arr.null_count == len(arr):
            return
        wide = pc.cast(arr, pa.timestamp(t.unit), safe=False).cast(pa.int64())
        per_ns = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}[t.unit]
        lo, hi = pc.min_max(wide).values()
        for v in (lo.as_py(), hi.as_py()):
            if v is not None and not _MIN_NS <= v * per_ns <= _MAX_NS:
                raise SchemaMismatchError(
                    f"Field '{name}': {why} are read as nanosecond timestamps, so they hold "
                    f"years 1678 to 2261 only; got {arr.type} value "
                    f"{pa.scalar(v, pa.timestamp(t.unit, t.tz)).as_py()}."
                )
    elif pa.types.is_struct(t):
        for f, child in zip(t, arr.flatten(), strict=True):
            _check_timestamps(f"{name}.{f.name}", child, why)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        _check_timestamps(name, arr.flatten(), why)
    elif pa.types.is_map(t):
        _check_timestamps(name, arr.keys, why)
        _check_timestamps(name, arr.items, why)


def to_orc_table(table: pa.Table) -> pa.Table:
    """``table`` with every column in the Arrow type its ORC column holds, nulls pushed down.

    Raises SchemaMismatchError for a timestamp the ORC reader could not read back."""
    check_nanosecond_timestamps(table, "ORC data files (use parquet or avro)")
    target = pa.schema([f.with_type(orc_arrow_type(f.type)) for f in table.schema])
    if not target.equals(table.schema):
        table = table.cast(target)
    if not any(_has_struct(f.type) for f in target):
        return table
    columns = [
        pa.chunked_array([_push_down_nulls(c) for c in col.chunks], type=col.type)
        if _has_struct(col.type)
        else col
        for col in table.columns
    ]
    return pa.Table.from_arrays(columns, schema=table.schema)


def _has_struct(t: pa.DataType) -> bool:
    if pa.types.is_struct(t):
        return True
    if pa.types.is_list(t):
        return _has_struct(t.value_type)
    if pa.types.is_map(t):
        return _has_struct(t.key_type) or _has_struct(t.item_type)
    return False


def _push_down_nulls(arr: pa.Array) -> pa.Array:
    """``arr`` with every struct child null wherever the struct is null.

    pyarrow's ORC writer writes a struct child's values by the child's own validity, while ORC
    readers take them only where the parent is present: a valid child under a null struct (what
    ``take`` leaves behind) shifts all later values of that child in the file.
    """
    t = arr.type
    if pa.types.is_struct(t):
        children = [_push_down_nulls(c) for c in arr.flatten()]  # flatten merges parent nulls
        return pa.StructArray.from_arrays(children, fields=list(t), mask=arr.is_null())
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(
            arr.offsets,
            _push_down_nulls(arr.keys),
            _push_down_nulls(arr.items),
            type=t,
            mask=arr.is_null() if arr.null_count else None,
        )
    if pa.types.is_list(t):
        return pa.ListArray.from_arrays(
            arr.offsets,
            _push_down_nulls(arr.values),
            type=t,
            mask=arr.is_null() if arr.null_count else None,
        )
    return arr


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


def check_format_types(fields: list[DataField], fmt: str, table: str) -> None:
    """Refuse, as Java does at CREATE TABLE, types the file format cannot hold exactly; and for
    ORC, TIME with a precision above 3, which pyarrow's ORC writer cannot write."""
    if fmt not in ("avro", "orc"):
        return

    def visit(name: str, t: DataType) -> None:
        if fmt == "orc" and isinstance(t, TimeType) and t.precision > 3:
            raise UnsupportedTypeError(
                f"Table '{table}': field '{name}' is {t}, but ORC files are written here with "
                f"TIME precision <= 3 only (use parquet, or TIME(3))."
            )
        if fmt == "avro" and isinstance(t, TimestampType) and t.precision > 6:
            raise UnsupportedTypeError(
                f"Table '{table}': field '{name}' is {t}, but Avro does not support TIMESTAMP "
                f"type with precision: {t.precision} (use parquet or orc, or precision <= 6)."
            )
        if isinstance(t, RowType):
            for f in t.fields:
                visit(f"{name}.{f.name}", f.type)
        elif isinstance(t, ArrayType | MultisetType):
            visit(name, t.element)
        elif isinstance(t, MapType):
            visit(name, t.key)
            visit(name, t.value)

    for f in fields:
        visit(f.name, f.type)


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
    elif isinstance(t, MapType):
        # Java: a map with a non-string key is an array of key/value records.
        base = {
            "type": "array",
            "logicalType": "map",
            "items": {
                "type": "record",
                "name": name,
                "fields": [
                    avro_field("key", t.key, f"{name}_key"),
                    avro_field("value", t.value, f"{name}_value"),
                ],
            },
        }
    elif isinstance(t, MultisetType) and isinstance(t.element, CharType):
        # Java writes a multiset's counts as nullable ints.
        base = {"type": "map", "values": ["null", "int"]}
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
    nested = [f for f in fields if _has_map(f.type)]
    for row in rows:
        for f in nested:
            row[f.name] = _to_avro_value(row[f.name], f.type)
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(_avro_schema(fields)), rows, codec=codec)
    return buf.getvalue()


def _decode_avro(data: bytes, schema: pa.Schema) -> pa.Table:
    rows = [cast(dict[str, Any], r) for r in fastavro.reader(io.BytesIO(data))]
    columns = []
    for field in schema:
        values = [r.get(field.name) for r in rows]
        if _needs_conversion(field.type):
            values = [_from_avro_value(v, field.type) for v in values]
        columns.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _has_map(t: DataType) -> bool:
    if isinstance(t, MapType | MultisetType):
        return True
    if isinstance(t, ArrayType):
        return _has_map(t.element)
    if isinstance(t, RowType):
        return any(_has_map(f.type) for f in t.fields)
    return False


def _to_avro_value(v: Any, t: DataType) -> Any:
    """A ``to_pylist`` value of type ``t`` (maps are lists of pairs) as fastavro writes it."""
    if v is None:
        return None
    if isinstance(t, MultisetType):
        return dict(v)
    if isinstance(t, MapType):
        if isinstance(t.key, CharType):
            return {k: _to_avro_value(x, t.value) for k, x in v}
        return [
            {"key": _to_avro_value(k, t.key), "value": _to_avro_value(x, t.value)} for k, x in v
        ]
    if isinstance(t, ArrayType):
        return [_to_avro_value(x, t.element) for x in v] if _has_map(t.element) else v
    if isinstance(t, RowType):
        return {f.name: _to_avro_value(v[f.name], f.type) for f in t.fields}
    return v


def _needs_conversion(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_timestamp(t):
        return t.tz is None
    if pa.types.is_list(t):
        return _needs_conversion(t.value_type)
    if pa.types.is_struct(t):
        return any(_needs_conversion(f.type) for f in t)
    return False


def _from_avro_value(v: Any, t: pa.DataType) -> Any:
    """A fastavro value as ``pa.array`` takes it for Arrow type ``t``."""
    if v is None:
        return None
    if pa.types.is_map(t):
        pairs = v.items() if isinstance(v, dict) else ((e["key"], e["value"]) for e in v)
        return [
            (_from_avro_value(k, t.key_type), _from_avro_value(x, t.item_type)) for k, x in pairs
        ]
    if pa.types.is_timestamp(t):
        # fastavro gives UTC-aware datetimes for timestamp-*; the column holds wall-clock time.
        return v.replace(tzinfo=None) if t.tz is None else v
    if pa.types.is_list(t):
        return [_from_avro_value(x, t.value_type) for x in v]
    if pa.types.is_struct(t):
        return {f.name: _from_avro_value(v.get(f.name), f.type) for f in t}
    return v
