"""Ray Data: ``TableRead.to_ray`` reads splits in parallel Ray tasks, ``PaimonDatasink`` and
``TableWrite.write_ray`` write with Ray tasks and commit once on the driver.

One local Ray instance (2 CPUs, tests/conftest.py's ``ray_cluster``) serves the module and the
README's Ray block after it. The
tests that run Ray jobs are slow; those that only build and pickle the tasks are not.
"""

from __future__ import annotations

import functools
import io
import pickle
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import ray
import ray.data
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.read.ray_datasource import RayDatasource, deal_splits
from paimon_pyspark.write.ray_datasink import PaimonDatasink

# Ray warns about its own defaults (Ray Data's context; GPU variables in older versions)
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*"),
    pytest.mark.filterwarnings("ignore::FutureWarning:ray.*"),
]

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("name", pa.string()),
        ("value", pa.float64()),
    ]
)
PLAIN_GLOBALS = {
    ("functools", "partial"),
    ("paimon_pyspark.read.ray_datasource", "read_splits"),
    ("paimon_pyspark.read.table_read", "_reopen"),
    ("paimon_pyspark.read.store_ref", "load_store"),
    ("paimon_pyspark.table.file_store_table", "FileStoreTable.of"),
    ("paimon_pyspark.write.ray_datasink", "PaimonDatasink"),
    ("paimon_pyspark.read.ray_datasource", "RayDatasource"),
    ("copyreg", "_reconstructor"),
    ("builtins", "object"),
}


def rows(start: int, n: int, partitions: int = 4) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "dt": pc.cast(pa.array(ids % partitions), pa.string()),
            "name": pc.cast(pa.array(ids % 1000), pa.string()),
            "value": ids * 0.25,
        },
        schema=SCHEMA,
    )


def make_table(
    catalog: FileSystemCatalog, name: str, primary_key: bool = False, **options: str
) -> FileStoreTable:
    catalog.create_table(
        f"db.{name}",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["dt"],
            primary_keys=["id", "dt"] if primary_key else [],
            options={"bucket": "2", **options} if primary_key else options,
        ),
    )
    return catalog.get_table(f"db.{name}")


def collect(dataset: ray.data.Dataset) -> pa.Table:
    return pa.concat_tables(ray.get(dataset.to_arrow_refs()))


def globals_named(data: bytes) -> set[tuple[str, str]]:
    names: set[tuple[str, str]] = set()

    class Recorder(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            names.add((module, name))
            return super().find_class(module, name)

    Recorder(io.BytesIO(data)).load()
    return names


@pytest.mark.slow
def test_a_million_rows_written_by_two_ray_tasks_make_one_snapshot_and_read_back_equal(
    catalog: FileSystemCatalog, ray_cluster: float
) -> None:
    table = make_table(catalog, "big")
    data = rows(0, 1_000_000)
    dataset = ray.data.from_arrow([data.slice(0, 500_000), data.slice(500_000)])
    sink = PaimonDatasink(table)

    started = time.monotonic()
    dataset.write_datasink(sink)
    written = time.monotonic() - started

    assert sink.snapshot_ids == [1]
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    assert (snapshot.id, snapshot.commit_kind) == (1, "APPEND")
    splits = table.new_read_builder().new_scan().plan().splits()
    files = [f.file_name for s in splits for f in s.files]
    assert len(files) == len(set(files)) == 8  # each of the 2 tasks wrote the 4 partitions

    started = time.monotonic()
    result = collect(table.new_read_builder().new_read().to_ray(splits))
    read = time.monotonic() - started
    print(f"\nRay write of 1,000,000 rows: {written:.1f} s, to_ray read: {read:.1f} s")

    assert result.schema == data.schema
    assert result.sort_by("id").equals(data)


@pytest.mark.slow
def test_to_ray_of_a_primary_key_table_merges_filters_projects_and_limits(
    catalog: FileSystemCatalog, ray_cluster: float
) -> None:
    table = make_table(catalog, "pk", primary_key=True)
    write_commit(table, rows(0, 2000))
    write_commit(table, rows(1000, 2000).set_column(3, "value", pa.array(np.full(2000, -1.0))))
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.less_than("value", 100.0)).with_projection(["value", "id"])
    read = rb.new_read()
    splits = rb.new_scan().plan().splits()
    expected = read.to_arrow(splits)

    result = collect(read.to_ray(splits, override_num_blocks=3))

    assert expected.num_rows == 400 + 2000  # ids 0..399 keep value < 100; 1000..2999 are -1
    assert sort_rows(result) == sort_rows(expected)
    limited = table.new_read_builder().with_limit(7).new_read()
    assert limited.to_ray(splits).count() == 7


