"""Random schemas and random batches: every Paimon type, primary and partition keys, nullable
or not, several bucket modes and file formats; rows with nulls, NaN, infinities, -0.0, the
extremes of every integer type, very long strings and binaries, and empty batches.

Properties: each call succeeds or raises a PaimonError; no partial snapshot; nothing written
outside the table; the table reads exactly what was committed (append tables: every row;
primary-key tables: the last row of each key), also after a failed write or commit. Keys
holding floats are compared only by "every row read was written", since which NaN and signed
zero keys merge is Java's rule (tests/integration/test_float_keys.py and tests/interop check
it).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Context, Decimal
from functools import cache
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzz.fuzz_support import (
    Outcome,
    Sandbox,
    canon_rows,
    check_snapshots,
    fuzz_settings,
    read_all,
    sandbox,
    table_path,
)
from tests.integration.table_helpers import write_commit

from paimon_pyspark import Schema
from paimon_pyspark.types import data_types as dt
from paimon_pyspark.types.arrow import assign_field_ids, to_arrow_type


@dataclass(frozen=True)
class Column:
    type: dt.DataType
    values: st.SearchStrategy[Any]
    key: bool
    """Usable as a primary or partition key (atomic, not nested)."""
    floating: bool = False

    @property
    def arrow(self) -> pa.DataType:
        return _arrow(self.type)

    @property
    def with_nulls(self) -> st.SearchStrategy[Any]:
        return _with_nulls(self.values)


# Strategies are built once per parameter set (cache): building one per draw costs more than
# the write it feeds.
@cache
def _arrow(t: dt.DataType) -> pa.DataType:
    return to_arrow_type(t)


@cache
def _with_nulls(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), values)


def _ints(bits: int) -> st.SearchStrategy[int]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return st.one_of(st.sampled_from([lo, hi, 0, -1, 1, lo + 1, hi - 1]), st.integers(lo, hi))


_SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 0.0]
_FLOAT32 = st.one_of(
    st.sampled_from([*_SPECIAL_FLOATS, 3.4028234663852886e38, 1.401298464324817e-45]),
    st.floats(width=32),
)
_FLOAT64 = st.one_of(
    st.sampled_from([*_SPECIAL_FLOATS, 1.7976931348623157e308, 5e-324]), st.floats()
)
_LONG_TEXT = st.builds(
    lambda c, n: c * n,
    st.sampled_from(["a", "é", "\U0010ffff", "\x00", "\U0001f600"]),
    st.sampled_from([17, 200, 5000, 70_000]),
)
_TEXT = st.one_of(st.text(max_size=10), _LONG_TEXT)
_LONG_BINARY = st.builds(
    lambda b, n: b * n, st.sampled_from([b"\xff", b"\x00", b"a"]), st.sampled_from([17, 70_000])
)
_BINARY = st.one_of(st.binary(max_size=10), _LONG_BINARY)
_DAYS = (-719_162, 2_932_896)  # 0001-01-01 .. 9999-12-31
_MILLIS = (-62_135_596_800_000, 253_402_300_799_999)


def _unit(precision: int) -> int:
    """Digits of a second in the Arrow unit that holds the precision (ms, us, ns)."""
    return 3 if precision <= 3 else 6 if precision <= 6 else 9


def _trunc(value: int, step: int) -> int:
    """``value`` rounded toward zero to a multiple of ``step`` (stays inside int64)."""
    return value - value % step if value >= 0 else -(-value - -value % step)


@cache
def _varchar(n: int) -> Column:
    return Column(dt.CharType(n, True), st.text(max_size=n), True)


@cache
def _decimal(precision: int, scale: int) -> Column:
    top = 10**precision - 1
    unscaled = st.one_of(st.sampled_from([top, -top, 0, 1, -1]), st.integers(-top, top))
    values = unscaled.map(lambda u: Decimal(u).scaleb(-scale, Context(prec=40)))
    return Column(dt.DecimalType(precision, scale), values, True)


@cache
def _timestamp(precision: int, ltz: bool) -> Column:
    """Values in the Arrow unit of the precision, at that precision, years 1 to 9999."""
    unit = _unit(precision)
    step = 10 ** (unit - precision)
    lo = max(_MILLIS[0] * 10 ** (unit - 3), -(2**63) + 1)
    hi = min(_MILLIS[1] * 10 ** (unit - 3), 2**63 - 1)
    values = st.one_of(st.sampled_from([lo, hi, 0, -1]), st.integers(lo, hi))
    return Column(dt.TimestampType(precision, ltz), values.map(lambda v: _trunc(v, step)), True)


@cache
def _time(precision: int) -> Column:
    unit = _unit(precision)
    # Paimon holds a TIME as milliseconds of the day, whatever its precision (as Java does)
    day, step = 86_400 * 10**unit, 10 ** (unit - min(precision, 3))
    values = st.one_of(st.sampled_from([0, day - 1]), st.integers(0, day - 1))
    return Column(dt.TimeType(precision), values.map(lambda v: _trunc(v, step)), True)


def _atomic(name: str, values: st.SearchStrategy[Any], floating: bool = False) -> Column:
    return Column(dt.AtomicType(name), values, True, floating)


_ELEMENTS = [
    (dt.AtomicType("INT"), _ints(32)),
    (dt.CharType(dt.MAX_LENGTH, True), st.text(max_size=6)),
    (dt.AtomicType("DOUBLE"), _FLOAT64),
]
_NESTED = [
    *(Column(dt.ArrayType(t), st.lists(_with_nulls(v), max_size=4), False) for t, v in _ELEMENTS),
    *(
        Column(
            dt.MapType(kt.copy(nullable=False), vt),
            st.dictionaries(kv, _with_nulls(vv), max_size=3).map(lambda d: list(d.items())),
            False,
        )
        for kt, kv in _ELEMENTS[:2]
        for vt, vv in _ELEMENTS
    ),
    Column(
        dt.RowType(
            (
                dt.DataField(0, "x", dt.AtomicType("INT")),
                dt.DataField(1, "y", dt.CharType(dt.MAX_LENGTH, True)),
            )
        ),
        st.fixed_dictionaries({"x": _with_nulls(_ints(32)), "y": _with_nulls(st.text())}),
        False,
    ),
]
COLUMN = st.one_of(
    st.sampled_from(
        [
            _atomic("BOOLEAN", st.booleans()),
            _atomic("TINYINT", _ints(8)),
            _atomic("SMALLINT", _ints(16)),
            _atomic("INT", _ints(32)),
            _atomic("BIGINT", _ints(64)),
            _atomic("FLOAT", _FLOAT32, floating=True),
            _atomic("DOUBLE", _FLOAT64, floating=True),
            _atomic("DATE", st.integers(*_DAYS)),
            Column(dt.CharType(dt.MAX_LENGTH, True), _TEXT, True),
            Column(dt.BinaryType(dt.MAX_LENGTH, True), _BINARY, True),
        ]
    ),
    st.integers(1, 8).map(_varchar),
    st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: _decimal(p, s))),
    st.integers(0, 9).map(_time),
    st.builds(_timestamp, st.integers(0, 9), st.booleans()),
    st.sampled_from(_NESTED),
)
NAMES = st.sampled_from(["é", "a b", "x=y", "A", "_KEY_c0", "_SEQUENCE_NUMBER", "a/b", "..", "%"])


@dataclass(frozen=True)
class Case:
    names: list[str]
    columns: list[Column]
    nullable: list[bool]
    primary_keys: list[str]
    partition_keys: list[str]
    options: dict[str, str]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    columns = draw(st.lists(COLUMN, min_size=1, max_size=5))
    names = []
    for i in range(len(columns)):
        odd = draw(NAMES) if draw(st.integers(0, 19)) == 0 else ""
        names.append(odd if odd and odd not in names else f"c{i}")
    nullable = [draw(st.booleans()) for _ in columns]
    keyable = [n for n, c in zip(names, columns, strict=True) if c.key]
    primary = draw(st.lists(st.sampled_from(keyable), unique=True, max_size=2)) if keyable else []
    if draw(st.integers(0, 3)) == 0:
        primary = []
    partition = draw(st.lists(st.sampled_from(keyable), unique=True, max_size=1)) if keyable else []
    options: dict[str, str] = {}
    if primary:
        bucket = draw(st.sampled_from([None, "1", "2", "3"]))
    else:
        bucket = draw(st.sampled_from([None, None, "2"]))
        if bucket:
            options["bucket-key"] = draw(st.sampled_from(names))
    if bucket:
        options["bucket"] = bucket
    options["file.format"] = draw(st.sampled_from(["parquet", "parquet", "parquet", "orc", "avro"]))
    if draw(st.integers(0, 4)) == 0:
        options["target-file-size"] = "1 b"
    if draw(st.integers(0, 4)) == 0:
        options["metadata.stats-mode"] = draw(st.sampled_from(["full", "none", "truncate(3)"]))
    return Case(names, columns, nullable, primary, partition, options)


def _schema(case: Case) -> Schema:
    fields, _ = assign_field_ids(
        [
            (n, c.type.copy(nullable=nullable))
            for n, c, nullable in zip(case.names, case.columns, case.nullable, strict=True)
        ]
    )
    return Schema(fields, case.partition_keys, case.primary_keys, dict(case.options))


@st.composite
def batches(draw: st.DrawFn, case: Case) -> list[pa.Table]:
    out = []
    for _ in range(draw(st.integers(1, 2))):
        n = draw(st.sampled_from([0, 1, 2, 3, 5]))
        arrays = []
        for col, nullable in zip(case.columns, case.nullable, strict=True):
            # rarely a null in a NOT NULL column: a NullViolationError, nothing committed
            nulls = nullable or draw(st.integers(0, 59)) == 0
            values = col.with_nulls if nulls else col.values
            arrays.append(pa.array(draw(st.lists(values, min_size=n, max_size=n)), col.arrow))
        out.append(pa.Table.from_arrays(arrays, names=case.names))
    return out


def _key(case: Case) -> list[str]:
    """The columns that tell rows apart in a primary-key table: the primary key within each
    partition, except with bucket = -1 and a key without every partition key (cross-partition
    upsert), where a key is one row across partitions."""
    cross = "bucket" not in case.options and not set(case.partition_keys) <= set(case.primary_keys)
    extra = [] if cross else [p for p in case.partition_keys if p not in case.primary_keys]
    return [*case.primary_keys, *extra]


def _expected(case: Case, committed: list[pa.Table]) -> Counter[Any]:
    rows = [r for t in committed for r in canon_rows(t)]
    if not case.primary_keys:
        return Counter(rows)
    index = [case.names.index(k) for k in _key(case)]
    last = {tuple(r[i] for i in index): r for r in rows}
    return Counter(last.values())


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with sandbox(tmp_path_factory, "fuzz-batches") as b:
        yield b


@fuzz_settings(max_examples=300)
@given(data=st.data())
def test_random_schemas_and_batches(box: Sandbox, data: st.DataObject) -> None:
    case = data.draw(cases(), "case")
    with box.contained():
        _write_and_read(box, case, data)


def _write_and_read(box: Sandbox, case: Case, data: st.DataObject) -> None:
    out = Outcome("batches")
    name = box.fresh_name("t")
    _, error = out.step(lambda: box.catalog.create_table(f"db.{name}", _schema(case)))
    if error is None:
        table = box.catalog.get_table(f"db.{name}")
        keys = _key(case) if case.primary_keys else []
        float_key = any(case.columns[case.names.index(k)].floating for k in keys)
        committed: list[pa.Table] = []
        for batch in data.draw(batches(case), "batches"):
            _, failed = out.step(lambda b=batch: write_commit(table, b))  # type: ignore[misc]
            if failed is None:
                committed.append(batch)
            check_snapshots(table_path(box, name))
            result = read_all(table)  # readable after every commit, failed or not
            assert result.schema.names == case.names
            seen = Counter(canon_rows(result))
            if float_key:
                written = {r for t in committed for r in canon_rows(t)}
                assert set(seen) <= written and (result.num_rows > 0) == bool(written)
            else:
                expected = _expected(case, committed)
                assert seen == expected, (
                    f"missing {list((expected - seen).elements())[:3]}, "
                    f"extra {list((seen - expected).elements())[:3]}"
                )
    out.record()
