"""Paimon's table functions in a query's FROM, as Java's Spark connector registers them
(PaimonTableValuedFunctions): each names a table and becomes that table's relation read with
one incremental option, so ``paimon_incremental_query('t', 12, 20)`` reads what
``t /*+ OPTIONS('incremental-between' = '12,20') */`` reads.

* ``paimon_incremental_query(table, start, end)``: ``incremental-between = 'start,end'``
  (snapshot ids or tag names);
* ``paimon_incremental_between_timestamp(table, start, end)``:
  ``incremental-between-timestamp = 'start,end'`` (epoch milliseconds or timestamp text).

Between two tags (or snapshots) whose bucket numbers differ, ``paimon_incremental_query``
returns the end's rows EXCEPT the start's, as Java's does where the diff cannot be read.
``paimon_incremental_to_auto_tag`` is refused, as option ``incremental-to-auto-tag`` is (it
needs the naming of automatic tags), and so are ``vector_search`` and ``full_text_search``
(they need Paimon's global indexes). Arguments are literals, turned to text as Java does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

from paimon_pyspark.errors import InconsistentBucketsError, SqlError, UnsupportedStatementError
from paimon_pyspark.read.incremental import incremental_range
from paimon_pyspark.table.file_store_table import FileStoreTable

INCREMENTAL_QUERY = "paimon_incremental_query"
INCREMENTAL_BETWEEN_TIMESTAMP = "paimon_incremental_between_timestamp"
INCREMENTAL_TO_AUTO_TAG = "paimon_incremental_to_auto_tag"

_OPTIONS = {
    INCREMENTAL_QUERY: "incremental-between",
    INCREMENTAL_BETWEEN_TIMESTAMP: "incremental-between-timestamp",
}
_BOUNDS = {
    INCREMENTAL_QUERY: "start and end snapshot ids or tag names",
    INCREMENTAL_BETWEEN_TIMESTAMP: "start and end timestamps",
}
_REFUSED = {
    INCREMENTAL_TO_AUTO_TAG: (
        "reading up to an automatic tag needs the naming of automatic tags, which is not "
        f"implemented; use {INCREMENTAL_QUERY}(table, 'earlier-tag', 'tag')"
    ),
    "vector_search": "it needs Paimon's global vector index, which is not implemented",
    "full_text_search": "it needs Paimon's global full-text index, which is not implemented",
}


@dataclass(frozen=True)
class TableFunction:
    """A Paimon table function of a query: the table it reads (as written: ``[catalog.][db.]
    table``) and the read options it sets."""

    function: str
    catalog: str | None
    database: str | None
    table: str
    options: dict[str, str]


def is_table_function(node: exp.Table) -> bool:
    """Whether ``node`` is a call of one of Paimon's table functions (refused ones too)."""
    return _name(node) in (*_OPTIONS, *_REFUSED)


def _name(node: exp.Table) -> str:
    """The function a FROM item calls (sqlglot knows some by their own class), lower case."""
    call = node.this
    if isinstance(call, exp.Anonymous):
        return str(call.name).lower()
    if isinstance(call, exp.Func):
        return call.sql_name().lower()
    return ""


def table_function(node: exp.Table) -> TableFunction:
    """The table and options of the Paimon table function ``node`` (``is_table_function``)."""
    name = _name(node)
    if name in _REFUSED:
        raise UnsupportedStatementError(
            f"Table function {name}(...) is not supported: {_REFUSED[name]}."
        )
    call = node.this
    assert isinstance(call, exp.Anonymous)
    args = [_text(name, a) for a in call.expressions]
    if len(args) != 3:
        raise SqlError(
            f"Table function {name}(...) takes three arguments: the table, and the "
            f"{_BOUNDS[name]}; got {len(args)}."
        )
    target = exp.to_table(args[0], dialect="spark")
    if not target.name:
        raise SqlError(f"Table function {name}(...): '{args[0]}' is not a table name.")
    return TableFunction(
        name,
        target.catalog or None,
        target.db or None,
        target.name,
        {_OPTIONS[name]: f"{args[1]},{args[2]}"},
    )


def snapshots_to_compare(
    table: FileStoreTable, options: Mapping[str, str]
) -> tuple[int, int] | None:
    """For ``paimon_incremental_query`` between two snapshots or tags whose bucket numbers
    differ, which an incremental diff cannot read: the two snapshot ids, whose difference
    (the end's rows EXCEPT the start's) Java's table function returns instead; else None."""
    try:
        incremental_range(table.copy(dict(options)).store)
    except InconsistentBucketsError as e:
        return e.start_id, e.end_id
    return None


def _text(function: str, arg: exp.Expr) -> str:
    """A literal argument as text, as Java's ``eval().toString``: ``12`` and ``'12'`` alike."""
    value = arg
    while isinstance(value, (exp.Cast, exp.TryCast, exp.Paren)):
        value = value.this
    negative = isinstance(value, exp.Neg)
    if negative:
        value = value.this
    if not isinstance(value, exp.Literal) or (negative and value.is_string):
        raise SqlError(
            f"Table function {function}(...) takes literal arguments, got {arg.sql('spark')}."
        )
    text = str(value.this)
    return f"-{text}" if negative else text
