"""Java Paimon's bucket functions and reads with row-tracking fields, through the
``java_oracle`` fixture's JVM (``tests/interop/java/OptionsBOracle.java``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from java_oracle import JavaOracle, TypeJson, to_wire


def buckets(
    oracle: JavaOracle,
    function: str,
    key_types: Sequence[TypeJson],
    rows: Iterable[Sequence[Any]],
    nums: Iterable[int],
) -> dict[int, list[int]] | str:
    """Java's bucket of each key row under ``bucket-function.type`` = ``function`` for each
    count, or Java's error message when it refuses the function, the key or a value."""
    out = json.loads(
        oracle._gateway.jvm.paimonoracle.OptionsBOracle.buckets(
            function,
            json.dumps(list(key_types)),
            json.dumps([to_wire(list(r)) for r in rows]),
            json.dumps(list(nums)),
        )
    )
    if "error" in out:
        return str(out["error"])
    return {int(n): b for n, b in out["buckets"].items()}


def read_fields(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    fields: Sequence[str],
) -> list[list[Any]]:
    """Java's batch read of these fields (``_ROW_ID``, ``_SEQUENCE_NUMBER`` allowed on a
    row-tracking table), rows in the oracle's canonical encoding, unsorted."""
    rows: list[list[Any]] = json.loads(
        oracle._gateway.jvm.paimonoracle.OptionsBOracle.readFields(
            os.fspath(warehouse), db, table, json.dumps(list(fields))
        )
    )
    return rows
