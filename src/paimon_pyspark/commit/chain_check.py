"""Is a snapshot just published on the table's chain, or a stale publish at an expired id?

A commit publishes ``snapshot-<L+1>`` with create-if-absent after reading snapshot L as the
latest. Create-if-absent proves the id is free, not that it was never used: if, while the attempt
ran, other writers committed L+1, L+2, ... and expiry deleted L and L+1, the id is free again and
the publish succeeds below the newest snapshot. Such a snapshot is on no reader's path (the
table's chain runs from the earliest to the newest id, each built on the one before), so its
files are lost although the commit returned, and a reader or committer that meets it through a
LATEST hint or a probe builds on a branch that ends there. This is what lost acknowledged
commits under writers that restart (a restarted process's first commit is slow) while snapshots
expire within a second (issue 36).

The check after every publish, exact under the one rule every expiry (ours and Java's) keeps,
that snapshot files are deleted from the oldest up and the newest is never deleted:

- the highest id in the directory is ours: nothing was committed after it, and a stale publish
  always has the newest snapshot above it, so ours is on the chain;
- an id missing between ours and the highest: ids are deleted from the oldest up, so a snapshot
  on the chain has every later one still there; ours is off it;
- otherwise the snapshots after ours lead to the highest: each one's base manifest list holds
  its predecessor's delta manifests (names unique to each commit), the cheap proof; where a
  commit merged them, the files ours added (names unique too) are live in the highest snapshot
  or removed by a delta after ours, which is the proof, and their absence from a complete
  history after ours the disproof.

A read that fails because expiry is deleting those files leaves the verdict unknown for a
moment; the check is repeated a few times before it says so.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence
from typing import Any

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.manifest import ManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.managers import SnapshotManager
from paimon_pyspark.store.manifest_io import ManifestIO, merge_entries

_WAITS_S = (0.05, 0.2, 1.0)
"""Pauses between checks whose reads met files an expiry was deleting."""


class Verdict(enum.Enum):
    ON_CHAIN = "on the chain"
    OFF_CHAIN = "off the chain"
    UNKNOWN = "undecidable: gone, or its successors' files too, before it could be checked"


def chain_verdict(
    snapshots: SnapshotManager,
    manifests: ManifestIO,
    ours: Snapshot,
    delta: Sequence[ManifestEntry],
) -> Verdict:
    """Where ``ours``, just published with the entries ``delta``, stands (module docstring)."""
    verdict = _verdict(snapshots, manifests, ours, delta)
    for wait in _WAITS_S:
        if verdict is not Verdict.UNKNOWN:
            break
        time.sleep(wait)
        verdict = _verdict(snapshots, manifests, ours, delta)
    return verdict


def _verdict(
    snapshots: SnapshotManager,
    manifests: ManifestIO,
    ours: Snapshot,
    delta: Sequence[ManifestEntry],
) -> Verdict:
    ids = snapshots.list_ids()
    if not ids:
        return Verdict.UNKNOWN
    present = set(ids)
    top = ids[-1]
    if top == ours.id:
        return Verdict.ON_CHAIN
    here = ours.id in present
    if here and any(i not in present for i in range(ours.id + 1, top)):
        return Verdict.OFF_CHAIN
    try:
        if here and _lineage(snapshots, manifests, ours, top):
            return Verdict.ON_CHAIN
    except (CorruptTableError, OSError):
        pass
    try:
        return _reached(snapshots, manifests, ours, delta, top)
    except (CorruptTableError, OSError):
        return Verdict.UNKNOWN


def _lineage(snapshots: SnapshotManager, manifests: ManifestIO, ours: Snapshot, top: int) -> bool:
    """Each snapshot after ours up to ``top`` has its predecessor's delta manifests in its base
    list; False when a step cannot show it (merged manifests, an empty delta)."""
    previous = ours
    for sid in range(ours.id + 1, top + 1):
        following = snapshots.snapshot(sid)
        delta = _names(manifests, previous.delta_manifest_list)
        if not delta or not delta <= _names(manifests, following.base_manifest_list):
            return False
        previous = following
    return True


def _reached(
    snapshots: SnapshotManager,
    manifests: ManifestIO,
    ours: Snapshot,
    delta: Sequence[ManifestEntry],
    top: int,
) -> Verdict:
    """Whether the files ``delta`` changed reached the chain that ends at snapshot ``top``."""
    added = {e.identifier() for e in delta if e.kind == mf.KIND_ADD}
    removed = {e.identifier() for e in delta if e.kind == mf.KIND_DELETE} - added
    if not added and not removed:
        return Verdict.ON_CHAIN  # nothing to lose
    if not added:
        # only removals: the snapshot after ours, if built on it, no longer has them
        following = snapshots.snapshot_if_exists(ours.id + 1)
        if following is None:
            return Verdict.UNKNOWN
        base = _live(manifests, manifests.read_manifest_list(following.base_manifest_list))
        return Verdict.OFF_CHAIN if removed & base else Verdict.ON_CHAIN
    head = snapshots.snapshot(top)
    if added & _live(manifests, manifests.data_manifests(head)):
        return Verdict.ON_CHAIN
    complete = snapshots.snapshot_exists(ours.id)
    for sid in range(ours.id + 1, top + 1):
        following = snapshots.snapshot_if_exists(sid)
        if following is None:
            complete = False
            continue
        metas = manifests.read_manifest_list(following.delta_manifest_list)
        gone = {e.identifier() for e in manifests.read_entries(metas) if e.kind == mf.KIND_DELETE}
        if added & gone:
            return Verdict.ON_CHAIN  # compacted away after ours
    return Verdict.OFF_CHAIN if complete else Verdict.UNKNOWN


def _names(manifests: ManifestIO, list_name: str) -> set[str]:
    return {m.file_name for m in manifests.read_manifest_list(list_name)}


def _live(manifests: ManifestIO, metas: Sequence[mf.ManifestFileMeta]) -> set[tuple[Any, ...]]:
    return {
        e.identifier()
        for e in merge_entries(manifests.read_entries(metas))
        if e.kind == mf.KIND_ADD
    }
