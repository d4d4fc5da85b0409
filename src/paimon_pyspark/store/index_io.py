"""A table's index files (``index/``) and index manifests: read, write, combine.

Mirrors org.apache.paimon.index.{IndexFileHandler, HashIndexFile}, IntFileUtils and
org.apache.paimon.manifest.IndexManifestFileHandler. A HASH index file holds the key hashes of
one (partition, bucket) of a dynamic-bucket table as big-endian int32s, no header; the index
manifest (``manifest/index-manifest-*``, Avro) lists the live index files of a snapshot, only
ADD entries. A commit combines the previous manifest with its ADD/DELETE changes: HASH and
DELETION_VECTORS entries are keyed by (partition, bucket, type), deletes applied first, then
adds replace; other index types, and the DELETION_VECTORS files of an unaware-bucket table
(several per partition, each holding some data files' vectors), are keyed by file name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.manifest import IndexFileMeta, IndexManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.external_paths import ExternalPaths
from paimon_pyspark.store.path_checks import index_file_path
from paimon_pyspark.store.paths import PathFactory

HASH_INDEX = "HASH"
DELETION_VECTORS_INDEX = "DELETION_VECTORS"
_BUCKETED_TYPES = (HASH_INDEX, DELETION_VECTORS_INDEX)

I32 = npt.NDArray[np.int32]


class IndexFileHandler:
    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        codec: str,
        external_paths: ExternalPaths | None = None,
        table: str = "",
    ) -> None:
        """``codec``: the Avro codec of manifests (``ManifestIO.codec``); ``external_paths``:
        the table's roots, the only places outside ``index/`` an index file is read from;
        ``table``: its name, for errors (``index_handler_of`` gives both)."""
        self.file_io = file_io
        self.index_dir = os.path.join(table_path, "index")
        self.manifest_dir = os.path.join(table_path, "manifest")
        self.codec = codec
        self.external_paths = external_paths
        self.table = table

    # --- index manifests ---------------------------------------------------------------------

    def read_manifest(self, name: str) -> list[IndexManifestEntry]:
        path = os.path.join(self.manifest_dir, name)
        return mf.decode_index_manifest(self.file_io.read_bytes(path), path)

    def scan(
        self,
        snapshot: Snapshot | None,
        index_type: str,
        partition: bytes | None = None,
    ) -> list[IndexManifestEntry]:
        """The live index files of ``index_type`` in ``snapshot`` (of one partition if given)."""
        if snapshot is None or not snapshot.index_manifest:
            return []
        return [
            e
            for e in self.read_manifest(snapshot.index_manifest)
            if e.index_file.index_type == index_type
            and (partition is None or e.partition == partition)
        ]

    def write_manifest(
        self,
        previous: str | None,
        changes: Sequence[IndexManifestEntry],
        pf: PathFactory,
        unaware: bool = False,
    ) -> str:
        """Combine ``previous`` with ``changes`` and write the result as a new index manifest;
        ``unaware``: the table is an unaware-bucket append table."""
        entries = self.read_manifest(previous) if previous else []
        for e in entries:
            if e.kind != mf.KIND_ADD:
                raise CorruptTableError(
                    f"Index manifest {previous} holds a DELETE entry for {e.index_file.file_name}."
                )
        combined = combine_index_entries(entries, changes, unaware)
        name = pf.new_index_manifest()
        self.file_io.mkdirs(self.manifest_dir)
        data = mf.encode_index_manifest(combined, self.codec)
        self.file_io.write_bytes(os.path.join(self.manifest_dir, name), data)
        return name

    # --- hash index files --------------------------------------------------------------------

    def read_hash(self, meta: IndexFileMeta) -> I32:
        """The key hashes of one HASH index file (big-endian int32s)."""
        path = index_file_path(self.index_dir, self.external_paths, meta, self.table)
        data = self.file_io.read_bytes(path)
        if len(data) % 4:
            raise CorruptTableError(f"Hash index file {path} has {len(data)} bytes, not int32s.")
        return np.frombuffer(data, dtype=">i4").astype(np.int32)

    def write_hash(self, hashes: I32, pf: PathFactory) -> IndexFileMeta:
        """Write ``hashes`` as a new HASH index file; Java's HashIndexFile.write."""
        name = pf.new_index_file()
        data = np.asarray(hashes, dtype=np.int32).astype(">i4").tobytes()
        self.file_io.mkdirs(self.index_dir)
        self.file_io.write_bytes(os.path.join(self.index_dir, name), data)
        return IndexFileMeta(HASH_INDEX, name, len(data), len(hashes))

    def delete_quietly(self, metas: Iterable[IndexFileMeta]) -> None:
        for m in metas:
            self.file_io.delete_quietly(
                m.external_path or os.path.join(self.index_dir, m.file_name)
            )


def combine_index_entries(
    previous: Sequence[IndexManifestEntry],
    changes: Sequence[IndexManifestEntry],
    unaware: bool = False,
) -> list[IndexManifestEntry]:
    """Java's IndexManifestFileHandler combiners (bucketed for HASH/DV, file name otherwise;
    ``unaware``: DV by file name too, and each data file's vector in one live file only)."""

    def bucketed(t: str) -> bool:
        return t in _BUCKETED_TYPES and not (unaware and t == DELETION_VECTORS_INDEX)

    def key(e: IndexManifestEntry) -> tuple[object, ...]:
        t = e.index_file.index_type
        if bucketed(t):
            return (t, e.partition, e.bucket)
        return (t, e.index_file.file_name)

    if unaware:
        _check_global_dv(previous, changes)

    live = {key(e): e for e in previous}
    for e in changes:
        if e.kind == mf.KIND_DELETE:
            live.pop(key(e), None)
    for e in changes:
        if e.kind == mf.KIND_ADD:
            live[key(e)] = e
    return list(live.values())


def _check_global_dv(
    previous: Sequence[IndexManifestEntry], changes: Sequence[IndexManifestEntry]
) -> None:
    """Java's GlobalCombiner checks for the vectors of an unaware-bucket table: an index file is
    added once and deleted only while live, and a data file has its vector in one live file
    (deletes are taken first, as the combine applies them)."""
    files = {
        e.index_file.file_name
        for e in previous
        if e.index_file.index_type == DELETION_VECTORS_INDEX
    }
    covered = {
        r.data_file_name
        for e in previous
        if e.index_file.index_type == DELETION_VECTORS_INDEX
        for r in e.index_file.dv_ranges or ()
    }
    deletes_first = sorted(changes, key=lambda e: e.kind != mf.KIND_DELETE)
    for e in deletes_first:
        meta = e.index_file
        if meta.index_type != DELETION_VECTORS_INDEX:
            continue
        names = [r.data_file_name for r in meta.dv_ranges or ()]
        if e.kind == mf.KIND_ADD:
            if meta.file_name in files:
                raise CorruptTableError(
                    f"Trying to add file {meta.file_name} which is already added."
                )
            for n in names:
                if n in covered:
                    raise CorruptTableError(
                        f"Trying to add dv for data file {n} which is already added."
                    )
                covered.add(n)
            files.add(meta.file_name)
        else:
            if meta.file_name not in files:
                raise CorruptTableError(
                    f"Trying to delete file {meta.file_name} which is not exists."
                )
            for n in names:
                if n not in covered:
                    raise CorruptTableError(
                        f"Trying to delete dv for data file {n} which is not exists."
                    )
                covered.discard(n)
            files.discard(meta.file_name)
