"""Merging a write's data schema into the table schema: Java's SchemaMergingUtils.

``write.merge-schema`` (a Spark connector option) lets a write add columns and widen types:
the data's row type is merged into the latest table schema, the merged schema is published as
the next schema file before any data file is written, and the data is then cast to it. The
rules are Java's, by name and recursively:

- a table field the data lacks stays as it is; a data field the table lacks is appended,
  nullable, with fresh field ids (its nested fields numbered before it);
- two ROWs merge field by field (nested fields are added at the end of their row), ARRAY,
  MULTISET and MAP merge their element, key and value types;
- two DECIMALs of the same scale take the larger precision; a different scale is refused;
- other types change when Java's cast rules (``types/casts.py``) allow the old type to become
  the new one: implicitly, or explicitly with ``write.merge-schema.explicit-cast``; a shorter
  CHAR/VARCHAR/BINARY/VARBINARY length or a lower TIME/TIMESTAMP precision needs the explicit
  cast too;
- nullability always stays the table's.

A refusal raises :class:`SchemaChangeError` naming the table, the field's path, the old and the
new type, with Java's words.
"""

from __future__ import annotations

import dataclasses
from typing import NoReturn

from paimon_pyspark.errors import SchemaChangeError
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store import clock
from paimon_pyspark.types.casts import supports_cast
from paimon_pyspark.types.data_types import (
    ArrayType,
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
    VectorType,
)

MERGE_SCHEMA = "write.merge-schema"
"""Java's SparkConnectorOptions.MERGE_SCHEMA: merge the data's schema into the table's."""
EXPLICIT_CAST = "write.merge-schema.explicit-cast"
"""Java's SparkConnectorOptions.EXPLICIT_CAST: also allow the explicit casting rules."""


class _Ids:
    """Java's AtomicInteger of the highest field id."""

    def __init__(self, highest: int) -> None:
        self.highest = highest

    def next(self) -> int:
        self.highest += 1
        return self.highest


def merge_schemas(
    current: TableSchema, data: RowType, allow_explicit_cast: bool, table: str
) -> TableSchema:
    """The schema after merging ``data`` into ``current`` (id + 1), or ``current`` itself when
    nothing changes (a nullability difference alone changes nothing): Java's
    ``SchemaMergingUtils.mergeSchemas``."""
    ids = _Ids(current.highest_field_id)
    merged = merge_row(RowType(current.fields), data, ids, allow_explicit_cast, table)
    if merged.fields == current.fields:
        return current
    return dataclasses.replace(
        current,
        id=current.id + 1,
        fields=merged.fields,
        highest_field_id=ids.highest,
        time_millis=clock.now_millis(),
    )


def merge_row(
    base: RowType, update: RowType, ids: _Ids, allow_explicit_cast: bool, table: str
) -> RowType:
    merged = merge_type(base, update, ids, allow_explicit_cast, table, "")
    assert isinstance(merged, RowType)
    return merged


def merge_type(
    base0: DataType,
    update0: DataType,
    ids: _Ids,
    allow_explicit_cast: bool,
    table: str,
    path: str,
) -> DataType:
    """Java's ``SchemaMergingUtils.merge`` of one type; ``path`` names the field (``a.b``)."""
    base = base0.copy(True)
    update = update0.copy(True)
    if isinstance(base, RowType) and isinstance(update, RowType):
        return _merge_rows(base0, base, update, ids, allow_explicit_cast, table, path)
    if base == update:
        return base0
    if isinstance(base, MapType) and isinstance(update, MapType):
        key = merge_type(base.key, update.key, ids, allow_explicit_cast, table, f"{path}.key")
        value = merge_type(
            base.value, update.value, ids, allow_explicit_cast, table, f"{path}.value"
        )
        return MapType(key, value, nullable=base0.nullable)
    if isinstance(base, ArrayType) and isinstance(update, ArrayType):
        element = merge_type(
            base.element, update.element, ids, allow_explicit_cast, table, f"{path}.element"
        )
        return ArrayType(element, nullable=base0.nullable)
    if isinstance(base, MultisetType) and isinstance(update, MultisetType):
        element = merge_type(
            base.element, update.element, ids, allow_explicit_cast, table, f"{path}.element"
        )
        return MultisetType(element, nullable=base0.nullable)
    if isinstance(base, DecimalType) and isinstance(update, DecimalType):
        if base.scale != update.scale:
            _refuse(
                table,
                path,
                base,
                update,
                "Failed to merge decimal types with different scale: {} and {}",
            )
        precision = max(base.precision, update.precision)
        return DecimalType(precision, base.scale, nullable=base0.nullable)
    if not supports_cast(base, update, allow_explicit_cast):
        hint = not allow_explicit_cast and supports_cast(base, update, True)
        _refuse(table, path, base, update, "Failed to merge data types {} and {}", hint)
    old_length, new_length = _length(base), _length(update)
    if old_length is not None and new_length is not None:
        if not allow_explicit_cast and old_length > new_length:
            _refuse(
                table,
                path,
                base,
                update,
                "Failed to merge the target type that has a smaller length: {} and {}",
                True,
            )
        return update.copy(base0.nullable)
    old_precision, new_precision = _precision(base), _precision(update)
    if (
        old_precision is not None
        and new_precision is not None
        and not allow_explicit_cast
        and old_precision > new_precision
    ):
        _refuse(
            table,
            path,
            base,
            update,
            "Failed to merge the target type that has a lower precision: {} and {}",
            True,
        )
    return update.copy(base0.nullable)


