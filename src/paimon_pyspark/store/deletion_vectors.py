"""Deletion-vector index files of a table: find a data file's vector, read it, write new ones.

Mirrors org.apache.paimon.deletionvectors.{DeletionVectorsIndexFile,
DeletionVectorIndexFileWriter} and org.apache.paimon.table.source.DeletionFile. A snapshot's
index manifest lists, per (partition, bucket), the ``DELETION_VECTORS`` index files that hold
the live vectors of that bucket's data files (an unaware-bucket append table has several files
per partition, bucket 0). ``DeletionFile`` says where one data file's vector sits: the index
file's path, the offset and recorded length of the vector in it, and its cardinality. A split
carries these, one per data file (None where a file has no vector), so a reader in another
process needs nothing else.

A bucket's vectors are rewritten whole when they change: Java's writer of a bucketed table
writes all of a bucket's vectors into one new file (``writeSingleFile``), an unaware append
table rolls to a new file past ``deletion-vector.index-file.target-size``
(``writeWithRolling``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy.typing as npt

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.deletion_vector import (
    DeletionVector,
    check_index_version,
    index_file_bytes,
)
from paimon_pyspark.spec.manifest import IndexFileMeta, IndexManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.external_paths import ExternalPaths
from paimon_pyspark.store.index_io import DELETION_VECTORS_INDEX, IndexFileHandler
from paimon_pyspark.store.path_checks import index_file_path
from paimon_pyspark.store.paths import PathFactory

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


@dataclass(frozen=True)
class DeletionFile:
    """Where one data file's deletion vector is (Java's DeletionFile)."""

    path: str
    offset: int
    length: int
    cardinality: int | None = None


def dv_index_of(store: FileStore) -> DeletionVectorsIndexFile:
    """The deletion-vector index files of ``store``, with its options."""
    o = store.options
    return DeletionVectorsIndexFile(
        store.file_io,
        store.path,
        o.deletion_vector_index_file_target_size,
        o.deletion_vectors_bitmap64,
        store.external_paths,
        store.name,
    )


def index_handler_of(store: FileStore) -> IndexFileHandler:
    """The index files of ``store``, read only from its ``index/`` and external roots."""
    return IndexFileHandler(
        store.file_io, store.path, store.manifest_io.codec, store.external_paths, store.name
    )


class DeletionVectorsIndexFile:
    """Reads and writes the ``DELETION_VECTORS`` index files under ``<table>/index``."""

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        target_size: int = 2 * 1024 * 1024,
        bitmap64: bool = False,
        external_paths: ExternalPaths | None = None,
        table: str = "",
    ) -> None:
        """``external_paths``, ``table``: as IndexFileHandler's (``dv_index_of`` gives them)."""
        self.file_io = file_io
        self.external_paths = external_paths
        self.table = table
        self.index_dir = os.path.join(table_path, "index")
        self.target_size = target_size
        self.bitmap64 = bitmap64
        self._cache: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def path_of(self, meta: IndexFileMeta) -> str:
        """Where ``meta`` is read: checked as every index file is (store/path_checks.py)."""
        return index_file_path(self.index_dir, self.external_paths, meta, self.table)

    # --- reading -----------------------------------------------------------------------------

    def _bytes(self, path: str) -> bytes:
        """An index file's bytes, read once per instance (a read's splits share its files)."""
        with self._lock:
            data = self._cache.get(path)
        if data is None:
            data = self.file_io.read_bytes(path)
            check_index_version(data, path)
            with self._lock:
                self._cache[path] = data
        return data

    def read(self, deletion_file: DeletionFile) -> DeletionVector:
        """The vector ``deletion_file`` points at (Java's ``DeletionVector.read``)."""
        data = self._bytes(deletion_file.path)
        if deletion_file.offset < 1 or deletion_file.offset >= len(data):
            raise CorruptTableError(
                f"Deletion-vector index file {deletion_file.path} has {len(data)} bytes; a "
                f"vector at offset {deletion_file.offset} is outside it."
            )
        return DeletionVector.deserialize(
            memoryview(data)[deletion_file.offset :], deletion_file.length, deletion_file.path
        )

    def read_all(self, meta: IndexFileMeta) -> dict[str, DeletionVector]:
        """Every vector of one index file by data file name."""
        path = self.path_of(meta)
        return {
            r.data_file_name: self.read(DeletionFile(path, r.offset, r.length, r.cardinality))
            for r in meta.dv_ranges or ()
        }

    def read_bucket(self, metas: Iterable[IndexFileMeta]) -> dict[str, DeletionVector]:
        out: dict[str, DeletionVector] = {}
        for meta in metas:
            out.update(self.read_all(meta))
        return out

    # --- writing -----------------------------------------------------------------------------

    def write_single(self, vectors: Mapping[str, DeletionVector], pf: PathFactory) -> IndexFileMeta:
        """All of ``vectors`` in one new file (Java's ``writeSingleFile``)."""
        return self._write(list(vectors.items()), pf)

    def write_with_rolling(
        self, vectors: Mapping[str, DeletionVector], pf: PathFactory
    ) -> list[IndexFileMeta]:
        """``vectors`` in files that roll once one passes the target size (``writeWithRolling``:
        the vector that crosses it is the file's last). Each vector is serialized once."""
        out: list[IndexFileMeta] = []
        pending: list[tuple[str, bytes, int, int]] = []
        size = 1
        for name, dv in vectors.items():
            data, length = dv.serialize()
            pending.append((name, data, length, dv.cardinality))
            size += len(data)
            if size > self.target_size:
                out.append(self._write_serialized(pending, pf))
                pending, size = [], 1
        if pending:
            out.append(self._write_serialized(pending, pf))
        return out

    def _write(self, items: Sequence[tuple[str, DeletionVector]], pf: PathFactory) -> IndexFileMeta:
        serialized = []
        for name, dv in items:
            data, length = dv.serialize()
            serialized.append((name, data, length, dv.cardinality))
        return self._write_serialized(serialized, pf)

    def _write_serialized(
        self, items: Sequence[tuple[str, bytes, int, int]], pf: PathFactory
    ) -> IndexFileMeta:
        """One index file of already serialized vectors (name, bytes, recorded length,
        cardinality), as ``encode_index_file`` lays them out."""
        data, ranges = index_file_bytes(items)
        name = pf.new_index_file()
        self.file_io.mkdirs(self.index_dir)
        self.file_io.write_bytes(os.path.join(self.index_dir, name), data)
        return IndexFileMeta(DELETION_VECTORS_INDEX, name, len(data), len(ranges), ranges)

    def delete_quietly(self, metas: Iterable[IndexFileMeta]) -> None:
        for m in metas:
            self.file_io.delete_quietly(self.path_of(m))


