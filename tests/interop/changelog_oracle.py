"""Java Paimon's changelog producers and change reads, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/ChangelogOracle.java`` (built with the other oracle classes by
``make``) on the same py4j gateway as PaimonOracle. A change is ``[row kind, *values]`` with
the row kind as Java's short string (``"+I"``, ``"-U"``, ``"+U"``, ``"-D"``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from java_oracle import JavaOracle

Change = list[Any]


class JavaStream(NamedTuple):
    """Java's stream read: one ``(snapshot id, changes)`` per non-empty plan, or its refusal."""

    plans: list[tuple[int, list[Change]]] | None
    error: str | None


def write_commits(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    commits: Sequence[Sequence[Change]],
    options: Mapping[str, str] | None = None,
) -> list[int]:
    """Java's stream write of ``commits`` (each a list of changes), one commit identifier per
    commit, into the table copied with ``options`` (see ``ChangelogOracle.writeCommits``);
    the latest snapshot id after each."""
    java = oracle._gateway.jvm.paimonoracle.ChangelogOracle
    ids: list[int] = json.loads(
        java.writeCommits(
            os.fspath(warehouse),
            db,
            table,
            json.dumps([list(c) for c in commits]),
            json.dumps(dict(options or {})),
        )
    )
    return ids


def stream_changes(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    options: Mapping[str, str],
) -> JavaStream:
    """Java's ``newReadBuilder().newStreamScan()`` of the table copied with ``options``,
    planned until no next snapshot exists, each plan read with its row kinds."""
    java = oracle._gateway.jvm.paimonoracle.ChangelogOracle
    out = json.loads(java.streamChanges(os.fspath(warehouse), db, table, json.dumps(dict(options))))
    if out["plans"] is None:
        return JavaStream(None, out["error"])
    return JavaStream([(p["snapshot"], p["rows"]) for p in out["plans"]], None)


def snapshot_changelogs(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str
) -> list[dict[str, Any]]:
    """Per snapshot, Java's view: ``id``, ``commitKind``, ``commitIdentifier``,
    ``changelogManifestList``, ``changelogRecordCount`` and the ``changelogFiles`` its
    changelog manifests list."""
    java = oracle._gateway.jvm.paimonoracle.ChangelogOracle
    result: list[dict[str, Any]] = json.loads(
        java.snapshotChangelogs(os.fspath(warehouse), db, table)
    )
    return result


def by_key(changes: Sequence[Change], key_width: int = 1) -> list[Change]:
    """Changes in key order, each key's changes kept in their order (-U before its +U): the
    order of one snapshot's changes across buckets and files is not part of the contract."""
    return sorted((list(c) for c in changes), key=lambda c: [repr(v) for v in c[1 : 1 + key_width]])
