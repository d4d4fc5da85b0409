"""Tag DDL as Java's Spark connector reads it (PaimonSqlExtensions.g4), typed:

    ALTER TABLE t CREATE TAG [IF NOT EXISTS] tag [AS OF VERSION n] [RETAIN n DAYS|HOURS|MINUTES]
    ALTER TABLE t [CREATE OR] REPLACE TAG tag [AS OF VERSION n] [RETAIN n ...]
    ALTER TABLE t DELETE TAG [IF EXISTS] tag[, tag ...]
    ALTER TABLE t RENAME TAG tag TO tag

sqlglot leaves these as commands, so they are read from the dialect's tokens. A tag name is a
word or a backquoted name (as in Java), or a number or string literal (ours: the same name).
Java's ``DELETE TAG `a,b``` deletes both; so does ours, and so does an unquoted list.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import Token, TokenType

from paimon_pyspark.errors import SqlSyntaxError

_UNITS = {"DAYS": "d", "HOURS": "h", "MINUTES": "min"}


@dataclass(frozen=True)
class CreateTag:
    """``CREATE TAG``, ``REPLACE TAG`` or ``CREATE OR REPLACE TAG`` (Java's
    CreateOrReplaceTagCommand); ``time_retained`` is a duration such as ``'7 d'``."""

    table: tuple[str, ...]
    tag: str
    snapshot_id: int | None
    time_retained: str | None
    create: bool
    replace: bool
    if_not_exists: bool


@dataclass(frozen=True)
class DeleteTag:
    table: tuple[str, ...]
    tags: tuple[str, ...]
    if_exists: bool


@dataclass(frozen=True)
class RenameTag:
    table: tuple[str, ...]
    tag: str
    target: str


TagStatement = CreateTag | DeleteTag | RenameTag


def _word(token: Token) -> bool:
    """A token that can be (part of) a name: a backquoted name or an unquoted word."""
    if token.token_type == TokenType.IDENTIFIER:
        return True
    return token.token_type != TokenType.STRING and token.text.replace("_", "").isalnum()


def table_name(tokens: list[Token], start: int) -> tuple[tuple[str, ...], int]:
    """The dotted name at ``tokens[start]`` (``t``, ``db.t``, ``paimon.db.t``) as written, and
    the index after it."""
    parts: list[str] = []
    i = start
    while i < len(tokens) and _word(tokens[i]):
        parts.append(tokens[i].text)
        i += 1
        if i < len(tokens) and tokens[i].token_type == TokenType.DOT:
            i += 1
        else:
            break
    if not 1 <= len(parts) <= 3:
        raise SqlSyntaxError("Expected a table name after ALTER TABLE.")
    return tuple(parts), i


class Reader:
    def __init__(self, text: str, tokens: list[Token], i: int) -> None:
        self.text = text
        self.tokens = tokens
        self.i = i

    def error(self, expected: str) -> SqlSyntaxError:
        near = self.tokens[self.i].text if self.i < len(self.tokens) else "the end"
        flat = " ".join(self.text.split())[:200]
        return SqlSyntaxError(f"Expected {expected}, got {near!r} in: {flat}")

    def peek(self, *words: str) -> bool:
        got = [t.text.upper() for t in self.tokens[self.i : self.i + len(words)]]
        return got == list(words) and all(
            t.token_type != TokenType.IDENTIFIER and t.token_type != TokenType.STRING
            for t in self.tokens[self.i : self.i + len(words)]
        )

    def accept(self, *words: str) -> bool:
        if self.peek(*words):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(" ".join(words))

    def number(self, what: str) -> int:
        token = self.tokens[self.i] if self.i < len(self.tokens) else None
        if token is None or token.token_type != TokenType.NUMBER or not token.text.isdigit():
            raise self.error(what)
        self.i += 1
        return int(token.text)

    def name(self) -> str:
        token = self.tokens[self.i] if self.i < len(self.tokens) else None
        if token is None or not (_word(token) or token.token_type == TokenType.STRING):
            raise self.error("a tag name")
        self.i += 1
        return token.text

    def end(self) -> None:
        while self.i < len(self.tokens) and self.tokens[self.i].token_type == TokenType.SEMICOLON:
            self.i += 1
        if self.i < len(self.tokens):
            raise self.error("the end of the statement")


def parse_tag_statement(text: str, tokens: list[Token]) -> TagStatement | None:
    """The tag statement ``tokens`` spell, or None when they are not ``ALTER TABLE t ... TAG``."""
    if [t.text.upper() for t in tokens[:2]] != ["ALTER", "TABLE"]:
        return None
    table, i = table_name(tokens, 2)
    r = Reader(text, tokens, i)
    if r.accept("CREATE", "TAG"):
        if_not_exists = r.accept("IF", "NOT", "EXISTS")
        return _create(r, table, create=True, replace=False, if_not_exists=if_not_exists)
    if r.accept("CREATE", "OR", "REPLACE", "TAG"):
        return _create(r, table, create=True, replace=True, if_not_exists=False)
    if r.accept("REPLACE", "TAG"):
        return _create(r, table, create=False, replace=True, if_not_exists=False)
    if r.accept("DELETE", "TAG"):
        if_exists = r.accept("IF", "EXISTS")
        names = [r.name()]
        while r.i < len(tokens) and tokens[r.i].token_type == TokenType.COMMA:
            r.i += 1
            names.append(r.name())
        r.end()
        split = [p.strip() for n in names for p in n.split(",")]
        return DeleteTag(table, tuple(split), if_exists)
    if r.accept("RENAME", "TAG"):
        tag = r.name()
        r.expect("TO")
        target = r.name()
        r.end()
        return RenameTag(table, tag, target)
    return None


def _create(
    r: Reader, table: tuple[str, ...], create: bool, replace: bool, if_not_exists: bool
) -> CreateTag:
    tag = r.name()
    snapshot_id = None
    if r.accept("AS", "OF", "VERSION"):
        snapshot_id = r.number("a snapshot id after AS OF VERSION")
    time_retained = None
    if r.accept("RETAIN"):
        amount = r.number("a number after RETAIN")
        unit = r.tokens[r.i].text.upper() if r.i < len(r.tokens) else ""
        if unit not in _UNITS:
            raise r.error("DAYS, HOURS or MINUTES after RETAIN n")
        r.i += 1
        time_retained = f"{amount} {_UNITS[unit]}"
    r.end()
    return CreateTag(table, tag, snapshot_id, time_retained, create, replace, if_not_exists)


__all__ = ["CreateTag", "DeleteTag", "RenameTag", "TagStatement", "parse_tag_statement"]
