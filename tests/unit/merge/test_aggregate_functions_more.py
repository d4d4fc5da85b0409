"""The aggregate functions collect, merge_map, merge_map_with_keytime, nested_update,
nested_partial_update, hll_sketch, theta_sketch, rbm32 and listagg with distinct, as Java's
FieldAggregators fold them (agg, retract, null inputs, a lone record passed through), and the
checks of their factories and options at table load. Java's own results are compared in
tests/interop/test_aggregate_functions_java.py."""

from __future__ import annotations

from typing import Any

import datasketches as ds
import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_pyspark.errors import MergeError, OptionError, UnsupportedOptionError
from paimon_pyspark.merge import roaring64
from paimon_pyspark.merge.merge_function import MergeSettings, check_merge_options, merge
from paimon_pyspark.spec.java_hash import key_and_hash
from paimon_pyspark.spec.java_hashmap import JavaHashMap
from paimon_pyspark.spec.murmur import hash_unaligned
from paimon_pyspark.types.arrow import from_arrow_type
from paimon_pyspark.types.data_types import BIGINT, DataField

SEQ, KIND = "_SEQUENCE_NUMBER", "_VALUE_KIND"
INS, UB, UA, D = 0, 1, 2, 3

ROW = pa.struct([("id", pa.int32()), ("name", pa.string()), ("n", pa.int32())])
KEYTIME_ROW = pa.struct([("v", pa.string()), ("ts", pa.string())])


def settings(typ: pa.DataType, func: str, **options: str) -> MergeSettings:
    fields = [DataField(0, "k", BIGINT().copy(False)), DataField(1, "v", from_arrow_type(typ))]
    opts = {"merge-engine": "aggregation", "fields.v.aggregate-function": func}
    opts |= {f"fields.v.{k.replace('_', '-')}": v for k, v in options.items()}
    return MergeSettings.from_options(opts, fields, ["k"], "t")


def run(typ: pa.DataType, func: str, rows: list[tuple[int, Any, int]], **options: str) -> Any:
    """Merge (key, value, kind) records, sequence numbers in list order; key -> merged value."""
    t = pa.table(
        {
            "k": pa.array([r[0] for r in rows], pa.int64()),
            "v": pa.array([r[1] for r in rows], typ),
            SEQ: pa.array(range(len(rows)), pa.int64()),
            KIND: pa.array([r[2] for r in rows], pa.int8()),
        }
    )
    merged = merge(t, ["k"], settings(typ, func, **options), drop_delete=False)
    return {r["k"]: r["v"] for r in merged.to_pylist()}


INTS = pa.list_(pa.int32())


# --- collect -----------------------------------------------------------------------------------


def test_collect_concatenates_non_null_arrays_in_order() -> None:
    got = run(
        INTS,
        "collect",
        [
            (1, [3, None], INS),
            (1, None, INS),
            (1, [3, 1], UA),
            (2, None, INS),
            (2, None, INS),
            (3, [9, 9], INS),
        ],
    )
    assert got == {1: [3, None, 3, 1], 2: None, 3: [9, 9]}  # a lone record passes through


def test_collect_distinct_is_java_hash_set_order() -> None:
    # Integer hashes are the values: buckets 17 & 15 = 1, 1, 33 & 15 = 1, 2 (capacity 16);
    # inside a bucket the first insertion comes first.
    assert run(INTS, "collect", [(1, [17, 1], INS), (1, [33, 2, 1], INS)], distinct="true") == {
        1: [17, 1, 33, 2]
    }
    # A first array alone is deduplicated too (Java's agg(null, input) builds the set).
    assert run(INTS, "collect", [(1, None, INS), (1, [5, 3, 5], INS)], distinct="true") == {
        1: [3, 5]
    }
    # 13 elements pass 3/4 of 16: capacity 32, and 16 sorts after 15.
    values = list(range(20, 7, -1))
    assert run(INTS, "collect", [(1, values, INS), (1, [], INS)], distinct="true") == {
        1: sorted(values)
    }


def test_collect_distinct_of_rows_keeps_first_occurrence_order() -> None:
    typ = pa.list_(ROW)
    a, b = {"id": 2, "name": "x", "n": None}, {"id": 1, "name": "y", "n": 3}
    got = run(typ, "collect", [(1, [a, b, a], INS), (1, [b, {**a, "n": 1}], INS)], distinct="true")
    assert got == {1: [a, b, {**a, "n": 1}]}


