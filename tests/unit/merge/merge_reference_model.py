"""A plain-Python reference model of the merge engines: one dict per record, folded record by
record in merge order, the way Java's MergeFunction classes do it. Written to be obviously
correct, not fast; the tests compare the vectorized engines with it."""

from __future__ import annotations

import decimal
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from paimon_pyspark.errors import MergeError
from paimon_pyspark.merge.merge_function import MergeSettings

SEQ = "_SEQUENCE_NUMBER"
KIND = "_VALUE_KIND"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
Row = dict[str, Any]


def is_retract(r: Row) -> bool:
    return r[KIND] in (UPDATE_BEFORE, DELETE)


def model_merge(
    records: Sequence[Row],
    key_names: Sequence[str],
    settings: MergeSettings,
    drop_delete: bool,
    int_bounds: dict[str, tuple[int, int]] | None = None,
    decimal_digits: dict[str, int] | None = None,
) -> list[Row]:
    """``int_bounds``: the range of each integer column; ``decimal_digits``: precision minus
    scale of each decimal column (both for overflow checks)."""
    by_key: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for r in records:
        by_key[tuple(r[k] for k in key_names)].append(r)
    out = []
    for key in sorted(by_key):
        recs = sorted(by_key[key], key=lambda r: _order(r, settings))
        if len(recs) == 1:
            result: Row | None = dict(recs[0])  # passed through without merging
        elif settings.engine == "deduplicate":
            result = _deduplicate(recs, settings.ignore_delete)
        elif settings.engine == "first-row":
            result = _first_row(recs, settings.ignore_delete)
        elif settings.engine == "partial-update":
            result = _partial_update(recs, settings)
        else:
            result = _aggregate(recs, key_names, settings, int_bounds or {}, decimal_digits or {})
        if result is None:
            continue
        if drop_delete and is_retract(result):
            continue
        out.append(result)
    return out


def _order(r: Row, settings: MergeSettings) -> tuple[Any, ...]:
    parts: list[Any] = []
    for f in settings.sequence_fields:
        v = r[f]
        # Java's comparator puts a null sequence field first in both directions.
        if settings.sequence_ascending:
            parts.append((0, 0) if v is None else (1, v))
        else:
            parts.append((0, 0) if v is None else (1, -v))
    return (*parts, r[SEQ], not is_retract(r))


def _deduplicate(recs: list[Row], ignore_delete: bool) -> Row | None:
    latest = None
    for r in recs:
        if ignore_delete and is_retract(r):
            continue
        latest = r
    return None if latest is None else dict(latest)


def _first_row(recs: list[Row], ignore_delete: bool) -> Row | None:
    first = None
    for r in recs:
        if is_retract(r):
            if ignore_delete:
                continue
            raise MergeError("first-row cannot accept retractions")
        if first is None:
            first = r
    return None if first is None else dict(first)


def _values(r: Row) -> Row:
    return {k: v for k, v in r.items() if k not in (SEQ, KIND)}


def _partial_update(recs: list[Row], settings: MergeSettings) -> Row:
    row: Row = {k: None for k in _values(recs[0])}
    filled = met_insert = deleted = False
    seq = 0
    for r in recs:
        deleted = False
        if is_retract(r):
            if not filled:
                row = _values(r)
                filled = True
            if settings.ignore_delete:
                continue
            seq = r[SEQ]
            if settings.remove_record_on_delete:
                if r[KIND] == DELETE:
                    deleted = True
                    row = _values(r)
                continue
            raise MergeError("partial-update cannot accept retractions")
        seq = r[SEQ]
        for k, v in _values(r).items():
            if v is not None:
                row[k] = v
        met_insert = filled = True
    return {**row, SEQ: seq, KIND: DELETE if deleted or not met_insert else INSERT}


# --- aggregation -------------------------------------------------------------------------------


