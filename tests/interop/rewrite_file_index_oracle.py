"""Java's rewrite_file_index without an engine, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/RewriteFileIndexOracle.java``: Java's FileIndexProcessor (what both
engines' RewriteFileIndexProcedure run per file) over every file of the latest snapshot,
committed as their sinks commit it.
"""

from __future__ import annotations

import json
import os
from typing import Any

from java_oracle import JavaOracle


def java_rewrite(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str
) -> dict[str, Any]:
    """Rewrite with Java; per data file ``{"embedded": hex | None, "extra_files": [...]}``
    after the commit, and ``"_commit_kind"``: the kind of the snapshot it committed."""
    java = oracle._gateway.jvm.paimonoracle.RewriteFileIndexOracle
    out: dict[str, Any] = json.loads(java.rewrite(os.path.abspath(os.fspath(warehouse)), db, table))
    return out


def java_files(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str
) -> dict[str, Any]:
    """As :func:`java_rewrite` returns, of the latest snapshot as it is, read by Java."""
    java = oracle._gateway.jvm.paimonoracle.RewriteFileIndexOracle
    out: dict[str, Any] = json.loads(java.files(os.path.abspath(os.fspath(warehouse)), db, table))
    return out
