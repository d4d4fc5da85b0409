"""Java Paimon's partition mark-done, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/MarkDoneOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle.
"""

from __future__ import annotations

import json
import os
from typing import Any

from java_oracle import JavaOracle


def mark_done(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str, partitions: str
) -> dict[str, Any]:
    """Java's MarkPartitionDoneProcedure work: ``{"paths": [...]}`` or ``{"error": ...}``."""
    java = oracle._gateway.jvm.paimonoracle.MarkDoneOracle
    result: dict[str, Any] = json.loads(java.markDone(os.fspath(warehouse), db, table, partitions))
    return result


def read_success_file(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str, partition: str
) -> tuple[int, int] | None:
    """(creationTime, modificationTime) of a partition's ``_SUCCESS`` as Java reads it."""
    java = oracle._gateway.jvm.paimonoracle.MarkDoneOracle
    out = json.loads(java.readSuccessFile(os.fspath(warehouse), db, table, partition))
    return None if out is None else (int(out["creationTime"]), int(out["modificationTime"]))
