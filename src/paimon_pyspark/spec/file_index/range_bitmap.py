"""The ``range-bitmap`` file index: a sorted dictionary of a column's values, and the rows' codes
in bit slices.

Mirrors org.apache.paimon.fileindex.rangebitmap.RangeBitmapFileIndex over RangeBitmap,
BitSliceIndexBitmap and the chunked dictionary (ChunkedDictionary, FixedLengthChunk,
VariableLengthChunk, KeyFactory). Each distinct value gets its rank as code; the dictionary is cut
into chunks of at most ``chunk-size`` key bytes (16kb; 0b for BOOLEAN, TINYINT and SMALLINT, one
key per chunk), each chunk's first key in its header. Readers answer equality, IN, their
negations, ranges and null tests as Java's RangeBitmap does, min/max shortcuts included; an empty
result is a SKIP.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec.file_index.api import (
    BETWEEN,
    EQUAL,
    GREATER_OR_EQUAL,
    GREATER_THAN,
    IN,
    IS_NOT_NULL,
    IS_NULL,
    LESS_OR_EQUAL,
    NOT_EQUAL,
    NOT_IN,
    OPERATIONS,
)
from paimon_pyspark.spec.file_index.bitmap import serialize_bitmap
from paimon_pyspark.spec.file_index.java_keys import (
    BIG_ENDIAN,
    FIXED_SIZE,
    ColumnWriter,
    Keys,
    RowsReader,
    decode_fixed,
    key_kind,
    literal_keys,
    sort_keys,
    to_keys,
    unsupported,
)
from paimon_pyspark.spec.java_hash import BOOLEAN, BYTE, LONG, SHORT, STRING
from paimon_pyspark.spec.java_quantity import parse_memory_size
from paimon_pyspark.types.data_types import DataType, DecimalType, TimestampType

VERSION_1 = 1
CHUNK_SIZE = "chunk-size"


def _kind(data_type: DataType) -> str:
    """KeyFactory.create: the key kind, or UnsupportedOptionError as Java refuses the type."""
    if isinstance(data_type, DecimalType):
        if data_type.precision > 18:
            raise unsupported("range-bitmap", data_type)
        return LONG
    if isinstance(data_type, TimestampType) and data_type.precision > 6:
        raise unsupported("range-bitmap", data_type)
    kind = key_kind(data_type)
    if kind is None:
        raise unsupported("range-bitmap", data_type)
    return kind


def create_writer(data_type: DataType, options: Mapping[str, str]) -> RangeBitmapWriter:
    kind = _kind(data_type)
    default = "0b" if kind in (BOOLEAN, BYTE, SHORT) else "16kb"
    limit = parse_memory_size(options.get(CHUNK_SIZE, default), CHUNK_SIZE)
    return RangeBitmapWriter(data_type, kind, limit)


def create_reader(data_type: DataType, data: bytes) -> RangeBitmapReader:
    return RangeBitmapReader(data_type, _kind(data_type), bytes(data))


def _key_bytes(kind: str, key: Any) -> bytes:
    if kind == STRING:
        return struct.pack(">i", len(key)) + bytes(key)
    if kind == BOOLEAN:
        return b"\x01" if key else b"\x00"
    return np.asarray([key]).astype(BIG_ENDIAN[kind]).tobytes()


def _distinct_sorted(keys: Keys) -> tuple[Any, npt.NDArray[np.int64]]:
    """The distinct keys in Java's comparator order (as raw keys: ints, float bits, bools,
    bytes), and each row's code (its key's rank; -1 for null)."""
    codes = np.full(len(keys), -1, dtype=np.int64)
    valid = np.nonzero(keys.valid)[0]
    if keys.kind == STRING:
        present = keys.values.filter(pa.array(keys.valid))
        uniq = pc.unique(present)
        uniq = uniq.take(pc.sort_indices(uniq))
        codes[valid] = np.asarray(pc.index_in(present, value_set=uniq).to_numpy(), np.int64)
        return uniq.to_pylist(), codes
    order_key = np.asarray(sort_keys(keys))[valid]
    _, first, inverse = np.unique(order_key, return_index=True, return_inverse=True)
    codes[valid] = inverse.reshape(-1)
    return np.asarray(keys.values)[valid][first], codes


def _fixed_chunk_header(key_dtype: str) -> np.dtype[Any]:
    """FixedLengthChunk's header: version, first key, code, keys offset, size, keys length,
    key length."""
    fields = ["code", "off", "size", "len", "fixed"]
    return np.dtype([("v", "i1"), ("k", key_dtype), *((f, ">i4") for f in fields)])


def _fixed_dictionary(kind: str, keys: npt.NDArray[Any], limit: int) -> bytes:
    """_dictionary for fixed-size keys, whole arrays at a time: every chunk is a head key and
    then as many keys as ``limit`` bytes hold."""
    n, size = len(keys), FIXED_SIZE[kind]
    per = limit // size
    heads = np.arange(0, n, per + 1)
    counts = np.minimum(per, n - heads - 1)
    key_dtype = "u1" if kind == BOOLEAN else BIG_ENDIAN[kind]
    header = _fixed_chunk_header(key_dtype)
    rec = np.zeros(len(heads), dtype=header)
    rec["v"] = VERSION_1
    rec["k"] = keys[heads].astype(key_dtype)
    rec["code"] = heads
    rec["off"] = np.concatenate(([0], np.cumsum(counts)[:-1] * size)) if n else heads
    rec["size"] = counts
    rec["len"] = counts * size
    rec["fixed"] = size
    members = np.ones(n, dtype=np.bool_)
    members[heads] = False
    offsets = (np.arange(len(heads)) * header.itemsize).astype(">i4").tobytes()
    chunks = rec.tobytes()
    head = struct.pack(">ibiii", 13, VERSION_1, len(heads), len(offsets), len(chunks))
    return b"".join([head, offsets, chunks, keys[members].astype(key_dtype).tobytes()])


def _dictionary(kind: str, keys: Any, limit: int) -> bytes:
    """ChunkedDictionary.Appender.serialize over sorted keys (codes 0, 1, ...)."""
    if kind != STRING:
        return _fixed_dictionary(kind, np.asarray(keys), limit)
    chunk_offsets: list[int] = []
    chunks: list[bytes] = []
    key_parts: list[bytes] = []
    chunks_len = keys_len = 0
    fixed = FIXED_SIZE.get(kind)
    i, n = 0, len(keys)
    while i < n:
        head, code = keys[i], i
        i += 1
        members: list[bytes] = []
        used = 0
        while i < n:
            b = _key_bytes(kind, keys[i])
            if fixed is not None:
                if len(b) > limit - used:
                    break
            elif len(b) > limit - used or limit - 4 * len(members) < 4:
                break
            members.append(b)
            used += len(b)
            i += 1
        head_bytes = _key_bytes(kind, head)
        if fixed is not None:
            header = (
                struct.pack(">b", VERSION_1)
                + head_bytes
                + struct.pack(">iiiii", code, keys_len, len(members), used, fixed)
            )
            body = b"".join(members)
        else:
            header = (
                struct.pack(">b", VERSION_1)
                + head_bytes
                + struct.pack(">iiiii", code, keys_len, len(members), 4 * len(members), used)
            )
            sizes = np.asarray([len(m) for m in members], dtype=np.int64)
            rel = np.concatenate(([0], np.cumsum(sizes)[:-1])) if members else sizes
            body = rel.astype(">i4").tobytes() + b"".join(members)
        chunk_offsets.append(chunks_len)
        chunks.append(header)
        key_parts.append(body)
        chunks_len += len(header)
        keys_len += len(body)
    offsets = np.asarray(chunk_offsets, dtype=">i4").tobytes()
    head = struct.pack(">ibiii", 13, VERSION_1, len(chunks), len(offsets), chunks_len)
    return b"".join([head, offsets, *chunks, *key_parts])


def _bsi(codes: npt.NDArray[np.int64], cardinality: int) -> bytes:
    """rangebitmap.BitSliceIndexBitmap.Appender(0, cardinality - 1).serialize."""
    top = cardinality - 1
    width = 64 if top < 0 else max(top.bit_length(), 1)
    rows = np.nonzero(codes >= 0)[0]
    present = codes[rows]
    ebm = serialize_bitmap(rows)
    slices = [serialize_bitmap(rows[(present >> i) & 1 == 1]) for i in range(width)]
    index = np.zeros((width, 2), dtype=">i4")
    lengths = np.asarray([len(s) for s in slices], dtype=np.int64)
    index[:, 1] = lengths
    index[:, 0] = np.concatenate(([0], np.cumsum(lengths)[:-1])) if width else []
    header_size = 1 + 1 + 4 + 4 + 8 * width
    head = struct.pack(">ibbii", header_size, VERSION_1, width, len(ebm), 8 * width)
    return b"".join([head, index.tobytes(), ebm, *slices])


class RangeBitmapWriter(ColumnWriter):
    def __init__(self, data_type: DataType, kind: str, chunk_size: int) -> None:
        super().__init__(data_type)
        self._kind = kind
        self._limit = chunk_size

    def serialize(self) -> bytes:
        keys = to_keys(self._type, self._kind, self.column())
        distinct, codes = _distinct_sorted(keys)
        dictionary = _dictionary(self._kind, distinct, self._limit)
        bounds = (
            _key_bytes(self._kind, distinct[0]) + _key_bytes(self._kind, distinct[-1])
            if len(distinct)
            else b""
        )
        header_size = 1 + 4 + 4 + len(bounds) + 4
        return b"".join(
            [
                struct.pack(">ibii", header_size, VERSION_1, len(keys), len(distinct)),
                bounds,
                struct.pack(">i", len(dictionary)),
                dictionary,
                _bsi(codes, len(distinct)),
            ]
        )


class _Reader:
    def __init__(self, data: bytes, pos: int) -> None:
        self.data, self.pos = data, pos

    def take(self, fmt: str) -> tuple[Any, ...]:
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return out

    def key(self, kind: str) -> Any:
        """A key as a value ordered like Java's comparator (float bits mapped to sort order)."""
        if kind == STRING:
            (n,) = self.take(">i")
            b = self.data[self.pos : self.pos + n]
            self.pos += n
            return b
        size = FIXED_SIZE[kind]
        raw = self.data[self.pos : self.pos + size]
        self.pos += size
        if kind == BOOLEAN:
            return int(raw[0] == 1)
        values = decode_fixed(kind, raw, 1)
        return int(sort_keys(Keys(kind, values, np.ones(1, np.bool_)))[0])


