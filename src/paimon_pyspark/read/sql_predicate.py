"""SQL boolean expressions as Predicates: ``"dt = '2024-01-01' AND hr IN (1, 2)"``.

The one place that turns filter text into a ``read.predicate.Predicate``: ``CALL sys.compact``'s
``where`` now, read filters and a SQL door later. The text is parsed by sqlglot (Spark SQL's
dialect: backquoted identifiers, single-quoted strings), never by regular expressions, and the
tree is translated node by node; what cannot be translated exactly raises ``PredicateError``
naming the text, never a weaker filter.

Mirrors what Java's procedures accept: Flink's SimpleSqlPredicateConvertor (comparisons of a
column with a literal on either side, AND, OR, NOT, IN, NOT IN, IS [NOT] NULL) and Spark's
filters converted by ExpressionUtils (also BETWEEN and LIKE). Literals are read as the column's
type, as Java's ``TypeUtils.castFromString`` reads them: ``dt = 20240101`` on a STRING column
means ``'20240101'``, ``hr = '7'`` on an INT column means 7, ``DATE '2024-01-01'`` and
``'2024-01-01'`` are the same date. NOT is pushed down to the leaves (Predicate has no NOT):
``NOT a < 1`` is ``a >= 1`` and ``NOT a IN (...)`` is ``a NOT IN (...)``, equal under SQL's
three-valued logic; ``NOT LIKE`` has no leaf and is refused.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from paimon_pyspark.errors import PredicateError
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.types.data_types import (
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    RowType,
    TimestampType,
    TimeType,
)

DIALECT = "spark"
"""sqlglot's dialect for filter text: Spark SQL, as Java's Spark procedures parse it."""

_INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_FLOATS = ("FLOAT", "DOUBLE")

_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "equal",
    exp.NEQ: "notEqual",
    exp.LT: "lessThan",
    exp.LTE: "lessOrEqual",
    exp.GT: "greaterThan",
    exp.GTE: "greaterOrEqual",
}
_NEGATED = {
    "equal": "notEqual",
    "notEqual": "equal",
    "lessThan": "greaterOrEqual",
    "greaterOrEqual": "lessThan",
    "greaterThan": "lessOrEqual",
    "lessOrEqual": "greaterThan",
}
_FLIPPED = {
    "equal": "equal",
    "notEqual": "notEqual",
    "lessThan": "greaterThan",
    "greaterThan": "lessThan",
    "lessOrEqual": "greaterOrEqual",
    "greaterOrEqual": "lessOrEqual",
}


@dataclass(frozen=True)
class _Literal:
    """A literal's SQL text (None for NULL); the column it meets decides its type."""

    text: str | None


def parse_predicate(text: str, fields: RowType | Sequence[DataField], table: str = "") -> Predicate:
    """The Predicate that ``text``, a SQL boolean expression over ``fields``, means."""
    if not isinstance(text, str) or not text.strip():
        raise PredicateError(f"A filter must be a SQL boolean expression, got {text!r}.")
    try:
        tree = sqlglot.parse_one(text, read=DIALECT)
    except SqlglotError as e:
        found = getattr(e, "errors", None) or [{}]
        reason = found[0].get("description") or str(e).splitlines()[0]
        where = f"table '{table}'" if table else "the table"
        raise PredicateError(f"Cannot filter {where}: '{text}' is not SQL: {reason}") from e
    try:
        return _Translator(text, fields, table).convert(tree, negated=False)
    except PredicateError as e:
        if text in str(e):
            raise
        raise PredicateError(f"{e} (in '{text}')") from e  # the builder's, about one literal


