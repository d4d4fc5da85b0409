"""The non-default bucket functions of ``bucket-function.type``: ``mod`` and ``hive``.

Mirrors org.apache.paimon.bucket.ModBucketFunction and HiveBucketFunction (with HiveHasher).
Java applies them wherever a fixed bucket is chosen from a bucket key (FixedBucketRowKeyExtractor,
the postpone batch writers and the postpone compaction's rescale); dynamic, cross-partition and
unaware tables never call a bucket function, so there the option changes nothing, in Java as
here. ``default`` (the BinaryRow murmur hash) lives in bucket/fixed.py.

Both are computed for all rows at once on the Arrow buffers:

* ``mod``: ``Math.floorMod(key, n)`` of the one INT or BIGINT key (a null reads as 0, the
  zeroed slot Java's BinaryRow holds for it). Java checks the key's arity and type when the
  writer is built; so do we, raising :class:`OptionError`.
* ``hive``: Hive's ``31 * h + hash(field)`` over the key fields (null: 0), then
  ``(h & Integer.MAX_VALUE) % n``. Field hashes: ints as themselves, longs as Long.hashCode,
  floats and doubles by their canonical bits (0 for either zero), strings and binaries as
  Java's ``31 * h + byte`` over their signed bytes, decimals as BigDecimal.hashCode of the value
  with trailing zeros stripped (never below scale 0). Java throws for any other type (a
  timestamp, a nested type) when the first non-null value is hashed; we refuse the key types
  when the writer is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.errors import OptionError
from paimon_pyspark.spec.java_hash import LONG, big_decimal_hash, big_decimal_hash_codes, hash_codes
from paimon_pyspark.types.arrow import one_array
from paimon_pyspark.types.data_types import (
    AtomicType,
    BinaryType,
    CharType,
    DataType,
    DecimalType,
    TimeType,
)

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
Column: TypeAlias = pa.Array | pa.ChunkedArray

BUCKET_FUNCTION_TYPE = "bucket-function.type"
DEFAULT, MOD, HIVE = "default", "mod", "hive"
BUCKET_FUNCTIONS = (DEFAULT, MOD, HIVE)
_MASK32 = np.uint64(0xFFFFFFFF)
_INT_ROOTS = {"TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(), "DATE": pa.int32()}
# BigDecimal compacts unscaled values of up to 18 digits into a long; so do we (numpy int64).
_COMPACT_DIGITS = 18


def _where(table: str) -> str:
    return f"Table '{table}': " if table else ""


def _int32(values: U64) -> I32:
    """The low 32 bits of each value as a Java int."""
    return (values & _MASK32).astype(np.uint32).view(np.int32)


def _filled_int64(arr: pa.Array) -> I64:
    out: I64 = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    return out


class ModBucketFunction:
    """``Math.floorMod(key, n)`` of a single INT or BIGINT bucket key."""

    name = MOD

    def __init__(self, types: Sequence[DataType], table: str = "") -> None:
        if len(types) != 1:
            raise OptionError(
                f"{_where(table)}'{BUCKET_FUNCTION_TYPE}' = 'mod' needs a bucket key of exactly "
                f"one field, not {len(types)} (as Java's ModBucketFunction)."
            )
        t = types[0]
        if not (isinstance(t, AtomicType) and t.name in ("INT", "BIGINT")):
            raise OptionError(
                f"{_where(table)}'{BUCKET_FUNCTION_TYPE}' = 'mod' needs an INT or BIGINT bucket "
                f"key, not {t} (as Java's ModBucketFunction)."
            )

    def keys(self, columns: Sequence[Column]) -> I64:
        return _filled_int64(one_array(columns[0]))

    @staticmethod
    def buckets(keys: I64, num_buckets: int | I64) -> I32:
        return np.mod(keys, num_buckets).astype(np.int32)


class HiveBucketFunction:
    """Hive's bucket hash of the bucket key (HiveBucketFunction)."""

    name = HIVE

    def __init__(self, types: Sequence[DataType], table: str = "") -> None:
        for t in types:
            if not _hive_hashable(t):
                raise OptionError(
                    f"{_where(table)}'{BUCKET_FUNCTION_TYPE}' = 'hive' cannot hash a bucket key "
                    f"of type {t} (Java's HiveBucketFunction takes booleans, integers, floats, "
                    "decimals, dates, times, strings and binaries)."
                )
        self.types = list(types)

    def keys(self, columns: Sequence[Column]) -> I64:
        """``h & Integer.MAX_VALUE`` of every row's combined field hash."""
        n = len(one_array(columns[0])) if columns else 0
        h = np.zeros(n, np.uint64)
        for column, t in zip(columns, self.types, strict=True):
            arr = one_array(column)
            field = _field_hash(arr, t)
            if arr.null_count:
                field = field.copy()
                field[arr.is_null().to_numpy(zero_copy_only=False)] = 0
            h = (h * np.uint64(31) + field) & _MASK32
        return (h & np.uint64(0x7FFFFFFF)).astype(np.int64)

    @staticmethod
    def buckets(keys: I64, num_buckets: int | I64) -> I32:
        return np.mod(keys, num_buckets).astype(np.int32)


