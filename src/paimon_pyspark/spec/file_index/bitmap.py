"""The ``bitmap`` file index: one roaring bitmap of row positions per distinct value.

Mirrors org.apache.paimon.fileindex.bitmap.BitmapFileIndex with BitmapFileIndexMeta (V1) and
BitmapFileIndexMetaV2 (V2, Java 1.4.2's default; per-column options ``version`` and
``index-block-size``, default 16kb). A value seen once stores no bitmap: its entry's offset is
``-1 - row``. The bitmaps follow Java's ``HashMap`` order of the values (java_hashmap.py), so the
bytes equal Java's. V2 adds a sorted dictionary in blocks of at most ``index-block-size`` bytes.

Readers answer equality, IN, their negations and null tests as Java's Reader does: a negation
flips the bitmap over all rows (null rows count as not equal), an empty result is a SKIP.
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

from paimon_pyspark.errors import CorruptTableError, OptionError
from paimon_pyspark.spec.file_index.api import (
    EQUAL,
    IN,
    IS_NOT_NULL,
    IS_NULL,
    NOT_EQUAL,
    NOT_IN,
)
from paimon_pyspark.spec.file_index.java_keys import (
    BIG_ENDIAN,
    FIXED_SIZE,
    ColumnWriter,
    Keys,
    java_int,
    key_kind,
    literal_keys,
    sort_keys,
    to_keys,
    unsupported,
)
from paimon_pyspark.spec.java_hash import BOOLEAN, STRING, hash_codes
from paimon_pyspark.spec.java_hashmap import iteration_order
from paimon_pyspark.spec.java_quantity import parse_memory_size
from paimon_pyspark.types.data_types import DataType

VERSION_1 = 1
VERSION_2 = 2
VERSION = "version"
INDEX_BLOCK_SIZE = "index-block-size"
DEFAULT_BLOCK_SIZE = "16kb"


def create_writer(data_type: DataType, options: Mapping[str, str]) -> BitmapWriter:
    kind = key_kind(data_type)
    if kind is None:
        raise unsupported("bitmap", data_type)
    version = java_int(options[VERSION], f"bitmap option '{VERSION}'") if VERSION in options else 2
    if version not in (VERSION_1, VERSION_2):
        raise OptionError(f"bitmap option '{VERSION}' = '{options[VERSION]}': Java writes 1 or 2")
    block = parse_memory_size(options.get(INDEX_BLOCK_SIZE, DEFAULT_BLOCK_SIZE), INDEX_BLOCK_SIZE)
    return BitmapWriter(data_type, kind, version, block)


def create_reader(data_type: DataType, data: bytes) -> BitmapReader:
    kind = key_kind(data_type)
    if kind is None:
        raise unsupported("bitmap", data_type)
    return BitmapReader(data_type, kind, bytes(data))


def serialize_bitmap(rows: npt.NDArray[Any]) -> bytes:
    """``RoaringBitmap32.serialize``: run-optimized, in the portable roaring format."""
    bm = BitMap(np.asarray(rows, dtype=np.uint32))
    bm.run_optimize()
    return bytes(bm.serialize())


class BitmapWriter(ColumnWriter):
    def __init__(self, data_type: DataType, kind: str, version: int, block_size: int) -> None:
        super().__init__(data_type)
        self._kind = kind
        self._version = version
        self._block_size = block_size

    def serialize(self) -> bytes:
        keys = to_keys(self._type, self._kind, self.column())
        rows = len(keys)
        distinct, codes = _dictionary(keys)
        d = len(distinct)
        valid_codes = codes[codes >= 0]
        counts = np.bincount(valid_codes, minlength=d) if d else np.zeros(0, np.int64)
        grouped = np.argsort(codes, kind="stable")
        null_rows = grouped[: rows - len(valid_codes)]
        group_start = rows - len(valid_codes) + np.concatenate(([0], np.cumsum(counts)[:-1]))

        null_bytes = serialize_bitmap(null_rows)
        has_null = len(null_rows) > 0
        null_offset = -1 - int(null_rows[0]) if len(null_rows) == 1 else 0
        offset = len(null_bytes) if len(null_rows) > 1 else 0

        valid_rows = np.nonzero(keys.valid)[0]
        after_last = d > 0 and int(valid_rows[-1]) > int(grouped[group_start[d - 1]])
        order = iteration_order(
            hash_codes(distinct.kind, distinct.values), sort_keys(distinct), after_last
        )
        offsets = np.zeros(d, dtype=np.int64)
        lengths = np.full(d, -1, dtype=np.int64)
        body: list[bytes] = [null_bytes] if len(null_rows) > 1 else []
        counts_l = counts.tolist()
        starts_l = group_start.tolist()
        for c in order.tolist():
            start = starts_l[c]
            if counts_l[c] == 1:
                offsets[c] = -1 - int(grouped[start])
                continue
            data = serialize_bitmap(grouped[start : start + counts_l[c]])  # rows ascend
            body.append(data)
            offsets[c] = offset
            lengths[c] = len(data)
            offset += len(data)

        out = [struct.pack(">biib", self._version, rows, d, has_null)]
        if self._version == VERSION_1:
            if has_null:
                out.append(struct.pack(">i", null_offset))
            out.append(_entries(distinct, order, [offsets[order]]))
        else:
            if has_null:
                out.append(struct.pack(">ii", null_offset, len(null_bytes)))
            out.append(self._v2_dictionary(distinct, offsets, lengths))
        return b"".join(out + body)

    def _check_entry(self, entry: int) -> None:
        if 4 + entry > self._block_size:
            raise OptionError(
                f"bitmap option '{INDEX_BLOCK_SIZE}' = {self._block_size} bytes cannot hold "
                f"one entry of {entry} bytes (Java fails with 'index fail')"
            )

    def _v2_dictionary(
        self, distinct: Keys, offsets: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]
    ) -> bytes:
        """BitmapFileIndexMetaV2.serialize after the null fields: blocks of sorted entries."""
        cmp = sort_keys(distinct)
        d = len(distinct)
        if distinct.kind == STRING:
            ordered = np.asarray(sorted(range(d), key=cmp.__getitem__), dtype=np.int64)
            sizes = [4 + len(b) for b in cmp]
        else:
            ordered = np.argsort(cmp, kind="stable").astype(np.int64)
            sizes = []
        blocks: list[slice] = []  # ranges of ``ordered``
        block_bytes: list[int] = []
        if distinct.kind != STRING and d:
            entry = 8 + FIXED_SIZE[distinct.kind]
            self._check_entry(entry)
            per = (self._block_size - 4) // entry
            blocks = [slice(i, min(i + per, d)) for i in range(0, d, per)]
            block_bytes = [4 + entry * (b.stop - b.start) for b in blocks]
        used = 4
        for i, c in enumerate(ordered.tolist() if distinct.kind == STRING else []):
            entry = 8 + sizes[c]
            self._check_entry(entry)
            if blocks and used + entry <= self._block_size:
                blocks[-1] = slice(blocks[-1].start, i + 1)
                used += entry
                continue
            if blocks:
                block_bytes.append(used)
            blocks.append(slice(i, i + 1))
            used = 4 + entry
        if blocks and distinct.kind == STRING:
            block_bytes.append(used)
        block_offsets = np.concatenate(([0], np.cumsum(block_bytes)[:-1])).astype(np.int64)
        firsts = ordered[[b.start for b in blocks]] if blocks else np.zeros(0, np.int64)
        out = [struct.pack(">i", len(blocks))]
        out.append(_entries(distinct, firsts, [block_offsets]))
        out.append(struct.pack(">i", int(sum(block_bytes))))
        for b in blocks:
            members = ordered[b]
            out.append(struct.pack(">i", b.stop - b.start))
            out.append(_entries(distinct, members, [offsets[members], lengths[members]]))
        return b"".join(out)


def _dictionary(keys: Keys) -> tuple[Keys, npt.NDArray[np.int64]]:
    """Distinct keys in first-occurrence order, and each row's code (-1 for null)."""
    if keys.kind == STRING:
        arr = keys.values
        if not keys.valid.all():
            arr = pc.if_else(pa.array(keys.valid), arr, pa.scalar(None, arr.type))
    else:
        arr = pa.array(keys.values, mask=~keys.valid)
    encoded = pc.dictionary_encode(arr)
    codes = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
    dictionary = encoded.dictionary
    values: Any = (
        dictionary
        if keys.kind == STRING
        else np.asarray(dictionary.to_numpy(zero_copy_only=False), dtype=keys.values.dtype)
    )
    return Keys(keys.kind, values, np.ones(len(dictionary), np.bool_)), codes