def test_collect_retract_removes_one_occurrence_per_element() -> None:
    got = run(
        INTS,
        "collect",
        [(1, [1, 2, 2, 3], INS), (1, [2, 5, None], UB), (2, [1], UB), (2, [1], INS)],
    )
    assert got == {1: [1, 2, 3], 2: [1]}  # retracting from nothing gives nothing


# --- merge_map ---------------------------------------------------------------------------------


MAP = pa.map_(pa.string(), pa.int32())


def test_merge_map_later_value_wins_and_retract_removes_keys() -> None:
    got = run(
        MAP,
        "merge_map",
        [
            (1, [("a", 1), ("b", 2)], INS),
            (1, None, INS),
            (1, [("a", 5), ("c", None)], INS),
            (2, [("a", 1), ("b", 2)], INS),
            (2, [("a", 9)], UB),
        ],
    )
    assert dict(got[1]) == {"a": 5, "b": 2, "c": None}
    assert dict(got[2]) == {"b": 2}


def test_merge_map_order_is_java_hash_map_order() -> None:
    keys = [k for k, _ in run(MAP, "merge_map", [(1, [("b", 1)], INS), (1, [("a", 2)], INS)])[1]]
    h = {k: hash_unaligned(k.encode()) & 0xFFFFFFFF for k in "ab"}
    want = sorted("ba", key=lambda k: ((h[k] ^ (h[k] >> 16)) & 15, "ba".index(k)))
    assert keys == want


def test_merge_map_with_keytime_keeps_the_newest_timestamp_per_key() -> None:
    typ = pa.map_(pa.int32(), KEYTIME_ROW)
    first: list[tuple[int, dict[str, str | None] | None]]
    first = [(1, {"v": "a", "ts": "2024-01-02"}), (2, {"v": "b", "ts": "2024-01-01"})]
    first += [(3, {"v": "c", "ts": "2024-01-01"}), (4, {"v": "d", "ts": None})]
    second: list[tuple[int, dict[str, str | None] | None]]
    second = [(1, {"v": "A", "ts": "2024-01-01"}), (2, {"v": "B", "ts": "2024-01-05"})]
    second += [(3, None), (4, {"v": "D", "ts": "2024-01-03"}), (5, {"v": "E", "ts": None})]
    got = run(typ, "merge_map_with_keytime", [(1, first, INS), (1, second, INS)])
    assert got == {
        1: [
            (1, {"v": "a", "ts": "2024-01-02"}),
            (2, {"v": "B", "ts": "2024-01-05"}),
            (4, {"v": "D", "ts": "2024-01-03"}),
        ]
    }
    with pytest.raises(MergeError, match="does not support retraction"):
        run(typ, "merge_map_with_keytime", [(1, first, INS), (1, second, UB)])


def test_merge_map_with_keytime_named_ts_field() -> None:
    typ = pa.map_(pa.int32(), pa.struct([("ts", pa.string()), ("v", pa.string())]))
    rows = [(1, [(1, {"ts": "2", "v": "x"})], INS), (1, [(1, {"ts": "1", "v": "y"})], INS)]
    assert run(typ, "merge_map_with_keytime", rows, ts_field="ts") == {
        1: [(1, {"ts": "2", "v": "x"})]
    }


# --- nested_update / nested_partial_update -----------------------------------------------------


def r(i: int, name: str | None, n: int | None = None) -> dict[str, Any]:
    return {"id": i, "name": name, "n": n}


def test_nested_update_without_key_appends_rows_up_to_count_limit() -> None:
    typ = pa.list_(ROW)
    rows = [(1, [r(1, "a"), None], INS), (1, [r(2, "b"), r(3, "c"), r(4, "d")], INS)]
    rows += [(1, [r(5, "e")], INS)]
    # The null element counts toward the limit, then is dropped: room for one row each time.
    want = [r(1, "a"), r(2, "b"), r(5, "e")]
    assert run(typ, "nested_update", rows, count_limit="3") == {1: want}
    assert run(typ, "nested_update", rows[:2]) == {1: [r(1, "a"), r(2, "b"), r(3, "c"), r(4, "d")]}
    retract = [(1, [r(1, "a"), r(2, "b"), r(1, "a")], INS), (1, [r(1, "a"), None], UB)]
    assert run(typ, "nested_update", retract) == {1: [r(2, "b")]}


