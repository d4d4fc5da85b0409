"""Smoke tests of the Java Paimon oracle itself, so a red interop test blames the product.

Java writes and reads its own tables here (every type we map, two snapshots, time travel,
primary-key upserts), and the bucket function reproduces vectors asserted by Paimon's own Java
tests; ``canonical_rows`` is checked against Java's read of the same values.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

pytestmark = [pytest.mark.java, pytest.mark.slow]

FIELDS: list[tuple[str, Any]] = [
    ("i", "INT"),
    ("l", "BIGINT"),
    ("s", "STRING"),
    ("d10", "DECIMAL(10, 2)"),
    ("d38", "DECIMAL(38, 6)"),
    ("day", "DATE"),
    ("ts3", "TIMESTAMP(3)"),
    ("ts6", "TIMESTAMP(6)"),
    ("dbl", "DOUBLE"),
    ("b", "BOOLEAN"),
    ("bin", "BYTES"),
    ("arr", {"type": "ARRAY", "element": "INT"}),
    ("m", {"type": "MAP", "key": "STRING", "value": "INT"}),
    (
        "r",
        {
            "type": "ROW",
            "fields": [{"name": "x", "type": "INT"}, {"name": "y", "type": "STRING"}],
        },
    ),
]
NAMES = [name for name, _ in FIELDS]

FIRST = [
    [
        1,
        2**40,
        "héllo",
        "12345678.90",
        "12345678901234567890123456789012.345678",
        19_000,
        1_700_000_000_123_000_000,
        1_700_000_000_123_456_000,
        1.5,
        True,
        b"\x00\xffab",
        [1, None, 3],
        [["a", 1], ["b", None]],
        [7, "x"],
    ],
    [
        2,
        -1,
        "",
        "-0.01",
        "0.000001",
        -1,
        -1_000_000,
        -1_000,
        math.nan,
        False,
        b"",
        [],
        [],
        [None, None],
    ],
]
SECOND = [
    [3, *([None] * (len(FIELDS) - 1))],
    [4, 0, "z", "0.00", "0.000000", 0, 0, 0, -0.0, None, b"z", [None], [["k", -1]], None],
]

ARROW_SCHEMA = pa.schema(
    [
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("s", pa.string()),
        ("d10", pa.decimal128(10, 2)),
        ("d38", pa.decimal128(38, 6)),
        ("day", pa.date32()),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("dbl", pa.float64()),
        ("b", pa.bool_()),
        ("bin", pa.binary()),
        ("arr", pa.list_(pa.int32())),
        ("m", pa.map_(pa.string(), pa.int32())),
        ("r", pa.struct([("x", pa.int32()), ("y", pa.string())])),
    ]
)


def _create(java_oracle: JavaOracle, warehouse: Path, table: str) -> None:
    java_oracle.create_table(warehouse, "db", table, FIELDS)


def test_java_writes_two_snapshots_and_reads_them_back(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    _create(java_oracle, tmp_path, "t")
    assert java_oracle.latest_snapshot_id(tmp_path, "db", "t") is None

    assert java_oracle.write_rows(tmp_path, "db", "t", FIRST) == 1
    assert java_oracle.write_rows(tmp_path, "db", "t", SECOND) == 2

    latest = java_oracle.read_table(tmp_path, "db", "t")
    assert latest.fields == NAMES
    assert sorted_rows(latest.rows) == sorted_rows(FIRST + SECOND)
    first = java_oracle.read_table(tmp_path, "db", "t", snapshot_id=1)
    assert sorted_rows(first.rows) == sorted_rows(FIRST)
    kinds = [(s["id"], s["commitKind"]) for s in java_oracle.snapshots(tmp_path, "db", "t")]
    assert kinds == [(1, "APPEND"), (2, "APPEND")]


def test_canonical_rows_of_arrow_match_java_read(java_oracle: JavaOracle, tmp_path: Path) -> None:
    arrow = pa.table(
        {
            "i": [1, None],
            "l": [2**40, None],
            "s": ["héllo", None],
            "d10": [Decimal("12345678.90"), None],
            "d38": [Decimal("0.000001"), None],
            "day": [dt.date(2022, 1, 8), None],
            "ts3": [dt.datetime(2023, 11, 14, 22, 13, 20, 123000), None],
            "ts6": [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), None],
            "dbl": [float("nan"), None],
            "b": [True, None],
            "bin": [b"\x00\xff", None],
            "arr": [[1, None], None],
            "m": [[("b", 2), ("a", None)], None],
            "r": [{"x": None, "y": "q"}, None],
        },
        schema=ARROW_SCHEMA,
    )
    expected = canonical_rows(arrow)
    assert expected[0][3:8] == [
        "12345678.90",
        "0.000001",
        19_000,
        1_700_000_000_123_000_000,
        -1_000,
    ]
    assert expected[0][12] == [["a", None], ["b", 2]]  # map pairs sorted by key

    _create(java_oracle, tmp_path, "t")
    java_oracle.write_rows(tmp_path, "db", "t", arrow)
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == sorted_rows(expected)


@pytest.mark.parametrize("bucket", ["-1", "2"], ids=["dynamic-bucket", "fixed-bucket"])
def test_primary_key_upsert(java_oracle: JavaOracle, tmp_path: Path, bucket: str) -> None:
    java_oracle.create_table(
        tmp_path,
        "db",
        "pk",
        [("k", "INT NOT NULL"), ("v", "STRING")],
        primary_keys=["k"],
        options={"bucket": bucket},
    )
    java_oracle.write_rows(tmp_path, "db", "pk", [[1, "a"], [2, "b"]])
    java_oracle.write_rows(tmp_path, "db", "pk", [[2, "B"], [3, "c"]])
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "pk").rows) == [
        [1, "a"],
        [2, "B"],
        [3, "c"],
    ]
    assert java_oracle.read_table(tmp_path, "db", "pk", snapshot_id=1).rows == [[1, "a"], [2, "b"]]


def test_bucket_vectors_asserted_by_java_paimon(java_oracle: JavaOracle) -> None:
    one = java_oracle.buckets(["INT"], [[5]], [100])
    assert one.hashes == [260196596]
    assert one.buckets == {100: [96]}
    assert java_oracle.buckets(["INT", "INT"], [[5, 6]], [100]).buckets == {100: [27]}
    assert java_oracle.buckets(["INT", "INT", "INT"], [[5, 6, 7]], [100]).buckets == {100: [40]}


def test_less_common_types_match_arrow(java_oracle: JavaOracle, tmp_path: Path) -> None:
    fields: list[tuple[str, Any]] = [
        ("t", "TINYINT"),
        ("sm", "SMALLINT"),
        ("f", "FLOAT"),
        ("c", "CHAR(3)"),
        ("vb", "VARBINARY(4)"),
        ("fb", "BINARY(2)"),
        ("tm", "TIME"),
        ("ltz", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
        ("ts9", "TIMESTAMP(9)"),
        ("nested", {"type": "MAP", "key": "INT", "value": {"type": "ARRAY", "element": "STRING"}}),
    ]
    arrow = pa.table(
        {
            "t": pa.array([-128, None], pa.int8()),
            "sm": pa.array([32767, None], pa.int16()),
            "f": pa.array([1.1, float("-inf")], pa.float32()),
            "c": ["abc", None],
            "vb": [b"\x01\x02", None],
            "fb": pa.array([b"xy", None], pa.binary(2)),
            "tm": pa.array([dt.time(23, 59, 59, 999000), None], pa.time32("ms")),
            "ltz": pa.array(
                [dt.datetime(2024, 2, 29, 1, 2, 3, 456789, tzinfo=dt.UTC), None],
                pa.timestamp("us", tz="UTC"),
            ),
            "ts9": pa.array([1_700_000_000_123_456_789, -1], pa.timestamp("ns")),
            "nested": pa.array(
                [[(2, ["b", None]), (1, [])], None], pa.map_(pa.int32(), pa.list_(pa.string()))
            ),
        }
    )
    expected = canonical_rows(arrow)
    assert expected[0][2] == pytest.approx(1.1) and expected[1][2] == -math.inf
    assert expected[0][6] == 86_399_999 and expected[1][8] == -1

    java_oracle.create_table(tmp_path, "db", "t", fields)
    java_oracle.write_rows(tmp_path, "db", "t", arrow)
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == sorted_rows(expected)
