"""The aggregation merge engine and its field aggregate functions, vectorized over key groups.

Mirrors org.apache.paimon.mergetree.compact.aggregate.AggregateMergeFunction and the
FieldAggregator classes (FieldSumAgg, FieldProductAgg, FieldMaxAgg, FieldMinAgg,
FieldLastValueAgg, FieldLastNonNullValueAgg, FieldFirstValueAgg, FieldFirstNonNullValueAgg,
FieldListaggAgg, FieldBoolAndAgg, FieldBoolOrAgg, FieldPrimaryKeyAgg, FieldIgnoreRetractAgg); the
collection functions are in ``agg_collections``, the sketches and bitmaps in ``agg_sketches``.

Java folds the records of a key, oldest first, into one row: an addition (+I/+U) calls each
field's ``agg(acc, value)``, a retraction (-U/-D) calls ``retract(acc, value)`` (an error for
functions that cannot retract, a no-op with ``fields.<f>.ignore-retract``). With
``aggregation.remove-record-on-delete`` a -D instead resets the row to the -D's own values and the
result becomes a -D until a later record arrives (function state such as "first value seen" is
not reset). The result is a +I (or that -D) with the last record's sequence number; a key with a
single record is passed through untouched.

Here each function is rewritten as a closed form over the rows of a key from the last reset on:
"last candidate row", "first addition", "sum of signed values", "join of non-empty strings", each
one numpy ``reduceat`` or an Arrow kernel. The functions on nested values, sketches and bitmaps
(and a distinct ``listagg``) fold Java's ``agg`` / ``retract`` in Python over the keys with more
than one record (:func:`_fold`). Deliberate differences from Java, both on inputs Java
itself mishandles: a DECIMAL sum or product that leaves its precision raises MergeError (Java
keeps an out-of-precision value or turns it into null), and float sums are summed pairwise, not
strictly left to right (Java's own result already depends on how compactions grouped records).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.errors import MergeError, OptionError, UnsupportedOptionError
from paimon_pyspark.merge import agg_collections, agg_sketches
from paimon_pyspark.merge.groups import Groups, SortedRecords
from paimon_pyspark.spec.key_value import (
    DELETE,
    INSERT,
    SEQUENCE_NUMBER,
    UPDATE_BEFORE,
    VALUE_KIND,
)
from paimon_pyspark.types.data_types import DataField, DataType

SUM = "sum"
PRODUCT = "product"
MAX = "max"
MIN = "min"
LAST_VALUE = "last_value"
LAST_NON_NULL_VALUE = "last_non_null_value"
FIRST_VALUE = "first_value"
FIRST_NON_NULL_VALUE = "first_non_null_value"
FIRST_NOT_NULL_VALUE = "first_not_null_value"  # Java's legacy name of first_non_null_value
LISTAGG = "listagg"
BOOL_AND = "bool_and"
BOOL_OR = "bool_or"
PRIMARY_KEY = "primary-key"

FUNCTIONS = (
    SUM,
    PRODUCT,
    MAX,
    MIN,
    LAST_VALUE,
    LAST_NON_NULL_VALUE,
    FIRST_VALUE,
    FIRST_NON_NULL_VALUE,
    FIRST_NOT_NULL_VALUE,
    LISTAGG,
    BOOL_AND,
    BOOL_OR,
    PRIMARY_KEY,
    *agg_collections.FUNCTIONS,
    *agg_sketches.FUNCTIONS,
)
NOT_IMPLEMENTED: tuple[str, ...] = ()  # every function of Java 1.4.2 is implemented
_RETRACTABLE = (SUM, LAST_VALUE, LAST_NON_NULL_VALUE, PRIMARY_KEY, *agg_collections.RETRACTABLE)
_NUMERIC = ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL")
_NOT_COMPARABLE = ("ARRAY", "MAP", "MULTISET", "ROW", "VECTOR", "VARIANT", "BLOB")
_INT_BOUNDS = {
    pa.int8(): (-(2**7), 2**7 - 1),
    pa.int16(): (-(2**15), 2**15 - 1),
    pa.int32(): (-(2**31), 2**31 - 1),
    pa.int64(): (-(2**63), 2**63 - 1),
}


def check_function(
    func: str,
    field: DataField,
    where: str,
    nested_key: tuple[str, ...] = (),
    ts_field: str | None = None,
) -> None:
    """FieldAggregatorFactory.create's checks: the function exists and fits the field type."""
    root = field.type.root
    if func not in FUNCTIONS:
        raise OptionError(
            f"{where}unknown aggregate function '{func}' for field '{field.name}' "
            f"(known: {', '.join(FUNCTIONS)})."
        )
    ok = True
    if func in agg_collections.FUNCTIONS:
        refused, unsupported = agg_collections.check(func, field.type, nested_key, ts_field)
        if unsupported is not None:
            raise UnsupportedOptionError(
                f"{where}aggregate function '{func}' of field '{field.name}' is not supported "
                f"by paimon_pyspark on {unsupported}."
            )
        if refused is not None:
            raise OptionError(
                f"{where}aggregate function '{func}': field '{field.name}' of type "
                f"{field.type} {refused}."
            )
    elif func in agg_sketches.FUNCTIONS:
        ok = agg_sketches.check_type(root)
    elif func in (SUM, PRODUCT):
        ok = root in _NUMERIC
        if ok and func == PRODUCT and root == "DECIMAL":
            raise UnsupportedOptionError(
                f"{where}aggregate function 'product' on DECIMAL field '{field.name}' is not "
                "supported by paimon_pyspark yet."
            )
    elif func in (MAX, MIN):
        ok = root not in _NOT_COMPARABLE
    elif func in (BOOL_AND, BOOL_OR):
        ok = root == "BOOLEAN"
    elif func == LISTAGG:
        ok = agg_collections.is_listagg_type(field.type)
    if not ok:
        raise OptionError(
            f"{where}aggregate function '{func}' does not accept field '{field.name}' of type "
            f"{field.type}."
        )


