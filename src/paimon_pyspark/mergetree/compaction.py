"""Compacting one bucket of a primary-key table: pick, merge, rewrite or upgrade.

Mirrors org.apache.paimon.mergetree.compact.{MergeTreeCompactManager, MergeTreeCompactTask,
MergeTreeCompactRewriter} and the compaction bookkeeping of
org.apache.paimon.mergetree.MergeTreeWriter (updateCompactResult):

    files of the bucket -> Levels -> runs
    round 1   full: every run to the top level     minor: universal pick
    round 2   universal pick on the levels round 1 left (Java's batch prepareCommit triggers
              one more compaction and waits for it)
    per unit  files cut into key sections; overlapping sections are merged and rewritten, a
              lone big file is upgraded (same file, new level) instead of rewritten; the runs
              of the sections rewritten together are merged as one stream of key slices
              (``sort_merge``, ``lanes``), batch by batch, so memory does not grow with the data
    result    compact_before = inputs (as first seen), compact_after = outputs still alive

Retractions are dropped only when no older data can hide outside the unit (see
``universal.drop_delete``; with deletion vectors whenever the output is above level 0).
Records are merged with the table's merge function, the same one the write buffer and
merge-on-read use.

Tables that need lookup (Java's CoreOptions.needLookup: ``first-row``, deletion vectors,
``changelog-producer = lookup``, ``force-lookup``) pick with ForceUpLevel0Compaction, and
``TableWrite`` compacts their buckets at every commit. First-row tables rewrite with
``FirstRowLookupRewriter`` (Java's LookupMergeTreeCompactRewriter with
FirstRowMergeFunctionWrapper): a key seen only in level-0 files is dropped when a level above the
output already holds it, since the first row of a key is final. Tables with deletion vectors
rewrite with ``dv_lookup.DvLookupRewriter``, which marks the rows of levels above that the output
replaces in the bucket's vectors (``dv``), and a full compaction also rewrites top-level files
that have a vector. Other lookup tables rewrite with ``lookup_changelog.LookupRewriter``
(LookupMergeFunction: of a key's records above level 0 only the lowest level's take part). With
``changelog-producer = lookup`` each of them writes the changelog of the level-0 records it
pushes up (``lookup_changelog``), returned in ``BucketCompaction.changelog``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.io.data_file_reader import iter_data_file, iter_kv_records
from paimon_pyspark.merge.merge_function import FIRST_ROW, MergeSettings, merge
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.mergetree.dv_lookup import DvLookupRewriter
from paimon_pyspark.mergetree.lookup_changelog import (
    ChangelogSettings,
    LookupRewriter,
)
from paimon_pyspark.mergetree.rewriter import (
    ABOVE_LEVEL_0,
    CompactResult,
    MergeTreeRewriter,
    files_above,
    keys_in,
    lanes,
)
from paimon_pyspark.mergetree.sort_merge import MERGE_BATCH_ROWS, concat, merge_sorted_runs
from paimon_pyspark.mergetree.universal import (
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
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.key_value import RETRACTS, VALUE_KIND
from paimon_pyspark.store.deletion_vectors import BucketDvMaintainer
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.file_store import FileStore


def strategy_of(s: CompactSettings) -> CompactStrategy:
    universal = UniversalCompaction(
        s.max_size_amplification_percent, s.size_ratio, s.num_sorted_run_compaction_trigger
    )
    return ForceUpLevel0Compaction(universal) if s.force_up_level_0 or s.need_lookup else universal


class FirstRowLookupRewriter(MergeTreeRewriter):
    """The rewriter of first-row tables (Java's LookupMergeTreeCompactRewriter with a
    FirstRowMergeFunctionWrapper, whose lookup reads only key columns).

    When level-0 files take part and the output is above level 0, a merged key none of whose
    records came from a file above level 0 is looked up in the levels above the output, and
    dropped if found there: that older row already wins. Otherwise the key is new: with
    ``changelog-producer = lookup`` its first row is the changelog. A level-0 file is rewritten
    this way instead of upgraded unless it goes to the top level (upgradeStrategy), where there
    is nothing above to look up: it moves, and every row of it is new. The key columns of the
    levels above are streamed with the runs, so each slice is looked up in the keys of its own
    key range.
    """

    def __init__(
        self,
        store: FileStore,
        partition_values: Sequence[Any],
        bucket: int,
        levels: Levels,
        batch_rows: int = MERGE_BATCH_ROWS,
    ) -> None:
        super().__init__(store, partition_values, bucket, batch_rows)
        self.levels = levels
        by_name = {f.name: f for f in store.fields}
        self.key_fields = [by_name[k] for k in self.keys]
        self.produce = ChangelogSettings.of(store).produce

    def rewrite(
        self, output_level: int, dropping: bool, sections: Sequence[Sequence[SortedRun]]
    ) -> CompactResult:
        files = [f for section in sections for run in section for f in run.files]
        if output_level == 0 or all(f.level > 0 for f in files):
            return super().rewrite(output_level, dropping, sections)
        return self._lookup_merge(output_level, dropping, sections, write=True)

    def upgrade(self, output_level: int, f: DataFileMeta) -> CompactResult:
        if f.level != 0:
            return super().upgrade(output_level, f)
        section = [[SortedRun((f,))]]
        if output_level != self.levels.max_level:
            return self.rewrite(output_level, False, section)
        moved = super().upgrade(output_level, f)
        if self.produce:  # CHANGELOG_NO_REWRITE
            moved.changelog = self._lookup_merge(output_level, False, section, False).changelog
        return moved

    def _lookup_merge(
        self,
        output_level: int,
        dropping: bool,
        sections: Sequence[Sequence[SortedRun]],
        write: bool,
    ) -> CompactResult:
        files = [f for section in sections for run in section for f in run.files]
        writer = self.open(output_level) if write else None
        changelog = self.open_changelog(output_level) if self.produce else None
        try:
            unit = lanes(sections)
            runs = [self._read_marked(run) for run in unit]
            above = files_above(self.levels, output_level, files)
            runs += [self._read_keys(level) for level in above]
            for pieces in merge_sorted_runs(runs, self.keys):
                merged = self._merge(pieces[: len(unit)], pieces[len(unit) :], dropping)
                if merged is None:
                    continue
                kept, new = merged
                if changelog is not None and new.num_rows:
                    changelog.write(new)
                if writer is not None:
                    writer.add(kept)
            after = writer.close() if writer is not None else []
            changes = changelog.close() if changelog is not None else []
            return CompactResult(list(files), after, changes)
        except BaseException:
            if writer is not None:
                writer.abort()
            if changelog is not None:
                changelog.abort()
            raise

    def _merge(
        self, unit: Sequence[pa.Table | None], above: Sequence[pa.Table | None], dropping: bool
    ) -> tuple[pa.Table, pa.Table] | None:
        """One slice merged, without the keys only level 0 holds that a level above has; and
        the new keys' rows (FirstRowMergeFunctionWrapper's changelog)."""
        records = concat(unit)
        if records is None:
            return None
        high = records.filter(records.column(ABOVE_LEVEL_0)).select(self.keys)
        records = records.drop_columns([ABOVE_LEVEL_0])
        merged = merge(records, self.keys, self.merge_settings, dropping)
        has_high = keys_in(merged, high, self.keys) if high.num_rows else None
        if has_high is None:
            has_high = np.zeros(merged.num_rows, dtype=bool)
        keys_above = concat(above)
        found = np.zeros(merged.num_rows, dtype=bool)
        if keys_above is not None and merged.num_rows:
            found = keys_in(merged, keys_above.select(self.keys), self.keys) & ~has_high
        new = ~found & ~has_high & ~np.isin(merged.column(VALUE_KIND).to_numpy(), RETRACTS)
        return merged.filter(pa.array(~found)), merged.filter(pa.array(new))

    def _read_marked(self, files: Sequence[DataFileMeta]) -> Iterator[pa.Table]:
        """A run's records, each marked with whether its file is above level 0."""
        for f in files:
            batches = iter_kv_records(self.store, self.bucket_path, [f], self.batch_rows)
            for batch in self.unexpired(batches):
                mark = pa.array(np.full(batch.num_rows, f.level > 0))
                yield batch.append_column(ABOVE_LEVEL_0, mark)

    def _read_keys(self, files: Sequence[DataFileMeta]) -> Iterator[pa.Table]:
        for f in files:
            yield from iter_data_file(
                self.store, self.bucket_path, f, self.key_fields, False, self.batch_rows
            )


