"""Merge engines over Arrow: many records per key in, one record per key out.

Mirrors org.apache.paimon.mergetree.compact.{Deduplicate,FirstRow,PartialUpdate,Aggregate}
MergeFunction, vectorized: records are sorted by (key, sequence) once, groups of equal keys are
found with one comparison of neighbours, and each engine reduces the groups with numpy/pyarrow
kernels instead of visiting rows. The same function serves the write buffer, the merge-on-read
and compaction, as in Java.

Interface (the write path, the read path and compaction call only this):

    settings = MergeSettings.from_table(table)          # engine and its options, validated
    merged = merge(records, key_names, settings, drop_delete)

``records`` holds every table column (by name) plus ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``,
in any order. The result is sorted by key, has the same columns and one row per key; its
``_SEQUENCE_NUMBER`` / ``_VALUE_KIND`` are those of the merged record. With ``drop_delete`` the
keys whose merged record is a retraction (-U/-D) are removed (reads, full compaction to the top
level); without it they stay (write-buffer flushes, partial compactions), as Java does.

Two Java behaviours shape every engine here:

* A key with a single record is passed through untouched, without calling the merge function
  (``ReducerMergeFunctionWrapper``). So a lone -D survives a first-row merge without an error,
  and a lone -U in an aggregation table stays a -U (it is not turned into a negated +I).
* Records of a key are ordered by the ``sequence.field`` columns (in
  ``sequence.field.sort-order``, with NULL first in both directions, as the comparator Java's
  ``UserDefinedSeqComparator`` generates: a null never outranks a value), then
  ``_SEQUENCE_NUMBER``, then retractions before additions (``SortMergeReaderWithMinHeap``'s
  comparator). The write buffer uses the same order; Java 1.4.2's ``SortBufferWriteBuffer``
  sorts the sequence fields ascending whatever the sort order (fixed in Java 2.0, #7684), so
  for a descending table only the records of one key written in one commit can merge
  differently there.

This module holds the settings (parsed from the table options and validated as Java's
``SchemaValidation`` / merge-function factories do), sorting, grouping and the dispatch; each
engine has its own module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark import options as opts
from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.merge import (
    aggregation,
    deduplicate,
    first_row,
    partial_update,
    sequence_group,
)
from paimon_pyspark.merge.groups import Groups, SortedRecords
from paimon_pyspark.merge.sequence_group import SequenceGroup
from paimon_pyspark.spec import float_keys
from paimon_pyspark.spec.key_value import RETRACTS, SEQUENCE_NUMBER, VALUE_KIND
from paimon_pyspark.types.data_types import DataField, DataType

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

DEDUPLICATE = "deduplicate"
PARTIAL_UPDATE = "partial-update"
AGGREGATION = "aggregation"
FIRST_ROW = "first-row"
ENGINES = (DEDUPLICATE, PARTIAL_UPDATE, AGGREGATION, FIRST_ROW)

MERGE_ENGINE = opts.MERGE_ENGINE
SUPPORTED_FIELD_SUFFIXES = opts.MERGE_FIELD_OPTION_SUFFIXES
"""The per-field suffixes implemented here; CoreOptions knows more (every other is refused)."""


@dataclass(frozen=True)
class FieldAgg:
    """The aggregate function of one field, with its per-field options (aggregation engine)."""

    function: str = aggregation.LAST_NON_NULL_VALUE
    ignore_retract: bool = False
    delimiter: str = ","
    distinct: bool = False
    nested_key: tuple[str, ...] = ()
    count_limit: int = 2**31 - 1
    ts_field: str | None = None
    data_type: DataType | None = field(default=None, compare=False)
    """The field's type (the functions on nested values need it); not a setting."""


