"""How a commit puts its snapshot in: Java's ``SnapshotCommit``.

The default publishes ``snapshot-<id>`` into the branch's directory with the store's
create-if-absent (``SnapshotManager.publish_file``). A catalog may give its tables another:
the JDBC catalog's lock runs that same publish while it holds the table's lock (Java's
``RenamingSnapshotCommit`` with a ``CatalogLock``), so stores without a conditional create are
safe; the REST catalog's asks its server to commit (Java's ``RESTSnapshotCommit``). Either way
the answer is Java's: True if this snapshot now holds the id, False if another writer's does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from paimon_pyspark.spec.snapshot import Snapshot
    from paimon_pyspark.store.managers import SnapshotManager

T = TypeVar("T")


class SnapshotCommit(ABC):
    @abstractmethod
    def commit(self, snapshots: SnapshotManager, snapshot: Snapshot, branch: str) -> bool:
        """Publish ``snapshot`` on ``branch`` of the table whose snapshots ``snapshots`` holds;
        False when the id is taken. An OSError means the outcome is unknown (the commit then
        looks for its snapshot before it tries again)."""


class CommitLock(ABC):
    """A lock held around one publish (Java's ``CatalogLock.runWithLock``), one per table."""

    @abstractmethod
    def run_with_lock(self, action: Callable[[], T]) -> T:
        """Run ``action`` while holding the lock; CatalogLockError if it cannot be had in
        time."""

    def close(self) -> None:
        return None


class LockedSnapshotCommit(SnapshotCommit):
    """The default publish under ``lock``: Java's ``RenamingSnapshotCommit`` with a lock, which
    checks that the id is free and writes while it holds the lock."""

    def __init__(self, lock: CommitLock) -> None:
        self.lock = lock

    def commit(self, snapshots: SnapshotManager, snapshot: Snapshot, branch: str) -> bool:
        return self.lock.run_with_lock(
            lambda: not snapshots.snapshot_exists(snapshot.id) and snapshots.publish_file(snapshot)
        )
