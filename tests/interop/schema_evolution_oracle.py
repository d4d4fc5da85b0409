"""Java Paimon's ALTER TABLE and RENAME TABLE, through the ``java_oracle`` fixture's JVM.

Calls the static methods of ``tests/interop/java/SchemaEvolutionOracle.java`` on the same py4j
gateway PaimonOracle uses. Our :class:`SchemaChange` objects go over as pypaimon's JSON wire
form, so one list of changes drives both engines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from java_oracle import JavaOracle

from paimon_pyspark.store.schema_change import (
    AddColumn,
    DropColumn,
    Move,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)


class JavaResult(NamedTuple):
    """Java's schema id after the call, or its refusal (``"ExceptionClass: message"``)."""

    schema_id: int | None
    error: str | None

    @property
    def message(self) -> str:
        """The refusal's message without the exception class."""
        assert self.error is not None, "Java accepted the change"
        return self.error.split(": ", 1)[1]


def _move(move: Move | None) -> dict[str, Any] | None:
    if move is None:
        return None
    return {
        "fieldName": move.field_name,
        "referenceFieldName": move.reference_field_name,
        "type": move.type.value,
    }


def change_json(change: SchemaChange) -> dict[str, Any]:
    """pypaimon's JSON for one change."""
    if isinstance(change, SetOption):
        return {"action": "setOption", "key": change.key, "value": change.value}
    if isinstance(change, RemoveOption):
        return {"action": "removeOption", "key": change.key}
    if isinstance(change, UpdateComment):
        return {"action": "updateComment", "comment": change.comment}
    if isinstance(change, AddColumn):
        return {
            "action": "addColumn",
            "fieldNames": list(change.field_names),
            "dataType": change.data_type.to_json(),
            "comment": change.comment,
            "move": _move(change.move),
        }
    if isinstance(change, RenameColumn):
        names = list(change.field_names)
        return {"action": "renameColumn", "fieldNames": names, "newName": change.new_name}
    if isinstance(change, DropColumn):
        return {"action": "dropColumn", "fieldNames": list(change.field_names)}
    if isinstance(change, UpdateColumnType):
        return {
            "action": "updateColumnType",
            "fieldNames": list(change.field_names),
            "newDataType": change.new_data_type.to_json(),
            "keepNullability": change.keep_nullability,
        }
    if isinstance(change, UpdateColumnNullability):
        return {
            "action": "updateColumnNullability",
            "fieldNames": list(change.field_names),
            "newNullability": change.new_nullability,
        }
    if isinstance(change, UpdateColumnComment):
        return {
            "action": "updateColumnComment",
            "fieldNames": list(change.field_names),
            "newComment": change.new_comment,
        }
    if isinstance(change, UpdateColumnPosition):
        return {"action": "updateColumnPosition", "move": _move(change.move)}
    raise TypeError(f"no JSON for {change!r}")


def _result(text: str) -> JavaResult:
    out = json.loads(text)
    if "error" in out:
        return JavaResult(None, str(out["error"]))
    return JavaResult(int(out.get("schemaId", -1)), None)


def java_alter_table(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    changes: Sequence[SchemaChange],
) -> JavaResult:
    """One Java ``Catalog.alterTable`` with ``changes``."""
    payload = json.dumps([change_json(c) for c in changes])
    java = oracle._gateway.jvm.paimonoracle.SchemaEvolutionOracle
    return _result(java.alterTable(os.fspath(warehouse), db, table, payload))


def java_rename_table(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    source: tuple[str, str],
    target: tuple[str, str],
) -> JavaResult:
    """One Java ``Catalog.renameTable``; ``schema_id`` is -1 when it succeeded."""
    java = oracle._gateway.jvm.paimonoracle.SchemaEvolutionOracle
    return _result(java.renameTable(os.fspath(warehouse), *source, *target))
