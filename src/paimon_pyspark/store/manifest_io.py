"""Reading and writing a table's manifest files and manifest lists, and merging their entries.

Mirrors org.apache.paimon.manifest.{ManifestFile, ManifestList, FileEntry.mergeEntries}; the
merge of manifests at commit (ManifestFileMerger) is commit/manifest_merger.py's. Manifests
never change once written, so decoded ones are cached by name, least recently used first out,
at most 512 of them within a memory budget (Java's catalog caches manifests within
``cache.manifest.small-file-memory``, 128 MB): a stream that commits or plans for days keeps
the same footprint, and a manifest its expiry deleted leaves the cache with its file.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
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

MANIFEST_CACHE_MEMORY = 128 * 1024 * 1024
"""The default budget of one ManifestIO's cache of decoded manifests, in bytes (Java's
``cache.manifest.small-file-memory`` default)."""

MANIFEST_CACHE_FILES = 512
"""At most this many manifests cached by one ManifestIO, however small."""

_ENTRY_OVERHEAD = 1000
"""Bytes of the Python objects of one decoded entry besides its variable parts (measured: an
entry of a 2-column table takes about 1.2 KB, of a 30-column one 2.3 KB)."""


def decoded_bytes(entries: Sequence[ManifestEntry]) -> int:
    """The memory ``entries`` take decoded, estimated from the first one (a manifest's entries
    are of one table and alike): what a cached manifest counts against the budget."""
    if not entries:
        return _ENTRY_OVERHEAD
    f = entries[0].file
    stats = (f.key_stats, f.value_stats)
    variable = len(f.file_name) + len(f.min_key) + len(f.max_key)
    variable += sum(len(s.min_values) + len(s.max_values) for s in stats)
    variable += 8 * sum(len(s.null_counts or ()) for s in stats)
    return len(entries) * (_ENTRY_OVERHEAD + variable)


class ManifestIO:
    def __init__(
        self, file_io: FileIO, table_path: str, compression: str, partition_types: list[DataType]
    ) -> None:
        self.file_io = file_io
        self.manifest_dir = os.path.join(table_path, "manifest")
        self.codec = mf.avro_codec(compression)
        self.partition_types = [t.copy(nullable=True) for t in partition_types]
        self.cache_memory = MANIFEST_CACHE_MEMORY
        """The budget of :meth:`read_manifest`'s cache, in estimated bytes of decoded entries."""
        self._cache: OrderedDict[str, tuple[list[ManifestEntry], int]] = OrderedDict()
        self._cached_bytes = 0
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
                self._cache.move_to_end(name)
                return cached[0]
        path, data = self._read(name)
        entries = mf.decode_manifest_entries(data, path)
        weight = decoded_bytes(entries)
        with self._lock:
            if weight <= self.cache_memory and name not in self._cache:
                self._cache[name] = (entries, weight)
                self._cached_bytes += weight
                while (
                    self._cached_bytes > self.cache_memory
                    or len(self._cache) > MANIFEST_CACHE_FILES
                ):
                    _, (_, dropped) = self._cache.popitem(last=False)
                    self._cached_bytes -= dropped
        return entries

    def forget(self, names: Iterable[str]) -> None:
        """Drop manifests ``names`` from the cache (their files are being deleted)."""
        with self._lock:
            for name in names:
                gone = self._cache.pop(name, None)
                if gone is not None:
                    self._cached_bytes -= gone[1]

    def cache_usage(self) -> tuple[list[str], int]:
        """The cached manifests' names, least recently used first, and their estimated bytes."""
        with self._lock:
            return list(self._cache), self._cached_bytes

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
        names = list(names)
        self.forget(names)
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
