"""FLOAT and DOUBLE primary keys (NaN, -0.0, +0.0, infinities) between us and Java Paimon 1.4.2.

What Java does (found with this oracle, explained in ``spec/float_keys.py``): a bucket's
records sort by normalized key (NaN last, -0.0 before +0.0) and neighbours merge when Java's
comparator ``a > b ? 1 : a < b ? -1 : 0`` says 0, so -0.0 and +0.0 are one key and a NaN
merges with the key before it; buckets hash the raw bits, so -0.0 and +0.0 may land apart.
Each scenario is written by Java into one table and by us into another, commit for commit,
then fully compacted by each; at every step the rows of every bucket must be the same, read by
Java and by us, from either table. Scenarios where Java's own merge read and its compaction
disagree (a NaN first in one of several sorted runs) are left out: there is nothing to match.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import (
    JavaOracle,
    buckets_float_bits,
    float_bits,
    read_table_by_bucket,
    write_rows_float_bits,
)

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.bucket.fixed import FixedBucketAssigner
from paimon_pyspark.procedures import compact
from paimon_pyspark.types.data_types import DOUBLE, FLOAT

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
NAN, INF = math.nan, math.inf
PAYLOAD_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_0000_0001))[0]
NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_0000_0000))[0]
SPECIALS = [1.0, NAN, -0.0, 0.0, INF, -INF, NAN, 2.0]

S = ("s", "STRING NOT NULL")
D_KEY = [S, ("k", "DOUBLE NOT NULL"), ("v", "INT")]
F_KEY = [S, ("k", "FLOAT NOT NULL"), ("v", "INT")]
INT_DOUBLE = [S, ("a", "INT NOT NULL"), ("k", "DOUBLE NOT NULL"), ("v", "INT")]
DOUBLE_INT = [S, ("k", "DOUBLE NOT NULL"), ("a", "INT NOT NULL"), ("v", "INT")]
ARROW = {
    "STRING NOT NULL": pa.string(),
    "DOUBLE NOT NULL": pa.float64(),
    "FLOAT NOT NULL": pa.float32(),
    "INT NOT NULL": pa.int32(),
    "INT": pa.int32(),
}

Commits = list[list[list[Any]]]
"""Rows of the key and value fields (no partition) of each commit."""


def keyed(values: list[float]) -> list[list[Any]]:
    return [[x, i] for i, x in enumerate(values)]


# Each scenario is one partition of its table, so all of them share the writes and the reads.
DOUBLE_SCENARIOS: dict[str, Commits] = {
    # one commit: -0.0 and +0.0 merge, a NaN merges with the largest key of its bucket
    "specials": [keyed(SPECIALS)],
    "nan-payloads": [keyed([NAN, PAYLOAD_NAN, NEGATIVE_NAN, 5.0])],
    # -0.0 / +0.0: one buffer keeps the +0.0 record, across commits the newer one wins
    "zero-then-negative-zero": [[[0.0, 1], [-0.0, 2]]],
    "negative-zero-then-zero": [[[-0.0, 1], [0.0, 2]]],
    "zeros-in-two-commits": [[[0.0, 1]], [[-0.0, 2]]],
    "zeros-in-two-commits-reversed": [[[-0.0, 1]], [[0.0, 2]]],
    # a NaN in sorted runs of several commits, where Java's read and compaction agree
    "nan-after-a-key": [[[2.0, 1]], [[NAN, 2]]],
    "key-after-a-nan": [[[NAN, 1]], [[2.0, 2]]],
    "nan-twice": [[[NAN, 1]], [[NAN, 2]]],
    "nan-merged-then-key": [[[NAN, 1], [5.0, 3]], [[2.0, 2]]],
    "nan-and-key-twice": [[[5.0, 1], [NAN, 2]], [[5.0, 3], [NAN, 4]]],
}
TABLES = [
    # with two buckets -0.0 and +0.0 hash apart and both stay, as in Java
    pytest.param(D_KEY, ["k"], DOUBLE_SCENARIOS, 1, id="double-1-bucket"),
    pytest.param(D_KEY, ["k"], DOUBLE_SCENARIOS, 2, id="double-2-buckets"),
    pytest.param(F_KEY, ["k"], {"specials": [keyed(SPECIALS)]}, 2, id="float-2-buckets"),
    # composite keys: a NaN joins the key before it only under the same prefix
    pytest.param(
        INT_DOUBLE,
        ["a", "k"],
        {
            "one-commit": [
                [
                    [1, 0.5, 1],
                    [1, NAN, 2],
                    [2, NAN, 3],
                    [2, -0.0, 4],
                    [2, 0.0, 5],
                    [3, 1.0, 6],
                    [3, INF, 7],
                ]
            ]
        },
        1,
        id="int-double-1-bucket",
    ),
    pytest.param(
        DOUBLE_INT,
        ["k", "a"],
        {
            "one-commit": [
                [[5.0, 1, 1], [5.0, 2, 2], [NAN, 2, 3], [NAN, 0, 4], [-0.0, 1, 5], [0.0, 1, 6]]
            ]
        },
        1,
        id="double-int-1-bucket",
    ),
]

View = dict[tuple[str, int], list[tuple[Any, ...]]]


def text(value: Any) -> Any:
    """Floats by their exact value (-0.0 is not 0.0); every NaN alike (Java's Parquet writer
    stores the canonical NaN whatever the payload)."""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value.hex()
    return value


def view(parts: list[tuple[str, int, list[list[Any]]]]) -> View:
    """Rows (partition field dropped) per (partition, bucket)."""
    out: View = {}
    for partition, bucket, rows in parts:
        out.setdefault((partition, bucket), []).extend(tuple(text(v) for v in r[1:]) for r in rows)
    return {b: sorted(rows) for b, rows in out.items() if rows}


def java_view(java: JavaOracle, warehouse: Path, table: str) -> View:
    splits = read_table_by_bucket(java, warehouse, DB, table)
    return view([(s.partition[0], s.bucket, s.rows) for s in splits])


def our_view(table: FileStoreTable) -> View:
    rb = table.new_read_builder()
    parts = []
    for split in rb.new_scan().plan().splits():
        rows = [list(r.values()) for r in rb.new_read().to_arrow([split]).to_pylist()]
        parts.append((rows[0][0] if rows else "", split.bucket, rows))
    return view(parts)


def wire(fields: list[tuple[str, str]], row: list[Any]) -> list[Any]:
    return [
        float_bits(v, t.split()[0]) if isinstance(v, float) else v
        for v, (_, t) in zip(row, fields, strict=True)
    ]


@pytest.mark.parametrize(("fields", "keys", "scenarios", "buckets"), TABLES)
def test_float_keys_merge_as_in_java(
    java_oracle: JavaOracle,
    tmp_path: Path,
    fields: list[tuple[str, str]],
    keys: list[str],
    scenarios: dict[str, Commits],
    buckets: int,
) -> None:
    options = {"bucket": str(buckets), "write-only": "true"}
    pk = ["s", *keys]
    java_oracle.create_table(
        tmp_path, DB, "j", fields, partition_keys=["s"], primary_keys=pk, options=options
    )
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    schema = pa.schema([pa.field(n, ARROW[t], nullable="NOT NULL" not in t) for n, t in fields])
    catalog.create_table(
        f"{DB}.o",
        Schema.from_pyarrow_schema(schema, partition_keys=["s"], primary_keys=pk, options=options),
    )
    ours = catalog.get_table(f"{DB}.o")
    for c in range(max(len(commits) for commits in scenarios.values())):
        rows = [
            [name, *r]
            for name, commits in scenarios.items()
            if c < len(commits)
            for r in commits[c]
        ]
        write_rows_float_bits(java_oracle, tmp_path, DB, "j", [wire(fields, r) for r in rows])
        builder = ours.new_batch_write_builder()
        with builder.new_write() as w:
            batch = [dict(zip(schema.names, r, strict=True)) for r in rows]
            w.write_arrow(pa.Table.from_pylist(batch, schema))
            messages = w.prepare_commit()
        builder.new_commit().commit(messages)

    for step in ("written", "compacted"):
        if step == "compacted":
            java_oracle.compact(tmp_path, DB, "j", full=True)
            assert compact(catalog, f"{DB}.o", compact_strategy="full") is not None
        java = java_view(java_oracle, tmp_path, "j")
        assert {p for p, _ in java} == set(scenarios)
        assert java_view(java_oracle, tmp_path, "o") == java, step  # Java reads ours as its own
        assert our_view(ours) == java, step
        assert our_view(catalog.get_table(f"{DB}.j")) == java, step  # we read Java's


DOUBLE_BITS = [
    0x7FF8_0000_0000_0000,  # NaN
    0x7FF8_0000_0000_0001,  # NaN with a payload
    0xFFF8_0000_0000_0000,  # negative NaN
    0x7FF0_0000_0000_0001,  # signalling NaN
    0x0000_0000_0000_0000,  # +0.0
    0x8000_0000_0000_0000,  # -0.0
    0x7FF0_0000_0000_0000,  # +inf
    0xFFF0_0000_0000_0000,  # -inf
    0x0000_0000_0000_0001,  # smallest subnormal
    0x3FF8_0000_0000_0000,  # 1.5
    0xBFF8_0000_0000_0000,  # -1.5
]
FLOAT_BITS = [
    0x7FC0_0000,
    0x7FC0_0001,
    0xFFC0_0000,
    0x7F80_0001,
    0x0000_0000,
    0x8000_0000,
    0x7F80_0000,
    0xFF80_0000,
    0x0000_0001,
    0x3FC0_0000,
    0xBFC0_0000,
]


@pytest.mark.parametrize(
    ("type_", "bits", "arrow_bits", "arrow_type"),
    [
        (DOUBLE().copy(nullable=False), DOUBLE_BITS, pa.uint64(), pa.float64()),
        (FLOAT().copy(nullable=False), FLOAT_BITS, pa.uint32(), pa.float32()),
    ],
    ids=["DOUBLE", "FLOAT"],
)
def test_float_key_buckets_hash_the_raw_bits_as_java(
    java_oracle: JavaOracle,
    type_: Any,
    bits: list[int],
    arrow_bits: pa.DataType,
    arrow_type: pa.DataType,
) -> None:
    """NaN payloads, both zeros, infinities and subnormals hash as Java's BinaryRow: raw bits."""
    column = pa.array(bits, arrow_bits).view(arrow_type)
    java = buckets_float_bits(
        java_oracle,
        [f"{type_.root} NOT NULL"],
        [[{"bits": format(b, "x")}] for b in bits],
        [1, 2, 3, 7],
    )
    assert len(set(java.hashes)) == len(bits)  # every bit pattern its own hash, NaNs too
    hashes = FixedBucketAssigner([type_], 2).hashes([column])
    assert hashes.tolist() == java.hashes
    for n, expected in java.buckets.items():
        assert FixedBucketAssigner([type_], n).assign([column]).tolist() == expected


