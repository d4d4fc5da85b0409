"""Paimon's BinaryRow codec: the canonical bytes Java writes for partitions, keys and stats.

Mirrors org.apache.paimon.data.BinaryRow, BinaryRowWriter, AbstractBinaryWriter, BinaryArray,
BinaryArrayWriter, BinaryMap, RowHelper and org.apache.paimon.utils.SerializationUtils
(spec section 4). Equality and hash codes of Java rows are taken over these raw bytes, so the
encoding must be canonical to the byte: unused slot bytes zero, variable-length chunks padded
to 8 bytes in field order, and nulls of non-compact DECIMAL/TIMESTAMP still reserving their
variable-part space in rows (but not in arrays), exactly as Java's writers do.

Python values are those pyarrow's ``as_py()`` returns for ``to_arrow_type(t)``: bool, int,
float, str, bytes, Decimal, date, time, datetime (naive for TIMESTAMP, UTC-aware for
TIMESTAMP WITH LOCAL TIME ZONE), list for ARRAY, list of (key, value) for MAP and MULTISET,
dict for ROW, None for null. Writers also accept dicts for maps, tuples for rows, integer
epoch values (in the Arrow unit of the type) and pandas Timestamps for nanoseconds.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from paimon_pyspark.errors import SchemaMismatchError, UnsupportedTypeError
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import (
    ArrayType,
    AtomicType,
    BinaryType,
    CharType,
    DataType,
    DecimalType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
)

MAX_COMPACT_DECIMAL_PRECISION = 18
MAX_COMPACT_TIMESTAMP_PRECISION = 3
MAX_INLINE_BYTES = 7
_HEADER_BITS = 8
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_EPOCH = dt.datetime(1970, 1, 1)
_MILLIS_PER_DAY = 86_400_000
_INT_TYPE = AtomicType("INT")
_BIGINT_TYPE = AtomicType("BIGINT")
_STRING_TYPE = CharType(2147483647, True)

_FIXED_FORMATS: dict[str, str] = {
    "BOOLEAN": "<?",
    "TINYINT": "<b",
    "SMALLINT": "<h",
    "INT": "<i",
    "DATE": "<i",
    "BIGINT": "<q",
    "FLOAT": "<f",
    "DOUBLE": "<d",
}
_PACK_Q = struct.Struct("<Q")
_PACK_q = struct.Struct("<q")
_PACK_i = struct.Struct("<i")
_PACK_BE_i = struct.Struct(">i")

Buffer = bytes | bytearray | memoryview


# --- layout arithmetic -------------------------------------------------------------------


def header_width(arity: int) -> int:
    """Bytes of row kind + null bits (Java BinaryRow.calculateBitSetWidthInBytes)."""
    return ((arity + 63 + _HEADER_BITS) // 64) * 8


def fixed_part_size(arity: int) -> int:
    return header_width(arity) + 8 * arity


def round_to_word(n: int) -> int:
    return (n + 7) & ~7


def array_header_size(n: int) -> int:
    """Bytes of element count + null bits (Java BinaryArray.calculateHeaderInBytes)."""
    return 4 + ((n + 31) // 32) * 4


def element_size(t: DataType) -> int:
    """Fixed bytes per array element (Java BinaryArray.calculateFixLengthPartSize)."""
    if isinstance(t, AtomicType):
        if t.name in ("BOOLEAN", "TINYINT"):
            return 1
        if t.name == "SMALLINT":
            return 2
        if t.name in ("INT", "FLOAT", "DATE"):
            return 4
    if isinstance(t, TimeType):
        return 4
    return 8


def is_compact_decimal(t: DataType) -> bool:
    return isinstance(t, DecimalType) and t.precision <= MAX_COMPACT_DECIMAL_PRECISION


def is_compact_timestamp(t: DataType) -> bool:
    return isinstance(t, TimestampType) and t.precision <= MAX_COMPACT_TIMESTAMP_PRECISION


def reserves_on_null(t: DataType) -> bool:
    """Whether a null of ``t`` in a row still takes variable-part space (Java RowHelper)."""
    return (isinstance(t, DecimalType) and not is_compact_decimal(t)) or (
        isinstance(t, TimestampType) and not is_compact_timestamp(t)
    )


def null_reservation(t: DataType) -> int:
    """Bytes a non-compact DECIMAL (16) or TIMESTAMP (8) reserves in a row's variable part."""
    return 16 if isinstance(t, DecimalType) else 8


