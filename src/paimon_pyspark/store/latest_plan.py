"""Planning on a snapshot that snapshot expiration may remove while the plan reads it.

Expiry (maintenance/expire.py) deletes an expired snapshot's manifests and manifest lists, then
its snapshot file, and never expires the latest snapshot. So when a plan meets a manifest file
of its snapshot missing (:class:`ManifestMissingError`), the snapshot's state tells why: if the
snapshot is gone, or is no longer the latest, and no tag holds it (a tag keeps its snapshot's
files), the file went with its expiry; otherwise the file is lost, and the table is corrupt.

Every plan of the latest snapshot (a scan that no option pins, compaction, rescale) runs
through :func:`plan_latest`, which plans again on the newest snapshot after such an expiry, at
most :data:`PLAN_TRIES` times; a plan pinned to a snapshot (time travel, an incremental read)
runs through :func:`plan_pinned`, which turns the same expiry into a SnapshotExpiredError.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from paimon_pyspark.errors import (
    ConcurrentExpiryError,
    CorruptTableError,
    ManifestMissingError,
    SnapshotExpiredError,
)
from paimon_pyspark.spec.snapshot import Snapshot

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

LOG = logging.getLogger(__name__)

T = TypeVar("T")

PLAN_TRIES = 5
"""How many snapshots a plan of the latest snapshot tries before ConcurrentExpiryError: each
retry means another commit and another expiry landed during one plan."""


def plan_latest(store: FileStore, plan: Callable[[Snapshot | None], T]) -> T:
    """``plan`` of the latest snapshot (None: the table has none), planned again on the newest
    snapshot when the one it planned expired under it; ConcurrentExpiryError after
    :data:`PLAN_TRIES` snapshots. A missing manifest file of a snapshot that is still the
    latest is corruption and raises as it came (a CorruptTableError).

    ``plan`` may also pin a copy of the store to the snapshot's id: a SnapshotExpiredError it
    raises for that snapshot is met the same way."""
    tried: list[int] = []
    while True:
        snapshot = store.snapshot_manager.latest()
        try:
            return plan(snapshot)
        except (ManifestMissingError, SnapshotExpiredError) as e:
            if isinstance(e, ConcurrentExpiryError) or snapshot is None:
                raise
            if not expired_under(store, snapshot):
                raise
            tried.append(snapshot.id)
            if len(tried) >= PLAN_TRIES:
                raise ConcurrentExpiryError(
                    f"Table '{store.name}': each of the snapshots {tried} expired while a plan "
                    f"of the latest snapshot read it ({len(tried)} tries; last: {e}). Keep "
                    "more snapshots ('snapshot.num-retained.min') or plan again later."
                ) from e
            LOG.info(
                "Table '%s': snapshot %d expired while it was planned (%s); planning again on "
                "the latest snapshot",
                store.name,
                snapshot.id,
                e,
            )


def plan_pinned(
    store: FileStore, snapshot: Snapshot, plan: Callable[[Snapshot], T], asked_by: str
) -> T:
    """``plan`` of ``snapshot``, which ``asked_by`` (an option, in the error) pinned: its expiry
    during the plan raises SnapshotExpiredError naming the table and the snapshot; a missing
    manifest file of a snapshot that did not expire raises as it came."""
    try:
        return plan(snapshot)
    except ManifestMissingError as e:
        if not expired_under(store, snapshot):
            raise
        sm = store.snapshot_manager
        raise SnapshotExpiredError(
            f"Table '{store.name}': snapshot {snapshot.id} asked for by {asked_by} expired "
            f"while it was read (its manifest file '{e.name}' is gone); the earliest snapshot "
            f"is {sm.earliest_id()} (latest {sm.latest_id()})."
        ) from e


def pinned_snapshot(store: FileStore, snapshot_id: int, asked_by: str) -> Snapshot:
    """Snapshot ``snapshot_id``, which ``asked_by`` (in the error) pinned: SnapshotExpiredError
    if it is below the earliest snapshot, CorruptTableError if it is missing otherwise."""
    sm = store.snapshot_manager
    found = sm.snapshot_if_exists(snapshot_id)
    if found is not None:
        return found
    earliest = sm.earliest_id()
    if earliest is not None and snapshot_id < earliest:
        raise SnapshotExpiredError(
            f"Table '{store.name}': snapshot {snapshot_id} asked for by {asked_by} has expired; "
            f"the earliest snapshot is {earliest} (latest {sm.latest_id()})."
        )
    raise CorruptTableError(
        f"Table '{store.name}': snapshot {snapshot_id} asked for by {asked_by} does not exist "
        f"(existing: {sm.list_ids()})."
    )


def expired_under(store: FileStore, snapshot: Snapshot) -> bool:
    """Whether manifest files of ``snapshot`` found missing went with its expiry: it is gone
    or no longer the latest (expiry keeps the latest), and no tag holds it. Asked only after a
    file was found missing, so its requests cost nothing on the way of a plan."""
    sm = store.snapshot_manager
    if sm.snapshot_exists(snapshot.id):
        latest = sm.latest_id()
        if latest is None or latest <= snapshot.id:
            return False
    tags = store.tag_manager.tagged_snapshots()
    return all(t.id != snapshot.id for t in tags)
