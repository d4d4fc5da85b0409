"""The merge of a snapshot's manifests into its successor's base list: full, else minor.

Mirrors org.apache.paimon.operation.ManifestFileMerger. Every commit merges the previous
snapshot's base and delta manifests with the table's ``manifest.target-file-size``,
``manifest.merge-min-count`` and ``manifest.full-compaction-threshold-size``;
``CALL sys.compact_manifest`` merges with a minimum count and a threshold of 1, so every
small manifest and every DELETE entry goes.

    full   the manifests that must change (smaller than the target, or holding DELETE
           entries) weigh at least the threshold -> every DELETE entry is dropped with the
           ADD it cancels: the manifests that must change, and those holding a deleted file,
           are rewritten; the others (pruned first by their partition stats) stay as they are.
           With at most one manifest to rewrite, the minor merge runs instead.
    minor  runs of manifests are merged once they reach the target size; the last run only if
           it has at least the minimum count. ADD then DELETE of a file cancel each other.

The merge is atomic as Java's: on any failure the manifests it wrote are deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.manifest import ManifestFileMeta
from paimon_pyspark.store.manifest_io import ManifestIO, merge_entries
from paimon_pyspark.store.paths import PathFactory

Merged = tuple[list[ManifestFileMeta], list[str]]
"""The merged manifest list, and the names of the manifests the merge wrote."""


def merge_manifests(
    io: ManifestIO,
    metas: Sequence[ManifestFileMeta],
    pf: PathFactory,
    schema_id: int,
    target_size: int,
    min_count: int,
    full_threshold: int,
) -> Merged:
    """Java's ``ManifestFileMerger.merge``: a full compaction if it is due, else the minor
    merge; returns the new list and the manifests written for it."""
    written: list[str] = []
    try:
        full = _try_full(io, list(metas), pf, schema_id, target_size, full_threshold, written)
        if full is not None:
            return full, written
        return _minor(io, list(metas), pf, schema_id, target_size, min_count, written), written
    except BaseException:
        io.delete_quietly(written)
        raise


def _minor(
    io: ManifestIO,
    metas: list[ManifestFileMeta],
    pf: PathFactory,
    schema_id: int,
    target_size: int,
    min_count: int,
    written: list[str],
) -> list[ManifestFileMeta]:
    result: list[ManifestFileMeta] = []
    group: list[ManifestFileMeta] = []
    size = 0

    def merge(candidates: list[ManifestFileMeta]) -> None:
        if len(candidates) == 1:
            result.append(candidates[0])
            return
        entries = merge_entries(io.read_entries(candidates))
        if entries:
            new = io.write_manifests(entries, pf, schema_id, target_size)
            written.extend(m.file_name for m in new)
            result.extend(new)

    for meta in metas:
        size += meta.file_size
        group.append(meta)
        if size >= target_size:
            merge(group)
            group, size = [], 0
    if len(group) >= min_count:
        merge(group)
    else:
        result.extend(group)
    return result


def _must_change(meta: ManifestFileMeta, target_size: int) -> bool:
    return meta.num_deleted_files > 0 or meta.file_size < target_size


def _try_full(
    io: ManifestIO,
    metas: list[ManifestFileMeta],
    pf: PathFactory,
    schema_id: int,
    target_size: int,
    threshold: int,
    written: list[str],
) -> list[ManifestFileMeta] | None:
    if threshold <= 0:
        raise ValueError("Manifest full compaction size trigger cannot be zero.")
    delta_size = sum(m.file_size for m in metas if _must_change(m, target_size))
    if delta_size < threshold:
        return None
    with_deletes = [m for m in metas if m.num_deleted_files > 0]
    deleted = {e.identifier() for e in io.read_entries(with_deletes) if e.kind == mf.KIND_DELETE}
    result: list[ManifestFileMeta] = []
    to_merge: list[ManifestFileMeta] = []
    touched = _PartitionRanges(io, {key[0] for key in deleted})
    for meta in metas:
        if _must_change(meta, target_size) or touched.may_hold(meta):
            to_merge.append(meta)
        else:
            result.append(meta)
    if len(to_merge) <= 1:
        return None
    kept: list[Any] = []
    for meta in to_merge:
        change = _must_change(meta, target_size)
        entries = []
        for e in io.read_manifest(meta.file_name):
            if e.kind == mf.KIND_DELETE:
                continue
            if e.identifier() in deleted:
                change = True
            else:
                entries.append(e)
        if change:
            kept.extend(entries)
        else:
            result.append(meta)
    new = io.write_manifests(kept, pf, schema_id, target_size) if kept else []
    written.extend(m.file_name for m in new)
    return result + new


class _PartitionRanges:
    """Java's MultiplePartitionPredicate over the partitions of the deleted files, tested on a
    manifest's partition stats: per field, a deleted partition's value may lie in the
    manifest's range (or both hold nulls). No deleted file: no manifest may hold one; an
    unpartitioned table: every manifest may."""

    def __init__(self, io: ManifestIO, partitions: set[bytes]) -> None:
        self.types = io.partition_types
        self.none = not partitions
        self.ranges: list[tuple[Any, Any, bool]] = []
        if self.none or not self.types:
            return
        rows = [deserialize_with_arity(p, self.types) for p in partitions]
        for i in range(len(self.types)):
            values = [r[i] for r in rows if r[i] is not None]
            has_null = len(values) < len(rows)
            lo = min(values) if values else None
            hi = max(values) if values else None
            self.ranges.append((lo, hi, has_null))

    def may_hold(self, meta: ManifestFileMeta) -> bool:
        if self.none:
            return False
        if not self.types:
            return True
        stats = meta.partition_stats
        mins = deserialize_with_arity(stats.min_values, self.types)
        maxs = deserialize_with_arity(stats.max_values, self.types)
        nulls = stats.null_counts
        for i, (lo, hi, has_null) in enumerate(self.ranges):
            count = None if nulls is None else nulls[i]
            manifest_nulls = count is None or count > 0
            fits = has_null and manifest_nulls
            if lo is not None and mins[i] is not None and maxs[i] is not None:
                fits = fits or (maxs[i] >= lo and mins[i] <= hi)
            elif lo is not None:
                fits = True  # no range to compare with: keep it in the merge
            if not fits:
                return False
        return True
