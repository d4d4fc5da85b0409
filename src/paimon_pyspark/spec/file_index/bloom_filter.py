"""The ``bloom-filter`` file index: one BloomFilter64 per column and data file.

Mirrors org.apache.paimon.fileindex.bloomfilter.{BloomFilterFileIndex, FastHash} and
org.apache.paimon.utils.BloomFilter64. Options ``items`` (default 1,000,000) and ``fpp``
(default 0.1) size the filter; nulls are not added. A value's 64-bit hash is Thomas Wang's
integer hash of its long form for numbers, dates, times and timestamps (floats by their IEEE
bits, NaN canonical; timestamps as millis up to precision 3, else micros), and XXH64 (seed 0, the
``xxhash`` package: Java's ``LongHashFunction.xx()``) of the bytes of strings and binaries.
Boolean, decimal and nested types have no hash in Java; asking for one raises.

Bytes: a big-endian int of the number of hash functions, then the bit set, bit ``i`` in byte
``i >> 3`` at ``1 << (i & 7)``. Every step below is vectorized over a column's values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.spec.file_index.api import EQUAL, IN
from paimon_pyspark.spec.file_index.java_keys import PER_SECOND, rescale
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import DataType, TimestampType, TimeType

DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1
ITEMS = "items"
FPP = "fpp"

_INTEGRAL = ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE")
_BYTES = ("CHAR", "VARCHAR", "BINARY", "VARBINARY")


def supports(data_type: DataType) -> bool:
    """Whether Java's FastHash hashes values of ``data_type``."""
    root = data_type.root
    return (
        root in _INTEGRAL
        or root in _BYTES
        or root in ("FLOAT", "DOUBLE", "TIME")
        or (isinstance(data_type, TimestampType))
    )