def test_dynamic_buckets_place_and_merge_float_keys_as_java(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """HASH_DYNAMIC: the index keeps -0.0, +0.0 and NaN apart by hash (raw bits), so they take
    bucket slots of their own, while inside a bucket they still merge by Java's comparator."""
    options = {"bucket": "-1", "write-only": "true", "dynamic-bucket.target-row-num": "3"}
    fields = [("k", "DOUBLE NOT NULL"), ("v", "INT")]
    java_oracle.create_table(tmp_path, DB, "j", fields, primary_keys=["k"], options=options)
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    schema = pa.schema([pa.field("k", pa.float64(), nullable=False), ("v", pa.int32())])
    catalog.create_table(
        f"{DB}.o", Schema.from_pyarrow_schema(schema, primary_keys=["k"], options=options)
    )
    ours = catalog.get_table(f"{DB}.o")
    rows = keyed([*SPECIALS, -0.0, 3.0])
    java_oracle.write_rows(tmp_path, DB, "j", rows)
    builder = ours.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist([{"k": k, "v": v} for k, v in rows], schema))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)

    def split_view(splits: list[tuple[int, list[list[Any]]]]) -> dict[int, list[tuple[Any]]]:
        return {b: sorted(tuple(text(x) for x in r) for r in rs) for b, rs in splits if rs}

    def java_of(table: str) -> dict[int, list[tuple[Any]]]:
        splits = read_table_by_bucket(java_oracle, tmp_path, DB, table)
        return split_view([(s.bucket, s.rows) for s in splits])

    def ours_of(table: FileStoreTable) -> dict[int, list[tuple[Any]]]:
        rb = table.new_read_builder()
        splits = rb.new_scan().plan().splits()
        return split_view(
            [
                (s.bucket, [list(r.values()) for r in rb.new_read().to_arrow([s]).to_pylist()])
                for s in splits
            ]
        )

    java = java_of("j")
    assert len(java) == 3  # ten keys, nine distinct hashes (two NaNs), three keys a bucket
    assert java_of("o") == java
    assert ours_of(ours) == java
    assert ours_of(catalog.get_table(f"{DB}.j")) == java
    # (our compaction does not take dynamic-bucket tables yet) we read Java's compacted table
    java_oracle.compact(tmp_path, DB, "j", full=True)
    assert java_of("j") == java
    assert ours_of(catalog.get_table(f"{DB}.j")) == java
