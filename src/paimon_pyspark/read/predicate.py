"""Filter predicates over a table's fields: exact row filters, partition tests and stats pruning.

Mirrors org.apache.paimon.predicate.{Predicate, PredicateBuilder, LeafPredicate,
CompoundPredicate}. The builder has pypaimon's method names and signatures
(``read_builder.new_predicate_builder()``), so pypaimon code switches unchanged, and leaves carry
the function names pypaimon uses (``equal``, ``notIn``, ``startsWith``, ...).

Semantics are SQL's: a comparison with a null (field or literal) is never true. There is no NOT,
so reading a null leaf result as false cannot change the outcome of the AND/OR above it; that is
why ``test_values`` can answer plain booleans. Floats compare as IEEE 754 says (NaN equals
nothing, not even NaN), as pyarrow.compute, Python and pypaimon do.
"""

from __future__ import annotations

import datetime
import math
import operator
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.errors import PredicateError, describe
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import (
    AtomicType,
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    RowType,
    TimestampType,
    TimeType,
)

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "equal": operator.eq,
    "notEqual": operator.ne,
    "lessThan": operator.lt,
    "lessOrEqual": operator.le,
    "greaterThan": operator.gt,
    "greaterOrEqual": operator.ge,
}
_PATTERN_FUNCTIONS = ("startsWith", "endsWith", "contains", "like")
_COMPARABLE_TYPES = (AtomicType, CharType, BinaryType, DecimalType, TimeType, TimestampType)


@dataclass(frozen=True)
class FieldStats:
    """What a data file's metadata says about one field; ``None`` means unknown.

    ``min`` and ``max`` are bounds in the ``.as_py()`` form of the field's Arrow type: every
    non-null value lies between them, so truncated string bounds qualify. Float bounds may leave
    NaN out (Parquet writers do), so predicates that NaN satisfies never prune on them, and a NaN
    bound counts as unknown.
    """

    min: Any = None
    max: Any = None
    null_count: int | None = None


class Predicate(ABC):
    """A filter over named fields; picklable, so it travels to Spark executors as it is."""

    @abstractmethod
    def to_arrow_expression(self) -> pc.Expression:
        """The exact row filter; rows where it is null are dropped like false ones."""

    @abstractmethod
    def test_values(self, values: Mapping[str, Any]) -> bool:
        """The exact result on one row of ``.as_py()`` values, as partition pruning needs."""

    @abstractmethod
    def test_stats(self, stats: Mapping[str, FieldStats], row_count: int) -> bool:
        """False only when no row of a file with these stats can match.

        A field missing from ``stats`` is unknown. Pruning a file that holds a matching row
        would lose data, so every doubt answers True.
        """

    @abstractmethod
    def fields(self) -> set[str]:
        """The names of the fields this predicate reads."""

    @abstractmethod
    def extract(self, names: Set[str]) -> Predicate | None:
        """A predicate on ``names`` alone that every row matching this one also matches.

        Splits partition filters from data filters. The result is exact only when it equals
        ``self``; otherwise it is weaker, good for pruning, and the full predicate must still
        filter the rows. None when nothing can be kept.
        """


