"""Predicates: Arrow filtering against a plain-Python model, stats pruning never losing rows."""

from __future__ import annotations

import datetime
import math
import pickle
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_pyspark.errors import PredicateError
from paimon_pyspark.read.predicate import (
    CompoundPredicate,
    FieldStats,
    LeafPredicate,
    Predicate,
    PredicateBuilder,
)
from paimon_pyspark.types.arrow import to_arrow_schema
from paimon_pyspark.types.data_types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    STRING,
    DataField,
    DataType,
    DecimalType,
    RowType,
    TimestampType,
)

UTC = datetime.UTC
NAN = float("nan")
CHARS = "aAbz%_\\é中😀\n"

COLUMNS: dict[str, tuple[DataType, st.SearchStrategy[Any]]] = {
    "i": (INT(), st.integers(-3, 3) | st.integers(-(2**31), 2**31 - 1)),
    "l": (BIGINT(), st.integers(-(2**63), 2**63 - 1)),
    "s": (STRING(), st.text(CHARS, max_size=4) | st.text(max_size=3)),
    "d": (DOUBLE(), st.sampled_from([0.0, -0.0, 1.5, NAN, -math.inf]) | st.floats()),
    "f": (FLOAT(), st.floats(width=32)),
    "dec": (DecimalType(10, 2), st.decimals(-(10**6), 10**6, places=2)),
    "dt": (DATE(), st.dates(datetime.date(1969, 12, 25), datetime.date(1970, 1, 5)) | st.dates()),
    "ts": (TimestampType(6), st.datetimes()),
    "ts3": (
        TimestampType(3),
        st.datetimes().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
    ),
    "tsl": (TimestampType(6, local_tz=True), st.datetimes(timezones=st.just(UTC))),
    "bin": (BYTES(), st.binary(max_size=3)),
    "bo": (BOOLEAN(), st.booleans()),
}
ROW_TYPE = RowType(tuple(DataField(i, n, t) for i, (n, (t, _)) in enumerate(COLUMNS.items())))
PB = PredicateBuilder(ROW_TYPE, "db.t")
COMPARISONS = ["equal", "not_equal", "less_than", "less_or_equal", "greater_than"]
COMPARISONS += ["greater_or_equal"]

rows_st = st.lists(
    st.fixed_dictionaries({n: st.none() | s for n, (_, s) in COLUMNS.items()}), max_size=12
)


def to_table(rows: list[dict[str, Any]]) -> pa.Table:
    columns = {n: [r[n] for r in rows] for n in COLUMNS}
    return pa.Table.from_pydict(columns, schema=to_arrow_schema(ROW_TYPE.fields))


@st.composite
def like_patterns(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(st.sampled_from(["a", "é", "\n", "%", "_", "\\%", "\\_", "\\\\"])))
    return "".join(tokens)