def _fixed_keys(
    kind: str, data: bytes, body: int, size: int, offsets_len: int, keys_base: int
) -> npt.NDArray[np.int64]:
    """Every key of a fixed-size dictionary in code order, as Java-ordered int64s."""
    width = FIXED_SIZE[kind]
    key_dtype = "u1" if kind == BOOLEAN else BIG_ENDIAN[kind]
    header = _fixed_chunk_header(key_dtype)
    starts = np.frombuffer(data, dtype=">i4", count=size, offset=body).astype(np.int64)
    raw = np.frombuffer(data, dtype=np.uint8)
    rows = raw[body + offsets_len + starts[:, None] + np.arange(header.itemsize)]
    rec = np.ascontiguousarray(rows).view(header).reshape(-1)
    counts = rec["size"].astype(np.int64)
    total = size + int(counts.sum())
    members = np.ones(total, dtype=np.bool_)
    codes = rec["code"].astype(np.int64)
    members[codes] = False
    n_members = total - size
    member_bytes = np.frombuffer(data, dtype=np.uint8, count=n_members * width, offset=keys_base)
    out = np.empty(total, dtype=np.int64)
    heads = rec["k"].astype(key_dtype).tobytes()
    for where, blob, n in ((codes, heads, size), (members, member_bytes.tobytes(), n_members)):
        values = decode_fixed(kind, blob, n)
        out[where] = sort_keys(Keys(kind, values, np.ones(n, np.bool_)))
    return out


