"""The bitmap, bsi and range-bitmap file index codecs: round trips and Java's keep/skip rules.

Each reader is held against the rule Java's reader follows, evaluated over the column's rows:
bitmap answers equality, IN and null tests (a negation keeps a file with any row not equal,
null rows included); bsi and range-bitmap also answer ranges and BETWEEN, over non-null rows.
Java's own bytes and verdicts are in tests/interop/test_file_index_codecs_java.py.
"""

from __future__ import annotations

import datetime
import decimal
import random
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_pyspark.errors import CorruptTableError, OptionError, UnsupportedOptionError
from paimon_pyspark.spec import murmur
from paimon_pyspark.spec.file_index import create_reader, create_writer
from paimon_pyspark.spec.file_index.bitmap import roaring_size
from paimon_pyspark.spec.file_index.java_keys import to_keys
from paimon_pyspark.spec.java_hash import STRING, hash_codes
from paimon_pyspark.spec.java_hashmap import _replay, iteration_order, spread
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    AtomicType,
    DataType,
    DecimalType,
    TimestampType,
    TimeType,
)
from paimon_pyspark.types.data_types import (
    STRING as STRING_TYPE,
)

INDEXES = ("bitmap", "bsi", "range-bitmap")
RANGE_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "less_than": lambda v, x: v < x,
    "less_or_equal": lambda v, x: v <= x,
    "greater_than": lambda v, x: v > x,
    "greater_or_equal": lambda v, x: v >= x,
}


def _build(index: str, t: DataType, values: list[Any], opts: dict[str, str] | None = None) -> Any:
    writer = create_writer(index, t, opts or {})
    writer.write(pa.array(values, to_arrow_type(t)))
    reader = create_reader(index, t, writer.serialize())
    assert reader is not None
    return reader


def _expected(index: str, values: list[Any], op: str, lits: list[Any]) -> bool:
    """Java's verdict, from the rows."""
    present = [v for v in values if v is not None]
    if op == "is_null":
        return len(present) < len(values)
    if op == "is_not_null":
        return bool(present)
    if op in ("equal", "in"):
        return any(v in lits for v in present)
    if op in ("not_equal", "not_in"):
        rows = values if index == "bitmap" else present
        return any(v is None or v not in lits for v in rows)
    if index == "bitmap":
        return True
    if op == "between":
        return any(lits[0] <= v <= lits[1] for v in present)
    return any(RANGE_OPS[op](v, lits[0]) for v in present)


def _probes(index: str, values: list[Any], probes: list[Any]) -> None:
    reader = _build(index, INT() if isinstance(probes[0], int) else STRING_TYPE(), values)
    for p in probes:
        for op in ("equal", "not_equal", *RANGE_OPS):
            assert reader.may_match(op, [p]) == _expected(index, values, op, [p]), (op, p)
    pairs = list(pairwise(probes))
    for a, b in pairs:
        for op in ("in", "not_in"):
            assert reader.may_match(op, [a, b]) == _expected(index, values, op, [a, b]), (op, a, b)
        if index != "bitmap":
            lo, hi = sorted((a, b))
            assert reader.may_match("between", [lo, hi]) == _expected(
                index, values, "between", [lo, hi]
            )
    for op in ("is_null", "is_not_null"):
        assert reader.may_match(op, []) == _expected(index, values, op, [])


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("seed", range(4))
def test_int_verdicts_follow_the_rows(index: str, seed: int) -> None:
    rng = random.Random(seed)
    size = rng.choice([1, 5, 50, 3000])
    spread = rng.choice([3, 40, 10**6])
    values = [None if rng.random() < 0.1 else rng.randrange(-spread, spread) for _ in range(size)]
    probes = [rng.randrange(-spread - 2, spread + 2) for _ in range(6)]
    probes += [v for v in values[:3] if v is not None]
    _probes(index, values, probes)


@pytest.mark.parametrize("index", ["bitmap", "range-bitmap"])
def test_string_verdicts_follow_the_rows(index: str) -> None:
    rng = random.Random(1)
    values = [None if rng.random() < 0.05 else f"v{rng.randrange(500)}" for _ in range(2000)]
    values += ["", "é", "zz"]
    _probes(index, values, ["v1", "v499", "", "a", "é", "zz", "zzz", "v10"])


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize(
    "values", [[], [None], [None, None, None], [7], [7, 7, 7], [0], [-1, -1]], ids=repr
)
def test_empty_null_and_constant_columns(index: str, values: list[Any]) -> None:
    _probes(index, values, [7, 0, -1, 8])


