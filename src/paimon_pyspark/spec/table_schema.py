"""The schema file ``schema/schema-<id>``: Java's TableSchema and its JSON.

Mirrors org.apache.paimon.schema.TableSchema and SchemaSerializer (version 3).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec import json_format
from paimon_pyspark.types.data_types import DataField, RowType

CURRENT_VERSION = 3


@dataclass(frozen=True)
class TableSchema:
    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    time_millis: int = 0
    version: int = CURRENT_VERSION

    @property
    def row_type(self) -> RowType:
        return RowType(self.fields)

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def partition_fields(self) -> list[DataField]:
        return [self.field(k) for k in self.partition_keys]

    def trimmed_primary_keys(self) -> list[str]:
        """Primary keys without partition keys: the key written into data files."""
        return [k for k in self.primary_keys if k not in self.partition_keys]

    def to_json(self) -> str:
        obj: dict[str, Any] = {
            "version": self.version,
            "id": self.id,
            "fields": [f.to_json() for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": list(self.partition_keys),
            "primaryKeys": list(self.primary_keys),
            "options": dict(self.options),
        }
        if self.comment is not None:
            obj["comment"] = self.comment
        obj["timeMillis"] = self.time_millis
        return json_format.dumps(obj)

    @staticmethod
    def from_json(json_str: str, where: str = "schema") -> TableSchema:
        try:
            obj = json.loads(json_str)
            version = int(obj.get("version", 1))
            options = {str(k): str(v) for k, v in obj["options"].items()}
            if version <= 1:
                options.setdefault("bucket", "1")
            if version <= 2:
                options.setdefault("file.format", "orc")
            return TableSchema(
                id=int(obj["id"]),
                fields=tuple(DataField.from_json(f) for f in obj["fields"]),
                highest_field_id=int(obj["highestFieldId"]),
                partition_keys=tuple(obj["partitionKeys"]),
                primary_keys=tuple(obj["primaryKeys"]),
                options=options,
                comment=obj.get("comment"),
                time_millis=int(obj.get("timeMillis", 0)),
                version=version,
            )
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            raise CorruptTableError(f"Schema file {where} is not a valid Paimon schema: {e}") from e
