"""Java's ``hashCode`` of Paimon's internal values: whole columns at once, or one value at a time.

The hashes are those of the objects Java puts in a ``HashMap``: the boxed ``Byte``, ``Short``,
``Integer``, ``Long``, ``Float`` (``floatToIntBits``), ``Double``, ``Boolean``, Paimon's
``BinaryString`` (MurmurHashUtils.hashBytes of the UTF-8 bytes, :mod:`spec.murmur`),
``Decimal`` (its ``BigDecimal``'s), ``Timestamp`` and ``BinaryRow``, and ``java.lang.String``.
:func:`hash_codes` hashes a column of keys of one kind (the file indexes' dictionaries);
:func:`key_and_hash` gives, per value of a Paimon type, a Python key with Java's ``equals`` and
the hash (the aggregate functions' per-element maps). :mod:`spec.java_hashmap` turns hash codes
into a ``HashMap``'s iteration order.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Hashable
from decimal import Context
from typing import Any

import numpy as np
import numpy.typing as npt

from paimon_pyspark.spec import binary_row, murmur
from paimon_pyspark.types.data_types import DataType, TimestampType, TimeType

# The classes of Java's boxed keys (BitmapTypeVisitor's visitByte ... visitBinaryString).
BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, BOOLEAN, STRING = (
    "byte",
    "short",
    "int",
    "long",
    "float",
    "double",
    "boolean",
    "string",
)
CANONICAL_NAN32 = 0x7FC00000
CANONICAL_NAN64 = 0x7FF8000000000000

_MASK = 0xFFFFFFFF
_EXACT = Context(prec=100)  # DECIMAL has at most 38 digits: no rounding
_CONSTRUCTED = ("ARRAY", "MAP", "MULTISET", "ROW", "VARIANT", "VECTOR", "BLOB")


# ---- columns --------------------------------------------------------------------------------


def hash_codes(kind: str, values: Any) -> npt.NDArray[np.int32]:
    """Java ``hashCode()`` of each key of ``kind``: ``values`` are int64 for the integer kinds,
    the canonical IEEE bits (uint32/uint64) for FLOAT/DOUBLE, bool, or an Arrow ``large_binary``
    array of UTF-8 bytes for STRING."""
    v = values
    if kind in (BYTE, SHORT, INT):
        return np.asarray(v, dtype=np.int64).astype(np.int32)
    if kind == LONG:
        u = np.asarray(v, dtype=np.int64).view(np.uint64)
        return (u ^ (u >> np.uint64(32))).astype(np.uint32).view(np.int32)
    if kind == FLOAT:
        return np.asarray(v, dtype=np.uint32).view(np.int32)
    if kind == DOUBLE:
        u = np.asarray(v, dtype=np.uint64)
        return (u ^ (u >> np.uint64(32))).astype(np.uint32).view(np.int32)
    if kind == BOOLEAN:
        return np.where(np.asarray(v, dtype=np.bool_), 1231, 1237).astype(np.int32)
    return murmur.hash_binary_column(v)


# ---- single values --------------------------------------------------------------------------


def _i32(x: int) -> int:
    x &= _MASK
    return x - (1 << 32) if x & 0x80000000 else x


def long_hash(v: int) -> int:
    """``Long.hashCode``."""
    u = v & 0xFFFFFFFFFFFFFFFF
    return _i32(u ^ (u >> 32))


def string_hash(s: str) -> int:
    """``java.lang.String.hashCode`` (over UTF-16 units), as an unsigned int."""
    raw = s.encode("utf-16-be")
    h = 0
    for (unit,) in struct.iter_unpack(">H", raw):
        h = (31 * h + unit) & _MASK
    return h


def big_decimal_hash(unscaled: int, scale: int) -> int:
    """``java.math.BigDecimal.hashCode``: ``31 * BigInteger.hashCode(unscaled) + scale``, the
    BigInteger's over its magnitude's 32-bit words (a compact value's formula is the same)."""
    mag = abs(unscaled)
    h = 0
    for shift in range(32 * ((mag.bit_length() + 31) // 32) - 32, -1, -32):
        h = (31 * h + ((mag >> shift) & _MASK)) & _MASK
    if unscaled < 0:
        h = -h & _MASK
    return _i32(31 * h + scale)


def big_decimal_hash_codes(
    unscaled: npt.NDArray[np.int64], scale: npt.NDArray[np.int64]
) -> npt.NDArray[np.int32]:
    """:func:`big_decimal_hash` of unscaled values that fit a long, vectorized."""
    low32 = np.uint64(_MASK)
    magnitude = np.abs(unscaled).view(np.uint64)  # Long.MIN_VALUE's magnitude stays 2**63
    big = ((magnitude >> np.uint64(32)) * np.uint64(31) + (magnitude & low32)) & low32
    signed = np.where(unscaled < 0, (np.uint64(0) - big) & low32, big)
    out = (signed * np.uint64(31) + np.asarray(scale, np.int64).view(np.uint64)) & low32
    return out.astype(np.uint32).view(np.int32)


class _Identity:
    """A key equal only to itself (Java's ``byte[]``)."""

    __slots__ = ()


def key_and_hash(t: DataType) -> Callable[[Any], tuple[Hashable, int]] | None:
    """For values of type ``t`` (as pyarrow's ``as_py`` gives them) a function giving a Python
    key with Java's ``equals`` (ordered like Java's ``compareTo`` where Java's key has one) and
    Java's ``hashCode``; None for constructed types. ``byte[]`` (BINARY) compares by identity
    in Java: every such value is a key of its own."""
    root = t.root
    if root in _CONSTRUCTED:
        return None
    of = _HASHES.get(root)

    def typed(v: Any) -> tuple[Hashable, int]:
        if isinstance(t, TimeType):
            return _int_key(binary_row.time_to_millis(v, t))
        if isinstance(t, TimestampType):
            return _timestamp_key(binary_row.timestamp_to_parts(v, t))
        if root == "DECIMAL":
            scale = getattr(t, "scale", 0)
            unscaled = int(v.scaleb(scale, _EXACT).to_integral_value(context=_EXACT))
            return v, big_decimal_hash(unscaled, scale)
        return _Identity(), 0  # BINARY / VARBINARY: identity

    known = of if of is not None else typed

    def with_null(v: Any) -> tuple[Hashable, int]:
        return (None, 0) if v is None else known(v)

    return with_null


def _int_key(v: int) -> tuple[Hashable, int]:
    return v, _i32(v)


def _timestamp_key(parts: tuple[int, int]) -> tuple[Hashable, int]:
    millis, nano = parts
    return parts, _i32(31 * _i32(millis ^ (millis >> 32)) + nano)


def _float_key(v: float) -> tuple[Hashable, int]:
    bits = struct.unpack("<I", struct.pack("<f", v))[0] if v == v else CANONICAL_NAN32
    signed = bits - (1 << 32) if bits & 0x80000000 else bits
    # Keyed by the bits (Float.equals), ordered like Float.compare.
    return ("f", signed ^ 0x7FFFFFFF if signed < 0 else signed), _i32(bits)


def _double_key(v: float) -> tuple[Hashable, int]:
    bits = struct.unpack("<Q", struct.pack("<d", v))[0] if v == v else CANONICAL_NAN64
    signed = bits - (1 << 64) if bits >> 63 else bits
    return ("d", signed ^ 0x7FFFFFFFFFFFFFFF if signed < 0 else signed), long_hash(bits)


@functools.lru_cache(maxsize=1 << 16)
def _string_key(v: str) -> tuple[Hashable, int]:
    return v, murmur.hash_unaligned(v.encode("utf-8"))


_HASHES: dict[str, Callable[[Any], tuple[Hashable, int]]] = {
    "BOOLEAN": lambda v: (v, 1231 if v else 1237),
    "TINYINT": _int_key,
    "SMALLINT": _int_key,
    "INT": _int_key,
    "INTEGER": _int_key,
    "BIGINT": lambda v: (v, long_hash(v)),
    "FLOAT": _float_key,
    "DOUBLE": _double_key,
    "CHAR": _string_key,
    "VARCHAR": _string_key,
    "STRING": _string_key,
    "DATE": lambda v: _int_key(binary_row.date_to_days(v)),
}
