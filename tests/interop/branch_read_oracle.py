"""Java Paimon's batch reads of a branch (``t$branch_b``) and of a table that reads two branches
(``scan.fallback-branch`` / ``scan.primary-branch``), through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/BranchReadOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from java_oracle import JavaOracle, sorted_rows


def _java(oracle: JavaOracle) -> Any:
    return oracle._gateway.jvm.paimonoracle.BranchReadOracle


def java_read(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    options: Mapping[str, str] | None = None,
    equal: tuple[str, Any] | None = None,
) -> list[list[Any]]:
    """The rows of ``db.table`` (``t`` or ``t$branch_b``) as Java reads them, sorted; with
    dynamic ``options`` and the filter ``field = value`` of ``equal``. Values as Java's
    canonical encoding gives them (strings and ints here)."""
    field, value = equal if equal is not None else ("", None)
    out = _java(oracle).read(
        os.fspath(warehouse), db, table, json.dumps(dict(options or {})), field, json.dumps(value)
    )
    return sorted_rows(json.loads(out))


def java_splits(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str
) -> list[tuple[Any, ...]]:
    """(partition values..., from the other branch) of each split of Java's plan, sorted."""
    out = json.loads(_java(oracle).splits(os.fspath(warehouse), db, table))
    return sorted(tuple(entry) for entry in out)
