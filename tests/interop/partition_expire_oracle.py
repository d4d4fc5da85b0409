"""Java Paimon's expire_partitions procedure, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/PartitionExpireOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle.
"""

from __future__ import annotations

import json
import os
from typing import Any

from java_oracle import JavaOracle


def expire_partitions(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    expiration_time: str = "",
    timestamp_formatter: str = "",
    timestamp_pattern: str = "",
    expire_strategy: str = "",
    max_expires: int = -1,
    options: str = "",
) -> list[str]:
    """Java's result rows (empty strings and ``max_expires < 0``: not given)."""
    java = oracle._gateway.jvm.paimonoracle.PartitionExpireOracle
    rows: list[str] = json.loads(
        java.expirePartitions(
            os.fspath(warehouse),
            db,
            table,
            expiration_time,
            timestamp_formatter,
            timestamp_pattern,
            expire_strategy,
            max_expires,
            options,
        )
    )
    return rows


def extract_times(oracle: JavaOracle, cases: list[tuple[Any, ...]]) -> list[str]:
    """Java's PartitionTimeExtractor(pattern, formatter).extract(keys, values) per case
    ``(pattern, formatter, keys, values)``: LocalDateTime.toString, or ``"unparsed"``."""
    java = oracle._gateway.jvm.paimonoracle.PartitionExpireOracle
    out: list[str] = json.loads(java.extractTimes(json.dumps([list(c) for c in cases])))
    return out
