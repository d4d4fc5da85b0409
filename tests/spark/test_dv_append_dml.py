"""SQL DELETE and UPDATE on append tables with deletion vectors through the SQL door
(spark/sql.py -> spark/dml.py): rows are marked in vectors, data files stay (Java's
DeleteFromPaimonTableCommand and UpdatePaimonTableCommand with deletion vectors)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from tests.integration.table_helpers import read_all

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.spark import register, sql
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.store.deletion_vectors import (
    deletion_files,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.store.paths import PathFactory

pytestmark = pytest.mark.slow

MODES = {
    "unaware": "'bucket' = '-1'",
    "fixed": "'bucket' = '2', 'bucket-key' = 'id'",
}


@pytest.fixture()
def wh(spark: SparkSession, tmp_path: Path) -> Iterator[str]:
    register(spark, warehouse=str(tmp_path))
    yield str(tmp_path)
    sql(spark, "USE default").collect()


def table(wh: str, name: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": wh}).get_table(f"default.{name}")


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, statement).collect()]


def read(wh: str, name: str) -> list[tuple[Any, ...]]:
    data = read_all(table(wh, name))
    return sorted(zip(*(data.column(c).to_pylist() for c in ("id", "v", "pt")), strict=True))


def live_files(t: FileStoreTable) -> set[str]:
    snapshot = t.snapshot_manager.latest()
    return {e.file.file_name for e in t.manifest_io.live_entries(snapshot)}


def by_hand(t: FileStoreTable) -> list[tuple[Any, ...]]:
    """(id, v, pt) of the live files with the snapshot's vectors applied by hand."""
    store = t.store
    snapshot = store.snapshot_manager.latest()
    dv_index = dv_index_of(store)
    where = deletion_files(dv_index, dv_index_entries(index_handler_of(store), snapshot))
    pf = PathFactory(store.path)
    out: list[tuple[Any, ...]] = []
    for e in store.manifest_io.live_entries(snapshot):
        values = deserialize_with_arity(e.partition, store.partition_types)
        path = pf.bucket_path(store.partition_rel_path(values), e.bucket)
        data = pq.read_table(f"{path}/{e.file.file_name}")
        found = where.get((bytes(e.partition), e.bucket), {}).get(e.file.file_name)
        if found is not None:
            keep = np.ones(data.num_rows, dtype=bool)
            keep[dv_index.read(found).positions().astype(np.int64)] = False
            data = data.filter(pa.array(keep))
        out += zip(*(data.column(c).to_pylist() for c in ("id", "v", "pt")), strict=True)
    return sorted(out)


def create(spark: SparkSession, name: str, mode: str, bitmap64: bool = False) -> None:
    sql(
        spark,
        f"""CREATE TABLE {name} (id BIGINT, v STRING, pt INT) PARTITIONED BY (pt)
            TBLPROPERTIES ('deletion-vectors.enabled' = 'true',
                           'deletion-vectors.bitmap64' = '{str(bitmap64).lower()}',
                           {MODES[mode]})""",
    ).collect()
    for c in range(3):
        values = ", ".join(f"({i}, 'v{i}', {i % 2})" for i in range(c * 10, c * 10 + 10))
        sql(spark, f"INSERT INTO {name} VALUES {values}").collect()


@pytest.mark.parametrize(("mode", "bitmap64"), [("unaware", False), ("fixed", True)])
def test_delete_marks_rows_in_vectors(
    spark: SparkSession, wh: str, mode: str, bitmap64: bool
) -> None:
    name = f"del_{mode}"
    create(spark, name, mode, bitmap64)
    t = table(wh, name)
    files = live_files(t)
    model = {(i, f"v{i}", i % 2) for i in range(30)}

    sql(spark, f"DELETE FROM {name} WHERE id % 7 = 0 OR v = 'v11'").collect()
    model -= {r for r in model if r[0] % 7 == 0 or r[1] == "v11"}
    t = table(wh, name)
    assert t.snapshot_manager.latest().commit_kind == "OVERWRITE"
    assert live_files(t) == files
    assert by_hand(t) == sorted(model)
    assert read(wh, name) == sorted(model)

    # a condition Paimon cannot translate (a function) still works: Spark decides each row
    sql(spark, f"DELETE FROM {name} WHERE length(v) = 3 AND id < 15").collect()
    model -= {r for r in model if len(r[1]) == 3 and r[0] < 15}
    assert by_hand(table(wh, name)) == sorted(model)
    assert read(wh, name) == sorted(model)

    before = table(wh, name).snapshot_manager.latest().id
    sql(spark, f"DELETE FROM {name} WHERE id > 1000").collect()  # matches nothing
    assert table(wh, name).snapshot_manager.latest().id == before

    # a condition on the partition column only drops the partition with its vectors
    sql(spark, f"DELETE FROM {name} WHERE pt = 1").collect()
    model = {r for r in model if r[2] != 1}
    t = table(wh, name)
    assert by_hand(t) == sorted(model)
    pt1 = [
        e
        for e in dv_index_entries(index_handler_of(t.store), t.snapshot_manager.latest())
        if deserialize_with_arity(e.partition, t.store.partition_types) == [1]
    ]
    assert pt1 == []
    assert read(wh, name) == sorted(model)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_update_marks_old_rows_and_appends_new_ones(
    spark: SparkSession, wh: str, mode: str
) -> None:
    name = f"upd_{mode}"
    create(spark, name, mode)
    files = live_files(table(wh, name))
    before = table(wh, name).snapshot_manager.latest().id
    sql(spark, f"UPDATE {name} SET v = concat(v, '!') WHERE id BETWEEN 5 AND 14").collect()
    model = {(i, f"v{i}!" if 5 <= i <= 14 else f"v{i}", i % 2) for i in range(30)}
    t = table(wh, name)
    latest = t.snapshot_manager.latest()
    assert latest.id == before + 1  # one commit: vectors and the new rows
    assert latest.commit_kind == "OVERWRITE"
    assert files < live_files(t)  # old files stay, new ones hold the updated rows
    assert by_hand(t) == sorted(model)
    assert read(wh, name) == sorted(model)

    # updated rows are updated again: the new files get vectors too
    sql(spark, f"UPDATE {name} SET v = 'x' WHERE v LIKE '%!'").collect()
    model = {(i, "x" if 5 <= i <= 14 else v, p) for i, v, p in model}
    assert by_hand(table(wh, name)) == sorted(model)
    assert read(wh, name) == sorted(model)

    marked = {
        r.data_file_name
        for e in dv_index_entries(index_handler_of(t.store), t.snapshot_manager.latest())
        for r in e.index_file.dv_ranges or ()
    }
    sql(spark, f"CALL sys.compact(`table` => 'default.{name}')").collect()  # a Spark job
    t = table(wh, name)
    assert t.snapshot_manager.latest().commit_kind == "COMPACT"
    assert marked and not marked & live_files(t)  # every file with a vector was rewritten
    assert by_hand(t) == sorted(model)
    assert read(wh, name) == sorted(model)


def test_select_through_the_door_sees_the_deletes(spark: SparkSession, wh: str) -> None:
    create(spark, "sel", "unaware")
    sql(spark, "DELETE FROM sel WHERE id < 25").collect()
    assert rows(spark, "SELECT id FROM sel ORDER BY id") == [(i,) for i in range(25, 30)]
