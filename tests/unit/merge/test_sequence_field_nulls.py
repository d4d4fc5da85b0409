"""A null ``sequence.field`` never wins a merge, in either ``sequence.field.sort-order``.

Java's UserDefinedSeqComparator is generated with "null is smaller" applied before the
direction, so a record whose sequence field is null orders first among the records of its key
whether the order is ascending or descending; the record merged last (the one a deduplicate
keeps) is therefore one with a value whenever the key has one. With several sequence fields the
rule holds field by field: nulls of the first field first, ties (both null, or equal) decided by
the next field. The expected rows below come from that comparator, written as a plain-Python
sort (``_java_order``) and also stated by hand for the cases issue 19 names.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark.merge.merge_function import (
    AGGREGATION,
    DEDUPLICATE,
    PARTIAL_UPDATE,
    FieldAgg,
    MergeSettings,
    merge,
    sort_order,
)
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER, VALUE_KIND

INS = 0


def _records(ts: list[Any], v: list[Any], ts2: list[Any] | None = None) -> pa.Table:
    """Records of key 1 in arrival order (``_SEQUENCE_NUMBER`` 0, 1, ...)."""
    n = len(ts)
    cols: dict[str, pa.Array] = {
        "id": pa.array([1] * n, pa.int64()),
        "ts": pa.array(ts, pa.int64()),
        "v": pa.array(v, pa.int64()),
    }
    if ts2 is not None:
        cols["ts2"] = pa.array(ts2, pa.int64())
    cols[SEQUENCE_NUMBER] = pa.array(range(n), pa.int64())
    cols[VALUE_KIND] = pa.array([INS] * n, pa.int8())
    return pa.table(cols)


def _settings(fields: tuple[str, ...], ascending: bool, engine: str = DEDUPLICATE) -> MergeSettings:
    aggs: tuple[tuple[str, FieldAgg], ...] = ()
    if engine == AGGREGATION:
        aggs = (("v", FieldAgg("sum")),)
    return MergeSettings(
        engine=engine, sequence_fields=fields, sequence_ascending=ascending, field_aggs=aggs
    )


def _java_compare(a: dict[str, Any], b: dict[str, Any], fields: tuple[str, ...], asc: bool) -> int:
    """Java's generated record comparator over the sequence fields, then _SEQUENCE_NUMBER."""
    for f in fields:
        x, y = a[f], b[f]
        if x is None and y is None:
            continue
        if x is None:
            return -1
        if y is None:
            return 1
        if x != y:
            c = -1 if x < y else 1
            return c if asc else -c
    return -1 if a[SEQUENCE_NUMBER] < b[SEQUENCE_NUMBER] else 1


def _java_order(t: pa.Table, fields: tuple[str, ...], asc: bool) -> list[int]:
    rows = t.to_pylist()
    cmp = functools.cmp_to_key(lambda i, j: _java_compare(rows[i], rows[j], fields, asc))
    return sorted(range(len(rows)), key=cmp)


@pytest.mark.parametrize("ascending", [True, False])
def test_value_then_null_keeps_the_value(ascending: bool) -> None:
    """Issue 19: {id 1, ts 50} then {id 1, ts NULL} reads ts = 50 in both orders."""
    t = _records(ts=[50, None], v=[10, 11])
    merged = merge(t, ["id"], _settings(("ts",), ascending), drop_delete=True).to_pylist()
    assert [(r["ts"], r["v"]) for r in merged] == [(50, 10)]


@pytest.mark.parametrize("ascending", [True, False])
def test_null_then_value_keeps_the_value(ascending: bool) -> None:
    t = _records(ts=[None, 50], v=[10, 11])
    merged = merge(t, ["id"], _settings(("ts",), ascending), drop_delete=True).to_pylist()
    assert [(r["ts"], r["v"]) for r in merged] == [(50, 11)]


def test_descending_keeps_the_smallest_value_not_the_null() -> None:
    t = _records(ts=[7, None, 3, 9], v=[1, 2, 3, 4])
    merged = merge(t, ["id"], _settings(("ts",), False), drop_delete=True).to_pylist()
    assert [(r["ts"], r["v"]) for r in merged] == [(3, 3)]


