"""The vectorized key match of the deletion-vector lookup (mergetree/dv_lookup.py): which row of
a level above the output holds a key."""

from __future__ import annotations

import pyarrow as pa

from paimon_pyspark.mergetree.dv_lookup import key_index


def test_key_index_of_a_sorted_integer_run_and_of_other_keys() -> None:
    level = pa.table({"k": pa.array([2, 5, 9, 12], pa.int64())})
    keys = pa.table({"k": pa.array([9, 1, 12, 5, 13, 2], pa.int64())})
    assert key_index(keys, level, ["k"]).tolist() == [2, -1, 3, 1, -1, 0]
    unsorted = pa.table({"k": pa.array([12, 2, 9, 5], pa.int64())})  # the hash join
    assert key_index(keys, unsorted, ["k"]).tolist() == [2, -1, 0, 3, -1, 1]
    strings = pa.table({"k": ["a", "c", "e"]})
    assert key_index(pa.table({"k": ["e", "b", "a"]}), strings, ["k"]).tolist() == [2, -1, 0]
    assert key_index(keys, level.slice(0, 0), ["k"]).tolist() == [-1] * 6


def test_key_index_of_several_key_columns() -> None:
    level = pa.table({"a": [1, 1, 2, 3], "b": ["x", "y", "x", "z"]})
    keys = pa.table({"a": [1, 2, 3, 2, 1], "b": ["y", "x", "x", "y", "x"]})
    assert key_index(keys, level, ["a", "b"]).tolist() == [1, 2, -1, -1, 0]


def test_key_index_of_float_keys_by_their_normalized_bits() -> None:
    level = pa.table({"f": pa.array([-1.5, 0.0, float("nan")], pa.float64())})
    keys = pa.table({"f": pa.array([float("nan"), -1.5, 0.0, -0.0, 2.0], pa.float64())})
    assert key_index(keys, level, ["f"]).tolist() == [2, 0, 1, -1, -1]
