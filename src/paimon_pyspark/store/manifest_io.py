"""Reading and writing a table's manifest files and manifest lists, and merging their entries.

Mirrors org.apache.paimon.manifest.{ManifestFile, ManifestList, FileEntry.mergeEntries}; the
merge of manifests at commit (ManifestFileMerger) is commit/manifest_merger.py's. Manifests
never change once written, so decoded ones are cached by name.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from paimon_pyspark.errors import (
    CommitConflictError,
    CorruptTableError,
    FileMissingError,
    ManifestMissingError,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity, serialize_with_arity
from paimon_pyspark.spec.data_file_meta import SimpleStats
from paimon_pyspark.spec.manifest import ManifestEntry, ManifestFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.path_checks import name_problem
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataType

_CACHE_LIMIT = 512


class ManifestIO:
    def __init__(
        self, file_io: FileIO, table_path: str, compression: str, partition_types: list[DataType]
    ) -> None:
        self.file_io = file_io
        self.manifest_dir = os.path.join(table_path, "manifest")
        self.codec = mf.avro_codec(compression)
        self.partition_types = [t.copy(nullable=True) for t in partition_types]
        self._cache: dict[str, list[ManifestEntry]] = {}
        self._lock = threading.Lock()
        self._dir_made = False

    def path(self, name: str) -> str:
        """The path of manifest (list) ``name``, which may come from a damaged snapshot or
        manifest list: a name that is not bare fails as a corrupt table, not as a path error."""
        problem = name_problem(name)
        if problem is not None:
            raise CorruptTableError(
                f"Manifest file name {name!r} under {self.manifest_dir} is {problem}."
            )
        return os.path.join(self.manifest_dir, name)

    def _write(self, name: str, data: bytes) -> None:
        if not self._dir_made:
            self.file_io.mkdirs(self.manifest_dir)
            self._dir_made = True
        self.file_io.write_bytes(self.path(name), data)

    # --- reading -----------------------------------------------------------------------------

    def _read(self, name: str) -> tuple[str, bytes]:
        """The path and bytes of manifest (list) ``name``; ManifestMissingError when it is not
        there (expired with its snapshot, or lost: ``store/latest_plan.py`` tells which)."""
        path = self.path(name)
        try:
            return path, self.file_io.read_bytes(path)
        except FileMissingError as e:
            raise ManifestMissingError(str(e), name) from e

    def read_manifest_list(self, name: str) -> list[ManifestFileMeta]:
        path, data = self._read(name)
        return mf.decode_manifest_list(data, path)

    def read_manifest(self, name: str) -> list[ManifestEntry]:
        with self._lock:
            cached = self._cache.get(name)
        if cached is not None:
            return cached
        path, data = self._read(name)
        entries = mf.decode_manifest_entries(data, path)
        with self._lock:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[name] = entries
        return entries

    def data_manifests(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        """The base then the delta manifests; on an object store both lists are fetched at
        once (a commit attempt waits on them)."""
        names = (snapshot.base_manifest_list, snapshot.delta_manifest_list)
        if self.file_io.is_object_store:
            with ThreadPoolExecutor(max_workers=2) as pool:
                base, delta = pool.map(self.read_manifest_list, names)
        else:
            base, delta = (self.read_manifest_list(n) for n in names)
        return base + delta

    def read_entries(self, metas: Sequence[ManifestFileMeta]) -> list[ManifestEntry]:
        """All entries of ``metas`` in manifest order, read concurrently on an object store (as
        Java's ``scan.manifest.parallelism``), where each read is a round trip; on a local disk
        in turn, since decoding holds the GIL and starting the threads cost a small query's
        plan ~4 ms."""
        if len(metas) <= 1 or not self.file_io.is_object_store:
            return [e for m in metas for e in self.read_manifest(m.file_name)]
        with ThreadPoolExecutor(max_workers=min(8, len(metas))) as pool:
            parts = list(pool.map(lambda m: self.read_manifest(m.file_name), metas))
        return [e for part in parts for e in part]

    def live_entries(self, snapshot: Snapshot) -> list[ManifestEntry]:
        """The data files of ``snapshot``: ADD entries not cancelled by a later DELETE."""
        merged = merge_entries(self.read_entries(self.data_manifests(snapshot)))
        return [e for e in merged if e.kind == mf.KIND_ADD]

    # --- writing -----------------------------------------------------------------------------

    def write_manifests(
        self, entries: Sequence[ManifestEntry], pf: PathFactory, schema_id: int, target_size: int
    ) -> list[ManifestFileMeta]:
        """Write entries into manifest files, rolling at about ``target_size`` bytes."""
        metas: list[ManifestFileMeta] = []
        # Avro entries of typical files compress to a few hundred bytes; 1000-entry chunks
        # keep each file well under the 8 MiB target while bounding memory.
        chunk = max(1000, target_size // 2048)
        for start in range(0, len(entries), chunk):
            part = entries[start : start + chunk]
            name = pf.new_manifest_file()
            data = mf.encode_manifest_entries(part, self.codec)
            self._write(name, data)
            metas.append(self._meta(name, len(data), part, schema_id))
        return metas

    def write_manifest_list(
        self, metas: Iterable[ManifestFileMeta], pf: PathFactory
    ) -> tuple[str, int]:
        name = pf.new_manifest_list()
        data = mf.encode_manifest_list(metas, self.codec)
        self._write(name, data)
        return name, len(data)

    def delete_quietly(self, names: Iterable[str]) -> None:
        for name in names:
            self.file_io.delete_quietly(self.path(name))

    def _meta(
        self, name: str, size: int, entries: Sequence[ManifestEntry], schema_id: int
    ) -> ManifestFileMeta:
        added = sum(1 for e in entries if e.kind == mf.KIND_ADD)
        return ManifestFileMeta(
            file_name=name,
            file_size=size,
            num_added_files=added,
            num_deleted_files=len(entries) - added,
            partition_stats=self.partition_stats(e.partition for e in entries),
            schema_id=max((e.file.schema_id for e in entries), default=schema_id),
            min_bucket=min((e.bucket for e in entries), default=None),
            max_bucket=max((e.bucket for e in entries), default=None),
            min_level=min((e.file.level for e in entries), default=None),
            max_level=max((e.file.level for e in entries), default=None),
        )

    def partition_stats(self, partitions: Iterable[bytes]) -> SimpleStats:
        types = self.partition_types
        n = len(types)
        mins: list[Any] = [None] * n
        maxs: list[Any] = [None] * n
        nulls = [0] * n
        for raw in set(partitions):
            values = deserialize_with_arity(raw, types)
            for i, v in enumerate(values):
                if v is None:
                    nulls[i] += 1
                    continue
                if mins[i] is None or v < mins[i]:
                    mins[i] = v
                if maxs[i] is None or v > maxs[i]:
                    maxs[i] = v
        return SimpleStats(
            serialize_with_arity(mins, types), serialize_with_arity(maxs, types), tuple(nulls)
        )


def merge_entries(entries: Iterable[ManifestEntry]) -> list[ManifestEntry]:
    """ADD then DELETE of the same file cancel; a DELETE whose ADD is elsewhere is kept.

    Raises when the same file is added twice, which would mean a corrupt commit.
    """
    merged: dict[tuple[Any, ...], ManifestEntry] = {}
    for e in entries:
        key = e.identifier()
        if e.kind == mf.KIND_ADD:
            if key in merged:
                raise CommitConflictError(
                    f"Trying to add file {e.file.file_name} which is already added."
                )
            merged[key] = e
        else:
            previous = merged.get(key)
            if previous is not None and previous.kind == mf.KIND_ADD:
                del merged[key]
            else:
                merged[key] = e
    return list(merged.values())
