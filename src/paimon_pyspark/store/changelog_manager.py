"""A table's changes by snapshot id, wherever they are kept.

Mirrors org.apache.paimon.utils.ChangelogManager and org.apache.paimon.Changelog. When the
changelog outlives snapshots (``changelog.num-retained.*`` or ``changelog.time-retained`` above
the snapshots': ``CoreOptions.changelog_lifecycle_decoupled``), snapshot expiry writes each
expired snapshot's JSON, unchanged, as the *long-lived changelog* ``changelog/changelog-<id>``
and keeps the files it needs to read its changes: its changelog manifests and files for a table
with a ``changelog-producer``, its delta manifests and the level-0 files they add without one.
``changelog/LATEST`` and ``changelog/EARLIEST`` are hints, as in ``snapshot/``, verified before
use (Java's HintFileUtils: LATEST when no next file exists, EARLIEST when its file exists).

A read of changes asks here for the snapshot of an id, or, once it expired, its long-lived
changelog (Java's NextSnapshotFetcher), so a stream that outlives the snapshot's expiry still
finds its changes. As in Java, long-lived changelogs are read only while the table
decouples them; a read of one may open only its changelog manifest list (a producer's table) or
its delta manifest list (without a producer): the rest was expired with the snapshot.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from paimon_pyspark.errors import CorruptTableError, InvalidArgumentError
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.snapshot import Snapshot

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

CHANGELOG_PREFIX = "changelog-"
CHANGELOG_DIR = "changelog"
_CHANGELOG_RE = re.compile(r"^changelog-(\d+)$")


class ChangelogManager:
    """The long-lived changelog files ``changelog/changelog-<id>`` of one table, under
    pypaimon 2.1's (and Java's) method names; a changelog is a :class:`Snapshot` (Java's
    Changelog adds nothing to it). Only the main branch: branches are refused."""

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None) -> None:
        if branch not in (None, "main"):
            raise InvalidArgumentError(
                f"ChangelogManager of {table_path}: branch {branch!r}: only the main branch "
                "is read and written here."
            )
        self.file_io = file_io
        self.table_path = table_path
        self._dir = os.path.join(table_path, CHANGELOG_DIR)

    def changelog_directory(self) -> str:
        return self._dir

    def long_lived_changelog_path(self, snapshot_id: int) -> str:
        return os.path.join(self._dir, f"{CHANGELOG_PREFIX}{snapshot_id}")

    def long_lived_changelog_exists(self, snapshot_id: int) -> bool:
        return self.file_io.is_file(self.long_lived_changelog_path(snapshot_id))

    def try_get_changelog(self, snapshot_id: int) -> Snapshot | None:
        """The long-lived changelog of ``snapshot_id``; None if there is none (one request)."""
        path = self.long_lived_changelog_path(snapshot_id)
        try:
            text = self.file_io.read_text(path)
        except CorruptTableError:
            return None
        if not text.strip():
            raise CorruptTableError(f"Changelog file {path} is empty.")
        return Snapshot.from_json(text, path)

    def changelog(self, snapshot_id: int) -> Snapshot:
        """The long-lived changelog of ``snapshot_id``; CorruptTableError if there is none."""
        found = self.try_get_changelog(snapshot_id)
        if found is None:
            path = self.long_lived_changelog_path(snapshot_id)
            raise CorruptTableError(f"Changelog {snapshot_id} does not exist ({path}).")
        return found

    def long_lived_changelog(self, snapshot_id: int) -> Snapshot:
        return self.changelog(snapshot_id)

    def list_ids(self) -> list[int]:
        """The ids of the changelog files, sorted (a listing)."""
        ids = []
        for name in self.file_io.list_names(self._dir):
            m = _CHANGELOG_RE.match(name)
            if m:
                ids.append(int(m.group(1)))
        return sorted(ids)

    def changelogs(self) -> Iterator[Snapshot]:
        """Every long-lived changelog, oldest first; one expired meanwhile is skipped."""
        for snapshot_id in self.list_ids():
            found = self.try_get_changelog(snapshot_id)
            if found is not None:
                yield found

    def safely_get_all_changelogs(self) -> list[Snapshot]:
        """Every long-lived changelog, oldest first, without the ones that vanished or are
        empty (Java's safelyGetAllChangelogs)."""
        out = []
        for snapshot_id in self.list_ids():
            path = self.long_lived_changelog_path(snapshot_id)
            try:
                text = self.file_io.read_text(path)
            except CorruptTableError:
                continue  # expired meanwhile
            if text.strip():
                out.append(Snapshot.from_json(text, path))
        return out

    def latest_long_lived_changelog_id(self) -> int | None:
        """``LATEST`` when no next changelog exists (and it does), else the listing's highest."""
        hint = self._read_hint("LATEST")
        if (
            hint is not None
            and hint > 0
            and not self.long_lived_changelog_exists(hint + 1)
            and self.long_lived_changelog_exists(hint)
        ):
            return hint
        ids = self.list_ids()
        return ids[-1] if ids else None

    def earliest_long_lived_changelog_id(self) -> int | None:
        """``EARLIEST`` when its changelog exists, else the listing's lowest."""
        hint = self._read_hint("EARLIEST")
        if hint is not None and self.long_lived_changelog_exists(hint):
            return hint
        ids = self.list_ids()
        return ids[0] if ids else None

    def commit_changelog(self, changelog: Snapshot, changelog_id: int) -> None:
        """Write ``changelog`` (an expiring snapshot) as long-lived changelog ``changelog_id``,
        published whole and durable before its snapshot file goes. One already there (an expiry
        that crashed after writing it) is the same snapshot's JSON and stays, unless it cannot
        be read: then it is replaced in one step (Java's commitChangelog overwrites)."""
        self.file_io.mkdirs(self._dir)
        path = self.long_lived_changelog_path(changelog_id)
        text = changelog.to_json()
        if self.file_io.try_write_atomic(path, text.encode("utf-8")):
            return
        try:
            if self.try_get_changelog(changelog_id) is not None:
                return
        except CorruptTableError:
            pass
        self.file_io.overwrite_hint(path, text)

    def delete_changelog(self, snapshot_id: int) -> None:
        self.file_io.delete_quietly(self.long_lived_changelog_path(snapshot_id))

    def commit_long_lived_changelog_latest_hint(self, snapshot_id: int) -> None:
        self.file_io.overwrite_hint(os.path.join(self._dir, "LATEST"), str(snapshot_id))

    def commit_long_lived_changelog_earliest_hint(self, snapshot_id: int) -> None:
        self.file_io.overwrite_hint(os.path.join(self._dir, "EARLIEST"), str(snapshot_id))

    def delete_latest_hint(self) -> None:
        self.file_io.delete_quietly(os.path.join(self._dir, "LATEST"))

    def delete_earliest_hint(self) -> None:
        self.file_io.delete_quietly(os.path.join(self._dir, "EARLIEST"))

    def _read_hint(self, name: str) -> int | None:
        path = os.path.join(self._dir, name)
        with contextlib.suppress(CorruptTableError, ValueError, OSError):
            return int(self.file_io.read_text(path).strip())
        return None


def changelog_manager(store: FileStore) -> ChangelogManager:
    return store.changelog_manager


def snapshot_or_changelog(store: FileStore, snapshot_id: int) -> Snapshot | None:
    """The snapshot ``snapshot_id``, or, when the table decouples its changelog, its long-lived
    changelog; None if neither exists (Java's NextSnapshotFetcher.getNextSnapshot)."""
    snapshot = store.snapshot_manager.snapshot_if_exists(snapshot_id)
    if snapshot is not None or not store.options.changelog_lifecycle_decoupled:
        return snapshot
    return changelog_manager(store).try_get_changelog(snapshot_id)


def earliest_readable_id(store: FileStore) -> int | None:
    """The smallest id ``snapshot_or_changelog`` can answer: the earliest long-lived changelog
    when the table decouples its changelog and has one, else the earliest snapshot; None for a
    table without snapshots (Java's ContinuousFromSnapshotStartingScanner.getEarliestId)."""
    if store.options.changelog_lifecycle_decoupled:
        earliest = changelog_manager(store).earliest_long_lived_changelog_id()
        if earliest is not None:
            return earliest
    return store.snapshot_manager.earliest_id()