@dataclass(frozen=True)
class LeafPredicate(Predicate):
    """One function of one field, e.g. ``lessThan(age, 30)``; literals are ``.as_py()`` values
    already converted to the field's type by :class:`PredicateBuilder`."""

    function: str
    field: str
    type: DataType
    literals: tuple[Any, ...] = ()

    def never_true(self) -> bool:
        """Null literals make SQL comparisons null, so the leaf can select no row."""
        lits = self.literals
        if self.function in ("in", "notBetween"):
            return all(x is None for x in lits)
        return any(x is None for x in lits)

    def _is_float(self) -> bool:
        return isinstance(self.type, AtomicType) and self.type.name in ("FLOAT", "DOUBLE")

    def _scalar(self, value: Any) -> pa.Scalar:
        """Typed like the column, so Arrow compares without casting either side."""
        return pa.scalar(value, type=to_arrow_type(self.type))

    def to_arrow_expression(self) -> pc.Expression:
        fn, lits, f = self.function, self.literals, pc.field(self.field)
        if fn == "isNull":
            return f.is_null()
        if fn == "isNotNull":
            return f.is_valid()
        if self.never_true():
            return pc.scalar(False)
        if fn in _COMPARE:
            return _COMPARE[fn](f, self._scalar(lits[0]))
        if fn in ("in", "notIn"):
            # Arrow's is_in hashes floats: it finds NaN in a set holding NaN and tells -0.0
            # from 0.0, where IEEE equality does the opposite.
            values = [x for x in lits if x is not None and not _is_nan(x)]
            values += [-x for x in values if self._is_float() and x == 0]
            if not values:
                return f.is_valid() if fn == "notIn" else pc.scalar(False)
            found = pc.is_in(f, value_set=pa.array(values, type=to_arrow_type(self.type)))
            return found if fn == "in" else f.is_valid() & ~found
        if fn == "between":
            return (f >= self._scalar(lits[0])) & (f <= self._scalar(lits[1]))
        if fn == "notBetween":
            lo, hi = lits
            parts = [f < self._scalar(lo)] if lo is not None else []
            parts += [f > self._scalar(hi)] if hi is not None else []
            return _balanced(parts, operator.or_)
        if fn == "startsWith":
            return pc.starts_with(f, pattern=lits[0])
        if fn == "endsWith":
            return pc.ends_with(f, pattern=lits[0])
        if fn == "contains":
            return pc.match_substring(f, pattern=lits[0])
        if fn == "like":
            return pc.match_like(f, pattern=lits[0])
        raise PredicateError(f"Unknown predicate function '{fn}'")

    def test_values(self, values: Mapping[str, Any]) -> bool:
        fn, lits, v = self.function, self.literals, values[self.field]
        if fn == "isNull":
            return v is None
        if v is None or self.never_true():
            return False
        if fn == "isNotNull":
            return True
        if fn in _COMPARE:
            return bool(_COMPARE[fn](v, lits[0]))
        if fn == "in":
            return any(v == x for x in lits if x is not None)
        if fn == "notIn":
            return all(v != x for x in lits)
        if fn == "between":
            return bool(lits[0] <= v <= lits[1])
        if fn == "notBetween":
            lo, hi = lits
            return (lo is not None and v < lo) or (hi is not None and v > hi)
        if fn == "startsWith":
            return bool(v.startswith(lits[0]))
        if fn == "endsWith":
            return bool(v.endswith(lits[0]))
        if fn == "contains":
            return bool(lits[0] in v)
        if fn == "like":
            return _like_regex(lits[0]).fullmatch(v) is not None
        raise PredicateError(f"Unknown predicate function '{fn}'")

    def test_stats(self, stats: Mapping[str, FieldStats], row_count: int) -> bool:
        fn, lits, s = self.function, self.literals, stats.get(self.field)
        nulls = s.null_count if s is not None else None
        if fn == "isNull":
            return nulls is None or nulls > 0
        if self.never_true() or (nulls is not None and nulls >= row_count):
            return False
        if s is None:
            return True
        lo, hi = _bound(s.min), _bound(s.max)
        if fn in ("equal", "in"):
            return any(_may_contain(lo, hi, x) for x in lits if x is not None)
        if fn in ("notEqual", "notIn"):
            if self._is_float():
                return True
            return not (lo is not None and lo == hi and any(lo == x for x in lits))
        if fn in ("lessThan", "lessOrEqual"):
            return lo is None or bool(_COMPARE[fn](lo, lits[0]))
        if fn in ("greaterThan", "greaterOrEqual"):
            return hi is None or bool(_COMPARE[fn](hi, lits[0]))
        if fn == "between":
            return bool(lits[0] <= lits[1]) and _overlaps(lo, hi, lits[0], lits[1])
        if fn == "notBetween":
            below = lits[0] is not None and (lo is None or lo < lits[0])
            return below or (lits[1] is not None and (hi is None or hi > lits[1]))
        if fn == "startsWith":
            return _may_start_with(lo, hi, lits[0])
        if fn == "like":
            return _may_start_with(lo, hi, _like_prefix(lits[0]))
        return True

    def fields(self) -> set[str]:
        return {self.field}

    def __str__(self) -> str:
        return f"{self.function}({', '.join([self.field, *map(repr, self.literals)])})"

    def extract(self, names: Set[str]) -> Predicate | None:
        return self if self.field in names else None


