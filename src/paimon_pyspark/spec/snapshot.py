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