def _entries(
    distinct: Keys, which: npt.NDArray[np.int64], ints: Sequence[npt.NDArray[np.int64]]
) -> bytes:
    """For each key position in ``which``: the key as Java's DataOutput writes it, then the
    given big-endian ints (offset, or offset and length)."""
    n = len(which)
    if n == 0:
        return b""
    if distinct.kind == STRING:
        raw = distinct.values.take(pa.array(which)).to_pylist()
        cols = [np.asarray(x, dtype=np.int64).tolist() for x in ints]
        fmt = ">" + "i" * len(cols)
        return b"".join(
            struct.pack(">i", len(b)) + b + struct.pack(fmt, *vals)
            for b, *vals in zip(raw, *cols, strict=True)
        )
    key_dtype = "u1" if distinct.kind == BOOLEAN else BIG_ENDIAN[distinct.kind]
    fields = [("k", key_dtype)] + [(f"i{j}", ">i4") for j in range(len(ints))]
    rec = np.zeros(n, dtype=np.dtype(fields))
    rec["k"] = np.asarray(distinct.values)[which].astype(key_dtype)
    for j, x in enumerate(ints):
        rec[f"i{j}"] = np.asarray(x, dtype=np.int64)
    return rec.tobytes()


class _Cursor:
    def __init__(self, data: bytes, pos: int) -> None:
        self.data = data
        self.pos = pos

    def take(self, fmt: str) -> tuple[Any, ...]:
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return out

    def key(self, kind: str) -> Any:
        if kind == STRING:
            (n,) = self.take(">i")
            b = self.data[self.pos : self.pos + n]
            self.pos += n
            return b
        if kind == BOOLEAN:
            return self.take(">b")[0] != 0
        v = np.frombuffer(self.data, dtype=BIG_ENDIAN[kind], count=1, offset=self.pos)[0]
        self.pos += FIXED_SIZE[kind]
        return _python_key(kind, v)


