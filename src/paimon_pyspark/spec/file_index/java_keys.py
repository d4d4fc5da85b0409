"""The Java values the bitmap-family file indexes key on, from Arrow columns, vectorized.

Java's BitmapFileIndex, BitSliceIndexBitmapFileIndex and RangeBitmapFileIndex turn each internal
value into a key: BinaryString for CHAR/VARCHAR, the boxed number for the integer and floating
types, an int for DATE and TIME (days, millis of the day), a long for TIMESTAMP (millis up to
precision 3, else micros: ``Timestamp.getMillisecond``/``toMicros``) and for DECIMAL
(``Decimal.toUnscaledLong``). Here a column becomes a :class:`Keys`: one numpy array (or, for
strings, an Arrow binary array) plus a validity mask, and the Java ``compareTo`` of those keys
is computed over whole arrays (their ``hashCode``: :func:`spec.java_hash.hash_codes`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pyroaring import BitMap

from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.spec.file_index.api import BETWEEN, GREATER_OR_EQUAL, LESS_OR_EQUAL
from paimon_pyspark.spec.java_hash import (
    BOOLEAN,
    BYTE,
    CANONICAL_NAN32,
    CANONICAL_NAN64,
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    SHORT,
    STRING,
)
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import (
    AtomicType,
    CharType,
    DataType,
    DecimalType,
    TimestampType,
    TimeType,
)

FIXED_SIZE = {BYTE: 1, SHORT: 2, INT: 4, LONG: 8, FLOAT: 4, DOUBLE: 8, BOOLEAN: 1}
BIG_ENDIAN = {BYTE: ">i1", SHORT: ">i2", INT: ">i4", LONG: ">i8", FLOAT: ">u4", DOUBLE: ">u8"}
_ATOMIC_KINDS = {
    "BOOLEAN": BOOLEAN,
    "TINYINT": BYTE,
    "SMALLINT": SHORT,
    "INT": INT,
    "BIGINT": LONG,
    "FLOAT": FLOAT,
    "DOUBLE": DOUBLE,
    "DATE": INT,
}


@dataclass
class Keys:
    """A column's Java keys: ``values`` (int64 for integer kinds, the IEEE bits as uint32/uint64
    for FLOAT/DOUBLE with NaN canonical as ``floatToIntBits``, bool, or an Arrow binary array of
    UTF-8 bytes) and ``valid`` (False where the row is null; those values are meaningless)."""

    kind: str
    values: Any
    valid: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.valid)


def unsupported(index: str, data_type: DataType) -> UnsupportedOptionError:
    return UnsupportedOptionError(
        f"file index '{index}' does not support column type {data_type} (Java 1.4.2 refuses it)"
    )


def key_kind(data_type: DataType) -> str | None:
    """The Java key kind of a type as Java's BitmapTypeVisitor maps it, or None if unsupported
    there (BINARY, DECIMAL, nested types, VARIANT, BLOB)."""
    if isinstance(data_type, CharType):
        return STRING
    if isinstance(data_type, AtomicType):
        return _ATOMIC_KINDS.get(data_type.name)
    if isinstance(data_type, TimeType):
        return INT
    if isinstance(data_type, TimestampType):
        return LONG
    return None


def to_keys(data_type: DataType, kind: str, column: pa.Array | pa.ChunkedArray) -> Keys:
    """The Java keys of ``column`` (values of ``data_type``), as ``kind``."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    valid = (
        np.ones(len(arr), dtype=np.bool_)
        if arr.null_count == 0
        else np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)
    )
    if kind == STRING:
        binary = arr.cast(pa.large_binary())
        return Keys(kind, binary, valid)
    if kind == BOOLEAN:
        values = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=np.bool_)
        return Keys(kind, values, valid)
    if kind in (FLOAT, DOUBLE):
        f = np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False))
        if kind == FLOAT:
            bits32 = f.astype(np.float32).view(np.uint32).copy()
            bits32[np.isnan(f)] = CANONICAL_NAN32
            return Keys(kind, bits32, valid)
        bits64 = f.astype(np.float64).view(np.uint64).copy()
        bits64[np.isnan(f)] = CANONICAL_NAN64
        return Keys(kind, bits64, valid)
    return Keys(kind, _integers(data_type, arr), valid)


