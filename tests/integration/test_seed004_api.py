"""Seed 004's Python write API (paimon-rust's bindings), run as its proposal spells it.

``table.new_write_builder()`` -> ``new_write()`` -> ``write_arrow(batch)`` ->
``prepare_commit()`` -> ``new_commit().commit(messages)``; pickled commit messages; dynamic
overwrite through ``with_overwrite()`` and ``TableCommit.overwrite(messages)``; static overwrite
through ``overwrite(messages, {"dt": "2026-06-26"})``. Each result is compared with the same
operation through pypaimon's spelling (``new_batch_write_builder().overwrite(...)`` and
``commit``), or with a plain-Python model of the rows.
"""

from __future__ import annotations

import pickle
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CommitError, InvalidArgumentError, PartitionSpecError
from paimon_pyspark.table.write_builder import BatchWriteBuilder

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])


def _table(catalog: FileSystemCatalog, name: str = "db.t", **options: str) -> FileStoreTable:
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        name,
        Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"], options=dict(options)),
    )
    return catalog.get_table(name)


def _batch(rows: list[tuple[int, str, str]]) -> pa.RecordBatch:
    ids, vs, dts = zip(*rows, strict=True) if rows else ((), (), ())
    return pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.int64()), pa.array(vs, pa.string()), pa.array(dts, pa.string())],
        schema=SCHEMA,
    )


def _rows(table: FileStoreTable) -> list[dict[str, Any]]:
    return sort_rows(read_all(table))


def _model(rows: list[tuple[int, str, str]]) -> list[dict[str, Any]]:
    return sort_rows(pa.Table.from_batches([_batch(rows)]))


BEFORE = [(1, "a", "2026-06-25"), (2, "b", "2026-06-26"), (3, "c", "2026-06-26")]


def _seed_append(table: FileStoreTable, rows: list[tuple[int, str, str]]) -> list[int]:
    write_builder = table.new_write_builder()
    table_write = write_builder.new_write()
    table_write.write_arrow(_batch(rows))
    messages = table_write.prepare_commit()
    ids = write_builder.new_commit().commit(messages)
    table_write.close()
    return ids


