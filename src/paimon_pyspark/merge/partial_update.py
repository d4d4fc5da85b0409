"""The partial-update merge engine: newer non-null fields overwrite older ones.

Mirrors org.apache.paimon.mergetree.compact.PartialUpdateMergeFunction. What Java does with the
records of one key, oldest first, and how it is computed here for all keys at once:

* +I/+U: every non-null field overwrites the row's field.
* -U/-D: an error, unless ``ignore-delete`` (skipped) or
  ``partial-update.remove-record-on-delete``: then a -D resets the row to the -D's own values
  (later additions still overwrite on top of them) and a -U is skipped.
* The first record of the key seeds the row with all its fields, even when it is a retraction
  (Java's ``initRow``).

So each field's value is the one of the last row, from the last reset (the last -D with
remove-record-on-delete, else the first record) on, that is the reset itself or an addition
with a non-null value. The result kind is -D if the last record was such a -D, or if no
addition was seen; else +I. Its sequence number is the last record's, or with ``ignore-delete``
the last addition's (0 if none, as Java leaves it).

With sequence groups (``merge/sequence_group.py``) a group's fields change together, null or
not, with a record whose group sequence is not all NULL and at least the row's; retractions
take part (they null the group's fields, or retract its aggregates) instead of failing. A record
*wins* its group when its sequence tuple is at least the running maximum of the tuples that set
the row before it: one ``maximum.accumulate`` over dense ranks of the tuples. A -D that wins a
group of ``partial-update.remove-record-on-sequence-group`` resets the row to its own values;
as whether a later -D wins depends on that reset, resets are found one per key and round
(rounds = the most resets of one key, usually one). Aggregates fold what Java folds, an older
(losing) record through ``aggReversed(acc, v) = agg(v, acc)`` (``collect`` keeps ``agg(acc, v)``):
``last_value`` and ``last_non_null_value`` as closed forms; the commutative functions (sum,
product, max, min, bool_and, bool_or) through ``aggregation.merge`` over the records Java feeds
them; the others, whose result depends on that order (an older listagg value is prepended),
fold in Python over the keys with more than one record: the first_* functions and ``listagg``
here, the collection, sketch and bitmap functions (and a distinct listagg) with the aggregation
engine's own ``agg`` / ``retract`` (``agg_collections``, ``agg_sketches``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.errors import MergeError
from paimon_pyspark.merge import agg_collections, agg_sketches, aggregation
from paimon_pyspark.merge.groups import Groups, SortedRecords
from paimon_pyspark.merge.sequence_group import COMMUTATIVE, SequenceGroup
from paimon_pyspark.spec.key_value import (
    DELETE,
    INSERT,
    SEQUENCE_NUMBER,
    UPDATE_BEFORE,
    VALUE_KIND,
)

_DELETE_ERROR = (
    "By default, the partial-update merge engine can not accept delete records; configure "
    "'ignore-delete' to ignore them, or 'partial-update.remove-record-on-delete' to remove the "
    "whole row when a -D record arrives."
)


def merge(
    view: SortedRecords,
    groups: Groups,
    kinds: np.ndarray,
    ignore_delete: bool,
    remove_record_on_delete: bool,
    sequence_groups: Sequence[SequenceGroup] = (),
    aggs: Sequence[tuple[str, aggregation.AggSpec]] = (),
) -> pa.Table:
    """One row per key (Java's result record), sorted by key. ``aggs``: (field, function and
    options) of the protected fields that aggregate."""
    if sequence_groups:
        return _merge_groups(view, groups, kinds, ignore_delete, sequence_groups, aggs)
    multi = groups.row_multi
    retract = (kinds == UPDATE_BEFORE) | (kinds == DELETE)
    add = ~retract
    if not ignore_delete and not remove_record_on_delete and (retract & multi).any():
        raise MergeError(_DELETE_ERROR)
    if remove_record_on_delete:
        last_reset = groups.last_where(kinds == DELETE)
        reset = np.where(last_reset >= 0, last_reset, groups.starts)
    else:
        reset = groups.starts
    row_reset = groups.broadcast(reset)
    arange = groups.arange
    in_segment = arange >= row_reset
    is_reset = arange == row_reset
    single = groups.single

    seq = view.sequence_numbers
    last_kind = kinds[groups.lasts]
    deleted = ~groups.any(add)
    if remove_record_on_delete:
        deleted |= last_kind == DELETE
    kind = np.where(single, last_kind, np.where(deleted, DELETE, INSERT)).astype(np.int8)
    if ignore_delete:
        last_add = groups.last_where(add)
        result_seq = np.where(last_add >= 0, seq[np.maximum(last_add, 0)], 0)
    else:
        result_seq = seq[groups.lasts]
    result_seq = np.where(single, seq[groups.starts], result_seq)

    columns: list[pa.ChunkedArray | pa.Array] = []
    for name in view.column_names:
        if name == SEQUENCE_NUMBER:
            columns.append(pa.array(result_seq, pa.int64()))
        elif name == VALUE_KIND:
            columns.append(pa.array(kind, pa.int8()))
        else:
            # The reset row is always a candidate, so pos >= reset >= 0.
            pos = groups.last_where(in_segment & ((add & view.valid(name)) | is_reset))
            columns.append(view.take_column(name, np.where(single, groups.starts, pos)))
    return pa.Table.from_arrays(columns, schema=view.schema)


# --- sequence groups ---------------------------------------------------------------------------


def _merge_groups(
    view: SortedRecords,
    g: Groups,
    kinds: np.ndarray,
    ignore_delete: bool,
    sequence_groups: Sequence[SequenceGroup],
    aggs: Sequence[tuple[str, aggregation.AggSpec]],
) -> pa.Table:
    """Java's updateWithSequenceGroup / retractWithSequenceGroup per record, as row masks: a
    key's *segments* start at its first record and at each -D that removed the row; only the
    last segment's records shape the result (a removal replaces the whole row)."""
    retract = (kinds == UPDATE_BEFORE) | (kinds == DELETE)
    add = ~retract
    arange = g.arange
    ranks = [_Ranks(view, grp.sequence_fields) for grp in sequence_groups]
    is_start = np.zeros(g.num_rows, dtype=bool)
    is_start[g.starts] = True
    resets = np.zeros(g.num_rows, dtype=bool)
    removing = [r for grp, r in zip(sequence_groups, ranks, strict=True) if grp.removes_record]
    if removing:
        _find_resets(g, kinds, add, retract, is_start, resets, removing)
    seg = is_start | resets
    processed = add | (retract & ~resets & (not ignore_delete))
    seed = g.last_where(seg)
    row_seed = g.broadcast(seed)
    last = arange >= row_seed
    is_seed = arange == row_seed

    single = g.single
    seq = view.sequence_numbers
    last_kind = kinds[g.lasts]
    deleted = resets[g.lasts] | ~g.any(add)
    kind = np.where(single, last_kind, np.where(deleted, DELETE, INSERT)).astype(np.int8)
    if ignore_delete:
        last_add = g.last_where(add)
        result_seq = np.where(last_add >= 0, seq[np.maximum(last_add, 0)], 0)
    else:
        result_seq = seq[g.lasts]
    result_seq = np.where(single, seq[g.starts], result_seq)

    group_of: dict[str, int] = {}
    for gi, grp in enumerate(sequence_groups):
        for name in (*grp.sequence_fields, *grp.fields):
            group_of[name] = gi
    agg_of = dict(aggs)
    all_wins = [r.wins(processed, seg) for r in ranks]
    wins = [w & last for w in all_wins]
    columns: list[pa.ChunkedArray | pa.Array] = []
    for name in view.column_names:
        if name == SEQUENCE_NUMBER:
            columns.append(pa.array(result_seq, pa.int64()))
            continue
        if name == VALUE_KIND:
            columns.append(pa.array(kind, pa.int8()))
            continue
        i = group_of.get(name)
        if i is None:  # outside every group: the last non-null addition, or the seed's value
            pos = g.last_where(last & ((add & view.valid(name)) | is_seed))
        elif name in sequence_groups[i].sequence_fields:
            pos = g.last_where(last & (wins[i] | is_seed))
        elif name in agg_of:
            spec = agg_of[name]
            func = spec.function
            ctx = _Fold(g, last, is_seed, add, retract, processed, ranks[i].nonempty, wins[i])
            if func in COMMUTATIVE:
                folded = _commutative(view, name, spec, ctx, g)
                columns.append(_passthrough(view, name, g, folded))
                continue
            if func not in (aggregation.LAST_VALUE, aggregation.LAST_NON_NULL_VALUE):
                fed = processed & ranks[i].nonempty
                events = _Events(is_start & retract, resets, fed, all_wins[i], retract)
                folded = _fold(view, name, spec, events, g)
                columns.append(_passthrough(view, name, g, folded))
                continue
            pos = ctx.last_value_pos(spec.ignore_retract, view.valid(name), func)
        else:  # a protected field: the last winner's value (null from a retraction)
            pos = g.last_where(last & (wins[i] | is_seed))
            keep = (wins[i] & add) | (~wins[i] & retract)
            pos = np.where((pos >= 0) & keep[np.maximum(pos, 0)], pos, -1)
        columns.append(view.take_column(name, np.where(single, g.starts, pos)))
    return pa.Table.from_arrays(columns, schema=view.schema)