def _integers(data_type: DataType, arr: pa.Array) -> npt.NDArray[np.int64]:
    t = arr.type
    if pa.types.is_decimal(t):
        return _unscaled_longs(arr)
    if pa.types.is_timestamp(t):
        raw = _raw_int64(arr)
        precision = data_type.precision if isinstance(data_type, TimestampType) else 6
        target = 1_000 if precision <= 3 else 1_000_000
        return rescale(raw, PER_SECOND[t.unit], target)
    if pa.types.is_time(t):
        return rescale(_raw_int64(arr), PER_SECOND[t.unit], 1_000)
    if pa.types.is_date64(t):
        return np.floor_divide(_raw_int64(arr), 86_400_000)
    return _raw_int64(arr)


PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
"""Arrow's time units in counts per second."""


def rescale(raw: npt.NDArray[np.int64], have: int, want: int) -> npt.NDArray[np.int64]:
    """Java's floor conversions (Timestamp.fromMicros / toMicros / getMillisecond)."""
    if have == want:
        return raw
    if have > want:
        return np.floor_divide(raw, have // want)
    return raw * (want // have)


def _raw_int64(arr: pa.Array) -> npt.NDArray[np.int64]:
    t = arr.type
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        arr = arr.view(pa.int32())
    elif pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_date64(t):
        arr = arr.view(pa.int64())
    filled = arr.fill_null(0) if arr.null_count else arr
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.int64)


def _unscaled_longs(arr: pa.Array) -> npt.NDArray[np.int64]:
    """``Decimal.toUnscaledLong``: the low 64 bits of the two's-complement unscaled value."""
    if pa.types.is_decimal256(arr.type):
        arr = arr.cast(pa.decimal128(38, arr.type.scale))
    buf = arr.buffers()[1]
    words = np.frombuffer(buf, dtype="<i8") if buf is not None else np.zeros(0, np.int64)
    pairs = words.reshape(-1, 2)[arr.offset : arr.offset + len(arr)]
    low = pairs[:, 0].astype(np.int64)
    if arr.null_count:
        low = np.where(np.asarray(arr.is_valid().to_numpy(zero_copy_only=False)), low, 0)
        high = np.where(np.asarray(arr.is_valid().to_numpy(zero_copy_only=False)), pairs[:, 1], 0)
    else:
        high = pairs[:, 1]
    if bool(np.any(high != (low >> 63))):
        raise UnsupportedOptionError(
            f"a {arr.type} value does not fit a Java long; Java's Decimal.toUnscaledLong fails"
        )
    return low


def literal_keys(data_type: DataType, kind: str, literals: list[Any]) -> Keys | None:
    """Keys of predicate literals (Python values as the column's Arrow type gives them); None
    when a literal does not fit the column's type (the caller keeps the file)."""
    try:
        arr = pa.array(literals, type=to_arrow_type(data_type))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return None
    return to_keys(data_type, kind, arr)


# ---- Java compareTo over keys ----------------------------------------------------------------


def sort_keys(keys: Keys) -> Any:
    """Per-key values whose natural order is Java's ``compareTo`` order (Float.compare puts
    -0.0 before 0.0 and NaN last; BinaryString compares unsigned bytes, then length): a numpy
    array for fixed kinds, a list of ``bytes`` for strings."""
    kind, v = keys.kind, keys.values
    if kind == FLOAT:
        b = np.asarray(v, dtype=np.uint32).view(np.int32).astype(np.int64)
        return np.where(b < 0, b ^ 0x7FFFFFFF, b)
    if kind == DOUBLE:
        b64 = np.asarray(v, dtype=np.uint64).view(np.int64)
        return np.where(b64 < 0, b64 ^ np.int64(0x7FFFFFFFFFFFFFFF), b64)
    if kind == BOOLEAN:
        return np.asarray(v, dtype=np.int64)
    if kind == STRING:
        return v.to_pylist()
    return np.asarray(v, dtype=np.int64)


def serialize_fixed(kind: str, values: npt.NDArray[Any]) -> bytes:
    """Big-endian bytes of fixed-size keys, back to back (Java's DataOutput/ByteBuffer)."""
    if kind == BOOLEAN:
        return np.asarray(values, dtype=np.uint8).tobytes()
    return np.asarray(values).astype(BIG_ENDIAN[kind]).tobytes()


def decode_fixed(kind: str, data: bytes, count: int) -> npt.NDArray[Any]:
    """The keys :func:`serialize_fixed` wrote (bits for FLOAT/DOUBLE, as :class:`Keys`)."""
    if kind == BOOLEAN:
        return np.asarray(np.frombuffer(data, dtype=np.uint8, count=count) != 0, dtype=np.bool_)
    dtype = BIG_ENDIAN[kind]
    out = np.frombuffer(data, dtype=dtype, count=count)
    if kind == FLOAT:
        bits = out.astype(np.uint32)
        nan = (bits & 0x7F800000 == 0x7F800000) & (bits & 0x7FFFFF != 0)
        return np.where(nan, np.uint32(CANONICAL_NAN32), bits)
    if kind == DOUBLE:
        bits64 = out.astype(np.uint64)
        exp = np.uint64(0x7FF0000000000000)
        nan = ((bits64 & exp) == exp) & ((bits64 & np.uint64(0xFFFFFFFFFFFFF)) != 0)
        return np.where(nan, np.uint64(CANONICAL_NAN64), bits64)
    return out.astype(np.int64)


class RowsReader:
    """The part the readers that find matching rows share (bsi, range-bitmap): a file may
    match when ``result`` (the rows matching, None: cannot tell) is not empty; BETWEEN is the
    rows of both its bounds."""

    def result(self, operation: str, literals: Sequence[Any]) -> BitMap | None:
        raise NotImplementedError

    def may_match(self, operation: str, literals: Sequence[Any]) -> bool:
        if operation == BETWEEN:
            if len(literals) != 2:
                return True
            low = self.result(GREATER_OR_EQUAL, literals[:1])
            high = self.result(LESS_OR_EQUAL, literals[1:])
            return low is None or high is None or len(low & high) > 0
        found = self.result(operation, literals)
        return found is None or len(found) > 0


class ColumnWriter:
    """The part every codec's writer shares: ``write`` keeps the pieces of the column (Java's
    writers take one value at a time; ours build the whole index in ``serialize``), and
    ``column`` gives them as one array (an empty one of the column's type before any write)."""

    def __init__(self, data_type: DataType) -> None:
        self._type = data_type
        self._chunks: list[pa.Array] = []

    def write(self, values: pa.Array) -> None:
        if isinstance(values, pa.ChunkedArray):
            self._chunks.extend(values.chunks)
        else:
            self._chunks.append(values)

    def column(self) -> pa.Array:
        if not self._chunks:
            return pa.array([], type=to_arrow_type(self._type))
        return pa.concat_arrays(self._chunks)


# ---- Java's integer option parsing ---------------------------------------------------------


def java_int(text: str, where: str) -> int:
    """An int option as Java's ``Options.getInteger`` reads it (``Integer.parseInt``, trimmed)."""
    s = text.strip()
    if not re.fullmatch(r"[+-]?\d+", s) or not -(1 << 31) <= int(s) < 1 << 31:
        raise OptionError(f"{where} = '{text}' is not an integer")
    return int(s)


def check_decimal(index: str, data_type: DataType) -> None:
    if isinstance(data_type, DecimalType) and data_type.precision > 18:
        raise unsupported(index, data_type)
