"""Targeted behaviours of each merge engine and each merge option, as Java's merge functions
have them, and the option validation done at table load."""

from __future__ import annotations

import decimal
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark.errors import MergeError, OptionError, UnsupportedOptionError
from paimon_pyspark.merge.merge_function import (
    FieldAgg,
    MergeSettings,
    check_merge_options,
    merge,
)
from paimon_pyspark.options import check_supported
from paimon_pyspark.types.data_types import (
    BIGINT,
    BOOLEAN,
    DOUBLE,
    INT,
    MAX_LENGTH,
    CharType,
    DataField,
    DecimalType,
)

SEQ, KIND = "_SEQUENCE_NUMBER", "_VALUE_KIND"
INS, UB, UA, D = 0, 1, 2, 3


def records(rows: list[tuple[int, Any, int, int]], typ: pa.DataType | None = None) -> pa.Table:
    """(key, v, sequence, kind) tuples."""
    return pa.table(
        {
            "k": pa.array([r[0] for r in rows], pa.int64()),
            "v": pa.array([r[1] for r in rows], typ or pa.int64()),
            SEQ: pa.array([r[2] for r in rows], pa.int64()),
            KIND: pa.array([r[3] for r in rows], pa.int8()),
        }
    )


def rows(t: pa.Table) -> list[tuple[Any, ...]]:
    return [(r["k"], r["v"], r[SEQ], r[KIND]) for r in t.to_pylist()]


def agg(func: str, **kw: Any) -> MergeSettings:
    return MergeSettings(engine="aggregation", field_aggs=(("v", FieldAgg(func, **kw)),))


# --- deduplicate -------------------------------------------------------------------------------


def test_deduplicate_keeps_newest_record_and_drops_deleted_keys_on_read() -> None:
    t = records([(1, 10, 0, INS), (1, 11, 1, UA), (2, 20, 2, INS), (2, 20, 3, D)])
    assert rows(merge(t, ["k"], MergeSettings(), drop_delete=False)) == [
        (1, 11, 1, UA),
        (2, 20, 3, D),
    ]
    assert rows(merge(t, ["k"], MergeSettings(), drop_delete=True)) == [(1, 11, 1, UA)]


def test_deduplicate_ignore_delete_keeps_previous_value() -> None:
    t = records([(1, 10, 0, INS), (1, 10, 1, D), (2, 5, 2, D), (2, 6, 3, UB)])
    merged = merge(t, ["k"], MergeSettings(ignore_delete=True), drop_delete=False)
    assert rows(merged) == [(1, 10, 0, INS)]  # key 2 has only retractions: nothing


def test_lone_retraction_passes_through_unmerged() -> None:
    t = records([(1, 10, 0, D)])
    for s in (MergeSettings(ignore_delete=True), MergeSettings(engine="first-row"), agg("sum")):
        assert rows(merge(t, ["k"], s, drop_delete=False)) == [(1, 10, 0, D)]
        assert merge(t, ["k"], s, drop_delete=True).num_rows == 0


def test_sequence_field_orders_before_sequence_number() -> None:
    t = pa.table(
        {
            "k": pa.array([1, 1, 1], pa.int64()),
            "v": pa.array([10, 11, 12], pa.int64()),
            "ts": pa.array([5, None, 3], pa.int64()),
            SEQ: pa.array([0, 1, 2], pa.int64()),
            KIND: pa.array([INS, INS, INS], pa.int8()),
        }
    )
    asc = MergeSettings(sequence_fields=("ts",))
    assert merge(t, ["k"], asc, True).column("v").to_pylist() == [10]  # ts 5 is the largest
    desc = MergeSettings(sequence_fields=("ts",), sequence_ascending=False)
    assert merge(t, ["k"], desc, True).column("v").to_pylist() == [12]  # null sorts first


def test_composite_key_and_string_key_sort() -> None:
    t = pa.table(
        {
            "a": pa.array(["b", "a", "b", "a"]),
            "n": pa.array([1, 2, 1, 1], pa.int32()),
            "v": pa.array([1, 2, 3, 4], pa.int64()),
            SEQ: pa.array([3, 2, 1, 0], pa.int64()),
            KIND: pa.array([INS, INS, INS, INS], pa.int8()),
        }
    )
    merged = merge(t, ["a", "n"], MergeSettings(), True).to_pylist()
    assert [(r["a"], r["n"], r["v"]) for r in merged] == [("a", 1, 4), ("a", 2, 2), ("b", 1, 1)]


# --- first-row ---------------------------------------------------------------------------------