# --- value conversions shared with the vectorized encoder --------------------------------


def decimal_to_unscaled(value: Any, precision: int, scale: int) -> int:
    """The unscaled integer of ``value`` at ``scale``, rounding HALF_UP like Java's Decimal."""
    unscaled: int
    if isinstance(value, int) and not isinstance(value, bool):
        unscaled = value * 10**scale
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise SchemaMismatchError(f"DECIMAL({precision}, {scale}) cannot hold {value}")
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        magnitude = int("".join(map(str, digits)) or "0")
        shift = exponent + scale
        if shift >= 0:
            magnitude *= 10**shift
        else:
            magnitude, rest = divmod(magnitude, 10**-shift)
            if 2 * rest >= 10**-shift:
                magnitude += 1
        unscaled = -magnitude if sign else magnitude
    else:
        raise SchemaMismatchError(f"DECIMAL({precision}, {scale}) needs a Decimal, got {value!r}")
    if abs(unscaled) >= 10**precision:
        raise SchemaMismatchError(f"{value} does not fit DECIMAL({precision}, {scale})")
    return unscaled


def unscaled_to_decimal(unscaled: int, scale: int) -> Decimal:
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return Decimal((1 if unscaled < 0 else 0, digits, -scale))


def unscaled_bytes(unscaled: int) -> bytes:
    """Minimal big-endian two's complement bytes (Java BigInteger.toByteArray)."""
    length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


def timestamp_to_parts(value: Any, t: TimestampType) -> tuple[int, int]:
    """(epoch millis, nano of milli) as in Java's Timestamp; naive values are read as UTC."""
    if isinstance(value, dt.datetime):
        extra_nanos = int(getattr(value, "nanosecond", 0))
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        days = value.toordinal() - _EPOCH_ORDINAL
        seconds = days * 86400 + value.hour * 3600 + value.minute * 60 + value.second
        millis = seconds * 1000 + value.microsecond // 1000
        return millis, (value.microsecond % 1000) * 1000 + extra_nanos
    if isinstance(value, np.datetime64):
        nanos = int(value.astype("datetime64[ns]").astype(np.int64))
        millis, nano = divmod(nanos, 1_000_000)
        return millis, nano
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        epoch = int(value)
        if t.precision <= 3:
            return epoch, 0
        if t.precision <= 6:
            millis, micros = divmod(epoch, 1000)
            return millis, micros * 1000
        millis, nano = divmod(epoch, 1_000_000)
        return millis, nano
    raise SchemaMismatchError(f"{t} needs a datetime, got {value!r}")


