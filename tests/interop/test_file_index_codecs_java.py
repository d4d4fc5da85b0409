"""Our bitmap, bsi and range-bitmap codecs against Java Paimon 1.4.2's, one column at a time.

For each column (types, nulls, options): our bytes equal Java's for the same values; Java's
reader on our bytes and our reader on Java's bytes keep or skip the file alike, for equality,
IN, their negations, ranges and null tests on present and absent values.
"""

from __future__ import annotations

import datetime
import decimal
import random
import re
from typing import Any

import pyarrow as pa
import pytest
from file_index_codec_oracle import java_build, java_remain
from java_oracle import JavaOracle

from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.spec.file_index import OPERATIONS, create_reader, create_writer
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    STRING,
    ArrayType,
    AtomicType,
    DataType,
    DecimalType,
    TimestampType,
    TimeType,
)

pytestmark = pytest.mark.java

D = decimal.Decimal
_rng = random.Random(38)
# (name, type, values, probes): probes are literals, present or not, for the predicates
COLUMNS: list[tuple[str, DataType, list[Any], list[Any]]] = [
    ("int", INT(), [5, 1, 2, 2, None, 3, None, 1, 7, -5, 0], [1, 2, 4, 7, 8, -5, -6, 0, -100]),
    ("int-all-null", INT(), [None, None, None], [1, 0]),
    ("int-empty", INT(), [], [1]),
    ("int-one", INT(), [4, 4, 4], [4, 3, 5]),
    (
        "int-colliding",  # keys sharing a HashMap bin: Java's tree bins
        INT(),
        [(i << 16) | i for i in range(1, 90)] * 2 + list(range(70)),
        [1 << 16 | 1, 5, 1000],
    ),
    (
        "int-late-tree",  # a bin reaches 8 keys only once the table has 256 bins
        INT(),
        list(range(1000, 1100)) + [(i << 16) | i for i in range(1, 40)] + [3, 1000],
        [1 << 16 | 1, 1000, 5],
    ),
    (
        "bigint",
        BIGINT(),
        [_rng.randrange(-(2**62), 2**62) for _ in range(400)] + [None],
        [0, 2**61, -(2**61)],
    ),
    ("tinyint", AtomicType("TINYINT"), [1, -128, 127, None, 1], [1, -128, 0, 127]),
    ("smallint", AtomicType("SMALLINT"), [1, -32768, 32767, None, 9], [9, 10, -32768]),
    ("string", STRING(), ["b", "a", None, "héllo", "", "a", "zzzz1"], ["a", "", "c", "zzzz1"]),
    (
        "string-many",
        STRING(),
        [f"k{_rng.randrange(3000)}" for _ in range(2000)] + [None],
        ["k1", "k2999", "a", "z"],
    ),
    ("boolean", BOOLEAN(), [True, None, True], [True, False]),
    ("float", FLOAT(), [1.0, -0.0, 0.0, float("nan"), None, 2.5, 1.0], [1.0, -0.0, 3.0, 0.0]),
    ("double", DOUBLE(), [i / 4 for i in range(300)] * 2, [0.25, 0.3, 74.75, 100.0]),
    (
        "date",
        DATE(),
        [datetime.date(2024, 1, d) for d in range(1, 28)] + [None, datetime.date(1960, 5, 5)],
        [datetime.date(2024, 1, 3), datetime.date(2025, 1, 1), datetime.date(1960, 5, 5)],
    ),
    (
        "time",
        TimeType(precision=3),
        [datetime.time(1, 2, 3, 4000), None, datetime.time(23, 0)],
        [datetime.time(1, 2, 3, 4000), datetime.time(0, 0)],
    ),
    (
        "timestamp3",
        TimestampType(precision=3),
        [datetime.datetime(2024, 1, 1, 1, 2, 3, 456000), None, datetime.datetime(1969, 12, 31)],
        [datetime.datetime(1969, 12, 31), datetime.datetime(2000, 1, 1)],
    ),
    (
        "timestamp9",  # bitmap and bsi key on micros, rounded down as Timestamp.toMicros
        TimestampType(precision=9),
        [
            datetime.datetime(2024, 1, 1, 1, 2, 3, 456789),
            datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
            None,
        ],
        [datetime.datetime(2024, 1, 1, 1, 2, 3, 456789), datetime.datetime(1970, 1, 1)],
    ),
    (
        "timestamp6-ltz",
        TimestampType(precision=6, local_tz=True),
        [datetime.datetime(2024, 1, 1, 1, 2, 3, 456789, tzinfo=datetime.UTC), None],
        [datetime.datetime(2024, 1, 1, 1, 2, 3, 456789, tzinfo=datetime.UTC)],
    ),
    (
        "decimal",
        DecimalType(10, 2),
        [D("1.25"), D("-3.50"), None, D("99999999.99")],
        [D("1.25"), D("0.00"), D("-3.50")],
    ),
]