@dataclass(frozen=True)
class MergeSettings:
    """The merge engine of a primary-key table and the options that change its result."""

    engine: str = DEDUPLICATE
    sequence_fields: tuple[str, ...] = ()
    ignore_delete: bool = False
    sequence_ascending: bool = True
    remove_record_on_delete: bool = False
    """``partial-update.`` / ``aggregation.remove-record-on-delete``, for the table's engine."""
    field_aggs: tuple[tuple[str, FieldAgg], ...] = ()
    """Aggregation engine: the function of each field; fields not listed use
    ``last_non_null_value`` (key fields always keep their value)."""
    sequence_groups: tuple[SequenceGroup, ...] = ()
    """Partial-update: its ``fields.<f>.sequence-group`` options."""
    partial_update_aggs: tuple[tuple[str, aggregation.AggSpec], ...] = ()
    """Partial-update: (field, its function and options) of each aggregating protected field."""

    def field_agg(self, name: str) -> FieldAgg:
        for n, agg in self.field_aggs:
            if n == name:
                return agg
        return FieldAgg()

    @staticmethod
    def from_table(table: FileStore) -> MergeSettings:
        return MergeSettings.of(table.options, table.fields, table.primary_keys)

    @staticmethod
    def from_options(
        options: Mapping[str, str],
        fields: Sequence[DataField],
        primary_keys: Sequence[str],
        table: str = "",
    ) -> MergeSettings:
        return MergeSettings.of(opts.CoreOptions(options, table), fields, primary_keys)

    @staticmethod
    def of(
        options: opts.CoreOptions, fields: Sequence[DataField], primary_keys: Sequence[str]
    ) -> MergeSettings:
        """Check the merge options against the schema and the engine as Java's merge-function
        factories and ``SchemaValidation`` do; raise OptionError / UnsupportedOptionError."""
        where = f"Table '{options.table}': " if options.table else ""
        engine = options.merge_engine
        if engine not in ENGINES:
            raise OptionError(
                f"{where}unknown '{MERGE_ENGINE}' = '{options.get(MERGE_ENGINE)}' "
                f"(one of {', '.join(ENGINES)})."
            )
        names = [f.name for f in fields]
        _check_fields_options(options, names, where)
        ignore_delete = options.ignore_delete
        sequence_fields = _sequence_fields(options, names, engine, where)
        ascending = options.sequence_ascending
        remove_on_delete = False
        field_aggs: tuple[tuple[str, FieldAgg], ...] = ()
        pu = sequence_group.PartialUpdateOptions(False, (), ())
        if engine == PARTIAL_UPDATE:
            pu = sequence_group.partial_update_options(
                options, fields, primary_keys, ignore_delete, where
            )
            remove_on_delete = pu.remove_record_on_delete
        elif engine == AGGREGATION:
            remove_on_delete = options.aggregation_remove_record_on_delete
            field_aggs = _field_aggs(
                options, fields, primary_keys, sequence_fields, remove_on_delete, where
            )
        return MergeSettings(
            engine=engine,
            sequence_fields=tuple(sequence_fields),
            ignore_delete=ignore_delete,
            sequence_ascending=ascending,
            remove_record_on_delete=remove_on_delete,
            field_aggs=field_aggs,
            sequence_groups=pu.groups,
            partial_update_aggs=pu.aggs,
        )


def check_merge_options(
    options: Mapping[str, str],
    fields: Sequence[DataField],
    primary_keys: Sequence[str],
    table: str,
) -> None:
    """Validate the merge options of a table at load / create time (no-op for append tables)."""
    if primary_keys:
        MergeSettings.from_options(options, fields, primary_keys, table)


# --- checks against the schema -----------------------------------------------------------------


def _sequence_fields(
    options: opts.CoreOptions, names: list[str], engine: str, where: str
) -> list[str]:
    seq = options.sequence_fields
    for s in seq:
        if s not in names:
            raise OptionError(f"{where}sequence field '{s}' can not be found in table schema.")
        if seq.count(s) > 1:
            raise OptionError(f"{where}sequence field '{s}' is defined repeatedly.")
        if options.field_agg_func(s) is not None:
            raise OptionError(f"{where}should not define aggregation on sequence field '{s}'.")
    if seq and engine == FIRST_ROW:
        raise OptionError(f"{where}sequence.field is not supported by the first-row merge engine.")
    return seq