@dataclass(frozen=True)
class AggSpec:
    function: str = LAST_NON_NULL_VALUE
    ignore_retract: bool = False
    delimiter: str = ","
    is_key: bool = False
    distinct: bool = False
    nested_key: tuple[str, ...] = ()
    count_limit: int = agg_collections.INT_MAX
    ts_field: str | None = None
    data_type: DataType | None = None
    """The field's Paimon type, for the functions on nested values."""


class _Context:
    """Row masks shared by every field of one merge."""

    def __init__(self, groups: Groups, kinds: np.ndarray, remove_record_on_delete: bool) -> None:
        self.groups = groups
        retract = (kinds == UPDATE_BEFORE) | (kinds == DELETE)
        self.add = ~retract
        # With remove-record-on-delete every -D resets the row; only the last one matters.
        reset = (kinds == DELETE) if remove_record_on_delete else np.zeros(len(kinds), bool)
        self.retract = retract & ~reset  # rows that call FieldAggregator.retract
        self.last_reset = groups.last_where(reset)  # per group, -1 if none
        row_reset = groups.broadcast(self.last_reset)
        self.is_reset = groups.arange == row_reset  # the (last) reset row of its group
        seg = np.where(self.last_reset >= 0, self.last_reset, groups.starts)
        self.in_segment = groups.arange >= groups.broadcast(seg)


def merge(
    view: SortedRecords,
    groups: Groups,
    kinds: np.ndarray,
    specs: Mapping[str, AggSpec],
    remove_record_on_delete: bool,
) -> pa.Table:
    """One row per key (Java's result record), sorted by key."""
    ctx = _Context(groups, kinds, remove_record_on_delete)
    single = groups.single
    seq = view.sequence_numbers
    last_kind = kinds[groups.lasts]
    deleted = (last_kind == DELETE) if remove_record_on_delete else np.zeros(groups.count, bool)
    kind = np.where(single, last_kind, np.where(deleted, DELETE, INSERT)).astype(np.int8)
    columns: list[pa.Array | pa.ChunkedArray] = []
    for name in view.column_names:
        if name == SEQUENCE_NUMBER:
            columns.append(pa.array(seq[groups.lasts], pa.int64()))
        elif name == VALUE_KIND:
            columns.append(pa.array(kind, pa.int8()))
        else:
            spec = specs.get(name, AggSpec())
            columns.append(_aggregate(name, view, spec, ctx))
    return pa.Table.from_arrays(columns, schema=view.schema)


