"""Fixed-bucket assignment (``bucket = N > 0``): bucket-key BinaryRow hash modulo N.

Mirrors org.apache.paimon.table.sink.FixedBucketRowKeyExtractor with
org.apache.paimon.bucket.DefaultBucketFunction (``Math.abs(row.hashCode() % numBuckets)``) and
BinaryRow#hashCode (spec section 5.2). Java builds a canonical BinaryRow of just the bucket-key
fields per record and hashes its bytes; we compute the very same words for all rows at once
from the Arrow buffers, without a per-row Python loop:

* every row shares the fixed part (header with null bits, one 8-byte slot per field), so its
  words are fed to the hash column by column straight from per-field numpy arrays;
* only the variable part (strings/binaries longer than 7 bytes, non-compact decimals and
  timestamps, which Java stores behind an offset) differs in length between rows. Fixed-size
  chunks are again mixed column-wise; string words are gathered straight from the Arrow data
  buffer at any byte offset, rows sorted longest first so the rows still hashing at word ``j``
  are a prefix. Only keys with a string followed by another variable-length field need the
  general path: one flat buffer of all variable parts, hashed by :func:`murmur.mix_ragged`.

Nested types are not allowed as bucket keys in Java; :func:`hash_rows` still hashes them
through the row-by-row codec, which is fine for the rare metadata rows that need it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.bucket.functions import DEFAULT, new_bucket_function
from paimon_pyspark.errors import OptionError, SchemaError, SchemaMismatchError
from paimon_pyspark.spec import binary_row, murmur
from paimon_pyspark.types.arrow import one_array, to_arrow_type
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

U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Column: TypeAlias = pa.Array | pa.ChunkedArray

_NESTED = (ArrayType, MapType, MultisetType, RowType)
_NARROW_SLOTS = {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "DATE", "FLOAT"}
# Slot bytes of each fixed-width atomic type, read as unsigned so widening never sign-extends.
_UNSIGNED: dict[str, type[np.unsignedinteger]] = {
    "TINYINT": np.uint8,
    "SMALLINT": np.uint16,
    "INT": np.uint32,
    "DATE": np.uint32,
    "FLOAT": np.uint32,
    "BIGINT": np.uint64,
    "DOUBLE": np.uint64,
}
_UNIT_NANOS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
# _BYTE_MASKS[k] keeps the first k bytes of a little-endian word.
_BYTE_MASKS = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF], dtype=np.uint32)
# Below this many rows still copying, per-row slices beat a vectorized step per word.
_COPY_TAIL = 4

if sys.byteorder != "little":  # pragma: no cover - every Paimon deployment is little-endian
    raise ImportError("paimon_pyspark's BinaryRow hashing assumes a little-endian machine")


class _UnalignedWords:
    """Reads little-endian uint32 words at arbitrary byte offsets of a buffer, vectorized.

    Keeps four copies of the buffer shifted by 0..3 bytes, so any word is one gather.
    """

    def __init__(self, data: U8) -> None:
        self.data = data
        self.cols = data.size // 4 + 3
        padded = np.zeros(4 * self.cols + 4, np.uint8)
        padded[: data.size] = data
        shifted = np.empty((4, self.cols), np.uint32)
        for k in range(4):
            shifted[k] = padded[k : k + 4 * self.cols].view(np.uint32)
        self.flat = shifted.reshape(-1)

    def index(self, pos: I64) -> I64:
        """Where in ``flat`` the word at byte ``pos`` starts; the next word is at index + 1."""
        return (pos & 3) * self.cols + (pos >> 2)

    def load(self, pos: I64, n_bytes: I64) -> U32:
        """The word at each byte position, keeping only its first ``n_bytes`` (clipped 0..4)."""
        words = self.flat[self.index(pos)]
        words &= _BYTE_MASKS[np.clip(n_bytes, 0, 4)]
        return words


@dataclass
class _Text:
    """Strings/binaries longer than 7 bytes: where each lies in the Arrow data buffer."""

    words: _UnalignedWords
    starts: I64
    lengths: I64  # zero for rows whose value is inline or null


@dataclass
class _Encoded:
    """One bucket-key field of every row, ready to be placed into BinaryRows.

    ``slots`` holds the 8-byte slot; for rows with a variable part only its low 32 bits are
    final and the row-relative offset is OR-ed into the high half later. The variable part
    (``var_len`` bytes, padded to a word) comes from ``var_words`` or ``var_text``.
    """

    slots: U64
    nulls: Bools | None
    narrow: bool = False
    var_len: I64 | None = None
    var_words: U64 | None = None
    var_text: _Text | None = None


def _nulls(arr: pa.Array) -> Bools | None:
    if arr.null_count == 0:
        return None
    mask: Bools = arr.is_null().to_numpy(zero_copy_only=False)
    return mask


def _buffer_values(
    arr: pa.Array, index: int, dtype: type[np.generic], width: int = 1, extra: int = 0
) -> npt.NDArray[Any]:
    """Buffer ``index`` of ``arr`` as numpy, ``width`` values per row (+``extra`` at the end)."""
    buf = arr.buffers()[index]
    count = (arr.offset + len(arr)) * width + extra
    values: npt.NDArray[Any] = np.frombuffer(buf, dtype=dtype, count=count)
    return values[arr.offset * width :]


def _zero_nulls(values: U64, nulls: Bools | None) -> U64:
    if nulls is not None:
        values = values.copy()
        values[nulls] = 0
    return values


def _cast(arr: pa.Array, target: pa.DataType) -> pa.Array:
    if arr.type == target:
        return arr
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise SchemaMismatchError(
            f"bucket-key column of type {arr.type} is not {target}: {e}"
        ) from e


def _encode(arr: pa.Array, t: DataType) -> _Encoded:
    if isinstance(t, CharType | BinaryType):
        return _encode_bytes(arr, t)
    if isinstance(t, TimestampType):
        return _encode_timestamp(arr, t)
    if isinstance(t, DecimalType):
        return _encode_decimal(_cast(arr, to_arrow_type(t)), t)
    if isinstance(t, TimeType):
        arr = arr if pa.types.is_time(arr.type) else _cast(arr, to_arrow_type(t))
        raw = _buffer_values(arr, 1, np.int32 if pa.types.is_time32(arr.type) else np.int64)
        millis = raw.astype(np.int64) * _UNIT_NANOS[arr.type.unit] // 1_000_000
        nulls = _nulls(arr)
        return _Encoded(_zero_nulls(millis.astype(np.uint64), nulls), nulls, narrow=True)
    if isinstance(t, AtomicType):
        arr = _cast(arr, to_arrow_type(t))
        nulls = _nulls(arr)
        if t.name == "BOOLEAN":
            bits = pc.fill_null(arr, False).to_numpy(zero_copy_only=False)
            return _Encoded(bits.astype(np.uint64), nulls, narrow=True)
        unsigned = _buffer_values(arr, 1, _UNSIGNED[t.name]).astype(np.uint64)
        return _Encoded(_zero_nulls(unsigned, nulls), nulls, narrow=t.name in _NARROW_SLOTS)
    raise SchemaError(f"Type {t} cannot be encoded as a bucket-key field")


def _encode_bytes(arr: pa.Array, t: DataType) -> _Encoded:
    """Inline slots for values of at most 7 bytes, ``(offset << 32) | len`` plus text else."""
    kind = arr.type
    if pa.types.is_large_string(kind) or pa.types.is_large_binary(kind):
        arr = arr.view(pa.large_binary())
    elif pa.types.is_string(kind) or pa.types.is_binary(kind):
        arr = arr.view(pa.binary())
    else:
        arr = _cast(arr, pa.string() if isinstance(t, CharType) else pa.binary())
    nulls = _nulls(arr)
    offset_type = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    offsets = _buffer_values(arr, 1, offset_type, extra=1).astype(np.int64)
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    if nulls is not None:
        lengths[nulls] = 0
    data_buf = arr.buffers()[2]
    words = _UnalignedWords(
        np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    )
    inline = lengths <= binary_row.MAX_INLINE_BYTES
    short = np.where(inline, lengths, 0)
    low = words.load(starts, short).astype(np.uint64)
    high = (words.load(starts + 4, short - 4) | ((0x80 | short) << 24).astype(np.uint32)).astype(
        np.uint64
    )
    slots = np.where(inline, low | (high << np.uint64(32)), lengths.astype(np.uint64))
    if nulls is not None:
        slots[nulls] = 0
    if bool(inline.all()):
        return _Encoded(slots, nulls)
    long_lengths = np.where(inline, 0, lengths)
    var_len = (long_lengths + 7) & ~7
    return _Encoded(slots, nulls, var_len=var_len, var_text=_Text(words, starts, long_lengths))


def _encode_decimal(arr: pa.Array, t: DecimalType) -> _Encoded:
    """Compact: the unscaled long. Otherwise 16 reserved bytes holding BigInteger's bytes."""
    n = len(arr)
    nulls = _nulls(arr)
    pair = _buffer_values(arr, 1, np.uint64, 2).reshape(n, 2)
    lo, hi = pair[:, 0], pair[:, 1]
    if binary_row.is_compact_decimal(t):
        return _Encoded(_zero_nulls(lo.copy(), nulls), nulls)
    # Magnitude bits of the two's complement value: v for v >= 0, ~v for v < 0.
    sign = (hi.view(np.int64) >> np.int64(63)).view(np.uint64)
    m_lo, m_hi = lo ^ sign, hi ^ sign
    high_used = m_hi != 0
    top = np.where(high_used, m_hi, m_lo)
    top_bytes = np.zeros(n, np.int64)
    for j in range(8):
        top_bytes += (top >> np.uint64(8 * j)) != 0
    used = np.where(high_used, 8 + top_bytes, top_bytes)
    top_byte = (top >> (8 * np.maximum(top_bytes - 1, 0)).astype(np.uint64)) & np.uint64(0xFF)
    # BigInteger.toByteArray length = bitLength / 8 + 1, at least 1.
    length = np.where(used == 0, 1, used + (top_byte >= 0x80)).astype(np.int64)
    # Shift the value left so its ``length`` bytes lead, then store both words big-endian.
    shift = (8 * (16 - length)).astype(np.uint64)
    small = shift < 64
    s_small = np.where(small, shift, 0).astype(np.uint64)
    s_big = np.where(small, 0, shift - np.uint64(64)).astype(np.uint64)
    carry = np.where(s_small == 0, 0, lo >> (np.uint64(64) - np.maximum(s_small, 1)))
    new_hi = np.where(small, (hi << s_small) | carry, lo << s_big).astype(np.uint64)
    new_lo = np.where(small, lo << s_small, 0).astype(np.uint64)
    var_words = np.stack([new_hi.byteswap(), new_lo.byteswap()], axis=1)
    slots = length.astype(np.uint64)
    if nulls is not None:
        var_words[nulls] = 0
        slots[nulls] = 0
    return _Encoded(slots, nulls, var_len=np.full(n, 16, np.int64), var_words=var_words)