_VECTOR_ROUNDS = 4
"""Rounds of the vectorized reset search before the keys still finding resets are walked."""


def _find_resets(
    g: Groups,
    kinds: np.ndarray,
    add: np.ndarray,
    retract: np.ndarray,
    is_start: np.ndarray,
    resets: np.ndarray,
    removing: Sequence[_Ranks],
) -> None:
    """Mark in ``resets`` the -D records that remove the row: each wins a group of
    ``remove-record-on-sequence-group`` against the row as the previous removal left it. A
    round finds the first of each key's segment; keys with many removals (after a few rounds)
    are walked record by record, over the removing groups' ranks only."""
    arange = g.arange
    deletes = (kinds == DELETE) & g.row_multi
    for _ in range(_VECTOR_ROUNDS):
        seg = is_start | resets
        processed = add | (retract & ~resets)
        hit = np.zeros(g.num_rows, dtype=bool)
        for r in removing:
            hit |= r.wins(processed, seg)
        hit &= deletes & ~resets  # a first record too: initRow, then it resets
        if not hit.any():
            return
        seg_starts = np.flatnonzero(seg)
        first = np.minimum.reduceat(np.where(hit, arange, g.num_rows), seg_starts)
        found = first[first < g.num_rows]
        resets[found] = True
    # The keys whose last round found a removal may hold more: walk them from that one on.
    ranks = [r.rank.tolist() for r in removing]
    nonempty = [r.nonempty.tolist() for r in removing]
    is_delete = deletes.tolist()
    for start, key in zip(found.tolist(), g.row_group[found].tolist(), strict=True):
        end = int(g.ends[key])
        top = [rank[start] for rank in ranks]  # the reset row seeds the row
        for j in range(start + 1, end):
            if is_delete[j] and any(
                ne[j] and rank[j] >= t for rank, ne, t in zip(ranks, nonempty, top, strict=True)
            ):
                resets[j] = True
                top = [rank[j] for rank in ranks]
            else:  # every other record is processed: a winner raises the row's tuple
                top = [max(t, rank[j]) for rank, t in zip(ranks, top, strict=True)]