def _aggregate(name: str, view: SortedRecords, spec: AggSpec, ctx: _Context) -> pa.Array:
    g = ctx.groups
    func = FIRST_NON_NULL_VALUE if spec.function == FIRST_NOT_NULL_VALUE else spec.function
    if spec.is_key:
        func = PRIMARY_KEY
    retracting = ctx.retract & g.row_multi
    noop = np.zeros(g.num_rows, bool)
    if spec.ignore_retract:
        noop, retracting = retracting, noop
    if func not in _RETRACTABLE and retracting.any():
        raise MergeError(
            f"Aggregate function '{func}' of field '{name}' does not support retraction; set "
            f"'fields.{name}.ignore-retract' = 'true' to ignore retraction messages."
        )
    valid = view.valid(name)
    col = _Column(name, view, ctx.groups)
    if func == PRIMARY_KEY:
        return col.take(g.lasts)
    if func == LAST_VALUE:
        pos = g.last_where(~noop)
        return col.take(np.where((pos >= 0) & ~retracting[np.maximum(pos, 0)], pos, -1))
    if func == LAST_NON_NULL_VALUE:
        cand = ctx.in_segment & (((ctx.add | retracting) & valid) | ctx.is_reset)
        pos = g.last_where(cand)
        return col.take(np.where((pos >= 0) & ~retracting[np.maximum(pos, 0)], pos, -1))
    if func in (FIRST_VALUE, FIRST_NON_NULL_VALUE):
        first = g.first_where(ctx.add & (valid if func == FIRST_NON_NULL_VALUE else True))
        return col.take(np.maximum(first, ctx.last_reset))
    # Functions that skip null inputs: the reset row (if any) and the later non-null additions.
    cand = ctx.in_segment & valid & (ctx.add | ctx.is_reset)
    if func in (MAX, MIN):
        return col.take(_arg_extreme(col, cand, g, func == MAX))
    if func in (BOOL_AND, BOOL_OR):
        return _bool_agg(col, cand, g, func == BOOL_AND)
    if func == LISTAGG and spec.distinct:
        return _fold(col, ctx, retracting, agg_collections.listagg_distinct(spec.delimiter), None)
    if func == LISTAGG:
        return _listagg(col, ctx, spec.delimiter)
    if func in agg_sketches.FUNCTIONS:
        return _fold(col, ctx, retracting, agg_sketches.folder(func), None)
    if func in agg_collections.FUNCTIONS:
        plain = func == agg_collections.COLLECT and not spec.distinct and not retracting.any()
        if plain and pa.types.is_list(col.type):
            return _concat_lists(col, ctx, valid)
        assert spec.data_type is not None, "the collection functions need the field's type"
        agg, retract = agg_collections.folders(
            func, spec.data_type, spec.distinct, spec.nested_key, spec.count_limit, spec.ts_field
        )
        return _fold(col, ctx, retracting, agg, retract)
    if func == SUM:
        return _sum(name, col, cand, ctx.in_segment & valid & retracting, g)
    if func == PRODUCT:
        if retracting.any():
            raise MergeError(
                f"Retracting a 'product' aggregate (field '{name}') is not supported by "
                f"paimon_pyspark yet; set 'fields.{name}.ignore-retract' = 'true' to ignore it."
            )
        return _product(name, col, cand, g)
    raise OptionError(f"Unknown aggregate function '{spec.function}' for field '{name}'.")


# --- helpers -----------------------------------------------------------------------------------


class _Column:
    """One input column for an aggregate: values in merge order, results taken from the
    original records; a key with a single record keeps its own value (Java's pass-through)."""

    def __init__(self, name: str, view: SortedRecords, groups: Groups) -> None:
        self.name = name
        self.array = view.records.column(name).combine_chunks()
        self.order = view.order
        self.groups = groups

    @property
    def type(self) -> pa.DataType:
        return self.array.type

    def numpy(self, fill: object) -> np.ndarray:
        """Values in merge order, nulls replaced by ``fill``."""
        filled = pc.fill_null(self.array, fill) if self.array.null_count else self.array
        return np.asarray(filled.to_numpy(zero_copy_only=False)[self.order])

    def mask(self, values: pa.Array) -> np.ndarray:
        """A boolean array computed on the original rows, in merge order."""
        return np.asarray(values.to_numpy(zero_copy_only=False)[self.order], dtype=bool)

    def take(self, pos: np.ndarray) -> pa.Array:
        """Per group the value at merge-order row ``pos`` (null where -1)."""
        g = self.groups
        pos = np.where(g.single, g.starts, pos)
        orig = np.where(pos >= 0, self.order[np.maximum(pos, 0)], -1)
        return self.array.take(pa.array(orig, mask=orig < 0))

    def passthrough(self, computed: pa.Array) -> pa.Array:
        g = self.groups
        if not g.single.any():
            return computed
        own = self.array.take(pa.array(self.order[g.starts]))
        return pc.if_else(pa.array(g.single), own, computed)


