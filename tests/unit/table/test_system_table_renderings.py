"""Java's renderings in system tables (table/system_tables.py), each against the text Java 1.4.2
prints for the same value (Double.toString, Duration.toString, HashMap order, casts)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from paimon_pyspark.table.system_tables import (
    cast_to_string,
    java_duration,
    java_float_string,
    java_hash_map_order,
    java_to_string,
    partition_cast_string,
)
from paimon_pyspark.types.data_types import DATE, FLOAT, INT, STRING, TimestampType


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e10, "1.0E10"),
        (0.001, "0.001"),
        (1.5, "1.5"),
        (1234567.0, "1234567.0"),
        (12345678.0, "1.2345678E7"),
        (0.0001, "1.0E-4"),
        (-2.5e-7, "-2.5E-7"),
        (100.0, "100.0"),
        (-0.0, "-0.0"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_double_to_string(value: float, text: str) -> None:
    assert java_float_string(value) == text


def test_float_to_string_uses_single_precision_digits() -> None:
    assert java_float_string(0.1, single=True) == "0.1"
    assert java_to_string(0.30000001192092896, FLOAT()) == "0.3"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [("3600", "PT1H"), ("5400", "PT1H30M"), ("86400", "PT24H"), ("0.5", "PT0.5S"), ("0", "PT0S")],
)
def test_duration_to_string(seconds: str, text: str) -> None:
    assert java_duration(decimal.Decimal(seconds)) == text


def test_hash_map_order_is_javas() -> None:
    # java.util.HashMap iteration of these keys put in this order (String.hashCode buckets)
    options = {"write-only": "true", "file.format": "parquet", "bucket": "2"}
    assert list(java_hash_map_order(options)) == ["bucket", "write-only", "file.format"]


def test_internal_values_and_casts_differ_as_in_java() -> None:
    day = dt.date(2024, 1, 2)
    assert java_to_string(day, DATE()) == "19724"
    assert cast_to_string(day, DATE()) == "2024-01-02"
    ts = dt.datetime(2024, 1, 2, 3, 4)
    assert java_to_string(ts, TimestampType(precision=3)) == "2024-01-02T03:04"
    assert cast_to_string(ts, TimestampType(precision=3)) == "2024-01-02 03:04:00.000"
    assert partition_cast_string(["a", None, 3], [STRING(), STRING(), INT()]) == "{a, null, 3}"
    assert partition_cast_string([], []) == "{}"