def _check_fields_options(options: opts.CoreOptions, names: list[str], where: str) -> None:
    """Every ``fields.*`` key must name existing fields (Java's validateFieldsPrefix) and be one
    this package implements."""
    for o in options.field_options():
        for f in o.fields:
            if f not in names:
                raise OptionError(f"{where}field '{f}' of option '{o.key}' is not in the schema.")
        if o.suffix == opts.SEQUENCE_GROUP:
            continue  # partial-update's (merge/sequence_group.py); other engines ignore it
        if o.suffix not in SUPPORTED_FIELD_SUFFIXES or len(o.fields) > 1:
            raise UnsupportedOptionError(
                f"{where}option '{o.key}' is not supported by paimon_pyspark yet."
            )
        if o.suffix in (opts.IGNORE_RETRACT, opts.DISTINCT):
            options.strict_bool(o.key)


def _field_aggs(
    options: opts.CoreOptions,
    fields: Sequence[DataField],
    primary_keys: Sequence[str],
    sequence_fields: Sequence[str],
    remove_on_delete: bool,
    where: str,
) -> tuple[tuple[str, FieldAgg], ...]:
    """AggregateMergeFunction.getAggFuncName + FieldAggregatorFactory.create for every field."""
    default = options.fields_default_agg_func
    out: list[tuple[str, FieldAgg]] = []
    for f in fields:
        if f.name in sequence_fields:
            func = aggregation.LAST_VALUE
        elif f.name in primary_keys:
            func = aggregation.PRIMARY_KEY
        else:
            func = options.field_agg_func(f.name) or default or aggregation.LAST_NON_NULL_VALUE
        ignore_retract = options.field_ignore_retract(f.name)
        if remove_on_delete and ignore_retract:
            raise OptionError(
                f"{where}'{opts.AGGREGATION_REMOVE_RECORD_ON_DELETE}' and "
                f"'{opts.FIELDS_PREFIX}{f.name}.{opts.IGNORE_RETRACT}' have "
                "conflicting behavior so should not be enabled at the same time."
            )
        nested_key = options.field_nested_key(f.name)
        ts_field = options.field_ts_field(f.name)
        aggregation.check_function(func, f, where, nested_key, ts_field)
        agg = FieldAgg(
            func,
            ignore_retract,
            options.field_list_agg_delimiter(f.name),
            options.field_distinct(f.name),
            nested_key,
            options.field_count_limit(f.name),
            ts_field,
            f.type,
        )
        out.append((f.name, agg))
    return tuple(out)


# --- sorting and grouping ----------------------------------------------------------------------


def sort_order(records: pa.Table, key_names: Sequence[str], settings: MergeSettings) -> np.ndarray:
    """Row indexes of ``records`` ordered by key, then user sequence fields, then
    ``_SEQUENCE_NUMBER`` (oldest first), then retractions before additions (Java's
    SortMergeReader comparator). Null sequence fields come first in either direction: Java's
    generated comparator returns "null is smaller" before it applies the direction, so a
    record with a null sequence field never wins over one with a value. Keys and system fields
    are NOT NULL. Float keys sort by Java's normalized key (``float_keys``): NaN last, -0.0
    before +0.0."""
    seq_order = "ascending" if settings.sequence_ascending else "descending"
    order = [(k, "ascending", "at_end") for k in key_names]
    order += [(s, seq_order, "at_start") for s in settings.sequence_fields]
    order.append((SEQUENCE_NUMBER, "ascending", "at_end"))
    tmp = "__paimon_merge_is_add"
    order.append((tmp, "ascending", "at_end"))
    fast = _composite_order(records, key_names, settings)
    if fast is not None:
        return fast
    is_add = pc.invert(pc.is_in(records.column(VALUE_KIND), pa.array(RETRACTS, pa.int8())))
    names = list(dict.fromkeys([*key_names, *settings.sequence_fields, SEQUENCE_NUMBER]))
    keys = records.select(names).append_column(tmp, is_add)
    for i, name in enumerate(names):
        if name in key_names and float_keys.is_float(keys.schema.field(i).type):
            keys = keys.set_column(i, name, float_keys.sortable(keys.column(i)))
    # Arrow reads a sort key starting with '.' or '[' as a field path: sort by position names.
    position = {name: f"_{i}" for i, name in enumerate([*names, tmp])}
    keys = keys.rename_columns(list(position.values()))
    order = [(position[name], direction, at) for name, direction, at in order]
    indices = pc.sort_indices(keys, sort_keys=order)
    return np.asarray(indices.to_numpy(), dtype=np.int64)


