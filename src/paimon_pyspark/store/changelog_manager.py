"""A table's changes by snapshot id, wherever they are kept.

A stream or an incremental read asks here for the snapshot (or, once Java's long-lived
changelogs are kept in ``changelog/``, the changelog file) of an id, so that a read that
outlives the snapshot's expiry still finds its changelog manifests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_pyspark.spec.snapshot import Snapshot

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


def snapshot_or_changelog(store: FileStore, snapshot_id: int) -> Snapshot | None:
    """The snapshot ``snapshot_id``, or its long-lived changelog; None if neither exists."""
    return store.snapshot_manager.snapshot_if_exists(snapshot_id)


def earliest_readable_id(store: FileStore) -> int | None:
    """The smallest id ``snapshot_or_changelog`` can answer (the earliest long-lived changelog
    or snapshot), None for a table without snapshots."""
    return store.snapshot_manager.earliest_id()
