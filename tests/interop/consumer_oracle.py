"""Java Paimon's stream scan with a consumer id, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/ConsumerOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle.
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from java_oracle import JavaOracle


class JavaConsumed(NamedTuple):
    """The snapshot id of each plan Java's stream scan made, and its checkpoint (the next
    snapshot), which Java recorded in the consumer file."""

    snapshots: list[int]
    checkpoint: int | None


def consume(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    consumer_id: str,
    max_plans: int = 20,
) -> JavaConsumed:
    java = oracle._gateway.jvm.paimonoracle.ConsumerOracle
    out = json.loads(java.consume(os.fspath(warehouse), db, table, consumer_id, max_plans))
    return JavaConsumed(out["snapshots"], out["checkpoint"])