@dataclass(frozen=True)
class CompoundPredicate(Predicate):
    """AND or OR of child predicates."""

    function: Literal["and", "or"]
    children: tuple[Predicate, ...]

    def to_arrow_expression(self) -> pc.Expression:
        op = operator.and_ if self.function == "and" else operator.or_
        return _balanced([c.to_arrow_expression() for c in self.children], op)

    def test_values(self, values: Mapping[str, Any]) -> bool:
        results = (c.test_values(values) for c in self.children)
        return all(results) if self.function == "and" else any(results)

    def test_stats(self, stats: Mapping[str, FieldStats], row_count: int) -> bool:
        results = (c.test_stats(stats, row_count) for c in self.children)
        return all(results) if self.function == "and" else any(results)

    def fields(self) -> set[str]:
        return set[str]().union(*(c.fields() for c in self.children))

    def __str__(self) -> str:
        return f"{self.function.upper()}({', '.join(map(str, self.children))})"

    def extract(self, names: Set[str]) -> Predicate | None:
        kept = [c.extract(names) for c in self.children]
        if self.function == "or" and any(k is None for k in kept):
            return None
        return _compound(self.function, [k for k in kept if k is not None])


class PredicateBuilder:
    """Builds predicates on a table's fields, checking every literal against the field's type.

    Mirrors org.apache.paimon.predicate.PredicateBuilder with pypaimon's Python names. Literals
    are converted as Arrow converts them into the field's Arrow type, so ``1`` works for a DOUBLE
    field; conversions that would change the value (``1.5`` for an INT, microseconds for a
    millisecond TIMESTAMP) are refused rather than rounded, since a rounded bound selects other
    rows than the user asked for.
    """

    def __init__(self, row_type: RowType | Sequence[DataField], table_name: str = "") -> None:
        fields = row_type.fields if isinstance(row_type, RowType) else tuple(row_type)
        self._types = {f.name: f.type for f in fields}
        self._table_name = table_name

    def equal(self, field: str, literal: Any) -> LeafPredicate:
        return self._leaf("equal", field, [literal])

    def not_equal(self, field: str, literal: Any) -> LeafPredicate:
        return self._leaf("notEqual", field, [literal])

    def less_than(self, field: str, literal: Any) -> LeafPredicate:
        return self._leaf("lessThan", field, [literal])

    def less_or_equal(self, field: str, literal: Any) -> LeafPredicate:
        return self._leaf("lessOrEqual", field, [literal])

    def greater_than(self, field: str, literal: Any) -> LeafPredicate:
        return self._leaf("greaterThan", field, [literal])

    def greater_or_equal(self, field: str, literal: Any) -> LeafPredicate:
        return self._leaf("greaterOrEqual", field, [literal])

    def is_null(self, field: str) -> LeafPredicate:
        return self._leaf("isNull", field, [])

    def is_not_null(self, field: str) -> LeafPredicate:
        return self._leaf("isNotNull", field, [])

    def startswith(self, field: str, pattern_literal: Any) -> LeafPredicate:
        return self._leaf("startsWith", field, [pattern_literal])

    def endswith(self, field: str, pattern_literal: Any) -> LeafPredicate:
        return self._leaf("endsWith", field, [pattern_literal])

    def contains(self, field: str, pattern_literal: Any) -> LeafPredicate:
        return self._leaf("contains", field, [pattern_literal])

    def like(self, field: str, pattern_literal: Any) -> LeafPredicate:
        """SQL LIKE: ``%`` is any sequence, ``_`` one character; ``\\`` escapes them and itself."""
        return self._leaf("like", field, [pattern_literal])

    def is_in(self, field: str, literals: Iterable[Any]) -> LeafPredicate:
        return self._leaf("in", field, self._literal_list(field, literals))

    def is_not_in(self, field: str, literals: Iterable[Any]) -> LeafPredicate:
        return self._leaf("notIn", field, self._literal_list(field, literals))

    def between(
        self, field: str, included_lower_bound: Any, included_upper_bound: Any
    ) -> LeafPredicate:
        return self._leaf("between", field, [included_lower_bound, included_upper_bound])

    def not_between(
        self, field: str, included_lower_bound: Any, included_upper_bound: Any
    ) -> LeafPredicate:
        return self._leaf("notBetween", field, [included_lower_bound, included_upper_bound])

    @staticmethod
    def and_predicates(predicates: Sequence[Predicate]) -> Predicate | None:
        """pypaimon's spelling: None for no predicates."""
        return _compound("and", predicates)

    @staticmethod
    def or_predicates(predicates: Sequence[Predicate]) -> Predicate | None:
        """pypaimon's spelling: None for no predicates."""
        return _compound("or", predicates)

    @staticmethod
    def and_(*predicates: Predicate) -> Predicate:
        return _require(_compound("and", predicates), "and_")

    @staticmethod
    def or_(*predicates: Predicate) -> Predicate:
        return _require(_compound("or", predicates), "or_")

    def _where(self) -> str:
        return f"table '{self._table_name}'" if self._table_name else "the table"

    def _literal_list(self, field: str, literals: Iterable[Any]) -> list[Any]:
        if isinstance(literals, str | bytes | Mapping) or not isinstance(literals, Iterable):
            raise PredicateError(
                f"Cannot filter {self._where()}: the literals for field '{field}' must be a list "
                f"of values, not {describe(literals)}"
            )
        return list(literals)

    def _leaf(self, function: str, field: str, literals: list[Any]) -> LeafPredicate:
        if not isinstance(field, str):
            raise PredicateError(
                f"Cannot filter {self._where()}: a field is named by a string, got "
                f"{describe(field)}"
            )
        t = self._types.get(field)
        if t is None:
            raise PredicateError(
                f"Cannot filter {self._where()}: it has no field '{field}' "
                f"(fields: {', '.join(self._types)})"
            )
        wanted = (CharType,) if function == "like" else (CharType, BinaryType)
        if function in _PATTERN_FUNCTIONS and not isinstance(t, wanted):
            raise PredicateError(
                f"Cannot filter {self._where()}: {function} needs a string field, "
                f"but field '{field}' is {t}"
            )
        if literals and not isinstance(t, _COMPARABLE_TYPES):
            raise PredicateError(
                f"Cannot filter {self._where()}: field '{field}' of type {t} cannot be compared"
            )
        converted = tuple(self._convert(field, t, x) for x in literals)
        if function == "like" and converted[0] is not None:
            try:
                _like_regex(converted[0])
            except ValueError as e:
                raise PredicateError(
                    f"Cannot filter {self._where()}: LIKE pattern {converted[0]!r} for field "
                    f"'{field}' is invalid: {e}"
                ) from e
        return LeafPredicate(function, field, t, converted)

    def _convert(self, field: str, t: DataType, value: Any) -> Any:
        if value is None:
            return None
        try:
            out = pa.scalar(value, type=to_arrow_type(t)).as_py()
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
            raise PredicateError(
                f"Cannot filter {self._where()}: literal {value!r} for field '{field}' "
                f"does not fit its type {t} ({e})"
            ) from e
        if _changed_by_conversion(value, out):
            raise PredicateError(
                f"Cannot filter {self._where()}: literal {value!r} for field '{field}' "
                f"would become {out!r} as {t}"
            )
        return out


