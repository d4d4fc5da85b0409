"""Java Paimon's file procedures and a table's latest manifests, through the ``java_oracle``
fixture's JVM.

Calls ``tests/interop/java/FileProceduresOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle.
"""

from __future__ import annotations

import json
import os
from typing import Any

from java_oracle import JavaOracle


def _java(oracle: JavaOracle) -> Any:
    return oracle._gateway.jvm.paimonoracle.FileProceduresOracle


def purge_files(oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, t: str) -> None:
    _java(oracle).purgeFiles(os.fspath(warehouse), db, t)


def compact_manifest(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, t: str
) -> None:
    _java(oracle).compactManifest(os.fspath(warehouse), db, t)


def remove_unexisting_files(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, t: str, dry_run: bool
) -> list[str]:
    out: list[str] = json.loads(
        _java(oracle).removeUnexistingFiles(os.fspath(warehouse), db, t, dry_run)
    )
    return out


def describe(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, t: str
) -> dict[str, Any]:
    """Java's view: the latest snapshot's ``kind`` and ``id``, its ``base`` and ``delta``
    manifests (``{"added", "deleted"}`` each), and the ``tags``, ``branches``, ``consumers``."""
    out: dict[str, Any] = json.loads(_java(oracle).describe(os.fspath(warehouse), db, t))
    return out
