"""Orphan files: files under a table that no snapshot, tag, branch or changelog uses.

Mirrors org.apache.paimon.operation.OrphanFilesClean and LocalOrphanFilesClean (Java's
``CALL sys.remove_orphan_files``). A file is an orphan when it is older than the cutoff (its
modification time is before ``older_than_ms``; one day ago by default, so that the files of
writes and commits still in progress are never touched) and it is

- a file of ``manifest/``, ``index/``, ``statistics/`` or of a bucket directory
  (``<k1=v1>/.../bucket-<n>``) whose *name* no snapshot, tag or changelog of any branch uses:
  their manifest lists, manifests, index manifests, index files and statistics, and the data
  files and extra files named by every entry (ADD or DELETE) of their manifests;
- a file of a branch's ``snapshot/`` or ``changelog/`` directory that is neither a snapshot
  (changelog) file nor a hint (``EARLIEST``, ``LATEST``): a crashed publish's ``.tmp`` file.

Two kinds go beyond Java, both our own leftovers: hidden ``.tmp`` files of an interrupted
publish in ``schema/`` and ``tag/``, and the staging records and ``_OPEN`` markers of Spark
jobs whose driver died (``.paimon-staging/<job>/``, spark/job.py). Their data files need no
rule of their own: no snapshot names them, so they are orphans of a bucket directory.

Safety, as in Java: only files under the listed directories are ever deleted; a snapshot, tag
or manifest that cannot be read (but exists) aborts the run before anything is deleted, while
one that vanished meanwhile (expired) is skipped; a branch without a schema aborts. Unlike
Java, the used names are collected first and the directories listed after, so only files whose
name is unused are ever stat-ed (one request each on an object store); snapshots, tags and
changelogs that appear while the directories are listed are read before deleting, so a commit
that lands meanwhile protects its files. On local disk, bucket and partition directories left
empty, and empty ones older than the cutoff, are removed with ``rmdir`` (which refuses a
directory that is not empty).

``OrphanFilesClean.run`` does it all in this process on a thread pool; the Spark twin
(spark/procedures.py) runs the same pieces on executors.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store import clock

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

LOG = logging.getLogger(__name__)

A = TypeVar("A")
R = TypeVar("R")
Progress = Callable[[str], None]

ONE_DAY_MS = 24 * 3600 * 1000
MAIN_BRANCH = "main"
BRANCH_DIR = "branch"
BRANCH_PREFIX = "branch-"
STAGING_DIR = ".paimon-staging"
"""Where Spark jobs stage their records (spark.job.STAGING_DIR, which sits above this layer)."""
BUCKET_PREFIX = "bucket-"
_HINTS = ("EARLIEST", "LATEST")
_SNAPSHOT_FILE = re.compile(r"^snapshot-\d+$")
_CHANGELOG_FILE = re.compile(r"^changelog-\d+$")
_TAG_PREFIX = "tag-"
_READ_ATTEMPTS = 3


@dataclass(frozen=True)
class OrphanFile:
    path: str
    size: int


@dataclass(frozen=True)
class OrphanFilesResult:
    """What ``remove_orphan_files`` deleted, or would delete with ``dry_run``.

    ``deleted_file_count`` and ``deleted_file_total_len_in_bytes`` are the row Java's procedure
    returns (``deletedFileCount``, ``deletedFileTotalLenInBytes``); ``deleted_files`` are the
    paths (with their scheme on an object store), sorted.
    """

    deleted_file_count: int = 0
    deleted_file_total_len_in_bytes: int = 0
    deleted_files: tuple[str, ...] = ()

    @staticmethod
    def of(files: Iterable[OrphanFile]) -> OrphanFilesResult:
        listed = list(files)
        return OrphanFilesResult(
            len(listed), sum(f.size for f in listed), tuple(sorted(f.path for f in listed))
        )

    def __add__(self, other: OrphanFilesResult) -> OrphanFilesResult:
        return OrphanFilesResult(
            self.deleted_file_count + other.deleted_file_count,
            self.deleted_file_total_len_in_bytes + other.deleted_file_total_len_in_bytes,
            tuple(sorted(self.deleted_files + other.deleted_files)),
        )


def default_older_than_ms(now_ms: int | None = None) -> int:
    """Java's default cutoff: one day before now (``store.clock``'s, so a test that injects a
    clock ahead shortens the safety age without a production knob: tests/soak/)."""
    now = clock.now_millis() if now_ms is None else now_ms
    return now - ONE_DAY_MS


def is_temp_name(name: str) -> bool:
    """A temp file of an interrupted publish: ``.<target>.<uuid>.tmp`` (ours and Java's)."""
    return name.startswith(".") and name.endswith(".tmp")


ListingRoot = tuple[str, int | None]
"""A directory to list and how: ``None``, its files; ``n``, a partition directory with ``n``
partition levels below it, whose bucket directories' files are listed."""


class OrphanFilesClean:
    """The orphan files of one table, piece by piece: the runners put the pieces together.

    ``parallelism``: threads of :meth:`run` (Java's ``file-operation.thread-num``, the CPU
    count by default).
    """

    def __init__(
        self,
        store: FileStore,
        older_than_ms: int,
        dry_run: bool = False,
        parallelism: int | None = None,
    ) -> None:
        self.store = store
        self.io = store.file_io
        self.path = store.path
        self.older_than_ms = older_than_ms
        self.dry_run = dry_run
        self.requested_parallelism = parallelism
        self.parallelism = max(1, parallelism or os.cpu_count() or 1)
        self.partition_levels = len(store.partition_keys)
        self._manifest_dir = os.path.join(self.path, "manifest")

    # --- branches ----------------------------------------------------------------------------

    def branches(self) -> list[str]:
        """``main`` and every branch (``branch/branch-<name>``); a branch without a schema
        aborts, as Java's ``validBranches`` does: its snapshots cannot be trusted to be read."""
        names = [MAIN_BRANCH]
        for d in sorted(self.io.list_dirs(os.path.join(self.path, BRANCH_DIR))):
            if d.startswith(BRANCH_PREFIX) and len(d) > len(BRANCH_PREFIX):
                names.append(d[len(BRANCH_PREFIX) :])
        broken = [
            b
            for b in names
            if not any(
                n.startswith("schema-")
                for n in self.io.list_names(os.path.join(self.branch_path(b), "schema"))
            )
        ]
        if broken:
            raise CorruptTableError(
                f"Table '{self.store.name}': branches {broken} have no schemas. Orphan files "
                "cleaning aborted; check these branches manually."
            )
        return names

    def branch_path(self, branch: str) -> str:
        if branch == MAIN_BRANCH:
            return self.path
        return os.path.join(self.path, BRANCH_DIR, BRANCH_PREFIX + branch)

    # --- what is used ------------------------------------------------------------------------

    def snapshot_paths(self, branches: Sequence[str]) -> list[str]:
        """Every snapshot, tag and changelog file of the branches (Java's
        ``safelyGetAllSnapshots``): the roots of everything the table uses."""
        out: list[str] = []
        for branch in branches:
            base = self.branch_path(branch)
            for directory, keep in (
                ("snapshot", _SNAPSHOT_FILE.match),
                ("changelog", _CHANGELOG_FILE.match),
                ("tag", _is_tag_name),
            ):
                d = os.path.join(base, directory)
                out.extend(os.path.join(d, n) for n in sorted(self.io.list_names(d)) if keep(n))
        return out

    def read_snapshot(self, path: str) -> Snapshot | None:
        """The snapshot (tag, changelog) at ``path``; None if it vanished (expired, deleted)
        or is an empty changelog file (Java ignores those)."""
        data = self._read(path)
        if data is None or (not data and os.path.basename(path).startswith("changelog-")):
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptTableError(f"Snapshot file {path} is not UTF-8: {e}") from e
        return Snapshot.from_json(text, path)

    def metadata_names(self, snapshot: Snapshot) -> tuple[list[str], list[str]]:
        """The names of the files ``snapshot`` uses outside its data files (manifest lists,
        manifests, index manifest and index files, statistics), and its manifests."""
        names: list[str] = []
        manifests: list[str] = []
        lists = [snapshot.changelog_manifest_list, snapshot.delta_manifest_list]
        for name in [*lists, snapshot.base_manifest_list]:
            if not name:
                continue
            names.append(name)
            path = os.path.join(self._manifest_dir, name)
            data = self._read(path)
            if data is not None:
                manifests.extend(m.file_name for m in mf.decode_manifest_list(data, path))
        names.extend(manifests)
        if snapshot.index_manifest:
            path = os.path.join(self._manifest_dir, snapshot.index_manifest)
            data = self._read(path)
            if data is not None:
                names.append(snapshot.index_manifest)
                names.extend(e.index_file.file_name for e in mf.decode_index_manifest(data, path))
        if snapshot.statistics:
            names.append(snapshot.statistics)
        return names, manifests

    def data_file_names(self, manifest: str) -> list[str]:
        """Names of the data files and extra files of every entry of ``manifest``."""
        path = os.path.join(self._manifest_dir, manifest)
        data = self._read(path)
        if data is None:
            return []
        names = []
        for e in mf.decode_manifest_entries(data, path):
            names.append(e.file.file_name)
            names.extend(e.file.extra_files)
        return names

    def used_names(self, snapshot_paths: Sequence[str]) -> set[str]:
        """Every name the snapshots, tags and changelogs at ``snapshot_paths`` use."""
        snapshots = [s for s in self._map(self.read_snapshot, snapshot_paths) if s is not None]
        used: set[str] = set()
        manifests: set[str] = set()
        for names, of_snapshot in self._map(self.metadata_names, snapshots):
            used.update(names)
            manifests.update(of_snapshot)
        for names in self._map(self.data_file_names, sorted(manifests)):
            used.update(names)
        return used

    # --- what is there -----------------------------------------------------------------------

    def metadata_orphans(self, branches: Sequence[str]) -> list[OrphanFile]:
        """Old files of the branches' ``snapshot/`` and ``changelog/`` directories that are no
        snapshot, changelog or hint (Java's ``cleanSnapshotDir``); old temp files of
        ``schema/`` and ``tag/``; every old file of a Spark job's staging directory."""
        out: list[OrphanFile] = []
        for branch in branches:
            base = self.branch_path(branch)
            out += self._old_files(
                os.path.join(base, "snapshot"),
                lambda n: not n.startswith("snapshot-") and n not in _HINTS,
            )
            out += self._old_files(
                os.path.join(base, "changelog"),
                lambda n: not n.startswith("changelog-") and n not in _HINTS,
            )
            for directory in ("schema", "tag"):
                out += self._old_files(os.path.join(base, directory), is_temp_name)
        staging = os.path.join(self.path, STAGING_DIR)
        for job in sorted(self.io.list_dirs(staging)):
            out += self._old_files(os.path.join(staging, job), lambda n: True)
        return out

    def listing_roots(self) -> list[ListingRoot]:
        """``manifest/``, ``index/``, ``statistics/`` and the data directories: the bucket
        directories of an unpartitioned table, else the first-level partition directories (each
        one task of the Spark twin)."""
        roots: list[ListingRoot] = [
            (os.path.join(self.path, d), None) for d in ("manifest", "index", "statistics")
        ]
        dirs = sorted(self.io.list_dirs(self.path))
        if self.partition_levels == 0:
            roots += [(os.path.join(self.path, d), None) for d in dirs if _is_bucket_dir(d)]
        else:
            below = self.partition_levels - 1
            roots += [(os.path.join(self.path, d), below) for d in dirs if "=" in d]
        return roots

    def list_root(self, directory: str, levels: int | None) -> Iterator[tuple[str, str]]:
        """(name, path) of every entry of the files' directories under one listing root.
        On local disk (and not in a dry run) an empty bucket directory older than the cutoff
        is removed on the way, with the partition directories it leaves empty."""
        dirs = [directory] if levels is None else self._bucket_dirs(directory, levels)
        for d in dirs:
            names = self.io.list_names(d)
            if not names:
                self._remove_if_old_and_empty(d)
            for name in names:
                yield name, os.path.join(d, name)

    def old_file(self, path: str) -> OrphanFile | None:
        """``path`` as an orphan if it is a file older than the cutoff, else None (young, a
        directory, or gone)."""
        try:
            if not self.io.is_file(path):
                return None
            if self.io.mtime(path) * 1000 >= self.older_than_ms:
                return None
            return OrphanFile(self.io.describe(path), self.io.file_size(path))
        except FileNotFoundError:
            return None

    # --- deleting ----------------------------------------------------------------------------

    def delete(self, files: Iterable[OrphanFile]) -> list[OrphanFile]:
        """Delete ``files`` (not in a dry run), then, on local disk, the bucket, partition and
        staging directories they leave empty; returns them."""
        out = list(files)
        if self.dry_run:
            return out
        for _ in self._map(lambda f: self.io.delete_quietly(self._bare(f.path)), out):
            pass
        parents = {os.path.dirname(self._bare(f.path)) for f in out}
        for d in sorted(parents, key=len, reverse=True):
            if self._prunable(d):
                self._prune(d)
        return out

    # --- in this process ---------------------------------------------------------------------

    def run(self, say: Progress | None = None) -> OrphanFilesResult:
        """The whole clean in this process (Java's LocalOrphanFilesClean.clean)."""
        report = say or LOG.info
        name = self.store.name
        branches = self.branches()
        paths = self.snapshot_paths(branches)
        used = self.used_names(paths)
        report(
            f"{name}: {len(paths)} snapshot, tag and changelog file(s) of {len(branches)} "
            f"branch(es) use {len(used)} file name(s)"
        )
        roots = self.listing_roots()
        found: list[OrphanFile] = []
        step = max(1, len(roots) // 10)
        for i, listed in enumerate(self._map(self._unused_old_files(used), roots), 1):
            found.extend(listed)
            if i % step == 0 or i == len(roots):
                report(f"{name}: listed {i}/{len(roots)} directories, {len(found)} orphan(s)")
        found = self.drop_used_since(branches, paths, found)
        orphans = self.metadata_orphans(branches) + found
        deleted = self.delete(orphans)
        size = sum(f.size for f in deleted)
        verb = "would delete" if self.dry_run else "deleted"
        report(f"{name}: {verb} {len(deleted)} orphan file(s), {size} bytes")
        return OrphanFilesResult.of(deleted)

    def drop_used_since(
        self, branches: Sequence[str], seen: Sequence[str], found: Sequence[OrphanFile]
    ) -> list[OrphanFile]:
        """``found`` without the files of snapshots, tags and changelogs that appeared since
        ``seen`` was listed: a commit that landed while the directories were listed."""
        known = set(seen)
        new = [p for p in self.snapshot_paths(branches) if p not in known]
        if not new or not found:
            return list(found)
        used = self.used_names(new)
        return [f for f in found if os.path.basename(f.path) not in used]

    # --- helpers -----------------------------------------------------------------------------

    def _unused_old_files(self, used: set[str]) -> Callable[[ListingRoot], list[OrphanFile]]:
        def listing(root: ListingRoot) -> list[OrphanFile]:
            out = []
            for name, path in self.list_root(*root):
                if name not in used:
                    f = self.old_file(path)
                    if f is not None:
                        out.append(f)
            return out

        return listing

    def _map(self, fn: Callable[[A], R], items: Sequence[A]) -> Iterator[R]:
        """``fn`` over ``items`` on up to ``parallelism`` threads, results in order."""
        if self.parallelism == 1 or len(items) <= 1:
            yield from map(fn, items)
            return
        with ThreadPoolExecutor(min(self.parallelism, len(items))) as pool:
            yield from pool.map(fn, items)

    def _old_files(self, directory: str, keep: Callable[[str], bool]) -> list[OrphanFile]:
        out = []
        for name in sorted(self.io.list_names(directory)):
            if keep(name):
                f = self.old_file(os.path.join(directory, name))
                if f is not None:
                    out.append(f)
        return out

    def _bucket_dirs(self, directory: str, levels: int) -> list[str]:
        dirs = self.io.list_dirs(directory)
        if levels == 0:
            return [os.path.join(directory, d) for d in sorted(dirs) if _is_bucket_dir(d)]
        out = []
        for d in sorted(dirs):
            if "=" in d:
                out += self._bucket_dirs(os.path.join(directory, d), levels - 1)
        return out

    def _read(self, path: str) -> bytes | None:
        """The file's bytes, or None if it is not there; a failing read is tried
        ``_READ_ATTEMPTS`` times (Java's ``retryReadingFiles``), then raises."""
        for attempt in range(1, _READ_ATTEMPTS + 1):
            try:
                return self.io.read_bytes(path)
            except (CorruptTableError, OSError):
                if not self.io.is_file(path):
                    return None
                if attempt == _READ_ATTEMPTS:
                    raise
                time.sleep(0.005)
        return None

    def _bare(self, described: str) -> str:
        """A path of ``OrphanFile`` (``describe``d) back to this FileIO's form."""
        root = self.io.describe(self.path)
        if described.startswith(root):
            return self.path + described[len(root) :]
        return described

    def _prunable(self, directory: str) -> bool:
        rel = os.path.relpath(directory, self.path)
        parts = rel.split(os.sep)
        if parts[0] == STAGING_DIR:
            return len(parts) == 2
        return _is_bucket_dir(parts[-1]) and all("=" in p for p in parts[:-1])

    def _remove_if_old_and_empty(self, directory: str) -> None:
        if self.dry_run or not self.io.is_local or not self._prunable(directory):
            return
        try:
            if self.io.mtime(directory) * 1000 >= self.older_than_ms:
                return
        except OSError:
            return
        self._prune(directory)

    def _prune(self, directory: str) -> None:
        """``rmdir`` ``directory`` and its parents up to the table while they are empty."""
        if not self.io.is_local:
            return
        root = os.path.normpath(self.path)
        d = os.path.normpath(directory)
        while d != root and d.startswith(root + os.sep):
            try:
                os.rmdir(d)
            except OSError:
                return
            d = os.path.dirname(d)


def _is_bucket_dir(name: str) -> bool:
    return name.startswith(BUCKET_PREFIX)


def _is_tag_name(name: str) -> bool:
    return name.startswith(_TAG_PREFIX) and len(name) > len(_TAG_PREFIX)