def _hive_hashable(t: DataType) -> bool:
    if isinstance(t, CharType | BinaryType | DecimalType | TimeType):
        return True
    return isinstance(t, AtomicType) and t.name in (
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INT",
        "DATE",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
    )


def _field_hash(arr: pa.Array, t: DataType) -> U64:
    """HiveHasher's hash of each value as an unsigned 32-bit word (nulls not yet zeroed)."""
    if isinstance(t, CharType | BinaryType):
        return _bytes_hash(arr)
    if isinstance(t, DecimalType):
        return _decimal_hash(arr, t)
    if isinstance(t, TimeType):
        millis = arr.cast(pa.time32("ms")).view(pa.int32())  # Java's TIME: millis of the day
        return _filled_int64(millis).view(np.uint64)
    name = t.name if isinstance(t, AtomicType) else ""
    if name == "BOOLEAN":
        flags: U64 = pc.fill_null(arr, False).to_numpy(zero_copy_only=False).astype(np.uint64)
        return flags
    if name in _INT_ROOTS:
        if pa.types.is_date(arr.type):
            arr = arr.view(pa.int32())
        return _filled_int64(arr.cast(_INT_ROOTS[name])).view(np.uint64)
    if name == "BIGINT":
        return _long_hash(_filled_int64(arr).view(np.uint64))
    if name == "FLOAT":
        values = pc.fill_null(arr.cast(pa.float32()), 0.0).to_numpy(zero_copy_only=False)
        bits: U64 = values.view(np.uint32).astype(np.uint64)
        bits[np.isnan(values)] = 0x7FC00000  # Float.floatToIntBits' one NaN
        bits[values == 0] = 0  # -0.0f == 0.0f, so both hash as 0
        return bits
    if name == "DOUBLE":
        doubles = pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
        long_bits = doubles.view(np.uint64).copy()
        long_bits[np.isnan(doubles)] = 0x7FF8000000000000  # Double.doubleToLongBits' NaN
        long_bits[doubles == 0] = 0
        return _long_hash(long_bits)
    raise OptionError(f"'{BUCKET_FUNCTION_TYPE}' = 'hive' cannot hash type {t}")


def _long_hash(bits: U64) -> U64:
    """Long.hashCode, as an unsigned word."""
    return _unsigned(hash_codes(LONG, bits.view(np.int64)))


def _unsigned(hashes: npt.NDArray[np.int32]) -> U64:
    return hashes.view(np.uint32).astype(np.uint64)


def _pow31(exponents: I64) -> U64:
    """``31 ** e`` modulo 2**32 for each exponent, by squaring (vectorized)."""
    result = np.ones(len(exponents), np.uint64)
    base = np.uint64(31)
    e = exponents.copy()
    while e.size and bool((e > 0).any()):
        odd = (e & 1).astype(bool)
        result[odd] = (result[odd] * base) & _MASK32
        base = np.uint64((int(base) * int(base)) & 0xFFFFFFFF)
        e >>= 1
    return result


