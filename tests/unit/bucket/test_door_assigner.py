"""The buckets tasks of one ``format("paimon")`` job agree on without talking: a key's bucket
depends only on its hash and the pinned table state, and buckets still fill towards
``dynamic-bucket.target-row-num``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.bucket.door_assigner import (
    AgreedBucketRouter,
    AgreedBuckets,
    BucketPlan,
    agreed_buckets,
    plan_partition,
)
from paimon_pyspark.bucket.routers import HashDynamicRouter

I32 = npt.NDArray[np.int32]
T = 10_000


def _hashes(n: int, seed: int) -> I32:
    rng = np.random.default_rng(seed)
    return rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)


def _load(counts: dict[int, int], n: int, width: int, max_buckets: int = -1) -> dict[int, int]:
    """One job of ``n`` new keys into a partition holding ``counts``: the counts after it."""
    plan = plan_partition(counts, T, width, 0, max_buckets)
    buckets, sizes = np.unique(plan.choose(_hashes(n, n + len(counts))), return_counts=True)
    out = dict(counts)
    for b, c in zip(buckets.tolist(), sizes.tolist(), strict=True):
        out[b] = out.get(b, 0) + c
    return out


def test_a_new_key_gets_one_bucket_whatever_task_or_batch_order_sees_it() -> None:
    plan = plan_partition({0: 9_000, 1: 10_000, 3: 2_000}, T, 2, 0, -1)
    hashes = _hashes(5_000, 1)
    whole = plan.choose(hashes)
    order = np.random.default_rng(2).permutation(len(hashes))
    shuffled = np.empty_like(whole)
    shuffled[order] = plan.choose(hashes[order])
    again = plan_partition({3: 2_000, 1: 10_000, 0: 9_000}, T, 2, 0, -1).choose(hashes[:10])
    assert (whole == shuffled).all()
    assert (whole[:10] == again).all()
    # the full bucket 1 takes no new key; 21,000 keys and 9,000 room: 2 new buckets
    assert set(whole.tolist()) == {0, 2, 3, 4}


def test_buckets_fill_together_to_the_target_when_the_load_matches_the_room() -> None:
    counts = _load({}, 4 * T, width=4)
    assert sorted(counts) == [0, 1, 2, 3]
    assert all(abs(c - T) <= 0.05 * T for c in counts.values()), counts


def test_a_partition_grows_by_doubling_without_overfilling() -> None:
    """Jobs no larger than the partition never push a bucket past the target (bar hash noise),
    and the bucket count stays within twice the ideal plus the width."""
    for width, jobs in ((1, [T] * 6), (1, [T // 4] * 8), (4, [4 * T] * 3), (2, [T // 2] * 12)):
        counts: dict[int, int] = {}
        for n in jobs:
            counts = _load(counts, n, width)
        ideal = -(-sum(jobs) // T)
        assert sum(counts.values()) == sum(jobs)
        assert len(counts) <= 2 * ideal + width, (width, jobs, counts)
        assert max(counts.values()) <= 1.05 * T, (width, jobs, counts)


def test_max_buckets_bounds_the_ids_and_the_rest_spreads_over_every_bucket() -> None:
    counts = _load({}, 2 * T, width=2, max_buckets=2)
    counts = _load(counts, 4 * T, width=2, max_buckets=2)
    assert sorted(counts) == [0, 1]
    assert all(abs(c - 3 * T) <= 0.1 * T for c in counts.values()), counts


def test_a_new_partition_is_sized_like_the_tables_partitions() -> None:
    plan = plan_partition({}, T, 1, 3 * T, -1)
    assert plan.ids.tolist() == [0, 1, 2]
    assert isinstance(BucketPlan.of({5: 1}).choose(_hashes(3, 0)), np.ndarray)


def test_tasks_of_one_job_agree_and_keep_the_index_buckets(tmp_path: Path) -> None:
    """Two routers (two tasks) of one pinned job: known keys keep the index's bucket, new keys
    get the same bucket in both, also after another commit moved the table on."""
    schema = pa.schema([pa.field("pk", pa.int64(), nullable=False), ("v", pa.string())])
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    options = {"bucket": "-1", "dynamic-bucket.target-row-num": "10"}
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(schema, primary_keys=["pk"], options=options)
    )
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"pk": list(range(30)), "v": ["a"] * 30}, schema=schema))
        builder.new_commit().commit(w.prepare_commit())
    agreed = agreed_buckets(table.store, 3)
    assert agreed == AgreedBuckets(1, 3)
    first = AgreedBucketRouter(table.store, agreed)
    with builder.new_write() as w:  # a commit after the job pinned its snapshot
        w.write_arrow(pa.table({"pk": list(range(30, 60)), "v": ["b"] * 30}, schema=schema))
        builder.new_commit().commit(w.prepare_commit())
    second = AgreedBucketRouter(table.store, agreed)
    data = pa.table({"pk": list(range(100)), "v": ["c"] * 100}, schema=schema)
    a = first.assign(data)
    b = second.assign(data.take(list(range(99, -1, -1))))[::-1]
    assert (a == b).all()
    known = HashDynamicRouter(table.store).assign(data.slice(0, 30))  # the index's buckets
    assert (a[:30] == known).all()
    assert set(a[30:].tolist()) == {3, 4, 5}  # 30 keys in 3 full buckets: 3 new, width 3
