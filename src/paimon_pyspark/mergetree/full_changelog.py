"""The ``full-compaction`` changelog producer: a compaction to the top level diffs each key's
old top-level record against its merged result.

Mirrors org.apache.paimon.mergetree.compact.{FullChangelogMergeTreeCompactRewriter,
FullChangelogMergeFunctionWrapper, ChangelogMergeTreeRewriter}. Only a compaction whose output
is the top level (``num-levels`` - 1) produces changelog, since only such a compaction sees
every record of its keys; the top level itself is what the previous one left. Per key:

    no top-level record, merged result added     +I  (the merged record)
    top-level record and other records:
        merged result retracted                  -D  (the top-level record)
        merged result differs                    -U  (the top-level record), +U (the merged)
    top-level record alone                       nothing

With ``changelog-producer.row-deduplicate`` a merged result equal to the top-level record
(``-ignore-fields`` left out of the comparison, Java's RecordEqualiser: the lookup producer's
``lookup_changelog.rows_equal``) gives nothing. A file
moved to the top level without a rewrite (an upgrade) is read for its changelog: +I for each
added record (Java's CHANGELOG_NO_REWRITE). Each changelog record keeps the sequence number of
the record it shows.

The diff is vectorized per key slice of the streaming merge: the top-level records of a slice
(marked as they are read) are matched to the merged rows by key in Arrow.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.merge.merge_function import merge
from paimon_pyspark.mergetree.lookup_changelog import (
    key_index,
    row_deduplicate_fields,
    rows_equal,
)
from paimon_pyspark.mergetree.rewriter import CompactResult, MergeTreeRewriter, keys_in, lanes
from paimon_pyspark.mergetree.sort_merge import MERGE_BATCH_ROWS, concat, merge_sorted_runs
from paimon_pyspark.mergetree.spill import SpillFile, delete_all
from paimon_pyspark.mergetree.universal import SortedRun
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.key_value import (
    DELETE,
    INSERT,
    SEQUENCE_NUMBER,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_KIND,
)
from paimon_pyspark.store.file_store import FileStore

TOP_LEVEL = "__paimon_top_level"
"""A column this rewriter adds to the records it reads: whether the record's file is at the
top level (Java's ``kv.level() == maxLevel``)."""


def _with_kinds(rows: pa.Table, kinds: np.ndarray) -> pa.Table:
    i = rows.schema.get_field_index(VALUE_KIND)
    return rows.set_column(i, rows.schema.field(i), pa.array(kinds.astype(np.int8)))


def _is_add(kinds: np.ndarray) -> np.ndarray:
    return np.asarray((kinds == INSERT) | (kinds == UPDATE_AFTER), dtype=bool)


class FullChangelogRewriter(MergeTreeRewriter):
    """The rewriter of ``changelog-producer`` = ``full-compaction`` tables (Java's
    FullChangelogMergeTreeCompactRewriter): a rewrite or upgrade to ``max_level`` also writes
    the changelog files of the module docstring; any other is a plain one."""

    def __init__(
        self,
        store: FileStore,
        partition_values: Sequence[Any],
        bucket: int,
        max_level: int,
        batch_rows: int = MERGE_BATCH_ROWS,
    ) -> None:
        super().__init__(store, partition_values, bucket, batch_rows)
        self.max_level = max_level
        self.compared = row_deduplicate_fields(store.options, [f.name for f in store.fields])
        self.columns = [f.name for f in store.fields] + [SEQUENCE_NUMBER, VALUE_KIND]

    def rewrite(
        self, output_level: int, dropping: bool, sections: Sequence[Sequence[SortedRun]]
    ) -> CompactResult:
        if output_level != self.max_level:
            return super().rewrite(output_level, dropping, sections)
        files = [f for section in sections for run in section for f in run.files]
        writer = self.open(output_level)
        changelog = self.open_changelog(self.max_level)
        spilled: list[SpillFile] = []
        try:
            runs = self.read_runs(lanes(sections), spilled)
            for pieces in merge_sorted_runs(runs, self.keys):
                records = concat(pieces)
                if records is None:
                    continue
                result, changes = self.diff(records)
                writer.add(result)
                changelog.add(changes)
            after = writer.close()
            return CompactResult(list(files), after, changelog.close())
        except BaseException:
            writer.abort()
            changelog.abort()
            raise
        finally:
            delete_all(spilled)

    def upgrade(self, output_level: int, f: DataFileMeta) -> CompactResult:
        """A file moved to the top level unchanged: its added records are +I changes (none of
        its keys is at the top level, or the file would overlap that run and be merged)."""
        if output_level != self.max_level:
            return super().upgrade(output_level, f)
        changelog = self.open_changelog(self.max_level)
        try:
            for batch in super().read_run([f]):
                kinds = batch.column(VALUE_KIND).to_numpy()
                add = _is_add(kinds)
                rows = batch.select(self.columns).filter(pa.array(add))
                changelog.add(_with_kinds(rows, np.full(rows.num_rows, INSERT)))
            return CompactResult([f], [f.with_level(output_level)], changelog.close())
        except BaseException:
            changelog.abort()
            raise

    def read_run(self, files: Sequence[DataFileMeta]) -> Iterator[pa.Table]:
        """The run's records, each marked with whether its file is at the top level."""
        for f in files:
            top = f.level == self.max_level
            for batch in super().read_run([f]):
                yield batch.append_column(TOP_LEVEL, pa.array(np.full(batch.num_rows, top)))

    def diff(self, records: pa.Table) -> tuple[pa.Table, pa.Table]:
        """One key slice's records (marked ``TOP_LEVEL``): the merged records to keep at the
        top level (retractions dropped, Java's setResultIfNotRetract) and the changes, in key
        order, a key's -U before its +U."""
        top_mask = records.column(TOP_LEVEL).combine_chunks()
        records = records.drop_columns([TOP_LEVEL]).select(self.columns)
        top = records.filter(top_mask)
        merged = merge(records, self.keys, self.merge_settings, False)
        kinds = merged.column(VALUE_KIND).to_numpy()
        add = _is_add(kinds)
        result = merged if add.all() else merged.filter(pa.array(add))
        at = key_index(merged, top, self.keys)
        has_top = at >= 0
        if top.num_rows == records.num_rows:  # only the top level: no change
            return result, top.slice(0, 0)
        others = records.filter(pc.invert(top_mask)).select(self.keys)
        has_other = keys_in(merged, others, self.keys)
        changed = has_top & has_other
        before = changed.copy()  # -D or -U: the top-level record goes out
        updated = changed & add
        after = (~has_top & add) | updated  # +I or +U: the merged record comes in
        if self.compared is not None and updated.any():
            rows = np.flatnonzero(updated)
            old = top.take(pa.array(at[rows]))
            new = merged.take(pa.array(rows)).select(self.compared)
            same = rows_equal(old.select(self.compared), new)
            before[rows[same]] = False
            after[rows[same]] = False
        out_rows = np.flatnonzero(before)
        in_rows = np.flatnonzero(after)
        gone = top.take(pa.array(at[out_rows]))
        gone = _with_kinds(gone, np.where(add[out_rows], UPDATE_BEFORE, DELETE))
        came = merged.take(pa.array(in_rows)).select(self.columns)
        came = _with_kinds(came, np.where(has_top[in_rows], UPDATE_AFTER, INSERT))
        changes = pa.concat_tables([gone, came.cast(gone.schema)])
        order = np.argsort(np.r_[out_rows * 2, in_rows * 2 + 1], kind="stable")
        return result, changes.take(pa.array(order))