def test_first_row_keeps_oldest_and_refuses_retractions() -> None:
    t = records([(1, 10, 0, INS), (1, 11, 1, INS)])
    assert rows(merge(t, ["k"], MergeSettings(engine="first-row"), True)) == [(1, 10, 0, INS)]
    bad = records([(1, 10, 0, INS), (1, 10, 1, D)])
    with pytest.raises(MergeError, match="ignore-delete"):
        merge(bad, ["k"], MergeSettings(engine="first-row"), True)
    ok = merge(bad, ["k"], MergeSettings(engine="first-row", ignore_delete=True), True)
    assert rows(ok) == [(1, 10, 0, INS)]


# --- partial-update ----------------------------------------------------------------------------


def pu_records(data: list[tuple[int, Any, Any, int, int]]) -> pa.Table:
    return pa.table(
        {
            "k": pa.array([r[0] for r in data], pa.int64()),
            "a": pa.array([r[1] for r in data], pa.int64()),
            "b": pa.array([r[2] for r in data], pa.string()),
            SEQ: pa.array([r[3] for r in data], pa.int64()),
            KIND: pa.array([r[4] for r in data], pa.int8()),
        }
    )


def test_partial_update_newer_non_null_fields_overwrite() -> None:
    t = pu_records([(1, 1, "x", 0, INS), (1, None, "y", 1, INS), (1, 3, None, 2, UA)])
    merged = merge(t, ["k"], MergeSettings(engine="partial-update"), True).to_pylist()
    assert merged == [{"k": 1, "a": 3, "b": "y", SEQ: 2, KIND: INS}]


def test_partial_update_refuses_delete_by_default() -> None:
    t = pu_records([(1, 1, "x", 0, INS), (1, None, None, 1, D)])
    with pytest.raises(MergeError, match="remove-record-on-delete"):
        merge(t, ["k"], MergeSettings(engine="partial-update"), True)


def test_partial_update_remove_record_on_delete() -> None:
    s = MergeSettings(engine="partial-update", remove_record_on_delete=True)
    deleted = pu_records([(1, 1, "x", 0, INS), (1, 1, "x", 1, D)])
    assert merge(deleted, ["k"], s, True).num_rows == 0
    # -U is skipped; a later insert builds on the -D's values (Java keeps them).
    t = pu_records(
        [(1, 1, "x", 0, INS), (1, 1, None, 1, D), (1, None, "z", 2, INS), (1, 9, None, 3, UB)]
    )
    assert merge(t, ["k"], s, True).to_pylist() == [{"k": 1, "a": 1, "b": "z", SEQ: 3, KIND: INS}]


def test_partial_update_ignore_delete_keeps_last_insert_sequence() -> None:
    s = MergeSettings(engine="partial-update", ignore_delete=True)
    t = pu_records([(1, 1, "x", 0, INS), (1, None, None, 5, D)])
    assert merge(t, ["k"], s, False).to_pylist() == [{"k": 1, "a": 1, "b": "x", SEQ: 0, KIND: INS}]


# --- aggregation -------------------------------------------------------------------------------


def test_sum_keeps_type_subtracts_retractions_and_skips_nulls() -> None:
    t = records([(1, 5, 0, INS), (1, None, 1, INS), (1, 2, 2, UB), (1, 10, 3, UA)], pa.int32())
    merged = merge(t, ["k"], agg("sum"), True)
    assert merged.column("v").type == pa.int32()
    assert rows(merged) == [(1, 13, 3, INS)]
    only_nulls = records([(1, None, 0, INS), (1, None, 1, INS)], pa.int32())
    assert rows(merge(only_nulls, ["k"], agg("sum"), True)) == [(1, None, 1, INS)]
    first_retract = records([(1, 4, 0, UB), (1, None, 1, INS)], pa.int32())
    assert rows(merge(first_retract, ["k"], agg("sum"), True)) == [(1, -4, 1, INS)]


def test_sum_overflow_raises_like_java_add_exact() -> None:
    t = records([(1, 2**31 - 1, 0, INS), (1, 1, 1, INS), (1, -5, 2, INS)], pa.int32())
    with pytest.raises(MergeError, match="overflows"):
        merge(t, ["k"], agg("sum"), True)
    big = records([(1, 2**63 - 1, 0, INS), (1, 1, 1, INS)], pa.int64())
    with pytest.raises(MergeError, match="overflows"):
        merge(big, ["k"], agg("sum"), True)
    fits = records([(1, 2**63 - 1, 0, INS), (1, -1, 1, INS), (1, 1, 2, INS)], pa.int64())
    assert merge(fits, ["k"], agg("sum"), True).column("v").to_pylist() == [2**63 - 1]


