"""Deletion vectors against the index files Java wrote (../shared/spec/golden/dvindex-*)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec.deletion_vector import (
    DeletionVector,
    decode_index_file,
    encode_index_file,
)
from paimon_pyspark.spec.manifest import DeletionVectorRange

GOLDEN = Path(__file__).resolve().parents[3].parent / "shared" / "spec" / "golden"


@pytest.mark.parametrize(
    ("name", "bitmap64", "lengths"),
    [("dvindex-32", False, (24, 22)), ("dvindex-64", True, (44, 42))],
)
def test_java_index_file_decodes_and_our_encoding_is_byte_identical(
    name: str, bitmap64: bool, lengths: tuple[int, int]
) -> None:
    java = (GOLDEN / name).read_bytes()
    ours, ranges = encode_index_file(
        [("f1", DeletionVector.of([2, 3], bitmap64)), ("f2", DeletionVector.of([1], bitmap64))]
    )
    assert ours == java
    assert [r.length for r in ranges] == list(lengths)
    assert [r.cardinality for r in ranges] == [2, 1]
    decoded = decode_index_file(java, ranges, name)
    assert decoded["f1"].positions().tolist() == [2, 3]
    assert decoded["f2"].positions().tolist() == [1]
    assert decoded["f1"].bitmap64 is bitmap64


def test_64_bit_positions_above_2_pow_32_keep_java_layout_with_empty_gaps() -> None:
    positions = [5, 2**33 + 7, 2**35]
    dv = DeletionVector.of(positions, bitmap64=True)
    data, length = dv.serialize()
    assert length == len(data)
    payload = data[4:-4]
    # magic, then one 32-bit bitmap per high key 0..8 (Java's OptimizedRoaringBitmap64)
    assert struct.unpack_from("<q", payload, 4)[0] == 9
    back = DeletionVector.deserialize(data, length)
    assert back.positions().tolist() == positions
    assert back == dv


def test_32_bit_vector_refuses_a_position_past_int_max() -> None:
    with pytest.raises(CorruptTableError, match="bitmap64"):
        DeletionVector.of([2**31])


def test_keep_mask_of_a_slice() -> None:
    dv = DeletionVector.of(np.array([0, 4, 9, 10]))
    assert dv.keep_mask(5, start=4).tolist() == [False, True, True, True, True]
    assert dv.keep_mask(3, start=8).tolist() == [True, False, False]


def test_large_vector_round_trips_and_run_optimizes() -> None:
    dv = DeletionVector.of(np.arange(0, 1_000_000))
    data, length = dv.serialize()
    assert len(data) < 300  # 16 run containers, not 16 bitsets of 8 kB
    assert DeletionVector.deserialize(data, length).cardinality == 1_000_000


@pytest.mark.parametrize("bitmap64", [False, True])
def test_corrupt_vectors_are_typed_errors(bitmap64: bool) -> None:
    data, length = DeletionVector.of([1, 2], bitmap64).serialize()
    flipped = bytearray(data)
    flipped[10] ^= 0xFF
    with pytest.raises(CorruptTableError, match="CRC32"):
        DeletionVector.deserialize(bytes(flipped), length)
    with pytest.raises(CorruptTableError, match="the index says"):
        DeletionVector.deserialize(data, length + 1)
    with pytest.raises(CorruptTableError, match="cut short|claims"):
        DeletionVector.deserialize(data[:6], length)
    with pytest.raises(CorruptTableError, match="version"):
        decode_index_file(b"\x02" + data, [DeletionVectorRange("f", 1, length)], "x")
