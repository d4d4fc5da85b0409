"""Fixed-bucket assignment: Java's vectors, and the vectorized hash equal to the row codec.

The oracle here is the plain per-row path (``serialize_row`` + ``hash_bytes``), itself pinned
to Java's bytes in the spec tests; ``tests/interop/test_bucket_java.py`` checks against Java.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Callable
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_pyspark.bucket.fixed import FixedBucketAssigner, buckets_of, hash_rows
from paimon_pyspark.errors import OptionError, SchemaError, SchemaMismatchError
from paimon_pyspark.spec.binary_row import serialize_row, unscaled_to_decimal
from paimon_pyspark.spec.murmur import hash_bytes
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
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    RowType,
    TimestampType,
    TimeType,
)

N = 3000
_ALPHABET = "abcXYZ09 é漢😀"
_US_RANGE = (-62_135_596_800_000_000, 253_402_300_799_999_999)  # years 1..9999


def _scalar_hashes(columns: list[pa.Array], types: list[DataType]) -> list[int]:
    rows = zip(*(c.to_pylist() for c in columns), strict=True)
    return [hash_bytes(serialize_row(list(row), types)) for row in rows]


def _with_nulls(values: pa.Array, rng: np.random.Generator, fraction: float = 0.1) -> pa.Array:
    mask = pa.array(rng.random(len(values)) < fraction)
    return pa.compute.if_else(mask, pa.nulls(len(values), values.type), values)


def _strings(rng: np.random.Generator, n: int, max_chars: int = 40) -> list[str]:
    return ["".join(rng.choice(list(_ALPHABET), rng.integers(0, max_chars + 1))) for _ in range(n)]


def _decimals(rng: np.random.Generator, n: int, t: DecimalType) -> pa.Array:
    py = random.Random(int(rng.integers(2**32)))
    edges = [0, 1, -1, 127, 128, -128, -129, 255, 256, -256, 10**t.precision - 1]
    unscaled = edges + [
        py.choice((-1, 1)) * py.randrange(10 ** py.randint(1, t.precision))
        for _ in range(n - len(edges))
    ]
    return pa.array([unscaled_to_decimal(u, t.scale) for u in unscaled], to_arrow_type(t))


def _ints(rng: np.random.Generator, bits: int, n: int) -> np.ndarray:
    return rng.integers(-(2 ** (bits - 1)), 2 ** (bits - 1), n, dtype=np.int64)


def _floats(rng: np.random.Generator, n: int) -> np.ndarray:
    values = rng.normal(0, 1e6, n)
    values[:5] = [math.nan, -0.0, 0.0, math.inf, -math.inf]
    return values


def _column(t: DataType, rng: np.random.Generator, n: int = N) -> pa.Array:
    arrow = to_arrow_type(t)
    makers: dict[str, Callable[[], pa.Array]] = {
        "INT": lambda: pa.array(_ints(rng, 32, n), arrow),
        "BIGINT": lambda: pa.array(_ints(rng, 64, n), arrow),
        "SMALLINT": lambda: pa.array(_ints(rng, 16, n), arrow),
        "TINYINT": lambda: pa.array(_ints(rng, 8, n), arrow),
        "BOOLEAN": lambda: pa.array(rng.random(n) < 0.5),
        "DOUBLE": lambda: pa.array(_floats(rng, n)),
        "FLOAT": lambda: pa.array(_floats(rng, n).astype(np.float32)),
        "DATE": lambda: pa.array(rng.integers(-700_000, 2_900_000, n).astype(np.int32), arrow),
        "TIME": lambda: pa.array(rng.integers(0, 86_400_000, n).astype(np.int32), arrow),
    }
    if isinstance(t, CharType):
        return _with_nulls(pa.array(_strings(rng, n)), rng)
    if isinstance(t, BinaryType):
        return _with_nulls(pa.array([rng.bytes(int(k)) for k in rng.integers(0, 41, n)]), rng)
    if isinstance(t, DecimalType):
        return _with_nulls(_decimals(rng, n, t), rng)
    if isinstance(t, TimestampType):
        micros = rng.integers(*_US_RANGE, n)
        if arrow.unit == "ms":
            values = micros // 1000
        elif arrow.unit == "ns":
            values = rng.integers(-(2**63) + 1, 2**63 - 1, n)
        else:
            values = micros
        return _with_nulls(pa.array(values, arrow), rng)
    return _with_nulls(makers[t.root](), rng)


KEY_TYPES: list[DataType] = [
    INT(),
    BIGINT(),
    SMALLINT(),
    TINYINT(),
    STRING(),
    CharType(10, variable=False),
    DecimalType(10, 2),
    DecimalType(18, 4),
    DecimalType(19, 0),
    DecimalType(38, 6),
    DATE(),
    TimestampType(3),
    TimestampType(6),
    TimestampType(9),
    TimestampType(3, local_tz=True),
    TimestampType(6, local_tz=True),
    BOOLEAN(),
    DOUBLE(),
    FLOAT(),
    BYTES(),
    TimeType(3),
]


@pytest.mark.parametrize("key_type", KEY_TYPES, ids=str)
def test_vectorized_hash_equals_row_codec(key_type: DataType) -> None:
    rng = np.random.default_rng(zlib.crc32(str(key_type).encode()))
    column = _column(key_type, rng)
    assert hash_rows([column], [key_type]).tolist() == _scalar_hashes([column], [key_type])


COMPOSITE_KEYS: list[list[DataType]] = [
    [INT(), STRING()],
    [STRING(), DecimalType(38, 6), TimestampType(6)],
    [BIGINT(), STRING(), STRING(), BYTES()],
    [TimestampType(9), DecimalType(10, 2), DATE(), BOOLEAN()],
    KEY_TYPES,
]


@pytest.mark.parametrize("key_types", COMPOSITE_KEYS, ids=lambda ts: ",".join(map(str, ts)))
def test_composite_keys_equal_row_codec(key_types: list[DataType]) -> None:
    rng = np.random.default_rng(len(key_types))
    columns = [_column(t, rng, 1000) for t in key_types]
    assert hash_rows(columns, key_types).tolist() == _scalar_hashes(columns, key_types)


def test_spec_bucket_vectors() -> None:
    a, b, c = (pa.array([v], pa.int32()) for v in (5, 6, 7))
    assert hash_rows([a], [INT()]).tolist() == [260196596]
    assert FixedBucketAssigner([INT()], 100).assign([a]).tolist() == [96]
    assert FixedBucketAssigner([INT()] * 2, 100).assign([a, b]).tolist() == [27]
    assert FixedBucketAssigner([INT()] * 3, 100).assign([a, b, c]).tolist() == [40]


def test_all_null_and_all_inline_columns() -> None:
    types: list[DataType] = [STRING(), DecimalType(38, 6), TimestampType(6), INT()]
    columns = [pa.nulls(20, to_arrow_type(t)) for t in types]
    assert hash_rows(columns, types).tolist() == _scalar_hashes(columns, types)
    short = pa.array(["", "a", "abcdefg", None, "é"])
    assert hash_rows([short], [STRING()]).tolist() == _scalar_hashes([short], [STRING()])


def test_chunked_sliced_and_other_arrow_layouts_agree() -> None:
    rng = np.random.default_rng(3)
    strings = pa.array(_strings(rng, 500))
    expected = _scalar_hashes([strings], [STRING()])
    chunked = pa.chunked_array([strings.slice(0, 123), strings.slice(123)])
    sliced = pa.concat_arrays([pa.array(["pad"] * 7), strings]).slice(7)
    for column in (
        chunked,
        sliced,
        strings.cast(pa.large_string()),
        strings.cast(pa.string_view()),
        strings.dictionary_encode(),
    ):
        assert hash_rows([column], [STRING()]).tolist() == expected
    ints = pa.array(_ints(rng, 32, 100), pa.int32())
    wide = pa.concat_arrays([pa.array([1, 2], pa.int32()), ints]).slice(2)
    assert hash_rows([wide], [INT()]).tolist() == _scalar_hashes([ints], [INT()])
    assert hash_rows([ints.cast(pa.int64())], [INT()]).tolist() == _scalar_hashes([ints], [INT()])


def test_very_long_values_take_the_scalar_tail() -> None:
    values = ["x" * 5000, "y" * 4093, *(f"key-{i:08d}" for i in range(100)), "é" * 700, None]
    column = pa.array(values)
    assert hash_rows([column], [STRING()]).tolist() == _scalar_hashes([column], [STRING()])
    # Two variable-length fields take the flat-buffer path.
    pair: list[DataType] = [STRING(), STRING()]
    columns = [column, pa.array(values[::-1])]
    assert hash_rows(columns, pair).tolist() == _scalar_hashes(columns, pair)


def test_more_than_56_key_fields_use_a_two_word_header() -> None:
    rng = np.random.default_rng(5)
    types: list[DataType] = [INT()] * 60
    columns = [_column(INT(), rng, 200) for _ in types]
    assert hash_rows(columns, types).tolist() == _scalar_hashes(columns, types)


def test_nested_types_hash_through_the_row_codec_but_are_no_bucket_key() -> None:
    nested = ArrayType(INT())
    column = pa.array([[1, 2], None, [], [None]], to_arrow_type(nested))
    assert hash_rows([column], [nested]).tolist() == _scalar_hashes([column], [nested])
    with pytest.raises(SchemaError):
        FixedBucketAssigner([nested], 4)
    with pytest.raises(SchemaError):
        FixedBucketAssigner([RowType((DataField(0, "x", INT()),))], 4)


def test_invalid_arguments() -> None:
    with pytest.raises(OptionError):
        FixedBucketAssigner([INT()], 0)
    with pytest.raises(SchemaError):
        FixedBucketAssigner([], 3)
    with pytest.raises(SchemaMismatchError):
        hash_rows([pa.array([1]), pa.array([1, 2])], [INT(), INT()])
    with pytest.raises(SchemaMismatchError):
        hash_rows([pa.array(["x"])], [INT()])
    assert hash_rows([pa.array([], pa.int32())], [INT()]).tolist() == []


@pytest.mark.parametrize("num_buckets", [1, 2, 3, 7, 16, 100, 2**31 - 1])
def test_bucket_is_java_abs_of_truncated_remainder(num_buckets: int) -> None:
    hashes = np.array([-(2**31), -(2**31) + 1, -1, 0, 1, 2**31 - 1, -12345, 12345], np.int32)
    expected = [abs(int(math.fmod(h, num_buckets))) for h in hashes.tolist()]
    assert buckets_of(hashes, num_buckets).tolist() == expected


def test_assign_table_selects_key_fields_by_name() -> None:
    fields = [DataField(1, "b", STRING()), DataField(0, "a", INT())]
    table = pa.table({"a": pa.array([5, 6], pa.int32()), "b": ["x", "long enough string"]})
    assigner = FixedBucketAssigner(fields, 7)
    expected = assigner.assign([table.column("b"), table.column("a")])
    assert assigner.assign_table(table).tolist() == expected.tolist()
    with pytest.raises(SchemaError):
        FixedBucketAssigner([INT()], 7).assign_table(table)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.text(max_size=30)), min_size=1, max_size=50),
    st.lists(
        st.one_of(st.none(), st.decimals(places=6, allow_nan=False, allow_infinity=False)),
        min_size=1,
        max_size=50,
    ),
)
def test_strings_and_decimals_property(strings: list[str | None], decimals: list[Decimal]) -> None:
    n = min(len(strings), len(decimals))
    d38 = DecimalType(38, 6)
    bounded = [d if d is None or abs(d) < Decimal(10) ** 32 else None for d in decimals[:n]]
    columns = [pa.array(strings[:n], pa.string()), pa.array(bounded, to_arrow_type(d38))]
    types: list[DataType] = [STRING(), d38]
    assert hash_rows(columns, types).tolist() == _scalar_hashes(columns, types)
