"""Java Paimon's tag procedures by time and watermark, replaceTag / renameTag, and commits with
a watermark, through the ``java_oracle`` fixture's JVM (``tests/interop/java/
TagProceduresOracle.java``, built with the other oracle classes by ``make``)."""

from __future__ import annotations

import json
import os
from typing import Any

from java_oracle import JavaOracle

Path = str | os.PathLike[str]


def _java(oracle: JavaOracle) -> Any:
    return oracle._gateway.jvm.paimonoracle.TagProceduresOracle


def commit_with_watermarks(
    oracle: JavaOracle, warehouse: Path, db: str, table: str, batches: list[dict[str, Any]]
) -> int:
    """One Java commit per ``{"rows": [[...], ...], "watermark": n | None}``; the latest id."""
    java = _java(oracle)
    return int(java.commitWithWatermarks(os.fspath(warehouse), db, table, json.dumps(batches)))


def searches(
    oracle: JavaOracle, warehouse: Path, db: str, table: str, values: list[int]
) -> dict[str, list[int | str | None]]:
    """Java's laterOrEqualTimeMills, earlierOrEqualTimeMills, laterOrEqualWatermark and
    earlierOrEqualWatermark for each value: a snapshot id, None, or the exception's name."""
    out = _java(oracle).searches(os.fspath(warehouse), db, table, json.dumps(values))
    result: dict[str, list[int | str | None]] = json.loads(out)
    return result


def create_tag_from_timestamp(
    oracle: JavaOracle,
    warehouse: Path,
    db: str,
    table: str,
    tag: str,
    timestamp: int,
    retained: str | None = None,
) -> dict[str, Any]:
    java = _java(oracle)
    row: dict[str, Any] = json.loads(
        java.createTagFromTimestamp(os.fspath(warehouse), db, table, tag, timestamp, retained)
    )
    return row


def create_tag_from_watermark(
    oracle: JavaOracle,
    warehouse: Path,
    db: str,
    table: str,
    tag: str,
    watermark: int,
    retained: str | None = None,
) -> dict[str, Any]:
    java = _java(oracle)
    row: dict[str, Any] = json.loads(
        java.createTagFromWatermark(os.fspath(warehouse), db, table, tag, watermark, retained)
    )
    return row


def rollback_to_timestamp(
    oracle: JavaOracle, warehouse: Path, db: str, table: str, timestamp: int
) -> tuple[int, int]:
    previous, current = json.loads(
        _java(oracle).rollbackToTimestamp(os.fspath(warehouse), db, table, timestamp)
    )
    return int(previous), int(current)


def rollback_to_watermark(
    oracle: JavaOracle, warehouse: Path, db: str, table: str, watermark: int
) -> tuple[int, int]:
    previous, current = json.loads(
        _java(oracle).rollbackToWatermark(os.fspath(warehouse), db, table, watermark)
    )
    return int(previous), int(current)


def replace_tag(
    oracle: JavaOracle,
    warehouse: Path,
    db: str,
    table: str,
    tag: str,
    snapshot_id: int,
    retained: str | None = None,
) -> None:
    _java(oracle).replaceTag(os.fspath(warehouse), db, table, tag, snapshot_id, retained)


def rename_tag(
    oracle: JavaOracle, warehouse: Path, db: str, table: str, tag: str, target: str
) -> None:
    _java(oracle).renameTag(os.fspath(warehouse), db, table, tag, target)


def tags(oracle: JavaOracle, warehouse: Path, db: str, table: str) -> dict[str, dict[str, Any]]:
    """Tag name -> {"snapshot": id, "retained": "PT12H" | None}, as Java's TagManager reads."""
    out: dict[str, dict[str, Any]] = json.loads(_java(oracle).tags(os.fspath(warehouse), db, table))
    return out
