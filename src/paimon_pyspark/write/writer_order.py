"""The order in which Java's batch write hands out its partitions' commit messages.

AbstractFileStoreWrite keeps its writers in a ``HashMap<BinaryRow, ...>`` filled by ``put`` as
partitions first appear, and ``prepareCommit`` walks it: bins in index order (the partition's
``BinaryRow.hashCode``, Murmur over its bytes, spread ``h ^ h >>> 16``, masked by the table size),
keys of one bin in insertion order (``put`` appends at the tail and a resize keeps that order).
spec/java_hashmap.py replays that map.

The order matters where the commit numbers rows in message order: a row-tracking table's
``_ROW_ID`` (commit/row_tracking.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.java_hashmap import JavaHashMap
from paimon_pyspark.spec.murmur import hash_bytes


def java_partition_order(partitions: Sequence[bytes]) -> list[int]:
    """Positions of ``partitions`` (distinct, serialized with their arity, in the order they
    were first written) as Java's writer map iterates them."""
    writers = JavaHashMap()
    for i, p in enumerate(partitions):
        writers.put(p, hash_bytes(p[4:]), i)
    return [int(i) for _, i in writers.items()]


def in_java_order(messages: Sequence[CommitMessage]) -> list[CommitMessage]:
    """``messages`` (in the order their writers were created) regrouped as Java's
    ``prepareCommit`` returns them: partition by partition in writer-map order."""
    by_partition: dict[bytes, list[CommitMessage]] = {}
    for m in messages:
        by_partition.setdefault(m.partition, []).append(m)
    keys = list(by_partition)
    return [m for i in java_partition_order(keys) for m in by_partition[keys[i]]]
