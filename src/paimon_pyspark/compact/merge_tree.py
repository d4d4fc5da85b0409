"""Compacting one bucket of a primary-key table: pick, merge, rewrite or upgrade.

Mirrors org.apache.paimon.mergetree.compact.{MergeTreeCompactManager, MergeTreeCompactTask,
MergeTreeCompactRewriter} and the compaction bookkeeping of
org.apache.paimon.mergetree.MergeTreeWriter (updateCompactResult):

    files of the bucket -> Levels -> runs
    round 1   full: every run to the top level     minor: universal pick
    round 2   universal pick on the levels round 1 left (Java's batch prepareCommit triggers
              one more compaction and waits for it)
    per unit  files cut into key sections; overlapping sections are merged and rewritten, a
              lone big file is upgraded (same file, new level) instead of rewritten
    result    compact_before = inputs (as first seen), compact_after = outputs still alive

Retractions are dropped only when no older data can hide outside the unit (see
``universal.drop_delete``). Records are merged with the table's merge function, the same one
the write buffer and merge-on-read use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_pyspark.compact.settings import CompactSettings
from paimon_pyspark.compact.universal import (
    CompactStrategy,
    CompactUnit,
    ForceUpLevel0Compaction,
    KeyOrder,
    Levels,
    SortedRun,
    UniversalCompaction,
    drop_delete,
    interval_partition,
    key_order,
    pick_full_compaction,
    pick_minor,
)
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.read.kv_read import read_kv_records
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.table.paths import PathFactory
from paimon_pyspark.write.key_value_writer import write_sorted_run

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable


@dataclass
class CompactResult:
    before: list[DataFileMeta] = field(default_factory=list)
    after: list[DataFileMeta] = field(default_factory=list)

    def merge(self, other: CompactResult) -> None:
        self.before += other.before
        self.after += other.after


def strategy_of(s: CompactSettings) -> CompactStrategy:
    universal = UniversalCompaction(
        s.max_size_amplification_percent, s.size_ratio, s.num_sorted_run_compaction_trigger
    )
    return ForceUpLevel0Compaction(universal) if s.force_up_level_0 else universal


class MergeTreeRewriter:
    """Reads files of one bucket as key-value records, merges them and writes a sorted run."""

    def __init__(self, table: FileStoreTable, partition_values: Sequence[Any], bucket: int) -> None:
        self.table = table
        self.partition_values = list(partition_values)
        self.bucket = bucket
        rel = table.partition_rel_path(self.partition_values)
        self.bucket_path = PathFactory(table.path).bucket_path(rel, bucket)
        self.keys = table.table_schema.trimmed_primary_keys()
        self.merge_settings = MergeSettings.from_table(table)

    def rewrite(
        self, output_level: int, dropping: bool, sections: Sequence[Sequence[SortedRun]]
    ) -> CompactResult:
        files = [f for section in sections for run in section for f in run.files]
        records = read_kv_records(self.table, self.bucket_path, files)
        merged = merge(records, self.keys, self.merge_settings, dropping)
        after = write_sorted_run(
            self.table,
            self.partition_values,
            self.bucket,
            merged,
            output_level,
            FILE_SOURCE_COMPACT,
        )
        return CompactResult(list(files), list(after))

    def delete(self, f: DataFileMeta) -> None:
        self.table.file_io.delete_quietly(f"{self.bucket_path}/{f.file_name}")

    @staticmethod
    def upgrade(output_level: int, f: DataFileMeta) -> CompactResult:
        return CompactResult([f], [f.with_level(output_level)])


def run_unit(
    unit: CompactUnit,
    dropping: bool,
    max_level: int,
    s: CompactSettings,
    order: KeyOrder,
    rewriter: MergeTreeRewriter,
) -> CompactResult:
    """One compaction unit (Java's MergeTreeCompactTask.doCompact).

    Sections that overlap are merged. A section of one run is walked file by file: small files
    join the pending rewrite, a big file first flushes what is pending, then is upgraded. A
    file is never skipped over, since that would break the key order of the output level.
    """
    result = CompactResult()
    output = unit.output_level
    candidate: list[list[SortedRun]] = []

    def flush() -> None:
        if not candidate:
            return
        if len(candidate) == 1 and len(candidate[0]) == 1:
            for f in candidate[0][0].files:
                upgrade(f)
        else:
            result.merge(rewriter.rewrite(output, dropping, candidate))
        candidate.clear()

    def upgrade(f: DataFileMeta) -> None:
        has_deletes = f.delete_row_count is None or f.delete_row_count > 0
        if (output == max_level and has_deletes) or s.force_rewrite_all_files:
            result.merge(rewriter.rewrite(output, dropping, [[SortedRun((f,))]]))
        elif f.level != output:
            result.merge(MergeTreeRewriter.upgrade(output, f))

    try:
        for section in interval_partition(unit.files, order):
            if len(section) > 1:
                candidate.append(list(section))
                continue
            for f in section[0].files:
                if f.file_size < s.compaction_file_size:
                    candidate.append([SortedRun((f,))])
                else:
                    flush()
                    upgrade(f)
        flush()
    except BaseException:
        inputs = {f.file_name for f in result.before}
        for f in result.after:
            if f.file_name not in inputs:
                rewriter.delete(f)
        raise
    return result


@dataclass
class _Increment:
    """compact_before / compact_after of one bucket across rounds (updateCompactResult)."""

    table: FileStoreTable
    bucket_path: str
    before: dict[str, DataFileMeta] = field(default_factory=dict)
    after: list[DataFileMeta] = field(default_factory=list)

    def add(self, result: CompactResult) -> None:
        after_names = {f.file_name for f in result.after}
        for f in result.before:
            produced = [a for a in self.after if a.file_name == f.file_name and a.level == f.level]
            if produced:
                self.after.remove(produced[0])
                # an intermediate file of this compaction, unless an upgrade shares it
                if f.file_name not in self.before and f.file_name not in after_names:
                    self.table.file_io.delete_quietly(f"{self.bucket_path}/{f.file_name}")
            else:
                self.before.setdefault(f.file_name, f)
        self.after += result.after

    def written(self) -> list[DataFileMeta]:
        return [f for f in self.after if f.file_name not in self.before]


def compact_kv_bucket(
    table: FileStoreTable,
    partition_values: Sequence[Any],
    bucket: int,
    files: Sequence[DataFileMeta],
    full: bool,
) -> tuple[list[DataFileMeta], list[DataFileMeta]]:
    """Compact one bucket; returns (compact_before, compact_after), both empty if nothing to do.

    On failure every file this call wrote is deleted before the error propagates; upgraded
    files are inputs still in use and are never deleted.
    """
    s = CompactSettings.from_table(table)
    key_fields = [table.table_schema.field(k) for k in table.table_schema.trimmed_primary_keys()]
    order = key_order([f.type for f in key_fields])
    levels = Levels(files, s.num_levels, order)
    strategy = strategy_of(s)
    rewriter = MergeTreeRewriter(table, partition_values, bucket)
    increment = _Increment(table, rewriter.bucket_path)
    try:
        for round_ in range(2):
            runs = levels.level_sorted_runs()
            if round_ == 0 and full:
                unit = pick_full_compaction(levels.num_levels, runs, s.force_rewrite_all_files)
            else:
                unit = pick_minor(strategy, levels.num_levels, runs)
            if unit is None:
                continue
            dropping = drop_delete(unit, levels)
            result = run_unit(unit, dropping, levels.max_level, s, order, rewriter)
            levels.update(result.before, result.after)
            increment.add(result)
    except BaseException:
        for f in increment.written():
            rewriter.delete(f)
        raise
    return list(increment.before.values()), increment.after