def test_sum_of_decimals_is_exact() -> None:
    typ = pa.decimal128(30, 3)
    vals = [decimal.Decimal("12345678901234567890.125"), decimal.Decimal("0.875")]
    t = records([(1, vals[0], 0, INS), (1, vals[1], 1, INS), (1, vals[1], 2, D)], typ)
    out = merge(t, ["k"], agg("sum"), True).column("v").to_pylist()
    assert out == [vals[0]]
    small = pa.decimal128(5, 2)
    t = records(
        [(1, decimal.Decimal("1.25"), 0, INS), (1, decimal.Decimal("-3.50"), 1, INS)], small
    )
    assert merge(t, ["k"], agg("sum"), True).column("v").to_pylist() == [decimal.Decimal("-2.25")]
    over = records(
        [(1, decimal.Decimal("999.99"), 0, INS), (1, decimal.Decimal("1"), 1, INS)], small
    )
    with pytest.raises(MergeError):
        merge(over, ["k"], agg("sum"), True)


@pytest.mark.parametrize(
    ("func", "expected"),
    [
        ("max", 7),
        ("min", 1),
        ("first_value", None),
        ("first_non_null_value", 3),
        ("first_not_null_value", 3),
        ("last_value", 1),
        ("last_non_null_value", 1),
        ("product", 21),
    ],
)
def test_value_aggregates(func: str, expected: Any) -> None:
    t = records([(1, None, 0, INS), (1, 3, 1, INS), (1, 7, 2, UA), (1, 1, 3, INS)])
    assert merge(t, ["k"], agg(func), True).column("v").to_pylist() == [expected]


def test_non_retractable_functions_raise_unless_ignore_retract() -> None:
    t = records([(1, 3, 0, INS), (1, 3, 1, UB), (1, 5, 2, UA)])
    for func in ("max", "min", "first_value", "product"):
        with pytest.raises(MergeError, match="ignore-retract"):
            merge(t, ["k"], agg(func), True)
    assert merge(t, ["k"], agg("max", ignore_retract=True), True).column("v").to_pylist() == [5]


def test_last_value_retraction_clears_and_last_non_null_retraction_of_null_keeps() -> None:
    t = records([(1, 3, 0, INS), (1, 3, 1, UB)])
    assert merge(t, ["k"], agg("last_value"), True).column("v").to_pylist() == [None]
    t = records([(1, 3, 0, INS), (1, None, 1, UB)])
    assert merge(t, ["k"], agg("last_non_null_value"), True).column("v").to_pylist() == [3]


def test_listagg_joins_non_empty_values_with_delimiter() -> None:
    """Java's FieldListaggAgg skips null and empty strings only: a blank one is joined."""
    t = records(
        [(1, "a", 0, INS), (1, "", 1, INS), (1, None, 2, INS), (1, " ", 3, INS), (1, "b", 4, INS)],
        pa.string(),
    )
    assert merge(t, ["k"], agg("listagg"), True).column("v").to_pylist() == ["a, ,b"]
    s = agg("listagg", delimiter=" | ")
    assert merge(t, ["k"], s, True).column("v").to_pylist() == ["a |   | b"]
    # nothing but empty strings and nulls: Java keeps the first non-null value, ""
    t = records(
        [(1, None, 0, INS), (1, "", 1, INS), (2, None, 2, INS), (2, None, 3, INS)], pa.string()
    )
    assert merge(t, ["k"], agg("listagg"), True).column("v").to_pylist() == ["", None]


def test_bool_and_or() -> None:
    t = records(
        [(1, True, 0, INS), (1, None, 1, INS), (1, False, 2, INS), (2, True, 3, INS)], pa.bool_()
    )
    assert merge(t, ["k"], agg("bool_and"), True).column("v").to_pylist() == [False, True]
    assert merge(t, ["k"], agg("bool_or"), True).column("v").to_pylist() == [True, True]


def test_aggregation_remove_record_on_delete_resets_row() -> None:
    s = MergeSettings(
        engine="aggregation",
        remove_record_on_delete=True,
        field_aggs=(("v", FieldAgg("sum")),),
    )
    t = records([(1, 5, 0, INS), (1, 5, 1, D)])
    assert rows(merge(t, ["k"], s, False)) == [(1, 5, 1, D)]
    assert merge(t, ["k"], s, True).num_rows == 0
    again = records([(1, 5, 0, INS), (1, 5, 1, D), (1, 2, 2, INS)])
    assert rows(merge(again, ["k"], s, True)) == [(1, 7, 2, INS)]  # Java starts from the -D's row


def test_double_sum_and_max() -> None:
    t = records([(1, 0.5, 0, INS), (1, 0.25, 1, INS), (1, float("nan"), 2, INS)], pa.float64())
    out = merge(t, ["k"], agg("max"), True).column("v").to_pylist()
    assert out[0] != out[0]  # NaN is the largest double (Double.compare)
    assert merge(t, ["k"], agg("min"), True).column("v").to_pylist() == [0.25]