def test_seed004_append_loop_reads_back_what_was_written(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    assert isinstance(table.new_write_builder(), BatchWriteBuilder)
    ids = _seed_append(table, BEFORE)
    assert ids == [1]
    assert _rows(table) == _model(BEFORE)
    latest = table.snapshot_manager().get_latest_snapshot()
    assert latest is not None and latest.commit_kind == "APPEND"


def test_seed004_pickled_messages_commit_once_on_the_driver(catalog: FileSystemCatalog) -> None:
    """PR 2: messages cross a process boundary as pickles; the driver commits them together."""
    table = _table(catalog)
    write_builder = table.new_write_builder()
    shipped = []
    for part in (BEFORE[:1], BEFORE[1:]):  # two "workers", each with its own writer
        table_write = write_builder.new_write()
        table_write.write_arrow(_batch(part))
        shipped.append(pickle.dumps(table_write.prepare_commit()))
        table_write.close()
    messages = [m for blob in shipped for m in pickle.loads(blob)]
    assert write_builder.new_commit().commit(messages) == [1]
    assert _rows(table) == _model(BEFORE)
    assert table.snapshot_manager.list_ids() == [1]


NEW = [(7, "x", "2026-06-26")]


def test_seed004_dynamic_overwrite_replaces_only_touched_partitions(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog)
    _seed_append(table, BEFORE)
    write_builder = table.new_write_builder()
    write_builder.with_overwrite()
    table_write = write_builder.new_write()
    table_write.write_arrow(_batch(NEW))
    messages = table_write.prepare_commit()
    assert write_builder.new_commit().overwrite(messages) == [2]
    assert _rows(table) == _model([BEFORE[0], *NEW])
    snapshot = table.snapshot_manager().get_snapshot_by_id(2)
    assert snapshot is not None and snapshot.commit_kind == "OVERWRITE"


def test_seed004_static_overwrite_empties_its_partition_without_data(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog)
    _seed_append(table, BEFORE)
    write_builder = table.new_write_builder().with_overwrite()
    assert write_builder.new_commit().overwrite([], {"dt": "2026-06-26"}) == [2]
    assert _rows(table) == _model(BEFORE[:1])


def test_seed004_static_overwrite_refuses_data_outside_the_spec(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog)
    _seed_append(table, BEFORE)
    write_builder = table.new_write_builder().with_overwrite()
    table_write = write_builder.new_write()
    table_write.write_arrow(_batch([(8, "y", "2026-06-25")]))
    messages = table_write.prepare_commit()
    with pytest.raises(CommitError, match="outside it"):
        write_builder.new_commit().overwrite(messages, {"dt": "2026-06-26"})
    assert _rows(table) == _model(BEFORE)


@pytest.mark.parametrize("static", [None, {"dt": "2026-06-26"}])
def test_seed004_and_pypaimon_spellings_give_the_same_table(
    catalog: FileSystemCatalog, static: dict[str, str] | None
) -> None:
    """One implementation behind both: seed 004's overwrite and pypaimon's overwrite+commit."""
    seed, pyp = _table(catalog, "db.seed"), _table(catalog, "db.pyp")
    for table in (seed, pyp):
        _seed_append(table, BEFORE)

    wb = seed.new_write_builder().with_overwrite()
    tw = wb.new_write()
    tw.write_arrow(_batch(NEW))
    wb.new_commit().overwrite(tw.prepare_commit(), static)

    bwb = pyp.new_batch_write_builder().overwrite(static)
    with bwb.new_write() as w:
        w.write_arrow(pa.Table.from_batches([_batch(NEW)]))
        bwb.new_commit().commit(w.prepare_commit())

    assert _rows(seed) == _rows(pyp) == _model([BEFORE[0], *NEW])
    kinds = [
        (t.snapshot_manager().get_latest_snapshot() or pytest.fail("no snapshot")).commit_kind
        for t in (seed, pyp)
    ]
    assert kinds == ["OVERWRITE", "OVERWRITE"]


def test_seed004_overwrite_needs_with_overwrite_on_the_builder(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog)
    _seed_append(table, BEFORE)
    write_builder = table.new_write_builder()
    table_write = write_builder.new_write()
    table_write.write_arrow(_batch(NEW))
    messages = table_write.prepare_commit()
    with pytest.raises(CommitError, match="with_overwrite"):
        write_builder.new_commit().overwrite(messages)
    assert table.snapshot_manager.list_ids() == [1]
    assert _rows(table) == _model(BEFORE)


def test_seed004_overwrite_refuses_a_spec_contradicting_the_builder(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog)
    _seed_append(table, BEFORE)
    write_builder = table.new_write_builder().with_overwrite({"dt": "2026-06-25"})
    commit = write_builder.new_commit()
    with pytest.raises(InvalidArgumentError, match="2026-06-25"):
        commit.overwrite([], {"dt": "2026-06-26"})
    with pytest.raises(InvalidArgumentError, match=r"TableCommit\.overwrite"):
        commit.overwrite([], ["dt"])  # type: ignore[arg-type]
    with pytest.raises(PartitionSpecError, match="'id'"):
        commit.overwrite([], {"id": 1})
    assert table.snapshot_manager.list_ids() == [1]
    # the builder's own spec again is no contradiction
    assert commit.overwrite([], {"dt": "2026-06-25"}) == [2]
    assert _rows(table) == _model(BEFORE[1:])


def test_with_overwrite_names_itself_in_argument_errors(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    with pytest.raises(InvalidArgumentError, match=r"with_overwrite\(static_partition\)"):
        table.new_write_builder().with_overwrite("dt=1")  # type: ignore[arg-type]
    with pytest.raises(PartitionSpecError, match="'nope'"):
        table.new_write_builder().with_overwrite({"nope": "1"})