def test_only_nulls_fall_back_to_arrival_order() -> None:
    for ascending in (True, False):
        t = _records(ts=[None, None, None], v=[1, 2, 3])
        merged = merge(t, ["id"], _settings(("ts",), ascending), drop_delete=True).to_pylist()
        assert [r["v"] for r in merged] == [3]


@pytest.mark.parametrize("ascending", [True, False])
def test_sort_order_matches_java_comparator_on_every_null_pattern(ascending: bool) -> None:
    """Every combination of null / small / large over two sequence fields, four records."""
    values = [None, 1, 2]
    combos = list(itertools.product(values, values))
    fields = ("ts", "ts2")
    for start in range(0, len(combos), 2):
        chosen = [combos[(start + i) % len(combos)] for i in range(4)]
        chosen += [combos[(start * 5 + i) % len(combos)] for i in range(3)]
        t = _records(
            ts=[c[0] for c in chosen], v=list(range(len(chosen))), ts2=[c[1] for c in chosen]
        )
        got = sort_order(t, ["id"], _settings(fields, ascending)).tolist()
        assert got == _java_order(t, fields, ascending), chosen


@pytest.mark.parametrize("ascending", [True, False])
def test_second_sequence_field_decides_when_the_first_is_null_in_both(ascending: bool) -> None:
    t = _records(ts=[None, None, 5], v=[1, 2, 3], ts2=[4, None, None])
    fields = ("ts", "ts2")
    merged = merge(t, ["id"], _settings(fields, ascending), drop_delete=True).to_pylist()
    # ts: the nulls come first, then 5: the record with ts 5 wins.
    assert [r["v"] for r in merged] == [3]
    order = sort_order(t, ["id"], _settings(fields, ascending)).tolist()
    # Between the two null-ts records ts2 decides: null first, then 4.
    assert order == [1, 0, 2]


@pytest.mark.parametrize("ascending", [True, False])
def test_partial_update_fills_from_the_last_record_in_sequence_order(ascending: bool) -> None:
    """Partial-update applies records in comparator order; the null-ts record goes first, so
    the valued record's non-null fields win and the null record's only fill gaps."""
    t = pa.table(
        {
            "id": pa.array([1, 1], pa.int64()),
            "ts": pa.array([50, None], pa.int64()),
            "a": pa.array([1, 2], pa.int64()),
            "b": pa.array([None, 20], pa.int64()),
            SEQUENCE_NUMBER: pa.array([0, 1], pa.int64()),
            VALUE_KIND: pa.array([INS, INS], pa.int8()),
        }
    )
    s = _settings(("ts",), ascending, PARTIAL_UPDATE)
    merged = merge(t, ["id"], s, drop_delete=True).to_pylist()
    assert [(r["ts"], r["a"], r["b"]) for r in merged] == [(50, 1, 20)]


@pytest.mark.parametrize("ascending", [True, False])
def test_aggregation_keeps_the_valued_sequence_field(ascending: bool) -> None:
    """The sequence field aggregates as last_value: the valued record is merged last."""
    t = _records(ts=[50, None], v=[10, 11])
    s = _settings(("ts",), ascending, AGGREGATION)
    merged = merge(t, ["id"], s, drop_delete=True).to_pylist()
    assert [(r["ts"], r["v"]) for r in merged] == [(50, 21)]


def test_buffer_merge_orders_as_the_read_merge() -> None:
    """The write buffer (``buffer=True``) and a merge of sorted runs agree."""
    t = _records(ts=[8, None, 2, None], v=[1, 2, 3, 4])
    for ascending in (True, False):
        s = _settings(("ts",), ascending)
        a = merge(t, ["id"], s, drop_delete=True, buffer=True).to_pylist()
        b = merge(t, ["id"], s, drop_delete=True).to_pylist()
        assert a == b
        assert a[0]["ts"] == (8 if ascending else 2)
