"""``FileStoreTable.delete(predicate)`` on an append table with deletion vectors: the matching
rows are marked in the vectors of their files, no data file is rewritten.

Mirrors what Java's DeleteFromPaimonTableCommand does for such a table, with a Paimon
predicate instead of Spark: the files of the latest snapshot that the predicate may match
(partition and value-stats pruning of the scan) are read, the predicate is evaluated on each
batch of rows, and the positions of the matching rows that no vector deletes yet become new
vectors, merged with the files' old ones and written as index files
(write/append_dv.py, Java's persistDeletionVectors). The commit carries the index files added
and replaced: an OVERWRITE snapshot, whose conflict check fails if a concurrent commit removed
a file or replaced an index file the delete builds on. Without a predicate the table is
truncated (Java's ``truncateTable``), as the SQL door does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_pyspark.errors import CommitOutcomeUnknownError
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.deletion_vectors import (
    DeletionFile,
    DeletionVectorsIndexFile,
    deletion_files,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import DataField
from paimon_pyspark.write.append_dv import (
    delete_written_index_files,
    live_positions,
    persist_deletion_vectors,
)

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable

Deletions = dict[tuple[bytes, int], dict[str, DeletionVector]]
"""Per (partition, bucket): data file name -> the rows newly deleted in it."""


def delete_rows(
    table: FileStoreTable, predicate: Predicate | None, commit_user: str | None = None
) -> int:
    """Mark the live rows matching ``predicate`` deleted (truncate for None), in one snapshot;
    the number of rows deleted."""
    store = table.store
    snapshot = store.snapshot_manager.latest()
    if snapshot is None:
        return 0
    builder = table.new_batch_write_builder(commit_user)
    if predicate is None:
        count = live_row_count(store, snapshot)
        if count:
            builder.new_commit().truncate_table()
        return count
    vectors, count = find_deletions(store, snapshot, predicate)
    if not count:
        return 0
    messages = persist_deletion_vectors(store, snapshot, vectors)
    try:
        builder.new_commit().commit(messages)
    except CommitOutcomeUnknownError:
        raise
    except BaseException:
        delete_written_index_files(store, messages)
        raise
    return count


def find_deletions(
    store: FileStore, snapshot: Snapshot, predicate: Predicate
) -> tuple[Deletions, int]:
    """The rows of ``snapshot`` that ``predicate`` matches and no vector deletes yet, as new
    vectors per file, and how many rows they mark. Files are read concurrently, only the
    predicate's columns, a batch at a time."""
    pinned = store.copy({"scan.snapshot-id": str(snapshot.id)})
    splits = ReadBuilder(pinned).with_filter(predicate).new_scan().plan().splits()
    work = [(s, f) for s in splits for f in s.files]
    if not work:
        return {}, 0
    dv_index = dv_index_of(store)
    where = deletion_files(dv_index, dv_index_entries(index_handler_of(store), snapshot))
    names = set(predicate.fields())
    fields = [f for f in store.fields if f.name in names]
    bitmap64 = store.options.deletion_vectors_bitmap64

    def one(item: tuple[DataSplit, DataFileMeta]) -> DeletionVector:
        split, f = item
        found = where.get((bytes(split.partition), split.bucket), {}).get(f.file_name)
        old = dv_index.read(found) if found is not None else None
        return matching_rows(store, split.bucket_path, f, fields, predicate, old, bitmap64)

    threads = max(1, min(len(work), os.cpu_count() or 1))
    with ThreadPoolExecutor(threads, thread_name_prefix="paimon-delete") as pool:
        found_vectors = list(pool.map(one, work))
    out: Deletions = {}
    count = 0
    for (split, f), dv in zip(work, found_vectors, strict=True):
        if dv.is_empty():
            continue
        out.setdefault((bytes(split.partition), split.bucket), {})[f.file_name] = dv
        count += dv.cardinality
    return out, count


def matching_rows(
    store: FileStore,
    bucket_path: str,
    f: DataFileMeta,
    fields: Sequence[DataField],
    predicate: Predicate,
    deleted: DeletionVector | None,
    bitmap64: bool,
) -> DeletionVector:
    """The positions in ``f`` of the rows ``predicate`` matches (a NULL verdict does not) that
    ``deleted`` does not delete yet."""
    expression = predicate.to_arrow_expression()
    position = "_paimon_row_position"
    while any(x.name == position for x in fields):
        position += "_"
    out = DeletionVector(bitmap64)
    for rows, positions in live_positions(store, bucket_path, f, fields, deleted):
        if rows.num_rows == 0:
            continue
        hit = rows.append_column(position, pa.array(positions)).filter(expression)
        if hit.num_rows:
            out.delete(np.asarray(hit.column(position).to_numpy(), dtype=np.int64))
    return out


def live_row_count(store: FileStore, snapshot: Snapshot) -> int:
    """The rows of ``snapshot`` that no deletion vector deletes."""
    dv_index = dv_index_of(store)
    where = deletion_files(dv_index, dv_index_entries(index_handler_of(store), snapshot))
    total = 0
    for e in store.manifest_io.live_entries(snapshot):
        total += e.file.row_count
        found = where.get((bytes(e.partition), e.bucket), {}).get(e.file.file_name)
        if found is not None:
            total -= _cardinality(dv_index, found)
    return total


def _cardinality(dv_index: DeletionVectorsIndexFile, found: DeletionFile) -> int:
    if found.cardinality is not None:
        return found.cardinality
    return dv_index.read(found).cardinality
