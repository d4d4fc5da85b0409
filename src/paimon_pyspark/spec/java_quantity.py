"""Java's quantities in option values: a number and a unit, as ``MemorySize.parseBytes`` (and
``TimeUtils.parseDuration``, with its own units) read them.

Mirrors org.apache.paimon.options.MemorySize. It sits in ``spec/`` rather than ``options.py``
because the file index codecs (``spec/file_index``), below the options, read sizes from their
own options (``index-block-size``, ``chunk-size``) and must read them as the table's are read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from paimon_pyspark.errors import OptionError

LONG_MAX = 2**63 - 1

MEMORY_UNITS = {
    "": 1,
    "b": 1,
    "bytes": 1,
    "k": 1024,
    "kb": 1024,
    "kibibytes": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mebibytes": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gibibytes": 1024**3,
    "t": 1024**4,
    "tb": 1024**4,
    "tebibytes": 1024**4,
}
"""Java's MemorySize units, and only those: a table with another one fails in Java."""

_QUANTITY_RE = re.compile(r"([0-9]+)(.*)", re.DOTALL)


def where(table: str) -> str:
    """The start of an error message about an option of ``table`` (none without a table)."""
    return f"Table '{table}': " if table else ""


def too_many_digits(digits: str) -> bool:
    """More digits than any Java long has (int() of a huge string is slow, or refused)."""
    return len(digits.lstrip("+-").lstrip("0")) > 19


def quantity(text: str, key: str, table: str, units: Mapping[str, int], what: str) -> int:
    """ASCII digits then one of ``units`` (spaces around either), times the unit's factor."""
    m = _QUANTITY_RE.fullmatch(text.strip())
    unit = m.group(2).strip().lower() if m else ""
    if m is None or unit not in units:
        raise OptionError(
            f"{where(table)}option '{key}' = '{text}' is not a {what} (units: "
            f"{', '.join(u for u in units if u)})."
        )
    number = m.group(1)
    if too_many_digits(number) or int(number) > LONG_MAX:
        raise OptionError(f"{where(table)}option '{key}' = '{text}' does not fit a Java long.")
    return int(number) * units[unit]


def parse_memory_size(text: str, key: str, table: str = "") -> int:
    """Bytes, as Java's MemorySize.parseBytes: a number and a unit, within a Java long."""
    size = quantity(text, key, table, MEMORY_UNITS, "memory size like '128 mb'")
    if size > LONG_MAX:
        raise OptionError(
            f"{where(table)}option '{key}' = '{text}' is more bytes than a Java long holds."
        )
    return size
