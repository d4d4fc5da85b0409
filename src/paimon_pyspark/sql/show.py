"""Statements that read a table's definition: ``DESCRIBE [TABLE] [EXTENDED] t``, ``SHOW CREATE
TABLE``, ``SHOW PARTITIONS``, ``SHOW TAGS``, ``SHOW COLUMNS`` and ``SHOW TBLPROPERTIES``, as
typed values (run by spark/sql_show.py).

sqlglot reads DESCRIBE; the SHOW forms it leaves as an opaque command, so they are read here from
the dialect's tokens. A table name is one to three dotted parts, quoted or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import Token, TokenType, exp

from paimon_pyspark.errors import SqlSyntaxError
from paimon_pyspark.sql.dialect import parse_expression

if TYPE_CHECKING:
    from paimon_pyspark.sql.statements import Statement, TableName

PartitionSpec = dict[str, str | None]
"""Key -> value text as the statement gives it (None: NULL)."""


@dataclass(frozen=True)
class DescribeTable:
    """``DESCRIBE [TABLE] [EXTENDED | FORMATTED] t [PARTITION (...)]``."""

    name: TableName
    extended: bool = False
    partition: PartitionSpec | None = None


@dataclass(frozen=True)
class ShowCreateTable:
    name: TableName


@dataclass(frozen=True)
class ShowPartitions:
    """``SHOW PARTITIONS t [PARTITION (k = v, ...)]``; a spec may name some keys only."""

    name: TableName
    partition: PartitionSpec | None = None


@dataclass(frozen=True)
class ShowTags:
    name: TableName


@dataclass(frozen=True)
class ShowColumns:
    """``SHOW COLUMNS (FROM | IN) t [(FROM | IN) db]``; ``database`` is the second clause's."""

    name: TableName
    database: str | None = None


@dataclass(frozen=True)
class ShowTblProperties:
    """``SHOW TBLPROPERTIES t [('key')]``."""

    name: TableName
    key: str | None = None


ShowStatement = (
    DescribeTable | ShowCreateTable | ShowPartitions | ShowTags | ShowColumns | ShowTblProperties
)


def _table_name(parts: list[str], text: str) -> TableName:
    from paimon_pyspark.sql.statements import TableName

    if not 1 <= len(parts) <= 3:
        raise SqlSyntaxError(f"Expected a table name (t, db.t or paimon.db.t) in: {text}")
    return TableName(*reversed(parts))


def _name(tokens: list[Token], i: int, text: str) -> tuple[list[str], int]:
    """The dotted name starting at ``tokens[i]`` and the index past it. Keywords are names
    here (``SHOW TAGS order``), as Spark reads non-reserved words."""
    if i >= len(tokens) or tokens[i].token_type in (TokenType.L_PAREN, TokenType.STRING):
        raise SqlSyntaxError(f"Expected a table name in: {text}")
    parts = [tokens[i].text]
    i += 1
    while i + 1 < len(tokens) and tokens[i].token_type == TokenType.DOT:
        parts.append(tokens[i + 1].text)
        i += 2
    return parts, i


def _spec_value(node: exp.Expr, where: str) -> str | None:
    from paimon_pyspark.sql.statements import _literal

    value = _literal(node, where)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def partition_spec(node: exp.Expr, text: str) -> PartitionSpec:
    """``PARTITION (k = v, ...)``'s spec from sqlglot's Partition node (or a tuple of EQs)."""
    items = node.expressions if isinstance(node, (exp.Partition, exp.Tuple)) else [node]
    if isinstance(node, exp.Paren):
        items = [node.this]
    spec: PartitionSpec = {}
    for item in items:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise SqlSyntaxError(
                f"A partition spec takes key = value pairs, got {item.sql()!r} in: {text}"
            )
        key = item.this.name
        if key.lower() in (k.lower() for k in spec):
            raise SqlSyntaxError(f"Partition key '{key}' is given twice in: {text}")
        spec[key] = _spec_value(item.expression, f"PARTITION ({item.sql()})")
    if not spec:
        raise SqlSyntaxError(f"Expected PARTITION (key = value, ...) in: {text}")
    return spec