def long_hash(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Thomas Wang's 64-bit integer hash (FastHash.getLongHash), over int64 arrays (wrapping,
    arithmetic right shifts, as Java's long)."""
    k = keys.astype(np.int64, copy=True)
    with np.errstate(over="ignore"):
        k = (~k) + (k << 21)
        k = k ^ (k >> 24)
        k = (k + (k << 3)) + (k << 8)
        k = k ^ (k >> 14)
        k = (k + (k << 2)) + (k << 4)
        k = k ^ (k >> 28)
        k = k + (k << 31)
    return np.asarray(k, np.int64)


def hash_values(data_type: DataType, values: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.int64]:
    """Java's FastHash of each non-null value of ``values`` (a column of ``data_type``)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    values = values.drop_null()
    root = data_type.root
    if len(values) == 0:
        return np.zeros(0, np.int64)
    if root in _BYTES:
        if not (pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)):
            values = values.cast(pa.large_string()).cast(pa.large_binary())
        unique = pc.unique(values).to_pylist()
        digests = map(xxhash.xxh64_intdigest, unique)
        return np.fromiter(digests, np.uint64, len(unique)).view(np.int64)
    if root in _INTEGRAL:
        longs = _raw_ints(values)
    elif root == "FLOAT":
        f = np.asarray(values.to_numpy(zero_copy_only=False), np.float32)
        bits = f.view(np.int32).copy()
        bits[np.isnan(f)] = 0x7FC00000
        longs = bits.astype(np.int64)
    elif root == "DOUBLE":
        d = np.asarray(values.to_numpy(zero_copy_only=False), np.float64)
        lbits = d.view(np.int64).copy()
        lbits[np.isnan(d)] = 0x7FF8000000000000
        longs = lbits
    elif isinstance(data_type, TimeType):
        # Java's TIME is an int of millis of the day, whatever the precision
        longs = _in_unit(values, "ms")
    elif isinstance(data_type, TimestampType):
        longs = _in_unit(values, "ms" if data_type.precision <= 3 else "us")
    else:
        raise UnsupportedOptionError(
            f"the bloom-filter file index does not support type {data_type.sql()}"
        )
    return long_hash(longs)


def _raw_ints(values: pa.Array) -> npt.NDArray[np.int64]:
    """The integers under integer, date, time or timestamp values, as int64."""
    if pa.types.is_date32(values.type) or pa.types.is_time32(values.type):
        values = values.cast(pa.int32())
    return np.asarray(values.cast(pa.int64()).to_numpy(zero_copy_only=False), np.int64)


def _in_unit(values: pa.Array, unit: str) -> npt.NDArray[np.int64]:
    """Temporal values as int64 counts of ``unit``, floored as Java's Timestamp converts."""
    return rescale(_raw_ints(values), PER_SECOND[values.type.unit], PER_SECOND[unit])


def _positions(
    hashes: npt.NDArray[np.int64], num_hash_functions: int, num_bits: int
) -> list[npt.NDArray[np.int64]]:
    """The bit positions BloomFilter64 sets or tests for each hash, one array per function."""
    hash1 = hashes.astype(np.int32).astype(np.int64)
    hash2 = (hashes.view(np.uint64) >> np.uint64(32)).astype(np.uint32).view(np.int32)
    hash2 = hash2.astype(np.int64)
    out = []
    for i in range(1, num_hash_functions + 1):
        combined = (hash1 + i * hash2).astype(np.int32)
        positive = np.where(combined < 0, ~combined, combined).astype(np.int64)
        out.append(np.asarray(positive % num_bits, np.int64))
    return out


def _option(options: Mapping[str, str], key: str) -> str | None:
    value = options.get(key)
    return None if value is None else value.strip()


def filter_size(items: int, fpp: float) -> tuple[int, int]:
    """BloomFilter64(items, fpp): (number of bits, number of hash functions)."""
    nb = int(-items * math.log(fpp) / (math.log(2) * math.log(2)))
    nb = min(2**31 - 1, nb)  # Java's (int) cast of a double saturates
    num_bits = nb + (8 - nb % 8)  # Java pads a multiple of 8 by a whole byte too
    k = max(1, math.floor(num_bits / items * math.log(2) + 0.5))  # Math.round
    return num_bits, k


class BloomFilterWriter:
    """Java's BloomFilterFileIndex.Writer: nulls skipped, every other value's hash added."""

    def __init__(self, data_type: DataType, items: int, fpp: float) -> None:
        if not supports(data_type):
            raise UnsupportedOptionError(
                f"the bloom-filter file index does not support type {data_type.sql()}"
            )
        self.data_type = data_type
        self.num_bits, self.num_hash_functions = filter_size(items, fpp)
        # packed as Java's BitSet is (8 bits a byte): many files may be open at once
        self.bits = np.zeros(self.num_bits // 8, np.uint8)

    def write(self, values: pa.Array) -> None:
        hashes = hash_values(self.data_type, values)
        for pos in _positions(hashes, self.num_hash_functions, self.num_bits):
            if len(pos):
                np.bitwise_or.at(self.bits, pos >> 3, np.left_shift(1, pos & 7).astype(np.uint8))

    def serialize(self) -> bytes:
        return self.num_hash_functions.to_bytes(4, "big", signed=True) + self.bits.tobytes()


class BloomFilterReader:
    """Java's BloomFilterFileIndex.Reader: answers equality and IN; every other test keeps."""

    def __init__(self, data_type: DataType, data: bytes) -> None:
        if len(data) < 5:
            raise ValueError(f"a bloom filter index of {len(data)} bytes")
        b = np.frombuffer(data[:4], np.int8).astype(np.int64)
        # Java adds the signed bytes (not an unsigned big-endian read)
        self.num_hash_functions = int((b[0] << 24) + (b[1] << 16) + (b[2] << 8) + b[3])
        self.data_type = data_type
        self.bits = np.frombuffer(data, np.uint8, offset=4)  # packed: tested in place
        self.num_bits = len(self.bits) * 8

    def _any(self, literals: Sequence[Any]) -> bool:
        if any(x is None for x in literals) or not literals:
            return True
        if not supports(self.data_type):
            return True
        array = pa.array(list(literals), to_arrow_type(self.data_type))
        hashes = hash_values(self.data_type, array)
        found = np.ones(len(hashes), np.bool_)
        for pos in _positions(hashes, self.num_hash_functions, self.num_bits):
            found &= (self.bits[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1 == 1
        return bool(found.any())

    def may_match(self, operation: str, literals: Sequence[Any]) -> bool:
        if operation in (EQUAL, IN):
            return self._any(literals)
        return True


def _parse_items(options: Mapping[str, str]) -> int:
    raw = _option(options, ITEMS)
    if raw is None:
        return DEFAULT_ITEMS
    try:
        items = int(raw)
    except ValueError:
        raise OptionError(f"bloom-filter option 'items' = '{raw}' is not an int") from None
    if not 0 < items < 2**31:
        raise OptionError(f"bloom-filter option 'items' = '{raw}' must be a positive int")
    return items


def _parse_fpp(options: Mapping[str, str]) -> float:
    raw = _option(options, FPP)
    if raw is None:
        return DEFAULT_FPP
    try:
        fpp = float(raw)
    except ValueError:
        raise OptionError(f"bloom-filter option 'fpp' = '{raw}' is not a number") from None
    if not 0 < fpp < 1:
        raise OptionError(f"bloom-filter option 'fpp' = '{raw}' must lie between 0 and 1")
    return fpp


def create_writer(data_type: DataType, options: Mapping[str, str]) -> BloomFilterWriter:
    return BloomFilterWriter(data_type, _parse_items(options), _parse_fpp(options))


def create_reader(data_type: DataType, data: bytes) -> BloomFilterReader:
    return BloomFilterReader(data_type, data)
