"""FLOAT/DOUBLE keys sort and merge as Java Paimon 1.4.2 does (see ``spec/float_keys.py``).

The expected rows are what Java wrote and read for the same records
(``tests/interop/test_float_keys_java.py`` checks them against Java itself).
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import pyarrow as pa

from paimon_pyspark.merge.merge_function import FieldAgg, MergeSettings, merge
from paimon_pyspark.spec import float_keys

SEQ, KIND = "_SEQUENCE_NUMBER", "_VALUE_KIND"
NAN, INF = math.nan, math.inf
F64 = pa.float64()


def from_bits(bits: int) -> float:
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return value


def records(keys: list[float], key_type: pa.DataType = F64, **extra: Any) -> pa.Table:
    """Key ``k``, value ``v`` = arrival index, sequence = arrival index, all inserts."""
    n = len(keys)
    return pa.table(
        {
            "k": pa.array(keys, key_type),
            "v": pa.array(range(n), pa.int64()),
            **extra,
            SEQ: pa.array(range(n), pa.int64()),
            KIND: pa.array([0] * n, pa.int8()),
        }
    )


def kv(t: pa.Table, *names: str) -> list[tuple[Any, ...]]:
    """Rows as tuples, floats by exact value (-0.0 is not 0.0, every NaN alike)."""

    def text(x: Any) -> Any:
        return ("NaN" if math.isnan(x) else x.hex()) if isinstance(x, float) else x

    return [tuple(text(r[n]) for n in names or ("k", "v")) for r in t.to_pylist()]


def h(x: float) -> str:
    return "NaN" if math.isnan(x) else x.hex()


def test_sortable_is_javas_normalized_key_order() -> None:
    values = [NAN, 1.0, -0.0, from_bits(0xFFF8_0000_0000_0000), 0.0, -INF, INF, -1.0, 5e-324]
    order = np.argsort(float_keys.sortable(pa.array(values)).to_numpy())
    got = [h(values[i]) for i in order]
    assert got[:7] == [h(-INF), h(-1.0), h(-0.0), h(0.0), h(5e-324), h(1.0), h(INF)]
    assert got[7:] == ["NaN", "NaN"]  # every NaN (any sign or payload) is the canonical one
    norm = float_keys.sortable(pa.array([NAN, from_bits(0x7FF8_0000_0000_0001)])).to_pylist()
    assert norm[0] == norm[1] == float_keys.normalized(NAN, single=False)
    single = float_keys.sortable(pa.array([NAN, -0.0, 0.0, -INF], pa.float32())).to_pylist()
    assert single == [float_keys.normalized(v, single=True) for v in (NAN, -0.0, 0.0, -INF)]
    assert single[3] < single[1] < single[2] < single[0]


def test_one_buffer_merges_zeros_and_a_nan_with_the_key_before_it() -> None:
    """Java's write buffer: -0.0 and +0.0 are one key (the +0.0 record sorts last and wins), a
    NaN equals +inf in Java's comparator and replaces it, and both NaNs are one key."""
    t = records([1.0, NAN, -0.0, 0.0, INF, -INF, NAN, 2.0])
    merged = merge(t, ["k"], MergeSettings(), drop_delete=False, buffer=True)
    assert kv(merged) == [(h(-INF), 5), (h(0.0), 3), (h(1.0), 0), (h(2.0), 7), ("NaN", 6)]
    single = records([1.0, NAN, -0.0, 0.0, INF, -INF, NAN, 2.0], pa.float32())
    merged = merge(single, ["k"], MergeSettings(), drop_delete=False, buffer=True)
    assert kv(merged) == [(h(-INF), 5), (h(0.0), 3), (h(1.0), 0), (h(2.0), 7), ("NaN", 6)]


def test_buffer_orders_a_key_by_bits_runs_order_it_by_sequence() -> None:
    """+0.0 then -0.0: one buffer keeps +0.0 (sorted after -0.0); from two sorted runs the
    newer record, -0.0, wins. A NaN after 2.0 replaces it, and 2.0 after a NaN replaces it."""
    zeros = records([0.0, -0.0])
    assert kv(merge(zeros, ["k"], MergeSettings(), False, buffer=True)) == [(h(0.0), 0)]
    assert kv(merge(zeros, ["k"], MergeSettings(), False)) == [(h(-0.0), 1)]
    assert kv(merge(records([2.0, NAN]), ["k"], MergeSettings(), True)) == [("NaN", 1)]
    assert kv(merge(records([NAN, 2.0]), ["k"], MergeSettings(), True)) == [(h(2.0), 1)]


def test_nan_joins_the_key_before_it_only_under_the_same_prefix() -> None:
    rows = [(1, 0.5), (1, NAN), (2, NAN), (2, -0.0), (2, 0.0), (3, 1.0), (3, INF)]
    t = records([k for _, k in rows], a=pa.array([a for a, _ in rows], pa.int32()))
    merged = merge(t, ["a", "k"], MergeSettings(), drop_delete=False, buffer=True)
    assert kv(merged, "a", "k", "v") == [
        (1, "NaN", 1),
        (2, "NaN", 2),
        (3, h(1.0), 5),
        (3, h(INF), 6),
    ]
    # key (k, a): (5.0, 2) and (NaN, 0) differ in a, so nothing joins the NaNs
    rows2 = [(5.0, 1), (5.0, 2), (NAN, 2), (NAN, 0), (-0.0, 1), (0.0, 1)]
    t2 = records([k for k, _ in rows2], a=pa.array([a for _, a in rows2], pa.int32()))
    merged2 = merge(t2, ["k", "a"], MergeSettings(), drop_delete=False, buffer=True)
    assert kv(merged2, "k", "a", "v") == [
        (h(0.0), 1, 5),
        (h(5.0), 1, 0),
        (h(5.0), 2, 1),
        ("NaN", 0, 3),
        ("NaN", 2, 2),
    ]


def test_sequence_field_orders_records_of_joined_float_keys() -> None:
    """From sorted runs the records of -0.0 and +0.0 are ordered by ``sequence.field`` first."""
    t = records([-0.0, 0.0], ts=pa.array([5, 1], pa.int64()))
    settings = MergeSettings(sequence_fields=("ts",))
    assert kv(merge(t, ["k"], settings, drop_delete=True), "k", "ts") == [(h(-0.0), 5)]


def test_aggregation_sums_over_joined_float_keys() -> None:
    t = records([-0.0, 0.0, NAN, 3.0, NAN])
    settings = MergeSettings(engine="aggregation", field_aggs=(("v", FieldAgg("sum")),))
    merged = merge(t, ["k"], settings, drop_delete=True)
    assert kv(merged) == [(h(0.0), 0 + 1), ("NaN", 2 + 3 + 4)]
