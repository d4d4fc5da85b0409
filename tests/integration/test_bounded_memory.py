"""Bounded memory, structurally: compaction merges its runs in batches and a full write buffer
spills to local disk, and neither changes a row.

The oracles are the unbounded ways: one merge of every record of the compacted files, and a
write whose buffer never fills. The memory figures themselves are in bench/memory_bounds.py.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.mergetree.compaction import compact_kv_bucket
from paimon_pyspark.spec.data_file_meta import DataFileMeta

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        ("v", pa.int64()),
        ("op", pa.string()),
    ]
)
ENGINES: dict[str, tuple[dict[str, str], list[str]]] = {
    "deduplicate": ({}, ["+I", "+U", "-D"]),
    "partial-update": ({"merge-engine": "partial-update"}, ["+I", "+U"]),
    "aggregation": (
        {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
        ["+I", "+U", "-U", "-D"],
    ),
    "first-row": ({"merge-engine": "first-row"}, ["+I"]),
}


def _table(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    opts = {"bucket": "1", "rowkind.field": "op", "write-only": "true", **options}
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id", "name"], options=opts)
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def _batch(rng: random.Random, n: int, ops: list[str]) -> pa.Table:
    ids = [rng.randrange(400) for _ in range(n)]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"n{i % 7}" for i in ids],
            "v": pa.array([rng.choice([None, *range(9)]) for _ in range(n)], pa.int64()),
            "op": [rng.choice(ops) for _ in range(n)],
        },
        schema=SCHEMA,
    )


def _live(table: FileStoreTable) -> list[DataFileMeta]:
    latest = table.snapshot_manager.latest()
    assert latest is not None
    return [e.file for e in table.manifest_io.live_entries(latest)]


def _records(table: FileStoreTable, files: list[DataFileMeta]) -> list[dict[str, Any]]:
    return read_kv_records(table.store, f"{table.path}/bucket-0", files).to_pylist()


@pytest.mark.parametrize(
    ("engine", "extra"),
    [(engine, {}) for engine in ENGINES]
    + [("deduplicate", {"sort-spill-threshold": "2"})]
    + [("deduplicate", {"file.format": fmt}) for fmt in ("orc", "avro")],
    ids=[*ENGINES, "deduplicate-spilled", "deduplicate-orc", "deduplicate-avro"],
)  # sort-spill-threshold 2: two of the four runs are read back from local spill files
def test_compaction_in_tiny_batches_writes_what_one_merge_of_all_records_writes(
    catalog: FileSystemCatalog, engine: str, extra: dict[str, str]
) -> None:
    options, ops = ENGINES[engine]
    table = _table(catalog, "t", {**options, **extra})
    rng = random.Random(7)
    for _ in range(4):
        write_commit(table, _batch(rng, 200, ops))
    files = _live(table)
    assert len(files) == 4  # four overlapping level-0 runs
    store = table.store
    keys = store.table_schema.trimmed_primary_keys()
    all_records = read_kv_records(store, f"{table.path}/bucket-0", files)
    expected = merge(all_records, keys, MergeSettings.from_table(store), drop_delete=True)

    before, after, _ = compact_kv_bucket(store, [], 0, files, full=True, batch_rows=3)

    assert {f.file_name for f in before} == {f.file_name for f in files}
    assert [f.level for f in after] == [5]
    assert _records(table, after) == expected.to_pylist()


def test_a_full_write_buffer_spills_to_local_disk_and_writes_one_sorted_run(
    catalog: FileSystemCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill_dir))
    small = _table(catalog, "small", {"write-buffer-size": "16 kb"})
    big = _table(catalog, "big", {})
    rng = random.Random(3)
    batches = [_batch(rng, 200, ["+I", "+U", "-D"]) for _ in range(20)]

    builder = small.new_batch_write_builder()
    with builder.new_write() as write:
        seen = []
        for b in batches:
            write.write_arrow(b)  # the previous write to the bucket has finished by now
            seen.append(len(os.listdir(spill_dir)))
        messages = write.prepare_commit()
        assert os.listdir(spill_dir) == []  # merged into the sorted run and deleted
    builder.new_commit().commit(messages)
    assert max(seen) >= 5

    builder = big.new_batch_write_builder()
    with builder.new_write() as write:
        for b in batches:
            write.write_arrow(b)
        big_messages = write.prepare_commit()
    builder.new_commit().commit(big_messages)

    (small_file,) = messages[0].new_files  # one level-0 sorted run, as one unspilled buffer
    (big_file,) = big_messages[0].new_files
    assert _records(small, [small_file]) == _records(big, [big_file])
    assert sort_rows(read_all(small)) == sort_rows(read_all(big))


def test_without_spilling_a_shared_buffer_flushes_the_largest_other_writer(
    catalog: FileSystemCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill_dir))
    options = {"bucket": "4", "write-buffer-size": "16 kb", "write-buffer-spillable": "false"}
    small = _table(catalog, "small", options)
    big = _table(catalog, "big", {"bucket": "4"})
    rng = random.Random(9)
    batches = [_batch(rng, 200, ["+I", "+U", "-D"]) for _ in range(10)]
    builder = small.new_batch_write_builder()
    with builder.new_write() as write:
        for b in batches:
            write.write_arrow(b)
        messages = write.prepare_commit()
        assert write.buffer_pool.preemptions > 0  # one writer's rows made another flush
        assert write.buffer_pool.used == 0
    builder.new_commit().commit(messages)
    assert os.listdir(spill_dir) == []
    assert sum(len(m.new_files) for m in messages) > len(messages)  # level-0 runs mid-write
    write_commit(big, pa.concat_tables(batches))
    assert sort_rows(read_all(small)) == sort_rows(read_all(big))
