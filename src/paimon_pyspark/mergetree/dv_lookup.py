"""Compacting a primary-key bucket with deletion vectors: superseded rows are marked, not rewritten.

Mirrors org.apache.paimon.mergetree.compact.LookupMergeTreeCompactRewriter with a
BucketedDvMaintainer (and the ChangelogMergeTreeRewriter it extends), the lookup of
LookupChangelogMergeFunctionWrapper / LookupMergeFunction, and LookupLevels with its
PositionedKeyValue (Java 1.4.2). Readers of such a table skip level 0 and read every other file
raw with its vector applied, so after a compaction each key has at most one row not deleted
by a vector in the levels above 0:

    level-0 records merged into output level L > 0
      a key none of whose records came from above level 0 is looked up in levels L+1..max,
      lowest level first, with their current vectors applied; found -> that row's position is
      marked in its file's vector (notifyNewDeletion), and for engines other than deduplicate
      without sequence.field, or with ``changelog-producer = lookup``, the old row takes part
      in the merge (LookupMergeFunction's ``insertInto`` by sequence), since it holds the key's
      merged value so far
    with ``changelog-producer = lookup``, each key with a level-0 record writes its changelog
      against its record above level 0 (``lookup_changelog.changelog_of``)
    every file read for a compaction has its vector applied (ApplyDeletionVectorReader)
    every file a compaction rewrites loses its vector (notifyRewriteCompactBefore)
    retractions are dropped whenever the output level is above 0 (dropDelete with a
      maintainer): the rows they retract are marked

Java looks each key up in a local lookup file per data file; here the levels above the output
are streamed in key order next to the unit's runs (``sort_merge.merge_sorted_runs``), only the
files whose key range meets the unit's, and each slice's keys are joined in one vectorized
match, so nothing runs per row. Java keeps a file's lookup file for its writer's life, built
with the file's vector as it was then; here every lookup applies the current vectors (as a
newly started Java writer does).

A level-0 file that a compaction would only move (upgrade) follows Java's ``upgradeStrategy``:
with deletes (or an unknown delete count) it is rewritten, deletes dropped; into the top level
it is moved (nothing lies above; with the lookup producer every row of it is a +I); otherwise
deduplicate tables without ``sequence.field`` look its keys up and move it, other engines
rewrite it with the old rows merged in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.io.data_file_reader import SYSTEM_FIELDS, iter_live_rows
from paimon_pyspark.merge.merge_function import DEDUPLICATE, merge
from paimon_pyspark.mergetree.lookup_changelog import (
    ChangelogSettings,
    changelog_of,
    key_index,
    without_retractions,
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
from paimon_pyspark.mergetree.universal import Levels, SortedRun
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.store.deletion_vectors import BucketDvMaintainer
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import DataField

_FILE = "__paimon_dv_file"
_POSITION = "__paimon_dv_position"

I64 = npt.NDArray[np.int64]


def applied_batches(
    store: FileStore,
    bucket_path: str,
    f: DataFileMeta,
    fields: Sequence[DataField],
    system: bool,
    batch_rows: int,
    dv: DeletionVector | None,
    position: bool = False,
) -> Iterator[pa.Table]:
    """The rows of one data file in batches, without those its deletion vector deletes; with
    ``position``, each row's position in the file as ``_POSITION`` (Java's
    FileRecordIterator.returnedPosition)."""
    deleted = dv if dv is not None and not dv.is_empty() else None
    for rows, positions in iter_live_rows(
        store, bucket_path, f, fields, system, batch_rows, deleted
    ):
        yield rows.append_column(_POSITION, pa.array(positions)) if position else rows


class DvLookupRewriter(MergeTreeRewriter):
    """The rewriter of a primary-key bucket with deletion vectors (see the module docstring).

    ``dv`` is the bucket's maintainer: read for the vectors to apply, changed by the marks and
    by the files rewritten. ``levels`` is the bucket's Levels, which the caller updates after
    each unit, so a later unit looks up in the levels as they are then.
    """

    def __init__(
        self,
        store: FileStore,
        partition_values: Sequence[Any],
        bucket: int,
        levels: Levels,
        dv: BucketDvMaintainer,
        batch_rows: int = MERGE_BATCH_ROWS,
    ) -> None:
        super().__init__(store, partition_values, bucket, batch_rows)
        self.levels = levels
        self.dv = dv
        by_name = {f.name: f for f in store.fields}
        self.key_fields = [by_name[k] for k in self.keys]
        m = self.merge_settings
        self.changelog = ChangelogSettings.of(store)
        self.merge_old = m.engine != DEDUPLICATE or bool(m.sequence_fields)
        """The old row may change the merge (it may win, or be merged into): a level-0 file
        is rewritten rather than moved (upgradeStrategy)."""
        self.with_values = self.merge_old or self.changelog.produce
        """Java's PersistValueAndPosProcessor: the old row's value is read, takes part in the
        merge and is the changelog's before; else PersistPositionProcessor, the position
        alone."""
        self.record_names = [f.name for f in store.fields] + [f.name for f in SYSTEM_FIELDS]

    # --- reading ------------------------------------------------------------------------------

    def read_run(self, files: Sequence[DataFileMeta]) -> Iterator[pa.Table]:
        """A run's records in key order, rows deleted by their file's vector left out."""
        for f in files:
            yield from self._applied(f, list(self.store.fields), True)

    def _applied(
        self, f: DataFileMeta, fields: Sequence[DataField], system: bool, position: bool = False
    ) -> Iterator[pa.Table]:
        dv = self.dv.deletion_vector_of(f.file_name)
        return applied_batches(
            self.store, self.bucket_path, f, fields, system, self.batch_rows, dv, position
        )

    def _read_marked(self, files: Sequence[DataFileMeta], values: bool) -> Iterator[pa.Table]:
        """A unit run's records (every column with ``values``, else the key only), each marked
        with whether its file is above level 0 (Java's ``kv.level() > 0``)."""
        fields = list(self.store.fields) if values else self.key_fields
        for f in files:
            for batch in self._applied(f, fields, values):
                mark = pa.array(np.full(batch.num_rows, f.level > 0))
                yield batch.append_column(ABOVE_LEVEL_0, mark)

    def _read_positioned(
        self, files: Sequence[DataFileMeta], names: list[str]
    ) -> Iterator[pa.Table]:
        """One level above the output: the rows its vectors leave, each with its file (index
        into ``names``, which collects the file names) and position (PositionedKeyValue)."""
        fields = list(self.store.fields) if self.with_values else self.key_fields
        for f in files:
            index = len(names)
            names.append(f.file_name)
            for batch in self._applied(f, fields, self.with_values, position=True):
                file_col = pa.array(np.full(batch.num_rows, index, dtype=np.int32))
                yield batch.append_column(_FILE, file_col)

    # --- rewriting ----------------------------------------------------------------------------

    def rewrite(
        self, output_level: int, dropping: bool, sections: Sequence[Sequence[SortedRun]]
    ) -> CompactResult:
        files = [f for section in sections for run in section for f in run.files]
        if output_level == 0 or all(f.level > 0 for f in files):
            result = super().rewrite(output_level, dropping, sections)
        else:
            result = self._lookup_merge(output_level, dropping, sections, write=True)
        for f in files:  # notifyRewriteCompactBefore: a rewritten file is gone, so is its vector
            self.dv.remove_deletion_vector_of(f.file_name)
        return result

    def upgrade(self, output_level: int, f: DataFileMeta) -> CompactResult:
        """Java's ``upgradeStrategy`` with a deletion-vector maintainer."""
        if f.level != 0:
            return super().upgrade(output_level, f)
        has_deletes = f.delete_row_count is None or f.delete_row_count > 0
        if not has_deletes and (output_level == self.levels.max_level or not self.merge_old):
            # CHANGELOG_NO_REWRITE: its keys are looked up (nothing lies above the top level)
            moved = super().upgrade(output_level, f)
            if output_level != self.levels.max_level or self.changelog.produce:
                found = self._lookup_merge(output_level, True, [[SortedRun((f,))]], write=False)
                moved.changelog = found.changelog
            return moved
        return self.rewrite(output_level, True, [[SortedRun((f,))]])

    def _lookup_merge(
        self,
        output_level: int,
        dropping: bool,
        sections: Sequence[Sequence[SortedRun]],
        write: bool,
    ) -> CompactResult:
        """Merge the unit with lookups in the levels above ``output_level``, marking the rows
        found, and write the changelog when the table produces one; with ``write``, the merged
        records are written at ``output_level``."""
        files = [f for section in sections for run in section for f in run.files]
        unit = lanes(sections)
        names: list[str] = []
        produce = self.changelog.produce
        values = write or produce
        runs = [self._read_marked(run, values) for run in unit]
        above = files_above(self.levels, output_level, files)
        runs += [self._read_positioned(level, names) for level in above]
        writer = self.open(output_level) if write else None
        changelog = self.open_changelog(output_level) if produce else None
        try:
            for pieces in merge_sorted_runs(runs, self.keys):
                records = concat(pieces[: len(unit)])
                if records is None:
                    continue
                old = self._look_up(records, pieces[len(unit) :], names, values)
                if not values:
                    continue
                marks = records.column(ABOVE_LEVEL_0)
                records = records.drop_columns([ABOVE_LEVEL_0])
                high = records.filter(marks)
                level0_keys = records.filter(pc.invert(marks)).select(self.keys)
                if old:
                    records = pa.concat_tables([records, *old])
                merged = merge(records, self.keys, self.merge_settings, False)
                if changelog is not None:
                    before = pa.concat_tables([high, *old])
                    compared = self.changelog.compared
                    changes = changelog_of(merged, before, level0_keys, self.keys, compared)
                    if changes is not None:
                        changelog.write(changes)
                if writer is not None:
                    writer.add(without_retractions(merged) if dropping else merged)
            after = writer.close() if writer is not None else []
            changes_written = changelog.close() if changelog is not None else []
        except BaseException:
            if writer is not None:
                writer.abort()
            if changelog is not None:
                changelog.abort()
            raise
        return CompactResult(list(files), after, changes_written)

    def _look_up(
        self,
        records: pa.Table,
        above: Sequence[pa.Table | None],
        names: Sequence[str],
        values: bool,
    ) -> list[pa.Table]:
        """Mark, for each key of ``records`` that no record from above level 0 holds, its row
        in the lowest level above that has it; the old rows found (when they take part in the
        merge)."""
        keys = records.select(self.keys)
        marks = np.asarray(records.column(ABOVE_LEVEL_0).to_numpy(zero_copy_only=False), bool)
        pending = ~keys_in(keys, keys.filter(pa.array(marks)), self.keys) if marks.any() else None
        if pending is None:
            pending = np.ones(records.num_rows, dtype=bool)
        old: list[pa.Table] = []
        for level in above:
            if level is None or level.num_rows == 0 or not pending.any():
                continue
            at = key_index(keys, level.select(self.keys), self.keys)
            hit = pending & (at >= 0)
            if not hit.any():
                continue
            pending &= ~hit
            rows = np.unique(at[hit])
            file_index = level.column(_FILE).to_numpy()[rows]
            position = level.column(_POSITION).to_numpy()[rows]
            for i in np.unique(file_index):
                self.dv.notify_new_deletion(names[int(i)], position[file_index == i])
            if values and self.with_values:
                old.append(level.take(pa.array(rows)).select(self.record_names))
        return old
