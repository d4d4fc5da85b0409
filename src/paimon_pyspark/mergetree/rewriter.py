"""Rewriting files of one primary-key bucket: read sorted runs, merge, write a sorted run.

Mirrors org.apache.paimon.mergetree.compact.MergeTreeCompactRewriter: the files of a compaction
unit's sections are read as key-value records, merged by the table's merge function and written
at the output level; a file whose level alone changes is upgraded (same file, new level). The
lookup rewriters (``compaction.FirstRowLookupRewriter``, ``dv_lookup.DvLookupRewriter``) build
on this one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.io.data_file_reader import iter_kv_records
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.mergetree.record_expire import RecordLevelExpire
from paimon_pyspark.mergetree.sort_merge import MERGE_BATCH_ROWS, concat, merge_sorted_runs
from paimon_pyspark.mergetree.sorted_run_writer import (
    SortedRunWriter,
    open_changelog_writer,
    open_sorted_run,
)
from paimon_pyspark.mergetree.spill import SpillFile, SpillSettings, delete_all
from paimon_pyspark.mergetree.universal import Levels, SortedRun
from paimon_pyspark.spec import float_keys
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory

ABOVE_LEVEL_0 = "__paimon_above_level_0"
"""A column lookup rewriters add to a unit's records: whether the record's file is above level
0 (Java's ``kv.level() > 0``)."""


@dataclass
class CompactResult:
    """What one rewrite or upgrade did (Java's CompactResult): the files it replaced, the
    files it left, and the changelog files a changelog producer wrote on the way."""

    before: list[DataFileMeta] = field(default_factory=list)
    after: list[DataFileMeta] = field(default_factory=list)
    changelog: list[DataFileMeta] = field(default_factory=list)

    def merge(self, other: CompactResult) -> None:
        self.before += other.before
        self.after += other.after
        self.changelog += other.changelog


class MergeTreeRewriter:
    """Reads files of one bucket as key-value records, merges them and writes a sorted run.

    The sections are merged as one stream (``sort_merge.merge_sorted_runs`` over ``lanes``):
    at most ``batch_rows`` rows of each run are read at a time, so the memory a rewrite takes
    depends on the number of runs and the batch size, not on how much data they hold.
    """

    def __init__(
        self,
        store: FileStore,
        partition_values: Sequence[Any],
        bucket: int,
        batch_rows: int = MERGE_BATCH_ROWS,
    ) -> None:
        self.store = store
        self.partition_values = list(partition_values)
        self.bucket = bucket
        self.batch_rows = batch_rows
        rel = store.partition_rel_path(self.partition_values)
        self.bucket_path = PathFactory(store.path).bucket_path(rel, bucket)
        self.keys = store.table_schema.trimmed_primary_keys()
        self.merge_settings = MergeSettings.from_table(store)
        self.spill_threshold = store.options.sort_spill_threshold
        self.spill_settings = SpillSettings.of(store.options)
        self.expire = RecordLevelExpire.create(store)
        """Records it reads are filtered by (Java wraps the compaction's reader factory)."""

    def rewrite(
        self, output_level: int, dropping: bool, sections: Sequence[Sequence[SortedRun]]
    ) -> CompactResult:
        files = [f for section in sections for run in section for f in run.files]
        writer = self.open(output_level)
        spilled: list[SpillFile] = []
        try:
            runs = self.read_runs(lanes(sections), spilled)
            for pieces in merge_sorted_runs(runs, self.keys):
                records = concat(pieces)
                if records is not None:
                    writer.add(merge(records, self.keys, self.merge_settings, dropping))
            return CompactResult(list(files), writer.close())
        except BaseException:
            writer.abort()
            raise
        finally:
            delete_all(spilled)

    def read_runs(
        self, runs: Sequence[Sequence[DataFileMeta]], spilled: list[SpillFile]
    ) -> list[Iterator[pa.Table]]:
        """Sorted runs of files, each read batch by batch. Beyond ``sort-spill-threshold``
        runs, the smallest are first copied to local spill files (Java's MergeSorter), which
        ``spilled`` collects for the caller to delete."""
        readers = [self.read_run(run) for run in runs]
        extra = len(runs) - self.spill_threshold
        if extra > 0:
            size = [sum(f.file_size for f in run) for run in runs]
            for i in sorted(range(len(runs)), key=lambda i: size[i])[:extra]:
                spilled.append(SpillFile.write(readers[i], self.spill_settings))
                readers[i] = spilled[-1].batches()
        return readers

    def read_run(self, files: Sequence[DataFileMeta]) -> Iterator[pa.Table]:
        """The KV records of one sorted run's files, in batches, in key order (without the
        records ``record-level.expire-time`` expired)."""
        return self.unexpired(iter_kv_records(self.store, self.bucket_path, files, self.batch_rows))

    def unexpired(self, batches: Iterator[pa.Table]) -> Iterator[pa.Table]:
        if self.expire is None:
            return batches
        expire = self.expire
        return (expire.keep(b) for b in batches)

    def open(self, output_level: int) -> SortedRunWriter:
        return open_sorted_run(
            self.store, self.partition_values, self.bucket, output_level, FILE_SOURCE_COMPACT
        )

    def open_changelog(self, output_level: int) -> SortedRunWriter:
        """The changelog writer of a compaction into ``output_level`` (Java's
        createRollingChangelogFileWriter(outputLevel))."""
        return open_changelog_writer(
            self.store, self.partition_values, self.bucket, level=output_level
        )

    def delete(self, f: DataFileMeta) -> None:
        path = data_file_path(self.store.external_paths, self.bucket_path, f)
        self.store.file_io.delete_quietly(path)

    def upgrade(self, output_level: int, f: DataFileMeta) -> CompactResult:
        return CompactResult([f], [f.with_level(output_level)])


def lanes(sections: Sequence[Sequence[SortedRun]]) -> list[list[DataFileMeta]]:
    """The runs of key-ordered, disjoint sections as sorted runs across sections: lane ``i``
    holds run ``i`` of every section that has one, so one streaming merge of the lanes merges
    the sections in turn (and joins float keys at their borders, as one merge of all the
    records would) with one batch per lane in memory."""
    out: list[list[DataFileMeta]] = [[] for _ in range(max((len(s) for s in sections), default=0))]
    for section in sections:
        for lane, run in zip(out, section, strict=False):
            lane.extend(run.files)
    return out


def keys_in(records: pa.Table, keys_of: pa.Table, key_names: Sequence[str]) -> np.ndarray:
    """Per row of ``records``: whether its key (``key_names``) is one of ``keys_of``'s rows,
    matched as Java's lookup matches keys (``float_keys.lookup_key``: every NaN alike, -0.0
    not +0.0)."""
    if len(key_names) == 1:
        values = float_keys.lookup_key(keys_of.column(key_names[0]).combine_chunks())
        found = pc.is_in(float_keys.lookup_key(records.column(key_names[0])), value_set=values)
        return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)
    # several key columns: number each column's values over both tables, then whole keys
    n = records.num_rows
    codes = []
    for k in key_names:
        both = float_keys.lookup_key(
            pa.chunked_array(
                records.column(k).chunks + keys_of.column(k).chunks, records.column(k).type
            ).combine_chunks()
        )
        encoded = pc.dictionary_encode(both, null_encoding="encode")
        codes.append(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64))
    _, whole = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
    whole = whole.reshape(-1)
    return np.isin(whole[:n], whole[n:])


def files_above(
    levels: Levels, output_level: int, files: Sequence[DataFileMeta]
) -> list[list[DataFileMeta]]:
    """Per level above ``output_level`` (each one sorted run), its files whose key range meets
    ``files``': where a lookup rewriter looks a unit's keys up (Java's LookupLevels, from
    ``outputLevel + 1``)."""
    order = levels.order
    lo = min(order(f.min_key) for f in files)
    hi = max(order(f.max_key) for f in files)
    found = [
        [f for f in run if order(f.max_key) >= lo and order(f.min_key) <= hi]
        for run in levels.runs[output_level:]
    ]
    return [level for level in found if level]