@st.composite
def leaves(draw: st.DrawFn, rows: list[dict[str, Any]]) -> Predicate:
    name = draw(st.sampled_from(list(COLUMNS)))
    present = [r[name] for r in rows if r[name] is not None]
    values = COLUMNS[name][1]
    literal = (st.sampled_from(present) | values) if present else values
    if name == "d":
        literal = literal | st.integers(-2, 2)
    literal = st.none() | literal if draw(st.integers(0, 9)) == 0 else literal
    kinds = [*COMPARISONS, "is_null", "is_not_null", "is_in", "is_not_in", "between"]
    kinds += ["not_between"]
    if name in ("s", "bin"):
        kinds += ["startswith", "endswith", "contains"]
    if name == "s":
        kinds += ["like"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("is_null", "is_not_null"):
        return getattr(PB, kind)(name)
    if kind in ("is_in", "is_not_in"):
        return getattr(PB, kind)(name, draw(st.lists(literal, max_size=3)))
    if kind in ("between", "not_between"):
        return getattr(PB, kind)(name, draw(literal), draw(literal))
    if kind == "like":
        return PB.like(name, draw(like_patterns()))
    if kind in ("startswith", "endswith", "contains"):
        pattern = st.sampled_from([p[:k] for p in present for k in range(len(p) + 1)] or [""])
        return getattr(PB, kind)(name, draw(pattern | values))
    return getattr(PB, kind)(name, draw(literal))


def predicates(rows: list[dict[str, Any]]) -> st.SearchStrategy[Predicate]:
    return st.recursive(
        leaves(rows),
        lambda children: st.builds(
            lambda fn, cs: fn(*cs),
            st.sampled_from([PB.and_, PB.or_]),
            st.lists(children, min_size=1, max_size=3),
        ),
        max_leaves=6,
    )


def true_stats(rows: list[dict[str, Any]], name: str) -> FieldStats:
    """What a Parquet footer says: NaN left out of min/max."""
    values = [r[name] for r in rows if r[name] is not None]
    ordered = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
    return FieldStats(
        min(ordered) if ordered else None,
        max(ordered) if ordered else None,
        len(rows) - len(values),
    )


@st.composite
def weakened(draw: st.DrawFn, stats: FieldStats) -> FieldStats | None:
    """Stats with parts unknown, strings truncated, or a NaN max, as other writers leave them."""
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return None
    if choice == 1:
        keep = draw(st.lists(st.booleans(), min_size=3, max_size=3))
        return FieldStats(
            *(
                v if k else None
                for v, k in zip((stats.min, stats.max, stats.null_count), keep, strict=True)
            )
        )
    if choice == 2 and isinstance(stats.min, str | bytes):
        return FieldStats(stats.min[: draw(st.integers(0, 2))], stats.max, stats.null_count)
    if choice == 3 and isinstance(stats.max, float):
        return FieldStats(stats.min, NAN, stats.null_count)
    return stats


PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(st.data())
def test_arrow_filter_matches_python_model(data: st.DataObject) -> None:
    rows = data.draw(rows_st)
    pred = data.draw(predicates(rows))
    table = to_table(rows).append_column("_idx", pa.array(range(len(rows)), pa.int64()))
    expected = [i for i, r in enumerate(table.to_pylist()) if pred.test_values(r)]
    actual = table.filter(pred.to_arrow_expression()).column("_idx").to_pylist()
    assert actual == expected


@PROPERTY
@given(st.data())
def test_stats_never_prune_a_file_with_a_matching_row(data: st.DataObject) -> None:
    rows = to_table(data.draw(rows_st)).to_pylist()
    pred = data.draw(predicates(rows))
    stats: dict[str, FieldStats] = {}
    for name in pred.fields():
        weak = data.draw(weakened(true_stats(rows, name)))
        if weak is not None:
            stats[name] = weak
    if any(pred.test_values(r) for r in rows):
        assert pred.test_stats(stats, len(rows))


@PROPERTY
@given(st.data())
def test_extract_keeps_only_named_fields_and_every_matching_row(data: st.DataObject) -> None:
    rows = to_table(data.draw(rows_st)).to_pylist()
    pred = data.draw(predicates(rows))
    names = set(data.draw(st.lists(st.sampled_from(list(COLUMNS)), max_size=4)))
    part = pred.extract(names)
    if part is None:
        return
    assert part.fields() <= names
    for r in rows:
        assert not pred.test_values(r) or part.test_values(r)
    assert pred.extract(pred.fields()) == pred


def test_sql_null_and_ieee_float_semantics() -> None:
    table = to_table(
        [
            {n: None for n in COLUMNS} | {"d": d, "i": i}
            for d, i in [(1.0, 1), (NAN, 2), (-0.0, 3), (None, None)]
        ]
    )

    def ids(pred: Predicate) -> list[Any]:
        return table.filter(pred.to_arrow_expression()).column("i").to_pylist()

    assert ids(PB.not_equal("d", 1)) == [2, 3]
    assert ids(PB.is_not_in("d", [1.0])) == [2, 3]
    assert ids(PB.is_not_in("i", [1, None])) == []
    assert ids(PB.is_in("d", [NAN, 1])) == [1]
    assert ids(PB.is_in("d", [0.0])) == [3]
    assert ids(PB.equal("d", NAN)) == []
    assert ids(PB.greater_than("d", 0)) == [1]
    assert ids(PB.equal("i", None)) == []
    assert ids(PB.is_null("d")) == [None]
    assert ids(PB.not_between("i", None, 1)) == [2, 3]


def test_stats_prune_only_what_cannot_match() -> None:
    stats = {"i": FieldStats(5, 5, 0), "d": FieldStats(1.0, 1.0, 0), "s": FieldStats("b", "c", 2)}
    assert not PB.not_equal("i", 5).test_stats(stats, 3)
    assert PB.not_equal("d", 1.0).test_stats(stats, 3)  # a NaN row would match
    assert not PB.greater_than("i", 5).test_stats(stats, 3)
    assert not PB.is_null("i").test_stats(stats, 3)
    assert PB.is_null("i").test_stats({}, 3)
    assert not PB.startswith("s", "a").test_stats(stats, 3)
    assert PB.startswith("s", "bz").test_stats(stats, 3)
    assert not PB.startswith("s", "ca").test_stats(stats, 3)
    assert not PB.equal("s", "b").test_stats(stats, 2)  # every row is null
    assert PB.less_than("d", 0.0).test_stats({"d": FieldStats(NAN, NAN, 0)}, 3)


def test_literals_convert_to_the_field_type() -> None:
    assert PB.equal("d", 1) == LeafPredicate("equal", "d", DOUBLE(), (1.0,))
    assert PB.equal("dec", 3).literals == (Decimal("3.00"),)
    tsl = PB.equal("tsl", datetime.datetime(2020, 1, 1)).literals[0]
    assert tsl == datetime.datetime(2020, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("i", "12"),
        ("i", 1.5),
        ("i", 2**40),
        ("i", True),
        ("dec", Decimal("1.234")),
        ("ts3", datetime.datetime(2020, 1, 1, microsecond=1234)),
        ("dt", 5),
        ("s", 7),
    ],
)
def test_bad_literal_names_table_field_and_value(field: str, value: Any) -> None:
    with pytest.raises(PredicateError) as info:
        PB.less_than(field, value)
    message = str(info.value)
    assert "'db.t'" in message and f"'{field}'" in message and repr(value) in message


