"""Deletion vectors: the deleted row positions of one data file, and Java's bytes for them.

Mirrors org.apache.paimon.deletionvectors.{BitmapDeletionVector, Bitmap64DeletionVector,
DeletionVector, DeletionFileWriter}. One vector serializes as a big-endian int32 length, the
payload and a big-endian CRC32 of the payload. The payload is a magic number and a
RoaringBitmap in the portable format (run-optimized first, as Java does):

- 32-bit (default): big-endian magic 1581511376 and one 32-bit bitmap. The length recorded in
  the index manifest (``DeletionVectorRange.length``) is the payload's.
- 64-bit (``deletion-vectors.bitmap64``): little-endian magic 1681511377, then the 64-bit
  portable format of Java's OptimizedRoaringBitmap64: a little-endian int64 count of 32-bit
  bitmaps, then for every high key from 0 to the highest, empty ones included, the key as a
  little-endian int32 and that 32-bit bitmap. The recorded length is the whole serialization,
  length and CRC included.

An index file is the version byte 1 followed by serialized vectors back to back. Pure: no I/O.
"""

from __future__ import annotations

import array
import struct
import zlib
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec.manifest import DeletionVectorRange

BITMAP32_MAGIC = 1581511376
BITMAP64_MAGIC = 1681511377
INDEX_FILE_VERSION = 1
_MAX_32 = 2**31 - 1
"""Java's RoaringBitmap32 holds positions up to Integer.MAX_VALUE."""

U64 = npt.NDArray[np.uint64]


class DeletionVector:
    """Deleted row positions of one data file, 32-bit or 64-bit as the table's option says."""

    __slots__ = ("_high", "bitmap64")

    def __init__(self, bitmap64: bool = False) -> None:
        self.bitmap64 = bitmap64
        self._high: dict[int, BitMap] = {}
        """32-bit bitmaps by the high half of a position (only 0 for a 32-bit vector)."""

    @classmethod
    def of(cls, positions: npt.ArrayLike, bitmap64: bool = False) -> DeletionVector:
        dv = cls(bitmap64)
        dv.delete(positions)
        return dv

    def delete(self, positions: npt.ArrayLike) -> None:
        """Mark ``positions`` (row numbers in the file, from 0) deleted."""
        pos = np.asarray(positions, dtype=np.int64).ravel()
        if pos.size == 0:
            return
        if int(pos.min()) < 0:
            raise CorruptTableError(f"A deletion vector got a negative row position {pos.min()}.")
        if not self.bitmap64 and int(pos.max()) > _MAX_32:
            raise CorruptTableError(
                "A 32-bit deletion vector holds row positions up to 2147483647, got "
                f"{int(pos.max())}; set 'deletion-vectors.bitmap64' = 'true'."
            )
        upos = pos.astype(np.uint64)
        high = (upos >> np.uint64(32)).astype(np.uint32)
        low = (upos & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        highs = np.unique(high).tolist()
        for h in highs:
            part = low if len(highs) == 1 else low[high == h]
            bm = self._high.get(h)
            if bm is None:
                self._high[h] = _bitmap(part)
            else:
                bm |= _bitmap(part)

    def merge(self, other: DeletionVector) -> None:
        for h, bm in other._high.items():
            mine = self._high.get(h)
            self._high[h] = BitMap(bm) if mine is None else mine | bm

    def is_deleted(self, position: int) -> bool:
        bm = self._high.get(position >> 32)
        return bm is not None and (position & 0xFFFFFFFF) in bm

    @property
    def cardinality(self) -> int:
        return sum(len(bm) for bm in self._high.values())

    def is_empty(self) -> bool:
        return self.cardinality == 0

    def positions(self) -> U64:
        """The deleted positions, ascending."""
        parts = [
            np.frombuffer(self._high[h].to_array(), dtype=np.uint32).astype(np.uint64)
            + np.uint64(h << 32)
            for h in sorted(self._high)
        ]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)

    def keep_mask(self, row_count: int, start: int = 0) -> npt.NDArray[np.bool_]:
        """True for each row of ``start .. start + row_count`` that is not deleted."""
        mask = np.ones(row_count, dtype=np.bool_)
        pos = self.positions()
        if pos.size:
            lo, hi = np.searchsorted(pos, [start, start + row_count])
            mask[(pos[lo:hi] - np.uint64(start)).astype(np.int64)] = False
        return mask

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeletionVector):
            return NotImplemented
        return self.bitmap64 == other.bitmap64 and bool(
            np.array_equal(self.positions(), other.positions())
        )

    def __hash__(self) -> int:  # a mutable value: equal by content, not hashable by it
        return id(self)

    def __repr__(self) -> str:
        kind = "64" if self.bitmap64 else "32"
        return f"DeletionVector(bitmap{kind}, {self.cardinality} deleted)"

    # --- Java's bytes ------------------------------------------------------------------------

    def serialize(self) -> tuple[bytes, int]:
        """Java's ``serializeTo`` bytes, and the length it returns (what the index records)."""
        if self.bitmap64:
            payload = struct.pack("<i", BITMAP64_MAGIC) + self._bitmap64_bytes()
        else:
            bm = self._high.get(0, BitMap())
            payload = struct.pack(">i", BITMAP32_MAGIC) + _portable32(bm)
        data = struct.pack(">i", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload))
        return data, len(data) if self.bitmap64 else len(payload)

    def _bitmap64_bytes(self) -> bytes:
        top = max((h for h, bm in self._high.items() if len(bm)), default=-1)
        out = [struct.pack("<q", top + 1)]
        for h in range(top + 1):
            out.append(struct.pack("<i", h))
            out.append(_portable32(self._high.get(h, BitMap())))
        return b"".join(out)

    @classmethod
    def deserialize(
        cls, data: bytes | memoryview, expected_length: int | None = None, where: str = ""
    ) -> DeletionVector:
        """One serialized vector (Java's ``DeletionVector.read``); ``expected_length``: the
        recorded length, checked as Java checks it."""
        at = f" in {where}" if where else ""
        view = memoryview(data)
        if len(view) < 8:
            raise CorruptTableError(f"A deletion vector{at} is cut short ({len(view)} bytes).")
        (length,) = struct.unpack_from(">i", view, 0)
        if length < 4 or 4 + length + 4 > len(view):
            raise CorruptTableError(
                f"A deletion vector{at} claims {length} bytes, {len(view)} are there."
            )
        payload = bytes(view[4 : 4 + length])
        (crc,) = struct.unpack_from(">I", view, 4 + length)
        if crc != zlib.crc32(payload):
            raise CorruptTableError(f"A deletion vector{at} fails its CRC32 check.")
        if struct.unpack_from(">i", payload)[0] == BITMAP32_MAGIC:
            if expected_length is not None and length != expected_length:
                raise CorruptTableError(
                    f"A deletion vector{at} has {length} bytes, the index says {expected_length}."
                )
            dv = cls(False)
            try:
                bm = BitMap.deserialize(payload[4:])
            except Exception as error:
                raise CorruptTableError(f"A deletion vector{at} is not a bitmap: {error}") from None
            if len(bm):
                dv._high[0] = bm
            return dv
        if struct.unpack_from("<i", payload)[0] == BITMAP64_MAGIC:
            if expected_length is not None and length != expected_length - 8:
                raise CorruptTableError(
                    f"A deletion vector{at} has {length + 8} bytes, the index says "
                    f"{expected_length}."
                )
            return cls._from_bitmap64(payload[4:], at)
        raise CorruptTableError(
            f"A deletion vector{at} starts with magic number "
            f"{struct.unpack_from('>i', payload)[0]}, neither {BITMAP32_MAGIC} (32-bit) nor "
            f"{BITMAP64_MAGIC} (64-bit)."
        )

    @classmethod
    def _from_bitmap64(cls, data: bytes, at: str) -> DeletionVector:
        dv = cls(True)
        try:
            (count,) = struct.unpack_from("<q", data, 0)
            offset = 8
            for _ in range(count):
                (key,) = struct.unpack_from("<i", data, offset)
                offset += 4
                bm = BitMap.deserialize(data[offset:])
                offset += _portable_size(bm)
                if len(bm):
                    dv._high[key & 0xFFFFFFFF] = bm
        except CorruptTableError:
            raise
        except Exception as error:
            raise CorruptTableError(
                f"A 64-bit deletion vector{at} is unreadable: {error}"
            ) from None
        return dv