@pytest.mark.slow
def test_write_ray_overwrite_replaces_the_partitions_written_in_one_snapshot(
    catalog: FileSystemCatalog, ray_cluster: float
) -> None:
    table = make_table(catalog, "ow")
    write_commit(table, rows(0, 100, partitions=2))  # dt '0' and '1'
    new = rows(1000, 50, partitions=1)  # dt '0' only
    write = table.new_batch_write_builder().new_write().with_table(table)

    dataset = ray.data.from_arrow([new.slice(0, 25), new.slice(25)])

    write.write_ray(dataset, overwrite=True, concurrency=2)

    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    assert (snapshot.id, snapshot.commit_kind) == (2, "OVERWRITE")
    kept = rows(0, 100, partitions=2).filter(pc.equal(pc.field("dt"), "1"))
    assert sort_rows(read_all(table)) == sort_rows(pa.concat_tables([kept, new]))


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["deduplicate", "first-row"])
def test_ray_write_into_a_fixed_bucket_primary_key_table_merges_with_the_rows_there(
    catalog: FileSystemCatalog, ray_cluster: float, engine: str
) -> None:
    """Both tasks write both buckets of every partition; the keys they upsert read merged
    (first-row: the rows there stay, read right after the write)."""
    table = make_table(catalog, f"pk_{engine.replace('-', '_')}", True, **{"merge-engine": engine})
    old = rows(0, 2000)
    before = write_commit(table, old)[-1]  # first-row: an APPEND and a COMPACT snapshot
    new = rows(1000, 2000).set_column(3, "value", pa.array(np.full(2000, -1.0)))
    sink = PaimonDatasink(table)

    ray.data.from_arrow([new.slice(0, 1000), new.slice(1000)]).write_datasink(sink)

    assert sink.snapshot_ids[0] == before + 1
    kinds = [table.snapshot_manager.snapshot(i).commit_kind for i in sink.snapshot_ids]
    assert kinds[0] == "APPEND" and set(kinds[1:]) <= {"COMPACT"}
    by_id = {r["id"]: r["value"] for r in read_all(table).to_pylist()}
    assert len(by_id) == 3000
    assert by_id[999] == 999 * 0.25
    assert by_id[2999] == -1.0
    assert by_id[1500] == (-1.0 if engine == "deduplicate" else 1500 * 0.25)


def test_ray_write_refuses_a_dynamic_bucket_primary_key_table(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "dyn", True, bucket="-1")

    with pytest.raises(UnsupportedOptionError, match=r"db\.dyn.*'bucket' = '-1'"):
        PaimonDatasink(table).on_write_start()


@pytest.mark.slow
def test_to_ray_of_no_splits_is_an_empty_dataset_with_the_read_schema(
    catalog: FileSystemCatalog, ray_cluster: float
) -> None:
    table = make_table(catalog, "empty")
    rb = table.new_read_builder().with_projection(["name", "id"])

    dataset = rb.new_read().to_ray(rb.new_scan().plan().splits())

    assert dataset.count() == 0
    assert dataset.schema().names == ["name", "id"]


def test_read_tasks_pickle_as_plain_values_and_read_their_splits(
    catalog: FileSystemCatalog,
) -> None:
    """No Ray job: build the read tasks, pickle each as Ray would, and run it here."""
    table = make_table(catalog, "tasks")
    write_commit(table, rows(0, 3000, partitions=3))
    write_commit(table, rows(3000, 3000, partitions=3))
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.greater_or_equal("id", 1500))
    read = rb.new_read()
    splits = rb.new_scan().plan().splits()

    source = RayDatasource(read, splits)
    tasks = source.get_read_tasks(4)

    assert len(tasks) == 4  # 6 single-file splits dealt to 4 tasks
    parts = []
    for task in tasks:
        data = pickle.dumps(task.read_fn)
        assert globals_named(data) <= PLAIN_GLOBALS
        read_fn = pickle.loads(data)
        assert isinstance(read_fn, functools.partial)
        parts.extend(read_fn())
    assert sort_rows(pa.concat_tables(parts)) == sort_rows(read.to_arrow(splits))
    assert pa.concat_tables(parts).num_rows == 4500
    shipped = pickle.dumps(source)  # the datasource too carries its splits as bytes
    assert globals_named(shipped) <= PLAIN_GLOBALS
    assert pickle.loads(shipped).splits == source.splits


def test_datasink_pickles_without_the_drivers_builder(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "sink")
    sink = PaimonDatasink(table, overwrite=True)
    sink.on_write_start()

    data = pickle.dumps(sink)

    assert globals_named(data) <= PLAIN_GLOBALS
    worker = pickle.loads(data)
    assert worker.commit_user == sink.commit_user
    assert worker.overwrite is True
    assert worker._builder is None
    assert worker.table.path == table.path


def test_deal_splits_balances_bytes_over_at_most_parallelism_groups(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, "deal")
    for start in range(0, 5000, 1000):
        write_commit(table, rows(start, 1000, partitions=1))
    splits = table.new_read_builder().new_scan().plan().splits()
    single = RayDatasource(table.new_read_builder().new_read(), splits).splits

    groups = deal_splits(single, 2)

    assert len(single) == 5
    assert sorted(len(g) for g in groups) == [2, 3]
    assert sorted(f.file_name for g in groups for s in g for f in s.files) == sorted(
        f.file_name for s in single for f in s.files
    )
    assert len(deal_splits(single, 50)) == 5
