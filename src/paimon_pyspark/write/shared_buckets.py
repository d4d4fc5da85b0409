"""Buckets written by several tasks of one distributed write.

A task of a distributed write (Spark's ``format("paimon")``, a Ray Data write) gets no bucket to
itself: several tasks may write one bucket. Each writes with ``sequence_slot`` = (task index,
``SHARED_BUCKET_STRIDE``), so the records of a primary-key bucket never share a sequence number
and no task compacts a bucket at its commit (TableWrite). Append data files hold no sequence
column, so their metadata is renumbered before the commit instead; not on a row-tracking
table, whose commit gives each task's first file the snapshot id as its sequence numbers, as
it does Java's tasks' (commit/row_tracking.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from paimon_pyspark.spec.commit_message import CommitMessage

SHARED_BUCKET_STRIDE = 1 << 16
"""Tasks that may share a primary-key bucket interleave their sequence numbers with this stride."""


def renumber_shared_buckets(messages: Sequence[CommitMessage]) -> list[CommitMessage]:
    """Give files of a bucket written by several tasks consecutive sequence numbers.

    Every task continues from the bucket's highest sequence number in the snapshot it read, so
    tasks sharing a bucket overlap. Append data files hold no sequence column: renumbering the
    metadata makes the bucket look written by one writer, as Java's shuffled writes produce.
    """
    groups: dict[tuple[bytes, int], list[int]] = {}
    for i, m in enumerate(messages):
        groups.setdefault((m.partition, m.bucket), []).append(i)
    out = list(messages)
    for indices in groups.values():
        files = [f for i in indices for f in out[i].data_increment.new_files]
        if len(indices) < 2 or not files:
            continue
        next_seq = min(f.min_sequence_number for f in files)
        for i in indices:
            renumbered = []
            for f in out[i].data_increment.new_files:
                last = next_seq + f.row_count - 1
                renumbered.append(
                    replace(f, min_sequence_number=next_seq, max_sequence_number=last)
                )
                next_seq += f.row_count
            increment = replace(out[i].data_increment, new_files=tuple(renumbered))
            out[i] = replace(out[i], data_increment=increment)
    return out
