"""Merging sorted runs as a stream of key slices gives what one merge of every record gives.

The oracle is the merge function applied once to all records (what compaction and the write
buffer did before they streamed); the streamed result merges each slice on its own. They can
only agree if no slice splits the records of a key, nor a group of float keys Java's
comparator joins (-0.0 with +0.0, a NaN with the key before it).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import random
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark.merge.merge_function import FieldAgg, MergeSettings, merge, sort_records
from paimon_pyspark.mergetree.sort_merge import concat, merge_sorted_runs

SEQ, KIND = "_SEQUENCE_NUMBER", "_VALUE_KIND"
NAN = math.nan

ENGINES = {
    "deduplicate": MergeSettings(),
    "deduplicate-sequence-field": MergeSettings(sequence_fields=("v",)),
    "first-row": MergeSettings(engine="first-row", ignore_delete=True),
    "partial-update": MergeSettings(engine="partial-update", remove_record_on_delete=True),
    "aggregation": MergeSettings(engine="aggregation", field_aggs=(("v", FieldAgg("sum")),)),
}


def _keys(kind: str, rng: random.Random) -> tuple[dict[str, pa.DataType], list[tuple[Any, ...]]]:
    """Key columns and a pool of distinct keys of one kind."""
    if kind == "bigint":
        return {"k": pa.int64()}, [(i,) for i in rng.sample(range(-1000, 1000), 60)]
    if kind == "string":
        words = ["", "a", "ab", "abc", "b", "é", "z", "zz", "ä", "\U0001f600", "A", "aa"]
        return {"k": pa.string()}, [(w,) for w in words] + [(f"w{i:03}",) for i in range(40)]
    if kind == "string-int":
        return {"k": pa.string(), "j": pa.int32()}, [
            (s, j) for s in ("a", "b", "é", "") for j in range(-5, 10)
        ]
    if kind == "decimal":
        return {"k": pa.decimal128(10, 2)}, [(Decimal(i) / 4,) for i in range(-80, 80, 3)]
    if kind == "timestamp":
        base = dt.datetime(2024, 1, 1)
        return {"k": pa.timestamp("us")}, [
            (base + dt.timedelta(microseconds=7919 * i),) for i in range(-30, 30)
        ]
    if kind == "double":
        values = [NAN, -0.0, 0.0, 1.0, -1.0, 2.5, math.inf, -math.inf, 1e-300, 3.0, 4.0]
        return {"k": pa.float64()}, [(v,) for v in values]
    assert kind == "int-double"
    values = [NAN, -0.0, 0.0, 1.0, 2.0, math.inf]
    return {"j": pa.int32(), "k": pa.float64()}, [(j, v) for j in range(3) for v in values]


def _runs(
    kind: str, seed: int, settings: MergeSettings
) -> tuple[list[str], list[list[pa.Table]], pa.Table]:
    """Random sorted runs (each split into random batches) and all their records."""
    rng = random.Random(seed)
    key_types, pool = _keys(kind, rng)
    names = list(key_types)
    runs: list[pa.Table] = []
    seq = 0
    for _ in range(rng.randint(1, 5)):
        keys = rng.sample(pool, rng.randint(1, len(pool)))
        n = len(keys)
        columns: dict[str, Any] = {
            name: pa.array([k[i] for k in keys], t) for i, (name, t) in enumerate(key_types.items())
        }
        columns["v"] = pa.array([rng.choice([None, *range(5)]) for _ in range(n)], pa.int64())
        columns[SEQ] = pa.array(range(seq, seq + n), pa.int64())
        columns[KIND] = pa.array([rng.choice([0, 0, 0, 1, 2, 3]) for _ in range(n)], pa.int8())
        seq += n
        runs.append(sort_records(pa.table(columns), names, settings))
    batched = []
    for run in runs:
        cuts = sorted(rng.sample(range(1, run.num_rows), min(run.num_rows - 1, 4)))
        bounds = [0, *cuts, run.num_rows]
        batched.append([run.slice(a, b - a) for a, b in itertools.pairwise(bounds)])
    return names, batched, pa.concat_tables(runs)


def _rows(t: pa.Table) -> list[tuple[Any, ...]]:
    def text(x: Any) -> Any:
        return ("NaN" if math.isnan(x) else x.hex()) if isinstance(x, float) else x

    return [tuple(text(v) for v in r.values()) for r in t.to_pylist()]


KINDS = ["bigint", "string", "string-int", "decimal", "timestamp", "double", "int-double"]
CASES = [("deduplicate", k) for k in KINDS] + [
    (e, k) for e in ENGINES if e != "deduplicate" for k in ("string-int", "int-double")
]


@pytest.mark.parametrize(("engine", "kind"), CASES)
def test_streamed_merge_equals_one_merge_of_every_record(engine: str, kind: str) -> None:
    settings = ENGINES[engine]
    slices = 0
    for seed in range(4):
        names, runs, records = _runs(kind, seed, settings)
        for buffer, drop in ((False, True), (False, False), (True, False)):
            expected = merge(records, names, settings, drop, buffer=buffer)
            parts = []
            for pieces in merge_sorted_runs(runs, names):
                assert len(pieces) == len(runs)
                part = concat(pieces)
                assert part is not None
                parts.append(merge(part, names, settings, drop, buffer=buffer))
                slices += 1
            got = pa.concat_tables(parts) if parts else records.slice(0, 0)
            assert _rows(got) == _rows(expected), (kind, engine, seed, buffer, drop)
    assert slices > 4 * 3  # the runs were merged in several slices, not at once


def test_a_slice_never_parts_a_nan_from_the_key_before_it() -> None:
    """Runs whose batches end right before a NaN, or at -0.0 before +0.0: the cut moves back."""
    t = pa.float64()

    def run(keys: list[float], seq: int) -> list[pa.Table]:
        table = pa.table(
            {
                "k": pa.array(keys, t),
                SEQ: pa.array(range(seq, seq + len(keys)), pa.int64()),
                KIND: pa.array([0] * len(keys), pa.int8()),
            }
        )
        return [table.slice(i, 1) for i in range(len(keys))]

    runs = [run([1.0, 2.0], 0), run([2.0, NAN], 10), run([-0.0], 20), run([0.0], 30)]
    slices = [concat(p) for p in merge_sorted_runs(runs, ["k"])]
    keys = [sorted(_rows(s.select(["k"]))) for s in slices if s is not None]
    together = next(k for k in keys if ("NaN",) in k)
    assert ((2.0).hex(),) in together  # NaN joins 2.0, the key before it
    zeros = next(k for k in keys if ((0.0).hex(),) in k)
    assert ((-0.0).hex(),) in zeros
