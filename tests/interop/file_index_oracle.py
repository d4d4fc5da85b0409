"""Java Paimon's file indexes, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/FileIndexOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from java_oracle import JavaOracle, to_wire


def index_bytes(
    oracle: JavaOracle,
    index_type: str,
    type_json: Any,
    options: Mapping[str, str],
    values: Sequence[Any],
) -> bytes:
    """The bytes Java's ``index_type`` writer serializes after ``values`` (nulls included)."""
    java = oracle._gateway.jvm.paimonoracle.FileIndexOracle
    text = java.indexBytes(
        index_type,
        json.dumps(type_json),
        json.dumps(dict(options)),
        json.dumps(to_wire(list(values))),
    )
    return bytes.fromhex(str(text))


def decisions(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    leaves: Sequence[tuple[str, str, Sequence[Any]]],
) -> dict[str, dict[str, Any]]:
    """Per data file of the latest snapshot: ``{"remain": bool, "index": "embedded" | "file" |
    "none", "extra_files": [...]}``, Java's FileIndexPredicate verdict for the AND of
    ``leaves`` (``(op, field, literals)``)."""
    java = oracle._gateway.jvm.paimonoracle.FileIndexOracle
    wire = [[op, field, to_wire(list(lits))] for op, field, lits in leaves]
    out: dict[str, dict[str, Any]] = json.loads(
        java.decisions(os.path.abspath(os.fspath(warehouse)), db, table, json.dumps(wire))
    )
    return out