@pytest.mark.parametrize("index", INDEXES)
def test_writes_in_pieces_equal_one_write(index: str) -> None:
    values = [3, None, 1, 3, 9, None, 1] * 50
    whole = create_writer(index, INT(), {})
    whole.write(pa.array(values, pa.int32()))
    pieces = create_writer(index, INT(), {})
    pieces.write(pa.array(values[:100], pa.int32()))
    pieces.write(pa.chunked_array([values[100:200], values[200:]], pa.int32()))
    assert pieces.serialize() == whole.serialize()


TYPED: list[tuple[DataType, list[Any], Any, Any]] = [
    # (type, values, a present literal, an absent one)
    (AtomicType("TINYINT"), [1, -128, 127, None], -128, 5),
    (AtomicType("SMALLINT"), [1, -32768, None], 1, 2),
    (BIGINT(), [2**62, -(2**62), None], 2**62, 0),
    (
        DATE(),
        [datetime.date(2024, 1, 2), None],
        datetime.date(2024, 1, 2),
        datetime.date(2024, 1, 3),
    ),
    (
        TimeType(precision=3),
        [datetime.time(1, 2, 3, 4000)],
        datetime.time(1, 2, 3, 4000),
        datetime.time(1),
    ),
    (
        TimestampType(precision=3),
        [datetime.datetime(2024, 1, 1, 0, 0, 0, 5000), None],
        datetime.datetime(2024, 1, 1, 0, 0, 0, 5000),
        datetime.datetime(2024, 1, 1),
    ),
    (
        TimestampType(precision=6, local_tz=True),
        [datetime.datetime(1960, 1, 1, 0, 0, 0, 7, tzinfo=datetime.UTC)],
        datetime.datetime(1960, 1, 1, 0, 0, 0, 7, tzinfo=datetime.UTC),
        datetime.datetime(1960, 1, 1, 0, 0, 0, 8, tzinfo=datetime.UTC),
    ),
    (
        DecimalType(10, 2),
        [decimal.Decimal("-1.50"), None],
        decimal.Decimal("-1.50"),
        decimal.Decimal("1.50"),
    ),
    (FLOAT(), [1.5, -0.0, float("nan"), None], 1.5, 0.0),
    (DOUBLE(), [1.5, -0.0, None], -0.0, 0.0),
    (BOOLEAN(), [True, None], True, False),
]
SUPPORTS: dict[str, Callable[[DataType], bool]] = {
    "bitmap": lambda t: not isinstance(t, DecimalType),
    "bsi": lambda t: t not in (FLOAT(), DOUBLE(), BOOLEAN()),
    "range-bitmap": lambda t: True,
}


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("case", TYPED, ids=lambda c: str(c[0]))
def test_every_supported_type_round_trips(index: str, case: tuple[Any, ...]) -> None:
    t, values, present, absent = case
    if not SUPPORTS[index](t):
        with pytest.raises(UnsupportedOptionError, match=str(t).split("(")[0]):
            create_writer(index, t, {})
        return
    reader = _build(index, t, values)
    assert reader.may_match("equal", [present])
    assert not reader.may_match("equal", [absent])
    assert reader.may_match("in", [absent, present])
    assert not reader.may_match("in", [absent])
    assert reader.may_match("is_null", []) == (None in values)


def test_float_keys_are_java_float_equality() -> None:
    """-0.0 and 0.0 are distinct keys (Float.equals), every NaN is one key."""
    for index in ("bitmap", "range-bitmap"):
        reader = _build(index, FLOAT(), [-0.0, float("nan")])
        assert reader.may_match("equal", [-0.0])
        assert not reader.may_match("equal", [0.0])
        assert reader.may_match("equal", [float("nan")])
    # Float.compare puts NaN above +inf
    rb = _build("range-bitmap", DOUBLE(), [float("nan")])
    assert rb.may_match("greater_than", [float("inf")])
    assert not rb.may_match("less_than", [float("inf")])


