"""Schema changes of ``ALTER TABLE`` and the rules Java applies to them.

Mirrors org.apache.paimon.schema.SchemaChange (named as pypaimon's ``schema_change`` module
names it: ``SchemaChange.set_option``, ``SchemaChange.remove_option``) and the option part of
SchemaManager.generateTableSchema, checkAlterTableOption and checkResetTableOption of Java
Paimon 1.4.2. Only option changes are implemented; a column change is one more subclass of
:class:`SchemaChange` and one more branch in :func:`apply_changes`.

Java checks an option change only once the table has a snapshot: before the first commit any
option may be set or removed (the result must still pass the create-time validation, which the
caller runs on the generated schema).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paimon_pyspark import options as opts
from paimon_pyspark.errors import InvalidArgumentError, SchemaChangeError, describe
from paimon_pyspark.spec.table_schema import TableSchema

IMMUTABLE_OPTIONS = frozenset(
    {
        "bucket-key",
        "bucket-function.type",
        "data-file.path-directory",
        "merge-engine",
        "aggregation.remove-record-on-delete",
        "partial-update.remove-record-on-delete",
        "partial-update.remove-record-on-sequence-group",
        "rowkind.field",
        "primary-key",
        "partition",
        "force-lookup",
        "row-tracking.enabled",
        "data-evolution.enabled",
        "index-file-in-data-file-dir",
        "blob-descriptor-field",
        "blob-external-storage-path",
        "blob-external-storage-field",
        "pk-clustering-override",
    }
)
"""Java 1.4.2's CoreOptions.IMMUTABLE_OPTIONS: the options annotated ``@Immutable``. Once the
table has a snapshot, ALTER TABLE may neither set (even to the same value) nor remove them.
``bucket`` and ``sequence.field`` are not among them: Java changes both (``bucket`` with the
rules of :func:`check_alter_option`)."""

PATH = "path"
"""Never stored in a schema: the catalog refuses it at create, and Java's Flink catalog at
alter (SchemaManager.checkAlterTablePath)."""

_DYNAMIC_BUCKET = -1
_DELETION_VECTORS_ENABLED = "deletion-vectors.enabled"
_DELETION_VECTORS_MODIFIABLE = "deletion-vectors.modifiable"
_IGNORE_DELETE = "ignore-delete"
_IGNORE_UPDATE_BEFORE = "ignore-update-before"
_CLUSTERING_COLUMNS = "clustering.columns"
_PK_CLUSTERING_OVERRIDE = "pk-clustering-override"


class SchemaChange:
    """One change of an ``ALTER TABLE``; build it with the static methods."""

    @staticmethod
    def set_option(key: str, value: str | int | float | bool) -> SetOption:
        """Set ``key`` to ``value`` (ints and floats as their text, bools as true/false)."""
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, int | float):
            value = str(value)
        return SetOption(key, value)

    @staticmethod
    def remove_option(key: str) -> RemoveOption:
        """Remove ``key``, so the table falls back to the option's default."""
        return RemoveOption(key)


@dataclass(frozen=True)
class SetOption(SchemaChange):
    key: str
    value: str

    def __post_init__(self) -> None:
        _check_text("SchemaChange.set_option", "key", self.key)
        _check_text("SchemaChange.set_option", "value", self.value)


@dataclass(frozen=True)
class RemoveOption(SchemaChange):
    key: str

    def __post_init__(self) -> None:
        _check_text("SchemaChange.remove_option", "key", self.key)


def _check_text(call: str, arg: str, value: object) -> None:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{call}: {arg} must be a string, got {describe(value)}.")


def apply_changes(
    old: TableSchema,
    changes: Sequence[SchemaChange],
    has_snapshots: Callable[[], bool],
    table: str,
) -> TableSchema:
    """The next schema (id + 1, same fields and keys) with ``changes`` applied in order.

    As Java's generateTableSchema: each change is checked against the options of ``old`` (not
    those after the earlier changes of the same ALTER), and only when the table has a snapshot
    (``has_snapshots`` is asked at most once). Raises SchemaChangeError, naming the table, the
    option and the value, for a change Java refuses. The result is not validated here: the
    caller runs the create-time checks on it.
    """
    old_options = old.options
    new_options = dict(old.options)
    checked: bool | None = None

    def must_check() -> bool:
        nonlocal checked
        if checked is None:
            checked = has_snapshots()
        return checked

    for change in changes:
        if isinstance(change, SetOption):
            if change.key == PATH:
                _refuse_path(table, change.key, change.value)
            if must_check():
                check_alter_option(old_options, change.key, change.value, table)
            new_options[change.key] = change.value
        elif isinstance(change, RemoveOption):
            if change.key == PATH:
                _refuse_path(table, change.key, None)
            if must_check():
                check_reset_option(old_options, change.key, table)
            new_options.pop(change.key, None)
        else:
            raise InvalidArgumentError(
                f"Table '{table}': alter_table takes SchemaChange.set_option and "
                f"SchemaChange.remove_option changes, got {describe(change)}."
            )
    return dataclasses.replace(old, id=old.id + 1, options=new_options)