def parts_to_timestamp(millis: int, nano: int, t: TimestampType) -> Any:
    """The value pyarrow's ``as_py`` gives for this instant in ``to_arrow_type(t)``."""
    if t.precision > 6:
        return pa.scalar(millis * 1_000_000 + nano, type=to_arrow_type(t)).as_py()
    value = _EPOCH + dt.timedelta(milliseconds=millis, microseconds=nano // 1000)
    return value.replace(tzinfo=dt.UTC) if t.local_tz else value


def date_to_days(value: Any) -> int:
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        return value.toordinal() - _EPOCH_ORDINAL
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return int(value)
    raise SchemaMismatchError(f"DATE needs a date, got {value!r}")


def time_to_millis(value: Any, t: TimeType) -> int:
    if isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        divisor = 1 if t.precision <= 3 else 1000 if t.precision <= 6 else 1_000_000
        return int(value) // divisor
    raise SchemaMismatchError(f"{t} needs a time, got {value!r}")


def _millis_to_time(millis: int) -> dt.time:
    seconds, ms = divmod(millis, 1000)
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    return dt.time(hours, m, s, ms * 1000)


def _text_bytes(value: Any, t: DataType) -> bytes:
    if isinstance(t, CharType):
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        raise SchemaMismatchError(f"{t} needs a str, got {value!r}")
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise SchemaMismatchError(f"{t} needs bytes, got {value!r}")


def inline_slot(data: bytes) -> int:
    """The 8-byte slot of an inline value of at most 7 bytes, as an unsigned long."""
    return ((0x80 | len(data)) << 56) | int.from_bytes(data, "little")


# --- writing -----------------------------------------------------------------------------


def _append_var(out: bytearray, data: bytes, reserve: int = 0) -> int:
    """Append ``data`` (zero-padded to a word, at least ``reserve`` bytes); return its offset."""
    offset = len(out)
    out += data
    out += bytes(round_to_word(max(len(data), reserve)) - len(data))
    return offset


def _write_value(out: bytearray, pos: int, value: Any, t: DataType) -> None:
    """Write a non-null value into the slot at ``pos`` of the structure held in ``out``."""
    if isinstance(t, AtomicType):
        fmt = _FIXED_FORMATS.get(t.name)
        if fmt is None:
            raise UnsupportedTypeError(f"BinaryRow cannot encode type {t}")
        if t.name == "DATE":
            value = date_to_days(value)
        elif t.name == "BOOLEAN" and not isinstance(value, bool | np.bool_):
            raise SchemaMismatchError(f"BOOLEAN needs a bool, got {value!r}")
        struct.pack_into(fmt, out, pos, value)
    elif isinstance(t, CharType | BinaryType):
        data = _text_bytes(value, t)
        if len(data) <= MAX_INLINE_BYTES:
            _PACK_Q.pack_into(out, pos, inline_slot(data))
        else:
            _PACK_Q.pack_into(out, pos, (_append_var(out, data) << 32) | len(data))
    elif isinstance(t, DecimalType):
        unscaled = decimal_to_unscaled(value, t.precision, t.scale)
        if t.precision <= MAX_COMPACT_DECIMAL_PRECISION:
            _PACK_q.pack_into(out, pos, unscaled)
        else:
            data = unscaled_bytes(unscaled)
            _PACK_Q.pack_into(out, pos, (_append_var(out, data, 16) << 32) | len(data))
    elif isinstance(t, TimestampType):
        millis, nano = timestamp_to_parts(value, t)
        if t.precision <= MAX_COMPACT_TIMESTAMP_PRECISION:
            _PACK_q.pack_into(out, pos, millis)
        else:
            offset = _append_var(out, _PACK_q.pack(millis))
            _PACK_Q.pack_into(out, pos, (offset << 32) | nano)
    elif isinstance(t, TimeType):
        _PACK_i.pack_into(out, pos, time_to_millis(value, t))
    else:
        nested = _serialize_nested(value, t)
        _PACK_Q.pack_into(out, pos, (_append_var(out, nested) << 32) | len(nested))


def _serialize_nested(value: Any, t: DataType) -> bytes:
    if isinstance(t, ArrayType):
        return serialize_array(value, t.element)
    if isinstance(t, MultisetType):
        return serialize_map(value, t.element, AtomicType("INT", nullable=False))
    if isinstance(t, MapType):
        return serialize_map(value, t.key, t.value)
    if isinstance(t, RowType):
        return serialize_row(_row_values(value, t), [f.type for f in t.fields])
    raise UnsupportedTypeError(f"BinaryRow cannot encode type {t}")


def _row_values(value: Any, t: RowType) -> Sequence[Any]:
    if isinstance(value, Mapping):
        return [value.get(f.name) for f in t.fields]
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return value
    raise SchemaMismatchError(f"{t} needs a dict or tuple, got {value!r}")


def serialize_row(values: Sequence[Any], types: Sequence[DataType]) -> bytes:
    """Java's canonical BinaryRow bytes (row kind +I) of ``values`` typed by ``types``."""
    arity = len(types)
    if len(values) != arity:
        raise SchemaMismatchError(f"row has {len(values)} values for {arity} fields")
    width = header_width(arity)
    out = bytearray(width + 8 * arity)
    for i, (value, t) in enumerate(zip(values, types, strict=True)):
        pos = width + 8 * i
        if value is None:
            bit = i + _HEADER_BITS
            out[bit >> 3] |= 1 << (bit & 7)
            if reserves_on_null(t):
                _PACK_Q.pack_into(out, pos, _append_var(out, b"", null_reservation(t)) << 32)
        else:
            try:
                _write_value(out, pos, value, t)
            except struct.error as e:
                raise SchemaMismatchError(f"value {value!r} does not fit {t}: {e}") from e
    return bytes(out)


def serialize_array(values: Sequence[Any], element_type: DataType) -> bytes:
    """Java's BinaryArray bytes; null elements set their bit and leave zero bytes."""
    n = len(values)
    header = array_header_size(n)
    size = element_size(element_type)
    out = bytearray(round_to_word(header + size * n))
    _PACK_i.pack_into(out, 0, n)
    for i, value in enumerate(values):
        if value is None:
            out[4 + (i >> 3)] |= 1 << (i & 7)
        else:
            try:
                _write_value(out, header + size * i, value, element_type)
            except struct.error as e:
                raise SchemaMismatchError(f"{value!r} does not fit {element_type}: {e}") from e
    return bytes(out)


def serialize_map(value: Any, key_type: DataType, value_type: DataType) -> bytes:
    """Java's BinaryMap bytes: key-array size, key BinaryArray, value BinaryArray."""
    pairs = list(value.items()) if isinstance(value, Mapping) else list(value)
    keys = serialize_array([k for k, _ in pairs], key_type)
    items = serialize_array([v for _, v in pairs], value_type)
    return _PACK_i.pack(len(keys)) + keys + items


def serialize_with_arity(values: Sequence[Any], types: Sequence[DataType]) -> bytes:
    """``[int32 BE arity][row bytes]``, Java's SerializationUtils.serializeBinaryRow."""
    return _PACK_BE_i.pack(len(types)) + serialize_row(values, types)


EMPTY_ROW: bytes = serialize_with_arity([], [])


# --- reading -----------------------------------------------------------------------------


def _var_span(data: Buffer, pos: int) -> tuple[int, int]:
    slot = _PACK_Q.unpack_from(data, pos)[0]
    return slot >> 32, slot & 0xFFFFFFFF


def _read_value(data: Buffer, base: int, pos: int, t: DataType) -> Any:
    """Read the non-null value in the slot at ``pos``; ``base`` starts its structure."""
    if isinstance(t, AtomicType):
        fmt = _FIXED_FORMATS.get(t.name)
        if fmt is None:
            raise UnsupportedTypeError(f"BinaryRow cannot decode type {t}")
        value = struct.unpack_from(fmt, data, pos)[0]
        if t.name == "DATE":
            return dt.date.fromordinal(_EPOCH_ORDINAL + value)
        return value
    if isinstance(t, CharType | BinaryType):
        slot = _PACK_Q.unpack_from(data, pos)[0]
        if slot >> 63:
            raw = bytes(data[pos : pos + ((slot >> 56) & 0x7F)])
        else:
            offset, length = slot >> 32, slot & 0xFFFFFFFF
            raw = bytes(data[base + offset : base + offset + length])
        return raw.decode("utf-8") if isinstance(t, CharType) else raw
    if isinstance(t, DecimalType):
        if t.precision <= MAX_COMPACT_DECIMAL_PRECISION:
            return unscaled_to_decimal(_PACK_q.unpack_from(data, pos)[0], t.scale)
        offset, length = _var_span(data, pos)
        raw = bytes(data[base + offset : base + offset + length])
        return unscaled_to_decimal(int.from_bytes(raw, "big", signed=True), t.scale)
    if isinstance(t, TimestampType):
        if t.precision <= MAX_COMPACT_TIMESTAMP_PRECISION:
            return parts_to_timestamp(_PACK_q.unpack_from(data, pos)[0], 0, t)
        offset, nano = _var_span(data, pos)
        return parts_to_timestamp(_PACK_q.unpack_from(data, base + offset)[0], nano, t)
    if isinstance(t, TimeType):
        return _millis_to_time(_PACK_i.unpack_from(data, pos)[0])
    offset, _ = _var_span(data, pos)
    start = base + offset
    if isinstance(t, ArrayType):
        return _read_array(data, start, t.element)
    if isinstance(t, MultisetType):
        return _read_map(data, start, t.element, _INT_TYPE)
    if isinstance(t, MapType):
        return _read_map(data, start, t.key, t.value)
    if isinstance(t, RowType):
        values = _read_row(data, start, [f.type for f in t.fields])
        return {f.name: v for f, v in zip(t.fields, values, strict=True)}
    raise UnsupportedTypeError(f"BinaryRow cannot decode type {t}")


def _read_row(data: Buffer, base: int, types: Sequence[DataType]) -> list[Any]:
    width = header_width(len(types))
    out: list[Any] = []
    for i, t in enumerate(types):
        bit = i + _HEADER_BITS
        if data[base + (bit >> 3)] & (1 << (bit & 7)):
            out.append(None)
        else:
            out.append(_read_value(data, base, base + width + 8 * i, t))
    return out


def _read_array(data: Buffer, base: int, element_type: DataType) -> list[Any]:
    n = _PACK_i.unpack_from(data, base)[0]
    header = array_header_size(n)
    size = element_size(element_type)
    out: list[Any] = []
    for i in range(n):
        if data[base + 4 + (i >> 3)] & (1 << (i & 7)):
            out.append(None)
        else:
            out.append(_read_value(data, base, base + header + size * i, element_type))
    return out


def _read_map(
    data: Buffer, base: int, key_type: DataType, value_type: DataType
) -> list[tuple[Any, Any]]:
    key_size = _PACK_i.unpack_from(data, base)[0]
    keys = _read_array(data, base + 4, key_type)
    values = _read_array(data, base + 4 + key_size, value_type)
    return list(zip(keys, values, strict=True))


def deserialize_row(data: Buffer, types: Sequence[DataType]) -> list[Any]:
    """Decode BinaryRow bytes (no arity prefix) into Python values, one per field."""
    return _read_row(data, 0, types)


def deserialize_array(data: Buffer, element_type: DataType) -> list[Any]:
    return _read_array(data, 0, element_type)


def deserialize_map(data: Buffer, key_type: DataType, value_type: DataType) -> list[Any]:
    return _read_map(data, 0, key_type, value_type)


def row_arity(data: Buffer) -> int:
    """The arity prefix of a SerializationUtils-serialized row."""
    return int(_PACK_BE_i.unpack_from(data, 0)[0])


def row_kind(data: Buffer) -> int:
    """RowKind byte of BinaryRow bytes: 0 +I, 1 -U, 2 +U, 3 -D."""
    return int(data[0])


def deserialize_with_arity(data: Buffer, types: Sequence[DataType]) -> list[Any]:
    """Inverse of :func:`serialize_with_arity`; checks the prefix against ``types``."""
    arity = row_arity(data)
    if arity != len(types):
        raise SchemaMismatchError(f"serialized row has arity {arity}, expected {len(types)}")
    return _read_row(memoryview(data)[4:], 0, types)


# --- typed helpers for metadata serializers (DataFileMeta, IndexFileMeta, stats) --------


def write_string_array(values: Sequence[str | None]) -> bytes:
    return serialize_array(values, _STRING_TYPE)


def read_string_array(data: Buffer) -> list[str | None]:
    return _read_array(data, 0, _STRING_TYPE)


def write_long_array(values: Sequence[int | None]) -> bytes:
    return serialize_array(values, _BIGINT_TYPE)


def read_long_array(data: Buffer) -> list[int | None]:
    return _read_array(data, 0, _BIGINT_TYPE)


def write_int_array(values: Sequence[int | None]) -> bytes:
    return serialize_array(values, _INT_TYPE)


def read_int_array(data: Buffer) -> list[int | None]:
    return _read_array(data, 0, _INT_TYPE)


def read_field(data: Buffer, types: Sequence[DataType], pos: int) -> Any:
    """Decode only field ``pos`` of BinaryRow bytes, e.g. one column of a stats row."""
    bit = pos + _HEADER_BITS
    if data[bit >> 3] & (1 << (bit & 7)):
        return None
    return _read_value(data, 0, header_width(len(types)) + 8 * pos, types[pos])