class RangeBitmapReader(RowsReader):
    """Java's RangeBitmapFileIndex.Reader over one column's bytes."""

    def __init__(self, data_type: DataType, kind: str, data: bytes) -> None:
        self._type = data_type
        self._kind = kind
        try:
            self._parse(data)
        except (struct.error, ValueError, IndexError) as e:
            raise CorruptTableError(f"range-bitmap file index is corrupt: {e}") from e

    def _parse(self, data: bytes) -> None:
        kind = self._kind
        cur = _Reader(data, 0)
        (header_len,) = cur.take(">i")
        version, self.rid, self.cardinality = cur.take(">bii")
        if version > VERSION_1:
            raise CorruptTableError(f"range-bitmap version {version} is newer than 1")
        self.min = self.max = None
        if self.cardinality > 0:
            self.min = cur.key(kind)
            self.max = cur.key(kind)
        (dict_len,) = cur.take(">i")
        dict_start = 4 + header_len
        bsi_start = dict_start + dict_len
        # the whole dictionary, in code order
        d = _Reader(data, dict_start)
        (dh,) = d.take(">i")
        _, size, offsets_len, chunks_len = d.take(">biii")
        body = dict_start + 4 + dh
        keys_base = body + offsets_len + chunks_len
        if kind == STRING:
            self.keys: Any = []
            for c in range(size):
                (off,) = struct.unpack_from(">i", data, body + 4 * c)
                h = _Reader(data, body + offsets_len + off)
                h.take(">b")
                head = h.key(kind)
                _, key_off, count, a, _ = h.take(">iiiii")
                self.keys.append(head)
                k = _Reader(data, keys_base + key_off + a)
                for _ in range(count):
                    self.keys.append(k.key(kind))
        else:
            self.keys = _fixed_keys(kind, data, body, size, offsets_len, keys_base)
        # the bit slices
        b = _Reader(data, bsi_start)
        (bh,) = b.take(">i")
        _, width, ebm_len, _ = b.take(">bbii")
        index = np.frombuffer(data, dtype=">i4", count=2 * width, offset=b.pos)
        slices_body = bsi_start + 4 + bh
        self.ebm = BitMap.deserialize(data[slices_body : slices_body + ebm_len])
        base = slices_body + ebm_len
        self.slices = [
            BitMap.deserialize(data[base + int(o) : base + int(o) + int(n)])
            for o, n in zip(index[0::2], index[1::2], strict=True)
        ]

    # -- BitSliceIndexBitmap --

    def _eq_code(self, code: int) -> BitMap:
        state = BitMap(self.ebm)
        if not state:
            return BitMap()
        for i, s in enumerate(self.slices):
            if (code >> (i & 31)) & 1:
                state &= s
            else:
                state -= s
        return state

    def _gt_code(self, code: int) -> BitMap:
        if code < 0:
            return BitMap(self.ebm)
        if not self.ebm:
            return BitMap()
        start = 0
        while (code >> start) & 1 and start < 64:
            start += 1
        state: BitMap | None = None
        for i in range(start, len(self.slices)):
            if state is None:
                state = BitMap(self.slices[i])
                continue
            if (code >> (i & 31)) & 1:
                state &= self.slices[i]
            else:
                state |= self.slices[i]
        if state is None:
            return BitMap()
        return state & self.ebm

    def _find(self, key: Any) -> int:
        if isinstance(self.keys, np.ndarray):
            i = int(np.searchsorted(self.keys, key, side="left"))
        else:
            i = bisect.bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            return i
        return -(i + 1)

    def _not(self, found: BitMap) -> BitMap:
        return (BitMap(range(self.rid)) - found) & self.ebm

    # -- RangeBitmap --

    def _eq(self, key: Any) -> BitMap:
        if key == self.min and key == self.max:
            return BitMap(self.ebm)
        if key < self.min or key > self.max:
            return BitMap()
        code = self._find(key)
        return BitMap() if code < 0 else self._eq_code(code)

    def _gte(self, key: Any) -> BitMap:
        if key <= self.min:
            return BitMap(self.ebm)
        if key > self.max:
            return BitMap()
        code = self._find(key)
        return self._gt_code(-code - 2 if code < 0 else code - 1)

    def _gt(self, key: Any) -> BitMap:
        if key < self.min:
            return BitMap(self.ebm)
        if key >= self.max:
            return BitMap()
        code = self._find(key)
        return self._gt_code(-code - 2) if code < 0 else self._gt_code(code)

    def _literals(self, literals: Sequence[Any]) -> list[Any] | None:
        if any(x is None for x in literals):
            return None  # Java's comparator cannot take a null literal
        keys = literal_keys(self._type, self._kind, list(literals))
        if keys is None:
            return None
        order = sort_keys(keys)
        return list(order) if self._kind == STRING else [int(x) for x in order.tolist()]

    def result(self, operation: str, literals: Sequence[Any]) -> BitMap | None:
        """Java's result bitmap, or None where Java gives REMAIN (or cannot tell)."""
        if operation == IS_NULL:
            if self.cardinality <= 0:
                return BitMap([0]) if self.rid > 0 else BitMap()
            return BitMap(range(self.rid)) - self.ebm
        if self.cardinality <= 0:
            return BitMap() if operation in _ANSWERED else None
        if operation == IS_NOT_NULL:
            return BitMap(self.ebm)
        values = self._literals(literals)
        if values is None or operation not in _ANSWERED:
            return None
        if operation in (EQUAL, IN):
            return BitMap().union(*[self._eq(v) for v in values])
        if operation in (NOT_EQUAL, NOT_IN):
            return self._not(BitMap().union(*[self._eq(v) for v in values]))
        if not values:
            return None
        v = values[0]
        if operation == GREATER_THAN:
            return self._gt(v)
        if operation == GREATER_OR_EQUAL:
            return self._gte(v)
        if operation == LESS_OR_EQUAL:
            if v >= self.max:
                return BitMap(self.ebm)
            return BitMap() if v < self.min else self._not(self._gt(v))
        if v > self.max:
            return BitMap(self.ebm)
        return BitMap() if v <= self.min else self._not(self._gte(v))


_ANSWERED = tuple(op for op in OPERATIONS if op != BETWEEN)