def check_alter_option(options: dict[str, str], key: str, new_value: str, table: str) -> None:
    """Java's checkAlterTableOption: may ``key`` be set to ``new_value`` on a table that has a
    snapshot and these ``options``?"""
    old_value = options.get(key)
    if key in IMMUTABLE_OPTIONS:
        raise SchemaChangeError(
            f"Table '{table}': option '{key}' cannot be changed once the table has a snapshot "
            f"(it is {_shown(old_value)}, the change asks for '{new_value}')."
        )
    if key == opts.BUCKET:
        old_bucket = (
            _DYNAMIC_BUCKET if old_value is None else opts.parse_java_int(old_value, key, table)
        )
        new_bucket = opts.parse_java_int(new_value, key, table)
        if old_bucket == _DYNAMIC_BUCKET:
            raise SchemaChangeError(
                f"Table '{table}': option 'bucket' cannot be changed to '{new_value}' when it "
                "is -1 (dynamic or unaware buckets); recreate the table instead."
            )
        if new_bucket == _DYNAMIC_BUCKET:
            raise SchemaChangeError(
                f"Table '{table}': option 'bucket' cannot be changed from {old_bucket} to -1 "
                "(dynamic or unaware buckets); recreate the table instead."
            )
    if key == _DELETION_VECTORS_ENABLED and not _java_true(
        options.get(_DELETION_VECTORS_MODIFIABLE, "false")
    ):
        old_dv = _java_true(old_value or "false")
        if old_dv != _java_true(new_value):
            raise SchemaChangeError(
                f"Table '{table}': option '{key}' cannot be changed from {_shown(old_value)} to "
                f"'{new_value}' unless '{_DELETION_VECTORS_MODIFIABLE}' is true (rows could be "
                "duplicated without a full compaction)."
            )
    if (
        key in (_IGNORE_DELETE, _IGNORE_UPDATE_BEFORE)
        and _java_true(old_value or "false")
        and not _java_true(new_value)
    ):
        raise SchemaChangeError(
            f"Table '{table}': option '{key}' cannot be changed from true to '{new_value}'."
        )
    if key == _CLUSTERING_COLUMNS and _PK_CLUSTERING_OVERRIDE in options:
        raise SchemaChangeError(
            f"Table '{table}': option '{key}' cannot be set to '{new_value}' while "
            f"'{_PK_CLUSTERING_OVERRIDE}' is set."
        )


def check_reset_option(options: dict[str, str], key: str, table: str) -> None:
    """Java's checkResetTableOption: may ``key`` be removed from a table that has a snapshot?"""
    if key in IMMUTABLE_OPTIONS:
        raise SchemaChangeError(
            f"Table '{table}': option '{key}' cannot be removed once the table has a snapshot "
            f"(it is {_shown(options.get(key))})."
        )
    if key == opts.BUCKET:
        raise SchemaChangeError(
            f"Table '{table}': option 'bucket' cannot be removed once the table has a snapshot "
            f"(it is {_shown(options.get(key))})."
        )
    if key == _CLUSTERING_COLUMNS and _PK_CLUSTERING_OVERRIDE in options:
        raise SchemaChangeError(
            f"Table '{table}': option '{key}' cannot be removed while "
            f"'{_PK_CLUSTERING_OVERRIDE}' is set."
        )


def _refuse_path(table: str, key: str, value: str | None) -> None:
    shown = "removed" if value is None else f"set to '{value}'"
    raise SchemaChangeError(
        f"Table '{table}': option '{key}' cannot be {shown}: a table's location is its "
        "directory in the warehouse."
    )


def _java_true(text: str) -> bool:
    """Java's Boolean.parseBoolean, which these checks use: anything but 'true' is false."""
    return text.lower() == "true"


def _shown(value: str | None) -> str:
    return "unset" if value is None else f"'{value}'"
