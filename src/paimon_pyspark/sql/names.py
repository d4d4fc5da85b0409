"""The tables a statement names, for the SQL door to tell Paimon's statements from Spark's.

Read from sqlglot's tree: every table reference but a CTE's name. A statement sqlglot leaves
opaque (``EXPLAIN ...``, ``SHOW ...``, ``ADD JAR``) is read through its text: the statement it
wraps when that parses (``EXPLAIN SELECT ...``), else every dotted name among its tokens
(``SHOW PARTITIONS db.t`` names ``PARTITIONS`` and ``db.t``), which over-reads rather than
misses a table.
"""

from __future__ import annotations

import logging

from sqlglot import TokenType, exp

from paimon_pyspark.errors import SqlSyntaxError
from paimon_pyspark.sql.dialect import parse_one, tokenize

_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER)


def named_tables(text: str) -> list[exp.Table]:
    """Every table ``text`` names (``catalog``, ``db`` and ``name`` as written); none for a
    statement that cannot be read."""
    try:
        tree = _quiet_parse(text)
    except SqlSyntaxError:
        return _token_names(text)
    return tables_of(tree)


def tables_of(tree: exp.Expr) -> list[exp.Table]:
    """The table references of ``tree``, CTE names left out; an opaque command's by its text."""
    if isinstance(tree, exp.Command):
        rest = tree.expression
        inner = str(rest.this) if isinstance(rest, exp.Literal) else ""
        if not inner.strip():
            return []
        try:
            wrapped = _quiet_parse(inner)
        except SqlSyntaxError:
            return _token_names(inner)
        if isinstance(wrapped, (exp.Command, exp.Alias, exp.Column, exp.Identifier)):
            return _token_names(inner)
        return tables_of(wrapped)
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    return [
        t
        for t in tree.find_all(exp.Table)
        if isinstance(t.this, exp.Identifier)
        and t.name
        and not (not t.db and t.name.lower() in ctes)
    ]


def claims_paimon(text: str) -> bool:
    """Whether ``text`` is a Paimon statement by its form, whatever tables exist: ``CALL``,
    and ``CREATE [OR REPLACE] TABLE`` / ``REPLACE TABLE`` without ``USING`` or ``USING
    paimon`` (a table the door would create)."""
    try:
        tokens = tokenize(text)
    except SqlSyntaxError:
        return False
    if tokens and tokens[0].text.upper() == "CALL":
        return True
    try:
        tree = _quiet_parse(text)
    except SqlSyntaxError:
        return False
    if not isinstance(tree, exp.Create) or tree.args.get("kind") != "TABLE":
        return False
    props = tree.args.get("properties")
    formats = [
        p for p in (props.expressions if props else []) if isinstance(p, exp.FileFormatProperty)
    ]
    return all(p.name.lower() == "paimon" for p in formats)


def _quiet_parse(text: str) -> exp.Expr:
    """sqlglot's tree of ``text``, without the warning sqlglot logs for a command it keeps as
    text."""
    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        return parse_one(text)
    finally:
        log.setLevel(level)


def _token_names(text: str) -> list[exp.Table]:
    try:
        tokens = tokenize(text)
    except SqlSyntaxError:
        return []
    out: list[exp.Table] = []
    parts: list[str] = []
    expect_name = True
    for token in [*tokens, None]:
        if token is not None and token.token_type in _NAME_TOKENS and expect_name:
            parts.append(token.text)
            expect_name = False
            continue
        if token is not None and token.token_type == TokenType.DOT and not expect_name:
            expect_name = True
            continue
        if parts and len(parts) <= 3:
            out.append(_table(parts))
        parts, expect_name = [], True
        if token is not None and token.token_type in _NAME_TOKENS:
            parts.append(token.text)
            expect_name = False
    return out


def _table(parts: list[str]) -> exp.Table:
    *prefix, name = parts
    db = prefix[-1] if prefix else None
    catalog = prefix[0] if len(prefix) == 2 else None
    return exp.Table(
        this=exp.to_identifier(name),
        db=exp.to_identifier(db) if db else None,
        catalog=exp.to_identifier(catalog) if catalog else None,
    )


__all__ = ["claims_paimon", "named_tables", "tables_of"]
