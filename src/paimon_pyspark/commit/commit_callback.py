"""Callbacks run after a successful commit, as pypaimon's (pypaimon.write.commit_callback).

Mirrors org.apache.paimon.table.sink.CommitCallback in pypaimon's shape: ``call(context)`` with
the new snapshot, the manifest entries it committed (its delta: ADD and, for an overwrite or a
compaction, DELETE entries) and the commit identifier. A commit that makes two snapshots (an
append and a compaction) calls each callback once per snapshot, in order.

A callback runs after the snapshot is published, so an exception from it reaches the caller of
``commit`` with the commit already in the table; like pypaimon's and Java's, callbacks must be
idempotent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from paimon_pyspark.spec.manifest import ManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot


@dataclass
class CommitCallbackContext:
    """What a callback is handed: the snapshot, its committed entries, the identifier."""

    snapshot: Snapshot
    commit_entries: list[ManifestEntry]
    identifier: int


class CommitCallback(ABC):
    """Implement ``call``; ``close`` runs when the TableCommit closes."""

    @abstractmethod
    def call(self, context: CommitCallbackContext) -> None:
        """Invoked after a snapshot is successfully committed."""

    def close(self) -> None:  # noqa: B027 - optional hook, as in pypaimon
        """Release what the callback holds."""