def test_nested_update_with_key_replaces_rows_of_the_same_key() -> None:
    typ = pa.list_(ROW)
    rows = [(1, [r(1, "a", 1), r(2, "b", 2)], INS), (1, [r(1, "z", None)], INS)]
    got = run(typ, "nested_update", rows, nested_key="id")[1]
    assert sorted(got, key=lambda x: x["id"]) == [r(1, "z", None), r(2, "b", 2)]
    got = run(typ, "nested_update", [*rows, (1, [r(2, "?")], UB)], nested_key="id")
    assert got == {1: [r(1, "z", None)]}


def test_nested_partial_update_merges_non_null_fields_per_key() -> None:
    typ = pa.list_(ROW)
    rows = [(1, [r(1, "a", 1), r(2, "b", None)], INS), (1, [r(1, None, 7), r(2, None, 8)], INS)]
    got = run(typ, "nested_partial_update", rows, nested_key="id, name")[1]
    assert sorted(got, key=lambda x: (x["id"], x["name"] or "")) == [
        r(1, None, 7),
        r(1, "a", 1),
        r(2, None, 8),
        r(2, "b", None),
    ]
    got = run(typ, "nested_partial_update", rows, nested_key="id")[1]
    assert sorted(got, key=lambda x: x["id"]) == [r(1, "a", 7), r(2, "b", 8)]


# --- listagg distinct --------------------------------------------------------------------------


def test_listagg_distinct_appends_unseen_tokens() -> None:
    rows = [(1, "a,b", INS), (1, None, INS), (1, "b,c,,a,c", INS), (1, "", INS), (1, "d", INS)]
    assert run(pa.string(), "listagg", rows, distinct="true") == {1: "a,b,c,d"}
    assert run(pa.string(), "listagg", rows) == {1: "a,b,b,c,,a,c,d"}
    # The first value is kept whole (not deduplicated), as Java's agg(null, input) returns it.
    rows = [(1, "x;x", INS), (1, "x;y", INS)]
    assert run(pa.string(), "listagg", rows, distinct="true", list_agg_delimiter=";") == {
        1: "x;x;y"
    }
    # An empty delimiter splits on spaces and joins with nothing.
    rows = [(1, "p q", INS), (1, "q r", INS)]
    assert run(pa.string(), "listagg", rows, distinct="true", list_agg_delimiter="") == {1: "p qr"}


# --- sketches and bitmaps ----------------------------------------------------------------------


def hll(values: range) -> bytes:
    s = ds.hll_sketch(12, ds.tgt_hll_type.HLL_4)
    for v in values:
        s.update(v)
    return bytes(s.serialize_compact())


def theta(values: range) -> bytes:
    s = ds.update_theta_sketch(12)
    for v in values:
        s.update(v)
    return bytes(s.compact().serialize())


def test_hll_and_theta_sketches_union_their_inputs() -> None:
    rows = [(1, hll(range(100)), INS), (1, None, INS), (1, hll(range(50, 300)), INS)]
    got = run(pa.binary(), "hll_sketch", rows)[1]
    assert round(ds.hll_sketch.deserialize(got).get_estimate()) == 300
    rows = [(1, theta(range(100)), INS), (1, None, INS), (1, theta(range(50, 300)), INS)]
    got = run(pa.binary(), "theta_sketch", rows)[1]
    assert ds.compact_theta_sketch.deserialize(got).get_estimate() == 300
    with pytest.raises(MergeError, match="does not support retraction"):
        run(pa.binary(), "hll_sketch", [(1, hll(range(3)), INS), (1, hll(range(2)), UB)])
    ignored = run(
        pa.binary(),
        "theta_sketch",
        [(1, theta(range(3)), INS), (1, theta(range(9)), UB)],
        ignore_retract="true",
    )
    assert ds.compact_theta_sketch.deserialize(ignored[1]).get_estimate() == 3


def test_rbm32_unions_bitmaps() -> None:
    a, b = BitMap([1, 5, 70000]), BitMap(range(10, 2000))
    rows = [(1, a.serialize(), INS), (1, None, INS), (1, b.serialize(), INS)]
    got = run(pa.binary(), "rbm32", rows)[1]
    assert BitMap.deserialize(got) == a | b
    lone = run(pa.binary(), "rbm32", [(2, b"not a bitmap", INS)])
    assert lone == {2: b"not a bitmap"}  # a lone record is passed through, unread