def _python_key(kind: str, v: Any) -> Any:
    """A hashable key equal for equal Java keys (floats compared by canonical bits)."""
    if kind == STRING:
        return bytes(v)
    if kind == BOOLEAN:
        return bool(v)
    if kind == "float":
        bits = int(np.uint32(v))
        return 0x7FC00000 if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF else bits
    if kind == "double":
        bits = int(np.uint64(v))
        exp = 0x7FF0000000000000
        return 0x7FF8000000000000 if (bits & exp) == exp and bits & 0xFFFFFFFFFFFFF else bits
    return int(v)


def _sortable(kind: str, key: Any) -> Any:
    """A Python key (as ``_python_key`` gives it) as a value ordered like Java's compareTo."""
    if kind in (STRING, BOOLEAN):
        return key
    if kind in ("float", "double"):
        values = np.asarray([key], dtype=np.uint32 if kind == "float" else np.uint64)
        return int(sort_keys(Keys(kind, values, np.ones(1, np.bool_)))[0])
    return key


def _read_entries(
    kind: str, data: bytes, pos: int, count: int, n_ints: int
) -> tuple[list[Any], list[npt.NDArray[np.int64]], int]:
    """``count`` entries of a key and ``n_ints`` big-endian ints each: the keys (as
    ``_python_key`` gives them), the int columns, and the position after them."""
    if kind == STRING:
        cur = _Cursor(data, pos)
        keys: list[Any] = []
        rows: list[tuple[Any, ...]] = []
        for _ in range(count):
            keys.append(cur.key(kind))
            rows.append(cur.take(">" + "i" * n_ints))
        cols = np.asarray(rows, dtype=np.int64).reshape(count, n_ints)
        return keys, [cols[:, j] for j in range(n_ints)], cur.pos
    key_dtype = "u1" if kind == BOOLEAN else BIG_ENDIAN[kind]
    dtype = np.dtype([("k", key_dtype)] + [(f"i{j}", ">i4") for j in range(n_ints)])
    rec = np.frombuffer(data, dtype=dtype, count=count, offset=pos)
    raw = rec["k"]
    if kind == BOOLEAN:
        keys = (raw != 0).tolist()
    elif kind in ("float", "double"):
        keys = [_python_key(kind, v) for v in raw.tolist()]
    else:
        keys = raw.astype(np.int64).tolist()
    ints = [rec[f"i{j}"].astype(np.int64) for j in range(n_ints)]
    return keys, ints, pos + dtype.itemsize * count


