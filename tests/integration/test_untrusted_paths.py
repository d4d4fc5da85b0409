"""Paths a read, a compaction or an index read follows are the table's (issue 44).

A victim sits outside the warehouse (``tmp_path/outside``): a real Parquet file with rows of
the table's schema, and a real hash-index file. A DataSplit built by hand, in-process or
decoded from bytes on a Spark executor, that names it (by a name with ``..``, by a bucket
directory outside the table, by an external path, by a deletion-vector file) is refused with
InvalidSplitError before anything is read. Manifests written with our own manifest writer
(below TableCommit's checks, as another engine could write them) that name it are refused by
compaction planning, by the data-file reader a write's compaction uses, by the hash-index
reader of a dynamic-bucket table and by the deletion-vector reader. Each error names the table
and the path.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from tests.integration.table_helpers import read_all, sort_rows, write_commit
from tests.integration.test_untrusted_messages import (  # the same victim outside the table
    SCHEMA,
    TRAVERSAL,
    rows,
)

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.commit.file_store_commit import new_store_commit
from paimon_pyspark.compact.plan import plan_compaction
from paimon_pyspark.errors import CorruptTableError, ExternalPathError, InvalidSplitError
from paimon_pyspark.io.data_file_reader import read_data_file
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.split_codec import encode_splits
from paimon_pyspark.spark.datasource import PaimonDataSource
from paimon_pyspark.spec.binary_row import EMPTY_ROW
from paimon_pyspark.spec.commit_message import CommitMessage, DataIncrement
from paimon_pyspark.spec.manifest import DeletionVectorRange, IndexFileMeta
from paimon_pyspark.store.deletion_vectors import DeletionFile


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "victim.parquet"
    path.parent.mkdir()
    pq.write_table(rows(666, 667), path)
    return path


def _table(catalog: FileSystemCatalog, victim: Path, **options: str) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(SCHEMA, options={"bucket": "1", **options})
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    write_commit(table, rows(1, 2))
    assert os.path.normpath(os.path.join(table.path, "bucket-0", TRAVERSAL)) == str(victim)
    return table


@pytest.fixture
def table(catalog: FileSystemCatalog, victim: Path) -> FileStoreTable:
    return _table(catalog, victim, **{"bucket-key": "id"})


def assert_refused(raised: pytest.ExceptionInfo[BaseException], *names: str) -> None:
    text = str(raised.value)
    assert "'db.t'" in text, text
    assert any(n in text for n in names), text


# --- forged splits -------------------------------------------------------------------------


def the_split(table: FileStoreTable) -> DataSplit:
    (split,) = table.new_read_builder().new_scan().plan().splits()
    return split


def forged_splits(table: FileStoreTable, victim: Path) -> dict[str, DataSplit]:
    split = the_split(table)
    f = split.files[0]
    size = victim.stat().st_size
    return {
        "a name with ..": split.with_files((replace(f, file_name=TRAVERSAL, file_size=size),)),
        "a bucket directory outside the table": replace(
            split,
            bucket_path=str(victim.parent),
            files=(replace(f, file_name=victim.name, file_size=size, row_count=2),),
        ),
        "an absolute name": split.with_files((replace(f, file_name=str(victim)),)),
        "an external path": split.with_files(
            (replace(f, file_size=size, row_count=2, external_path=f"file:{victim}"),)
        ),
        "a deletion-vector file": replace(
            split, deletion_files=(DeletionFile(str(victim), 1, 4, 1),)
        ),
    }


FORGED = [
    "a name with ..",
    "a bucket directory outside the table",
    "an absolute name",
    "an external path",
    "a deletion-vector file",
]


@pytest.mark.parametrize("how", FORGED)
def test_a_read_refuses_a_hand_built_split_naming_a_file_outside_the_table(
    table: FileStoreTable, victim: Path, how: str
) -> None:
    forged = forged_splits(table, victim)[how]
    read = table.new_read_builder().new_read()

    with pytest.raises(InvalidSplitError) as raised:
        read.to_arrow([forged])

    assert_refused(raised, str(victim), TRAVERSAL, str(victim.parent))
    assert sort_rows(read.to_arrow([the_split(table)])) == sort_rows(rows(1, 2))


def test_a_spark_executor_refuses_a_forged_split_it_decodes(
    spark: SparkSession, table: FileStoreTable, warehouse: str, victim: Path
) -> None:
    """The paimon source's reader, shipped to an executor as Spark ships it, decodes the bytes
    of an input partition there; the task reports what its read gave or raised (one job, no
    retries of a failed task)."""
    source = PaimonDataSource({"warehouse": warehouse, "table": "db.t"})
    reader = source.reader(source.schema())
    good = encode_splits([the_split(table)])
    forged = encode_splits([forged_splits(table, victim)["a name with .."]])

    def read(payload: bytes) -> tuple[int, str]:
        try:
            return os.getpid(), str(sum(b.num_rows for b in reader.batches(payload)))
        except Exception as e:  # the task's outcome, returned to the driver
            return os.getpid(), f"{type(e).__name__}: {e}"

    results = spark.sparkContext.parallelize([good, forged], 2).map(read).collect()

    assert all(pid != os.getpid() for pid, _ in results)  # decoded in Spark's workers
    assert results[0][1] == "2"
    assert results[1][1].startswith("InvalidSplitError: Table 'db.t'"), results[1][1]
    assert TRAVERSAL in results[1][1]


# --- manifests on disk that name a file outside the table ---------------------------------


def store_commit(table: FileStoreTable, *messages: CommitMessage) -> None:
    """Commit below TableCommit's checks: real manifests, written by our manifest writer."""
    new_store_commit(table.store, "other-engine").commit(list(messages))


