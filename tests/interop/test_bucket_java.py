"""Our fixed-bucket assignment equals Java Paimon's, hash for hash, on random keys of every type.

Java side: ``InternalRowSerializer.toBinaryRow`` + ``BinaryRow.hashCode`` + the DEFAULT bucket
function (``PaimonOracle.buckets``), fed the same values through the oracle's canonical encoding.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from java_oracle import JavaOracle, canonical_rows

from paimon_pyspark.bucket.fixed import FixedBucketAssigner
from paimon_pyspark.spec.binary_row import unscaled_to_decimal
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    SMALLINT,
    STRING,
    TINYINT,
    AtomicType,
    BinaryType,
    CharType,
    DataType,
    DecimalType,
    TimestampType,
    TimeType,
)

pytestmark = [pytest.mark.java, pytest.mark.slow]

ROWS = 10_000
BUCKET_COUNTS = [1, 2, 3, 7, 16]
_ALPHABET = list("abcXYZ09 _-é漢😀")
_US_RANGE = (-62_135_596_800_000_000, 253_402_300_799_999_999)  # years 1..9999


def _random_column(t: DataType, rng: np.random.Generator) -> pa.Array:
    """ROWS random values of ``t`` with about 10% nulls, edge values first."""
    arrow = to_arrow_type(t)
    n = ROWS
    if isinstance(t, CharType):
        lengths = rng.integers(0, 41, n)
        values: pa.Array = pa.array(["".join(rng.choice(_ALPHABET, k)) for k in lengths])
    elif isinstance(t, BinaryType):
        values = pa.array([rng.bytes(int(k)) for k in rng.integers(0, 41, n)])
    elif isinstance(t, DecimalType):
        py = random.Random(int(rng.integers(2**32)))
        edges = [0, 1, -1, 127, 128, -128, -129, 255, -256, 10**t.precision - 1]
        unscaled = edges + [
            py.choice((-1, 1)) * py.randrange(10 ** py.randint(1, t.precision))
            for _ in range(n - len(edges))
        ]
        values = pa.array([unscaled_to_decimal(u, t.scale) for u in unscaled], arrow)
    elif isinstance(t, TimestampType):
        if arrow.unit == "ns":
            raw = rng.integers(-(2**63) + 1, 2**63 - 1, n)
        else:
            raw = rng.integers(*_US_RANGE, n) // (1000 if arrow.unit == "ms" else 1)
        values = pa.array(raw, arrow)
    elif isinstance(t, TimeType):
        values = pa.array(rng.integers(0, 86_400_000, n).astype(np.int32), arrow)
    elif isinstance(t, AtomicType) and t.name in ("DOUBLE", "FLOAT"):
        floats = rng.normal(0, 1e6, n)
        floats[:5] = [math.nan, -0.0, 0.0, math.inf, -math.inf]
        values = pa.array(floats, arrow)
    elif isinstance(t, AtomicType) and t.name == "BOOLEAN":
        values = pa.array(rng.random(n) < 0.5)
    elif isinstance(t, AtomicType) and t.name == "DATE":
        values = pa.array(rng.integers(-700_000, 2_900_000, n).astype(np.int32), arrow)
    else:
        bits = arrow.bit_width
        values = pa.array(rng.integers(-(2 ** (bits - 1)), 2 ** (bits - 1), n), arrow)
    nulls = pa.array(rng.random(n) < 0.1)
    return pc.if_else(nulls, pa.nulls(n, arrow), values)


KEYS: dict[str, list[DataType]] = {
    "int": [INT()],
    "bigint": [BIGINT()],
    "string": [STRING()],
    "decimal(10,2)": [DecimalType(10, 2)],
    "decimal(38,6)": [DecimalType(38, 6)],
    "date": [DATE()],
    "timestamp(3)": [TimestampType(3)],
    "timestamp(6)": [TimestampType(6)],
    "int,string": [INT(), STRING()],
    "string,decimal(38,6),timestamp(6)": [STRING(), DecimalType(38, 6), TimestampType(6)],
    "bigint,string,date,decimal(10,2)": [BIGINT(), STRING(), DATE(), DecimalType(10, 2)],
    "string,bytes,string": [STRING(), BYTES(), STRING()],
    "smallint": [SMALLINT()],
    "tinyint": [TINYINT()],
    "boolean": [BOOLEAN()],
    "double": [DOUBLE()],
    "float": [FLOAT()],
    "bytes": [BYTES()],
    "char(12)": [CharType(12, variable=False)],
    "decimal(19,0)": [DecimalType(19, 0)],
    "timestamp(9)": [TimestampType(9)],
    "timestamp_ltz(3)": [TimestampType(3, local_tz=True)],
    "timestamp_ltz(6)": [TimestampType(6, local_tz=True)],
    "time(3)": [TimeType(3)],
}


@pytest.mark.parametrize("key_types", list(KEYS.values()), ids=list(KEYS))
def test_bucket_equals_java(java_oracle: JavaOracle, key_types: list[DataType]) -> None:
    rng = np.random.default_rng(len(key_types) * 1000 + sum(map(ord, str(key_types))))
    columns = [_random_column(t, rng) for t in key_types]
    table = pa.table({f"k{i}": c for i, c in enumerate(columns)})
    java = java_oracle.buckets(
        [t.to_json() for t in key_types], canonical_rows(table), BUCKET_COUNTS
    )
    assigner = FixedBucketAssigner(key_types, 1)
    hashes = assigner.hashes(columns)
    mismatches = np.flatnonzero(hashes != np.asarray(java.hashes, np.int32))
    assert mismatches.size == 0, f"first differing rows: {table.take(mismatches[:3]).to_pylist()}"
    for n in BUCKET_COUNTS:
        ours = FixedBucketAssigner(key_types, n).assign(columns)
        assert ours.tolist() == java.buckets[n], f"bucket count {n}"
