"""Sort compaction (``order_strategy`` with ``order_by``) of bucket-unaware append tables: the
same rows, one COMPACT snapshot replacing each kept partition's files, files sorted and
covering disjoint ranges, and reads filtering on the sort columns planning fewer files; the
spilling path (a small ``write-buffer-size``) gives the same result; Java's refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CompactArgumentError
from paimon_pyspark.procedures import compact
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("x", pa.int32()),
        ("y", pa.int32()),
        ("name", pa.string()),
        ("dt", pa.string()),
    ]
)
OPTIONS = {"target-file-size": "4 kb", "file.format": "parquet"}


def batch(ids: np.ndarray, dt: str) -> pa.Table:
    return pa.table(
        {
            "id": ids,
            "x": (ids % 64).astype(np.int32),
            "y": (ids // 64 % 64).astype(np.int32),
            "name": [f"name-{i:06d}" for i in ids],
            "dt": [dt] * len(ids),
        },
        schema=SCHEMA,
    )


def unaware(catalog: FileSystemCatalog, name: str, commits: int = 4) -> FileStoreTable:
    """Partitions a and b; each commit holds a random quarter of ids 0..4095, so every file
    spans the whole id range and no filter on id can skip one."""
    schema = Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"], options=OPTIONS)
    catalog.create_table(f"db.{name}", schema)
    table = catalog.get_table(f"db.{name}")
    rng = np.random.default_rng(11)
    for dt in ("a", "b"):
        for part in np.array_split(rng.permutation(4096), commits):
            write_commit(table, batch(part.astype(np.int64), dt))
    return table


def planned_files(table: FileStoreTable, predicate: Predicate) -> int:
    rb = table.new_read_builder().with_filter(predicate)
    return sum(len(s.files) for s in rb.new_scan().plan().splits())


def file_rows(table: FileStoreTable, dt: str, f: DataFileMeta) -> pa.Table:
    return pq.read_table(Path(table.path) / f"dt={dt}" / "bucket-0" / f.file_name)


def files_in_write_order(table: FileStoreTable, dt: str) -> list[DataFileMeta]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    found = [
        e.file
        for e in table.manifest_io.live_entries(snapshot)
        if deserialize_with_arity(e.partition, table.partition_types)[0] == dt
    ]
    return sorted(found, key=lambda f: f.min_sequence_number)


def check_sorted_by_id(table: FileStoreTable, dt: str) -> None:
    ids = pa.concat_tables(
        [file_rows(table, dt, f) for f in files_in_write_order(table, dt)]
    ).column("id")
    assert ids.to_pylist() == sorted(ids.to_pylist())


def check_compact_snapshot(table: FileStoreTable, sid: int, replaced: int) -> None:
    snapshot = table.snapshot_manager.snapshot(sid)
    assert snapshot.commit_kind == "COMPACT"
    mio = table.manifest_io
    delta = mio.read_entries(mio.read_manifest_list(snapshot.delta_manifest_list))
    assert sum(1 for e in delta if e.kind == mf.KIND_DELETE) == replaced
    added = [e.file for e in delta if e.kind == mf.KIND_ADD]
    assert added and all(f.file_source == FILE_SOURCE_COMPACT for f in added)


def test_order_sort_replaces_the_partitions_files_and_filters_skip_files(
    catalog: FileSystemCatalog,
) -> None:
    table = unaware(catalog, "ordered")
    before = sort_rows(read_all(table))
    pb = table.new_read_builder().new_predicate_builder()
    one_id = pb.and_(pb.equal("dt", "a"), pb.equal("id", 1234))
    in_a = len(files_in_write_order(table, "a"))
    files_before = planned_files(table, one_id)
    assert files_before == in_a > 4  # every file of partition a spans nearly every id

    sid = compact(catalog, "db.ordered", order_strategy="order", order_by="id", where="dt = 'a'")
    assert sid is not None
    check_compact_snapshot(table, sid, replaced=in_a)
    assert sort_rows(read_all(table)) == before
    check_sorted_by_id(table, "a")
    assert len(files_in_write_order(table, "a")) > 4  # rolled at target-file-size
    files_after = planned_files(table, one_id)
    assert files_after == 1
    print(f"order by id: a filter on one id plans {files_before} -> {files_after} file(s)")
    in_b = pb.and_(pb.equal("dt", "b"), pb.equal("id", 1234))
    assert planned_files(table, in_b) == len(files_in_write_order(table, "b"))  # not kept


def test_zorder_and_hilbert_keep_rows_and_let_filters_on_either_column_skip_files(
    catalog: FileSystemCatalog,
) -> None:
    for strategy in ("zorder", "hilbert"):
        table = unaware(catalog, strategy)
        before = sort_rows(read_all(table))
        pb = table.new_read_builder().new_predicate_builder()
        on_x = pb.and_(pb.equal("dt", "a"), pb.equal("x", 5))
        on_y = pb.and_(pb.equal("dt", "a"), pb.less_than("y", 4))
        in_a = len(files_in_write_order(table, "a"))
        x_before, y_before = planned_files(table, on_x), planned_files(table, on_y)
        sid = compact(catalog, f"db.{strategy}", "dt=a", strategy, "x,y")
        assert sid is not None
        check_compact_snapshot(table, sid, replaced=in_a)
        assert sort_rows(read_all(table)) == before
        total = len(files_in_write_order(table, "a"))
        x_after, y_after = planned_files(table, on_x), planned_files(table, on_y)
        print(
            f"{strategy} by x,y over {total} files: x = 5 plans {x_before} -> {x_after}, "
            f"y < 4 plans {y_before} -> {y_after}"
        )
        assert x_before == y_before == in_a
        assert x_after < total and y_after < total


def test_spilled_sort_gives_the_same_sorted_files(catalog: FileSystemCatalog) -> None:
    """A 64 kb sort budget forces the spill path: key sample, range files, one range at a
    time; the result is still one sorted run of the partition's rows."""
    table = unaware(catalog, "spilled", commits=6)
    before = sort_rows(read_all(table))
    files = len(files_in_write_order(table, "a")) + len(files_in_write_order(table, "b"))
    sid = compact(
        catalog,
        "db.spilled",
        order_strategy="order",
        order_by="name",
        options="write-buffer-size=64 kb",
    )
    assert sid is not None
    check_compact_snapshot(table, sid, replaced=files)
    assert sort_rows(read_all(table)) == before
    for dt in ("a", "b"):
        names = pa.concat_tables(
            [file_rows(table, dt, f) for f in files_in_write_order(table, dt)]
        ).column("name")
        assert names.to_pylist() == sorted(names.to_pylist())


