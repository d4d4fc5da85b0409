"""``MERGE INTO`` as a typed statement: target, source, ON condition and the ordered clauses.

Spark 4 parses::

    MERGE INTO target [[AS] t] USING (source_table | (query)) [[AS] s] ON condition
    WHEN MATCHED [AND cond] THEN UPDATE SET c = e, ... | UPDATE SET * | DELETE
    WHEN NOT MATCHED [BY TARGET] [AND cond] THEN INSERT [(c, ...)] VALUES (e, ...) | INSERT *
    WHEN NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET c = e, ... | DELETE

Expressions stay sqlglot trees (Spark evaluates them); this module only checks what Spark's
parser and Paimon's analysis refuse before anything runs: a clause kind with an action its
grammar lacks, a clause without condition that is not the last of its kind, a column assigned
twice, an INSERT whose column and value counts differ, and (Java's PaimonMergeIntoBase) a
condition holding a subquery. The builder functions (``clause``) give the Python API
(spark/merge.py) the same checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from sqlglot import exp

from paimon_pyspark.errors import SqlSyntaxError, UnsupportedStatementError
from paimon_pyspark.sql.dialect import parse_expression, table_hint, to_sql

Kind = Literal["matched", "not_matched", "not_matched_by_source"]
Action = Literal["update", "delete", "insert"]

_CLAUSE_WORDS: dict[str, str] = {
    "matched": "MATCHED",
    "not_matched": "NOT MATCHED [BY TARGET]",
    "not_matched_by_source": "NOT MATCHED BY SOURCE",
}
_ACTIONS: dict[str, tuple[str, ...]] = {
    "matched": ("update", "delete"),
    "not_matched": ("insert",),
    "not_matched_by_source": ("update", "delete"),
}


@dataclass(frozen=True)
class TargetName:
    """The target as the statement names it: ``t``, ``db.t`` or ``paimon.db.t``."""

    table: str
    database: str | None = None
    catalog: str | None = None

    def __str__(self) -> str:
        return ".".join(p for p in (self.catalog, self.database, self.table) if p)


@dataclass(frozen=True)
class MergeClause:
    """One ``WHEN ... THEN`` clause.

    ``columns``/``values``: an UPDATE's assigned columns (target names, unqualified) and
    their expressions; an INSERT's column list (None: the values follow the table's columns)
    and values. ``star``: ``UPDATE SET *`` / ``INSERT *`` (every target column from the
    source column of the same name)."""

    kind: Kind
    action: Action
    condition: exp.Expr | None = None
    columns: tuple[str, ...] | None = ()
    values: tuple[exp.Expr, ...] = ()
    star: bool = False

    def describe(self) -> str:
        what = {"update": "UPDATE", "delete": "DELETE", "insert": "INSERT"}[self.action]
        cond = "" if self.condition is None else f" AND {to_sql(self.condition)}"
        return f"WHEN {_CLAUSE_WORDS[self.kind]}{cond} THEN {what}{' *' if self.star else ''}"


@dataclass(frozen=True)
class MergeInto:
    """``MERGE INTO target USING source ON condition WHEN ...``.

    ``source`` is a table reference (an ``exp.Table``, possibly with ``VERSION AS OF``) or a
    query tree; either is run by Spark with Paimon tables bound (spark/sql.py)."""

    target: TargetName
    target_alias: str | None
    source: exp.Expr
    source_alias: str | None
    on: exp.Expr
    clauses: tuple[MergeClause, ...]
    text: str = ""
    hints: dict[str, str] = field(default_factory=dict)
    """``/*+ OPTIONS(...) */`` after the target's name: dynamic options of this write."""

    def of_kind(self, kind: Kind) -> list[MergeClause]:
        return [c for c in self.clauses if c.kind == kind]


def parse_merge(node: exp.Merge, text: str) -> MergeInto:
    """The typed statement of sqlglot's ``exp.Merge``."""
    target = node.this
    if not isinstance(target, exp.Table) or not target.name:
        raise SqlSyntaxError(f"MERGE INTO needs a target table name: {_short(text)}")
    target_alias = target.alias or None
    hint = table_hint(text, target)
    name = TargetName(target.name, target.db or None, target.catalog or None)
    if node.args.get("using_cond"):
        raise UnsupportedStatementError(
            f"MERGE INTO {name}: ON needs a condition (USING (...) columns is not Spark's "
            f"syntax): {_short(text)}"
        )
    using = node.args.get("using")
    source: exp.Expr
    if isinstance(using, exp.Table):
        source_alias = using.alias or None
        source = using.copy()
        source.set("alias", None)
    elif isinstance(using, exp.Subquery):
        source_alias = using.alias or None
        source = using.this.copy()
    else:
        raise SqlSyntaxError(
            f"MERGE INTO {name}: USING takes a table or a (query), got "
            f"{using.sql() if using is not None else 'nothing'}."
        )
    on = node.args.get("on")
    if on is None:
        raise SqlSyntaxError(f"MERGE INTO {name} needs an ON condition: {_short(text)}")
    whens = node.args.get("whens")
    clauses = [_clause(w, name) for w in (whens.expressions if whens is not None else [])]
    check_merge(name, on, clauses)
    return MergeInto(
        name,
        target_alias,
        source,
        source_alias,
        on,
        tuple(clauses),
        text,
        hint.options if hint else {},
    )