def _changed_by_conversion(value: Any, out: Any) -> bool:
    """Catches what pa.scalar accepts silently: truncation, bools as numbers, and numbers as
    dates or timestamps (which Arrow reads as a unit count that the user did not choose)."""
    if isinstance(value, bool):
        return not isinstance(out, bool)
    if isinstance(value, int | float | Decimal):
        if isinstance(out, datetime.date | datetime.time):
            return True
        return isinstance(value, float | Decimal) and isinstance(out, int) and out != value
    if isinstance(value, datetime.datetime):
        return not isinstance(out, datetime.datetime) or out.microsecond != value.microsecond
    if isinstance(value, datetime.time):
        return not isinstance(out, datetime.time) or out.microsecond != value.microsecond
    return False


def _compound(function: Literal["and", "or"], predicates: Iterable[Predicate]) -> Predicate | None:
    """Nested children of the same function are flattened; a single child stands alone."""
    if isinstance(predicates, Predicate) or not isinstance(predicates, Iterable):
        raise PredicateError(f"{function} takes a list of predicates, got {describe(predicates)}")
    children: list[Predicate] = []
    for p in predicates:
        if not isinstance(p, Predicate):
            raise PredicateError(
                f"{function} combines predicates from a PredicateBuilder, got {describe(p)}"
            )
        if isinstance(p, CompoundPredicate) and p.function == function:
            children.extend(p.children)
        else:
            children.append(p)
    if not children:
        return None
    return children[0] if len(children) == 1 else CompoundPredicate(function, tuple(children))


