"""The one SQL dialect of the package: Spark SQL as sqlglot reads it, plus Flink's spellings.

Statements, ``CALL`` arguments and read filters (read/sql_predicate.py) are all read by
sqlglot's Spark dialect; this module extends it where Paimon's statements need it: Flink's
``BYTES`` type and ``/*+ OPTIONS(...) */`` hints, ``CALL sys.proc(...)``, ``SHOW ...`` and
``ALTER TABLE ... UNSET TBLPROPERTIES``, which sqlglot leaves as opaque commands and which are
read here from its tokens, never with regular expressions.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import Token, TokenType, exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError
from sqlglot.parsers.spark import SparkParser

from paimon_pyspark.errors import SqlSyntaxError


class Paimon(Spark):
    """Spark SQL with Flink's ``BYTES`` and Flink's ``NOT NULL`` on the element, key and value
    types of ``ARRAY<...>`` / ``MAP<...>``; everything else is sqlglot's Spark dialect."""

    class Tokenizer(Spark.Tokenizer):
        KEYWORDS = {**Spark.Tokenizer.KEYWORDS, "BYTES": TokenType.VARBINARY}

    class Parser(SparkParser):
        def _parse_types(
            self,
            check_func: bool = False,
            schema: bool = False,
            allow_identifiers: bool = True,
            with_collation: bool = False,
        ) -> exp.Expr | None:
            """A ``NOT NULL`` after an inner type of ``ARRAY<...>`` / ``MAP<...>`` (sqlglot parses
            those with ``with_collation``, after ``<`` or ``,``) marks it ``nullable=False``."""
            start = self._index
            this: exp.Expr | None = super()._parse_types(
                check_func, schema, allow_identifiers, with_collation
            )
            inner = (
                with_collation
                and start > 0
                and self._tokens[start - 1].token_type in (TokenType.LT, TokenType.COMMA)
            )
            if inner and isinstance(this, exp.DataType) and self._match_text_seq("NOT", "NULL"):
                this.set("nullable", False)
            return this


DIALECT = Paimon()


def _syntax_error(text: str, error: Exception) -> SqlSyntaxError:
    if isinstance(error, ParseError) and error.errors:
        first = error.errors[0]
        line, col = first.get("line"), first.get("col")
        return SqlSyntaxError(
            f"SQL syntax error at line {line}, column {col}: {first.get('description')} "
            f"(near {first.get('highlight')!r}) in: {_short(text)}",
            line,
            col,
        )
    return SqlSyntaxError(f"SQL syntax error: {error} in: {_short(text)}")


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 200 else flat[:197] + "..."


def tokenize(text: str) -> list[Token]:
    """The dialect's tokens of ``text`` (comments are attached to tokens, not tokens)."""
    try:
        return DIALECT.tokenize(text)
    except TokenError as e:
        raise _syntax_error(text, e) from None


def split_statements(text: str) -> list[str]:
    """``text`` cut at its top-level ``;`` into statements; comments and blank pieces go.

    Cut by the tokenizer, so a ``;`` inside a string, a quoted name or a comment does not
    split."""
    out: list[str] = []
    start = 0
    tokens = tokenize(text)
    cuts = [t.start for t in tokens if t.token_type == TokenType.SEMICOLON]
    for cut in [*cuts, len(text)]:
        piece = text[start:cut]
        start = cut + 1
        if tokenize(piece):
            out.append(piece.strip())
    return out


def parse_one(text: str) -> exp.Expr:
    """One statement as sqlglot's tree; an unreadable one raises SqlSyntaxError with the
    parser's line and column."""
    try:
        parsed = sqlglot.parse(text, dialect=DIALECT, error_level=sqlglot.ErrorLevel.RAISE)
    except (ParseError, TokenError) as e:
        raise _syntax_error(text, e) from None
    statements = [p for p in parsed if p is not None]
    if len(statements) != 1:
        raise SqlSyntaxError(
            f"Expected one SQL statement, got {len(statements)}: {_short(text)} "
            "(use split_statements for a script)."
        )
    return statements[0]


def parse_expression(text: str) -> exp.Expr:
    """An expression (not a statement) in the dialect, e.g. a procedure call's text."""
    try:
        return sqlglot.parse_one(text, dialect=DIALECT)
    except (ParseError, TokenError) as e:
        raise _syntax_error(text, e) from None


def to_sql(node: exp.Expr) -> str:
    """``node`` as Spark SQL text, for Spark to run."""
    return node.sql(dialect=DIALECT)


@dataclass(frozen=True)
class Hint:
    """A ``/*+ OPTIONS('k' = 'v', ...) */`` hint after a table name (Flink's dynamic
    options)."""

    options: dict[str, str]


def table_hint(text: str, table: exp.Table) -> Hint | None:
    """The OPTIONS hint that follows ``table``'s name in ``text``, if any.

    sqlglot keeps a comment after a table name but drops the ``+`` that makes it a hint, so
    the text right after the name's last token is looked at: a hint is a comment that starts
    with ``/*+``; a plain comment is not one."""
    parts = [p for p in (table.args.get("catalog"), table.args.get("db"), table.this) if p]
    ends = [p.meta.get("end") for p in parts if isinstance(p, exp.Identifier)]
    if not ends or any(e is None for e in ends):
        return None
    end = max(int(e) for e in ends if e is not None) + 1
    rest = text[end:].lstrip()
    if not rest.startswith("/*+"):
        return None
    close = rest.find("*/")
    if close < 0:
        raise SqlSyntaxError(f"Unterminated hint after table {table.sql()}: {_short(text)}")
    body = rest[3:close].strip()
    call = parse_expression(body)
    if not isinstance(call, exp.Anonymous) or str(call.this).upper() != "OPTIONS":
        raise SqlSyntaxError(
            f"Only OPTIONS('key' = 'value', ...) hints are supported after a table name, got "
            f"/*+ {body} */."
        )
    options: dict[str, str] = {}
    for arg in call.expressions:
        if not (
            isinstance(arg, exp.EQ)
            and isinstance(arg.this, exp.Literal)
            and isinstance(arg.expression, exp.Literal)
        ):
            raise SqlSyntaxError(
                f"An OPTIONS hint takes 'key' = 'value' pairs of string literals, got "
                f"{arg.sql()} in /*+ {body} */."
            )
        options[str(arg.this.this)] = str(arg.expression.this)
    return Hint(options)
