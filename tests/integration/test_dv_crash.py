"""Crash injection into writes and compactions of a primary-key table with deletion vectors.

The k-th store call of a write (its commit compaction with lookups, the bucket's new index
file, the APPEND and COMPACT snapshots) or of a compaction (the compact procedure's tasks and
commit) fails, for every k, before its request is sent or after it went through. Whatever k:
the table reads as before or as after (Java's readers: level 0 skipped, every other file read
raw with its vector applied), every index file the snapshot names exists and each of its
vectors belongs to a live data file, and the next commit succeeds and holds every committed
row once.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from tests.integration.faulty_file_io import FaultyFileIO
from tests.integration.table_helpers import write_commit
from tests.integration.test_dv_write import dv_view, make, model_rows, ordered, upserts

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.compact.plan import plan_compaction, run_task, written_only
from paimon_pyspark.errors import CommitOutcomeUnknownError, PaimonError

FAST = {
    "commit.min-retry-wait": "1 ms",
    "commit.max-retry-wait": "5 ms",
    "deletion-vectors.enabled": "true",
    "bucket": "1",
}
KEYS = ["dt", "id"]


def _faulty(table: FileStoreTable, options: dict[str, str]) -> tuple[FileStoreTable, FaultyFileIO]:
    faulty = FaultyFileIO(table.file_io)
    clone = FileStoreTable(faulty, table.path, table.name, table.store.table_schema, options)
    return clone, faulty


def _seed(catalog: Any, name: str) -> tuple[FileStoreTable, dict[tuple[str, int], str]]:
    """A table whose bucket has a top file with a vector and a level-4 file."""
    table = make(catalog, name, KEYS, FAST)
    write_commit(table, upserts(range(200), "a"))
    write_commit(table, upserts(range(0, 200, 20), "b"))
    model = {("a", i): f"a{i}" for i in range(200)} | {("a", i): f"b{i}" for i in range(0, 200, 20)}
    view = dv_view(table)
    assert view.vectors == 1 and ordered(view.rows) == ordered(model_rows(model))
    return table, model


def _appended(table: FileStoreTable, after: int) -> bool:
    """Whether an APPEND snapshot landed after snapshot ``after``."""
    latest = table.snapshot_manager.latest_id() or 0
    kinds = [table.snapshot_manager.snapshot(i).commit_kind for i in range(after + 1, latest + 1)]
    return "APPEND" in kinds


def _write_case(catalog: Any, name: str, k: int | None, mode: str) -> list[str]:
    """Upsert keys 5..14 (five of them marked in the top file) with call ``k`` failing."""
    table, model = _seed(catalog, name)
    base = table.snapshot_manager.latest_id() or 0
    faulty_table, faulty = _faulty(table, {**FAST, "commit.max-retries": "3"})
    update = {("a", i): f"u{i}" for i in range(5, 15)}
    faulty.arm(k, mode)
    try:
        builder = faulty_table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(upserts(range(5, 15), "u"))
            messages = write.prepare_commit()
        builder.new_commit().commit(messages)
    except (PaimonError, OSError) as e:
        assert k is not None, e
    finally:
        faulty.recording = False
    table = catalog.get_table(f"db.{name}")
    view = dv_view(table)  # index files exist, vectors name live files
    assert view.level0 <= 1
    before, after = ordered(model_rows(model)), ordered(model_rows(model | update))
    assert ordered(view.rows) in (before, after), f"call {k} ({mode}): a mix"
    if k is None:
        assert ordered(view.rows) == after
    landed = _appended(table, base)
    write_commit(table, upserts(range(300, 302), "n"))
    expected = model | (update if landed else {}) | {("a", i): f"n{i}" for i in (300, 301)}
    view = dv_view(table)
    assert view.level0 == 0
    keys = [(r["dt"], r["id"]) for r in view.rows]
    assert len(keys) == len(set(keys))
    assert ordered(view.rows) == ordered(model_rows(expected))
    return faulty.calls


def _compact_case(catalog: Any, name: str, k: int | None, mode: str) -> list[str]:
    """A full compaction (rewrites every file, drops the vector) with call ``k`` failing."""
    table, model = _seed(catalog, name)
    faulty_table, faulty = _faulty(table, {**FAST, "commit.max-retries": "3"})
    faulty.arm(k, mode)
    messages = []
    commit = faulty_table.new_batch_write_builder().new_commit()
    try:
        plan = plan_compaction(faulty_table.store, True)
        for task in plan.tasks:
            message = run_task(faulty_table.store, task)
            if message is not None:
                messages.append(message)
        commit.commit(messages)
    except CommitOutcomeUnknownError:
        pass
    except (PaimonError, OSError) as e:
        assert k is not None, e
        faulty.recording = False
        commit.abort([written_only(m) for m in messages])
    finally:
        faulty.recording = False
    table = catalog.get_table(f"db.{name}")
    view = dv_view(table)
    assert view.level0 == 0
    assert ordered(view.rows) == ordered(model_rows(model)), f"call {k} ({mode})"
    write_commit(table, upserts(range(300, 302), "n"))
    expected = model | {("a", i): f"n{i}" for i in (300, 301)}
    assert ordered(dv_view(table).rows) == ordered(model_rows(expected))
    return faulty.calls


@pytest.mark.parametrize("case", [_write_case, _compact_case], ids=["write", "compaction"])
def test_crash_at_every_store_call_on_local_disk(tmp_path: Any, case: Any) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path / "wh")})
    catalog.create_database("db")
    calls = case(catalog, "clean", None, "before")
    assert "write_bytes" in calls or "open_output" in calls  # the index file is written
    for mode in ("before", "after"):
        for k in range(1, len(calls) + 1):
            case(catalog, f"t_{mode}_{k}", k, mode)


def test_an_aborted_write_leaves_no_index_file(tmp_path: Any) -> None:
    """A write whose commit fails after its compaction wrote the bucket's index file: the
    abort removes that file with the data files (Java's CompactDeletionFile.clean)."""
    catalog = CatalogFactory.create({"warehouse": str(tmp_path / "wh")})
    catalog.create_database("db")
    table, _ = _seed(catalog, "t")
    index_dir = f"{table.path}/index"
    before = set(table.file_io.list_names(index_dir))
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(upserts(range(5, 15), "u"))
        messages = write.prepare_commit()
    written = {f.file_name for m in messages for f in m.compact_increment.new_index_files}
    assert written and written <= set(table.file_io.list_names(index_dir))
    builder.new_commit().abort(messages)
    assert set(table.file_io.list_names(index_dir)) == before
    rows = pa.Table.from_pylist(dv_view(table).rows)
    assert rows.num_rows == 200