def roaring_size(data: bytes, pos: int) -> int:
    """Bytes of the portable roaring bitmap at ``pos`` (the format RoaringBitmap serializes)."""
    (cookie,) = struct.unpack_from("<I", data, pos)
    if cookie & 0xFFFF == 12347:
        n = (cookie >> 16) + 1
        run_flags = data[pos + 4 : pos + 4 + (n + 7) // 8]
        p = pos + 4 + (n + 7) // 8
        has_offsets = n >= 4
    elif cookie == 12346:
        (n,) = struct.unpack_from("<I", data, pos + 4)
        run_flags = b""
        p = pos + 8
        has_offsets = True
    else:
        raise CorruptTableError(f"not a roaring bitmap (cookie {cookie})")
    header = np.frombuffer(data, dtype="<u2", count=2 * n, offset=p)
    cards = header[1::2].astype(np.int64) + 1
    p += 4 * n
    if has_offsets:
        p += 4 * n
    for i in range(n):
        if run_flags and run_flags[i // 8] >> (i % 8) & 1:
            (runs,) = struct.unpack_from("<H", data, p)
            p += 2 + 4 * runs
        elif cards[i] > 4096:
            p += 8192
        else:
            p += 2 * int(cards[i])
    return int(p - pos)


class BitmapReader:
    """Java's BitmapFileIndex.Reader over one column's bytes (V1 or V2)."""

    def __init__(self, data_type: DataType, kind: str, data: bytes) -> None:
        self._type = data_type
        self._kind = kind
        self._data = data
        try:
            self._parse()
        except (struct.error, IndexError, ValueError) as e:
            raise CorruptTableError(f"bitmap file index is corrupt: {e}") from e

    def _parse(self) -> None:
        kind, data = self._kind, self._data
        cur = _Cursor(data, 0)
        (version,) = cur.take(">b")
        if version not in (VERSION_1, VERSION_2):
            raise CorruptTableError(f"bitmap file index version {version} is not 1 or 2")
        row_count, count, has_null = cur.take(">ii?")
        self.row_count: int = row_count
        self.has_null = bool(has_null)
        self.null_offset = 0
        self.null_length = -1
        self.entries: dict[Any, tuple[int, int]] = {}
        self._block_keys: list[Any] = []  # V2: each block's first key, in sort order
        self._block_offsets: list[int] = []
        if version == VERSION_1:
            if self.has_null:
                (self.null_offset,) = cur.take(">i")
            keys, ints, cur.pos = _read_entries(kind, data, cur.pos, count, 1)
            self.entries = {k: (o, -1) for k, o in zip(keys, ints[0].tolist(), strict=True)}
            self.body_start = cur.pos
            return
        if self.has_null:
            self.null_offset, self.null_length = cur.take(">ii")
        (blocks,) = cur.take(">i")
        keys, ints, cur.pos = _read_entries(kind, data, cur.pos, blocks, 1)
        self._block_keys = [_sortable(kind, k) for k in keys]
        self._block_offsets = ints[0].tolist()
        self._parsed: set[int] = set()
        (body_offset,) = cur.take(">i")
        self._index_start = cur.pos
        self.body_start = self._index_start + body_offset

    def _entry(self, key: Any) -> tuple[int, int] | None:
        """The (offset, length) of a key's bitmap; V2 reads only the block that may hold it."""
        if self._block_keys:
            b = bisect.bisect_right(self._block_keys, _sortable(self._kind, key)) - 1
            if b >= 0 and b not in self._parsed:
                self._parsed.add(b)
                pos = self._index_start + self._block_offsets[b]
                (n,) = struct.unpack_from(">i", self._data, pos)
                keys, ints, _ = _read_entries(self._kind, self._data, pos + 4, n, 2)
                for k, o, ln in zip(keys, ints[0].tolist(), ints[1].tolist(), strict=True):
                    self.entries[k] = (o, ln)
        return self.entries.get(key)

    def _cardinality(self, offset: int, length: int) -> int:
        if offset < 0:
            return 1
        start = self.body_start + offset
        if length < 0:
            length = roaring_size(self._data, start)
        return len(BitMap.deserialize(self._data[start : start + length]))

    def _null_cardinality(self) -> int:
        return self._cardinality(self.null_offset, self.null_length) if self.has_null else 0

    def _union_cardinality(self, literals: Sequence[Any]) -> int | None:
        """Rows holding any of ``literals`` (None stands for null, as Java maps it), or None
        when a literal does not fit the column type."""
        values = [x for x in literals if x is not None]
        total = self._null_cardinality() if len(values) < len(literals) else 0
        if not values:
            return total
        keys = literal_keys(self._type, self._kind, values)
        if keys is None:
            return None
        seen = set()
        raw = keys.values.to_pylist() if self._kind == STRING else keys.values.tolist()
        for v in raw:
            k = _python_key(self._kind, v)
            if k in seen:
                continue
            seen.add(k)
            entry = self._entry(k)
            if entry is not None:
                total += self._cardinality(*entry)
        return total

    def may_match(self, operation: str, literals: Sequence[Any]) -> bool:
        if operation in (EQUAL, IN):
            card = self._union_cardinality(literals)
            return card is None or card > 0
        if operation in (NOT_EQUAL, NOT_IN):
            card = self._union_cardinality(literals)
            return card is None or card < self.row_count
        if operation == IS_NULL:
            return self.has_null
        if operation == IS_NOT_NULL:
            return self._null_cardinality() < self.row_count
        return True
