"""Random table options, at create and as dynamic options of a write: every key the engine
knows, with values that are valid, at the edges, out of range, or garbage.

Properties: every call succeeds or raises a PaimonError; an option Java reads as an int or a
long is refused at create when its value is outside that type's range (Java could not read it
back); options accepted at create load again; a successful commit logs no swallowed traceback;
no partial snapshot; and the table reads what was committed, also after a failed write or
commit.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzz.fuzz_support import (
    Outcome,
    Sandbox,
    canon_rows,
    check_snapshots,
    fuzz_settings,
    logged_tracebacks,
    read_all,
    sandbox,
    table_path,
)
from tests.integration.table_helpers import write_commit

from paimon_pyspark import Schema, options
from paimon_pyspark.errors import OptionError

SCHEMA = pa.schema([("k", pa.int64()), ("p", pa.string()), ("v", pa.float64())])

KEYS = sorted(
    {
        value
        for name, value in vars(options).items()
        if name.isupper()
        and isinstance(value, str)
        and re.fullmatch(r"[a-z][a-z0-9_]*([.-][a-z0-9_]+)+", value)
    }
    | {
        "bucket",
        "bucket-key",
        "merge-engine",
        "sequence.field",
        "rowkind.field",
        "partition.default-name",
        "changelog-producer",
        "deletion-vectors.enabled",
        "fields.v.aggregate-function",
        "fields.default-aggregate-function",
        "dynamic-bucket.target-row-num",
        "dynamic-bucket.initial-buckets",
        "ignore-delete",
        "file.suffix.include.compression",
    }
)

# The options Java declares as intType() / longType(): a value outside the Java type is one
# Java cannot even parse, so creating a table with it must fail.
JAVA_INT_KEYS = {
    "bucket",
    "file.compression.zstd-level",
    "manifest.merge-min-count",
    "num-levels",
    "num-sorted-run.compaction-trigger",
    "num-sorted-run.stop-trigger",
    "compaction.max-size-amplification-percent",
    "compaction.size-ratio",
    "compaction.min.file-num",
    "snapshot.num-retained.min",
    "snapshot.num-retained.max",
    "snapshot.expire.limit",
    "commit.max-retries",
    "postpone.default-bucket-num",
    "dynamic-bucket.initial-buckets",
    "dynamic-bucket.max-buckets",
    "dynamic-bucket.assigner-parallelism",
}
JAVA_LONG_KEYS = {"scan.snapshot-id", "dynamic-bucket.target-row-num"}

INT_EDGES = [0, 1, -1, -2, 2, 3, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, 10**30]
VALUES = st.one_of(
    st.sampled_from(INT_EDGES).map(str),
    st.integers(-5, 40).map(str),
    st.integers().map(str),
    st.sampled_from(
        [
            "true",
            "false",
            "TRUE",
            "yes",
            "",
            " ",
            "1 b",
            "0 b",
            "1 kb",
            "64 mb",
            "-1 mb",
            "9999999999 tb",
            "1 ms",
            "0 s",
            "1 h",
            "-5 min",
            "parquet",
            "orc",
            "avro",
            "zstd",
            "snappy",
            "none",
            "lz4",
            "gzip",
            "deduplicate",
            "first-row",
            "partial-update",
            "aggregation",
            "sum",
            "last_value",
            "full",
            "counts",
            "truncate(0)",
            "truncate(16)",
            "truncate(99999999999)",
            "k",
            "p",
            "v",
            "k,v",
            "nope",
            "sync",
            "async",
            "1.5",
            "NaN",
            "1e3",
            "0x10",
            "__DEFAULT_PARTITION__",
        ]
    ),
    st.text(max_size=12),
)
_SIZES = st.sampled_from(["1 b", "100 b", "1 kb", "8 mb"])
_DURATIONS = st.sampled_from(["1 ms", "10 ms", "1 s", "1 h"])
_PLAUSIBLE = {
    **{k: st.integers(1, 12).map(str) for k in JAVA_INT_KEYS | JAVA_LONG_KEYS},
    **{
        k: _SIZES
        for k in KEYS
        if k.endswith(("-size", "file-cost", "spill-threshold")) or k == "write-buffer-size"
    },
    **{k: _DURATIONS for k in KEYS if k.endswith(("-wait", "time-retained", "index-ttl"))},
    "bucket": st.sampled_from(["-1", "1", "2"]),
    "scan.snapshot-id": st.sampled_from(["1", "2"]),
    "file.format": st.sampled_from(["parquet", "orc", "avro"]),
    "file.compression": st.sampled_from(["zstd", "snappy", "none", "lz4", "gzip"]),
    "manifest.compression": st.sampled_from(["zstd", "snappy", "none", "deflate"]),
    "merge-engine": st.sampled_from(["deduplicate", "first-row", "partial-update", "aggregation"]),
    "metadata.stats-mode": st.sampled_from(["none", "counts", "full", "truncate(1)"]),
}
"""Values that fit the key, so that enough tables are created with unusual valid options."""
OPTION = st.sampled_from(KEYS).flatmap(
    lambda key: st.tuples(
        st.just(key), st.one_of(VALUES, _PLAUSIBLE.get(key, st.sampled_from(["true", "false"])))
    )
)
OPTIONS = st.lists(OPTION, max_size=4).map(dict)
KINDS = {
    "append": {},
    "append-fixed": {"bucket": "2", "bucket-key": "k"},
    "pk": {"bucket": "2"},
    "pk-dynamic": {},
}


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with sandbox(tmp_path_factory, "fuzz-options") as b:
        yield b


def _java_out_of_range(opts: dict[str, str]) -> list[str]:
    bad = []
    for key, value in opts.items():
        bits = 32 if key in JAVA_INT_KEYS else 64 if key in JAVA_LONG_KEYS else None
        if bits is None:
            continue
        try:
            n = int(value.strip())
        except ValueError:
            continue
        if not -(2 ** (bits - 1)) <= n < 2 ** (bits - 1):
            bad.append(key)
    return bad


def _batch(first: int, n: int) -> pa.Table:
    keys = list(range(first, first + n))
    return pa.table(
        {"k": keys, "p": ["a" if k % 2 else "b" for k in keys], "v": [k / 2 for k in keys]},
        schema=SCHEMA,
    )


def _expected(kind: str, committed: list[pa.Table]) -> Counter[Any]:
    rows = [r for t in committed for r in canon_rows(t)]
    if kind.startswith("pk"):
        return Counter({r[0] for r in rows})
    return Counter(rows)


def _seen(kind: str, table: pa.Table) -> Counter[Any]:
    rows = canon_rows(table)
    return Counter({r[0] for r in rows}) if kind.startswith("pk") else Counter(rows)


@fuzz_settings(max_examples=450)
@given(
    kind=st.sampled_from(sorted(KINDS)),
    partitioned=st.booleans(),
    create_options=OPTIONS,
    dynamic_options=OPTIONS,
    rows=st.integers(0, 4),
)
def test_random_options(
    box: Sandbox,
    kind: str,
    partitioned: bool,
    create_options: dict[str, str],
    dynamic_options: dict[str, str],
    rows: int,
) -> None:
    with box.contained():
        _create_commit_read(box, kind, partitioned, create_options, dynamic_options, rows)


def _create_commit_read(
    box: Sandbox,
    kind: str,
    partitioned: bool,
    create_options: dict[str, str],
    dynamic_options: dict[str, str],
    rows: int,
) -> None:
    out = Outcome("options")
    name = box.fresh_name("t")
    all_options = {**KINDS[kind], **create_options}
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        partition_keys=["p"] if partitioned else None,
        primary_keys=(["k", "p"] if partitioned else ["k"]) if kind.startswith("pk") else None,
        options=all_options,
    )
    _, error = out.step(lambda: box.catalog.create_table(f"db.{name}", schema))
    out_of_range = _java_out_of_range(all_options)
    if out_of_range:
        assert isinstance(error, OptionError), f"{out_of_range} accepted out of Java's range"
    if error is not None:
        out.record()
        return
    table = box.catalog.get_table(f"db.{name}")  # accepted at create: loads
    directory = table_path(box, name)
    committed: list[pa.Table] = []
    # options that choose what a read returns (a snapshot, a tag, the commits between two)
    comparable = not any(k.startswith(("scan.", "incremental-")) for k in all_options)

    def commit(t: Any, data: pa.Table) -> None:
        with logged_tracebacks() as tracebacks:
            _, failed = out.step(lambda: write_commit(t, data))
        if failed is None:
            assert not tracebacks, [r.getMessage() for r in tracebacks]
            committed.append(data)
        check_snapshots(directory)
        result, read_error = out.step(lambda: read_all(table))
        if comparable:
            assert read_error is None, f"unreadable after {'a failed' if failed else 'a'} commit"
            assert result is not None and _seen(kind, result) == _expected(kind, committed)

    commit(table, _batch(0, rows))
    copied, _ = out.step(lambda: table.copy(dynamic_options))
    if copied is not None:
        commit(copied, _batch(100, rows + 1))
    out.record()
