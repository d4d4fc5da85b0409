"""The sort keys of sort compaction (compact/sort.py): z-order bytes and interleaving against a
plain-Python port of Java's ZOrderByteUtils, the Hilbert index against the curve's defining
property (consecutive cells are neighbours), and range assignment against a full sort."""

from __future__ import annotations

import itertools
import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from paimon_pyspark.compact.sort import (
    SortKeys,
    SortOrder,
    hilbert_coordinate,
    hilbert_index,
    interleave_bits,
    zorder_bytes,
)
from paimon_pyspark.types.data_types import AtomicType, BinaryType, CharType, TimestampType

INT = AtomicType("INT")
BIGINT = AtomicType("BIGINT")
DOUBLE = AtomicType("DOUBLE")
STRING = CharType(2147483647)


def java_interleave(columns: list[bytes]) -> bytes:
    """ZOrderByteUtils.interleaveBits, line for line (the oracle)."""
    size = sum(len(c) for c in columns)
    out = bytearray(size)
    source_column, source_byte, source_bit = 0, 0, 7
    interleave_byte, interleave_bit = 0, 7
    while interleave_byte < size:
        bit = (columns[source_column][source_byte] >> source_bit) & 1
        out[interleave_byte] |= bit << interleave_bit
        interleave_bit -= 1
        if interleave_bit == -1:
            interleave_byte += 1
            interleave_bit = 7
        if interleave_byte == size:
            break
        while True:
            source_column += 1
            if source_column == len(columns):
                source_column = 0
                source_bit -= 1
                if source_bit == -1:
                    source_byte += 1
                    source_bit = 7
            if len(columns[source_column]) > source_byte:
                break
    return bytes(out)


def java_long_bytes(v: int) -> bytes:
    """ZOrderByteUtils.longToOrderedBytes."""
    return struct.pack(">Q", (v & (2**64 - 1)) ^ (1 << 63))


def java_double_bytes(v: float) -> bytes:
    """ZOrderByteUtils.doubleToOrderedBytes, quirk included: ``lval >> (Integer.SIZE - 1)``."""
    lval = struct.unpack(">q", struct.pack(">d", v))[0]
    lval ^= (lval >> 31) | -(2**63)
    return struct.pack(">q", lval)


@pytest.mark.parametrize("widths", [[8, 3, 8, 1], [8, 8], [8, 8, 8], [4] * 8, [2] * 9, [5]])
def test_interleave_matches_javas_loop(widths: list[int]) -> None:
    rng = np.random.default_rng(7)
    columns = [rng.integers(0, 256, (50, w), dtype=np.uint8) for w in widths]
    ours = interleave_bits(columns)
    for row in range(50):
        expected = java_interleave([bytes(c[row]) for c in columns])
        assert bytes(ours[row]) == expected


def test_zorder_bytes_of_numbers_are_javas() -> None:
    longs = [0, 1, -1, 2**63 - 1, -(2**63), 42]
    got = zorder_bytes(pa.array(longs, pa.int64()), BIGINT, 8)
    assert [bytes(r) for r in got] == [java_long_bytes(v) for v in longs]
    doubles = [0.0, -0.0, 1.5, -1.5, 1e300, -1e-300, float("inf"), float("-inf")]
    got = zorder_bytes(pa.array(doubles, pa.float64()), DOUBLE, 8)
    assert [bytes(r) for r in got] == [java_double_bytes(v) for v in doubles]


def test_zorder_bytes_of_nulls_strings_and_booleans() -> None:
    ints = zorder_bytes(pa.array([None, 5], pa.int32()), INT, 8)
    assert bytes(ints[0]) == bytes(8) and bytes(ints[1]) == java_long_bytes(5)
    strings = pa.array(["abcdefghij", None, "ab", "", "é"]).slice(0, 5)
    got = [bytes(r) for r in zorder_bytes(strings, STRING, 4)]
    assert got == [b"abcd", bytes(4), b"ab\x00\x00", bytes(4), "é".encode() + b"\x00\x00"]
    sliced = pa.array(["zz", "xy", "abc"]).slice(1)
    assert [bytes(r) for r in zorder_bytes(sliced, STRING, 2)] == [b"xy", b"ab"]
    binary = pa.array([b"\x01\x02\x03", None], pa.binary())
    got = [bytes(r) for r in zorder_bytes(binary, BinaryType(10), 2)]
    assert got == [b"\x01\x02", bytes(2)]
    flags = zorder_bytes(pa.array([True, False, None]), AtomicType("BOOLEAN"), 8)
    assert [bytes(r) for r in flags] == [b"\x81" + bytes(7), bytes(8), bytes(8)]