def _rest_spec(tokens: list[Token], i: int, body: str, text: str) -> PartitionSpec | None:
    """The optional ``PARTITION (...)`` from ``tokens[i]`` to the end."""
    if i == len(tokens):
        return None
    if tokens[i].text.upper() != "PARTITION" or i + 1 >= len(tokens):
        raise SqlSyntaxError(f"Expected PARTITION (key = value, ...) or the end in: {text}")
    inner = body[tokens[i + 1].start : tokens[-1].end + 1]
    return partition_spec(parse_expression(inner), text)


def parse_show(text: str, body: str, tokens: list[Token]) -> Statement:
    """``SHOW CREATE TABLE | PARTITIONS | TAGS | COLUMNS | TBLPROPERTIES ...``; ``tokens`` are
    ``body``'s (the text after SHOW)."""
    from paimon_pyspark.sql.statements import _unsupported

    words = [t.text.upper() for t in tokens]
    if words[:2] == ["CREATE", "TABLE"]:
        parts, i = _name(tokens, 2, text)
        if words[i:] == ["AS", "SERDE"]:
            raise _unsupported("SHOW CREATE TABLE ... AS SERDE (Hive tables only)", text)
        if i != len(tokens):
            raise SqlSyntaxError(f"Unexpected {tokens[i].text!r} after the table name in: {text}")
        return ShowCreateTable(_table_name(parts, text))
    if words[:1] == ["PARTITIONS"]:
        parts, i = _name(tokens, 1, text)
        return ShowPartitions(_table_name(parts, text), _rest_spec(tokens, i, body, text))
    if words[:1] == ["TAGS"]:
        parts, i = _name(tokens, 1, text)
        if i != len(tokens):
            raise SqlSyntaxError(f"Unexpected {tokens[i].text!r} after the table name in: {text}")
        return ShowTags(_table_name(parts, text))
    if words[:1] == ["COLUMNS"]:
        if words[1:2] not in (["FROM"], ["IN"]):
            raise SqlSyntaxError(f"Expected SHOW COLUMNS FROM | IN table in: {text}")
        parts, i = _name(tokens, 2, text)
        database = None
        if i < len(tokens):
            if words[i] not in ("FROM", "IN") or i + 2 != len(tokens):
                raise SqlSyntaxError(f"Expected SHOW COLUMNS ... [FROM | IN database] in: {text}")
            database = tokens[i + 1].text
        return ShowColumns(_table_name(parts, text), database)
    if words[:1] == ["TBLPROPERTIES"]:
        parts, i = _name(tokens, 1, text)
        key = None
        if i < len(tokens):
            inside = tokens[i + 1 : -1]
            ok = (
                tokens[i].token_type == TokenType.L_PAREN
                and tokens[-1].token_type == TokenType.R_PAREN
                and len(inside) >= 1
            )
            if ok and len(inside) == 1 and inside[0].token_type == TokenType.STRING:
                key = inside[0].text
            elif ok and all(t.token_type != TokenType.STRING for t in inside):
                key = body[inside[0].start : inside[-1].end + 1]  # a dotted key: 'a.b.c'
            else:
                raise SqlSyntaxError(f"Expected SHOW TBLPROPERTIES table [('key')] in: {text}")
        return ShowTblProperties(_table_name(parts, text), key)
    raise _unsupported(f"SHOW {' '.join(words[:2])}", text)


def parse_describe(node: exp.Describe, text: str) -> DescribeTable:
    """``DESC[RIBE] [TABLE] [EXTENDED | FORMATTED] t [PARTITION (...)]``."""
    from paimon_pyspark.sql.statements import TableName, _unsupported

    kind = str(node.args.get("kind") or "").upper() or None
    target = node.this
    if kind not in (None, "TABLE") or not isinstance(target, exp.Table):
        what = f"DESCRIBE {kind}" if kind else "DESCRIBE of a query"
        raise _unsupported(what, text)
    style = str(node.args.get("style") or "").upper()
    if style not in ("", "EXTENDED", "FORMATTED"):
        raise _unsupported(f"DESCRIBE {style}", text)
    partition = node.args.get("partition")
    spec = partition_spec(partition, text) if partition is not None else None
    return DescribeTable(TableName.of(target), bool(style), spec)