class _Ranks:
    """A group's sequence tuple per record (merge order) as a dense rank, NULL lowest."""

    def __init__(self, view: SortedRecords, fields: Sequence[str]) -> None:
        order = view.order
        per: list[np.ndarray] = []
        nonempty = np.zeros(len(order), dtype=bool)
        for f in fields:
            col = view.records.column(f).combine_chunks()
            r = pc.rank(col, sort_keys=[("", "ascending", "at_start")], tiebreaker="dense")
            per.append(np.asarray(r.to_numpy(), dtype=np.int64)[order])
            nonempty |= view.valid(f)
        if len(per) == 1:
            rank = per[0]
        else:
            by = np.lexsort(per[::-1])
            sorted_rows = np.stack([p[by] for p in per])
            change = np.r_[True, (sorted_rows[:, 1:] != sorted_rows[:, :-1]).any(axis=0)]
            rank = np.empty(len(order), dtype=np.int64)
            rank[by] = np.cumsum(change)
        self.rank = rank
        self.nonempty = nonempty
        self.top = int(rank.max()) + 1 if len(rank) else 1

    def wins(self, processed: np.ndarray, seg: np.ndarray) -> np.ndarray:
        """Per record: it updates the group, its tuple being at least every tuple that set the
        row since its segment's start (the seed, then earlier winners; losers are lower)."""
        seg_id = np.cumsum(seg) - 1
        base = seg_id * self.top
        run = np.maximum.accumulate(base + np.where(processed | seg, self.rank, 0))
        before = np.empty_like(run)
        before[:1] = -1
        before[1:] = run[:-1] - base[1:]
        before[seg] = -1
        return np.asarray(processed & self.nonempty & (self.rank >= before), dtype=bool)