def _bytes_hash(arr: pa.Array) -> U64:
    """``h = 31 * h + b`` over each value's signed bytes (HiveHasher.hashBytes): the sum of
    ``b_i * 31 ** (len - 1 - i)`` modulo 2**32, built from prefix sums of the data buffer."""
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        arr = arr.view(pa.large_binary())
    elif pa.types.is_string(arr.type) or pa.types.is_binary(arr.type):
        arr = arr.view(pa.binary())
    else:
        arr = arr.cast(pa.binary())
    n = len(arr)
    large = pa.types.is_large_binary(arr.type)
    offsets_buf = arr.buffers()[1]
    offsets = np.frombuffer(offsets_buf, np.int64 if large else np.int32, count=arr.offset + n + 1)[
        arr.offset :
    ].astype(np.int64)
    data_buf = arr.buffers()[2]
    if n == 0 or data_buf is None or offsets[-1] == offsets[0]:
        return np.zeros(n, np.uint64)
    first, last = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(data_buf, np.int8, count=last)[first:]
    lengths = np.diff(offsets)
    ends = np.repeat(offsets[1:] - first, lengths)
    position = np.arange(last - first, dtype=np.int64)
    power = _pow31(np.arange(int(lengths.max()) if n else 0, dtype=np.int64))
    terms = (data.astype(np.int64).view(np.uint64) & _MASK32) * power[ends - 1 - position]
    sums = np.concatenate([np.zeros(1, np.uint64), np.cumsum(terms & _MASK32, dtype=np.uint64)])
    out: U64 = (sums[offsets[1:] - first] - sums[offsets[:-1] - first]) & _MASK32
    return out


def _decimal_hash(arr: pa.Array, t: DecimalType) -> U64:
    """BigDecimal.hashCode of HiveHasher.normalizeDecimal: trailing zeros stripped while the
    scale is positive, then ``31 * BigInteger.hashCode(unscaled) + scale``."""
    n = len(arr)
    if t.precision > _COMPACT_DIGITS:
        return np.array([_decimal_hash_one(v) for v in arr.to_pylist()], np.uint64)
    if not pa.types.is_decimal(arr.type):
        arr = arr.cast(pa.decimal128(t.precision, t.scale))
    words = np.frombuffer(arr.buffers()[1], np.int64, count=2 * (arr.offset + n))
    unscaled = words[2 * arr.offset :: 2].copy()
    if arr.null_count:
        unscaled[arr.is_null().to_numpy(zero_copy_only=False)] = 0
    scale = np.full(n, t.scale, np.int64)
    for _ in range(t.scale):
        strip = (scale > 0) & (unscaled % 10 == 0)
        if not strip.any():
            break
        unscaled[strip] //= 10
        scale[strip] -= 1
    scale[unscaled == 0] = 0
    return _unsigned(big_decimal_hash_codes(unscaled, scale))


def _decimal_hash_one(value: Decimal | None) -> int:
    """The same for one wide decimal (BigInteger words of up to 128 bits)."""
    if value is None:
        return 0
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    scale = -int(exponent)
    while scale > 0 and unscaled and unscaled % 10 == 0:
        unscaled //= 10
        scale -= 1
    if scale < 0:
        unscaled, scale = unscaled * 10**-scale, 0
    if unscaled == 0:
        scale = 0
    return big_decimal_hash(-unscaled if sign else unscaled, scale) & 0xFFFFFFFF


def bucket_function_type(raw: str | None, table: str = "") -> str:
    """The option's value as Java's enum reads it (any case); OptionError for another word."""
    value = (raw or DEFAULT).strip().lower()
    if value not in BUCKET_FUNCTIONS:
        raise OptionError(
            f"{_where(table)}option '{BUCKET_FUNCTION_TYPE}' = '{raw}' must be one of "
            f"{', '.join(BUCKET_FUNCTIONS)}."
        )
    return value


def new_bucket_function(
    name: str, types: Sequence[DataType], table: str = ""
) -> ModBucketFunction | HiveBucketFunction:
    """The ``mod`` or ``hive`` function of a bucket key of ``types``."""
    if name == MOD:
        return ModBucketFunction(types, table)
    if name == HIVE:
        return HiveBucketFunction(types, table)
    raise OptionError(f"{_where(table)}no bucket function '{name}' here")