# Java's RoaringBitmap64.bitmapOf(1, 2, 3) and bitmapOf(5, 2^32, -1), serialized (AggOracle).
RBM64_123 = bytes.fromhex(
    "01010000000000000004000000000000000000000000000000000001000000fe0100000001020300000001000200"
    "030001000000000000000000000000000000"
)
RBM64_OTHER = bytes.fromhex(
    "010300000000000000000200000000ff000002000200000000010004000000000000000000000000000000000004"
    "000000000000010000010000000000000004000000ffffffffffff020000000000000001000000fe030000000102"
    "0100000005000102010000000000010201000000ffff03000000000000000000000002000000"
)


def test_rbm64_decodes_and_unions_javas_layout() -> None:
    assert roaring64.encode(roaring64.decode(RBM64_OTHER)) == RBM64_OTHER
    assert roaring64.values(roaring64.decode(RBM64_OTHER)) == [5, 2**32, 2**64 - 1]
    rows = [(1, RBM64_123, INS), (1, None, INS), (1, RBM64_OTHER, INS)]
    got = run(pa.binary(), "rbm64", rows)[1]
    assert roaring64.values(roaring64.decode(got)) == [1, 2, 3, 5, 2**32, 2**64 - 1]
    assert run(pa.binary(), "rbm64", [(1, b"\x00", INS), (1, b"\x00", INS)]) == {1: b"\x00"}


# --- option and type checks --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typ", "func", "options", "error", "match"),
    [
        (pa.int32(), "collect", {}, OptionError, "must be ARRAY"),
        (pa.list_(pa.int32()), "merge_map", {}, OptionError, "must be MAP"),
        (pa.map_(pa.int32(), pa.int32()), "merge_map_with_keytime", {}, OptionError, "ROW"),
        (
            pa.map_(pa.int32(), pa.struct([("ts", pa.string())])),
            "merge_map_with_keytime",
            {},
            OptionError,
            "at least 2 fields",
        ),
        (
            pa.map_(pa.int32(), KEYTIME_ROW),
            "merge_map_with_keytime",
            {"ts_field": "nope"},
            OptionError,
            "nope",
        ),
        (pa.list_(pa.int32()), "nested_update", {}, OptionError, "ARRAY<ROW>"),
        (pa.list_(ROW), "nested_partial_update", {}, OptionError, "nested-key"),
        (pa.list_(ROW), "nested_update", {"nested_key": "id,x"}, OptionError, "'x'"),
        (pa.list_(ROW), "nested_update", {"count_limit": "many"}, OptionError, "count-limit"),
        (pa.string(), "hll_sketch", {}, OptionError, "does not accept"),
        (pa.binary(3), "theta_sketch", {}, OptionError, "does not accept"),
        (pa.int64(), "rbm64", {}, OptionError, "does not accept"),
        (
            pa.map_(pa.list_(pa.int32()), pa.int32()),
            "merge_map",
            {},
            UnsupportedOptionError,
            "MAP key",
        ),
        (INTS, "collect", {"distinct": "yes"}, OptionError, "distinct"),
        (INTS, "collect", {"unknown_suffix": "1"}, UnsupportedOptionError, "unknown-suffix"),
    ],
)
def test_factories_check_types_and_options(
    typ: pa.DataType, func: str, options: dict[str, str], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        settings(typ, func, **options)


def test_load_accepts_the_new_functions_and_options() -> None:
    fields = [
        DataField(0, "k", BIGINT().copy(False)),
        DataField(1, "c", from_arrow_type(pa.list_(ROW))),
        DataField(2, "h", from_arrow_type(pa.binary())),
    ]
    check_merge_options(
        {
            "merge-engine": "aggregation",
            "fields.c.aggregate-function": "nested_update",
            "fields.c.nested-key": "id",
            "fields.c.count-limit": "10",
            "fields.h.aggregate-function": "hll_sketch",
        },
        fields,
        ["k"],
        "t",
    )


def test_java_hash_map_order_and_hash_codes() -> None:
    m = JavaHashMap()
    for i in [32, 0, 16, 1]:
        m.put(i, i, str(i))
    assert [k for k, _ in m.items()] == [32, 0, 16, 1]  # bucket 0 in insertion order, then 1
    m.remove(0)
    m.put(0, 0, "again")
    assert [k for k, _ in m.items()] == [32, 16, 0, 1]
    long_hash = key_and_hash(BIGINT())
    assert long_hash is not None and long_hash(-1)[1] == 0  # (int)(-1L ^ (-1L >>> 32))
