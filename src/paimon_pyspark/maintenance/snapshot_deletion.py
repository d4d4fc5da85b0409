"""What snapshot expiration deletes, file kind by file kind.

Mirrors org.apache.paimon.operation.SnapshotDeletion and its base FileDeletionBase:

- data files: a snapshot's *delta* manifests name the files it removed (DELETE entries); a file
  DELETEd there and not ADDed back in the same delta (a compaction that only moved it up a level
  keeps its name) is no longer used from that snapshot on (``cleanUnusedDataFiles``). Java checks
  those against the files of the newest tag older than the snapshot; we check them against the
  files of *every* tag, of the first retained snapshot and of every delta after it as well, by
  file name, so a file some retained snapshot or tag can still reach is never deleted even if
  the table broke Java's invariant that a removed file never comes back.
- manifests, manifest lists, index manifests, index files and statistics of an expired snapshot
  that are not in the skipping set (the same files of the first retained snapshot and of tags)
  (``cleanUnusedManifests``); when the changelog outlives the snapshot (expire.py), its
  changelog manifest list stays, and without a producer its base and delta lists too.

The long-lived changelogs' own deletion (Java's ChangelogDeletion) is expire_changelog.py; it
uses the same pieces.

A manifest that cannot be read cancels the data-file deletion of that snapshot, as in Java:
leaving a file behind is an orphan, deleting a live one is corruption.

Names on disk are not trusted (another engine's manifests, a tampered file): every deletion goes
through :meth:`SnapshotDeletion.delete_file`, which deletes only bare file names of the table's
directories and paths inside the table (store/path_checks.py). Anything else is skipped with a
warning naming it, never raised: an exception would stop expiry half-way, and a skipped file is
at worst an orphan.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paimon_pyspark.errors import CorruptTableError, ManifestMissingError
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_APPEND
from paimon_pyspark.spec.manifest import ManifestEntry, ManifestFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.index_io import IndexFileHandler
from paimon_pyspark.store.path_checks import external_io_path, is_table_path, name_problem
from paimon_pyspark.store.paths import bucket_dir

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

LOG = logging.getLogger(__name__)


@dataclass
class DataFileCandidate:
    """A data file a snapshot's delta removed: where it lives and its extra files."""

    file_name: str
    path: str
    extra_paths: list[str]
    partition: bytes
    bucket: int
    appended: bool = False
    """Written by a write, not a compaction (``_FILE_SOURCE`` APPEND, or none recorded): without
    a producer, the changes a decoupled changelog reads."""