def _encode_timestamp(arr: pa.Array, t: TimestampType) -> _Encoded:
    """Compact: epoch millis. Otherwise millis in the variable part, nano-of-milli in the slot."""
    if not pa.types.is_timestamp(arr.type):
        arr = _cast(arr, to_arrow_type(t))
    nulls = _nulls(arr)
    raw = _buffer_values(arr, 1, np.int64)
    nanos_per_unit = _UNIT_NANOS[arr.type.unit]
    if nanos_per_unit >= 1_000_000:
        millis = raw * (nanos_per_unit // 1_000_000)
        nano = np.zeros(len(arr), np.int64)
    else:
        millis, rest = np.divmod(raw, 1_000_000 // nanos_per_unit)
        nano = rest * nanos_per_unit
    if binary_row.is_compact_timestamp(t):
        return _Encoded(_zero_nulls(millis.view(np.uint64), nulls), nulls)
    var_words = _zero_nulls(millis.view(np.uint64), nulls).reshape(-1, 1)
    slots = _zero_nulls(nano.view(np.uint64), nulls)
    return _Encoded(slots, nulls, var_len=np.full(len(arr), 8, np.int64), var_words=var_words)


def _write_text(flat: U32, dst_words: I64, text: _Text) -> None:
    """Copy each long value's bytes to word ``dst_words[i]`` of ``flat`` (zeros stay zeros)."""
    rows = np.flatnonzero(text.lengths)
    if rows.size == 0:
        return
    rows = rows[np.argsort(-text.lengths[rows], kind="stable")]
    lengths, src, dst = text.lengths[rows], text.starts[rows], dst_words[rows]
    n_words = (lengths + 3) // 4
    source = text.words.index(src)
    active = rows.size - np.searchsorted(n_words[::-1], np.arange(int(n_words[0])), "right")
    for j, m in enumerate(active.tolist()):
        if m <= _COPY_TAIL:
            flat_bytes = flat.view(np.uint8)
            for i in range(m):
                s, d, length = int(src[i]), 4 * int(dst[i]), int(lengths[i])
                flat_bytes[d + 4 * j : d + length] = text.words.data[s + 4 * j : s + length]
            break
        flat[dst[:m] + j] = text.words.flat[source[:m] + j]
    partial = (lengths % 4) != 0
    last = dst[partial] + lengths[partial] // 4
    flat[last] &= _BYTE_MASKS[lengths[partial] % 4]


def _null_header_words(encoded: Sequence[_Encoded], n: int) -> list[U64 | None]:
    """The header as uint64 words per row (row kind 0, null bit of field i at bit i + 8)."""
    width = binary_row.header_width(len(encoded)) // 8
    words: list[U64 | None] = [None] * width
    for i, enc in enumerate(encoded):
        if enc.nulls is None:
            continue
        bit = i + 8
        word = words[bit // 64]
        if word is None:
            word = words[bit // 64] = np.zeros(n, np.uint64)
        word |= enc.nulls.astype(np.uint64) << np.uint64(bit % 64)
    return words


def _mix_u64(h: U32, word: U64 | None, high_zero: bool = False) -> None:
    if word is None:
        murmur.mix_column(h, None)
        murmur.mix_column(h, None)
        return
    halves = np.ascontiguousarray(word).view(np.uint32).reshape(-1, 2)
    murmur.mix_column(h, halves[:, 0])
    murmur.mix_column(h, None if high_zero else halves[:, 1])


def _hash_encoded(encoded: list[_Encoded], n: int) -> I32:
    fixed_bytes = binary_row.fixed_part_size(len(encoded))
    slots = [e.slots for e in encoded]
    var_total = np.zeros(n, np.int64)
    var_offsets: list[I64] = []
    for i, e in enumerate(encoded):
        if e.var_len is None:
            continue
        var_offsets.append(var_total.copy())
        offset = (fixed_bytes + var_total).astype(np.uint64) << np.uint64(32)
        slots[i] = np.where(e.var_len > 0, e.slots | offset, e.slots)
        var_total += e.var_len
    h = murmur.init_state(n)
    for word in _null_header_words(encoded, n):
        _mix_u64(h, word)
    for e, slot in zip(encoded, slots, strict=True):
        _mix_u64(h, slot, high_zero=e.narrow)
    if not var_offsets:
        return murmur.finalize(h, fixed_bytes)
    var_cols = [e for e in encoded if e.var_len is not None]
    texts = [e for e in var_cols if e.var_text is not None]
    if not texts or (len(texts) == 1 and var_cols[-1] is texts[0]):
        # Every row's variable part starts with the same fixed-size chunks: mix them in
        # place, then at most one trailing text column straight from its Arrow buffer.
        for e in var_cols:
            if e.var_words is not None:
                for k in range(e.var_words.shape[1]):
                    _mix_u64(h, e.var_words[:, k])
            elif e.var_text is not None and e.var_len is not None:
                _mix_text(h, e.var_text, e.var_len // 4)
    else:
        _mix_var_flat(h, var_cols, var_offsets, var_total)
    return murmur.finalize(h, fixed_bytes + var_total)


def _mix_var_flat(h: U32, var_cols: list[_Encoded], offsets: list[I64], var_total: I64) -> None:
    """General case: lay the variable parts out in one buffer, then hash it ragged."""
    row_starts = np.zeros(var_total.size, np.int64)
    np.cumsum(var_total[:-1], out=row_starts[1:])
    flat = np.zeros(int(var_total.sum()) // 4, np.uint32)
    for e, within in zip(var_cols, offsets, strict=True):
        dst_words = (row_starts + within) // 4
        if e.var_words is not None:
            flat64 = flat.view(np.uint64)
            for k in range(e.var_words.shape[1]):
                flat64[dst_words // 2 + k] = e.var_words[:, k]
        elif e.var_text is not None:
            _write_text(flat, dst_words, e.var_text)
    murmur.mix_ragged(h, flat, row_starts // 4, var_total // 4)


def _mix_text(h: U32, text: _Text, n_words: I64) -> None:
    """Feed each row its ``n_words`` padded text words, gathered from the Arrow buffer."""
    lo, hi = int(n_words.min()), int(n_words.max())
    if hi == 0:
        return
    if lo == hi:
        rows = None
        counts, lengths, src, hs = n_words, text.lengths, text.starts, h
        active = np.full(hi, n_words.size)
    else:
        rows = np.flatnonzero(n_words)
        rows = rows[np.argsort(-n_words[rows], kind="stable")]
        counts, lengths, src, hs = n_words[rows], text.lengths[rows], text.starts[rows], h[rows]
        active = rows.size - np.searchsorted(counts[::-1], np.arange(hi), "right")
    source = text.words.index(src)
    for j, m in enumerate(active.tolist()):
        if m <= _COPY_TAIL:
            _mix_text_tail(hs[:m], text.words.data, src[:m], lengths[:m], counts[:m], j)
            break
        words = text.words.flat[source[:m] + j]
        words &= _BYTE_MASKS[np.clip(lengths[:m] - 4 * j, 0, 4)]
        murmur.mix_column(hs[:m], words)
    if rows is not None:
        h[rows] = hs


def _mix_text_tail(h: U32, data: U8, src: I64, lengths: I64, counts: I64, first: int) -> None:
    """The last few (longest) rows, from word ``first`` on, through a small padded buffer."""
    chunks = []
    for s, length, count in zip(src.tolist(), lengths.tolist(), counts.tolist(), strict=True):
        chunk = data[s + 4 * first : s + length].tobytes()
        chunks.append(chunk + bytes(4 * (count - first) - len(chunk)))
    flat = np.frombuffer(b"".join(chunks), np.uint32)
    starts = np.cumsum([0] + [len(c) // 4 for c in chunks[:-1]]).astype(np.int64)
    murmur.mix_ragged(h, flat, starts, counts - first)


def _check_key_type(t: DataType) -> None:
    if isinstance(t, _NESTED):
        raise SchemaError(f"Nested type {t} is not allowed as a bucket key")
    if isinstance(t, AtomicType) and t.name not in _UNSIGNED and t.name != "BOOLEAN":
        raise SchemaError(f"Type {t} is not supported as a bucket key")


def hash_rows(columns: Sequence[Column], types: Sequence[DataType]) -> I32:
    """Java's ``BinaryRow.hashCode()`` of the rows built from ``columns`` (one per type)."""
    if len(columns) != len(types) or not columns:
        raise SchemaMismatchError(f"{len(columns)} columns for {len(types)} key types")
    arrays = [one_array(c) for c in columns]
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise SchemaMismatchError("bucket-key columns have different lengths")
    if n == 0:
        return np.zeros(0, np.int32)
    if any(isinstance(t, _NESTED) for t in types):
        return _hash_rows_scalar(arrays, types)
    for t in types:
        _check_key_type(t)
    return _hash_encoded([_encode(a, t) for a, t in zip(arrays, types, strict=True)], n)


def _hash_rows_scalar(arrays: Sequence[pa.Array], types: Sequence[DataType]) -> I32:
    """Row-by-row fallback through the BinaryRow codec, for nested types only."""
    values = [a.to_pylist() for a in arrays]
    hashes = [
        murmur.hash_bytes(binary_row.serialize_row(list(row), types))
        for row in zip(*values, strict=True)
    ]
    return np.asarray(hashes, dtype=np.int32)


def buckets_of(hashes: npt.NDArray[np.int32], num_buckets: int) -> I32:
    """``Math.abs(hash % numBuckets)`` with Java's truncated int ``%``."""
    wide = hashes.astype(np.int64)
    return np.abs(np.fmod(wide, num_buckets)).astype(np.int32)


class FixedBucketAssigner:
    """Assigns every row its bucket from the bucket-key columns, as Java's writers do, with the
    table's ``bucket-function.type`` (Java's BucketFunction.create; mod and hive in
    bucket/functions.py)."""

    def __init__(
        self,
        key: Sequence[DataField] | Sequence[DataType],
        num_buckets: int,
        function: str = DEFAULT,
        table: str = "",
    ) -> None:
        if num_buckets <= 0:
            raise OptionError(f"Fixed bucket mode needs bucket > 0, got {num_buckets}")
        if not key:
            raise SchemaError("A fixed-bucket table needs at least one bucket-key field")
        self.names: list[str] | None = None
        if all(isinstance(k, DataField) for k in key):
            fields = [k for k in key if isinstance(k, DataField)]
            self.names = [f.name for f in fields]
            self.types: list[DataType] = [f.type for f in fields]
        else:
            self.types = [k for k in key if isinstance(k, DataType)]
            if len(self.types) != len(key):
                raise SchemaError("Bucket key must be all DataFields or all DataTypes")
        self.num_buckets = num_buckets
        self.function = (
            None if function == DEFAULT else new_bucket_function(function, self.types, table)
        )
        if self.function is None:
            for t in self.types:
                _check_key_type(t)

    def hashes(self, columns: Sequence[Column]) -> npt.NDArray[np.int32] | npt.NDArray[np.int64]:
        """What every row's bucket is taken from: ``BinaryRow.hashCode()`` of its bucket key
        (``bucket-function.type`` default), the key itself (mod), the Hive hash (hive)."""
        if self.function is None:
            return hash_rows(columns, self.types)
        return self.function.keys(columns)

    def buckets(
        self, hashes: npt.NDArray[np.int32] | npt.NDArray[np.int64], num_buckets: int | I64
    ) -> I32:
        """The buckets of :meth:`hashes` among ``num_buckets`` (one count, or one per row)."""
        if self.function is None:
            return np.abs(np.fmod(hashes.astype(np.int64), num_buckets)).astype(np.int32)
        return self.function.buckets(hashes.astype(np.int64), num_buckets)

    def assign(self, columns: Sequence[Column]) -> I32:
        """The bucket of every row; ``columns`` are the bucket-key fields in key order."""
        return self.buckets(self.hashes(columns), self.num_buckets)

    def assign_table(self, table: pa.Table | pa.RecordBatch) -> I32:
        """The bucket of every row of a table holding the bucket-key fields by name."""
        if self.names is None:
            raise SchemaError("assign_table needs an assigner built from named DataFields")
        return self.assign([table.column(name) for name in self.names])