def _composite_order(
    records: pa.Table, key_names: Sequence[str], settings: MergeSettings
) -> np.ndarray | None:
    """The common case, one integer key and no sequence field, as one int64 sort of
    ``(key, _SEQUENCE_NUMBER, is_add)`` packed into a single number (3x faster than Arrow's
    multi-column sort); None when the ranges do not fit in 62 bits."""
    if len(key_names) != 1 or settings.sequence_fields:
        return None
    key = records.column(key_names[0])
    if not pa.types.is_integer(key.type) or key.null_count or pa.types.is_uint64(key.type):
        return None
    k = key.to_numpy().astype(np.int64)
    s = records.column(SEQUENCE_NUMBER).to_numpy()
    kinds = records.column(VALUE_KIND).to_numpy()
    k_lo, s_lo = int(k.min()), int(s.min())
    s_span = (int(s.max()) - s_lo + 1) * 2
    if (int(k.max()) - k_lo + 1) * s_span >= 2**62:
        return None
    is_add = ~np.isin(kinds, RETRACTS)
    packed = (k - k_lo) * s_span + (s - s_lo) * 2 + is_add
    # Values are distinct, so any sort gives one order; records come as concatenated sorted
    # runs, which numpy's stable sort (timsort) merges in about half quicksort's time.
    return np.asarray(np.argsort(packed, kind="stable"), dtype=np.int64)


def sort_records(records: pa.Table, key_names: Sequence[str], settings: MergeSettings) -> pa.Table:
    """``records`` in merge order (see :func:`sort_order`)."""
    return records.take(pa.array(sort_order(records, key_names, settings)))


def group_starts(sorted_records: pa.Table, key_names: Sequence[str]) -> np.ndarray:
    """Index of the first row of every run of equal keys in ``sorted_records``: neighbours
    are one key when Java's key comparator finds them equal (so float keys chain: -0.0 with
    +0.0, and a NaN with the key before it, see ``float_keys``)."""
    n = sorted_records.num_rows
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for k in key_names:
        col = sorted_records.column(k)
        prev, cur = col.slice(0, n - 1), col.slice(1)
        differs = pc.fill_null(float_keys.differs(prev, cur), True)
        both_null = pc.and_(pc.is_null(prev), pc.is_null(cur))
        differs = pc.and_(differs, pc.invert(both_null))
        change[1:] |= differs.to_numpy(zero_copy_only=False)
    return np.flatnonzero(change)


# --- dispatch ----------------------------------------------------------------------------------