def _arg_extreme(col: _Column, cand: np.ndarray, g: Groups, largest: bool) -> np.ndarray:
    """Per group the row of the largest (smallest) candidate value, -1 if none; ties keep the
    earlier row for max and the later one for min, as FieldMaxAgg / FieldMinAgg do."""
    typ = col.type
    if pa.types.is_integer(typ) or pa.types.is_floating(typ):
        return _arg_extreme_numeric(col.numpy(0), cand, g, largest)
    if pa.types.is_decimal128(typ) and typ.precision <= 18:
        return _arg_extreme_numeric(_decimal_unscaled(col.array, col.order)[0], cand, g, largest)
    rank = pc.rank(col.array, sort_keys="ascending", tiebreaker="dense")
    r = np.asarray(rank.to_numpy()[col.order], dtype=np.int64)
    if largest:
        best = np.maximum.reduceat(np.where(cand, r, 0), g.starts)
        match = cand & (r == g.broadcast(best))
        return np.asarray(np.where(best > 0, g.first_where(match), -1))
    none = np.iinfo(np.int64).max
    best = np.minimum.reduceat(np.where(cand, r, none), g.starts)
    match = cand & (r == g.broadcast(best))
    return np.asarray(np.where(best < none, g.last_where(match), -1))


def _arg_extreme_numeric(
    values: np.ndarray, cand: np.ndarray, g: Groups, largest: bool
) -> np.ndarray:
    """_arg_extreme on numbers. NaN is the largest double, as in Java's Double.compare:
    ``maximum`` propagates it, ``fmin`` skips it unless nothing else is there."""
    has = g.any(cand)
    reduce: np.ufunc
    if values.dtype.kind == "f":
        fill = -np.inf if largest else np.inf
        reduce = np.maximum if largest else np.fmin
    else:
        info = np.iinfo(values.dtype)
        fill = info.min if largest else info.max
        reduce = np.maximum if largest else np.minimum
    best = g.broadcast(reduce.reduceat(np.where(cand, values, fill), g.starts))
    equal = values == best
    if values.dtype.kind == "f":
        equal |= np.isnan(values) & np.isnan(best)
    match = cand & equal
    pos = g.first_where(match) if largest else g.last_where(match)
    return np.asarray(np.where(has, pos, -1))


def _bool_agg(col: _Column, cand: np.ndarray, g: Groups, conjunction: bool) -> pa.Array:
    values = col.numpy(False).astype(bool)
    has = g.any(cand)
    result = ~g.any(cand & ~values) if conjunction else g.any(cand & values)
    return col.passthrough(pa.array(result, pa.bool_(), mask=~has))


def _listagg(col: _Column, ctx: _Context, delimiter: str) -> pa.Array:
    """FieldListaggAgg: non-empty values joined in order; empty or null inputs are skipped.

    Java tests ``getSizeInBytes() <= 0``, so a blank value such as ``" "`` is joined like any
    other. With nothing to join the result is ``""`` if the chain (the reset row, then the
    additions) holds one, else null."""
    g = ctx.groups
    arr = col.array
    empty = col.mask(pc.equal(pc.binary_length(arr), 0))  # null -> False
    valid = col.mask(arr.is_valid())
    chain = ctx.in_segment & (ctx.add | ctx.is_reset)
    joinable = chain & valid & ~empty
    rows = np.flatnonzero(joinable)
    counts = np.add.reduceat(joinable.astype(np.int64), g.starts)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    values = arr.take(pa.array(col.order[rows]))
    lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)
    joined = pc.binary_join(lists, delimiter).cast(arr.type)
    # With nothing joined, the chain's non-null values (the reset row first) are all "".
    fallback = col.take(g.first_where(chain & valid))
    return col.passthrough(pc.if_else(pa.array(counts > 0), joined, fallback))


