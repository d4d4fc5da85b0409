"""Java Paimon's CoreOptions keys, and Java's output with and without an option, through the
``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/OptionsLedgerOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, TypedDict

from java_oracle import JavaOracle


class JavaKey(TypedDict):
    """One CoreOptions field as Java's reflection sees it."""

    key: str
    field: str
    type: str
    """Boolean, Integer, Long, Double, Float, String, Duration, MemorySize, Map or an enum's
    simple name."""
    enumValues: list[str]
    default: str | None
    fallbackKeys: list[str]
    immutable: bool
    excluded: bool


def java_keys(oracle: JavaOracle) -> list[JavaKey]:
    """Every ConfigOption of Java 1.4.2's CoreOptions, in declaration order."""
    text = oracle._gateway.jvm.paimonoracle.OptionsLedgerOracle.keys()
    out: list[JavaKey] = json.loads(text)
    return out


def fingerprints(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    shape: str,
    cases: Mapping[str, Mapping[str, str]],
) -> dict[str, dict[str, Any]]:
    """Per case name: Java's output for a table of ``shape`` ("pk": id INT key, 2 buckets;
    "append": bucket -1) created with the case's options and given the same three batch
    writes: ``rows`` read, data ``files`` ([level, prefix, extension, rows, extra files]),
    ``snapshots`` ([kind, total, delta, changelog records, index manifest?, changelog
    manifest?]), or Java's ``error``."""
    java = oracle._gateway.jvm.paimonoracle.OptionsLedgerOracle
    payload = [{"name": name, "options": dict(opts)} for name, opts in cases.items()]
    text = java.fingerprints(os.fspath(warehouse), "db", shape, json.dumps(payload))
    out: dict[str, dict[str, Any]] = json.loads(text)
    return out
