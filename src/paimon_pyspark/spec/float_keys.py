"""FLOAT and DOUBLE key fields ordered and compared as Java Paimon 1.4 does.

Java sorts the records of a write buffer by normalized keys (``SortUtil.putDoubleNormalizedKey``:
``doubleToLongBits`` with the sign trick), so every NaN is the one canonical NaN and sorts after
+Infinity, and -0.0 sorts before +0.0. It then merges neighbours that its generated key
comparator calls equal, and that comparator is ``a > b ? 1 : a < b ? -1 : 0``: -0.0 equals
+0.0, and a NaN equals every value. So in one sorted run a NaN key merges with the key before
it (in a bucket holding 1.0, 2.0 and NaN, the NaN record replaces 2.0), and -0.0 and +0.0 are
one key. Bucket hashes, on the other hand, are taken over the raw bits of the key BinaryRow, so
-0.0 and +0.0 (and NaNs of different payloads) may land in different buckets and then stay
apart. Checked against Java 1.4.2 in ``tests/interop/test_float_keys_java.py``.

Here, a float key column is sorted through its normalized integer (:func:`sortable`) and
neighbours are told apart by :func:`differs`, which is Java's comparator; Arrow's own sort
would put -0.0 and +0.0 in arrival order and its ``not_equal`` would keep NaNs apart. Keys
matched against stored keys go through :func:`lookup_key`; file key ranges (commit conflicts,
overwrite upgrade, levels) through ``mergetree.universal.KeyOrder``, built on :func:`normalized`
and :func:`same`.
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_DOUBLE_NAN = 0x7FF8_0000_0000_0000  # Double.doubleToLongBits(NaN)
_FLOAT_NAN = 0x7FC0_0000  # Float.floatToIntBits(NaN)
_DOUBLE_LOW = 0x7FFF_FFFF_FFFF_FFFF
_FLOAT_LOW = 0x7FFF_FFFF
_ZEROS = frozenset((-1, 0))  # the normalized -0.0 and +0.0, either width


def is_float(t: pa.DataType) -> bool:
    return bool(pa.types.is_float32(t) or pa.types.is_float64(t))


def sortable(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A FLOAT/DOUBLE column as signed integers in Java's normalized-key order (NaN
    canonical and last, -0.0 before +0.0), nulls kept."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    single = pa.types.is_float32(arr.type)
    values = pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False)
    bits = values.view(np.int32 if single else np.int64).copy()
    bits[np.isnan(values)] = _FLOAT_NAN if single else _DOUBLE_NAN
    low = _FLOAT_LOW if single else _DOUBLE_LOW
    normalized = np.where(bits < 0, bits ^ low, bits)
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    return pa.array(normalized, mask=mask)


def lookup_key(col: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A key column as Java matches a key against stored keys (first-row's lookup in the levels
    above, the cross-partition key index): FLOAT/DOUBLE through :func:`sortable`, so every NaN
    is one key and -0.0 is not +0.0; other columns unchanged.

    Java matches by the key's bytes (the lookup file's bloom filter, RocksDB), and the bytes it
    stores are canonical: its Parquet writer writes every NaN as ``doubleToLongBits`` does.
    Equal bytes are then ``Double.compareTo``'s equality, which :func:`sortable` keeps; Arrow's
    own hashing would tell NaN payloads apart, as Java never sees them in its files.
    """
    return sortable(col) if is_float(col.type) else col


def differs(prev: pa.Array, cur: pa.Array) -> pa.Array:
    """Per pair of non-null values: Java's key comparator would not return 0 (null where
    either is null; the caller decides about nulls)."""
    if is_float(prev.type):
        return pc.or_(pc.less(prev, cur), pc.greater(prev, cur))
    return pc.not_equal(prev, cur)


def normalized(value: float, single: bool) -> int:
    """One value as :func:`sortable` maps it (for keys decoded from file metadata)."""
    if value != value:
        return _FLOAT_NAN if single else _DOUBLE_NAN
    if single:
        bits: int = struct.unpack("<i", struct.pack("<f", value))[0]
        return bits ^ _FLOAT_LOW if bits < 0 else bits
    bits = struct.unpack("<q", struct.pack("<d", value))[0]
    return bits ^ _DOUBLE_LOW if bits < 0 else bits


def same(a: int, b: int, single: bool) -> bool:
    """Two normalized values that Java's comparator calls equal: equal, both zeros, or a NaN."""
    nan = _FLOAT_NAN if single else _DOUBLE_NAN
    return a == b or nan in (a, b) or (a in _ZEROS and b in _ZEROS)