def _fold(
    col: _Column,
    ctx: _Context,
    retracting: np.ndarray,
    agg: Callable[[Any, Any], Any],
    retract: Callable[[Any, Any], Any] | None,
) -> pa.Array:
    """Java's fold of each key with more than one record, on Python values: the accumulator
    starts null (or at the reset row's value), additions call ``agg``, retractions ``retract``
    (ignored retractions are not in ``retracting``)."""
    g = ctx.groups
    reset = ctx.is_reset & ctx.in_segment
    add = ctx.in_segment & ctx.add & ~reset
    undo = ctx.in_segment & retracting
    rows = np.flatnonzero((reset | add | undo) & g.row_multi)
    values = col.array.take(pa.array(col.order[rows])).to_pylist()
    step = np.where(reset[rows], 0, np.where(add[rows], 1, 2)).tolist()
    owner = g.row_group[rows].tolist()
    results: list[Any] = [None] * g.count
    current, acc = -1, None
    for group, kind, value in zip(owner, step, values, strict=True):
        if group != current:
            if current >= 0:
                results[current] = acc
            current, acc = group, None
        if kind == 0:
            acc = value
        elif kind == 1:
            acc = agg(acc, value)
        else:
            assert retract is not None
            acc = retract(acc, value)
    if current >= 0:
        results[current] = acc
    return col.passthrough(pa.array(results, col.type))


def _concat_lists(col: _Column, ctx: _Context, valid: np.ndarray) -> pa.Array:
    """FieldCollectAgg without distinct or retraction: the non-null arrays of the chain (the
    reset row, then the additions) concatenated in order; null if there are none."""
    g = ctx.groups
    chain = ctx.in_segment & (ctx.add | ctx.is_reset) & valid & g.row_multi
    rows = np.flatnonzero(chain)
    taken = col.array.take(pa.array(col.order[rows]))
    lengths = pc.list_value_length(taken).to_numpy(zero_copy_only=False).astype(np.int64)
    counts = np.bincount(g.row_group[rows], weights=lengths, minlength=g.count).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    has = g.any(chain)
    values = pc.list_flatten(taken)
    typ = col.type
    assert isinstance(typ, pa.ListType)
    lists = pa.ListArray.from_arrays(
        pa.array(offsets, pa.int32()), values, type=typ, mask=pa.array(~has)
    )
    return col.passthrough(lists)


def _decimal_unscaled(arr: pa.Array, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (low, high) 64-bit limbs of each decimal128 value's unscaled integer, in order."""
    buf = arr.buffers()[1]
    limbs = np.frombuffer(buf, dtype=np.int64)[2 * arr.offset : 2 * (arr.offset + len(arr))]
    limbs = limbs.reshape(-1, 2)[order]
    return np.asarray(limbs[:, 0]), np.asarray(limbs[:, 1])


def _decimal_from_unscaled(values: np.ndarray, typ: pa.DataType, null: np.ndarray) -> pa.Array:
    if values.dtype == object:
        low = (values & (2**64 - 1)).astype(np.uint64).view(np.int64)
        high = (values >> 64).astype(np.int64)
    else:
        low = values.astype(np.int64)
        high = low >> 63
    limbs = np.empty(2 * len(values), dtype=np.int64)
    limbs[0::2] = low
    limbs[1::2] = high
    arr = pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(limbs.tobytes())])
    return pc.if_else(pa.array(null), pa.scalar(None, typ), arr) if null.any() else arr


def _group_prefix(contrib: np.ndarray, g: Groups) -> np.ndarray:
    """Running total of ``contrib`` within each group (exact for int64 and object arrays)."""
    cs = np.cumsum(contrib)
    base = np.zeros(g.count, dtype=cs.dtype)
    base[1:] = cs[g.starts[1:] - 1]
    return np.asarray(cs - g.broadcast(base))


