"""``ALTER TABLE t ALTER|CHANGE [COLUMN] ...`` in Spark's spellings, read from the dialect's
tokens (sqlglot reads neither a column path nor a position here):

    ALTER COLUMN path TYPE type | COMMENT 'c' | FIRST | AFTER col | SET NOT NULL | DROP NOT NULL
    ALTER COLUMN a TYPE BIGINT, b FIRST                      -- Spark 4: several columns
    CHANGE COLUMN path name type [COMMENT 'c'] [FIRST | AFTER col]  -- Hive's form

A path is ``c``, ``s.f`` (a field of ROW ``s``), ``arr.element.f`` or ``m.value.f``, as the
schema changes of Java's SparkCatalog name it. Several actions after one column are applied in
order (Spark allows one; Hive's form gives type, comment and position together). The changes
follow Java's SparkCatalog.toSchemaChange: a type change keeps the column's nullability; a
position moves a top-level column (Java moves the top-level column of a nested path, so a
nested position is refused rather than moving something else).
"""

from __future__ import annotations

from sqlglot import Token, TokenType, exp
from sqlglot.errors import ParseError

from paimon_pyspark.errors import SqlSyntaxError, UnsupportedOperationError
from paimon_pyspark.sql.dialect import DIALECT
from paimon_pyspark.sql.tags import Reader, table_name
from paimon_pyspark.sql.types import paimon_type
from paimon_pyspark.store.schema_change import Move, SchemaChange

_ACTIONS = {"TYPE", "COMMENT", "FIRST", "AFTER", "SET", "DROP"}
_OPEN = (TokenType.L_PAREN, TokenType.LT)
_CLOSE = (TokenType.R_PAREN, TokenType.GT)


def parse_alter_columns(
    text: str, tokens: list[Token]
) -> tuple[tuple[str, ...], bool, list[SchemaChange]] | None:
    """(table name parts, IF EXISTS, changes) of an ``ALTER TABLE t ALTER|CHANGE COLUMN``
    statement, or None when ``tokens`` spell another statement."""
    if [t.text.upper() for t in tokens[:2]] != ["ALTER", "TABLE"]:
        return None
    r = Reader(text, tokens, 2)
    if_exists = r.accept("IF", "EXISTS")
    table, r.i = table_name(tokens, r.i)
    if r.accept("ALTER"):
        hive = False
    elif r.accept("CHANGE"):
        hive = True
    else:
        return None
    r.accept("COLUMN")
    changes: list[SchemaChange] = []
    while True:
        path = column_path(r)
        if hive and not _at_action(r):
            changes += _hive_change(r, path)
        else:
            changes += _actions(r, path)
        if r.i < len(tokens) and tokens[r.i].token_type == TokenType.COMMA:
            r.i += 1
            continue
        r.end()
        return table, if_exists, changes


def column_path(r: Reader) -> tuple[str, ...]:
    """``c``, ``s.f``, ``arr.element.f``: a column's name parts."""
    parts = [_column_name(r)]
    while r.i < len(r.tokens) and r.tokens[r.i].token_type == TokenType.DOT:
        r.i += 1
        parts.append(_column_name(r))
    return tuple(parts)


def _column_name(r: Reader) -> str:
    if r.i < len(r.tokens) and r.tokens[r.i].token_type == TokenType.STRING:
        raise r.error("a column name")
    return r.name()


def _at_action(r: Reader) -> bool:
    token = r.tokens[r.i] if r.i < len(r.tokens) else None
    return (
        token is None
        or token.token_type in (TokenType.COMMA, TokenType.SEMICOLON)
        or (token.token_type != TokenType.IDENTIFIER and token.text.upper() in _ACTIONS)
    )


