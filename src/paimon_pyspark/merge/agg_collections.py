"""The collection aggregate functions: ``collect``, ``merge_map``, ``merge_map_with_keytime``,
``nested_update``, ``nested_partial_update``, and ``listagg`` with ``distinct``.

Mirrors FieldCollectAgg, FieldMergeMapAgg, FieldMergeMapWithKeyTimeAgg, FieldNestedUpdateAgg,
FieldNestedPartialUpdateAgg and FieldListaggAgg (distinct), with their factories' checks.

Each is Java's ``agg(accumulator, input)`` / ``retract(accumulator, input)`` on Python values
(lists, ``(key, value)`` lists, dicts for rows), folded per key by ``aggregation`` over the keys
with more than one record; a plain ``collect`` without retraction is a vectorized list
concatenation there instead. Where Java builds a ``HashMap`` / ``HashSet`` the result is in that
map's iteration order (``spec.java_hashmap``), so the arrays we write equal Java's element
for element.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from paimon_pyspark.errors import MergeError
from paimon_pyspark.spec import binary_row, murmur
from paimon_pyspark.spec.java_hash import key_and_hash
from paimon_pyspark.spec.java_hashmap import JavaHashMap
from paimon_pyspark.types.data_types import (
    MAX_LENGTH,
    ArrayType,
    CharType,
    DataType,
    MapType,
    RowType,
)

COLLECT = "collect"
MERGE_MAP = "merge_map"
MERGE_MAP_WITH_KEYTIME = "merge_map_with_keytime"
NESTED_UPDATE = "nested_update"
NESTED_PARTIAL_UPDATE = "nested_partial_update"
FUNCTIONS = (COLLECT, MERGE_MAP, MERGE_MAP_WITH_KEYTIME, NESTED_UPDATE, NESTED_PARTIAL_UPDATE)
RETRACTABLE = (COLLECT, MERGE_MAP, NESTED_UPDATE)
INT_MAX = 2**31 - 1

Fold = Callable[[Any, Any], Any]


def check(
    func: str, t: DataType, nested_key: Sequence[str], ts_field: str | None
) -> tuple[str | None, str | None]:
    """The factory's checks: (a reason Java refuses the field, a reason we do), or Nones."""
    if func == COLLECT:
        return (None if isinstance(t, ArrayType) else "must be ARRAY"), None
    if func in (MERGE_MAP, MERGE_MAP_WITH_KEYTIME):
        if not isinstance(t, MapType):
            return "must be MAP", None
        if func == MERGE_MAP_WITH_KEYTIME:
            value = t.value
            if not isinstance(value, RowType):
                return "must be a MAP with ROW values", None
            if len(value.fields) < 2:
                return "must be a MAP with ROW values of at least 2 fields", None
            if ts_field is not None and ts_field not in [f.name for f in value.fields]:
                return f"has no timestamp field '{ts_field}' in its ROW values", None
        if key_and_hash(t.key) is None:
            return None, f"a MAP key of type {t.key} (Java hashes it by its object identity)"
        return None, None
    # nested_update, nested_partial_update
    if not (isinstance(t, ArrayType) and isinstance(t.element, RowType)):
        return "must be ARRAY<ROW>", None
    if func == NESTED_PARTIAL_UPDATE and not nested_key:
        return "needs 'nested-key'", None
    names = [f.name for f in t.element.fields]
    missing = [k for k in nested_key if k not in names]
    if missing:
        return f"has no nested-key field {missing[0]!r}", None
    return None, None


def folders(
    func: str,
    t: DataType,
    distinct: bool,
    nested_key: Sequence[str],
    count_limit: int,
    ts_field: str | None,
) -> tuple[Fold, Fold | None]:
    """Java's (agg, retract) of ``func`` for a field of type ``t``; retract None if Java's
    function cannot retract."""
    if func == COLLECT:
        assert isinstance(t, ArrayType)
        return _collect(t.element, distinct)
    if func == MERGE_MAP:
        assert isinstance(t, MapType)
        return _merge_map(t)
    if func == MERGE_MAP_WITH_KEYTIME:
        assert isinstance(t, MapType) and isinstance(t.value, RowType)
        names = [f.name for f in t.value.fields]
        return _merge_map_keytime(t, ts_field if ts_field is not None else names[-1]), None
    assert isinstance(t, ArrayType) and isinstance(t.element, RowType)
    if func == NESTED_UPDATE:
        return _nested_update(t.element, nested_key, count_limit)
    return _nested_partial_update(t.element, nested_key), None


# --- collect -----------------------------------------------------------------------------------


def _equal_key(element: DataType) -> Callable[[Any], Hashable]:
    kh = key_and_hash(element)
    if kh is None:
        return _frozen

    def key(v: Any) -> Hashable:
        k: Hashable = kh(v)[0]
        return k

    return key


