"""``rewrite_file_index`` (Java's RewriteFileIndexProcedure): files written before the table
asked for file indexes get them, in this process, as a Spark job, through ``CALL`` and the CLI.

Every file holds ids 0 and 1000, so min/max stats keep every file for ``id = k``: a file left
out of a plan is left out by the index the procedure built. Files a lookup skips are
overwritten with garbage before the lookup reads, so they were not opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from tests.cli.helpers import run_json

from paimon_pyspark import Schema
from paimon_pyspark.catalog import FileSystemCatalog
from paimon_pyspark.errors import CompactArgumentError
from paimon_pyspark.procedures import expire_snapshots, rewrite_file_index
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.spark import procedures as spark_procedures
from paimon_pyspark.spark import read as spark_read
from paimon_pyspark.spark import register, sql
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.file_index.format import read_index_file
from paimon_pyspark.store.schema_change import SchemaChange
from paimon_pyspark.table.file_store_table import FileStoreTable

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("name", pa.string())])
BLOOM = {"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.items": "200"}


def make(catalog: FileSystemCatalog, name: str = "db.t", per_partition: int = 3) -> None:
    """A table partitioned by ``dt`` ('a', 'b') with no index options: file ``i`` of a
    partition holds ids 100*i+1 .. 100*i+40 and the ids 0 and 1000."""
    catalog.create_table(name, Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    table = catalog.get_table(name)
    for i in range(per_partition):
        ids = [0, *range(100 * i + 1, 100 * i + 41), 1000]
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            for dt in ("a", "b"):
                rows = {"dt": [dt] * len(ids), "id": ids, "name": [f"{dt}{x}" for x in ids]}
                write.write_arrow(pa.table(rows, SCHEMA))
            builder.new_commit().commit(write.prepare_commit())


def add_index(catalog: FileSystemCatalog, threshold: str, name: str = "db.t") -> FileStoreTable:
    changes = [SchemaChange.set_option(k, v) for k, v in BLOOM.items()]
    changes.append(SchemaChange.set_option("file-index.in-manifest-threshold", threshold))
    catalog.alter_table(name, changes)
    return catalog.get_table(name)


def files(table: FileStoreTable) -> dict[str, tuple[str, DataFileMeta]]:
    """File name -> (bucket directory, meta) of every data file of the latest snapshot."""
    rb = table.new_read_builder()
    return {f.file_name: (s.bucket_path, f) for s in rb.new_scan().plan().splits() for f in s.files}


def planned(table: FileStoreTable, where: str) -> set[str]:
    rb = table.new_read_builder().with_filter(parse_predicate(where, table.fields, table.name))
    return {f.file_name for s in rb.new_scan().plan().splits() for f in s.files}


def rows(table: FileStoreTable, where: str | None = None) -> list[dict[str, Any]]:
    rb = table.new_read_builder()
    if where is not None:
        rb = rb.with_filter(parse_predicate(where, table.fields, table.name))
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(got, key=lambda r: (r["dt"], r["id"]))


def index_columns(bucket_path: str, f: DataFileMeta) -> set[str]:
    if f.embedded_index is not None:
        return set(read_index_file(f.embedded_index).read_all())
    (name,) = [x for x in f.extra_files if x.endswith(".index")]
    return set(read_index_file(Path(bucket_path, name).read_bytes()).read_all())


def damage_skipped(table: FileStoreTable, where: str) -> int:
    every = files(table)
    skipped = set(every) - planned(table, where)
    for name in skipped:
        bucket_path, _ = every[name]
        Path(bucket_path, name).write_bytes(b"garbage, not parquet")
    return len(skipped)


@pytest.mark.parametrize("threshold", ["1 mb", "1 b"])
def test_rewrite_indexes_old_files_and_lookups_skip_by_it(
    catalog: FileSystemCatalog, threshold: str
) -> None:
    make(catalog)
    before = rows(catalog.get_table("db.t"))
    table = add_index(catalog, threshold)
    assert len(planned(table, "id = 215")) == 6  # no file has an index yet
    old = files(table)

    result = rewrite_file_index(catalog, "db.t")

    table = catalog.get_table("db.t")
    latest = table.snapshot_manager.latest()
    assert latest is not None and latest.commit_kind == "COMPACT"
    assert result == (2, 6, latest.id)
    new = files(table)
    assert set(new) == set(old)  # the same data files, with their indexes
    for name, (bucket_path, f) in new.items():
        assert index_columns(bucket_path, f) == {"id"}
        if threshold == "1 b":
            assert f.embedded_index is None and f.extra_files == (name + ".index",)
        else:
            assert f.embedded_index is not None and f.extra_files == ()
        assert (f.file_size, f.row_count) == (old[name][1].file_size, old[name][1].row_count)
    assert rows(table) == before
    kept = planned(table, "id = 215")
    assert len(kept) == 2  # the file with 201..240 of each partition
    assert damage_skipped(table, "id = 215") == 4
    assert rows(table, "id = 215") == [r for r in before if r["id"] == 215]
    assert rows(table, "id IN (215, 9999)") == [r for r in before if r["id"] == 215]


def test_a_second_rewrite_changes_nothing_but_the_index_file_names(
    catalog: FileSystemCatalog,
) -> None:
    make(catalog, per_partition=2)
    add_index(catalog, "1 b")
    rewrite_file_index(catalog, "db.t")
    first = files(catalog.get_table("db.t"))
    again = rewrite_file_index(catalog, "db.t")
    table = catalog.get_table("db.t")
    second = files(table)
    assert again.written_indexes == 4 and set(second) == set(first)
    for name, (bucket_path, f) in second.items():
        # Java's naming of a rewritten .index: <data file>-1.index after <data file>.index
        assert f.extra_files == (name + "-1.index",)
        old = Path(bucket_path, name + ".index")
        assert Path(bucket_path, name + "-1.index").read_bytes() == old.read_bytes()
        assert old.exists()  # an older snapshot still reads it
    assert planned(table, "id = 115") == {n for n in second if "115" in str(rows_of(table, n))}
    # expiry keeps them as it keeps their data file (Java leaves them to remove_orphan_files)
    assert expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1) > 0
    assert all(Path(b, n + ".index").exists() for n, (b, _) in second.items())
    assert rows(catalog.get_table("db.t"), "id = 115") == rows(table, "id = 115")


def rows_of(table: FileStoreTable, name: str) -> list[int]:
    rb = table.new_read_builder()
    for s in rb.new_scan().plan().splits():
        for f in s.files:
            if f.file_name == name:
                return list(rb.new_read().to_arrow([s.with_files([f])]).column("id").to_pylist())
    return []


def test_partitions_and_where_choose_the_files(catalog: FileSystemCatalog) -> None:
    make(catalog, per_partition=2)
    table = add_index(catalog, "1 mb")

    def indexed() -> dict[str, bool]:
        out: dict[str, bool] = {}
        rb = catalog.get_table("db.t").new_read_builder()
        for s in rb.new_scan().plan().splits():
            for f in s.files:
                out[f"{s.partition_values[0]}/{f.file_name}"] = f.embedded_index is not None
        return out

    assert rewrite_file_index(catalog, "db.t", "dt=a")[:2] == (1, 2)  # Flink's positional
    assert {k: v for k, v in indexed().items() if v} == {
        k: True for k in indexed() if k.startswith("a/")
    }
    # Spark's positional order (table, where): a SQL condition is no partition spec
    assert rewrite_file_index(catalog, "db.t", "dt = 'b'")[:2] == (1, 2)
    assert all(indexed().values())
    assert rewrite_file_index(catalog, "db.t", partitions="dt=zzz") == (0, 0, None)
    assert rewrite_file_index(catalog, "db.t", where="dt > 'b'") == (0, 0, None)
    with pytest.raises(CompactArgumentError, match="partitions and where"):
        rewrite_file_index(catalog, "db.t", "dt=a", "dt = 'a'")
    with pytest.raises(CompactArgumentError, match="not partition keys"):
        rewrite_file_index(catalog, "db.t", partitions="id=1")
    assert len(planned(table, "id = 15")) == 2


def test_options_changed_since_keep_configured_old_indexes_and_drop_the_rest(
    catalog: FileSystemCatalog,
) -> None:
    make(catalog, per_partition=1)
    changes = [
        SchemaChange.set_option("file-index.bloom-filter.columns", "id,name"),
        SchemaChange.set_option("file-index.in-manifest-threshold", "1 b"),
    ]
    catalog.alter_table("db.t", changes)
    rewrite_file_index(catalog, "db.t")
    for bucket_path, f in files(catalog.get_table("db.t")).values():
        assert index_columns(bucket_path, f) == {"id", "name"}
    # name is no longer configured: its old index goes, id's is rebuilt
    catalog.alter_table("db.t", [SchemaChange.set_option("file-index.bloom-filter.columns", "id")])
    rewrite_file_index(catalog, "db.t")
    table = catalog.get_table("db.t")
    for bucket_path, f in files(table).values():
        assert index_columns(bucket_path, f) == {"id"}
    assert len(planned(table, "id = 500")) == 0
    # no index options: Java would drop the index files, putting each file back in the state
    # its first rewrite DELETEd (which Java's scan then drops): the files stay as they are
    catalog.alter_table("db.t", [SchemaChange.remove_option("file-index.bloom-filter.columns")])
    latest = table.snapshot_manager.latest()
    kept = files(table)
    assert rewrite_file_index(catalog, "db.t") == (2, 2, None)
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.latest() == latest and files(table) == kept


def test_a_second_rewrite_of_embedded_indexes_commits_nothing(catalog: FileSystemCatalog) -> None:
    make(catalog, per_partition=2)
    add_index(catalog, "1 mb")
    first = rewrite_file_index(catalog, "db.t")
    assert first.snapshot_id is not None
    table = catalog.get_table("db.t")
    indexed = files(table)
    # the same bytes again: an ADD of an identical entry would make Java's scan drop the file
    assert rewrite_file_index(catalog, "db.t") == (2, 4, None)
    table = catalog.get_table("db.t")
    latest = table.snapshot_manager.latest()
    assert latest is not None and latest.id == first.snapshot_id and files(table) == indexed
    # other options: new bytes, committed
    catalog.alter_table("db.t", [SchemaChange.set_option("file-index.bloom-filter.id.items", "9")])
    assert rewrite_file_index(catalog, "db.t").snapshot_id == first.snapshot_id + 1


def test_a_renamed_column_is_indexed_under_the_name_its_files_know(
    catalog: FileSystemCatalog,
) -> None:
    make(catalog, per_partition=2)
    catalog.alter_table("db.t", [SchemaChange.rename_column("id", "ident")])
    changes = [SchemaChange.set_option("file-index.bloom-filter.columns", "ident")]
    catalog.alter_table("db.t", changes)
    rewrite_file_index(catalog, "db.t")
    table = catalog.get_table("db.t")
    for bucket_path, f in files(table).values():
        assert index_columns(bucket_path, f) == {"id"}  # the files' own name, as Java's
    assert len(planned(table, "ident = 115")) == 2


def test_primary_key_table_with_deletion_vectors(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
    options = {"bucket": "1", "deletion-vectors.enabled": "true"}
    catalog.create_table(
        "db.pk", Schema.from_pyarrow_schema(schema, primary_keys=["id"], options=options)
    )
    table = catalog.get_table("db.pk")
    for i in range(3):
        ids = list(range(100 * i, 100 * i + 40))
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.table({"id": ids, "name": [f"n{x}" for x in ids]}, schema))
            builder.new_commit().commit(write.prepare_commit())
    catalog.alter_table(
        "db.pk", [SchemaChange.set_option("file-index.bloom-filter.columns", "name")]
    )
    table = catalog.get_table("db.pk")
    before = (
        table.new_read_builder()
        .new_read()
        .to_arrow(table.new_read_builder().new_scan().plan().splits())
    )
    assert rewrite_file_index(catalog, "db.pk").written_indexes == len(files(table))
    table = catalog.get_table("db.pk")
    rb = table.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).sort_by("id") == before.sort_by(
        "id"
    )
    rb = table.new_read_builder().with_filter(
        parse_predicate("name = 'n115'", table.fields, table.name)
    )
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    assert got.to_pylist() == [{"id": 115, "name": "n115"}]
    assert sum(len(s.files) for s in rb.new_scan().plan().splits()) == 1


# --- Spark: the job, CALL and the CLI --------------------------------------------------------


@pytest.mark.slow
def test_spark_job_call_and_cli(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    warehouse: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make(catalog, "db.t", per_partition=2)
    before = rows(catalog.get_table("db.t"))
    add_index(catalog, "1 b")
    result = spark_procedures.rewrite_file_index(spark, warehouse, "db.t", partitions="dt=a")
    assert result[:2] == (1, 2)
    register(spark, warehouse=warehouse)
    try:
        got = sql(spark, "CALL sys.rewrite_file_index(`table` => 'db.t', `where` => \"dt = 'b'\")")
        assert got.columns == ["written_partitions", "written_indexes"]
        assert [tuple(r) for r in got.collect()] == [(1, 2)]
    finally:
        sql(spark, "USE default").collect()
    table = catalog.get_table("db.t")
    assert all(len(f.extra_files) == 1 for _, f in files(table).values())
    assert damage_skipped(table, "id = 115") == 2
    got_rows = spark_read(spark, warehouse, "db.t", where="id = 115").collect()
    assert sorted(tuple(r) for r in got_rows) == [
        (r["dt"], r["id"], r["name"]) for r in before if r["id"] == 115
    ]

    make(catalog, "db.c", per_partition=1)
    add_index(catalog, "1 mb", "db.c")
    argv = ["rewrite-file-index", "--warehouse", warehouse, "--table", "db.c"]
    code, doc, err = run_json(argv, capsys)
    assert (code, err) == (0, "")
    latest = catalog.get_table("db.c").snapshot_manager.latest()
    assert latest is not None and latest.commit_kind == "COMPACT"
    assert doc["procedure"] == "rewrite_file_index"
    assert doc["result"]["written_partitions"] == 2 and doc["result"]["written_indexes"] == 2
    assert doc["result"]["snapshot_id"] == latest.id