def _merge_rows(
    base0: DataType,
    base: RowType,
    update: RowType,
    ids: _Ids,
    allow_explicit_cast: bool,
    table: str,
    path: str,
) -> RowType:
    """Fields of ``base`` first (merged where ``update`` has them), then those only
    ``update`` has, nullable and with fresh ids."""
    by_name: dict[str, DataField] = {}
    for f in update.fields:
        if f.name in by_name:  # Java's Collectors.toMap refuses a duplicate key
            raise SchemaChangeError(
                f"Table '{table}': the data to write has field '{_join(path, f.name)}' twice; "
                "write.merge-schema cannot merge it."
            )
        by_name[f.name] = f
    fields: list[DataField] = []
    for f in base.fields:
        given = by_name.get(f.name)
        if given is None:
            fields.append(f)
            continue
        merged = merge_type(
            f.type, given.type, ids, allow_explicit_cast, table, _join(path, f.name)
        )
        fields.append(dataclasses.replace(f, type=merged))
    known = {f.name for f in base.fields}
    for f in update.fields:
        if f.name in known:
            continue
        inner = _reassign_ids(f.type, ids)
        fields.append(
            DataField(ids.next(), f.name, inner.copy(True), f.description, f.default_value)
        )
    return RowType(tuple(fields), nullable=base0.nullable)


def _reassign_ids(t: DataType, ids: _Ids) -> DataType:
    """Java's ReassignFieldId: a nested field's own nested fields are numbered before it."""
    if isinstance(t, RowType):
        fields = []
        for f in t.fields:
            inner = _reassign_ids(f.type, ids)
            fields.append(DataField(ids.next(), f.name, inner, f.description, f.default_value))
        return RowType(tuple(fields), nullable=t.nullable)
    if isinstance(t, ArrayType):
        return ArrayType(_reassign_ids(t.element, ids), nullable=t.nullable)
    if isinstance(t, MultisetType):
        return MultisetType(_reassign_ids(t.element, ids), nullable=t.nullable)
    if isinstance(t, VectorType):
        return dataclasses.replace(t, element=_reassign_ids(t.element, ids))
    if isinstance(t, MapType):
        key = _reassign_ids(t.key, ids)
        return MapType(key, _reassign_ids(t.value, ids), nullable=t.nullable)
    return t


def _length(t: DataType) -> int | None:
    """Java's DataTypes.getLength."""
    if isinstance(t, CharType | BinaryType | VectorType):
        return t.length
    return None


def _precision(t: DataType) -> int | None:
    """Java's DataTypes.getPrecision."""
    if isinstance(t, DecimalType | TimeType | TimestampType):
        return t.precision
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _refuse(
    table: str, path: str, old: DataType, new: DataType, words: str, explicit: bool = False
) -> NoReturn:
    hint = f" Set '{EXPLICIT_CAST}' = 'true' to allow it." if explicit else ""
    raise SchemaChangeError(
        f"Table '{table}': {MERGE_SCHEMA} cannot change field '{path}' from {old} to {new}: "
        f"{words.format(old, new)}.{hint}"
    )
