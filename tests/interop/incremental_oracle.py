"""Java Paimon's incremental reads, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/IncrementalOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle, so one JVM serves both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from java_oracle import JavaOracle


class JavaIncremental(NamedTuple):
    """Java's rows, each ``[row kind, *values]`` (``"+I"``, ``"-D"``, ...), or its refusal."""

    rows: list[list[Any]] | None
    error: str | None

    def added(self) -> list[tuple[Any, ...]]:
        """The values of the rows that are not retractions (-U, -D), sorted: what a batch read
        returns, as Java's docs put it for batch SQL."""
        assert self.rows is not None, self.error
        return sorted((tuple(r[1:]) for r in self.rows if r[0] in ("+I", "+U")), key=_sort_key)


def _sort_key(row: tuple[Any, ...]) -> list[str]:
    return [repr(v) for v in row]


def read_incremental(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    options: Mapping[str, str],
) -> JavaIncremental:
    """Java's batch read of ``db.table`` copied with ``options`` (its incremental keys)."""
    java = oracle._gateway.jvm.paimonoracle.IncrementalOracle
    text = java.read(os.fspath(warehouse), db, table, json.dumps(dict(options)))
    out = json.loads(text)
    return JavaIncremental(out["rows"], out["error"])


def sorted_rows(rows: list[dict[str, Any]], fields: list[str]) -> list[tuple[Any, ...]]:
    """Our rows as value tuples in ``fields`` order, sorted as ``JavaIncremental.added``."""
    return sorted((tuple(r[f] for f in fields) for r in rows), key=_sort_key)