def _exact_sums(
    name: str,
    values: np.ndarray,
    sign: np.ndarray,
    counted: np.ndarray,
    g: Groups,
    bounds: tuple[int, int],
    what: str,
) -> np.ndarray:
    """Per group the sum of ``sign * values`` over counted rows, raising MergeError when a
    running total leaves ``bounds`` (Java's addExact / subtractExact / negateExact)."""
    lo, hi = bounds
    small = values.dtype != object and (np.abs(values.astype(np.float64)) * counted).sum() < 2.0**62
    if small:
        contrib = np.where(counted, sign * values.astype(np.int64), 0)
    else:
        contrib = np.where(counted, sign.astype(object) * values.astype(object), 0)
    prefix = _group_prefix(contrib, g)
    check = counted & g.row_multi
    if check.any():
        p = prefix[check]
        if (p < lo).any() or (p > hi).any():
            raise MergeError(f"Aggregate 'sum' of field '{name}' overflows {what}.")
    sums = np.asarray(prefix[g.lasts])
    return sums if not small else sums.astype(np.int64)


def _sum(name: str, col: _Column, cand: np.ndarray, retracting: np.ndarray, g: Groups) -> pa.Array:
    """FieldSumAgg: additions add, retractions subtract, nulls are skipped; null if no value."""
    counted = cand | retracting
    sign = np.where(retracting, -1, 1).astype(np.int64)
    null = ~g.any(counted)
    typ = col.type
    if pa.types.is_floating(typ):
        floats = col.numpy(0)
        contrib = np.where(counted, np.where(retracting, -floats, floats), 0).astype(floats.dtype)
        sums = np.add.reduceat(contrib, g.starts)
        return col.passthrough(pa.array(sums, typ, mask=null))
    if pa.types.is_integer(typ):
        bounds = _INT_BOUNDS.get(typ)
        if bounds is None:
            raise MergeError(f"Aggregate 'sum' does not accept field '{name}' of type {typ}.")
        ints = col.numpy(0).astype(np.int64)
        sums = _exact_sums(name, ints, sign, counted, g, bounds, str(typ))
        return col.passthrough(pa.array(sums, typ, mask=null))
    if pa.types.is_decimal(typ):
        dec128 = pa.decimal128(typ.precision, typ.scale)
        arr = col.array if typ == dec128 else col.array.cast(dec128)
        low, high = _decimal_unscaled(arr, col.order)
        limit = 10**typ.precision - 1
        if typ.precision <= 18:
            values = low
        else:
            values = high.astype(object) * 2**64 + low.view(np.uint64).astype(object)
        sums = _exact_sums(
            name, values, sign, counted, g, (-limit, limit), f"DECIMAL({typ.precision})"
        )
        result = _decimal_from_unscaled(sums, dec128, null)
        return col.passthrough(result if typ == dec128 else result.cast(typ))
    raise MergeError(f"Aggregate 'sum' does not accept field '{name}' of type {typ}.")


def _product(name: str, col: _Column, cand: np.ndarray, g: Groups) -> pa.Array:
    """FieldProductAgg (additions only): product of the non-null values; null if none."""
    typ = col.type
    null = ~g.any(cand)
    if pa.types.is_floating(typ):
        floats = col.numpy(1)
        prod = np.multiply.reduceat(np.where(cand, floats, 1).astype(floats.dtype), g.starts)
        return col.passthrough(pa.array(prod, typ, mask=null))
    bounds = _INT_BOUNDS.get(typ)
    if bounds is None:
        raise MergeError(f"Aggregate 'product' does not accept field '{name}' of type {typ}.")
    values = col.numpy(1).astype(np.int64)
    # Running products grow in magnitude until the first zero: checking the product of the
    # values before each group's first zero, and the final one, covers every step.
    first_zero = g.broadcast(g.first_where(cand & (values == 0)))
    before_zero = cand & ((first_zero < 0) | (g.arange < first_zero))
    obj = values.astype(object)
    one = np.ones(len(values), dtype=object)
    prod = np.multiply.reduceat(np.where(cand, obj, one), g.starts)
    peak = np.multiply.reduceat(np.where(before_zero, obj, one), g.starts)
    lo, hi = bounds
    multi = ~g.single
    if ((peak < lo) | (peak > hi))[multi].any():
        raise MergeError(f"Aggregate 'product' of field '{name}' overflows {typ}.")
    return col.passthrough(pa.array(prod.astype(np.int64), typ, mask=null))
