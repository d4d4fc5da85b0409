"""Deletion vectors of append tables: the rows a DELETE or UPDATE marks, and the index files
that hold them.

Mirrors org.apache.paimon.deletionvectors.append.{BaseAppendDeleteFileMaintainer,
AppendDeleteFileMaintainer, BucketedAppendDeleteFileMaintainer} and
PaimonSparkWriter.persistDeletionVectors. A maintainer is restored from the snapshot a
statement or compaction read, per (partition, bucket):

- bucket-unaware tables (``UnawareAppendDvMaintainer``): a partition's vectors lie in several
  index files, each holding some data files' vectors (combined by file name in the index
  manifest). When a data file's vector changes or goes, the index file that held it is
  "touched": it is deleted, and its other vectors are carried over into new files; the new
  vectors go into new files too, rolling at ``deletion-vector.index-file.target-size``.
- fixed-bucket tables (``BucketedAppendDvMaintainer``, over store/'s ``BucketDvMaintainer``): a
  bucket has one index file with all its vectors, rewritten whole when one changes.

``persist`` writes the new index files and returns them with the index files they replace; a
DELETE or UPDATE commits these as the data increment's index changes (an OVERWRITE snapshot
whose conflict check sees them), a compaction as its compact increment's. Unlike Java's
bucketed maintainer, ours also lists the bucket's previous file as deleted: the index manifest
combines both the same way (by partition, bucket and type), and the commit can see which file
the change was based on.

``live_positions`` reads one data file in batches with each row's position in the file, leaving
out the rows its vector already deletes: how a DELETE finds the positions to mark.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_pyspark.io.data_file_reader import iter_live_rows
from paimon_pyspark.spec.commit_message import CommitMessage, DataIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.spec.manifest import IndexFileMeta, IndexManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.deletion_vectors import (
    BucketDvMaintainer,
    DeletionFile,
    DeletionVectorsIndexFile,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataField

I64 = npt.NDArray[np.int64]

POSITION_BATCH_ROWS = 65_536
"""Rows read at a time while looking for the positions to delete."""


@dataclass(frozen=True)
class IndexChanges:
    """The index files a maintainer wrote, and the live ones they replace."""

    added: tuple[IndexFileMeta, ...] = ()
    deleted: tuple[IndexFileMeta, ...] = ()

    def is_empty(self) -> bool:
        return not (self.added or self.deleted)


class AppendDvMaintainer(ABC):
    """The deletion vectors of one (partition, bucket) of an append table while a statement or a
    compaction changes them (Java's BaseAppendDeleteFileMaintainer)."""

    def __init__(self, dv_index: DeletionVectorsIndexFile, partition: bytes, bucket: int) -> None:
        self.dv_index = dv_index
        self.partition = partition
        self.bucket = bucket

    @abstractmethod
    def deletion_vector_of(self, file_name: str) -> DeletionVector | None:
        """The data file's vector as restored (None: no row of it is deleted)."""

    @abstractmethod
    def notify_new_deletion_vector(self, file_name: str, dv: DeletionVector) -> None:
        """``dv`` marks more rows of ``file_name`` deleted; it is merged with the file's vector."""

    @abstractmethod
    def notify_removed_deletion_vector(self, file_name: str) -> None:
        """``file_name`` is gone (a compaction rewrote it): its vector goes with it."""

    @abstractmethod
    def _persist(self, pf: PathFactory, written: list[IndexFileMeta]) -> IndexChanges:
        """Write the changed vectors, appending each new file to ``written`` as it lands."""

    def persist(self, pf: PathFactory) -> IndexChanges:
        """Write what changed as new index files; nothing stays behind if a write fails."""
        written: list[IndexFileMeta] = []
        try:
            return self._persist(pf, written)
        except BaseException:
            self.dv_index.delete_quietly(written)
            raise


class UnawareAppendDvMaintainer(AppendDvMaintainer):
    """A partition of a bucket-unaware append table (Java's AppendDeleteFileMaintainer)."""

    def __init__(
        self,
        dv_index: DeletionVectorsIndexFile,
        partition: bytes,
        entries: Sequence[IndexManifestEntry],
    ) -> None:
        super().__init__(dv_index, partition, 0)
        self._metas = {e.index_file.file_name: e.index_file for e in entries}
        self._files: dict[str, DeletionFile] = {}
        self._index_of: dict[str, str] = {}
        self._remaining: dict[str, dict[str, DeletionFile]] = {}
        for e in entries:
            meta = e.index_file
            path = dv_index.path_of(meta)
            kept = self._remaining.setdefault(meta.file_name, {})
            for r in meta.dv_ranges or ():
                df = DeletionFile(path, r.offset, r.length, r.cardinality)
                self._files[r.data_file_name] = df
                self._index_of[r.data_file_name] = meta.file_name
                kept[r.data_file_name] = df
        self._touched: set[str] = set()
        self._new: dict[str, DeletionVector] = {}

    def deletion_file_of(self, file_name: str) -> DeletionFile | None:
        return self._files.get(file_name)

    def index_file_of(self, file_name: str) -> str | None:
        """The index file holding the data file's vector (Java's getIndexFilePath)."""
        return self._index_of.get(file_name)

    def deletion_vector_of(self, file_name: str) -> DeletionVector | None:
        df = self._files.get(file_name)
        return None if df is None else self.dv_index.read(df)

    def notify_new_deletion_vector(self, file_name: str, dv: DeletionVector) -> None:
        previous = self._take(file_name)
        if previous is not None:
            dv.merge(self.dv_index.read(previous))
        pending = self._new.get(file_name)
        if pending is not None:
            dv.merge(pending)
        self._new[file_name] = dv

    def notify_removed_deletion_vector(self, file_name: str) -> None:
        self._take(file_name)
        self._new.pop(file_name, None)

    def _take(self, file_name: str) -> DeletionFile | None:
        """The file's vector leaves its index file, which is then rewritten without it."""
        index = self._index_of.get(file_name)
        if index is None:
            return None
        self._touched.add(index)
        return self._remaining.get(index, {}).pop(file_name, None)

    def _persist(self, pf: PathFactory, written: list[IndexFileMeta]) -> IndexChanges:
        deleted: list[IndexFileMeta] = []
        for index in sorted(self._touched):
            kept = self._remaining.get(index, {})
            if kept:
                carried = {name: self.dv_index.read(df) for name, df in kept.items()}
                written += self.dv_index.write_with_rolling(carried, pf)
            deleted.append(self._metas[index])
        live = {name: dv for name, dv in self._new.items() if not dv.is_empty()}
        written += self.dv_index.write_with_rolling(live, pf)
        return IndexChanges(tuple(written), tuple(deleted))


class BucketedAppendDvMaintainer(AppendDvMaintainer):
    """A bucket of a fixed-bucket append table (Java's BucketedAppendDeleteFileMaintainer): all
    its vectors in one index file, replaced whole."""

    def __init__(
        self,
        dv_index: DeletionVectorsIndexFile,
        partition: bytes,
        bucket: int,
        previous: Sequence[IndexFileMeta],
        vectors: BucketDvMaintainer | None = None,
    ) -> None:
        """``previous``: the bucket's live index file (Java writes one per bucket) whose
        vectors ``vectors`` holds; read from it when not given."""
        super().__init__(dv_index, partition, bucket)
        if vectors is None:
            vectors = BucketDvMaintainer(dv_index, dv_index.read_bucket(previous))
        self.vectors = vectors
        self._previous = tuple(previous)

    def deletion_vector_of(self, file_name: str) -> DeletionVector | None:
        return self.vectors.deletion_vector_of(file_name)

    def notify_new_deletion_vector(self, file_name: str, dv: DeletionVector) -> None:
        old = self.vectors.vectors.get(file_name)
        if old is not None:
            dv.merge(old)
        self.vectors.vectors[file_name] = dv
        self.vectors.modified = True

    def notify_removed_deletion_vector(self, file_name: str) -> None:
        self.vectors.remove_deletion_vector_of(file_name)

    def _persist(self, pf: PathFactory, written: list[IndexFileMeta]) -> IndexChanges:
        meta = self.vectors.write_index(pf)
        if meta is None:
            return IndexChanges()
        written.append(meta)
        previous, self._previous = self._previous, (meta,)
        return IndexChanges((meta,), previous)


def restore_append_dv(
    store: FileStore,
    snapshot: Snapshot | None,
    partition: bytes,
    bucket: int,
    entries: Sequence[IndexManifestEntry] | None = None,
) -> AppendDvMaintainer:
    """The maintainer of (``partition``, ``bucket``) as of ``snapshot``; ``entries``: the
    snapshot's live deletion-vector index entries, when the caller has read them already."""
    dv_index = dv_index_of(store)
    if entries is None:
        entries = dv_index_entries(index_handler_of(store), snapshot, partition)
    mine = [e for e in entries if e.partition == partition]
    if store.bucket_mode is BucketMode.BUCKET_UNAWARE:
        return UnawareAppendDvMaintainer(dv_index, partition, mine)
    metas = [e.index_file for e in mine if e.bucket == bucket]
    return BucketedAppendDvMaintainer(dv_index, partition, bucket, metas)


def persist_deletion_vectors(
    store: FileStore,
    snapshot: Snapshot | None,
    vectors: Mapping[tuple[bytes, int], Mapping[str, DeletionVector]],
) -> list[CommitMessage]:
    """Merge ``vectors`` (per (partition, bucket): data file name -> newly deleted rows) into
    the vectors of ``snapshot`` and write the index files that change; one message per
    (partition, bucket) with the index files added and deleted (Java's
    PaimonSparkWriter.persistDeletionVectors). On failure no written index file stays."""
    entries = dv_index_entries(index_handler_of(store), snapshot)
    pf = PathFactory(store.path)
    messages: list[CommitMessage] = []
    try:
        for (partition, bucket), files in sorted(vectors.items()):
            maintainer = restore_append_dv(store, snapshot, partition, bucket, entries)
            for name, dv in files.items():
                maintainer.notify_new_deletion_vector(name, dv)
            changes = maintainer.persist(pf)
            if not changes.is_empty():
                increment = DataIncrement(
                    new_index_files=changes.added, deleted_index_files=changes.deleted
                )
                messages.append(CommitMessage(partition, maintainer.bucket, None, increment))
    except BaseException:
        delete_written_index_files(store, messages)
        raise
    return messages


def delete_written_index_files(store: FileStore, messages: Sequence[CommitMessage]) -> None:
    """Remove the index files ``messages`` add (a statement that was not committed)."""
    dv_index = dv_index_of(store)
    for m in messages:
        dv_index.delete_quietly(m.data_increment.new_index_files)
        dv_index.delete_quietly(m.compact_increment.new_index_files)


def live_positions(
    store: FileStore,
    bucket_path: str,
    f: DataFileMeta,
    fields: Sequence[DataField],
    dv: DeletionVector | None,
    batch_rows: int = POSITION_BATCH_ROWS,
) -> Iterator[tuple[pa.Table, I64]]:
    """``fields`` of the rows of ``f`` that ``dv`` does not delete, in file order and in
    batches, each with the rows' positions in the file (Spark's ``_metadata.row_index``)."""
    return iter_live_rows(store, bucket_path, f, fields, False, batch_rows, dv)
