"""BinaryRow codec: Java's golden bytes, canonical nulls, and round trips for every type."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_pyspark.errors import SchemaMismatchError
from paimon_pyspark.spec.binary_row import (
    EMPTY_ROW,
    deserialize_array,
    deserialize_map,
    deserialize_row,
    deserialize_with_arity,
    header_width,
    read_field,
    read_int_array,
    read_long_array,
    read_string_array,
    row_arity,
    row_kind,
    serialize_array,
    serialize_map,
    serialize_row,
    serialize_with_arity,
    unscaled_to_decimal,
    write_int_array,
    write_long_array,
    write_string_array,
)
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    SMALLINT,
    STRING,
    TINYINT,
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

# --- Java golden bytes (spec section 4.7) ------------------------------------------------


def test_row_int_and_inline_string_matches_java() -> None:
    row = serialize_row([1, "abc"], [INT(), STRING()])
    assert row.hex() == "000000000000000001000000000000006162630000000083"
    assert serialize_with_arity([1, "abc"], [INT(), STRING()]).hex() == "00000002" + row.hex()


def test_row_with_long_string_goes_to_var_part() -> None:
    row = serialize_row([1, "hello world!"], [INT(), STRING()])
    assert row.hex() == (
        "000000000000000001000000000000000c0000001800000068656c6c6f20776f726c642100000000"
    )
    assert deserialize_row(row, [INT(), STRING()]) == [1, "hello world!"]


def test_partition_and_key_rows_match_java_golden() -> None:
    assert serialize_with_arity(["my_partition"], [STRING()]).hex() == (
        "0000000100000000000000000c000000100000006d795f706172746974696f6e00000000"
    )
    assert serialize_with_arity(["min_key"], [STRING()]).hex() == (
        "0000000100000000000000006d696e5f6b657987"
    )
    assert serialize_with_arity([1], [INT()]).hex() == "0000000100000000000000000100000000000000"


def test_empty_row_is_twelve_bytes() -> None:
    assert bytes(12) == EMPTY_ROW
    assert serialize_row([], []) == bytes(8)
    assert row_arity(EMPTY_ROW) == 0
    assert deserialize_with_arity(EMPTY_ROW, []) == []


def test_arrays_match_java_golden() -> None:
    assert write_string_array(["a", "b"]).hex() == (
        "020000000000000061000000000000816200000000000081"
    )
    assert write_long_array([3, 5]).hex() == "020000000000000003000000000000000500000000000000"
    assert serialize_array([], INT()) == bytes(8)


_NN = False
_STATS = RowType(
    (
        DataField(0, "_MIN_VALUES", BYTES().copy(_NN)),
        DataField(1, "_MAX_VALUES", BYTES().copy(_NN)),
        DataField(2, "_NULL_COUNTS", ArrayType(BIGINT())),
    ),
    nullable=False,
)
_DATA_FILE_META_V13: list[DataType] = [
    STRING().copy(_NN),
    BIGINT().copy(_NN),
    BIGINT().copy(_NN),
    BYTES().copy(_NN),
    BYTES().copy(_NN),
    _STATS,
    _STATS,
    BIGINT().copy(_NN),
    BIGINT().copy(_NN),
    BIGINT().copy(_NN),
    INT().copy(_NN),
    ArrayType(STRING().copy(_NN), nullable=False),
    TimestampType(3),
    BIGINT(),
    BYTES(),
    TINYINT(),
    ArrayType(STRING().copy(_NN)),
    STRING(),
    BIGINT(),
    ArrayType(STRING().copy(_NN)),
    ArrayType(BIGINT().copy(_NN)),
]
# The DataFileMeta row inside Java's golden ``manifest-committable-v13-v5`` (offset 102).
_GOLDEN_DATA_FILE_META = bytes.fromhex(
    "000040030000000014000000b000000000040000000000000a0000000000000014000000c800000014000000"
    "e000000048000000f8000000480000004001000001000000000000000500000000000000010000000000000000"
    "000000000000000800000088010000000085d99f010000000000000000000000000000000000000100000000"
    "000000000000000000000000000000000000000100000000000000180000009001000018000000a801000063"
    "6f6c756d6e2d73657175656e63652d66696c65000000000000000100000000000000006d696e5f6b65798700"
    "0000000000000100000000000000006d61785f6b6579870000000000000000000000000c000000200000000c"
    "0000003000000008000000400000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000c000000200000000c00000030000000080000004000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000200000000000000610000000000008162000000000000810200000000000000030000000000000005"
    "00000000000000"
)


def test_java_data_file_meta_row_decodes_and_reencodes_byte_for_byte() -> None:
    values = deserialize_row(_GOLDEN_DATA_FILE_META, _DATA_FILE_META_V13)
    empty_stats = {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW, "_NULL_COUNTS": []}
    prefix = bytes.fromhex("000000010000000000000000")
    keys = [prefix + b"min_key\x87", prefix + b"max_key\x87"]
    assert values[:5] == ["column-sequence-file", 1024, 10, *keys]
    assert values[5] == values[6] == empty_stats
    assert values[7:12] == [1, 5, 1, 0, []]
    assert values[12] == dt.datetime(2026, 8, 7)
    assert values[13:] == [0, None, 1, None, None, 1, ["a", "b"], [3, 5]]
    assert serialize_row(values, _DATA_FILE_META_V13) == _GOLDEN_DATA_FILE_META
    assert read_field(_GOLDEN_DATA_FILE_META, _DATA_FILE_META_V13, 0) == "column-sequence-file"
    assert read_field(_GOLDEN_DATA_FILE_META, _DATA_FILE_META_V13, 14) is None


# --- canonical details -------------------------------------------------------------------


def test_null_non_compact_decimal_and_timestamp_still_reserve_var_space() -> None:
    row = serialize_row([None, None, None], [DecimalType(38, 6), TimestampType(6), INT()])
    # header with bits 8, 9, 10 set; slots (offset << 32) | 0 for the first two.
    assert (
        row.hex()
        == ("0007000000000000000000002000000000000000300000000000000000000000") + "00" * 24
    )
    assert deserialize_row(row, [DecimalType(38, 6), TimestampType(6), INT()]) == [None] * 3


def test_null_compact_decimal_and_timestamp_leave_a_zero_slot() -> None:
    row = serialize_row([None, None], [DecimalType(18, 2), TimestampType(3)])
    assert row.hex() == "0003000000000000" + "00" * 16


def test_null_array_elements_reserve_nothing() -> None:
    data = serialize_array([None, Decimal("1.5")], DecimalType(38, 1))
    # count, null bits (element 0), two 8-byte elements, then 16 bytes for the one decimal.
    assert data[:8].hex() == "0200000001000000"
    assert data[8:16] == bytes(8)
    assert len(data) == 8 + 16 + 16
    assert deserialize_array(data, DecimalType(38, 1)) == [None, Decimal("1.5")]


def test_non_compact_decimal_uses_minimal_big_endian_bytes() -> None:
    row = serialize_row([Decimal("-1.000000")], [DecimalType(38, 6)])
    # unscaled -1000000 = 0xf0bdc0 in 3 bytes.
    assert row[8:16].hex() == "0300000010000000"
    assert row[16:32].hex() == "f0bdc0" + "00" * 13


def test_non_compact_timestamp_stores_millis_and_nano_of_milli() -> None:
    value = dt.datetime(1969, 12, 31, 23, 59, 59, 999_999)
    row = serialize_row([value], [TimestampType(6)])
    assert row[8:16].hex() == "583e0f0010000000"  # nano-of-milli 999000, offset 16
    assert row[16:24].hex() == "ffffffffffffffff"  # epoch millis -1
    assert deserialize_row(row, [TimestampType(6)]) == [value]


def test_wide_rows_use_a_two_word_header() -> None:
    types: list[DataType] = [INT()] * 60
    values: list[Any] = [i if i % 7 else None for i in range(60)]
    row = serialize_row(values, types)
    assert header_width(60) == 16
    assert len(row) == 16 + 8 * 60
    assert deserialize_row(row, types) == values


def test_decimal_rounds_half_up_and_rejects_overflow() -> None:
    row = serialize_row([Decimal("1.005"), Decimal("-1.005")], [DecimalType(10, 2)] * 2)
    assert deserialize_row(row, [DecimalType(10, 2)] * 2) == [Decimal("1.01"), Decimal("-1.01")]
    with pytest.raises(SchemaMismatchError):
        serialize_row([Decimal("123.4")], [DecimalType(3, 1)])
    with pytest.raises(SchemaMismatchError):
        serialize_row([300], [TINYINT()])
    with pytest.raises(SchemaMismatchError):
        serialize_row([1, 2], [INT()])


def test_alternative_python_inputs() -> None:
    ts9 = TimestampType(9)
    nanos = pd.Timestamp("2024-01-02 03:04:05.123456789")
    expected = serialize_row([nanos], [ts9])
    assert serialize_row([nanos.value], [ts9]) == expected
    assert serialize_row([np.datetime64(nanos.value, "ns")], [ts9]) == expected
    assert deserialize_row(expected, [ts9]) == [nanos]
    m = MapType(STRING(), INT())
    assert serialize_row([{"a": 1}], [m]) == serialize_row([[("a", 1)]], [m])
    r = RowType((DataField(0, "x", INT()), DataField(1, "y", STRING())))
    assert serialize_row([(1, "z")], [r]) == serialize_row([{"x": 1, "y": "z"}], [r])
    assert serialize_row([19_000], [DATE()]) == serialize_row([dt.date(2022, 1, 8)], [DATE()])
    utc = TimestampType(3, local_tz=True)
    aware = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert deserialize_row(serialize_row([aware], [utc]), [utc]) == [aware]


def test_typed_helpers_round_trip() -> None:
    assert read_string_array(write_string_array(["x", None, "long string value"])) == [
        "x",
        None,
        "long string value",
    ]
    assert read_long_array(write_long_array([1, None, -(2**63)])) == [1, None, -(2**63)]
    assert read_int_array(write_int_array([7, None])) == [7, None]
    data = serialize_map([("k", 1), ("kk", None)], STRING(), INT())
    assert deserialize_map(data, STRING(), INT()) == [("k", 1), ("kk", None)]
    assert row_kind(serialize_row([1], [INT()])) == 0


# --- every type round-trips to exactly what pyarrow's as_py gives --------------------------

_TS_PRECISIONS = (0, 3, 4, 6, 7, 9)
_ATOMIC: list[DataType] = [
    BOOLEAN(),
    TINYINT(),
    SMALLINT(),
    INT(),
    BIGINT(),
    FLOAT(),
    DOUBLE(),
    DATE(),
    STRING(),
    CharType(5, variable=False),
    BYTES(),
    BinaryType(4, variable=False),
    DecimalType(10, 2),
    DecimalType(18, 0),
    DecimalType(19, 4),
    DecimalType(38, 6),
    DecimalType(38, 0),
    TimeType(0),
    TimeType(3),
    TimeType(6),
    *[TimestampType(p) for p in _TS_PRECISIONS],
    *[TimestampType(p, local_tz=True) for p in _TS_PRECISIONS],
]
_INT_RANGES = {"TINYINT": 7, "SMALLINT": 15, "INT": 31, "BIGINT": 63}
# pandas.Timestamp (what pyarrow returns for nanoseconds) spans about 1677..2262.
_NS_RANGE = (-(2**63) + 1, 2**63 - 1)
_US_RANGE = (-62_135_596_800_000_000, 253_402_300_799_999_999)


def _nested_types(inner: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
    return st.one_of(
        inner.map(ArrayType),
        inner.map(MultisetType),
        st.tuples(st.sampled_from(_ATOMIC), inner).map(lambda kv: MapType(kv[0], kv[1])),
        st.lists(inner, min_size=1, max_size=4).map(
            lambda ts: RowType(tuple(DataField(i, f"f{i}", t) for i, t in enumerate(ts)))
        ),
    )


_TYPES = st.recursive(st.sampled_from(_ATOMIC), _nested_types, max_leaves=6)


def _timestamp_values(t: TimestampType) -> st.SearchStrategy[Any]:
    unit = 1_000 if t.precision <= 3 else 1 if t.precision <= 6 else 0
    if unit == 0:
        arrow = pa.timestamp("ns", tz="UTC" if t.local_tz else None)
        return st.integers(*_NS_RANGE).map(lambda v: pa.scalar(v, arrow).as_py())
    arrow = pa.timestamp("us", tz="UTC" if t.local_tz else None)
    return st.integers(*_US_RANGE).map(lambda v: pa.scalar(v // unit * unit, arrow).as_py())


def _values(t: DataType, nullable: bool = True) -> st.SearchStrategy[Any]:
    base = _non_null_values(t)
    return st.one_of(st.none(), base) if nullable else base


def _non_null_values(t: DataType) -> st.SearchStrategy[Any]:
    if isinstance(t, AtomicType):
        if t.name in _INT_RANGES:
            bits = _INT_RANGES[t.name]
            return st.integers(-(2**bits), 2**bits - 1)
        return {
            "BOOLEAN": st.booleans(),
            "FLOAT": st.floats(width=32, allow_nan=False),
            "DOUBLE": st.floats(allow_nan=False),
            "DATE": st.dates(),
        }[t.name]
    if isinstance(t, CharType):
        return st.text(max_size=20)
    if isinstance(t, BinaryType):
        return st.binary(max_size=20)
    if isinstance(t, DecimalType):
        bound = 10**t.precision - 1
        return st.integers(-bound, bound).map(lambda u: unscaled_to_decimal(u, t.scale))
    if isinstance(t, TimeType):
        return st.integers(0, 86_399_999).map(
            lambda ms: (dt.datetime.min + dt.timedelta(milliseconds=ms)).time()
        )
    if isinstance(t, TimestampType):
        return _timestamp_values(t)
    if isinstance(t, ArrayType):
        return st.lists(_values(t.element), max_size=5)
    if isinstance(t, MultisetType):
        return st.lists(st.tuples(_values(t.element, False), st.integers(0, 2**31 - 1)), max_size=4)
    if isinstance(t, MapType):
        return st.lists(st.tuples(_values(t.key, False), _values(t.value)), max_size=4)
    if isinstance(t, RowType):
        return st.fixed_dictionaries({f.name: _values(f.type) for f in t.fields})
    raise AssertionError(t)


@st.composite
def _typed_rows(draw: st.DrawFn) -> tuple[list[DataType], list[Any]]:
    types = draw(st.lists(_TYPES, min_size=1, max_size=5))
    return types, [draw(_values(t)) for t in types]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_typed_rows())
def test_round_trip_equals_pyarrow_as_py(typed: tuple[list[DataType], list[Any]]) -> None:
    types, values = typed
    data = serialize_row(values, types)
    decoded = deserialize_row(data, types)
    expected = [
        pa.array([v], to_arrow_type(t)).to_pylist()[0] for v, t in zip(values, types, strict=True)
    ]
    assert decoded == expected
    assert serialize_row(decoded, types) == data
    assert deserialize_with_arity(serialize_with_arity(values, types), types) == expected
    assert len(data) % 8 == 0