# (index type, column name, options): which index covers which column
SUPPORTED = {
    "bitmap": {"int", "int-all-null", "int-empty", "int-one", "int-colliding", "int-late-tree"}
    | {"bigint"}
    | {"tinyint", "smallint", "string", "string-many", "boolean", "float", "double", "date"}
    | {"time", "timestamp3", "timestamp6-ltz", "timestamp9"},
    "bsi": {"int", "int-all-null", "int-empty", "int-one", "bigint", "tinyint", "smallint"}
    | {"date", "time", "timestamp3", "timestamp6-ltz", "timestamp9", "decimal"},
    "range-bitmap": {c[0] for c in COLUMNS} - {"timestamp9"},
}
OPTIONS: dict[str, list[dict[str, str]]] = {
    "bitmap": [{}, {"version": "1"}, {"index-block-size": "64b"}],
    "bsi": [{}],
    "range-bitmap": [{}, {"chunk-size": "32b"}],
}
CASES = [
    pytest.param(index, name, opts, id=f"{index}-{name}-{'-'.join(opts.values()) or 'default'}")
    for index, names in SUPPORTED.items()
    for name in sorted(names)
    for opts in OPTIONS[index]
]
_BY_NAME = {c[0]: c for c in COLUMNS}


def _ours(index: str, t: DataType, values: list[Any], opts: dict[str, str]) -> bytes:
    writer = create_writer(index, t, opts)
    writer.write(pa.array(values, to_arrow_type(t)))
    return writer.serialize()


def _predicates(probes: list[Any]) -> list[tuple[str, list[Any]]]:
    out: list[tuple[str, list[Any]]] = [("is_null", []), ("is_not_null", [])]
    for op in OPERATIONS:
        if op in ("is_null", "is_not_null"):
            continue
        if op == "between":
            if len(probes) < 2:
                continue
            out.append((op, sorted(probes[:2])))
            out.append((op, sorted(probes[:2])[::-1]))
        elif op in ("in", "not_in"):
            out.append((op, probes[:2]))
            out.append((op, probes[-2:]))
        else:
            out.extend((op, [p]) for p in probes)
    return out


@pytest.mark.parametrize(("index", "name", "opts"), CASES)
def test_bytes_and_verdicts_equal_javas(
    java_oracle: JavaOracle, index: str, name: str, opts: dict[str, str]
) -> None:
    _, t, values, probes = _BY_NAME[name]
    javas = java_build(java_oracle, index, t, values, opts)
    assert isinstance(javas, bytes), javas
    ours = _ours(index, t, values, opts)
    assert ours == javas
    reader = create_reader(index, t, javas)
    assert reader is not None
    for op, literals in _predicates(probes):
        java_keeps = java_remain(java_oracle, index, t, ours, op, literals, opts)
        assert reader.may_match(op, literals) == java_keeps, (op, literals)


def test_a_file_java_skips_is_one_we_skip_too(java_oracle: JavaOracle) -> None:
    """The verdicts above are not all 'keep': each index skips for an absent value."""
    for index in ("bitmap", "bsi", "range-bitmap"):
        data = java_build(java_oracle, index, INT(), [1, 2, 3])
        assert isinstance(data, bytes)
        assert not java_remain(java_oracle, index, INT(), data, "equal", [9])
        reader = create_reader(index, INT(), data)
        assert reader is not None and not reader.may_match("equal", [9])


@pytest.mark.parametrize(
    ("index", "data_type"),
    [
        ("bitmap", DecimalType(10, 2)),
        ("bitmap", BYTES()),
        ("bitmap", ArrayType(element=INT())),
        ("bsi", FLOAT()),
        ("bsi", STRING()),
        ("bsi", BOOLEAN()),
        ("range-bitmap", DecimalType(20, 2)),
        ("range-bitmap", TimestampType(precision=9)),
        ("range-bitmap", BYTES()),
    ],
)
def test_types_java_refuses_are_refused(
    java_oracle: JavaOracle, index: str, data_type: DataType
) -> None:
    assert str(java_build(java_oracle, index, data_type, [])).startswith("ERROR:")
    with pytest.raises(UnsupportedOptionError, match=re.escape(str(data_type))):
        create_writer(index, data_type, {})
