"""Partition expiry: ``partition.expiration-time`` and ``CALL sys.expire_partitions``.

Mirrors org.apache.paimon.operation.PartitionExpire. (Filled in by issue 41.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


def expire_partitions_after_commit(store: FileStore, identifier: int) -> None:
    """The partition expiry step of a commit's maintenance (nothing when the table sets no
    ``partition.expiration-time``)."""
    del store, identifier