def test_sorting_a_sorted_partition_again_keeps_its_rows(catalog: FileSystemCatalog) -> None:
    table = unaware(catalog, "twice", commits=2)
    before = sort_rows(read_all(table))
    assert compact(catalog, "db.twice", order_strategy="order", order_by="id") is not None
    assert compact(catalog, "db.twice", order_strategy="order", order_by="id") is not None
    assert sort_rows(read_all(table)) == before
    check_sorted_by_id(table, "b")


def test_java_refusals_of_sort_compaction(catalog: FileSystemCatalog) -> None:
    unaware(catalog, "refuse", commits=1)
    pk = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"}
    )
    catalog.create_table("db.pk", pk)
    fixed = Schema.from_pyarrow_schema(SCHEMA, options={"bucket": "2", "bucket-key": "id"})
    catalog.create_table("db.fixed", fixed)
    only_unaware = "only support unaware-bucket append-only table yet"
    with pytest.raises(CompactArgumentError, match=only_unaware):
        compact(catalog, "db.pk", order_strategy="order", order_by="x")
    with pytest.raises(CompactArgumentError, match=only_unaware):
        compact(catalog, "db.fixed", order_strategy="zorder", order_by="x,y")
    with pytest.raises(CompactArgumentError, match="should not contain partition cols"):
        compact(catalog, "db.refuse", order_strategy="order", order_by="dt,id")
    with pytest.raises(CompactArgumentError, match="Can't find column nope"):
        compact(catalog, "db.refuse", order_strategy="order", order_by="nope")
    with pytest.raises(CompactArgumentError, match="do not support 'partition_idle_time'"):
        compact(catalog, "db.refuse", "", "order", "id", "", "", "1 d")
    with pytest.raises(CompactArgumentError, match="'order strategy' and 'order by columns' both"):
        compact(catalog, "db.refuse", order_by="id")
