"""A stream's consumer: where a stream with ``consumer-id`` starts, and the progress it records.

Mirrors Java 1.4.2: AbstractDataTableScan.createStartingScanner (a streaming scan whose
consumer file exists starts at its ``nextSnapshot``, or at the earliest readable snapshot if
that one expired, unless ``consumer.ignore-progress``), DataTableStreamScan
.notifyCheckpointComplete (the consumer file gets the next snapshot the stream will read once
everything before it is processed) and TableCommitImpl.maintain (``consumer.expiration-time``:
consumers not written for that long are deleted after each commit, before snapshot expiry, so
an abandoned consumer stops holding snapshots). A consumer's ``nextSnapshot`` keeps that
snapshot and every later one from expiring (maintenance/expire.py).

Who records: a Python stream scan records the position of its previous plan when it is asked
for the next one (the caller has processed it: pypaimon's StreamReadBuilder.with_consumer_id),
or at ``notify_checkpoint_complete``; the Spark source records when Spark commits a
micro-batch's end offset (spark/streaming.py). ``consumer.mode`` tells Flink's parallel readers
how to agree on one position; one planner per stream here records the stream's own position in
both modes.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from paimon_pyspark.store.changelog_manager import earliest_readable_id
from paimon_pyspark.store.managers import Consumer, ConsumerManager, check_consumer_id

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


def consumer_manager(store: FileStore) -> ConsumerManager:
    return store.consumer_manager


class ConsumerProgress:
    """One stream's consumer: its start, and its recorded position (each write only when the
    position moved)."""

    def __init__(self, store: FileStore, consumer_id: str) -> None:
        self.store = store
        self.consumer_id = check_consumer_id(consumer_id)
        self.manager = consumer_manager(store)
        self._recorded: int | None = None

    @staticmethod
    def of(store: FileStore, consumer_id: str | None = None) -> ConsumerProgress | None:
        """The stream's consumer: ``consumer_id`` if given, else option ``consumer-id``; None
        without either."""
        chosen = consumer_id if consumer_id is not None else store.options.consumer_id
        return None if chosen is None else ConsumerProgress(store, chosen)

    def start(self) -> int | None:
        """The snapshot a new stream starts reading at (its deltas from there on), or None to
        start by ``scan.mode``: no consumer file, ``consumer.ignore-progress``, or a table
        without snapshots."""
        if self.store.options.consumer_ignore_progress:
            return None
        consumer = self.manager.consumer(self.consumer_id)
        if consumer is None:
            return None
        earliest = earliest_readable_id(self.store)
        if earliest is None:
            return None
        return max(consumer.next_snapshot, earliest)

    def record(self, next_snapshot: int | None) -> None:
        """Write ``{"nextSnapshot": next_snapshot}``: every snapshot before it is processed."""
        if next_snapshot is None or next_snapshot == self._recorded:
            return
        self.manager.reset_consumer(self.consumer_id, Consumer(int(next_snapshot)))
        self._recorded = int(next_snapshot)


def expire_consumers(store: FileStore, now_ms: int | None = None) -> list[str]:
    """Delete the consumers not written for ``consumer.expiration-time`` (nothing when unset);
    returns their ids. Run after a commit, before snapshot expiry, as Java's maintain."""
    expiration = store.options.consumer_expiration_ms
    if expiration is None:
        return []
    now = time.time() * 1000 if now_ms is None else now_ms
    return consumer_manager(store).expire((now - expiration) / 1000)