def leaves(predicate: Predicate) -> Iterator[LeafPredicate]:
    """Every leaf under ``predicate``."""
    if isinstance(predicate, LeafPredicate):
        yield predicate
    elif isinstance(predicate, CompoundPredicate):
        for child in predicate.children:
            yield from leaves(child)


def check_fields(predicate: Predicate, fields: Sequence[DataField], table: str) -> None:
    """A predicate built for another table (or by hand) names only fields of this one, each
    with the type it has here: a literal of another type would fail deep inside Arrow."""
    types = {f.name: f.type for f in fields}
    for leaf in leaves(predicate):
        t = types.get(leaf.field)
        if t is None:
            raise PredicateError(
                f"Cannot filter table '{table}': it has no field '{leaf.field}' "
                f"(fields: {', '.join(types)})"
            )
        if t.copy(nullable=True) != leaf.type.copy(nullable=True):
            raise PredicateError(
                f"Cannot filter table '{table}': predicate {leaf} was built for field "
                f"'{leaf.field}' of type {leaf.type}, but the field is {t}; build it with this "
                "table's new_predicate_builder()"
            )


def _require(predicate: Predicate | None, name: str) -> Predicate:
    if predicate is None:
        raise PredicateError(f"{name} needs at least one predicate")
    return predicate


def _balanced(
    parts: Sequence[pc.Expression], op: Callable[[Any, Any], pc.Expression]
) -> pc.Expression:
    """Combines pairwise, so an OR of thousands of leaves nests log-deep, not thousands deep."""
    level = list(parts)
    while len(level) > 1:
        pairs = range(0, len(level) - 1, 2)
        level = [op(level[i], level[i + 1]) for i in pairs] + level[len(level) // 2 * 2 :]
    return level[0]


def _is_nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _bound(x: Any) -> Any:
    return None if _is_nan(x) else x


def _may_contain(lo: Any, hi: Any, x: Any) -> bool:
    return (lo is None or bool(lo <= x)) and (hi is None or bool(x <= hi))


def _overlaps(lo: Any, hi: Any, low: Any, high: Any) -> bool:
    return (hi is None or bool(low <= hi)) and (lo is None or bool(lo <= high))


def _may_start_with(lo: Any, hi: Any, prefix: Any) -> bool:
    """Values with the prefix sort at or above it, and below any bound that exceeds the prefix
    at a character where it does not merely extend it."""
    if hi is not None and hi < prefix:
        return False
    return lo is None or lo < prefix or bool(lo.startswith(prefix))


def _like_tokens(pattern: str) -> list[tuple[bool, str]]:
    """``(is_wildcard, char)`` pairs; rejects escapes that Arrow's match_like reads otherwise."""
    tokens: list[tuple[bool, str]] = []
    chars = iter(pattern)
    for c in chars:
        if c == "\\":
            escaped = next(chars, None)
            if escaped not in ("%", "_", "\\"):
                raise ValueError("'\\' must be followed by '%', '_' or '\\'")
            tokens.append((False, escaped))
        else:
            tokens.append((c in "%_", c))
    return tokens


@lru_cache(maxsize=256)
def _like_regex(pattern: str) -> re.Pattern[str]:
    parts = {"%": ".*", "_": "."}
    regex = "".join(parts[c] if wild else re.escape(c) for wild, c in _like_tokens(pattern))
    return re.compile(regex, re.DOTALL)


def _like_prefix(pattern: str) -> str:
    prefix = []
    for wild, c in _like_tokens(pattern):
        if wild:
            break
        prefix.append(c)
    return "".join(prefix)