class _Fold:
    """The records of each key's last segment as one aggregate sees them."""

    def __init__(
        self,
        g: Groups,
        last: np.ndarray,
        is_seed: np.ndarray,
        add: np.ndarray,
        retract: np.ndarray,
        processed: np.ndarray,
        nonempty: np.ndarray,
        wins: np.ndarray,
    ) -> None:
        self.g = g
        self.last = last
        self.is_seed = is_seed
        self.add = add
        self.retract = retract
        self.fed = last & processed & nonempty  # agg / aggReversed / retract are called
        self.wins = wins

    def last_value_pos(self, ignore_retract: bool, valid: np.ndarray, func: str) -> np.ndarray:
        """FieldLastValueAgg / FieldLastNonNullValueAgg: per key the row whose value is the
        result, -1 for null. A losing (older) addition folds as ``agg(input, acc)``."""
        g, last = self.g, self.last
        retracting = self.fed & self.retract & (not ignore_retract)
        seeded = self.is_seed & self.retract  # the row starts with the seed's values
        if func == aggregation.LAST_VALUE:
            setting = self.wins & self.add
            pos = g.last_where(last & (setting | retracting | self.is_seed))
            keep = setting | (seeded & ~retracting)
            return np.asarray(np.where((pos >= 0) & keep[np.maximum(pos, 0)], pos, -1))
        setting = self.wins & self.add & valid
        clearing = retracting & valid
        filling = self.fed & self.add & ~self.wins & valid  # fills a null accumulator
        pos = g.last_where(last & (setting | clearing | self.is_seed))
        p = np.maximum(pos, 0)
        kept = setting[p] | (seeded[p] & valid[p] & ~clearing[p])
        fill = g.first_where(last & filling & (g.arange > g.broadcast(pos)))
        return np.asarray(np.where(kept, pos, fill))


def _commutative(
    view: SortedRecords, name: str, spec: aggregation.AggSpec, ctx: _Fold, g: Groups
) -> pa.Array:
    """A function whose older and newer inputs fold alike: ``aggregation.merge`` over, per key,
    the row's start (the seed's value, or null) then every record fed to the aggregator."""
    n = view.records.num_rows
    seed_rows = g.last_where(ctx.is_seed)
    head = np.where(ctx.retract[seed_rows], view.order[seed_rows], n)  # n: a null
    fed = np.flatnonzero(ctx.fed)
    fed_group = g.row_group[fed]
    counts = np.bincount(fed_group, minlength=g.count)
    starts = np.arange(g.count, dtype=np.int64) + np.concatenate([[0], np.cumsum(counts)[:-1]])
    total = g.count + len(fed)
    order = np.empty(total, dtype=np.int64)
    sub_kinds = np.full(total, INSERT, dtype=np.int8)
    order[starts] = head
    at = fed_group + 1 + np.arange(len(fed), dtype=np.int64)
    order[at] = view.order[fed]
    sub_kinds[at] = view.kinds[fed]
    col = view.records.column(name).combine_chunks()
    values = pa.concat_arrays([col, pa.nulls(1, col.type)])
    table = pa.table(
        {
            name: values,
            SEQUENCE_NUMBER: pa.array(np.zeros(n + 1, dtype=np.int64)),
            VALUE_KIND: pa.array(np.zeros(n + 1, dtype=np.int8)),
        }
    )
    merged = aggregation.merge(
        SortedRecords(table, order), Groups(starts, total), sub_kinds, {name: spec}, False
    )
    return merged.column(name).combine_chunks()


def _passthrough(view: SortedRecords, name: str, g: Groups, computed: pa.Array) -> pa.Array:
    """A key with a single record keeps that record's value (Java does not merge it)."""
    if not g.single.any():
        return computed
    own = view.take_column(name, g.starts)
    return pc.if_else(pa.array(g.single), own, computed)