def test_bitmap_options_as_java_parses_them() -> None:
    values = [f"key-{i % 700}" for i in range(2000)]
    v1 = _build("bitmap", STRING_TYPE(), values, {"version": "1"})
    small = _build("bitmap", STRING_TYPE(), values, {"index-block-size": "64 b"})
    for reader in (v1, small):
        assert reader.may_match("equal", ["key-699"])
        assert not reader.may_match("equal", ["key-700"])
    with pytest.raises(OptionError, match="version"):
        create_writer("bitmap", INT(), {"version": "3"})
    with pytest.raises(OptionError, match="version"):
        create_writer("bitmap", INT(), {"version": "two"})
    with pytest.raises(OptionError, match="index-block-size"):
        create_writer("bitmap", INT(), {"index-block-size": "16 parsecs"})
    tiny = create_writer("bitmap", INT(), {"index-block-size": "8b"})
    tiny.write(pa.array([1], pa.int32()))
    with pytest.raises(OptionError, match="index-block-size"):
        tiny.serialize()


def test_range_bitmap_chunks_and_refusals() -> None:
    values = list(range(0, 3000, 3))
    for chunk in ("0b", "8b", "1kb"):
        reader = _build("range-bitmap", BIGINT(), values, {"chunk-size": chunk})
        assert reader.may_match("equal", [2997])
        assert not reader.may_match("equal", [2998])
        assert not reader.may_match("greater_than", [2997])
    for t in (DecimalType(19, 0), TimestampType(precision=9), BYTES()):
        with pytest.raises(UnsupportedOptionError):
            create_writer("range-bitmap", t, {})


def test_bsi_refuses_what_java_cannot_hold() -> None:
    with pytest.raises(UnsupportedOptionError):
        _build("bsi", BIGINT(), [-(2**63)])
    with pytest.raises(UnsupportedOptionError):
        _build("bsi", DecimalType(30, 0), [decimal.Decimal(10**20)])


def test_corrupt_bytes_are_refused() -> None:
    for index in INDEXES:
        with pytest.raises(CorruptTableError):
            create_reader(index, INT(), b"\x09\x00")


@pytest.mark.parametrize("seed", range(5))
def test_hashmap_order_fast_path_equals_the_replay(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([1, 12, 13, 25, 100, 5000])
    hashes = np.asarray(rng.sample(range(-(2**31), 2**31), n), dtype=np.int32)
    for after in (False, True):
        fast = iteration_order(hashes, hashes.tolist(), after)
        slow = _replay(spread(hashes), hashes.tolist(), after, None)
        assert fast.tolist() == slow.tolist()


@pytest.mark.parametrize("late", [0, 48, 100, 3000])
def test_hashmap_order_of_tree_bins_alone_equals_the_whole_replay(late: int) -> None:
    """Bins that become trees only after the table has 64 bins are replayed alone; the order
    equals replaying the whole map (keys ``i << 16 | i`` all share bin 0)."""
    rng = random.Random(late)
    spread_keys = rng.sample(range(-(2**31), 2**31), late)
    colliding = [(i << 16) | i for i in range(1, 60)]
    codes = np.asarray(spread_keys[: late // 2] + colliding + spread_keys[late // 2 :], np.int32)
    for after in (False, True):
        fast = iteration_order(codes, codes.tolist(), after)
        slow = _replay(spread(codes), codes.tolist(), after, None)
        assert fast.tolist() == slow.tolist()


def test_string_hash_codes_are_binary_string_murmur() -> None:
    """BinaryString.hashCode of a few strings, vectorized, against the scalar
    MurmurHashUtils.hashBytes (both against Java: tests/interop/test_java_hashmap_java.py)."""

    words = ["", "a", "ab", "abc", "abcd", "abcde", "héllo wörld", "\u00ff" * 9]
    keys = to_keys(STRING_TYPE(), STRING, pa.array(words))
    assert hash_codes(keys.kind, keys.values).tolist() == [
        murmur.hash_unaligned(w.encode()) for w in words
    ]


def test_roaring_size_reads_the_portable_format() -> None:
    for values in (
        [],
        [1],
        list(range(5000)),
        list(range(0, 200000, 7)),
        [1, 70000, 140000, 1 << 30],
    ):
        bm = BitMap(values)
        bm.run_optimize()
        data = b"xx" + bm.serialize() + b"yy"
        assert roaring_size(data, 2) == len(data) - 4
