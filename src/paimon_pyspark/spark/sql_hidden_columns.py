"""Java's hidden columns (``__paimon_file_path``, ``__paimon_partition``, ``__paimon_bucket``,
``__paimon_row_index``) in the SQL door's queries.

Java's relation lists them as Spark metadata columns: there when a query names them, left out
of ``*``. A Python data source has no metadata columns, so a relation whose query names one is
bound with the reader option that adds them (read/metadata_columns.py), and each ``*`` or
``t.*`` of the SELECT reading that relation is spelled out as the table's own columns, so
``SELECT *`` still gives the table's columns only.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from paimon_pyspark.errors import UnsupportedStatementError
from paimon_pyspark.read.metadata_columns import NAMES


def named(tree: exp.Expr, qualifiers: set[str]) -> list[str]:
    """The hidden columns ``tree`` names bare or qualified by one of ``qualifiers`` (the
    relation's name and alias, lower case), in Java's order."""
    found: set[str] = set()
    for column in tree.find_all(exp.Column):
        parts = column.parts
        for i, part in enumerate(parts):
            name = part.name.lower()
            if name in NAMES and (i == 0 or parts[i - 1].name.lower() in qualifiers):
                found.add(name)
    return [n for n in NAMES if n in found]


def spell_out_stars(bound: exp.Table, columns: Sequence[str]) -> None:
    """In the SELECT that reads ``bound`` (a relation with hidden columns), ``*`` and
    ``alias.*`` become ``alias.`c``` for the table's ``columns``; ``*`` over a join becomes
    each source's own ``source.*``."""
    select = bound.parent.parent if bound.parent is not None else None
    if not isinstance(select, exp.Select) or not isinstance(bound.parent, (exp.From, exp.Join)):
        return
    alias = bound.alias_or_name
    own = [exp.column(exp.to_identifier(c, quoted=True), table=alias) for c in columns]
    sources = _sources(select)
    expanded: list[exp.Expr] = []
    for item in select.expressions:
        if isinstance(item, exp.Star):
            if len(sources) == 1:
                expanded.extend(c.copy() for c in own)
                continue
            for source in sources:
                if source is bound:
                    expanded.extend(c.copy() for c in own)
                    continue
                name = source.alias_or_name
                if not name:
                    raise UnsupportedStatementError(
                        f"SELECT * over a join with hidden columns of '{alias}' needs an alias "
                        f"for every other source ({source.sql('spark')})."
                    )
                expanded.append(exp.Column(this=exp.Star(), table=exp.to_identifier(name)))
        elif (
            isinstance(item, exp.Column)
            and isinstance(item.this, exp.Star)
            and item.table.lower() == alias.lower()
        ):
            expanded.extend(c.copy() for c in own)
        else:
            expanded.append(item)
    select.set("expressions", expanded)


def _sources(select: exp.Select) -> list[exp.Expr]:
    sources: list[exp.Expr] = []
    source = select.args.get("from") or select.args.get("from_")
    if isinstance(source, exp.From):
        sources.append(source.this)
    for join in select.args.get("joins") or []:
        sources.append(join.this)
    return sources
