"""The vectorized pieces of the lookup changelog: row-deduplicate's comparison (Java's
generated RecordEqualiser) and LookupMergeFunction's choice of records above level 0."""

from __future__ import annotations

import pyarrow as pa

from paimon_pyspark.mergetree.lookup_changelog import LEVEL, newest_above_level0, rows_equal


def test_rows_equal_compares_nested_values_and_nulls_as_java() -> None:
    struct = pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])
    left = pa.table(
        {
            "f": pa.array([1.0, float("nan"), -0.0, None, 2.0]),
            "l": pa.array([[1, 2], [1], None, [], [3]]),
            "m": pa.array([[("k", 1)], [], None, [("k", 2)], []], pa.map_(pa.string(), pa.int64())),
            "s": pa.array(
                [{"a": 1, "b": ["x"]}, None, {"a": 2, "b": None}, {"a": 1, "b": []}, None], struct
            ),
        }
    )
    right = pa.table(
        {
            "f": pa.array([1.0, float("nan"), 0.0, None, 2.0]),
            "l": pa.array([[1, 2], [1], None, [], [4]]),
            "m": pa.array([[("k", 1)], [], None, [("k", 3)], []], pa.map_(pa.string(), pa.int64())),
            "s": pa.array(
                [{"a": 1, "b": ["x"]}, None, {"a": 2, "b": None}, {"a": 1, "b": []}, None], struct
            ),
        }
    )
    # NaN differs from itself and -0.0 equals 0.0 (Java's ==); two nulls are equal
    assert rows_equal(left, right).tolist() == [True, False, True, False, False]
    assert rows_equal(left.select(["s"]), right.select(["s"])).all()


def test_only_the_lowest_level_above_0_takes_part() -> None:
    records = pa.table(
        {
            "k": [1, 1, 1, 2, 2, 3],
            "v": ["l0", "l1", "l3", "l2", "l4", "l5"],
            LEVEL: pa.array([0, 1, 3, 2, 4, 5], pa.int32()),
        }
    )
    kept = newest_above_level0(records, ["k"])
    assert kept.column("v").to_pylist() == ["l0", "l1", "l2", "l5"]
