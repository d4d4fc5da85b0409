"""Java Paimon's automatic tags and tag expiry, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/TagAutoOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle. Every call answers the table's tags as
``{name: {"snapshot": id, "createTime": text | None, "timeRetainedMillis": n | None}}``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from java_oracle import JavaOracle


def _java(oracle: JavaOracle) -> Any:
    return oracle._gateway.jvm.paimonoracle.TagAutoOracle


def _options(options: Mapping[str, str] | None) -> str | None:
    return None if not options else json.dumps(dict(options))


def tags(oracle: JavaOracle, warehouse: str, db: str, table: str) -> dict[str, Any]:
    return dict(json.loads(_java(oracle).tags(os.fspath(warehouse), db, table)))


def trigger_auto_creation(
    oracle: JavaOracle, warehouse: str, db: str, table: str, options: Mapping[str, str] | None
) -> dict[str, Any]:
    """``newTagAutoManager().run()`` (TriggerTagAutomaticCreationProcedure)."""
    out = _java(oracle).triggerAutoCreation(os.fspath(warehouse), db, table, _options(options))
    return dict(json.loads(out))


def batch_create_tag(
    oracle: JavaOracle, warehouse: str, db: str, table: str, options: Mapping[str, str] | None
) -> dict[str, Any]:
    """``new TagBatchCreation(table).createTag()`` (Spark's write after its commit)."""
    out = _java(oracle).batchCreateTag(os.fspath(warehouse), db, table, _options(options))
    return dict(json.loads(out))


def expire_tags(
    oracle: JavaOracle, warehouse: str, db: str, table: str, older_than: str | None = None
) -> list[str]:
    """ExpireTagsProcedure's body: the names of the tags it deleted."""
    return list(json.loads(_java(oracle).expireTags(os.fspath(warehouse), db, table, older_than)))


def commit_with_watermarks(
    oracle: JavaOracle,
    warehouse: str,
    db: str,
    table: str,
    batches: Sequence[tuple[Sequence[Sequence[Any]], int]],
    options: Mapping[str, str] | None = None,
) -> int:
    """One Java streaming commit per (rows, watermark); the latest snapshot id."""
    payload = json.dumps([{"rows": [list(r) for r in rows], "watermark": w} for rows, w in batches])
    return int(
        _java(oracle).commitWithWatermarks(
            os.fspath(warehouse), db, table, payload, _options(options)
        )
    )
