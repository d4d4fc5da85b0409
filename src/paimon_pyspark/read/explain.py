"""``ReadBuilder.explain()``: what a scan would read, without reading a data file.

pypaimon's ExplainResult (pypaimon.read.explain), filled from our planner: the snapshot, the
pushed-down filter, projection and limit, the pruning funnel and the shape of the splits. The
funnel is measured by planning the same snapshot three times (no filter, the filter's partition
conjuncts only, the whole filter), so ``partition_pruning`` counts partitions and
``file_skipping`` counts files the stats dropped; there is no separate bucket pruning stage
(``bucket_pruning`` is None), and no data evolution (always off here). With deletion vectors,
the files that carry one are counted, and a raw-convertible split's merged row count is its
rows less the vectors' cardinalities.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.scan import DataSplit, PartitionRow, TableScan
from paimon_pyspark.store.file_store import FileStore


@dataclass
class PruningStat:
    """Before and after one pruning stage."""

    before: int | None
    after: int | None

    @property
    def pruned(self) -> int | None:
        if self.before is None or self.after is None:
            return None
        return self.before - self.after

    def format(self) -> str:
        before = "?" if self.before is None else str(self.before)
        after = "?" if self.after is None else str(self.after)
        return f"{before} -> {after}  (pruned {self.pruned})"


@dataclass
class ExplainSplitInfo:
    """One split, listed by ``explain(verbose=True)``."""

    partition: dict[str, Any]
    bucket: int
    file_count: int
    row_count: int
    merged_row_count: int | None
    file_size: int
    raw_convertible: bool
    has_deletion_vectors: bool
    level_histogram: dict[int, int]
    deletion_file_count: int
    file_paths: list[str]


@dataclass
class ExplainResult:
    """The scan plan in numbers; ``str()`` renders it as pypaimon does."""

    table_identifier: str
    is_primary_key_table: bool
    bucket_mode: str
    deletion_vectors_enabled: bool
    data_evolution_enabled: bool
    snapshot_id: int | None
    schema_id: int | None
    predicate: str | None = None
    projection: list[str] | None = None
    limit: int | None = None
    partition_pruning: PruningStat | None = None
    bucket_pruning: PruningStat | None = None
    file_skipping: PruningStat | None = None
    file_count: int = 0
    total_file_size: int = 0
    estimated_row_count: int = 0
    estimated_merged_row_count: int | None = None
    deletion_file_count: int = 0
    level_histogram: dict[int, int] = field(default_factory=dict)
    split_count: int = 0
    splits_raw_convertible: int = 0
    splits_with_deletion_vectors: int = 0
    splits_all_above_l0: int = 0
    files_per_split_min: int = 0
    files_per_split_max: int = 0
    files_per_split_avg: float = 0.0
    split_size_min: int = 0
    split_size_max: int = 0
    split_size_avg: float = 0.0
    split_size_p50: int = 0
    split_size_p95: int = 0
    splits: list[ExplainSplitInfo] | None = None

    def __str__(self) -> str:
        return render_explain(self)


def explain(
    store: FileStore,
    predicate: Predicate | None,
    projection: list[str] | None,
    limit: int | None,
    verbose: bool,
) -> ExplainResult:
    scan = TableScan(store, predicate, limit)
    plan = scan.plan()
    splits = plan.splits()
    pk = bool(store.primary_keys)
    snapshot = scan.snapshot() if plan.snapshot_id is not None else None
    all_splits = TableScan(store, None, None).plan().splits()
    keys = set(store.partition_keys)
    on_keys = predicate.extract(keys) if predicate is not None and keys else None
    by_partition = TableScan(store, on_keys, None).plan().splits() if on_keys else all_splits
    result = ExplainResult(
        table_identifier=store.name,
        is_primary_key_table=pk,
        bucket_mode=str(store.bucket_mode),
        deletion_vectors_enabled=store.options.deletion_vectors_enabled,
        data_evolution_enabled=False,
        snapshot_id=plan.snapshot_id,
        schema_id=None if snapshot is None else snapshot.schema_id,
        predicate=None if predicate is None else str(predicate),
        projection=projection,
        limit=limit,
        partition_pruning=PruningStat(_partitions(all_splits), _partitions(by_partition)),
        file_skipping=PruningStat(_files(by_partition), _files(splits)),
    )
    sizes = sorted(s.file_size for s in splits)
    counts = [len(s.files) for s in splits]
    for s in splits:
        for f in s.files:
            result.level_histogram[f.level] = result.level_histogram.get(f.level, 0) + 1
    dv = store.options.deletion_vectors_enabled
    raw = [_raw_convertible(s, pk, dv) for s in splits]
    result.file_count = sum(counts)
    result.total_file_size = sum(sizes)
    result.estimated_row_count = sum(s.row_count for s in splits)
    if all(raw):
        live = [s.live_row_count for s in splits]
        if all(n is not None for n in live):
            result.estimated_merged_row_count = sum(n or 0 for n in live)
    result.deletion_file_count = sum(_deletion_count(s) for s in splits)
    result.splits_with_deletion_vectors = sum(_deletion_count(s) > 0 for s in splits)
    result.split_count = len(splits)
    result.splits_raw_convertible = sum(raw)
    result.splits_all_above_l0 = sum(all(f.level > 0 for f in s.files) for s in splits)
    if splits:
        result.files_per_split_min, result.files_per_split_max = min(counts), max(counts)
        result.files_per_split_avg = sum(counts) / len(counts)
        result.split_size_min, result.split_size_max = sizes[0], sizes[-1]
        result.split_size_avg = sum(sizes) / len(sizes)
        result.split_size_p50 = sizes[(len(sizes) - 1) // 2]
        result.split_size_p95 = sizes[min(len(sizes) - 1, int(len(sizes) * 0.95))]
    if verbose:
        result.splits = [_split_info(s, r) for s, r in zip(splits, raw, strict=True)]
    return result


def _partitions(splits: list[DataSplit]) -> int:
    return len({s.partition for s in splits})


def _files(splits: list[DataSplit]) -> int:
    return sum(len(s.files) for s in splits)


def _raw_convertible(split: DataSplit, pk: bool, deletion_vectors: bool) -> bool:
    """Readable without a merge: any append split; a primary-key one whose files are above
    level 0, without retractions, in one level, or in any levels with deletion vectors
    (pypaimon's and Java's rule)."""
    if not pk:
        return True
    files = split.files
    return all(f.level != 0 and not f.delete_row_count for f in files) and (
        deletion_vectors or len({f.level for f in files}) == 1
    )


def _deletion_count(split: DataSplit) -> int:
    return sum(d is not None for d in split.deletion_files)


def _split_info(split: DataSplit, raw: bool) -> ExplainSplitInfo:
    levels: dict[int, int] = {}
    for f in split.files:
        levels[f.level] = levels.get(f.level, 0) + 1
    partition = split.partition
    spec = partition.to_dict() if isinstance(partition, PartitionRow) else {}
    return ExplainSplitInfo(
        partition=spec,
        bucket=split.bucket,
        file_count=len(split.files),
        row_count=split.row_count,
        merged_row_count=split.live_row_count if raw else None,
        file_size=split.file_size,
        raw_convertible=raw,
        has_deletion_vectors=_deletion_count(split) > 0,
        level_histogram=levels,
        deletion_file_count=_deletion_count(split),
        file_paths=split.file_paths,
    )


def render_explain(result: ExplainResult) -> str:
    out = io.StringIO()

    def line(label: str, value: str) -> None:
        out.write(f"{label + ':':<19} {value}\n")

    out.write("== Paimon Scan Plan ==\n")
    line("Table", f"{result.table_identifier} ({_flags(result)})")
    if result.snapshot_id is None:
        line("Snapshot", "<none>  (table is empty or has no snapshot)")
    else:
        line("Snapshot", f"{result.snapshot_id}  (schema {result.schema_id})")
    line("Predicate", result.predicate or "<none>")
    projection = result.projection
    line("Projection", f"[{', '.join(projection)}]" if projection else "<all columns>")
    line("Limit", "<none>" if result.limit is None else str(result.limit))
    out.write("\n")
    for label, stat in (
        ("Partition pruning", result.partition_pruning),
        ("Bucket pruning", result.bucket_pruning),
        ("File skipping", result.file_skipping),
    ):
        line(label, stat.format() if stat else "n/a")
    out.write("\n")
    line("Splits", str(result.split_count))
    if result.split_count:
        n = result.split_count
        out.write(f"  raw-convertible:  {result.splits_raw_convertible} / {n}\n")
        out.write(f"  all-above-L0:     {result.splits_all_above_l0} / {n}\n")
        if result.deletion_vectors_enabled:
            out.write(f"  with DVs:         {result.splits_with_deletion_vectors} / {n}\n")
        out.write(
            f"  files/split:      min={result.files_per_split_min}  "
            f"max={result.files_per_split_max}  avg={result.files_per_split_avg:.2f}\n"
        )
        out.write(
            f"  size/split:       min={result.split_size_min}  p50={result.split_size_p50}  "
            f"p95={result.split_size_p95}  max={result.split_size_max}\n"
        )
    out.write("\n")
    line("Files", str(result.file_count))
    line("Total size", f"{result.total_file_size} B")
    line("Estimated rows", f"{result.estimated_row_count:,}")
    if result.deletion_vectors_enabled:
        line("Deletion vectors", f"{result.deletion_file_count} files")
        merged = result.estimated_merged_row_count
        if merged is not None:
            line("Rows after DVs", f"{merged:,}")
    if result.level_histogram:
        levels = sorted(result.level_histogram.items())
        line("Level histogram", "  ".join(f"L{lv}={n}" for lv, n in levels))
    for i, s in enumerate(result.splits or []):
        if i == 0:
            out.write("\nSplits[]\n")
        out.write(
            f"  [{i}] partition={s.partition} bucket={s.bucket} files={s.file_count} "
            f"size={s.file_size} rows={s.row_count} raw={s.raw_convertible}"
            + (f" dvs={s.deletion_file_count}" if result.deletion_vectors_enabled else "")
            + "\n"
        )
        for path in s.file_paths:
            out.write(f"      file: {path}\n")
    return out.getvalue().rstrip("\n")


def _flags(result: ExplainResult) -> str:
    flags = ["PK" if result.is_primary_key_table else "Append", result.bucket_mode]
    if result.deletion_vectors_enabled:
        flags.append("DV")
    return ", ".join(flags)
