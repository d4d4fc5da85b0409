"""``mergetree.compaction.keys_in``: the first-row rewriter's key lookup, against a model."""

from __future__ import annotations

import random

import pyarrow as pa

from paimon_pyspark.mergetree.compaction import keys_in


def test_keys_in_matches_a_set_lookup_for_one_and_two_key_columns() -> None:
    rng = random.Random(5)
    a = [(rng.randrange(20), rng.choice(["x", "y", None])) for _ in range(300)]
    b = [(rng.randrange(20), rng.choice(["x", "y", "z", None])) for _ in range(50)]
    ta = pa.table({"k": [k for k, _ in a], "s": [s for _, s in a]})
    tb = pa.table({"k": [k for k, _ in b], "s": [s for _, s in b]})
    assert keys_in(ta, tb, ["k", "s"]).tolist() == [r in set(b) for r in a]
    assert keys_in(ta, tb, ["k"]).tolist() == [k in {kb for kb, _ in b} for k, _ in a]