def merge(
    records: pa.Table,
    key_names: Sequence[str],
    settings: MergeSettings,
    drop_delete: bool,
    buffer: bool = False,
) -> pa.Table:
    """``buffer``: the records are one writer's buffer (Java's SortBufferWriteBuffer), whose
    records of one key are merged in sort order; otherwise they come from sorted runs (reads,
    compaction), merged in sequence order as Java's SortMergeReader does. The two differ only
    when Java's comparator joins distinct float keys (see ``float_keys``)."""
    if records.num_rows == 0:
        return records
    # Only the sort columns are reordered; each engine picks rows in merge order and takes
    # them from ``records`` once, through ``order``.
    order = sort_order(records, key_names, settings)
    single = _single_integer_key(records, key_names)
    if single is not None:  # no float keys: no group needs reordering
        sorted_key = single[order]
        starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    else:
        sorted_keys = records.select(list(key_names)).take(pa.array(order))
        starts = group_starts(sorted_keys, key_names)
        if not buffer:
            order = _sequence_order_in_groups(records, sorted_keys, order, starts, settings)
    groups = Groups(starts, records.num_rows)
    view = SortedRecords(records, order)
    kinds = view.kinds
    if settings.engine == DEDUPLICATE:
        merged = deduplicate.merge(view, groups, kinds, settings.ignore_delete)
    elif settings.engine == FIRST_ROW:
        merged = first_row.merge(view, groups, kinds, settings.ignore_delete)
    elif settings.engine == PARTIAL_UPDATE:
        merged = partial_update.merge(
            view,
            groups,
            kinds,
            settings.ignore_delete,
            settings.remove_record_on_delete,
            settings.sequence_groups,
            settings.partial_update_aggs,
        )
    elif settings.engine == AGGREGATION:
        specs = {
            name: aggregation.AggSpec(
                agg.function,
                agg.ignore_retract,
                agg.delimiter,
                name in key_names,
                agg.distinct,
                agg.nested_key,
                agg.count_limit,
                agg.ts_field,
                agg.data_type,
            )
            for name in records.column_names
            if name not in (SEQUENCE_NUMBER, VALUE_KIND)
            for agg in [_agg_of(settings, name, key_names)]
        }
        merged = aggregation.merge(view, groups, kinds, specs, settings.remove_record_on_delete)
    else:
        raise OptionError(f"Unknown merge engine '{settings.engine}'.")
    if drop_delete:
        retract = np.isin(merged.column(VALUE_KIND).to_numpy(), RETRACTS)
        if retract.any():  # a filter copies every column even when it keeps every row
            merged = merged.filter(pa.array(~retract))
    return merged


def _single_integer_key(records: pa.Table, key_names: Sequence[str]) -> np.ndarray | None:
    """The key as numpy when it is one integer column without nulls, else None."""
    if len(key_names) != 1:
        return None
    key = records.column(key_names[0])
    if not pa.types.is_integer(key.type) or key.null_count:
        return None
    return np.asarray(key.to_numpy())


def _sequence_order_in_groups(
    records: pa.Table,
    sorted_keys: pa.Table,
    order: np.ndarray,
    starts: np.ndarray,
    settings: MergeSettings,
) -> np.ndarray:
    """``order`` with the records of each group ordered as :func:`sort_order` orders the
    records of one key (sequence fields, ``_SEQUENCE_NUMBER``, retractions first), for groups
    whose float keys differ in bits (-0.0 and +0.0, a NaN and its neighbour)."""
    n = len(order)
    floats = [c for c in sorted_keys.columns if float_keys.is_float(c.type)]
    if not floats or len(starts) == n:
        return order
    joined = np.zeros(n - 1, dtype=bool)
    for col in floats:
        norm = float_keys.sortable(col).to_numpy(zero_copy_only=False)
        joined |= norm[1:] != norm[:-1]
    inside = np.ones(n - 1, dtype=bool)
    inside[starts[1:] - 1] = False
    if not (joined & inside).any():
        return order
    group = np.repeat(np.arange(len(starts), dtype=np.int64), np.diff(np.append(starts, n)))
    names = list(dict.fromkeys([*settings.sequence_fields, SEQUENCE_NUMBER, VALUE_KIND]))
    taken = records.select(names).take(pa.array(order))
    tmp = "__paimon_merge_group"
    within = sort_order(taken.append_column(tmp, pa.array(group)), [tmp], settings)
    return np.asarray(order[within], dtype=np.int64)


def _agg_of(settings: MergeSettings, name: str, key_names: Sequence[str]) -> FieldAgg:
    if name in key_names:
        return FieldAgg(aggregation.PRIMARY_KEY)
    if name in settings.sequence_fields:
        return FieldAgg(aggregation.LAST_VALUE)
    return settings.field_agg(name)
