"""``spec.java_hashmap.JavaHashMap`` against the JVM's own ``java.util.HashMap``, and
``spec.java_hash``'s hash codes against the ``hashCode`` of the JVM's objects.

Integer keys hash to themselves, so multiples of a power of two collide in one bin: enough of
them grow tree bins, which later puts, removals, resizes and untreeifying reshape. Every step's
iteration order must equal Java's.
"""

from __future__ import annotations

import datetime
import decimal
import random

import numpy as np
import pyarrow as pa
from java_oracle import JavaOracle

from paimon_pyspark.spec.java_hash import LONG, hash_codes, key_and_hash, string_hash
from paimon_pyspark.spec.java_hash import STRING as STRING_KIND
from paimon_pyspark.spec.java_hashmap import JavaHashMap, iteration_order
from paimon_pyspark.types.data_types import (
    BIGINT,
    DOUBLE,
    INT,
    STRING,
    DecimalType,
    TimestampType,
)


def _java_keys(java_map: object) -> list[int]:
    return [int(k) for k in java_map.keySet().toArray()]  # type: ignore[attr-defined]


def test_put_and_remove_follow_javas_hashmap_through_tree_bins(java_oracle: JavaOracle) -> None:
    jvm = java_oracle._gateway.jvm
    kh = key_and_hash(INT())
    assert kh is not None
    rng = random.Random(38)
    for trial in range(6):
        java_map = jvm.java.util.HashMap()
        ours = JavaHashMap()
        # Mostly colliding keys (one bin at every capacity up to 1024), some spread ones.
        pool = [1024 * i for i in range(40)] + [rng.randrange(-(2**31), 2**31) for _ in range(40)]
        present: list[int] = []
        for step in range(400):
            if present and rng.random() < (0.2 if trial % 2 else 0.45):
                k = rng.choice(present)
                present.remove(k)
                java_map.remove(jvm.java.lang.Integer(k))
                ours.remove(kh(k)[0])
            else:
                k = rng.choice(pool)
                if k not in present:
                    present.append(k)
                java_map.put(jvm.java.lang.Integer(k), step)
                key, h = kh(k)
                ours.put(key, h, step)
            if step % 10 == 9 or step < 40:
                assert [k for k, _ in ours.items()] == _java_keys(java_map), (trial, step)
        assert [v for _, v in ours.items()] == [
            int(java_map.get(jvm.java.lang.Integer(k))) for k in _java_keys(java_map)
        ]


def test_compute_if_absent_agrees_with_the_vectorized_order() -> None:
    """``computeIfAbsent`` only: the map and :func:`iteration_order` (the bitmap index's
    order, proven against Java's bitmap files) agree, tree bins included."""
    rng = random.Random(7)
    for n in (5, 13, 40, 200):
        keys = [1024 * i for i in range(n // 2)] + rng.sample(range(1 << 30), n - n // 2)
        rng.shuffle(keys)
        ours = JavaHashMap()
        for k in keys:
            ours.compute_if_absent(k, k, lambda: None)
        ours.compute_if_absent(keys[0], keys[0], lambda: None)
        order = iteration_order(np.asarray(keys, dtype=np.int32), keys, True)
        assert [k for k, _ in ours.items()] == [keys[i] for i in order.tolist()]


def _java_primitive_hash(oracle: JavaOracle, primitive: object, value: object) -> int:
    """``Long.hashCode`` / ``Double.hashCode`` of ``value``, through ``Arrays.hashCode`` of a
    one-element array (31 + the element's hash; py4j unboxes a returned Long)."""
    array = oracle._gateway.new_array(primitive, 1)
    array[0] = value
    h = (int(oracle._gateway.jvm.java.util.Arrays.hashCode(array)) - 31) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def test_hash_codes_are_javas(java_oracle: JavaOracle) -> None:
    """Scalar and vectorized hash codes against the JVM's ``hashCode`` of the same objects."""
    jvm = java_oracle._gateway.jvm
    data = jvm.org.apache.paimon.data
    rng = random.Random(5)
    strings = ["", "a", "abc", "abcd", "héllo wörld", "\u00ff" * 9, "日本語のテキスト", "x" * 37]
    java_binary = [int(data.BinaryString.fromString(s).hashCode()) for s in strings]
    assert [key_and_hash(STRING())(s)[1] for s in strings] == java_binary  # type: ignore[misc]
    binary = pa.array([s.encode() for s in strings], pa.large_binary())
    assert hash_codes(STRING_KIND, binary).tolist() == java_binary
    assert [string_hash(s) for s in strings] == [
        int(jvm.java.util.Objects.hashCode(s)) & 0xFFFFFFFF for s in strings
    ]

    longs = [0, -1, 2**63 - 1, -(2**63)] + [rng.randrange(-(2**63), 2**63) for _ in range(20)]
    java_long = [_java_primitive_hash(java_oracle, jvm.long, v) for v in longs]
    assert [key_and_hash(BIGINT())(v)[1] for v in longs] == java_long  # type: ignore[misc]
    assert hash_codes(LONG, np.asarray(longs, np.int64)).tolist() == java_long

    doubles = [0.0, -0.0, 1.5, -2.25e300, float("inf"), float("nan"), 1e-310]
    java_double = [_java_primitive_hash(java_oracle, jvm.double, v) for v in doubles]
    assert [key_and_hash(DOUBLE())(v)[1] for v in doubles] == java_double  # type: ignore[misc]

    for text, precision, scale in [
        ("0", 10, 0),
        ("-12.50", 10, 2),
        ("123456789012345678.9", 38, 1),
        ("-99999999999999999999999999999999.123456", 38, 6),
        ("0.000001", 18, 6),
    ]:
        java = data.Decimal.fromBigDecimal(jvm.java.math.BigDecimal(text), precision, scale)
        ours = key_and_hash(DecimalType(precision, scale))
        assert ours is not None and ours(decimal.Decimal(text))[1] == int(java.hashCode()), text

    for micros in [0, 1, -1, 1_700_000_000_123_456, -86_400_000_001]:
        value = datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=micros)
        millis, micro_of_milli = divmod(micros, 1000)
        java_ts = data.Timestamp.fromEpochMillis(millis, micro_of_milli * 1000)
        ours = key_and_hash(TimestampType(6))
        assert ours is not None and ours(value)[1] == int(java_ts.hashCode()), micros
