"""The lookup changelog producer and the lookup merge of tables without deletion vectors.

Mirrors, in Java 1.4.2, org.apache.paimon.mergetree.compact.LookupChangelogMergeFunctionWrapper,
LookupMergeFunction, FirstRowMergeFunctionWrapper, ChangelogMergeTreeRewriter and
LookupMergeTreeCompactRewriter (without deletion vectors; ``dv_lookup`` is the rewriter with
them), vectorized over the key slices a streamed merge of sorted runs yields:

    LookupMergeFunction    of a key's records above level 0 only those of its lowest level take
                           part in a merge (that record already holds what the levels above had
                           merged into it), in compactions and in reads (``newest_above_level0``)
    lookup                 a key of a compaction into level L > 0 that has no record above
                           level 0 in the unit looks up its row in levels L+1.., the lowest
                           level first; the row found takes part in the merge
    changelog              for each key with a level-0 record, ``before`` = its record above
                           level 0 (from the unit, or looked up) and ``after`` = the merge:
                           no add before and an add after: +I after; an add before and a
                           retraction after: -D before; adds both: -U before, +U after, unless
                           ``changelog-producer.row-deduplicate`` finds their values equal
                           (``-ignore-fields`` left out of the comparison)
    first-row              a key none of whose records is above level 0 and that no level above
                           holds is new: its first row is the changelog (+I as written)

Changelog records go to ``open_changelog_writer`` at the compaction's output level, in key
order, a -U before its +U. The lookups and the changelog are joins of a slice's keys against the
sorted runs above (``key_index``), never a loop over rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.io.data_file_reader import iter_kv_records
from paimon_pyspark.merge.merge_function import DEDUPLICATE, merge
from paimon_pyspark.mergetree.rewriter import (
    CompactResult,
    MergeTreeRewriter,
    files_above,
    keys_in,
    lanes,
)
from paimon_pyspark.mergetree.sort_merge import MERGE_BATCH_ROWS, concat, merge_sorted_runs
from paimon_pyspark.mergetree.universal import Levels, SortedRun
from paimon_pyspark.options import CoreOptions, parse_java_bool
from paimon_pyspark.spec import float_keys
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.key_value import (
    DELETE,
    INSERT,
    RETRACTS,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_KIND,
)
from paimon_pyspark.store.file_store import FileStore

LEVEL = "__paimon_level"
"""A column the lookup merge adds to a unit's records: the level of the record's file."""

ROW_DEDUPLICATE = "changelog-producer.row-deduplicate"
ROW_DEDUPLICATE_IGNORE_FIELDS = "changelog-producer.row-deduplicate-ignore-fields"

I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class ChangelogSettings:
    """Whether compactions of a table write the lookup changelog, and how it compares rows.

    ``compared``: the fields ``changelog-producer.row-deduplicate`` compares between a key's
    before and after (every field but the ignored ones); None when it is off (Java's
    KeyValueFileStore.logDedupEqualSupplier)."""

    produce: bool = False
    compared: tuple[str, ...] | None = None

    @staticmethod
    def of(store: FileStore) -> ChangelogSettings:
        o = store.options
        produce = o.changelog_producer == "lookup"
        return ChangelogSettings(produce, row_deduplicate_fields(o, [f.name for f in store.fields]))


def row_deduplicate_fields(o: CoreOptions, names: Sequence[str]) -> tuple[str, ...] | None:
    """The fields ``changelog-producer.row-deduplicate`` compares, or None when it is off."""
    raw = o.options.get(ROW_DEDUPLICATE)
    if raw is None or not parse_java_bool(raw, ROW_DEDUPLICATE, o.table):
        return None
    ignored = o.options.get(ROW_DEDUPLICATE_IGNORE_FIELDS)
    skip = set(ignored.split(",")) if ignored else set()  # unknown names are ignored, as Java
    return tuple(n for n in names if n not in skip)


# --- joins of keys --------------------------------------------------------------------------


def key_index(left: pa.Table, right: pa.Table, key_names: Sequence[str]) -> I64:
    """Per row of ``left``: the row of ``right`` holding its key (``right``'s keys are unique),
    or -1. Keys match by value; FLOAT/DOUBLE keys by Java's normalized bits, as serialized keys
    compare in Java's lookup files."""
    n = left.num_rows
    if n == 0 or right.num_rows == 0:
        return np.full(n, -1, dtype=np.int64)
    if len(key_names) == 1:
        k = key_names[0]
        lefts, rights = _matchable(left.column(k)), _matchable(right.column(k))
        if pa.types.is_integer(rights.type) and not (lefts.null_count or rights.null_count):
            values = rights.to_numpy()
            if bool(np.all(values[1:] > values[:-1])):  # a sorted run's keys: a binary search
                wanted = lefts.to_numpy()
                at = np.minimum(np.searchsorted(values, wanted), len(values) - 1)
                return np.where(values[at] == wanted, at, -1).astype(np.int64)
        found = pc.index_in(lefts, value_set=rights)
        return np.asarray(pc.fill_null(found, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    whole = np.zeros(n + right.num_rows, dtype=np.int64)
    for k in key_names:  # number whole keys column by column, kept dense so nothing overflows
        both = pa.concat_arrays([_matchable(left.column(k)), _matchable(right.column(k))])
        encoded = pc.dictionary_encode(both, null_encoding="encode")
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        _, whole = np.unique(whole * len(encoded.dictionary) + codes, return_inverse=True)
        whole = whole.reshape(-1).astype(np.int64)
    left_codes, right_codes = whole[:n], whole[n:]
    order = np.argsort(right_codes, kind="stable")
    ordered = right_codes[order]
    at = np.minimum(np.searchsorted(ordered, left_codes), len(ordered) - 1)
    return np.where(ordered[at] == left_codes, order[at], -1).astype(np.int64)


def _matchable(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return float_keys.sortable(arr) if float_keys.is_float(arr.type) else arr


def newest_above_level0(records: pa.Table, keys: Sequence[str]) -> pa.Table:
    """``records`` (with ``LEVEL``) without the records above level 0 of a key that also has
    records at a lower level above 0 (Java's LookupMergeFunction.pickHighLevel: only the
    lowest such level's record takes part)."""
    levels = records.column(LEVEL).to_numpy()
    above = np.unique(levels[levels > 0])
    if len(above) < 2:
        return records
    keep = np.ones(records.num_rows, dtype=bool)
    seen: pa.Table | None = None
    for level in above:
        at = np.flatnonzero(levels == level)
        part = records.take(pa.array(at)).select(list(keys))
        if seen is not None:
            keep[at[keys_in(part, seen, keys)]] = False
        seen = part if seen is None else pa.concat_tables([seen, part])
    return records.filter(pa.array(keep))


# --- the changelog of one slice -------------------------------------------------------------


def changelog_of(
    merged: pa.Table,
    before: pa.Table | None,
    level0_keys: pa.Table,
    keys: Sequence[str],
    compared: tuple[str, ...] | None,
) -> pa.Table | None:
    """The changelog records of one merged slice (LookupChangelogMergeFunctionWrapper's
    setChangelog, for every key at once).

    ``merged``: the slice merged, retractions kept, one row per key; ``before``: per key, its
    record above level 0 (from the unit or looked up; keys unique); ``level0_keys``: the keys
    of the slice's level-0 records. Only keys with a level-0 record get a changelog. Each
    record keeps its own sequence number, the kind replaced; -U precedes its +U."""
    names = merged.column_names
    with0 = keys_in(merged, level0_keys, keys)
    if not with0.any():
        return None
    after = merged.filter(pa.array(with0))
    n = after.num_rows
    at = key_index(after, before, keys) if before is not None else np.full(n, -1, np.int64)
    after_add = ~np.isin(after.column(VALUE_KIND).to_numpy(), RETRACTS)
    before_add = np.zeros(n, dtype=bool)
    found = at >= 0
    if before is not None and found.any():
        kinds = before.column(VALUE_KIND).to_numpy()
        before_add[found] = ~np.isin(kinds[at[found]], RETRACTS)
    insert = ~before_add & after_add
    delete = before_add & ~after_add
    update = before_add & after_add
    if compared is not None and update.any():
        rows = np.flatnonzero(update)
        assert before is not None
        same = rows_equal(
            before.take(pa.array(at[rows])).select(list(compared)),
            after.take(pa.array(rows)).select(list(compared)),
        )
        update[rows[same]] = False
    old_rows = np.flatnonzero(delete | update)
    new_rows = np.flatnonzero(insert | update)
    if not len(old_rows) and not len(new_rows):
        return None
    parts = []
    if len(old_rows):
        assert before is not None
        olds = before.take(pa.array(at[old_rows])).select(names)
        kind = np.where(delete[old_rows], DELETE, UPDATE_BEFORE).astype(np.int8)
        parts.append(_with_kind(olds, kind))
    if len(new_rows):
        kind = np.where(insert[new_rows], INSERT, UPDATE_AFTER).astype(np.int8)
        parts.append(_with_kind(after.take(pa.array(new_rows)), kind))
    out = pa.concat_tables(parts)
    position = np.concatenate([old_rows * 2, new_rows * 2 + 1])
    return out.take(pa.array(np.argsort(position, kind="stable")))


def _with_kind(rows: pa.Table, kind: npt.NDArray[np.int8]) -> pa.Table:
    i = rows.schema.get_field_index(VALUE_KIND)
    return rows.set_column(i, rows.schema.field(i), pa.array(kind, pa.int8()))


def rows_equal(left: pa.Table, right: pa.Table) -> Mask:
    """Per row: whether ``left`` and ``right`` hold equal values in every column (two nulls
    are equal), as Java's generated RecordEqualiser compares: primitives with ``==`` (so NaN
    differs from itself and -0.0 equals 0.0), nested values field by field."""
    out = np.ones(left.num_rows, dtype=bool)
    for name in left.column_names:
        out &= _equal(left.column(name).combine_chunks(), right.column(name).combine_chunks())
    return out


def _equal(a: pa.Array, b: pa.Array) -> Mask:
    if pa.types.is_dictionary(a.type):
        a = a.dictionary_decode()
    if pa.types.is_dictionary(b.type):
        b = b.dictionary_decode()
    n = len(a)
    a_null = np.asarray(a.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    b_null = np.asarray(b.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    both: Mask = ~a_null & ~b_null
    out: Mask = a_null & b_null
    if not both.any():
        return out
    t = a.type
    if pa.types.is_struct(t):
        values = np.ones(n, dtype=bool)
        for i in range(t.num_fields):
            values &= _equal(pc.struct_field(a, [i]), pc.struct_field(b, [i]))
    elif pa.types.is_map(t):
        rows = np.flatnonzero(both)  # no Arrow kernel compares maps: the candidates only
        la, lb = a.take(pa.array(rows)).to_pylist(), b.take(pa.array(rows)).to_pylist()
        values = np.zeros(n, dtype=bool)
        values[rows] = [x == y for x, y in zip(la, lb, strict=True)]
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        values = _lists_equal(a, b, both)
    else:
        eq = pc.equal(a, b)
        values = np.asarray(pc.fill_null(eq, False).to_numpy(zero_copy_only=False), dtype=bool)
    out[both] = values[both]
    return out


def _lists_equal(a: pa.Array, b: pa.Array, both: Mask) -> Mask:
    n = len(a)
    out = np.zeros(n, dtype=bool)
    len_a = pc.fill_null(pc.list_value_length(a), -1).to_numpy(zero_copy_only=False)
    len_b = pc.fill_null(pc.list_value_length(b), -1).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(both & (len_a == len_b))
    if not len(rows):
        return out
    sub_a, sub_b = a.take(pa.array(rows)), b.take(pa.array(rows))
    elements = _equal(pc.list_flatten(sub_a), pc.list_flatten(sub_b))
    parents = pc.list_parent_indices(sub_a).to_numpy(zero_copy_only=False)
    bad = np.bincount(parents[~elements], minlength=len(rows)) if len(parents) else None
    out[rows] = True if bad is None else bad == 0
    return out


# --- the rewriter of lookup tables without deletion vectors ---------------------------------


def without_retractions(merged: pa.Table) -> pa.Table:
    retract = np.isin(merged.column(VALUE_KIND).to_numpy(), RETRACTS)
    return merged.filter(pa.array(~retract)) if retract.any() else merged


class LookupRewriter(MergeTreeRewriter):
    """The rewriter of a table that needs lookup, without deletion vectors and other than
    first-row (Java's LookupMergeTreeCompactRewriter with a LookupChangelogMergeFunctionWrapper
    over a PersistValueProcessor, and LookupMergeFunction in every merge).

    A unit with level-0 files into a level above 0 is merged with lookups in the levels above
    the output and, with ``changelog-producer = lookup``, writes the changelog. A level-0 file
    that would only move follows Java's upgradeStrategy: into the top level, or under
    deduplicate without ``sequence.field``, it moves and its changelog is written from a lookup
    (CHANGELOG_NO_REWRITE); otherwise it is rewritten with the old rows merged in, retractions
    kept (CHANGELOG_WITH_REWRITE).
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
        self.changelog = ChangelogSettings.of(store)
        m = self.merge_settings
        self.newest_wins = m.engine == DEDUPLICATE and not m.sequence_fields
        """Deduplicate without a sequence field: the newest record wins whatever is merged
        with it, so a level-0 file may move unrewritten and levels need no filtering."""

    def rewrite(
        self, output_level: int, dropping: bool, sections: Sequence[Sequence[SortedRun]]
    ) -> CompactResult:
        files = [f for section in sections for run in section for f in run.files]
        lookup = output_level > 0 and any(f.level == 0 for f in files)
        lookup &= self.changelog.produce or not self.newest_wins  # else the old row loses
        if not lookup and (self.newest_wins or len({f.level for f in files if f.level}) < 2):
            return super().rewrite(output_level, dropping, sections)  # nothing to filter
        return self.lookup_merge(output_level, dropping, sections, write=True, lookup=lookup)

    def upgrade(self, output_level: int, f: DataFileMeta) -> CompactResult:
        if f.level != 0:
            return super().upgrade(output_level, f)
        section = [[SortedRun((f,))]]
        if output_level == self.levels.max_level or self.newest_wins:
            moved = super().upgrade(output_level, f)
            if self.changelog.produce:
                found = self.lookup_merge(output_level, False, section, write=False, lookup=True)
                moved.changelog = found.changelog
            return moved
        return self.lookup_merge(output_level, False, section, write=True, lookup=True)

    def lookup_merge(
        self,
        output_level: int,
        dropping: bool,
        sections: Sequence[Sequence[SortedRun]],
        write: bool,
        lookup: bool,
    ) -> CompactResult:
        """Merge the unit (LookupMergeFunction), with ``lookup`` looking up the keys without a
        record above level 0 in the levels above ``output_level`` and writing the changelog
        (when the table produces one); with ``write``, the merge is written at
        ``output_level``."""
        files = [f for section in sections for run in section for f in run.files]
        unit = lanes(sections)
        runs = [self._read_levelled(run) for run in unit]
        if lookup:
            above = files_above(self.levels, output_level, files)
            runs += [self.read_run(level) for level in above]
        writer = self.open(output_level) if write else None
        produce = lookup and self.changelog.produce
        changelog = self.open_changelog(output_level) if produce else None
        try:
            for pieces in merge_sorted_runs(runs, self.keys):
                records = concat(pieces[: len(unit)])
                if records is None:
                    continue
                records = newest_above_level0(records, self.keys)
                level = records.column(LEVEL).to_numpy()
                before: pa.Table | None = None
                old: pa.Table | None = None
                if lookup:
                    high = records.filter(pa.array(level > 0)).drop_columns([LEVEL])
                    old = self._look_up(records, level > 0, pieces[len(unit) :])
                    before = concat([high, old])
                level0_keys = records.filter(pa.array(level == 0)).select(self.keys)
                records = records.drop_columns([LEVEL])
                if old is not None:
                    records = pa.concat_tables([records, old.select(records.column_names)])
                merged = merge(records, self.keys, self.merge_settings, False)
                if changelog is not None:
                    changes = changelog_of(
                        merged, before, level0_keys, self.keys, self.changelog.compared
                    )
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

    def _read_levelled(self, files: Sequence[DataFileMeta]) -> Iterator[pa.Table]:
        for f in files:
            batches = iter_kv_records(self.store, self.bucket_path, [f], self.batch_rows)
            for batch in self.unexpired(batches):
                level = pa.array(np.full(batch.num_rows, f.level, dtype=np.int32))
                yield batch.append_column(LEVEL, level)

    def _look_up(
        self, records: pa.Table, high: Mask, above: Sequence[pa.Table | None]
    ) -> pa.Table | None:
        """For each key of ``records`` without a record above level 0 (``high``), its row in
        the lowest level above the output that holds it (LookupLevels.lookup)."""
        keys = records.select(self.keys)
        pending = ~keys_in(keys, keys.filter(pa.array(high)), self.keys) if high.any() else None
        if pending is None:
            pending = np.ones(records.num_rows, dtype=bool)
        found: list[pa.Table] = []
        for level in above:
            if level is None or level.num_rows == 0 or not pending.any():
                continue
            at = key_index(keys, level.select(self.keys), self.keys)
            hit = pending & (at >= 0)
            if hit.any():
                pending &= ~hit
                found.append(level.take(pa.array(np.unique(at[hit]))))
        return concat(found)
