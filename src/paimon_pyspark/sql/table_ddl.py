"""Table statements of Spark's spelling that change a table's data or definition as a whole:
``TRUNCATE TABLE t [PARTITION (...)]``, ``[CREATE OR] REPLACE TABLE t ... [AS SELECT]`` and
``ALTER TABLE t ADD | DROP PARTITION (...)``, as typed values (run by spark/sql_table_ddl.py).

sqlglot reads TRUNCATE and CREATE OR REPLACE; ``REPLACE TABLE`` it reads once spelled ``CREATE OR
REPLACE``, and the partition statements are read from the dialect's tokens, since sqlglot turns
most of their forms (several partitions, IF NOT EXISTS, PURGE) into an opaque command.
Partition values are kept as Java's partition specs keep them: strings, None for NULL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import Token, TokenType, exp

from paimon_pyspark.errors import SqlSyntaxError
from paimon_pyspark.sql.dialect import parse_expression
from paimon_pyspark.sql.show import PartitionSpec, partition_spec

if TYPE_CHECKING:
    from paimon_pyspark.sql.statements import CreateTable, TableName


@dataclass(frozen=True)
class TruncateTable:
    """``TRUNCATE TABLE t [PARTITION (k = v, ...)]``; ``partition`` None empties the table."""

    name: TableName
    partition: PartitionSpec | None = None


@dataclass(frozen=True)
class ReplaceTable:
    """``REPLACE TABLE`` (``or_create`` False) or ``CREATE OR REPLACE TABLE``, with columns or
    ``AS SELECT`` as ``create`` gives them."""

    create: CreateTable
    or_create: bool


@dataclass(frozen=True)
class DropPartitions:
    """``ALTER TABLE t DROP [IF EXISTS] PARTITION (...) [, PARTITION (...)] [PURGE]``."""

    name: TableName
    partitions: list[PartitionSpec]
    if_exists: bool
    purge: bool = False


@dataclass(frozen=True)
class AddPartitions:
    """``ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (...) [LOCATION '...'] [PARTITION ...]``."""

    name: TableName
    partitions: list[PartitionSpec]
    if_not_exists: bool


def truncate_table(node: exp.TruncateTable, text: str) -> TruncateTable:
    from paimon_pyspark.sql.statements import TableName, _unsupported

    tables = node.expressions
    if node.args.get("is_database") or len(tables) != 1 or not isinstance(tables[0], exp.Table):
        raise _unsupported("This TRUNCATE form (one table only)", text)
    for clause in ("exists", "cluster", "identity", "option", "partition_by"):
        if node.args.get(clause):
            raise _unsupported(f"TRUNCATE TABLE with {clause.upper()}", text)
    partition = node.args.get("partition")
    spec = partition_spec(partition, text) if partition is not None else None
    return TruncateTable(TableName.of(tables[0]), spec)


def replace_table(node: exp.Expr, text: str, or_create: bool) -> ReplaceTable:
    from paimon_pyspark.sql.statements import _create_table

    if not isinstance(node, exp.Create) or node.args.get("kind") != "TABLE":
        raise SqlSyntaxError(f"Expected REPLACE TABLE name (...) or AS SELECT: {text}")
    if node.args.get("exists"):
        raise SqlSyntaxError(f"REPLACE TABLE takes no IF NOT EXISTS: {text}")
    return ReplaceTable(_create_table(node, text), or_create)


def is_replace(tokens: list[Token]) -> bool:
    """``REPLACE TABLE ...``, which sqlglot reads as a function call."""
    return len(tokens) > 1 and [t.text.upper() for t in tokens[:2]] == ["REPLACE", "TABLE"]


def replace_text(text: str, tokens: list[Token]) -> str:
    """``REPLACE TABLE ...`` respelled ``CREATE OR REPLACE TABLE ...`` for sqlglot."""
    return "CREATE OR " + text[tokens[0].start :]


def _partition_action(tokens: list[Token]) -> tuple[int, int] | None:
    """(index of ADD or DROP, index past the table name) of ``ALTER TABLE name ADD|DROP [IF [NOT]
    EXISTS] PARTITION``, else None."""
    words = [t.text.upper() for t in tokens]
    if words[:2] != ["ALTER", "TABLE"]:
        return None
    i = 2
    while i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.DOT:
        i += 2
    i += 1
    if i >= len(words) or words[i] not in ("ADD", "DROP"):
        return None
    j = i + 1
    if words[j : j + 2] == ["IF", "EXISTS"]:
        j += 2
    elif words[j : j + 3] == ["IF", "NOT", "EXISTS"]:
        j += 3
    return (i, j) if words[j : j + 1] == ["PARTITION"] else None


def is_partition_ddl(tokens: list[Token]) -> bool:
    return _partition_action(tokens) is not None


def alter_partitions(text: str, tokens: list[Token]) -> AddPartitions | DropPartitions:
    """``ALTER TABLE t ADD|DROP ... PARTITION (...)``, read from the dialect's tokens."""
    from paimon_pyspark.sql.statements import TableName

    found = _partition_action(tokens)
    if found is None:  # pragma: no cover - callers check is_partition_ddl first
        raise SqlSyntaxError(f"Expected ALTER TABLE ... ADD|DROP PARTITION: {text}")
    action, i = found
    names = [t.text for t in tokens[2:action] if t.token_type != TokenType.DOT]
    if not 1 <= len(names) <= 3:
        raise SqlSyntaxError(f"Expected a table name in: {text}")
    name = TableName(*reversed(names))
    words = [t.text.upper() for t in tokens]
    adding = words[action] == "ADD"
    guarded = i > action + 1
    specs: list[PartitionSpec] = []
    purge = False
    while i < len(tokens):
        if words[i] == "PARTITION" and i + 1 < len(tokens) and words[i + 1] == "(":
            close = _closing(tokens, i + 1, text)
            inner = text[tokens[i + 1].start : tokens[close].end + 1]
            specs.append(partition_spec(parse_expression(inner), text))
            i = close + 1
        elif adding and words[i] == "LOCATION" and i + 1 < len(tokens):
            i += 2  # a filesystem table's partition has no location of its own: Java ignores it
        elif not adding and words[i] == "," and specs:
            i += 1
        elif not adding and words[i] == "PURGE" and i == len(tokens) - 1:
            purge = True
            i += 1
        else:
            raise SqlSyntaxError(f"Unexpected '{tokens[i].text}' in: {text}")
    if not specs:
        raise SqlSyntaxError(f"Expected PARTITION (key = value, ...) in: {text}")
    if adding:
        return AddPartitions(name, specs, guarded)
    return DropPartitions(name, specs, guarded, purge)


def _closing(tokens: list[Token], open_at: int, text: str) -> int:
    depth = 0
    for k in range(open_at, len(tokens)):
        if tokens[k].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[k].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return k
    raise SqlSyntaxError(f"Unclosed '(' in: {text}")


__all__ = [
    "AddPartitions",
    "DropPartitions",
    "PartitionSpec",
    "ReplaceTable",
    "TruncateTable",
    "alter_partitions",
    "is_partition_ddl",
    "is_replace",
    "replace_table",
    "replace_text",
    "truncate_table",
]