def _frozen(v: Any) -> Hashable:
    """A hashable stand-in for a nested value, equal where the values are equal."""
    if isinstance(v, dict):
        return ("r", tuple((k, _frozen(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("a", tuple(_frozen(x) for x in v))
    if isinstance(v, tuple):
        return ("t", tuple(_frozen(x) for x in v))
    out: Hashable = v
    return out


def _collect(element: DataType, distinct: bool) -> tuple[Fold, Fold]:
    kh = key_and_hash(element)
    equal = _equal_key(element)

    def agg(acc: Any, value: Any) -> Any:
        if acc is None and value is None:
            return None
        if not distinct:
            if acc is None or value is None:
                return value if acc is None else acc
            return [*acc, *value]
        if kh is None:  # a constructed element type: a list, compared by value
            out = list(acc or ())
            seen = {equal(e) for e in out}
            for e in value or ():
                k = equal(e)
                if k not in seen:
                    seen.add(k)
                    out.append(e)
            return out
        bag = JavaHashMap()
        for e in [*(acc or ()), *(value or ())]:
            key, h = kh(e)
            if key not in bag:
                bag.put(key, h, e)
        return [e for _, e in bag.items()]

    def retract(acc: Any, value: Any) -> Any:
        if acc is None:
            return None
        if not value:
            return acc
        pending = [equal(e) for e in value]
        out = []
        for e in acc:
            k = equal(e)
            if k in pending:
                pending.remove(k)
            else:
                out.append(e)
        return out

    return agg, retract


# --- merge_map ---------------------------------------------------------------------------------


def _map_of(kh: Callable[[Any], tuple[Hashable, int]], entries: Any, into: JavaHashMap) -> None:
    for k, v in entries:
        key, h = kh(k)
        into.put(key, h, (k, v))


def _merge_map(t: MapType) -> tuple[Fold, Fold]:
    kh = key_and_hash(t.key)
    assert kh is not None

    def agg(acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        out = JavaHashMap()
        _map_of(kh, acc, out)
        _map_of(kh, value, out)
        return [kv for _, kv in out.items()]

    def retract(acc: Any, value: Any) -> Any:
        if acc is None:
            return None
        if not value:
            return acc
        gone = {kh(k)[0] for k, _ in value}
        out = JavaHashMap()
        _map_of(kh, [(k, v) for k, v in acc if kh(k)[0] not in gone], out)
        return [kv for _, kv in out.items()]

    return agg, retract


def _merge_map_keytime(t: MapType, ts: str) -> Fold:
    kh = key_and_hash(t.key)
    assert kh is not None

    def stamp(row: dict[str, Any]) -> str:
        v = row[ts]
        if not isinstance(v, str):
            raise MergeError(
                f"merge_map_with_keytime compares timestamp field '{ts}' as a string; "
                f"got {v!r} (Java fails here too)."
            )
        return v

    def agg(acc: Any, value: Any) -> Any:
        if acc is None:
            return value
        if value is None:
            return acc
        out = JavaHashMap()
        _map_of(kh, acc, out)
        for k, row in value:
            key, h = kh(k)
            if row is None:
                out.remove(key)
                continue
            if row[ts] is None:
                continue
            existing = out.get(key)
            old = None if existing is None else existing[1]
            if old is None or old[ts] is None or stamp(row) > stamp(old):
                out.put(key, h, (k, row))
        return [kv for _, kv in out.items()]

    return agg


# --- nested_update / nested_partial_update -----------------------------------------------------


def _key_of(row_type: RowType, nested_key: Sequence[str]) -> Callable[[dict[str, Any]], bytes]:
    """The BinaryRow of a nested row's key fields (Java's ``keyProjection``)."""
    types = {f.name: f.type for f in row_type.fields}
    key_types = [types[k] for k in nested_key]

    def of(row: dict[str, Any]) -> bytes:
        return binary_row.serialize_row([row[k] for k in nested_key], key_types)

    return of


def _non_null(rows: Any) -> list[Any]:
    return [r for r in rows if r is not None]


def _nested_update(
    row_type: RowType, nested_key: Sequence[str], count_limit: int
) -> tuple[Fold, Fold]:
    key_of = _key_of(row_type, nested_key) if nested_key else None

    def by_key(rows: list[Any]) -> list[Any]:
        assert key_of is not None
        out = JavaHashMap()
        for r in rows:
            k = key_of(r)
            out.put(k, murmur.hash_bytes(k), r)
        return [r for _, r in out.items()]

    def agg(acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        if len(acc) >= count_limit:
            return acc
        rows = _non_null(acc) + _non_null(value)[: count_limit - len(acc)]
        return by_key(rows) if key_of is not None else rows

    def retract(acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return acc
        if key_of is None:
            rows = _non_null(acc)
            for r in _non_null(value):
                gone = _frozen(r)
                rows = [x for x in rows if _frozen(x) != gone]
            return rows
        out = JavaHashMap()
        for r in _non_null(acc):
            k = key_of(r)
            out.put(k, murmur.hash_bytes(k), r)
        for r in _non_null(value):
            out.remove(key_of(r))
        return [r for _, r in out.items()]

    return agg, retract


def _nested_partial_update(row_type: RowType, nested_key: Sequence[str]) -> Fold:
    key_of = _key_of(row_type, nested_key)
    names = [f.name for f in row_type.fields]

    def agg(acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        out = JavaHashMap()
        for r in _non_null(acc) + _non_null(value):
            k = key_of(r)
            target = out.compute_if_absent(k, murmur.hash_bytes(k), lambda: dict.fromkeys(names))
            for name in names:
                if r[name] is not None:
                    target[name] = r[name]
        return [r for _, r in out.items()]

    return agg


# --- listagg distinct --------------------------------------------------------------------------


def is_listagg_type(t: DataType) -> bool:
    return isinstance(t, CharType) and t.variable and t.length == MAX_LENGTH


def listagg_distinct(delimiter: str) -> Fold:
    """FieldListaggAgg with ``distinct``: the input's tokens not yet in the accumulator (split
    on the whole delimiter; a space when it is empty) are appended, each once."""
    sep = delimiter or " "

    def agg(acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        if value == "":
            return acc
        if acc == "":
            return value
        seen = set(acc.split(sep))
        parts = [acc]
        for token in value.split(sep):
            if token == "" or token in seen:
                continue
            seen.add(token)
            parts.append(token)
        return delimiter.join(parts) if len(parts) > 1 else acc

    return agg
