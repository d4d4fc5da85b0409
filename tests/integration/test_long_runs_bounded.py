"""Long runs hold bounded state (issue 44): a stream write committing checkpoint after
checkpoint, with expiry at every commit, keeps the same writer state and caches no manifest
that expiry deleted; a reader planning again and again keeps its manifest cache within its
budget, least recently used out, the latest snapshot's manifests in.

Structural, not timed: counts of tracked entries, compared between an early and a late
checkpoint. The RSS and plan-time figures over 1,000 checkpoints are bench/long_runs.py's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.store.manifest_io import ManifestIO, decoded_bytes

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])
KINDS: dict[str, tuple[dict[str, str], list[str] | None]] = {
    "append": ({"bucket": "1", "bucket-key": "id"}, None),
    "pk": ({"bucket": "1"}, ["id"]),
}
EXPIRY = {
    "snapshot.num-retained.min": "2",
    "snapshot.num-retained.max": "3",
    "manifest.merge-min-count": "3",  # merged often, so expiry deletes manifests in the run
}
CHECKPOINTS = 20
EARLY = 8


def _table(tmp_path: Path, kind: str, options: dict[str, str]) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    base, keys = KINDS[kind]
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys, options={**base, **options})
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def _rows(kind: str, i: int) -> pa.Table:
    base = (i % 5) * 20 if kind == "pk" else i * 20
    ids = pa.array(range(base, base + 20), pa.int64())
    return pa.table({"id": ids, "v": pa.array([float(i)] * 20)}, schema=SCHEMA)


def _cached(mio: ManifestIO) -> list[str]:
    return mio.cache_usage()[0]


def _writer_state(write: Any) -> dict[str, int]:
    """What a StreamTableWrite carries from checkpoint to checkpoint, counted."""
    w = write._write
    return {
        "live files": sum(len(files) for files in w._live_files.values()),
        "restored buckets": len(w._restored or {}),
        "bucket writers": len(w._writers),
        "pending flushes": len(w._pending),
        "buckets since full compaction": len(write._since_full),
        "deletion vectors": len(w._dv),
    }


@pytest.mark.parametrize("kind", list(KINDS))
def test_stream_write_state_stays_flat_with_expiry(tmp_path: Path, kind: str) -> None:
    table = _table(tmp_path, kind, EXPIRY)
    builder = table.new_stream_write_builder("long-run")
    write, commit = builder.new_write(), builder.new_commit()
    mio = table.store.manifest_io
    states: dict[int, dict[str, int]] = {}
    for i in range(1, CHECKPOINTS + 1):
        write.write_arrow(_rows(kind, i))
        commit.commit(write.prepare_commit(i), i)
        on_disk = set(os.listdir(mio.manifest_dir))
        deleted = [name for name in _cached(mio) if name not in on_disk]
        assert not deleted, (
            f"checkpoint {i}: the writer's manifest cache holds {len(deleted)} manifests expiry "
            f"deleted, e.g. {deleted[:2]}"
        )
        if i in (EARLY, CHECKPOINTS):
            states[i] = _writer_state(write)
    assert (table.snapshot_manager.earliest_id() or 0) > EARLY  # expiry did run
    for what, early in states[EARLY].items():
        late = states[CHECKPOINTS][what]
        assert late <= max(early, 1) * 2, (
            f"{what}: {early} after checkpoint {EARLY}, {late} after {CHECKPOINTS}"
        )
    write.close()
    commit.close()


def test_reader_manifest_cache_within_budget(tmp_path: Path) -> None:
    table = _table(tmp_path, "pk", {})
    reader = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.t")
    mio = reader.store.manifest_io
    builder = table.new_stream_write_builder("long-run")
    write, commit = builder.new_write(), builder.new_commit()
    written: set[str] = set()
    budget = 0
    for i in range(1, CHECKPOINTS + 1):
        write.write_arrow(_rows("pk", i))
        commit.commit(write.prepare_commit(i), i)
        latest = reader.snapshot_manager.latest()
        assert latest is not None
        needed = [m.file_name for m in mio.data_manifests(latest)]
        written.update(needed)
        need = sum(decoded_bytes(mio.read_manifest(n)) for n in needed)
        if i == 2:  # room for a few plans' manifests, far fewer than the run writes
            budget = 3 * need
            mio.cache_memory = budget
        for _ in range(3):
            reader.new_read_builder().new_scan().plan()
        cached, held = mio.cache_usage()
        assert held <= mio.cache_memory, (
            f"plan after checkpoint {i}: the reader caches {len(cached)} manifests, about "
            f"{held} bytes decoded, over its budget of {mio.cache_memory}"
        )
        missing = [n for n in needed if n not in cached]
        assert need > mio.cache_memory or not missing, (
            f"plan after checkpoint {i}: the latest snapshot's manifests {missing} fit in the "
            "budget but are not cached"
        )
    assert len(written) > 2 * len(_cached(mio))  # the run read more than the cache holds
    write.close()
    commit.close()
