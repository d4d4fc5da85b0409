"""Java Paimon 1.4.2 reads what our truncation leaves (commit/truncate.py).

``TableCommit.truncate_table``, ``truncate_partitions`` and ``FileSystemCatalog.drop_partitions``
commit one OVERWRITE snapshot with no new files; Java must see that snapshot as an OVERWRITE
with the right record count, read exactly the remaining rows, list the remaining partitions in
``$partitions``, and keep writing on top (a dynamic-bucket primary-key table too, whose index
files of the dropped partitions go with them).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, read_system_table, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), nullable=False), ("v", pa.string()), ("dt", pa.string())]
)


def _catalog(warehouse: Path) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    return catalog


def _rows(keys: list[int], dts: list[str | None]) -> pa.Table:
    return pa.table({"k": keys, "v": [f"v{k}" for k in keys], "dt": dts}, schema=SCHEMA)


def _write(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def _build(catalog: FileSystemCatalog, pk: bool, last: str | None) -> FileStoreTable:
    options = {"bucket": "-1"} if pk else {}
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["k", "dt"] if pk else None, options=options
    )
    catalog.create_table(f"{DB}.t", schema)
    table = catalog.get_table(f"{DB}.t")
    _write(table, _rows([1, 2, 3, 4, 5], ["a", "a", "b", "c", last]))
    _write(table, _rows([6, 7], ["b", "c"]))
    return table


def _expected(table: FileStoreTable) -> list[list[object]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk-dynamic-bucket"])
@pytest.mark.parametrize("how", ["drop_partitions", "truncate_partitions", "truncate_table"])
def test_java_reads_the_table_after_our_truncate(
    java_oracle: JavaOracle, tmp_path: Path, pk: bool, how: str
) -> None:
    catalog = _catalog(tmp_path)
    last = "d" if pk else None  # a primary key is NOT NULL: no null partition there
    table = _build(catalog, pk, last)
    if how == "drop_partitions":
        catalog.drop_partitions(f"{DB}.t", [{"dt": "b"}, {"dt": last or "__DEFAULT_PARTITION__"}])
        left = [[1, "v1", "a"], [2, "v2", "a"], [4, "v4", "c"], [7, "v7", "c"]]
    elif how == "truncate_partitions":
        table.new_batch_write_builder().new_commit().truncate_partitions([{"dt": last}])
        left = [[k, f"v{k}", dt] for k, dt in [(1, "a"), (2, "a"), (3, "b"), (4, "c")]]
        left += [[6, "v6", "b"], [7, "v7", "c"]]
    else:
        table.new_batch_write_builder().new_commit().truncate_table()
        left = []
    assert _expected(table) == sorted_rows(left)
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == sorted_rows(left)
    newest = java_oracle.snapshots(tmp_path, DB, "t")[-1]
    assert (newest["commitKind"], newest["totalRecordCount"]) == ("OVERWRITE", len(left))
    partitions = read_system_table(java_oracle, tmp_path, DB, "t$partitions").rows
    assert sorted(r[0] for r in partitions) == sorted({f"dt={r[2]}" for r in left})

    # Java writes on top of our truncate; a key of a dropped partition comes back once
    new = [[3, "again", "b"], [8, "v8", "b"]]
    java_oracle.write_rows(tmp_path, DB, "t", new)
    kept = [r for r in left if not (pk and r[0] == 3 and r[2] == "b")]  # upserted by key
    after = sorted_rows([*kept, *new])
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == after
    assert _expected(catalog.get_table(f"{DB}.t")) == after