def test_unknown_field_names_table_and_field() -> None:
    with pytest.raises(PredicateError, match=r"table 'db\.t'.*'nope'"):
        PB.equal("nope", 1)


def test_misused_functions_are_refused() -> None:
    with pytest.raises(PredicateError, match="needs a string field"):
        PB.startswith("i", "1")
    with pytest.raises(PredicateError, match="invalid"):
        PB.like("s", "a\\b")
    with pytest.raises(PredicateError, match="list of values"):
        PB.is_in("s", "abc")
    with pytest.raises(PredicateError, match="at least one"):
        PB.and_()


def test_compounds_flatten_and_survive_pickling() -> None:
    a, b, c = PB.equal("i", 1), PB.is_null("s"), PB.less_than("d", 2)
    pred = PB.and_(PB.and_(a, b), c)
    assert pred == CompoundPredicate("and", (a, b, c))
    assert PB.and_predicates([]) is None and PB.or_predicates([a]) == a
    assert pickle.loads(pickle.dumps(pred)) == pred
    assert PB.or_(a, pred).extract({"i", "s"}) == PB.or_(a, PB.and_(a, b))
    assert PB.or_(a, c).extract({"i"}) is None
    assert str(pred) == "AND(equal(i, 1), isNull(s), lessThan(d, 2.0))"