class _Translator:
    def __init__(self, text: str, fields: RowType | Sequence[DataField], table: str) -> None:
        self.text = text
        self.fields = fields.fields if isinstance(fields, RowType) else tuple(fields)
        self.types = {f.name: f.type for f in self.fields}
        self.table = table
        self.builder = PredicateBuilder(self.fields, table)

    def error(self, what: str) -> PredicateError:
        where = f"table '{self.table}'" if self.table else "the table"
        return PredicateError(f"Cannot filter {where} by '{self.text}': {what}")

    def convert(self, node: exp.Expr, negated: bool) -> Predicate:
        if isinstance(node, exp.Paren):
            return self.convert(node.this, negated)
        if isinstance(node, exp.Not):
            return self.convert(node.this, not negated)
        if isinstance(node, exp.And | exp.Or):
            conjunction = isinstance(node, exp.And) != negated
            parts = [self.convert(node.left, negated), self.convert(node.right, negated)]
            return PredicateBuilder.and_(*parts) if conjunction else PredicateBuilder.or_(*parts)
        function = _COMPARISONS.get(type(node))
        if function is not None and isinstance(node, exp.Binary):
            return self.comparison(node, _NEGATED[function] if negated else function)
        if isinstance(node, exp.In):
            return self.in_list(node, negated)
        if isinstance(node, exp.Between):
            return self.between(node, negated)
        if isinstance(node, exp.Is):
            field = self.column(node.this, node)
            if not isinstance(node.expression, exp.Null):
                raise self.error(f"'{node.sql(DIALECT)}' is not supported (only IS [NOT] NULL)")
            return self.builder.is_not_null(field) if negated else self.builder.is_null(field)
        if isinstance(node, exp.Like):
            if negated != bool(node.args.get("negate")):
                raise self.error(f"NOT LIKE is not supported ('{node.sql(DIALECT)}')")
            field = self.column(node.this, node)
            pattern = self.literal(node.expression, node)
            return self.builder.like(field, self.value(field, pattern))
        raise self.error(f"'{node.sql(DIALECT)}' is not supported")

    def comparison(self, node: exp.Binary, function: str) -> Predicate:
        left, right = node.left, node.right
        lit = _literal(right)
        if lit is not None and _column_name(left) is not None:
            field = self.column(left, node)
        else:
            lit = _literal(left)
            if lit is None or _column_name(right) is None:
                raise self.error(f"'{node.sql(DIALECT)}' must compare a column with a literal")
            field, function = self.column(right, node), _FLIPPED[function]
        return self._leaf(function, field, self.value(field, lit))

    def _leaf(self, function: str, field: str, value: Any) -> Predicate:
        build: dict[str, Callable[[str, Any], Predicate]] = {
            "equal": self.builder.equal,
            "notEqual": self.builder.not_equal,
            "lessThan": self.builder.less_than,
            "lessOrEqual": self.builder.less_or_equal,
            "greaterThan": self.builder.greater_than,
            "greaterOrEqual": self.builder.greater_or_equal,
        }
        return build[function](field, value)

    def in_list(self, node: exp.In, negated: bool) -> Predicate:
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            raise self.error(f"'{node.sql(DIALECT)}' is not supported (only IN of literals)")
        field = self.column(node.this, node)
        values = [self.value(field, self.literal(e, node)) for e in node.expressions]
        if not values:
            raise self.error("IN needs at least one literal")
        if negated:
            return self.builder.is_not_in(field, values)
        return self.builder.is_in(field, values)

    def between(self, node: exp.Between, negated: bool) -> Predicate:
        if node.args.get("symmetric"):
            raise self.error("BETWEEN SYMMETRIC is not supported")
        field = self.column(node.this, node)
        low = self.value(field, self.literal(node.args["low"], node))
        high = self.value(field, self.literal(node.args["high"], node))
        if negated:
            return self.builder.not_between(field, low, high)
        return self.builder.between(field, low, high)

    def column(self, node: exp.Expr, whole: exp.Expr) -> str:
        name = _column_name(node)
        if name is None:
            raise self.error(f"'{whole.sql(DIALECT)}' must have a column on one side")
        if name not in self.types:
            raise self.error(f"no field '{name}' (fields: {', '.join(self.types)})")
        return name

    def literal(self, node: exp.Expr, whole: exp.Expr) -> _Literal:
        lit = _literal(node)
        if lit is None:
            raise self.error(f"'{node.sql(DIALECT)}' in '{whole.sql(DIALECT)}' is not a literal")
        return lit

    def value(self, field: str, lit: _Literal) -> Any:
        """The literal as a value of the field's type (Java's TypeUtils.castFromString)."""
        if lit.text is None:
            return None
        t = self.types[field]
        try:
            return _cast(lit.text, t)
        except (ValueError, InvalidOperation) as e:
            raise self.error(
                f"literal '{lit.text}' is not a value of field '{field}' of type {t}"
            ) from e


def _column_name(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Paren):
        return _column_name(node.this)
    if isinstance(node, exp.Column) and not node.table:
        return str(node.name)
    return None


def _literal(node: exp.Expr) -> _Literal | None:
    if isinstance(node, exp.Paren):
        return _literal(node.this)
    if isinstance(node, exp.Null):
        return _Literal(None)
    if isinstance(node, exp.Boolean):
        return _Literal("true" if node.this else "false")
    if isinstance(node, exp.Literal):
        return _Literal(str(node.this))
    if isinstance(node, exp.Neg):
        inner = node.this
        if isinstance(inner, exp.Literal) and not inner.is_string:
            return _Literal(f"-{inner.this}")
        return None
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        # a typed literal (DATE '2024-01-01', TIMESTAMP '...'): the column's type decides
        return _Literal(str(node.this.this))
    return None


def _cast(text: str, t: DataType) -> Any:
    """``text`` read as a value of ``t``; ValueError when it is not one."""
    if isinstance(t, CharType):
        return text
    if isinstance(t, BinaryType):
        return text.encode()
    if isinstance(t, DecimalType):
        return Decimal(text.strip())
    if isinstance(t, TimestampType):
        return datetime.datetime.fromisoformat(text.strip())
    if isinstance(t, TimeType):
        return datetime.time.fromisoformat(text.strip())
    root = t.root
    if root == "BOOLEAN":
        word = text.strip().lower()
        if word not in ("true", "false"):
            raise ValueError(f"not a boolean: {text!r}")
        return word == "true"
    if root in _INTEGERS:
        return int(text.strip())
    if root in _FLOATS:
        return float(text.strip())
    if root == "DATE":
        return datetime.date.fromisoformat(text.strip())
    raise ValueError(f"a {t} field cannot be compared with a literal")