def _clause(when: exp.When, name: TargetName) -> MergeClause:
    if when.args.get("matched"):
        kind: Kind = "matched"
    elif when.args.get("source"):
        kind = "not_matched_by_source"
    else:
        kind = "not_matched"
    condition = when.args.get("condition")
    then = when.args.get("then")
    if isinstance(then, exp.Var) and str(then.this).upper() == "DELETE":
        return _checked(name, MergeClause(kind, "delete", condition))
    if isinstance(then, exp.Update):
        items = then.expressions
        if len(items) == 1 and isinstance(items[0], exp.Star):
            return _checked(name, MergeClause(kind, "update", condition, None, (), True))
        columns: list[str] = []
        values: list[exp.Expr] = []
        for eq in items:
            if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
                raise SqlSyntaxError(
                    f"MERGE INTO {name}: UPDATE SET takes column = expression, got {eq.sql()}."
                )
            columns.append(_target_column(eq.this, name))
            values.append(eq.expression)
        return _checked(name, MergeClause(kind, "update", condition, tuple(columns), tuple(values)))
    if isinstance(then, exp.Insert):
        if isinstance(then.this, exp.Star):
            return _checked(name, MergeClause(kind, "insert", condition, None, (), True))
        names = None
        if isinstance(then.this, exp.Tuple):
            names = tuple(_target_column(c, name) for c in then.this.expressions)
        elif then.this is not None:
            names = (_target_column(then.this, name),)
        row = then.expression
        values_list = list(row.expressions) if isinstance(row, exp.Tuple) else [row]
        if row is None:
            raise SqlSyntaxError(f"MERGE INTO {name}: INSERT needs VALUES (...).")
        return _checked(name, MergeClause(kind, "insert", condition, names, tuple(values_list)))
    raise SqlSyntaxError(
        f"MERGE INTO {name}: WHEN {_CLAUSE_WORDS[kind]} takes "
        f"{' or '.join(a.upper() for a in _ACTIONS[kind])}, got {then.sql() if then else '?'}."
    )


def _target_column(node: exp.Expr, name: TargetName) -> str:
    """An assigned column: ``c`` or ``alias.c``; a nested field path is not assignable here."""
    if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
        raise SqlSyntaxError(f"MERGE INTO {name}: expected a column name, got {node.sql()}.")
    if node.args.get("db") is not None:
        raise UnsupportedStatementError(
            f"MERGE INTO {name}: assigning the nested field {node.sql()} is not supported; "
            "assign the whole column."
        )
    return node.name


def _checked(name: TargetName, clause: MergeClause) -> MergeClause:
    if clause.action not in _ACTIONS[clause.kind]:
        raise SqlSyntaxError(
            f"MERGE INTO {name}: WHEN {_CLAUSE_WORDS[clause.kind]} takes "
            f"{' or '.join(a.upper() for a in _ACTIONS[clause.kind])}, not "
            f"{clause.action.upper()}."
        )
    if clause.columns:
        seen: set[str] = set()
        for c in clause.columns:
            if c.lower() in seen:
                raise SqlSyntaxError(
                    f"MERGE INTO {name}: {clause.describe()} assigns column '{c}' more than once."
                )
            seen.add(c.lower())
    if clause.action == "insert" and clause.columns and len(clause.columns) != len(clause.values):
        raise SqlSyntaxError(
            f"MERGE INTO {name}: {clause.describe()} names {len(clause.columns)} column(s) but "
            f"gives {len(clause.values)} value(s)."
        )
    if clause.action == "update" and not clause.star and not clause.columns:
        raise SqlSyntaxError(f"MERGE INTO {name}: UPDATE SET needs an assignment.")
    if clause.action == "insert" and not clause.star and not clause.values:
        raise SqlSyntaxError(f"MERGE INTO {name}: INSERT needs VALUES (...).")
    return clause


def check_merge(name: TargetName, on: exp.Expr, clauses: Sequence[MergeClause]) -> None:
    """Spark's parser rules and Java's condition check over the whole statement."""
    if not clauses:
        raise SqlSyntaxError(
            f"MERGE INTO {name}: there must be at least one WHEN clause in a MERGE statement."
        )
    for kind, words in _CLAUSE_WORDS.items():
        of_kind = [c for c in clauses if c.kind == kind]
        if any(c.condition is None for c in of_kind[:-1]):
            raise SqlSyntaxError(
                f"MERGE INTO {name}: when there are more than one {words} clauses in a MERGE "
                f"statement, only the last {words} clause can omit the condition."
            )
    for cond in [on, *(c.condition for c in clauses if c.condition is not None)]:
        if cond.find(exp.Subquery, exp.Select, exp.Exists) is not None:
            raise UnsupportedStatementError(
                f"MERGE INTO {name}: condition {to_sql(cond)} with subquery can't be supported."
            )


def clause(
    kind: Kind,
    action: Action,
    condition: str | None = None,
    assignments: Mapping[str, str] | None = None,
    name: TargetName | None = None,
) -> MergeClause:
    """A clause of the Python API: ``condition`` and the ``assignments`` (column -> Spark SQL
    expression text; None for ``*``; unused by DELETE) as text, parsed like the statement."""
    target = name or TargetName("?")
    cond = parse_expression(condition) if condition and condition.strip() else None
    if action == "delete":
        return _checked(target, MergeClause(kind, action, cond))
    if assignments is None:
        return _checked(target, MergeClause(kind, action, cond, None, (), True))
    columns = tuple(str(k) for k in assignments)
    values = tuple(parse_expression(str(v)) for v in assignments.values())
    return _checked(target, MergeClause(kind, action, cond, columns, values))


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 200 else flat[:197] + "..."


__all__ = ["MergeClause", "MergeInto", "TargetName", "check_merge", "clause", "parse_merge"]
