"""The ``bsi`` file index: bit-sliced bitmaps of a numeric column's values.

Mirrors org.apache.paimon.fileindex.bsi.BitSliceIndexBitmapFileIndex over
org.apache.paimon.utils.BitSliceIndexRoaringBitmap. Values become longs (TINYINT to BIGINT,
DATE, TIME, TIMESTAMP in millis up to precision 3 else micros, DECIMAL's unscaled long); the
non-negative ones and the absolute values of the negative ones get a slice set each, with
``min`` 0 (Java's collector starts its minimum at 0) and one slice per bit of the maximum.
Readers answer equality, IN, their negations, ranges and null tests with O'Neil's compare, as
Java's Reader does; an empty result is a SKIP.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from paimon_pyspark.errors import CorruptTableError, UnsupportedOptionError
from paimon_pyspark.spec.file_index.api import (
    EQUAL,
    GREATER_OR_EQUAL,
    GREATER_THAN,
    IN,
    IS_NOT_NULL,
    IS_NULL,
    LESS_OR_EQUAL,
    LESS_THAN,
    NOT_EQUAL,
    NOT_IN,
)
from paimon_pyspark.spec.file_index.bitmap import roaring_size, serialize_bitmap
from paimon_pyspark.spec.file_index.java_keys import (
    ColumnWriter,
    RowsReader,
    literal_keys,
    to_keys,
    unsupported,
)
from paimon_pyspark.spec.java_hash import LONG
from paimon_pyspark.types.data_types import (
    AtomicType,
    DataType,
    DecimalType,
    TimestampType,
    TimeType,
)

VERSION_1 = 1
_LONG_MIN = -(1 << 63)


def _supported(data_type: DataType) -> bool:
    if isinstance(data_type, (DecimalType, TimeType, TimestampType)):
        return True
    return isinstance(data_type, AtomicType) and data_type.name in (
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "DATE",
    )


def create_writer(data_type: DataType, options: Mapping[str, str]) -> BsiWriter:
    if not _supported(data_type):
        raise unsupported("bsi", data_type)
    return BsiWriter(data_type)


def create_reader(data_type: DataType, data: bytes) -> BsiReader:
    if not _supported(data_type):
        raise unsupported("bsi", data_type)
    return BsiReader(data_type, bytes(data))


def _slices_bytes(rows: npt.NDArray[np.int64], values: npt.NDArray[np.int64], top: int) -> bytes:
    """BitSliceIndexRoaringBitmap.Appender.serialize with min 0 and max ``top``."""
    width = top.bit_length()
    out = [struct.pack(">bqq", VERSION_1, 0, top), serialize_bitmap(rows)]
    out.append(struct.pack(">i", width))
    u = values.astype(np.uint64)
    for i in range(width):
        out.append(serialize_bitmap(rows[(u >> np.uint64(i)) & np.uint64(1) == 1]))
    return b"".join(out)


class BsiWriter(ColumnWriter):
    def serialize(self) -> bytes:
        keys = to_keys(self._type, LONG, self.column())
        v = keys.values
        if bool(np.any(keys.valid & (v == _LONG_MIN))):
            raise UnsupportedOptionError(
                f"bsi file index cannot hold {_LONG_MIN} in a {self._type} column "
                "(Java fails on Math.abs(Long.MIN_VALUE))"
            )
        pos = np.nonzero(keys.valid & (v >= 0))[0]
        neg = np.nonzero(keys.valid & (v < 0))[0]
        out = [struct.pack(">bi", VERSION_1, len(keys))]
        for rows, vals in ((pos, v[pos]), (neg, -v[neg])):
            out.append(struct.pack(">?", len(rows) > 0))
            if len(rows):
                out.append(_slices_bytes(rows, vals, int(vals.max())))
        return b"".join(out)


class _Slices:
    """BitSliceIndexRoaringBitmap: ``ebm`` (rows present) and one bitmap per bit of value-min."""

    def __init__(self, lo: int, hi: int, ebm: BitMap, slices: list[BitMap]) -> None:
        self.min, self.max, self.ebm, self.slices = lo, hi, ebm, slices

    def compare(self, op: str, predicate: int) -> BitMap:
        if op == "eq":
            if self.min == self.max == predicate:
                return BitMap(self.ebm)
            if predicate < self.min or predicate > self.max:
                return BitMap()
        elif op == "gte":
            if predicate <= self.min:
                return BitMap(self.ebm)
            if predicate > self.max:
                return BitMap()
        elif op == "gt":
            if predicate < self.min:
                return BitMap(self.ebm)
            if predicate >= self.max:
                return BitMap()
        elif op == "lte":
            if predicate >= self.max:
                return BitMap(self.ebm)
            if predicate < self.min:
                return BitMap()
        elif op == "lt":
            if predicate > self.max:
                return BitMap(self.ebm)
            if predicate <= self.min:
                return BitMap()
        return self._oneil(op, predicate - self.min)

    def _oneil(self, op: str, predicate: int) -> BitMap:
        gt, lt, eq = BitMap(), BitMap(), self.ebm
        for i in range(len(self.slices) - 1, -1, -1):
            if (predicate >> i) & 1:
                lt = lt | (eq - self.slices[i])
                eq = eq & self.slices[i]
            else:
                gt = gt | (eq & self.slices[i])
                eq = eq - self.slices[i]
        eq = self.ebm & eq
        if op == "eq":
            return eq
        if op == "gt":
            return gt & self.ebm
        if op == "lt":
            return lt & self.ebm
        if op == "lte":
            return (lt | eq) & self.ebm
        return (gt | eq) & self.ebm


_EMPTY = _Slices(0, 0, BitMap(), [])


class BsiReader(RowsReader):
    """Java's BitSliceIndexBitmapFileIndex.Reader over one column's bytes."""

    def __init__(self, data_type: DataType, data: bytes) -> None:
        self._type = data_type
        try:
            version, self.row_count = struct.unpack_from(">bi", data, 0)
            if version > VERSION_1:
                raise CorruptTableError(f"bsi file index version {version} is newer than 1")
            pos = 5
            parts = []
            for _ in range(2):
                (present,) = struct.unpack_from(">?", data, pos)
                pos += 1
                if present:
                    part, pos = _read_slices(data, pos)
                    parts.append(part)
                else:
                    parts.append(_EMPTY)
        except (struct.error, ValueError) as e:
            raise CorruptTableError(f"bsi file index is corrupt: {e}") from e
        self.positive, self.negative = parts

    def _literals(self, literals: Sequence[Any]) -> list[int] | None:
        if any(x is None for x in literals):
            return None  # Java cannot map a null literal (NullPointerException)
        keys = literal_keys(self._type, LONG, list(literals))
        return None if keys is None else [int(x) for x in keys.values.tolist()]

    def _eq(self, value: int) -> BitMap:
        return (
            self.negative.compare("eq", -value) if value < 0 else self.positive.compare("eq", value)
        )

    def _not_null(self) -> BitMap:
        return self.positive.ebm | self.negative.ebm

    def result(self, operation: str, literals: Sequence[Any]) -> BitMap | None:
        """Java's result bitmap, or None where Java's reader gives REMAIN (or cannot tell)."""
        if operation == IS_NULL:
            return BitMap(range(self.row_count)) - self._not_null()
        if operation == IS_NOT_NULL:
            return self._not_null()
        values = self._literals(literals)
        if values is None:
            return None
        p, n = self.positive, self.negative
        if operation in (EQUAL, IN):
            return BitMap().union(*[self._eq(v) for v in values])
        if operation in (NOT_EQUAL, NOT_IN):
            return self._not_null() - BitMap().union(*[self._eq(v) for v in values])
        if not values:
            return None
        v = values[0]
        if operation == LESS_THAN:
            return n.compare("gt", -v) if v < 0 else p.compare("lt", v) | n.ebm
        if operation == LESS_OR_EQUAL:
            return n.compare("gte", -v) if v < 0 else p.compare("lte", v) | n.ebm
        if operation == GREATER_THAN:
            return p.ebm | n.compare("lt", -v) if v < 0 else p.compare("gt", v)
        if operation == GREATER_OR_EQUAL:
            return p.ebm | n.compare("lte", -v) if v < 0 else p.compare("gte", v)
        return None


def _read_slices(data: bytes, pos: int) -> tuple[_Slices, int]:
    version, lo, hi = struct.unpack_from(">bqq", data, pos)
    if version > VERSION_1:
        raise CorruptTableError(f"bsi slices version {version} is newer than 1")
    pos += 17
    ebm, pos = _read_bitmap(data, pos)
    (count,) = struct.unpack_from(">i", data, pos)
    pos += 4
    slices = []
    for _ in range(count):
        bm, pos = _read_bitmap(data, pos)
        slices.append(bm)
    return _Slices(lo, hi, ebm, slices), pos


def _read_bitmap(data: bytes, pos: int) -> tuple[BitMap, int]:
    bm = BitMap.deserialize(data[pos:])
    return bm, pos + roaring_size(data, pos)