def dv_index_entries(
    handler: IndexFileHandler, snapshot: Snapshot | None, partition: bytes | None = None
) -> list[IndexManifestEntry]:
    """The live ``DELETION_VECTORS`` index entries of ``snapshot`` (of one partition if given)."""
    return handler.scan(snapshot, DELETION_VECTORS_INDEX, partition)


def deletion_files(
    dv_index: DeletionVectorsIndexFile, entries: Iterable[IndexManifestEntry]
) -> dict[tuple[bytes, int], dict[str, DeletionFile]]:
    """Per (partition, bucket): data file name -> where its vector is (Java's
    SnapshotReaderImpl.scanDvIndex)."""
    out: dict[tuple[bytes, int], dict[str, DeletionFile]] = {}
    for e in entries:
        meta = e.index_file
        if meta.index_type != DELETION_VECTORS_INDEX:
            continue
        path = dv_index.path_of(meta)
        files = out.setdefault((bytes(e.partition), e.bucket), {})
        for r in meta.dv_ranges or ():
            files[r.data_file_name] = DeletionFile(path, r.offset, r.length, r.cardinality)
    return out


class BucketDvMaintainer:
    """The deletion vectors of one (partition, bucket) while a writer or compaction changes
    them (Java's BucketedDvMaintainer): restored from the snapshot the writer started on,
    changed in memory, written as one new index file of all the bucket's vectors when asked.
    The commit's index manifest then replaces the bucket's previous file with it."""

    def __init__(
        self, dv_index: DeletionVectorsIndexFile, vectors: Mapping[str, DeletionVector]
    ) -> None:
        self.dv_index = dv_index
        self.vectors: dict[str, DeletionVector] = dict(vectors)
        self.modified = False

    @classmethod
    def restore(
        cls,
        dv_index: DeletionVectorsIndexFile,
        handler: IndexFileHandler,
        snapshot: Snapshot | None,
        partition: bytes,
        bucket: int,
    ) -> BucketDvMaintainer:
        metas = [
            e.index_file
            for e in dv_index_entries(handler, snapshot, partition)
            if e.bucket == bucket
        ]
        return cls(dv_index, dv_index.read_bucket(metas))

    def notify_new_deletion(self, file_name: str, positions: npt.ArrayLike) -> None:
        """Mark ``positions`` (row numbers) of data file ``file_name`` deleted."""
        dv = self.vectors.get(file_name)
        if dv is None:
            dv = self.vectors[file_name] = DeletionVector(self.dv_index.bitmap64)
        before = dv.cardinality
        dv.delete(positions)
        self.modified |= dv.cardinality != before

    def remove_deletion_vector_of(self, file_name: str) -> None:
        """The file is gone (rewritten by a compaction): its vector goes with it."""
        if self.vectors.pop(file_name, None) is not None:
            self.modified = True

    def deletion_vector_of(self, file_name: str) -> DeletionVector | None:
        return self.vectors.get(file_name)

    def write_index(self, pf: PathFactory) -> IndexFileMeta | None:
        """A new index file of every vector of the bucket if any changed (an empty one when the
        last vector went, so it replaces the old file); None when nothing changed."""
        if not self.modified:
            return None
        self.modified = False
        live = {name: dv for name, dv in self.vectors.items() if not dv.is_empty()}
        return self.dv_index.write_single(live, pf)