def encode_index_file(
    vectors: Iterable[tuple[str, DeletionVector]],
) -> tuple[bytes, tuple[DeletionVectorRange, ...]]:
    """One index file of ``vectors`` (data file name, vector) in their order, and its ranges."""
    serialized = []
    for name, dv in vectors:
        data, length = dv.serialize()
        serialized.append((name, data, length, dv.cardinality))
    return index_file_bytes(serialized)


def index_file_bytes(
    vectors: Iterable[tuple[str, bytes, int, int]],
) -> tuple[bytes, tuple[DeletionVectorRange, ...]]:
    """An index file of vectors already serialized: (data file name, ``serialize()`` bytes,
    recorded length, cardinality) each, in their order; the file's bytes and ranges."""
    out = [bytes([INDEX_FILE_VERSION])]
    offset = 1
    ranges = []
    for name, data, length, cardinality in vectors:
        ranges.append(DeletionVectorRange(name, offset, length, cardinality))
        out.append(data)
        offset += len(data)
    return b"".join(out), tuple(ranges)


def check_index_version(data: bytes | memoryview, where: str) -> None:
    if len(data) < 1 or data[0] != INDEX_FILE_VERSION:
        got = data[0] if len(data) else "nothing"
        raise CorruptTableError(
            f"Deletion-vector index file {where} starts with version {got}, "
            f"not {INDEX_FILE_VERSION}."
        )


def decode_index_file(
    data: bytes, ranges: Sequence[DeletionVectorRange], where: str
) -> dict[str, DeletionVector]:
    """Every vector of one index file by data file name (Java's ``readAllDeletionVectors``)."""
    check_index_version(data, where)
    view = memoryview(data)
    return {
        r.data_file_name: DeletionVector.deserialize(
            view[r.offset :], r.length, f"{where} for {r.data_file_name}"
        )
        for r in ranges
    }


def _bitmap(low: npt.NDArray[np.uint32]) -> BitMap:
    """A bitmap of ``low``, through an ``array.array`` (pyroaring takes it 25x faster than a
    numpy array, which it iterates element by element)."""
    return BitMap(array.array("I", np.ascontiguousarray(low, dtype=np.uint32).tobytes()))


def _portable32(bm: BitMap) -> bytes:
    bm = BitMap(bm)
    bm.run_optimize()
    data: bytes = bm.serialize()
    return data


def _portable_size(bm: BitMap) -> int:
    """Bytes of ``bm`` as it was read, so a 64-bit vector's next key is found."""
    return len(bm.serialize())