@dataclass
class SnapshotDeletion:
    store: FileStore
    deleted_buckets: set[tuple[bytes, int]] = field(default_factory=set)
    _partition_dirs: dict[bytes, str] = field(default_factory=dict)

    @property
    def index_files(self) -> IndexFileHandler:
        return IndexFileHandler(self.store.file_io, self.store.path, self.store.manifest_io.codec)

    # --- reading -----------------------------------------------------------------------------

    def try_read_manifest_list(self, name: str) -> list[ManifestFileMeta] | None:
        """The manifests of a list, or None when it cannot be read (already expired)."""
        try:
            return self.store.manifest_io.read_manifest_list(name)
        except ManifestMissingError:
            # another expiry of an overlapping range deleted it after its own step 1
            LOG.info("Manifest list %s is gone already (a concurrent expiry)", name)
            return None
        except (CorruptTableError, OSError) as e:
            LOG.warning("Failed to read manifest list %s: %s", name, e)
            return None

    def live_file_names(self, snapshot: Snapshot) -> set[str]:
        """Names of the data files ``snapshot`` reads; raises if any manifest is unreadable."""
        return {e.file.file_name for e in self.store.manifest_io.live_entries(snapshot)}

    def added_file_names(self, snapshot: Snapshot) -> set[str]:
        """Names ADDed by ``snapshot``'s delta; raises if unreadable."""
        mio = self.store.manifest_io
        metas = mio.read_manifest_list(snapshot.delta_manifest_list)
        return {e.file.file_name for e in mio.read_entries(metas) if e.kind == mf.KIND_ADD}

    def long_lived_changelog_files(self) -> set[str]:
        """Names of the data files the long-lived changelogs' delta lists ADD (what a changelog
        without a producer reads, store/changelog_manager.py), for a cleanup that must keep
        them; raises if a manifest cannot be read."""
        changelogs = self.store.changelog_manager
        names: set[str] = set()
        for cid in changelogs.list_ids():
            changelog = changelogs.try_get_changelog(cid)
            if changelog is None or changelog.changelog_manifest_list:
                continue
            try:
                names |= self.added_file_names(changelog)
            except ManifestMissingError:
                continue  # expired meanwhile
        return names

    def removed_data_files(self, snapshot: Snapshot) -> list[DataFileCandidate] | None:
        """Files ``snapshot``'s delta DELETEd and did not ADD back (getDataFileToDelete).

        None when a manifest cannot be read: the caller then deletes nothing for this snapshot.
        Unlike Java, an ADD cancels a DELETE of the same path whatever their order.
        """
        metas = self.try_read_manifest_list(snapshot.delta_manifest_list)
        if metas is None:
            return None
        try:
            entries = self.store.manifest_io.read_entries(metas)
        except (CorruptTableError, OSError) as error:
            LOG.warning(
                "Failed to read manifests of snapshot %d, cancel deletion: %s", snapshot.id, error
            )
            return None
        added = {self.data_file_path(e) for e in entries if e.kind == mf.KIND_ADD}
        out: dict[str, DataFileCandidate] = {}
        for e in entries:
            if e.kind != mf.KIND_DELETE:
                continue
            path = self.data_file_path(e)
            if path in added:
                continue
            if not e.file.external_path and not self.bare(e.file.file_name, "data file"):
                continue  # its extra files are named relative to it: they stay too
            parent = os.path.dirname(path)
            extras = [
                os.path.join(parent, x)
                for x in e.file.extra_files
                if self.bare(x, f"extra file of data file {e.file.file_name!r}")
            ]
            appended = e.file.file_source in (None, FILE_SOURCE_APPEND)
            out[path] = DataFileCandidate(
                e.file.file_name, path, extras, e.partition, e.bucket, appended
            )
        return list(out.values())

    def data_file_path(self, e: ManifestEntry) -> str:
        """Where the entry's file lies: its external path as a FileIO path when under one of
        the table's configured roots; any other external path as it is, which
        :meth:`delete_file` then skips (it is outside the table)."""
        if e.file.external_path:
            return external_io_path(self.store, e.file.external_path) or e.file.external_path
        return os.path.join(self.bucket_path(e.partition, e.bucket), e.file.file_name)

    def bucket_path(self, partition: bytes, bucket: int) -> str:
        return os.path.join(self.partition_path(partition), bucket_dir(bucket))

    def partition_path(self, partition: bytes) -> str:
        cached = self._partition_dirs.get(partition)
        if cached is None:
            values = deserialize_with_arity(partition, self.store.partition_types)
            rel = self.store.partition_rel_path(values)
            cached = os.path.join(self.store.path, rel) if rel else self.store.path
            self._partition_dirs[partition] = cached
        return cached

    # --- deleting ----------------------------------------------------------------------------

    def bare(self, name: str, what: str) -> bool:
        """Whether ``name`` is a bare file name; if not, logs that it is skipped."""
        problem = name_problem(name)
        if problem is not None:
            LOG.warning(
                "Table '%s': expiration skips %s %r, which is %s.",
                self.store.name,
                what,
                name,
                problem,
            )
        return problem is None

    def delete_file(self, path: str) -> None:
        """Delete ``path`` if it is inside the table (or one of its external roots); anything
        else is skipped with a warning naming it."""
        if not is_table_path(self.store, path):
            LOG.warning(
                "Table '%s': expiration skips %r, which is outside the table directory %s.",
                self.store.name,
                path,
                self.store.path,
            )
            return
        self.store.file_io.delete_quietly(path)

    def delete_data_files(self, files: Iterable[DataFileCandidate]) -> int:
        n = 0
        for f in files:
            for path in [f.path, *f.extra_paths]:
                self.delete_file(path)
            self.deleted_buckets.add((f.partition, f.bucket))
            n += 1
        return n

    def delete_added_changelog_files(self, list_name: str) -> None:
        """Changelog files of an expired snapshot (Java's deleteAddedDataFiles)."""
        metas = self.try_read_manifest_list(list_name)
        for meta in metas or []:
            try:
                entries = self.store.manifest_io.read_manifest(meta.file_name)
            except (CorruptTableError, OSError):
                continue
            for e in entries:
                if e.kind == mf.KIND_ADD and (
                    e.file.external_path or self.bare(e.file.file_name, "changelog file")
                ):
                    self.delete_file(self.data_file_path(e))
                    self.deleted_buckets.add((e.partition, e.bucket))

    def clean_empty_directories(self) -> None:
        """Remove bucket and partition directories left empty (snapshot.clean-empty-directories).

        Only on a local filesystem, with ``rmdir``, which refuses a directory that is not empty,
        so a file a concurrent writer just put there is never lost. Object stores have no
        directories to remove.
        """
        if not self.store.file_io.is_local:
            self.deleted_buckets.clear()
            return
        partitions: set[bytes] = set()
        for partition, bucket in self.deleted_buckets:
            with contextlib.suppress(OSError):
                os.rmdir(self.bucket_path(partition, bucket))
            partitions.add(partition)
        for partition in partitions:
            path = self.partition_path(partition)
            while os.path.normpath(path) != os.path.normpath(self.store.path):
                try:
                    os.rmdir(path)
                except OSError:
                    break
                path = os.path.dirname(path)
        self.deleted_buckets.clear()

    def manifest_skipping_set(self, snapshots: Iterable[Snapshot]) -> set[str]:
        """Every metadata file name the given snapshots use (Java's manifestSkippingSet); raises
        if one of them cannot be read."""
        skip: set[str] = set()
        mio = self.store.manifest_io
        for s in snapshots:
            skip.add(s.base_manifest_list)
            skip.add(s.delta_manifest_list)
            skip.update(m.file_name for m in mio.data_manifests(s))
            if s.changelog_manifest_list:
                skip.add(s.changelog_manifest_list)
                skip.update(m.file_name for m in mio.read_manifest_list(s.changelog_manifest_list))
            if s.index_manifest:
                skip.add(s.index_manifest)
                skip.update(
                    e.index_file.file_name for e in self.index_files.read_manifest(s.index_manifest)
                )
            if s.statistics:
                skip.add(s.statistics)
        return skip

    def clean_unused_manifests(
        self,
        snapshot: Snapshot,
        skip: set[str],
        data_lists: bool = True,
        changelog_list: bool = True,
    ) -> None:
        """Delete an expired snapshot's metadata files not in ``skip`` (cleanUnusedManifests);
        ``data_lists``/``changelog_list`` False keep its base and delta lists / its changelog
        list (and their manifests) for its long-lived changelog."""
        if data_lists:
            self.clean_manifest_list(snapshot.base_manifest_list, skip)
            self.clean_manifest_list(snapshot.delta_manifest_list, skip)
        if changelog_list and snapshot.changelog_manifest_list:
            self.clean_manifest_list(snapshot.changelog_manifest_list, skip)
        self._clean_index_manifest(snapshot.index_manifest, skip)
        if snapshot.statistics and snapshot.statistics not in skip:
            self._delete_in(
                os.path.join(self.store.path, "statistics"), snapshot.statistics, "statistics"
            )

    def _delete_in(self, directory: str, name: str, what: str) -> None:
        """Delete the file ``name`` of ``directory`` if it is a bare name (else warn)."""
        if self.bare(name, what):
            self.delete_file(os.path.join(directory, name))

    def clean_manifest_list(self, list_name: str, skip: set[str]) -> None:
        """Delete a manifest list and its manifests not in ``skip`` (cleanUnusedManifestList)."""
        mio = self.store.manifest_io
        metas = self.try_read_manifest_list(list_name)
        for meta in metas or []:
            if meta.file_name not in skip:
                mio.forget([meta.file_name])
                self._delete_in(mio.manifest_dir, meta.file_name, "manifest")
                skip.add(meta.file_name)  # another expired snapshot need not try again
        if list_name not in skip:
            self._delete_in(mio.manifest_dir, list_name, "manifest list")

    def _clean_index_manifest(self, name: str | None, skip: set[str]) -> None:
        if not name:
            return
        handler = self.index_files
        try:
            entries = handler.read_manifest(name)
        except (CorruptTableError, OSError):
            return  # deleted by an earlier expired snapshot sharing it
        for e in entries:
            index_file = e.index_file
            if index_file.file_name in skip:
                continue
            if index_file.external_path:
                self.delete_file(index_file.external_path)
            else:
                self._delete_in(handler.index_dir, index_file.file_name, "index file")
        if name not in skip:
            self._delete_in(handler.manifest_dir, name, "index manifest")