def run_unit(
    unit: CompactUnit,
    dropping: bool,
    max_level: int,
    s: CompactSettings,
    order: KeyOrder,
    rewriter: MergeTreeRewriter,
) -> CompactResult:
    """One compaction unit (Java's MergeTreeCompactTask.doCompact, or FileRewriteCompactTask
    for a ``file_rewrite`` unit).

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
        expired = rewriter.expire is not None and rewriter.expire.is_expire_file(f)
        if (output == max_level and has_deletes) or s.force_rewrite_all_files or expired:
            result.merge(rewriter.rewrite(output, dropping, [[SortedRun((f,))]]))
        elif f.level != output:
            result.merge(rewriter.upgrade(output, f))

    try:
        if unit.file_rewrite:  # Java's FileRewriteCompactTask: each file rewritten alone
            for f in unit.files:
                result.merge(rewriter.rewrite(output, dropping, [[SortedRun((f,))]]))
            return result
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
        for f in result.changelog:
            rewriter.delete(f)
        raise
    return result


@dataclass
class _Increment:
    """compact_before / compact_after of one bucket across rounds (updateCompactResult)."""

    store: FileStore
    bucket_path: str
    before: dict[str, DataFileMeta] = field(default_factory=dict)
    after: list[DataFileMeta] = field(default_factory=list)
    changelog: list[DataFileMeta] = field(default_factory=list)

    def add(self, result: CompactResult) -> None:
        self.changelog += result.changelog
        after_names = {f.file_name for f in result.after}
        for f in result.before:
            produced = [a for a in self.after if a.file_name == f.file_name and a.level == f.level]
            if produced:
                self.after.remove(produced[0])
                # an intermediate file of this compaction, unless an upgrade shares it
                if f.file_name not in self.before and f.file_name not in after_names:
                    path = data_file_path(self.store.external_paths, self.bucket_path, f)
                    self.store.file_io.delete_quietly(path)
            else:
                self.before.setdefault(f.file_name, f)
        self.after += result.after

    def written(self) -> list[DataFileMeta]:
        return [f for f in self.after if f.file_name not in self.before]


class BucketCompaction(NamedTuple):
    """One bucket's compaction: compact_before, compact_after and the changelog files its
    rewrites produced (a changelog producer's; empty otherwise)."""

    before: list[DataFileMeta]
    after: list[DataFileMeta]
    changelog: list[DataFileMeta]

    def is_empty(self) -> bool:
        return not (self.before or self.after or self.changelog)


def compact_kv_bucket(
    store: FileStore,
    partition_values: Sequence[Any],
    bucket: int,
    files: Sequence[DataFileMeta],
    full: bool,
    rounds: int = 2,
    batch_rows: int = MERGE_BATCH_ROWS,
    dv: BucketDvMaintainer | None = None,
) -> BucketCompaction:
    """Compact one bucket; returns compact_before, compact_after and changelog files, all
    empty if nothing to do.

    ``rounds`` = 2 for the compact procedure (Java's writer compacts, then its prepareCommit
    triggers once more); a writer's commit (``TableWrite``) triggers once, ``rounds`` = 1.
    ``batch_rows``: rows read at a time from each sorted run a rewrite merges.
    ``dv``: the bucket's deletion vectors, restored from the snapshot ``files`` come from; a
    table with deletion vectors needs it (``DvLookupRewriter`` changes it: the caller writes
    its index file once the compaction is done, and drops it if the compaction fails).
    On failure every file this call wrote is deleted before the error propagates; upgraded
    files are inputs still in use and are never deleted.
    """
    s = CompactSettings.of(store)
    if store.options.deletion_vectors_enabled and dv is None:
        raise UnsupportedOptionError(
            f"Table '{store.name}': compacting bucket {bucket} of a table with deletion vectors "
            "needs the bucket's vectors; none were given."
        )
    key_fields = [store.table_schema.field(k) for k in store.table_schema.trimmed_primary_keys()]
    order = key_order([f.type for f in key_fields])
    levels = Levels(files, s.num_levels, order)
    strategy = strategy_of(s)
    rewriter: MergeTreeRewriter
    if store.options.changelog_producer == "full-compaction":  # first, as Java's factory
        from paimon_pyspark.mergetree.full_changelog import FullChangelogRewriter

        rewriter = FullChangelogRewriter(
            store, partition_values, bucket, levels.max_level, batch_rows
        )
    elif dv is not None:
        rewriter = DvLookupRewriter(store, partition_values, bucket, levels, dv, batch_rows)
    elif s.need_lookup and MergeSettings.from_table(store).engine == FIRST_ROW:
        rewriter = FirstRowLookupRewriter(store, partition_values, bucket, levels, batch_rows)
    elif s.need_lookup:
        rewriter = LookupRewriter(store, partition_values, bucket, levels, batch_rows)
    else:
        rewriter = MergeTreeRewriter(store, partition_values, bucket, batch_rows)

    def has_vector(name: str) -> bool:
        return dv is not None and dv.deletion_vector_of(name) is not None

    increment = _Increment(store, rewriter.bucket_path)
    try:
        for round_ in range(rounds):
            runs = levels.level_sorted_runs()
            if round_ == 0 and full:
                unit = pick_full_compaction(
                    levels.num_levels,
                    runs,
                    s.force_rewrite_all_files,
                    has_vector,
                    rewriter.expire.is_expire_file if rewriter.expire is not None else None,
                )
            else:
                unit = pick_minor(strategy, levels.num_levels, runs)
            if unit is None:
                continue
            dropping = drop_delete(unit, levels, dv is not None)
            result = run_unit(unit, dropping, levels.max_level, s, order, rewriter)
            levels.update(result.before, result.after)
            increment.add(result)
    except BaseException:
        for f in [*increment.written(), *increment.changelog]:
            rewriter.delete(f)
        raise
    return BucketCompaction(list(increment.before.values()), increment.after, increment.changelog)