class Agg:
    """One field's aggregator; ``retract`` raises unless the function supports it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def agg(self, acc: Any, v: Any) -> Any:
        raise NotImplementedError

    def retract(self, acc: Any, v: Any) -> Any:
        raise MergeError(f"{self.name} cannot retract")


class Sum(Agg):
    def __init__(self, check: Callable[[Any], None]) -> None:
        super().__init__("sum")
        self.check = check

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        self.check(acc + v)
        return acc + v

    def retract(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            if acc is not None:
                return acc
            if v is None:
                return None
            self.check(-v)
            return -v
        self.check(acc - v)
        return acc - v


class Product(Agg):
    def __init__(self, check: Callable[[Any], None]) -> None:
        super().__init__("product")
        self.check = check

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        self.check(acc * v)
        return acc * v


class Extreme(Agg):
    def __init__(self, largest: bool) -> None:
        super().__init__("max" if largest else "min")
        self.largest = largest

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        if self.largest:
            return v if acc < v else acc
        return acc if acc < v else v


class LastValue(Agg):
    def agg(self, acc: Any, v: Any) -> Any:
        return v

    def retract(self, acc: Any, v: Any) -> Any:
        return None


class LastNonNull(Agg):
    def agg(self, acc: Any, v: Any) -> Any:
        return acc if v is None else v

    def retract(self, acc: Any, v: Any) -> Any:
        return None if v is not None else acc


class KeyAgg(Agg):
    def agg(self, acc: Any, v: Any) -> Any:
        return v

    def retract(self, acc: Any, v: Any) -> Any:
        return v


class First(Agg):
    def __init__(self, skip_null: bool) -> None:
        super().__init__("first_non_null_value" if skip_null else "first_value")
        self.skip_null = skip_null
        self.seen = False

    def agg(self, acc: Any, v: Any) -> Any:
        if not self.seen and (v is not None or not self.skip_null):
            self.seen = True
            return v
        return acc


class ListAgg(Agg):
    def __init__(self, delimiter: str) -> None:
        super().__init__("listagg")
        self.delimiter = delimiter

    def agg(self, acc: Any, v: Any) -> Any:
        # FieldListaggAgg: only empty strings are skipped (getSizeInBytes() <= 0), not blanks.
        if acc is None or v is None:
            return v if acc is None else acc
        if v == "":
            return acc
        if acc == "":
            return v
        return acc + self.delimiter + v


class Bool(Agg):
    def __init__(self, conjunction: bool) -> None:
        super().__init__("bool_and" if conjunction else "bool_or")
        self.conjunction = conjunction

    def agg(self, acc: Any, v: Any) -> Any:
        if acc is None or v is None:
            return v if acc is None else acc
        return (acc and v) if self.conjunction else (acc or v)


class IgnoreRetract(Agg):
    def __init__(self, inner: Agg) -> None:
        super().__init__(inner.name)
        self.inner = inner

    def agg(self, acc: Any, v: Any) -> Any:
        return self.inner.agg(acc, v)

    def retract(self, acc: Any, v: Any) -> Any:
        return acc


def _make_agg(
    field: str,
    key_names: Sequence[str],
    settings: MergeSettings,
    int_bounds: dict[str, tuple[int, int]],
    decimal_digits: dict[str, int],
) -> Agg:
    if field in key_names:
        return KeyAgg("primary-key")
    if field in settings.sequence_fields:
        return LastValue("last_value")
    spec = settings.field_agg(field)

    def check(x: Any) -> None:
        if field in int_bounds and not int_bounds[field][0] <= x <= int_bounds[field][1]:
            raise MergeError(f"{field} overflows")
        if field in decimal_digits and abs(x) >= decimal.Decimal(10) ** decimal_digits[field]:
            raise MergeError(f"{field} overflows")

    name = spec.function
    agg: Agg
    if name == "sum":
        agg = Sum(check)
    elif name == "product":
        agg = Product(check)
    elif name in ("max", "min"):
        agg = Extreme(name == "max")
    elif name == "last_value":
        agg = LastValue(name)
    elif name == "last_non_null_value":
        agg = LastNonNull(name)
    elif name in ("first_value", "first_non_null_value", "first_not_null_value"):
        agg = First(name != "first_value")
    elif name == "listagg":
        agg = ListAgg(spec.delimiter)
    elif name in ("bool_and", "bool_or"):
        agg = Bool(name == "bool_and")
    elif name == "primary-key":
        agg = KeyAgg(name)
    else:
        raise AssertionError(name)
    return IgnoreRetract(agg) if spec.ignore_retract else agg


def _aggregate(
    recs: list[Row],
    key_names: Sequence[str],
    settings: MergeSettings,
    int_bounds: dict[str, tuple[int, int]],
    decimal_digits: dict[str, int],
) -> Row:
    fields = list(_values(recs[0]))
    aggs = {f: _make_agg(f, key_names, settings, int_bounds, decimal_digits) for f in fields}
    row: Row = {f: None for f in fields}
    deleted = False
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        for r in recs:
            deleted = settings.remove_record_on_delete and r[KIND] == DELETE
            if deleted:
                row = _values(r)
                continue
            for f in fields:
                a = aggs[f]
                row[f] = a.retract(row[f], r[f]) if is_retract(r) else a.agg(row[f], r[f])
    return {**row, SEQ: recs[-1][SEQ], KIND: DELETE if deleted else INSERT}
