"""One router per bucket mode: the factory's choice, the shared grouping against a plain-Python
model, and what each mode routes (fixed hashing, dynamic assignment with key hashes,
cross-partition -D records, postpone buckets and per-partition bucket counts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.bucket.cross_partition import GlobalIndexAssigner, new_global_assigner
from paimon_pyspark.bucket.dynamic import HashBucketAssigner
from paimon_pyspark.bucket.fixed import FixedBucketAssigner, hash_rows
from paimon_pyspark.bucket.postpone import PostponeRouter
from paimon_pyspark.bucket.router import BucketRouter, Group, group_rows
from paimon_pyspark.bucket.routers import (
    BucketUnawareRouter,
    HashDynamicRouter,
    HashFixedRouter,
    KeyDynamicRouter,
    new_router,
)
from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.key_value import DELETE, VALUE_KIND
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET, BucketMode
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import MAX_LENGTH, AtomicType, CharType

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        pa.field("pt", pa.string(), nullable=False),
        ("v", pa.int64()),
    ]
)


def store(
    catalog: FileSystemCatalog,
    name: str,
    pk: list[str] | None,
    partition: list[str] | None = None,
    **options: str,
) -> FileStore:
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        partition_keys=["pt"] if partition is None else partition,
        primary_keys=pk or [],
        options=options,
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}").store


def rows(keys: list[int], parts: list[str], kinds: bool = True) -> pa.Table:
    data = pa.table({"k": keys, "pt": parts, "v": keys}, schema=SCHEMA)
    if kinds:
        data = data.append_column(VALUE_KIND, pa.array(np.zeros(len(keys), np.int8)))
    return data


@pytest.mark.parametrize(
    ("pk", "partition", "options", "expected"),
    [
        (["pt", "k"], None, {"bucket": "4"}, HashFixedRouter),
        (None, None, {"bucket": "3", "bucket-key": "k"}, HashFixedRouter),
        (None, None, {}, BucketUnawareRouter),
        (["pt", "k"], None, {}, HashDynamicRouter),
        (["k"], None, {}, KeyDynamicRouter),
        (["pt", "k"], None, {"bucket": "-2"}, PostponeRouter),
    ],
)
def test_each_bucket_mode_gets_its_router(
    catalog: FileSystemCatalog,
    pk: list[str] | None,
    partition: list[str] | None,
    options: dict[str, str],
    expected: type[BucketRouter],
) -> None:
    s = store(catalog, "t", pk, partition, **options)
    router = new_router(s)
    assert type(router) is expected
    assert router.mode is s.bucket_mode


def model_groups(
    columns: list[list[Any]], types: list[Any], buckets: list[int] | None
) -> list[tuple[bytes, list[Any], int, list[int]]]:
    """Rows grouped by (partition, bucket): partitions ordered by each column's values in order
    of first appearance, then by bucket; rows in arrival order."""
    n = len(columns[0]) if columns else len(buckets or [])
    firsts = [{v: i for i, v in reversed(list(enumerate(dict.fromkeys(c))))} for c in columns]
    groups: dict[tuple[int, ...], list[int]] = {}
    for row in range(n):
        code = tuple(firsts[j][c[row]] for j, c in enumerate(columns))
        code += (0 if buckets is None else buckets[row],)
        groups.setdefault(code, []).append(row)
    out = []
    for code in sorted(groups):
        members = groups[code]
        values = [c[members[0]] for c in columns]
        out.append((serialize_with_arity(values, types), values, code[-1], members))
    return out


def members(group: Group) -> list[int]:
    return [] if group.indices is None else group.indices.tolist()


def as_model(groups: list[Group], n: int) -> list[tuple[bytes, list[Any], int, list[int]]]:
    return [
        (g.partition, g.values, g.bucket, list(range(n)) if g.indices is None else list(g.indices))
        for g in groups
    ]


@pytest.mark.parametrize("with_buckets", [False, True])
def test_grouping_equals_the_plain_python_model(with_buckets: bool) -> None:
    rng = np.random.default_rng(7)
    n = 500
    pt = [None if x == 3 else f"p{x}" for x in rng.integers(0, 4, n).tolist()]
    hr = rng.integers(0, 3, n).tolist()
    buckets = rng.integers(0, 5, n).astype(np.int32) if with_buckets else None
    data = pa.table({"pt": pa.array(pt, pa.string()), "hr": pa.array(hr, pa.int32())})
    types = [CharType(length=MAX_LENGTH), AtomicType(name="INT")]
    got = group_rows(data, ["pt", "hr"], types, buckets)
    expected = model_groups([pt, hr], types, None if buckets is None else buckets.tolist())
    assert as_model(got, n) == expected
    assert all(g.indices is not None for g in got)


def test_keys_whose_codes_would_pass_a_long_group_as_the_model_does() -> None:
    """Six keys of 2,000 values each combine to 6.4e19 codes, past a long: they are renumbered
    densely on the way, in the order the model sorts them."""
    rng = np.random.default_rng(3)
    n = 2_000
    columns = [rng.permutation(n).tolist() for _ in range(6)]
    columns[5][:50] = columns[5][50:100]  # some rows share all six values with others
    for c in columns[:5]:
        c[:50] = c[50:100]
    names = [f"k{i}" for i in range(6)]
    data = pa.table({name: pa.array(c, pa.int32()) for name, c in zip(names, columns, strict=True)})
    types = [AtomicType(name="INT")] * 6
    buckets = rng.integers(0, 3, n).astype(np.int32)
    got = group_rows(data, names, types, buckets)
    assert as_model(got, n) == model_groups(columns, types, buckets.tolist())


def test_one_group_has_no_indices_and_no_partition_means_one_group() -> None:
    data = pa.table({"pt": ["a"] * 5})
    types = [CharType(length=MAX_LENGTH)]
    (only,) = group_rows(data, ["pt"], types, np.full(5, 2, np.int32))
    assert (only.values, only.bucket, only.indices) == (["a"], 2, None)
    assert group_rows(data, [], [], None) == [Group(serialize_with_arity([], []), [], 0, None)]
    assert group_rows(data.slice(0, 0), ["pt"], types, None) == []


def test_fixed_router_hashes_the_bucket_key(catalog: FileSystemCatalog) -> None:
    s = store(catalog, "t", ["pt", "k"], bucket="4")
    router = new_router(s)
    data = rows(list(range(100)), ["a", "b"] * 50)
    routed = router.route(data)
    expected = FixedBucketAssigner([AtomicType(name="BIGINT", nullable=False)], 4)
    buckets = expected.assign([data.column("k")])
    assert as_model(routed.groups, 100) == model_groups(
        [data.column("pt").to_pylist()], s.partition_types, buckets.tolist()
    )
    assert routed.key_hashes is None and routed.data is data
    assert router.total_buckets(b"", 1) == 4 and router.fixed_num_buckets == 4
    assert not router.accepts_buckets and router.continues_sequence and router.compacts_at_commit


def test_unaware_router_groups_by_partition(catalog: FileSystemCatalog) -> None:
    router = new_router(store(catalog, "t", None))
    data = rows([1, 2, 3], ["b", "a", "b"], kinds=False)
    assert [(g.values, g.bucket, members(g)) for g in router.route(data).groups] == [
        (["b"], 0, [0, 2]),
        (["a"], 0, [1]),
    ]
    assert router.total_buckets(b"", 0) == -1 and router.fixed_num_buckets is None
    assert not router.continues_sequence and not router.compacts_at_commit


def test_hash_dynamic_router_assigns_and_carries_key_hashes(catalog: FileSystemCatalog) -> None:
    s = store(catalog, "t", ["pt", "k"], **{"dynamic-bucket.target-row-num": "3"})
    router = new_router(s)
    assert isinstance(router, HashDynamicRouter) and router.hash_index is not None
    keys = [5, 1, 5, 2, 3, 4, 6, 7]
    data = rows(keys, ["a", "b", "a", "a", "a", "a", "b", "a"])
    routed = router.route(data)
    hashes = hash_rows([data.column("k")], [AtomicType(name="BIGINT", nullable=False)])
    assert routed.key_hashes is not None and routed.key_hashes.tolist() == hashes.tolist()
    oracle = HashBucketAssigner(lambda _: [], 3, -1)
    expected = np.empty(len(keys), np.int32)
    for part in ("a", "b"):
        sel = np.flatnonzero(data.column("pt").to_numpy(zero_copy_only=False) == part)
        partition = serialize_with_arity([part], s.partition_types)
        expected[sel] = oracle.assign(partition, hashes[sel])
    assert as_model(routed.groups, len(keys)) == model_groups(
        [data.column("pt").to_pylist()], s.partition_types, expected.tolist()
    )
    for g in routed.groups:
        got = routed.hashes_of(g)
        assert got is not None and got.tolist() == hashes[g.indices].tolist()
    given = router.route(data, np.zeros(len(keys), np.int32))
    assert {g.bucket for g in given.groups} == {0} and given.key_hashes is not None
    with pytest.raises(ValueError, match="every row needs a bucket >= 0"):
        router.route(data, np.zeros(3, np.int32))


def test_key_dynamic_router_bootstraps_once_and_adds_minus_d(catalog: FileSystemCatalog) -> None:
    s = store(catalog, "t", ["k"])
    calls: list[Snapshot | None] = []

    def bootstrap(st: FileStore, snapshot: Snapshot | None) -> GlobalIndexAssigner:
        calls.append(snapshot)
        return new_global_assigner(st)

    router = new_router(s, key_index_bootstrap=bootstrap)
    assert isinstance(router, KeyDynamicRouter)
    router.route(rows([1, 2], ["a", "a"]))
    moved = router.route(rows([1], ["b"]))
    assert calls == [None]
    kinds = moved.data.column(VALUE_KIND).to_pylist()
    assert moved.data.column("pt").to_pylist() == ["a", "b"] and kinds == [DELETE, 0]
    assert [(g.values, members(g)) for g in moved.groups] == [(["a"], [0]), (["b"], [1])]
    with pytest.raises(UnsupportedOptionError, match="needs the table's key index"):
        new_router(s).route(rows([1], ["a"]))
    given = new_router(s).route(rows([1, 2], ["a", "b"]), np.array([0, 1], np.int32))
    assert [(g.values, g.bucket) for g in given.groups] == [(["a"], 0), (["b"], 1)]
    # an overwrite routes by the live keys too, as Java's IndexBootstrap does
    overwriting = new_router(s, ignore_previous_files=True, key_index_bootstrap=bootstrap)
    overwriting.route(rows([1], ["a"]))
    assert len(calls) == 2


def test_postpone_fixed_routing_uses_each_partitions_count(catalog: FileSystemCatalog) -> None:
    s = store(catalog, "t", ["pt", "k"], bucket="-2", **{"postpone.default-bucket-num": "3"})
    router = new_router(s)
    assert isinstance(router, PostponeRouter) and router.fixed and router.accepts_buckets
    types = s.partition_types
    a, b = serialize_with_arity(["a"], types), serialize_with_arity(["b"], types)
    router.pin({a: 5})  # as if partition a had 5 real buckets
    keys = np.arange(40, dtype=np.int64)[::-1]
    data = rows(keys.tolist(), ["a" if k % 2 else "b" for k in keys])
    groups = router.route(data).groups
    for partition, n in ((a, 5), (b, 3)):
        expected = FixedBucketAssigner([AtomicType(name="BIGINT", nullable=False)], n)
        for p, _, bucket, indices in groups:
            if p != partition:
                continue
            assert indices is not None and list(indices) == sorted(indices)  # arrival order
            got = expected.assign([pa.array(keys[indices])])
            assert set(got.tolist()) == {bucket}
    bigint = [AtomicType(name="BIGINT", nullable=False)]
    per_row = [
        FixedBucketAssigner(bigint, 5 if k % 2 else 3).assign([pa.array([k])])[0]
        for k in keys.tolist()
    ]
    assert router.assign(data).tolist() == per_row  # a Spark job's bucket stage
    assert {router.total_buckets(a, 0), router.total_buckets(b, 1)} == {5, 3}
    assert router.total_buckets(a, POSTPONE_BUCKET) == POSTPONE_BUCKET
    with pytest.raises(OptionError, match="bucket 4 given for partition"):
        router.route(data, np.full(40, 4, np.int32))
    postponed = PostponeRouter(s, fixed=False).route(data).groups
    assert [g.bucket for g in postponed] == [POSTPONE_BUCKET, POSTPONE_BUCKET]
    assert not PostponeRouter(s, fixed=False).accepts_buckets


def test_pin_is_for_postpone_tables_only(catalog: FileSystemCatalog) -> None:
    router = new_router(store(catalog, "t", ["pt", "k"], bucket="2"))
    assert router.mode is BucketMode.HASH_FIXED
    with pytest.raises(OptionError, match="is not a postpone-bucket table"):
        router.pin({})
