"""The snapshot file ``snapshot/snapshot-<id>`` and its JSON.

Mirrors org.apache.paimon.Snapshot (version 3). Fields are written in Java's order and optional
ones are omitted when unset, as Jackson does with NON_NULL inclusion.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec import json_format

CURRENT_VERSION = 3
BATCH_COMMIT_IDENTIFIER = 9223372036854775807

# (json key, attribute, required)
_FIELDS: list[tuple[str, str, bool]] = [
    ("version", "version", True),
    ("uuid", "uuid", False),
    ("id", "id", True),
    ("schemaId", "schema_id", True),
    ("baseManifestList", "base_manifest_list", True),
    ("baseManifestListSize", "base_manifest_list_size", False),
    ("deltaManifestList", "delta_manifest_list", True),
    ("deltaManifestListSize", "delta_manifest_list_size", False),
    ("changelogManifestList", "changelog_manifest_list", False),
    ("changelogManifestListSize", "changelog_manifest_list_size", False),
    ("indexManifest", "index_manifest", False),
    ("commitUser", "commit_user", True),
    ("commitIdentifier", "commit_identifier", True),
    ("commitKind", "commit_kind", True),
    ("timeMillis", "time_millis", True),
    ("totalRecordCount", "total_record_count", False),
    ("deltaRecordCount", "delta_record_count", False),
    ("changelogRecordCount", "changelog_record_count", False),
    ("watermark", "watermark", False),
    ("statistics", "statistics", False),
    ("properties", "properties", False),
    ("nextRowId", "next_row_id", False),
    ("operation", "operation", False),
]


@dataclass(frozen=True)
class Snapshot:
    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: str
    time_millis: int
    total_record_count: int | None = None
    delta_record_count: int | None = None
    base_manifest_list_size: int | None = None
    delta_manifest_list_size: int | None = None
    changelog_manifest_list: str | None = None
    changelog_manifest_list_size: int | None = None
    index_manifest: str | None = None
    changelog_record_count: int | None = None
    watermark: int | None = None
    statistics: str | None = None
    properties: dict[str, str] | None = field(default=None)
    next_row_id: int | None = None
    operation: str | None = None
    uuid: str | None = None
    version: int = CURRENT_VERSION

    def to_json(self) -> str:
        obj: dict[str, Any] = {}
        for key, attr, required in _FIELDS:
            value = getattr(self, attr)
            if value is None or (key == "properties" and not value):
                if required:
                    raise ValueError(f"snapshot field {key} must be set")
                continue
            obj[key] = value
        return json_format.dumps(obj)

    @staticmethod
    def from_json(text: str, where: str = "snapshot") -> Snapshot:
        try:
            obj = json.loads(text)
            kwargs = {attr: obj.get(key) for key, attr, _ in _FIELDS}
            for key, attr, required in _FIELDS:
                if required and kwargs[attr] is None and key != "version":
                    raise KeyError(key)
            kwargs["version"] = obj.get("version", CURRENT_VERSION)
            return Snapshot(**kwargs)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            raise CorruptTableError(f"Snapshot file {where} is not a valid snapshot: {e}") from e


COMMITTED_IDENTIFIERS_PROPERTY = "paimon-pyspark.committed-identifiers"
"""A snapshot property of ours: the last numbered commit identifier of each recent commit user.

Exactly once rests on knowing a commit user's last identifier; the user's own snapshots say it
only while they are not expired, and a writer that stays down longer than the retention would
commit its last checkpoint again. So every snapshot we write carries the map forward from its
base snapshot, updated with its own commit: the latest snapshot knows every recent user, however
short the retention. Java keeps ``properties`` as an opaque map and ignores this key.
"""

MAX_RECORDED_USERS = 100
"""Commit users the record keeps, most recent first; an older one falls back to its snapshots."""


def recorded_identifiers(snapshot: Snapshot) -> dict[str, int] | None:
    """The record of ``snapshot`` (a map of commit user to identifier), or None without one."""
    text = (snapshot.properties or {}).get(COMMITTED_IDENTIFIERS_PROPERTY)
    if text is None:
        return None
    try:
        obj = json.loads(text)
        if not isinstance(obj, dict):
            raise TypeError("not an object")
        record = {str(user): int(identifier) for user, identifier in obj.items()}
    except (TypeError, ValueError) as e:
        raise CorruptTableError(
            f"Snapshot {snapshot.id}: property {COMMITTED_IDENTIFIERS_PROPERTY} is not a map "
            f"of commit user to identifier: {e}"
        ) from e
    return record


def with_identifier(record: dict[str, int], commit_user: str, identifier: int) -> str:
    """``record`` with ``commit_user`` moved to the front at ``identifier``, as property text.

    Batch commits (Long.MAX_VALUE) are not numbered and are not recorded.
    """
    out = {commit_user: identifier} if identifier != BATCH_COMMIT_IDENTIFIER else {}
    for user, last in record.items():
        if len(out) >= MAX_RECORDED_USERS:
            break
        out.setdefault(user, last)
    return json.dumps(out, separators=(",", ":"))


COMMIT_LEDGER_PROPERTY = "paimon-pyspark.commit-ledger"
"""A snapshot property of ours: the id of the newest snapshot of each recent commit user.

A commit whose publish request failed must learn whether it landed, also after expiry deleted
the snapshot it published. The committed-identifiers record cannot say: a batch commit is not
numbered (Long.MAX_VALUE, possibly under a reused commit user), and one commit's APPEND and
COMPACT snapshots share their identifier. The id of the user's newest snapshot tells exactly
which attempt landed. ``since`` bounds what the ledger knows: every commit user with a snapshot
from id ``since`` up to this one is listed with its newest snapshot's id. It is carried forward
like the record; a walk back through snapshots without a ledger (written by Java) that meets an
expired snapshot, or a user dropped past :data:`MAX_RECORDED_USERS`, raises ``since``.
"""


@dataclass(frozen=True)
class CommitLedger:
    """What a :data:`COMMIT_LEDGER_PROPERTY` says: complete from snapshot ``since`` on."""

    since: int
    users: dict[str, int]

    def with_snapshot(self, commit_user: str, snapshot_id: int) -> CommitLedger:
        """This ledger once ``commit_user`` committed snapshot ``snapshot_id``: the most recent
        users kept, ``since`` raised past the newest snapshot of any user dropped."""
        users = {**self.users, commit_user: snapshot_id}
        ranked = sorted(users.items(), key=lambda item: item[1], reverse=True)
        kept, dropped = ranked[:MAX_RECORDED_USERS], ranked[MAX_RECORDED_USERS:]
        since = max([self.since] + [sid + 1 for _, sid in dropped])
        return CommitLedger(since, dict(kept))

    def to_text(self) -> str:
        return json.dumps({"since": self.since, "users": self.users}, separators=(",", ":"))


def commit_ledger(snapshot: Snapshot) -> CommitLedger | None:
    """The ledger ``snapshot`` carries, or None without one (a snapshot written by Java)."""
    text = (snapshot.properties or {}).get(COMMIT_LEDGER_PROPERTY)
    if text is None:
        return None
    try:
        obj = json.loads(text)
        users = obj["users"]
        if not isinstance(users, dict):
            raise TypeError("users is not an object")
        return CommitLedger(int(obj["since"]), {str(u): int(s) for u, s in users.items()})
    except (TypeError, ValueError, KeyError) as e:
        raise CorruptTableError(
            f"Snapshot {snapshot.id}: property {COMMIT_LEDGER_PROPERTY} is not a commit ledger "
            f"(since, users: commit user to snapshot id): {e}"
        ) from e
