"""What every file index codec offers and is asked: Java's FileIndexWriter / FileIndexReader and
the predicate operations of its FunctionVisitor. Apart from the package so each codec module can
import it while the package imports the codecs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pyarrow as pa

# Predicate operations a reader is asked about (Java's FunctionVisitor methods).
EQUAL = "equal"
NOT_EQUAL = "not_equal"
IN = "in"
NOT_IN = "not_in"
LESS_THAN = "less_than"
LESS_OR_EQUAL = "less_or_equal"
GREATER_THAN = "greater_than"
GREATER_OR_EQUAL = "greater_or_equal"
IS_NULL = "is_null"
IS_NOT_NULL = "is_not_null"
BETWEEN = "between"
"""Asked with literals ``[from, to]``; a reader that does not answer it returns True, and the
scan then also asks GREATER_OR_EQUAL ``from`` and LESS_OR_EQUAL ``to``."""
OPERATIONS = (
    EQUAL,
    NOT_EQUAL,
    IN,
    NOT_IN,
    LESS_THAN,
    LESS_OR_EQUAL,
    GREATER_THAN,
    GREATER_OR_EQUAL,
    IS_NULL,
    IS_NOT_NULL,
    BETWEEN,
)


class FileIndexWriter(Protocol):
    """Java's FileIndexWriter for one column of one data file."""

    def write(self, values: pa.Array) -> None: ...

    def serialize(self) -> bytes: ...


class FileIndexReader(Protocol):
    """Java's FileIndexReader: ``may_match`` is ``False`` only when no row can match."""

    def may_match(self, operation: str, literals: Sequence[Any]) -> bool: ...