# --- options -----------------------------------------------------------------------------------

FIELDS = [
    DataField(0, "k", BIGINT().copy(nullable=False)),
    DataField(1, "n", INT()),
    DataField(2, "s", CharType(length=MAX_LENGTH)),
    DataField(3, "flag", BOOLEAN()),
    DataField(4, "x", DOUBLE()),
    DataField(5, "dec", DecimalType(precision=10, scale=2)),
]


def settings_of(options: dict[str, str]) -> MergeSettings:
    check_supported(options, "t")
    return MergeSettings.from_options(options, FIELDS, ["k"], "t")


def test_options_parse_engine_and_field_functions() -> None:
    s = settings_of(
        {
            "merge-engine": "Aggregation",
            "fields.n.aggregate-function": "sum",
            "fields.default-aggregate-function": "last_value",
            "fields.s.aggregate-function": "listagg",
            "fields.s.list-agg-delimiter": ";",
            "fields.x.ignore-retract": "true",
        }
    )
    assert s.engine == "aggregation"
    assert s.field_agg("n") == FieldAgg("sum")
    assert s.field_agg("s") == FieldAgg("listagg", False, ";")
    assert s.field_agg("x") == FieldAgg("last_value", True)
    assert s.field_agg("k").function == "primary-key"


def test_ignore_delete_fallback_keys() -> None:
    for key in ("ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete"):
        assert settings_of({key: "true"}).ignore_delete
    assert settings_of({"partial-update.ignore-delete": "TRUE"}).ignore_delete
    assert not settings_of({}).ignore_delete


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"merge-engine": "dedup"}, OptionError),
        ({"merge-engine": "aggregation", "fields.n.aggregate-function": "avg"}, OptionError),
        ({"merge-engine": "aggregation", "fields.s.aggregate-function": "sum"}, OptionError),
        ({"merge-engine": "aggregation", "fields.n.aggregate-function": "listagg"}, OptionError),
        ({"merge-engine": "aggregation", "fields.n.aggregate-function": "bool_or"}, OptionError),
        ({"merge-engine": "aggregation", "fields.n.aggregate-function": "collect"}, OptionError),
        ({"merge-engine": "aggregation", "fields.n.aggregate-function": "rbm64"}, OptionError),
        (
            {"merge-engine": "aggregation", "fields.dec.aggregate-function": "product"},
            UnsupportedOptionError,
        ),
        ({"merge-engine": "aggregation", "fields.nope.aggregate-function": "sum"}, OptionError),
        ({"merge-engine": "aggregation", "fields.s.distinct": "maybe"}, OptionError),
        ({"merge-engine": "aggregation", "fields.n.nested-key-x": "a"}, UnsupportedOptionError),
        (
            {
                "merge-engine": "aggregation",
                "aggregation.remove-record-on-delete": "true",
                "fields.n.ignore-retract": "true",
            },
            OptionError,
        ),
        (
            {"merge-engine": "partial-update", "fields.n.sequence-group": "missing"},
            OptionError,
        ),
        (
            {
                "merge-engine": "partial-update",
                "partial-update.remove-record-on-sequence-group": "n",
            },
            OptionError,
        ),
        (
            {
                "merge-engine": "partial-update",
                "ignore-delete": "true",
                "partial-update.remove-record-on-delete": "true",
            },
            OptionError,
        ),
        ({"merge-engine": "partial-update", "fields.n.aggregate-function": "sum"}, OptionError),
        ({"merge-engine": "first-row", "sequence.field": "n"}, OptionError),
        ({"sequence.field": "missing"}, OptionError),
        ({"sequence.field": "n", "fields.n.aggregate-function": "sum"}, OptionError),
        ({"ignore-delete": "yes"}, OptionError),
        ({"sequence.field.sort-order": "up"}, OptionError),
    ],
)
def test_invalid_or_unsupported_merge_options_raise(
    options: dict[str, str], error: type[Exception]
) -> None:
    with pytest.raises(error):
        settings_of(options)


def test_check_merge_options_ignores_append_tables() -> None:
    check_merge_options({"merge-engine": "whatever"}, FIELDS, [], "t")
    with pytest.raises(OptionError):
        check_merge_options({"merge-engine": "whatever"}, FIELDS, ["k"], "t")


def test_partial_update_accepts_last_non_null_value_function() -> None:
    s = settings_of(
        {
            "merge-engine": "partial-update",
            "fields.default-aggregate-function": "last_non_null_value",
        }
    )
    assert s.engine == "partial-update"
