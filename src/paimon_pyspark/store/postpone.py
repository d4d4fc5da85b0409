"""Postpone-bucket files as the store sees them: their names, their order, and the bucket counts
fixed-bucket writes of a postpone table use.

Mirrors org.apache.paimon.table.PostponeUtils and the file naming of
org.apache.paimon.postpone.PostponeBucketWriter.
"""

from __future__ import annotations

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.file_store import FileStore


def postpone_file_prefix(data_file_prefix: str, commit_user: str, write_id: int) -> str:
    """``data--u-<user>-s-<id>-w-`` with the default prefix (Java's double dash included)."""
    return f"{data_file_prefix}-u-{commit_user}-s-{write_id}-w-"


def known_num_buckets(store: FileStore, snapshot: Snapshot | None) -> dict[bytes, int]:
    """Partition bytes -> bucket count of its real buckets (PostponeUtils.getKnownNumBuckets)."""
    known: dict[bytes, int] = {}
    if snapshot is None:
        return known
    for e in store.manifest_io.live_entries(snapshot):
        if e.bucket < 0 or e.total_buckets <= 0:
            continue
        old = known.setdefault(e.partition, e.total_buckets)
        if old != e.total_buckets:
            raise CorruptTableError(
                f"Table '{store.name}': a partition has real buckets of two bucket counts, "
                f"{old} and {e.total_buckets}."
            )
    return known


def order_postpone_files(files: list[DataFileMeta]) -> list[DataFileMeta]:
    """Postpone files in the order their records were written: by creation time, then by
    writer and file counter (``...-w-<uuid>-<n>``); the sort is stable, so files created in
    the same millisecond keep their manifest (commit) order."""

    def counter(f: DataFileMeta) -> int:
        stem = f.file_name.rsplit(".", 1)[0]
        tail = stem.rsplit("-", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    return sorted(files, key=lambda f: (f.creation_time, counter(f)))
