"""The spilling sort buffer of primary-key writers (``mergetree/write_buffer.py``), on real
temp files: what it hands out merges to what one buffer that never spilled merges to."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.mergetree import write_buffer
from paimon_pyspark.mergetree.spill import SpillSettings
from paimon_pyspark.mergetree.write_buffer import SortBuffer

SEQ, KIND = "_SEQUENCE_NUMBER", "_VALUE_KIND"


def _records(rng: random.Random, n: int, seq: int) -> pa.Table:
    return pa.table(
        {
            "k": pa.array([f"k{rng.randrange(50):02}" for _ in range(n)]),
            "v": pa.array([rng.randrange(100) for _ in range(n)], pa.int64()),
            SEQ: pa.array(range(seq, seq + n), pa.int64()),
            KIND: pa.array([rng.choice([0, 2, 3]) for _ in range(n)], pa.int8()),
        }
    )


@pytest.fixture
def spill_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("compression", ["zstd", "lz4", "none"])
def test_spill_files_beyond_the_fan_in_are_merged_into_one(
    spill_dir: Path, compression: str
) -> None:
    rng = random.Random(1)
    settings = MergeSettings()
    spill = SpillSettings(max_fan_in=3, compression=compression)
    buffer = SortBuffer(["k"], settings, spill, batch_rows=4)
    written = []
    for i in range(10):
        rows = _records(rng, 30, 30 * i)
        buffer.put(rows)
        written.append(rows)
        assert buffer.memory_bytes == rows.nbytes
        assert buffer.spill()
        assert buffer.memory_bytes == 0
        assert 1 <= len(buffer.spill_files) < 3
        assert sorted(os.listdir(spill_dir)) == sorted(map(os.path.basename, buffer.spill_files))
    buffer.put(last := _records(rng, 30, 300))  # some records stay in memory
    written.append(last)

    merged = [merge(s, ["k"], settings, False, buffer=True) for s in buffer.sorted_slices()]
    expected = merge(pa.concat_tables(written), ["k"], settings, False, buffer=True)
    assert len(merged) > 1
    assert pa.concat_tables(merged).to_pylist() == expected.to_pylist()
    buffer.clear()
    assert os.listdir(spill_dir) == []


def test_a_buffer_spills_only_when_allowed_and_within_its_disk_budget(spill_dir: Path) -> None:
    rng = random.Random(2)
    never = SortBuffer(["k"], MergeSettings(), SpillSettings(spillable=False))
    never.put(_records(rng, 10, 0))
    assert not never.spill()
    assert never.memory_bytes > 0 and not never.spill_files

    budget = SortBuffer(["k"], MergeSettings(), SpillSettings(max_disk_size=1))
    budget.put(_records(rng, 10, 0))
    assert budget.spill()  # nothing on disk yet
    budget.put(_records(rng, 10, 10))
    assert not budget.spill()  # the first spill file used the budget up: flush instead
    assert len(budget.spill_files) == 1
    del budget  # a buffer dropped without clear() still removes its files
    assert os.listdir(spill_dir) == []


def test_a_big_buffer_that_never_spilled_is_merged_in_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(write_buffer, "ONE_MERGE_BYTES", 0)  # every buffer counts as big
    rng = random.Random(4)
    settings = MergeSettings()
    buffer = SortBuffer(["k"], settings, SpillSettings(spillable=False), batch_rows=8)
    written = [_records(rng, 40, 40 * i) for i in range(3)]
    for rows in written:
        buffer.put(rows)
    merged = [merge(s, ["k"], settings, False, buffer=True) for s in buffer.sorted_slices()]
    expected = merge(pa.concat_tables(written), ["k"], settings, False, buffer=True)
    assert len(merged) > 1
    assert pa.concat_tables(merged).to_pylist() == expected.to_pylist()
