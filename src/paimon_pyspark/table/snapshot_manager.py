"""The table's SnapshotManager as pypaimon hands it out: ``table.snapshot_manager()``.

pypaimon's FileStoreTable.snapshot_manager is a method and its SnapshotManager reads snapshots
by ``get_latest_snapshot`` / ``get_snapshot_by_id``; ours is a property over
store/managers.py's SnapshotManager (Java's ``latest``, ``snapshot``). This subclass is both:
calling it returns itself, so ``table.snapshot_manager.latest()`` and
``table.snapshot_manager().get_latest_snapshot()`` read the same files.
"""

from __future__ import annotations

from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.managers import SnapshotManager


class TableSnapshotManager(SnapshotManager):
    def __call__(self) -> TableSnapshotManager:
        """Itself, for pypaimon's ``table.snapshot_manager()``."""
        return self

    def get_latest_snapshot(self) -> Snapshot | None:
        """The latest snapshot, or None for a table without one."""
        return self.latest()

    def get_snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        """Snapshot ``snapshot_id``, or None when it is not there (never written, or expired)."""
        if not isinstance(snapshot_id, int) or isinstance(snapshot_id, bool):
            raise InvalidArgumentError(
                "SnapshotManager.get_snapshot_by_id(snapshot_id) takes an int, got "
                f"{describe(snapshot_id)}."
            )
        return self.snapshot_if_exists(snapshot_id) if snapshot_id > 0 else None

    def get_snapshot_path(self, snapshot_id: int) -> str:
        return self.snapshot_path(snapshot_id)

    def try_get_earliest_snapshot(self) -> Snapshot | None:
        """The earliest snapshot still there, or None for a table without one."""
        earliest = self.earliest_id()
        return None if earliest is None else self.snapshot_if_exists(earliest)