def _data_type(r: Reader, column: str) -> exp.DataType:
    """The type written from ``r.i`` up to the next action keyword outside brackets."""
    start = r.i
    depth = 0
    while r.i < len(r.tokens):
        token = r.tokens[r.i]
        if token.token_type in _OPEN:
            depth += 1
        elif token.token_type in _CLOSE:
            depth -= 1
        elif depth == 0 and (
            token.token_type in (TokenType.COMMA, TokenType.SEMICOLON, TokenType.NOT)
            or (token.token_type != TokenType.IDENTIFIER and token.text.upper() in _ACTIONS)
        ):
            break
        r.i += 1
    if r.i == start:
        raise r.error(f"the type of column '{column}'")
    written = r.text[r.tokens[start].start : r.tokens[r.i - 1].end + 1]
    try:
        return exp.DataType.build(written, dialect=DIALECT)
    except (ParseError, ValueError) as e:
        raise SqlSyntaxError(f"Column '{column}': cannot read the type {written!r}: {e}") from None


def _comment(r: Reader) -> str:
    token = r.tokens[r.i] if r.i < len(r.tokens) else None
    if token is None or token.token_type != TokenType.STRING:
        raise r.error("a string after COMMENT")
    r.i += 1
    return token.text


def _position(r: Reader, path: tuple[str, ...]) -> SchemaChange | None:
    if r.accept("FIRST"):
        move = Move.first(path[0])
    elif r.accept("AFTER"):
        move = Move.after(path[0], _column_name(r))
    else:
        return None
    if len(path) > 1:
        raise UnsupportedOperationError(
            f"Moving the nested field {'.'.join(path)} (FIRST/AFTER) is not supported: Java "
            f"1.4.2's Spark catalog would move the top-level column '{path[0]}' instead."
        )
    return SchemaChange.update_column_position(move)


def _actions(r: Reader, path: tuple[str, ...]) -> list[SchemaChange]:
    label = ".".join(path)
    out: list[SchemaChange] = []
    while True:
        if r.accept("TYPE"):
            t = paimon_type(_data_type(r, label), label, True)
            out.append(SchemaChange.update_column_type(path, t, keep_nullability=True))
        elif r.accept("COMMENT"):
            out.append(SchemaChange.update_column_comment(path, _comment(r)))
        elif r.accept("SET", "NOT", "NULL"):
            out.append(SchemaChange.update_column_nullability(path, False))
        elif r.accept("DROP", "NOT", "NULL"):
            out.append(SchemaChange.update_column_nullability(path, True))
        elif r.peek("SET", "DEFAULT") or r.peek("DROP", "DEFAULT"):
            raise UnsupportedOperationError(
                f"ALTER COLUMN {label} SET/DROP DEFAULT is not supported by the SQL door."
            )
        else:
            moved = _position(r, path)
            if moved is None:
                break
            out.append(moved)
    if not out:
        raise r.error(f"TYPE, COMMENT, FIRST, AFTER or SET/DROP NOT NULL after column {label}")
    return out


def _hive_change(r: Reader, path: tuple[str, ...]) -> list[SchemaChange]:
    """Hive's ``CHANGE COLUMN path name type ...``, as Spark reads it for a v2 table: the name
    must stay, and NOT NULL is refused (both Spark's refusals)."""
    label = ".".join(path)
    name = _column_name(r)
    if name.lower() != path[-1].lower():
        raise UnsupportedOperationError(
            f"CHANGE COLUMN {label} {name}: renaming a column is not supported in Hive-style "
            "ALTER COLUMN, please run RENAME COLUMN instead."
        )
    t = paimon_type(_data_type(r, label), label, True)
    out: list[SchemaChange] = [SchemaChange.update_column_type(path, t, keep_nullability=True)]
    if r.peek("NOT", "NULL"):
        raise UnsupportedOperationError(
            f"CHANGE COLUMN {label}: NOT NULL is not supported in Hive-style ALTER COLUMN, "
            "please run ALTER COLUMN ... SET/DROP NOT NULL instead."
        )
    if r.accept("COMMENT"):
        out.append(SchemaChange.update_column_comment(path, _comment(r)))
    moved = _position(r, path)
    if moved is not None:
        out.append(moved)
    return out


__all__ = ["column_path", "parse_alter_columns"]