def outside_file(table: FileStoreTable, victim: Path) -> CommitMessage:
    """A message adding one data file, the victim named from the bucket directory."""
    (base,) = table.store.manifest_io.live_entries(table.snapshot_manager.latest())
    forged = replace(base.file, file_name=TRAVERSAL, file_size=victim.stat().st_size)
    return CommitMessage(EMPTY_ROW, 0, 1, DataIncrement((forged,)))


def test_compaction_planning_refuses_a_manifest_naming_a_file_outside_the_table(
    table: FileStoreTable, victim: Path
) -> None:
    store_commit(table, outside_file(table, victim))

    with pytest.raises(CorruptTableError) as raised:
        plan_compaction(table.store, full=True)

    assert_refused(raised, TRAVERSAL)
    assert pq.read_table(victim).num_rows == 2


def test_the_data_file_reader_refuses_a_manifest_naming_a_file_outside_the_table(
    catalog: FileSystemCatalog, victim: Path
) -> None:
    """A write's compaction restores the bucket's files from the manifest and reads them with
    the data-file reader, below any scan: the victim's rows must not come into the table."""
    table = _table(catalog, victim, **{"bucket-key": "id", "compaction.min.file-num": "2"})
    store_commit(table, outside_file(table, victim))
    (entry,) = (
        e
        for e in table.store.manifest_io.live_entries(table.snapshot_manager.latest())
        if e.file.file_name == TRAVERSAL
    )

    fields = list(table.store.fields)
    with pytest.raises(CorruptTableError) as raised:
        read_data_file(table.store, os.path.join(table.path, "bucket-0"), entry.file, fields)
    assert_refused(raised, TRAVERSAL)
    with pytest.raises(CorruptTableError) as raised:
        write_commit(table, rows(4))
    assert TRAVERSAL in str(raised.value)

    assert table.snapshot_manager.latest_id() == 2
    assert pq.read_table(victim).num_rows == 2


def test_the_hash_index_reader_refuses_an_index_file_outside_the_table(
    catalog: FileSystemCatalog, tmp_path: Path
) -> None:
    """A dynamic-bucket table's write reads the bucket's hash index: an index manifest whose
    HASH file lies outside the table (an external path, and no external roots configured)."""
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": "-1"})
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    write_commit(table, rows(1, 2))
    hashes = tmp_path / "outside" / "hash-index"
    hashes.parent.mkdir()
    hashes.write_bytes(np.arange(8, dtype=">i4").tobytes())
    index = IndexFileMeta("HASH", "index-forged-0", 32, 8, external_path=str(hashes))
    store_commit(
        table,
        CommitMessage(EMPTY_ROW, 0, -1, DataIncrement((), new_index_files=(index,))),
    )

    with pytest.raises(ExternalPathError) as raised:
        write_commit(table, rows(5))

    assert_refused(raised, str(hashes))
    assert table.snapshot_manager.latest_id() == 2
    assert sort_rows(read_all(table)) == sort_rows(rows(1, 2))


def test_the_deletion_vector_reader_refuses_an_index_file_outside_the_table(
    catalog: FileSystemCatalog, victim: Path
) -> None:
    """The same check guards the deletion-vector index files a scan attaches to its splits."""
    options = {"bucket": "1", "deletion-vectors.enabled": "true"}
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    write_commit(table, rows(1, 2))
    (entry,) = table.store.manifest_io.live_entries(table.snapshot_manager.latest())
    vector = DeletionVectorRange(entry.file.file_name, 1, 4, 1)
    index = IndexFileMeta(
        "DELETION_VECTORS", "index-forged-1", 8, 1, (vector,), external_path=str(victim)
    )
    store_commit(table, CommitMessage(EMPTY_ROW, 0, 1, DataIncrement((), new_index_files=(index,))))

    with pytest.raises(ExternalPathError) as raised:
        read_all(table)

    assert_refused(raised, str(victim))
