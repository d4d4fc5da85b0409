"""Partial-update sequence groups and aggregate functions: their options, checked as Java does.

Mirrors the option handling of org.apache.paimon.mergetree.compact.PartialUpdateMergeFunction's
Factory (``fields.<s1,s2>.sequence-group = f1,f2``, ``getAggFuncName``,
``partial-update.remove-record-on-sequence-group``) and the aggregate-name check of
``SchemaValidation.validateMergeFunctionFactory``. The merge itself is in ``partial_update``.

A group is ordered by its sequence fields (compared as a tuple, NULL lowest, Java's
``UserDefinedSeqComparator``); the fields it protects change only with a record whose sequence
fields are not all NULL and compare at least as high as the row's. Aggregate functions other than
``last_non_null_value`` are only allowed on protected fields; there every function of the
aggregation engine is accepted, as in Java (one ``FieldAggregatorFactory`` builds them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from paimon_pyspark import options as opts
from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.merge import aggregation
from paimon_pyspark.types.data_types import DataField

COMMUTATIVE = (
    aggregation.SUM,
    aggregation.PRODUCT,
    aggregation.MAX,
    aggregation.MIN,
    aggregation.BOOL_AND,
    aggregation.BOOL_OR,
)
"""Functions whose ``agg``/``aggReversed`` are one: an older record folds in like a newer one."""


@dataclass(frozen=True)
class SequenceGroup:
    """One ``fields.<s1,s2>.sequence-group`` option."""

    sequence_fields: tuple[str, ...]
    fields: tuple[str, ...]
    """The protected fields, in schema order, without the sequence fields."""
    removes_record: bool = False
    """A -D that wins this group removes the whole row
    (``partial-update.remove-record-on-sequence-group`` names one of its sequence fields)."""


@dataclass(frozen=True)
class PartialUpdateOptions:
    remove_record_on_delete: bool
    groups: tuple[SequenceGroup, ...]
    aggs: tuple[tuple[str, aggregation.AggSpec], ...]
    """(field, its function and per-field options) of every protected field with an aggregate
    function."""


def partial_update_options(
    options: opts.CoreOptions,
    fields: Sequence[DataField],
    primary_keys: Sequence[str],
    ignore_delete: bool,
    where: str,
) -> PartialUpdateOptions:
    """Java's PartialUpdateMergeFunction.Factory checks; OptionError where Java refuses,
    UnsupportedOptionError for what Java accepts and this package does not implement."""
    names = [f.name for f in fields]
    remove = options.partial_update_remove_record_on_delete
    on_group = options.options.get(opts.PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP)
    groups = _groups(options, names, primary_keys, where)
    protected = {f for g in groups for f in g.fields}
    seq_fields = [s for g in groups for s in g.sequence_fields]
    if remove and ignore_delete:
        raise OptionError(
            _conflict(where, "ignore-delete", opts.PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE)
        )
    if on_group is not None and ignore_delete:
        raise OptionError(
            _conflict(where, "ignore-delete", opts.PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP)
        )
    if remove and groups:
        raise OptionError(
            _conflict(where, opts.SEQUENCE_GROUP, opts.PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE)
        )
    removing: set[str] = set()
    if on_group is not None:
        removing = set(on_group.split(","))
        if not removing <= set(seq_fields):
            raise OptionError(
                f"{where}field '{on_group}' defined in "
                f"'{opts.PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP}' option must be part of "
                "sequence groups."
            )
        groups = tuple(
            SequenceGroup(g.sequence_fields, g.fields, bool(removing & set(g.sequence_fields)))
            for g in groups
        )
    aggs: list[tuple[str, aggregation.AggSpec]] = []
    default = options.fields_default_agg_func
    remove_agg_record = options.aggregation_remove_record_on_delete
    for f in fields:
        func = options.field_agg_func(f.name) or default
        if func is not None:
            _check_known(func, f.name, where)
        if f.name in seq_fields:
            continue
        if (func is not None or f.name in primary_keys) and remove_agg_record:
            # FieldAggregatorFactory.create checks it for every aggregator, in any engine.
            ignore = f"{opts.FIELDS_PREFIX}{f.name}.{opts.IGNORE_RETRACT}"
            if options.field_ignore_retract(f.name):
                raise OptionError(
                    _conflict(where, opts.AGGREGATION_REMOVE_RECORD_ON_DELETE, ignore)
                )
        if f.name in primary_keys or func is None:
            continue
        if func != aggregation.LAST_NON_NULL_VALUE and f.name not in protected:
            raise OptionError(
                f"{where}must use sequence group for aggregation functions but not found for "
                f"field '{f.name}' ('{func}'; set 'fields.<sequence fields>.sequence-group' to "
                f"include it)."
            )
        if f.name not in protected:
            continue  # last_non_null_value outside a group is the engine's own behaviour
        nested_key = options.field_nested_key(f.name)
        ts_field = options.field_ts_field(f.name)
        aggregation.check_function(func, f, where, nested_key, ts_field)
        spec = aggregation.AggSpec(
            function=func,
            ignore_retract=options.field_ignore_retract(f.name),
            delimiter=options.field_list_agg_delimiter(f.name),
            distinct=options.field_distinct(f.name),
            nested_key=nested_key,
            count_limit=options.field_count_limit(f.name),
            ts_field=ts_field,
            data_type=f.type,
        )
        aggs.append((f.name, spec))
    return PartialUpdateOptions(remove, groups, tuple(aggs))


def _groups(
    options: opts.CoreOptions, names: list[str], keys: Sequence[str], where: str
) -> tuple[SequenceGroup, ...]:
    """Every ``fields.<s1,s2>.sequence-group`` option as a group, in the order of their first
    sequence field."""
    found: list[tuple[tuple[str, ...], list[str], str]] = []
    owner: dict[str, str] = {}
    for o in options.field_options():
        if o.suffix != opts.SEQUENCE_GROUP:
            continue
        seq = tuple(o.fields)
        members = o.value.split(",")
        for f in (*seq, *members):
            if f not in names:
                raise OptionError(
                    f"{where}field '{f}' of option '{o.key}' = '{o.value}' can not be found in "
                    "table schema."
                )
        for f in members:
            if f in seq:
                continue
            if f in owner:
                raise OptionError(
                    f"{where}field '{f}' is defined repeatedly by multiple groups: '{o.key}' and "
                    f"'{owner[f]}'."
                )
            owner[f] = o.key
        found.append((seq, members, o.key))
    for seq, _, key in found:
        for s in seq:
            other = owner.get(s) or next((k for sq, _, k in found if k != key and s in sq), None)
            if other is not None:
                # Java's result then depends on the iteration order of a hash map.
                raise UnsupportedOptionError(
                    f"{where}sequence field '{s}' of option '{key}' is also in the group of "
                    f"'{other}'; overlapping sequence groups are not supported by paimon_pyspark."
                )
    # A primary key keeps its value whatever group names it (Java's primary-key aggregator).
    out = [
        SequenceGroup(seq, tuple(n for n in names if n in members and n not in (*seq, *keys)))
        for seq, members, _ in found
    ]
    return tuple(sorted(out, key=lambda g: min(names.index(s) for s in g.sequence_fields)))


def _check_known(func: str, field: str, where: str) -> None:
    """SchemaValidation.validateMergeFunctionFactory: every named function must exist, also on
    fields (keys, sequence fields) that never aggregate."""
    known = set(aggregation.FUNCTIONS) | set(getattr(aggregation, "NOT_IMPLEMENTED", ()))
    if func not in known:
        raise OptionError(
            f"{where}unknown aggregate function '{func}' for field '{field}' "
            f"(known: {', '.join(sorted(known))})."
        )


def _conflict(where: str, a: str, b: str) -> str:
    return (
        f"{where}'{a}' and '{b}' have conflicting behavior so should not be enabled at the "
        "same time."
    )
