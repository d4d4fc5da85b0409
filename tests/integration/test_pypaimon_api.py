"""pypaimon's spellings of the table API, checked against ours on the same table.

``table.snapshot_manager()`` (a method in pypaimon, a property here: one object is both) with
``get_latest_snapshot`` / ``get_snapshot_by_id`` / ``try_get_earliest_snapshot``.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from table_helpers import write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError
from paimon_pyspark.maintenance.expire import ExpireSnapshots

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _table(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options=dict(options)))
    return catalog.get_table("db.t")


def _commit(table: FileStoreTable, i: int) -> None:
    write_commit(table, pa.table({"id": [i], "v": [str(i)]}, schema=SCHEMA))


def test_snapshot_manager_is_a_method_and_a_property(catalog: FileSystemCatalog) -> None:
    table = _table(catalog)
    assert table.snapshot_manager() is table.snapshot_manager
    assert table.snapshot_manager().get_latest_snapshot() is None
    assert table.snapshot_manager().try_get_earliest_snapshot() is None
    for i in (1, 2, 3):
        _commit(table, i)
    sm = table.snapshot_manager()
    latest = sm.get_latest_snapshot()
    assert latest is not None and latest.id == 3
    assert latest == table.snapshot_manager.latest()  # the property's callers read the same
    first = sm.get_snapshot_by_id(1)
    assert first is not None and (first.id, first.commit_kind) == (1, "APPEND")
    assert first.total_record_count == 1 and latest.total_record_count == 3
    assert sm.get_snapshot_by_id(4) is None
    assert sm.get_snapshot_by_id(0) is None
    assert sm.get_snapshot_path(2).endswith("snapshot/snapshot-2")


def test_get_snapshot_by_id_is_none_after_expiry(catalog: FileSystemCatalog) -> None:
    retain_one = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
    table = _table(catalog, **retain_one, **{"write-only": "true"})
    for i in (1, 2, 3):
        _commit(table, i)
    ExpireSnapshots(table.store).expire()
    sm = table.snapshot_manager()
    assert [sm.get_snapshot_by_id(i) is None for i in (1, 2, 3)] == [True, True, False]
    earliest = sm.try_get_earliest_snapshot()
    assert earliest is not None and earliest.id == 3


@pytest.mark.parametrize("bad", ["1", 1.0, True, None])
def test_get_snapshot_by_id_refuses_non_ints(catalog: FileSystemCatalog, bad: object) -> None:
    table = _table(catalog)
    with pytest.raises(InvalidArgumentError, match="get_snapshot_by_id"):
        table.snapshot_manager().get_snapshot_by_id(bad)  # type: ignore[arg-type]
