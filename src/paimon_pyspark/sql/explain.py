"""``EXPLAIN [EXTENDED | FORMATTED | CODEGEN | COST] <query>``: Spark's plan of a query over
Paimon tables, which Spark cannot plan by name; the door binds the query as it binds any query
(spark/sql_explain.py). sqlglot keeps EXPLAIN as text, so the mode is read from its tokens and
the query parsed from the rest. An EXPLAIN of anything but a query is not read here (it goes to
Spark when it names no Paimon table, spark/door.py)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import TokenType, exp

from paimon_pyspark.errors import SqlSyntaxError
from paimon_pyspark.sql.dialect import parse_one, tokenize

MODES = ("EXTENDED", "FORMATTED", "CODEGEN", "COST")


@dataclass(frozen=True)
class Explain:
    mode: str
    """Spark's explain mode: ``simple`` (the default), ``extended``, ``formatted``, ..."""
    query: exp.Expr
    text: str
    """The query's own text, where its ``/*+ OPTIONS */`` hints are read."""


def parse_explain(body: str) -> Explain | None:
    """The EXPLAIN of a query, from ``body``, the statement's text after ``EXPLAIN``; None for
    anything else."""
    tokens = tokenize(body)
    if not tokens:
        return None
    mode = "simple"
    start = 0
    if tokens[0].text.upper() in MODES and tokens[0].token_type != TokenType.STRING:
        mode, start = tokens[0].text.lower(), 1
    if start >= len(tokens):
        return None
    rest = body[tokens[start].start :]
    try:
        query = parse_one(rest)
    except SqlSyntaxError:
        return None
    if not isinstance(query, (exp.Query, exp.Values)):
        return None
    return Explain(mode, query, rest)


__all__ = ["MODES", "Explain", "parse_explain"]