def test_zorder_of_a_small_grid_is_the_morton_order() -> None:
    cells = list(itertools.product(range(4), range(4)))
    x = pa.array([c[0] for c in cells], pa.int32())
    y = pa.array([c[1] for c in cells], pa.int32())
    keys = interleave_bits([zorder_bytes(x, INT, 8), zorder_bytes(y, INT, 8)])
    order = sorted(range(len(cells)), key=lambda i: bytes(keys[i]))

    def morton(c: tuple[int, int]) -> int:
        return sum(
            ((c[0] >> b) & 1) << (2 * b + 1) | ((c[1] >> b) & 1) << (2 * b) for b in range(2)
        )

    assert [cells[i] for i in order] == sorted(cells, key=morton)


@pytest.mark.parametrize(("dims", "side"), [(2, 8), (3, 4), (4, 2)])
def test_hilbert_order_walks_the_grid_one_neighbour_at_a_time(dims: int, side: int) -> None:
    """Within an aligned block of the curve's space (0 is the middle of a coordinate's
    range, so 0..side-1 is aligned) consecutive cells of a Hilbert curve are neighbours."""
    cells = list(itertools.product(range(side), repeat=dims))
    coords = [
        hilbert_coordinate(pa.array([c[d] for c in cells], pa.int64()), BIGINT) for d in range(dims)
    ]
    keys = hilbert_index(coords)
    assert keys.shape == (len(cells), 8 * dims)
    order = sorted(range(len(cells)), key=lambda i: bytes(keys[i]))
    walk = [cells[i] for i in order]
    for a, b in itertools.pairwise(walk):
        assert sum(abs(p - q) for p, q in zip(a, b, strict=True)) == 1, (a, b)


def test_hilbert_coordinates_keep_each_types_order_with_nulls_last() -> None:
    values = [-(2**63), -5, 0, 7, 2**63 - 1]
    got = hilbert_coordinate(pa.array([*values, None], pa.int64()), BIGINT)
    assert list(got[:-1]) == sorted(got[:-1]) and got[-1] == np.uint64(2**64 - 1)
    doubles = [float("-inf"), -2.5, -0.5, 0.0, 0.5, 3.0, float("inf")]
    got = hilbert_coordinate(pa.array(doubles, pa.float64()), DOUBLE)
    assert all(a < b for a, b in itertools.pairwise(got))
    words = hilbert_coordinate(pa.array(["a", "ab", "b", "ba"]), STRING)
    assert all(a < b for a, b in itertools.pairwise(words))
    ts = pa.array([0, 1_000_000, 5_000_000], pa.timestamp("us"))
    got = hilbert_coordinate(ts, TimestampType(6))
    assert all(a < b for a, b in itertools.pairwise(got))


@pytest.mark.parametrize("strategy", ["order", "zorder"])
def test_ranges_cut_the_sort_where_the_bounds_fall(strategy: str) -> None:
    """Every row of range r sorts before every row of range r + 1, ties and nulls included
    (a row equal to a bound goes after it)."""
    rng = np.random.default_rng(3)
    n = 2_000
    a = rng.integers(0, 50, n).astype(object)
    a[rng.random(n) < 0.05] = None
    rows = pa.table(
        {"a": pa.array(list(a), pa.int64()), "b": pa.array(rng.integers(0, 9, n), pa.int64())}
    )
    keys = SortKeys({"a": BIGINT, "b": BIGINT}, SortOrder(strategy, ("a", "b")))
    rows = keys.with_key(rows)
    ordered = keys.sort(rows)
    bounds = keys.keys_of(ordered).take(pa.array([300, 301, 1_000, 1_700]))
    which = keys.ranges(keys.keys_of(rows), bounds)
    assert set(np.unique(which)) <= set(range(5))
    ranks = np.empty(n, np.int64)
    ranks[pc.sort_indices(rows, sort_keys=keys.sort_keys).to_numpy()] = np.arange(n)
    for r in range(4):
        lower, upper = ranks[which == r], ranks[which == r + 1]
        if len(lower) and len(upper):
            assert lower.max() < upper.min()
    assert len(np.unique(which)) >= 3