@dataclass(frozen=True)
class _Events:
    """Row masks (merge order, every segment) of what one order-dependent aggregate sees."""

    init: np.ndarray  # a first record that retracts: the row starts with its values
    resets: np.ndarray  # a -D that removed the row: the row restarts with its values
    fed: np.ndarray  # agg, aggReversed or retract is called
    wins: np.ndarray  # ... and it is agg (newer), not aggReversed (older)
    retract: np.ndarray


def _fold(
    view: SortedRecords,
    name: str,
    spec: aggregation.AggSpec,
    ev: _Events,
    g: Groups,
) -> pa.Array:
    """An order-dependent aggregator as Java calls it, in Python over the records it sees of the
    keys with more than one record: a newer record is folded with ``agg``, an older one with
    ``aggReversed``, a retraction with ``retract``; the "seen a value" state of the first_*
    functions lasts the whole key (a removal does not reset it)."""
    col = view.records.column(name).combine_chunks()
    out: list[Any] = [None] * g.count
    rows = np.flatnonzero(g.row_multi & (ev.init | ev.resets | ev.fed))
    state = [False]
    agg, reversed_agg, retract = _folders(spec, state)
    undo = not spec.ignore_retract
    if undo and retract is None and (ev.fed & ev.retract)[rows].any():
        raise MergeError(
            f"Aggregate function '{spec.function}' of field '{name}' does not support "
            f"retraction; set 'fields.{name}.ignore-retract' = 'true' to ignore retraction "
            "messages."
        )
    values = col.take(pa.array(view.order[rows])).to_pylist()
    keys = g.row_group[rows].tolist()
    init, resets, fed, wins = (m[rows].tolist() for m in (ev.init, ev.resets, ev.fed, ev.wins))
    adding = (~ev.retract[rows]).tolist()
    key, acc = -1, None
    for j, v in enumerate(values):
        if keys[j] != key:
            if key >= 0:
                out[key] = acc
            key, acc, state[0] = keys[j], None, False
        if init[j] or resets[j]:
            acc = v
            if resets[j]:
                continue
        if not fed[j]:
            continue
        if adding[j]:
            acc = agg(acc, v) if wins[j] else reversed_agg(acc, v)
        elif undo:
            assert retract is not None
            acc = retract(acc, v)
    if key >= 0:
        out[key] = acc
    return pa.array(out, col.type)


Fold = Callable[[Any, Any], Any]


def _folders(spec: aggregation.AggSpec, state: list[bool]) -> tuple[Fold, Fold, Fold | None]:
    """Java's ``agg``, ``aggReversed`` and ``retract`` (None if it cannot retract) of one
    field's aggregator; the functions the aggregation engine folds are its own."""
    func = spec.function
    retract: Fold | None = None
    if func in agg_collections.FUNCTIONS:
        assert spec.data_type is not None, "the collection functions need the field's type"
        agg, retract = agg_collections.folders(
            func, spec.data_type, spec.distinct, spec.nested_key, spec.count_limit, spec.ts_field
        )
    elif func in agg_sketches.FUNCTIONS:
        agg = agg_sketches.folder(func)
    elif func == aggregation.LISTAGG and spec.distinct:
        agg = agg_collections.listagg_distinct(spec.delimiter)
    else:
        agg = _scalar_agg(func, spec.delimiter, state)
    if func == agg_collections.COLLECT and not spec.ignore_retract:
        # FieldCollectAgg.aggReversed keeps the accumulator first; FieldIgnoreRetractAgg, which
        # wraps it under ignore-retract, does not forward it and falls back to agg(input, acc).
        return agg, agg, retract

    def reversed_agg(acc: Any, v: Any) -> Any:
        return agg(v, acc)

    return agg, reversed_agg, retract


def _scalar_agg(func: str, delimiter: str, state: list[bool]) -> Callable[[Any, Any], Any]:
    if func == aggregation.LISTAGG:

        def listagg(acc: Any, v: Any) -> Any:
            if acc is None or v is None:
                return v if acc is None else acc
            if not v:
                return acc
            return v if not acc else f"{acc}{delimiter}{v}"

        return listagg
    non_null = func != aggregation.FIRST_VALUE

    def first(acc: Any, v: Any) -> Any:
        if not state[0] and (v is not None or not non_null):
            state[0] = True
            return v
        return acc

    return first
