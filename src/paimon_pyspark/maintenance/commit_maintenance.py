"""What a commit does to the table after it lands, in Java 1.4.2's order.

Mirrors TableCommitImpl.maintain: automatic tags are created (``tag.automatic-creation``
process-time or watermark),
tags past their ``time_retained`` expire, then, when the commit added a snapshot, partitions
expire (``partition.expiration-time``), consumers expire (``consumer.expiration-time``, before
snapshots so an expired consumer holds none), snapshots expire and, when the table keeps its
changelog longer than its snapshots, long-lived changelogs expire. Nothing of it runs under
``write-only`` (AbstractFileStoreTable.newCommit builds none of them then). A batch write's
``batch`` tag comes last, after all of it (Java's writers create it after the commit).

Every step is crash-safe on its own: each leaves the table readable as one of its snapshots,
and a later run (the next commit's, or the procedure's) finishes what a failed one began.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_pyspark.maintenance.expire import ExpireSnapshots
from paimon_pyspark.maintenance.expire_changelog import ExpireChangelog
from paimon_pyspark.maintenance.partition_expire import expire_partitions_after_commit
from paimon_pyspark.maintenance.tag_automatic import (
    create_tag_after_batch_write,
    create_tags_after_commit,
    expire_tags_after_commit,
)
from paimon_pyspark.read.consumer_progress import expire_consumers

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


def maintain(
    store: FileStore,
    latest_id: int | None,
    identifier: int,
    do_expire: bool = True,
    batch_write: bool = False,
    commit_user: str | None = None,
) -> None:
    """Run the maintenance of one commit (``latest_id``: the snapshot it ended at, if any;
    ``identifier``: its commit identifier; ``do_expire``: whether it added a snapshot, Java's
    ``newSnapshots > 0 || expireForEmptyCommit``; ``batch_write``: a batch write's commit,
    which then creates its ``batch`` tag, even under ``write-only``, as Java's writers do;
    ``commit_user``: the committer, whose user the partition drops carry, as in Java)."""
    options = store.options
    if not options.write_only:
        _maintain(store, latest_id, identifier, do_expire, commit_user)
    if batch_write:
        create_tag_after_batch_write(store)


def _maintain(
    store: FileStore,
    latest_id: int | None,
    identifier: int,
    do_expire: bool,
    commit_user: str | None,
) -> None:
    options = store.options
    options.snapshot_expire_execution_mode  # noqa: B018 - validates: sync and async run here
    create_tags_after_commit(store)
    if not do_expire:
        return
    expire_tags_after_commit(store)
    expire_partitions_after_commit(store, identifier, commit_user)
    expire_consumers(store)
    ExpireSnapshots(store).expire(latest_id=latest_id)
    if options.changelog_lifecycle_decoupled:
        ExpireChangelog(store).expire()


__all__ = ["maintain"]
