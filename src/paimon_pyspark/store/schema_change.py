"""Schema changes of ``ALTER TABLE`` and the rules Java applies to them.

Mirrors org.apache.paimon.schema.SchemaChange (named as pypaimon's ``schema_change`` module
names it: ``SchemaChange.add_column``, ``drop_column``, ``rename_column``, ``update_column_type``,
``update_column_nullability``, ``update_column_comment``, ``update_column_position``,
``update_comment``, ``set_option``, ``remove_option``, and ``Move.first/after/before/last``) and
SchemaManager.generateTableSchema of Java Paimon 1.4.2: each change is applied in order to the
fields of the latest schema; a new column gets the id after the highest one ever handed out
(``highestFieldId``, which never goes down, so a dropped column's id is never reused); renames
also rename the column in the primary keys and in the options that name columns.

A refused change raises SchemaChangeError whose message holds Java's message word for word after
the table's name. A change addresses a top-level column (``"v"``), a field inside ROW columns
(``["r", "f"]``), or goes through an ARRAY's ``element`` or a MAP's ``value`` (``["a", "element",
"f"]``; ``["a", "element"]`` for the element type's type and nullability), Spark's names for
what Java's NestedColumnModifier steps over whatever its name; another name there raises
UnsupportedOperationError.

Java checks an option change only once the table has a snapshot: before the first commit any
option may be set or removed (the result must still pass the create-time validation, which the
caller runs on the generated schema).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn, TypeAlias

import pyarrow as pa

from paimon_pyspark import options as opts
from paimon_pyspark.errors import (
    ColumnAlreadyExistError,
    ColumnNotExistError,
    InvalidArgumentError,
    SchemaChangeError,
    UnsupportedOperationError,
    describe,
)
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.types.arrow import from_arrow_type
from paimon_pyspark.types.casts import has_cast_executor, supports_cast
from paimon_pyspark.types.data_types import (
    ArrayType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    VectorType,
)

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
_NULL_TO_NOT_NULL_DISABLED = "alter-column-null-to-not-null.disabled"
_EXPLICIT_CASTING_DISABLED = "disable-explicit-type-casting"
_ADD_BEFORE_PARTITION = "add-column-before-partition"
_SEQUENCE_FIELD = "sequence.field"
_FIELDS = "fields"


TypeLike: TypeAlias = "DataType | pa.DataType"
"""What a column change takes as a type: a pyarrow type or a Paimon type."""


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

    @staticmethod
    def update_comment(comment: str | None) -> UpdateComment:
        """Set (or with None clear) the table's comment."""
        return UpdateComment(comment)

    @staticmethod
    def add_column(
        field_name: str | Sequence[str],
        data_type: TypeLike,
        comment: str | None = None,
        move: Move | None = None,
    ) -> AddColumn:
        """Add a nullable column, at the end unless ``move`` places it (``Move.first(name)``,
        ``Move.after(name, other)``, ...). ``data_type`` is a pyarrow type (nullable) or a
        Paimon type from ``paimon_pyspark.types``."""
        names = _names("SchemaChange.add_column", field_name)
        return AddColumn(names, _paimon_type("SchemaChange.add_column", data_type), comment, move)

    @staticmethod
    def rename_column(field_name: str | Sequence[str], new_name: str) -> RenameColumn:
        return RenameColumn(_names("SchemaChange.rename_column", field_name), new_name)

    @staticmethod
    def drop_column(field_name: str | Sequence[str]) -> DropColumn:
        return DropColumn(_names("SchemaChange.drop_column", field_name))

    @staticmethod
    def update_column_type(
        field_name: str | Sequence[str], new_data_type: TypeLike, keep_nullability: bool = False
    ) -> UpdateColumnType:
        """Change a column's type where Java's cast rules allow it; ``keep_nullability`` keeps
        the column's nullability whatever ``new_data_type`` says."""
        call = "SchemaChange.update_column_type"
        return UpdateColumnType(
            _names(call, field_name), _paimon_type(call, new_data_type), bool(keep_nullability)
        )

    @staticmethod
    def update_column_nullability(
        field_name: str | Sequence[str], new_nullability: bool
    ) -> UpdateColumnNullability:
        names = _names("SchemaChange.update_column_nullability", field_name)
        return UpdateColumnNullability(names, bool(new_nullability))

    @staticmethod
    def update_column_comment(
        field_name: str | Sequence[str], comment: str | None
    ) -> UpdateColumnComment:
        return UpdateColumnComment(
            _names("SchemaChange.update_column_comment", field_name), comment
        )

    @staticmethod
    def update_column_position(move: Move) -> UpdateColumnPosition:
        """Move an existing column (``Move.first(name)``, ``Move.after(name, other)``, ...)."""
        return UpdateColumnPosition(move)


class MoveType(enum.Enum):
    FIRST = "FIRST"
    AFTER = "AFTER"
    BEFORE = "BEFORE"
    LAST = "LAST"


@dataclass(frozen=True)
class Move:
    """Where a column goes: Java's SchemaChange.Move."""

    field_name: str
    reference_field_name: str | None
    type: MoveType

    def __post_init__(self) -> None:
        _check_text("Move", "field_name", self.field_name)
        if self.type in (MoveType.AFTER, MoveType.BEFORE):
            _check_text("Move", "reference_field_name", self.reference_field_name)

    @staticmethod
    def first(field_name: str) -> Move:
        return Move(field_name, None, MoveType.FIRST)

    @staticmethod
    def after(field_name: str, reference_field_name: str) -> Move:
        return Move(field_name, reference_field_name, MoveType.AFTER)

    @staticmethod
    def before(field_name: str, reference_field_name: str) -> Move:
        return Move(field_name, reference_field_name, MoveType.BEFORE)

    @staticmethod
    def last(field_name: str) -> Move:
        return Move(field_name, None, MoveType.LAST)


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


@dataclass(frozen=True)
class UpdateComment(SchemaChange):
    comment: str | None

    def __post_init__(self) -> None:
        _check_optional_text("SchemaChange.update_comment", "comment", self.comment)


@dataclass(frozen=True)
class AddColumn(SchemaChange):
    field_names: tuple[str, ...]
    data_type: DataType
    comment: str | None = None
    move: Move | None = None

    def __post_init__(self) -> None:
        _check_optional_text("SchemaChange.add_column", "comment", self.comment)
        if self.move is not None and not isinstance(self.move, Move):
            raise InvalidArgumentError(
                f"SchemaChange.add_column: move must be a Move (Move.first, Move.after, ...), "
                f"got {describe(self.move)}."
            )


@dataclass(frozen=True)
class RenameColumn(SchemaChange):
    field_names: tuple[str, ...]
    new_name: str

    def __post_init__(self) -> None:
        _check_text("SchemaChange.rename_column", "new_name", self.new_name)


@dataclass(frozen=True)
class DropColumn(SchemaChange):
    field_names: tuple[str, ...]


@dataclass(frozen=True)
class UpdateColumnType(SchemaChange):
    field_names: tuple[str, ...]
    new_data_type: DataType
    keep_nullability: bool = False


@dataclass(frozen=True)
class UpdateColumnNullability(SchemaChange):
    field_names: tuple[str, ...]
    new_nullability: bool


@dataclass(frozen=True)
class UpdateColumnComment(SchemaChange):
    field_names: tuple[str, ...]
    new_comment: str | None

    def __post_init__(self) -> None:
        _check_optional_text("SchemaChange.update_column_comment", "comment", self.new_comment)


@dataclass(frozen=True)
class UpdateColumnPosition(SchemaChange):
    move: Move

    def __post_init__(self) -> None:
        if not isinstance(self.move, Move):
            raise InvalidArgumentError(
                "SchemaChange.update_column_position: move must be a Move (Move.first, "
                f"Move.after, ...), got {describe(self.move)}."
            )


def _check_text(call: str, arg: str, value: object) -> None:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{call}: {arg} must be a string, got {describe(value)}.")


def _check_optional_text(call: str, arg: str, value: object) -> None:
    if value is not None:
        _check_text(call, arg, value)


def _names(call: str, field_name: object) -> tuple[str, ...]:
    names = (field_name,) if isinstance(field_name, str) else field_name
    if (
        not isinstance(names, Sequence)
        or not names
        or not all(isinstance(n, str) and n for n in names)
    ):
        raise InvalidArgumentError(
            f"{call}: field_name must be a column name (or a non-empty list of names), got "
            f"{describe(field_name)}."
        )
    return tuple(names)


def _paimon_type(call: str, data_type: object) -> DataType:
    if isinstance(data_type, DataType):
        return data_type
    if isinstance(data_type, pa.DataType):
        return from_arrow_type(data_type, True, call)
    raise InvalidArgumentError(
        f"{call}: data_type must be a pyarrow type or a paimon_pyspark.types type, got "
        f"{describe(data_type)}."
    )


def apply_changes(
    old: TableSchema,
    changes: Sequence[SchemaChange],
    has_snapshots: Callable[[], bool],
    table: str,
) -> TableSchema:
    """The next schema (id + 1) with ``changes`` applied in order: Java's generateTableSchema.

    Option changes are checked against the options of ``old`` (not those after the earlier
    changes of the same ALTER), and only when the table has a snapshot (``has_snapshots`` is
    asked at most once). Raises SchemaChangeError, with Java's message after the table's name,
    for a change Java refuses. The result is not validated here: the caller runs the
    create-time checks on it.
    """
    old_options = old.options
    new_options = dict(old.options)
    checked: bool | None = None

    def must_check() -> bool:
        nonlocal checked
        if checked is None:
            checked = has_snapshots()
        return checked

    columns = _Columns(old, table)
    comment = old.comment
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
        elif isinstance(change, UpdateComment):
            comment = change.comment
        elif isinstance(change, _COLUMN_CHANGES):
            columns.apply(change)
        else:
            raise InvalidArgumentError(
                f"Table '{table}': alter_table takes SchemaChange changes (add_column, "
                f"set_option, ...), got {describe(change)}."
            )
    # Java maps each rename's first path name to its new name for the options (even for a
    # nested rename) but renames primary keys by top-level renames only
    renames = {c.field_names[0]: c.new_name for c in changes if isinstance(c, RenameColumn)}
    top_renames = {
        c.field_names[0]: c.new_name
        for c in changes
        if isinstance(c, RenameColumn) and len(c.field_names) == 1
    }
    new = dataclasses.replace(
        old,
        id=old.id + 1,
        fields=tuple(columns.fields),
        highest_field_id=columns.highest_field_id,
        primary_keys=tuple(top_renames.get(k, k) for k in old.primary_keys),
        options=_rename_in_options(new_options, renames),
        comment=comment,
    )
    if any(isinstance(c, _COLUMN_CHANGES) for c in changes):
        _check_named_columns(new, table)
    return new


def _check_named_columns(schema: TableSchema, table: str) -> None:
    """The checks by which Java refuses dropping a column that ``bucket-key`` or
    ``sequence.field`` names (TableSchema.originalBucketKeys, SchemaValidation), with its
    messages. Only after column changes: an option change keeps the create-time checks (and
    their OptionError), which run on the result afterwards in every case."""
    names = schema.field_names
    bucket_key = schema.options.get(opts.BUCKET_KEY, "")
    if bucket_key.strip():
        keys = bucket_key.split(",")
        if not set(keys) <= set(names):
            raise SchemaChangeError(
                f"Table '{table}': Field names {_java_list(names)} should contains all bucket "
                f"keys {_java_list(keys)}."
            )
    for field in schema.options.get(_SEQUENCE_FIELD, "").split(","):
        if field and field not in names:
            raise SchemaChangeError(
                f"Table '{table}': Sequence field: '{field}' can not be found in table schema."
            )


def _java_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]"


ColumnChange: TypeAlias = (
    "AddColumn | RenameColumn | DropColumn | UpdateColumnType | UpdateColumnNullability"
    " | UpdateColumnComment | UpdateColumnPosition"
)

_COLUMN_CHANGES = (
    AddColumn,
    RenameColumn,
    DropColumn,
    UpdateColumnType,
    UpdateColumnNullability,
    UpdateColumnComment,
    UpdateColumnPosition,
)


class _Columns:
    """The fields of a schema being altered, and Java's rules for changing them.

    A change names a column by its path: ``("v",)`` at the top, ``("r", "c")`` for field ``c``
    of ROW column ``r``, ``("a", "element", "c")`` through an ARRAY (Java's NestedColumnModifier;
    key and partition rules apply to top-level paths only, as in Java).
    """

    def __init__(self, old: TableSchema, table: str) -> None:
        self.old = old
        self.table = table
        self.fields = list(old.fields)
        self.highest_field_id = old.highest_field_id
        options = old.options
        self.null_to_not_null_disabled = _java_true(options.get(_NULL_TO_NOT_NULL_DISABLED, "true"))
        self.explicit_casting_disabled = _java_true(
            options.get(_EXPLICIT_CASTING_DISABLED, "false")
        )
        self.add_before_partition = _java_true(options.get(_ADD_BEFORE_PARTITION, "false"))

    def refuse(self, message: str) -> NoReturn:
        raise SchemaChangeError(f"Table '{self.table}': {message}")

    def missing(self, column: str, message: str | None = None) -> NoReturn:
        """pypaimon's ColumnNotExistException (a SchemaChangeError), with Java's message."""
        error = ColumnNotExistError(column, self.table)
        text = message or f"Column {column} does not exist in the {self.table} table."
        error.args = (f"Table '{self.table}': {text}",)
        raise error

    def present(self, column: str) -> NoReturn:
        """pypaimon's ColumnAlreadyExistException (a SchemaChangeError), with Java's message."""
        error = ColumnAlreadyExistError(column, self.table)
        text = f"Column {column} already exists in the {self.table} table."
        error.args = (f"Table '{self.table}': {text}",)
        raise error

    @staticmethod
    def index(fields: list[DataField], name: str) -> int | None:
        for i, f in enumerate(fields):
            if f.name == name:
                return i
        return None

    def must_exist(self, fields: list[DataField], names: Sequence[str], name: str) -> int:
        i = self.index(fields, name)
        if i is None:
            self.missing(".".join([*names[:-1], name]))
        return i

    def must_not_exist(self, fields: list[DataField], names: Sequence[str], name: str) -> None:
        if self.index(fields, name) is not None:
            self.present(".".join([*names[:-1], name]))

    def at(
        self,
        names: Sequence[str],
        action: Callable[[list[DataField]], None],
        on_type: Callable[[DataType], DataType] | None = None,
    ) -> None:
        """Run ``action`` on the field list holding the last name of ``names``; a path that
        ends at an ARRAY's ``element`` or a MAP's ``value`` runs ``on_type`` on that type."""
        self.fields = self._descend(self.fields, names, 0, action, on_type)

    def _descend(
        self,
        fields: list[DataField],
        names: Sequence[str],
        depth: int,
        action: Callable[[list[DataField]], None],
        on_type: Callable[[DataType], DataType] | None,
    ) -> list[DataField]:
        out = list(fields)
        if depth == len(names) - 1:
            action(out)
            return out
        i = self.index(out, names[depth])
        if i is None:
            self.missing(".".join(names[: depth + 1]))
        parent = out[i]
        t, k = parent.type, depth + 1
        wrappers: list[ArrayType | MapType] = []
        while isinstance(t, ArrayType | MapType) and k < len(names):
            part = "element" if isinstance(t, ArrayType) else "value"
            if names[k] != part:
                raise UnsupportedOperationError(
                    f"Table '{self.table}': column {'.'.join(names[:k])} is of type {t}; its "
                    f"nested path goes through '{part}', not '{names[k]}'."
                )
            wrappers.append(t)
            t = t.element if isinstance(t, ArrayType) else t.value
            k += 1
        if k == len(names) and wrappers:
            if on_type is None:
                raise UnsupportedOperationError(
                    f"Table '{self.table}': {'.'.join(names)} is the {names[-1]} type of "
                    f"{'.'.join(names[:-1])}, not a field: only its type and nullability change."
                )
            new_type = on_type(t)
        elif isinstance(t, RowType):
            inner = self._descend(list(t.fields), names, k, action, on_type)
            new_type = RowType(tuple(inner), nullable=t.nullable)
        else:
            raise UnsupportedOperationError(
                f"Table '{self.table}': column {'.'.join(names[:k])} is of type {t}; "
                "paimon_pyspark changes nested fields inside ROW types (also as an ARRAY's "
                "element or a MAP's value) only."
            )
        for wrapper in reversed(wrappers):
            if isinstance(wrapper, ArrayType):
                new_type = ArrayType(new_type, nullable=wrapper.nullable)
            else:
                new_type = MapType(wrapper.key, new_type, nullable=wrapper.nullable)
        out[i] = dataclasses.replace(parent, type=new_type)
        return out

    def apply(self, change: ColumnChange) -> None:
        if isinstance(change, AddColumn):
            self.add(change)
        elif isinstance(change, RenameColumn):
            self.rename(change.field_names, change.new_name)
        elif isinstance(change, DropColumn):
            self.drop(change.field_names)
        elif isinstance(change, UpdateColumnType):
            self.update_type(change)
        elif isinstance(change, UpdateColumnNullability):
            self.update_nullability(change.field_names, change.new_nullability)
        elif isinstance(change, UpdateColumnComment):
            names = change.field_names

            def comment(fields: list[DataField]) -> None:
                i = self.must_exist(fields, names, names[-1])
                fields[i] = dataclasses.replace(fields[i], description=change.new_comment)

            self.at(names, comment)
        elif isinstance(change, UpdateColumnPosition):
            self.move(change.move)

    def add(self, change: AddColumn) -> None:
        names = change.field_names
        name = names[-1]
        if not change.data_type.nullable:
            self.refuse(
                f"Column {'.'.join(names)} cannot specify NOT NULL in the {self.table} table."
            )
        self.highest_field_id += 1
        new = DataField(
            self.highest_field_id, name, self.reassign_ids(change.data_type), change.comment
        )
        move = change.move

        def add(fields: list[DataField]) -> None:
            self.must_not_exist(fields, names, name)
            if move is not None:
                if move.type is MoveType.FIRST:
                    fields.insert(0, new)
                elif move.type is MoveType.LAST:
                    fields.append(new)
                else:
                    ref = move.reference_field_name or ""
                    i = self.index(fields, ref)
                    if i is None:
                        self.missing(ref)
                    fields.insert(i + 1 if move.type is MoveType.AFTER else i, new)
            elif self.add_before_partition and self.old.partition_keys and len(names) == 1:
                first = next(
                    (i for i, f in enumerate(fields) if f.name in self.old.partition_keys),
                    len(fields),
                )
                fields.insert(first, new)
            else:
                fields.append(new)

        self.at(names, add)

    def reassign_ids(self, t: DataType) -> DataType:
        """Java's ReassignFieldId: nested fields get fresh ids, a field's nested fields
        before the field itself (RowType.Builder numbers a field after its type is built)."""
        if isinstance(t, RowType):
            fields = []
            for f in t.fields:
                inner = self.reassign_ids(f.type)
                self.highest_field_id += 1
                fields.append(
                    DataField(self.highest_field_id, f.name, inner, f.description, f.default_value)
                )
            return RowType(tuple(fields), nullable=t.nullable)
        if isinstance(t, ArrayType):
            return ArrayType(self.reassign_ids(t.element), nullable=t.nullable)
        if isinstance(t, MultisetType):
            return MultisetType(self.reassign_ids(t.element), nullable=t.nullable)
        if isinstance(t, VectorType):
            return dataclasses.replace(t, element=self.reassign_ids(t.element))
        if isinstance(t, MapType):
            key = self.reassign_ids(t.key)
            return MapType(key, self.reassign_ids(t.value), nullable=t.nullable)
        return t

    def rename(self, names: Sequence[str], new_name: str) -> None:
        name = names[-1]
        if len(names) == 1:
            if name in self.old.partition_keys:
                self.refuse(f"Cannot rename partition column: [{name}]")
            i = self.index(self.fields, name)
            if i is not None and self.fields[i].type.root == "BLOB":
                self.refuse(f"Cannot rename BLOB column: [{name}]")

        def rename(fields: list[DataField]) -> None:
            i = self.must_exist(fields, names, name)
            self.must_not_exist(fields, names, new_name)
            fields[i] = dataclasses.replace(fields[i], name=new_name)

        self.at(names, rename)

    def drop(self, names: Sequence[str]) -> None:
        name = names[-1]
        if len(names) == 1 and (name in self.old.partition_keys or name in self.old.primary_keys):
            self.refuse(f"Cannot drop partition key or primary key: [{name}]")

        def drop(fields: list[DataField]) -> None:
            del fields[self.must_exist(fields, names, name)]
            if not fields:
                self.refuse("Cannot drop all fields in table")

        self.at(names, drop)

    def check_nullability(self, old: bool, new: bool, label: str) -> None:
        if self.null_to_not_null_disabled and old and not new:
            self.refuse(
                f"Cannot update column type from nullable to non nullable for {label}. You can "
                f"set table configuration option '{_NULL_TO_NOT_NULL_DISABLED}' = 'false' to "
                "allow converting null columns to not null"
            )

    def update_type(self, change: UpdateColumnType) -> None:
        names = change.field_names
        name = names[-1]
        if len(names) == 1:
            i = self.index(self.fields, name)
            current = None if i is None else self.fields[i].type
            if change.keep_nullability and current == change.new_data_type.copy(
                nullable=current.nullable if current is not None else True
            ):
                # Spark's analyzer drops a type change to the column's own type (Hive's CHANGE
                # COLUMN repeats it) before Java's catalog, which would refuse it on a key
                return
            if name in self.old.partition_keys:
                self.refuse(f"Cannot update partition column: [{name}]")
            if name in self.old.primary_keys:
                self.refuse("Cannot update primary key")

        def retype(source: DataType) -> DataType:
            target = change.new_data_type
            if change.keep_nullability:
                target = target.copy(nullable=source.nullable)
            else:
                self.check_nullability(source.nullable, target.nullable, ".".join(names))
            allow_explicit = not self.explicit_casting_disabled
            if not (
                supports_cast(source, target, allow_explicit) and has_cast_executor(source, target)
            ):
                self.refuse(
                    f"Column type {name}[{source}] cannot be converted to {target} without "
                    "loosing information."
                )
            return target

        def update(fields: list[DataField]) -> None:
            i = self.must_exist(fields, names, name)
            fields[i] = dataclasses.replace(fields[i], type=retype(fields[i].type))

        self.at(names, update, retype)

    def update_nullability(self, names: Sequence[str], nullable: bool) -> None:
        if nullable and len(names) == 1 and names[0] in self.old.primary_keys:
            self.refuse("Cannot change nullability of primary key")

        def renull(source: DataType) -> DataType:
            self.check_nullability(source.nullable, nullable, ".".join(names))
            return source.copy(nullable=nullable)

        def update(fields: list[DataField]) -> None:
            i = self.must_exist(fields, names, names[-1])
            fields[i] = dataclasses.replace(fields[i], type=renull(fields[i].type))

        self.at(names, update, renull)

    def move(self, move: Move) -> None:
        """Java's SchemaManager.applyMove (top-level columns)."""
        fields = self.fields
        i = self.index(fields, move.field_name)
        if i is None:
            self.missing(move.field_name, f"Field name not found: {move.field_name}")

        def to(target: int) -> None:
            if target == i:
                self.refuse(f"Cannot move itself for column {move.field_name}")

        if move.type is MoveType.FIRST:
            to(0)
            fields.insert(0, fields.pop(i))
            return
        if move.type is MoveType.LAST:
            to(len(fields) - 1)
            fields.append(fields.pop(i))
            return
        ref = self.index(fields, move.reference_field_name or "")
        if ref is None:
            ref_name = move.reference_field_name or ""
            self.missing(ref_name, f"Reference field name not found: {ref_name}")
        to(ref)
        target = ref
        if move.type is MoveType.AFTER and i > ref:
            target += 1
        if move.type is MoveType.BEFORE and i < ref:
            target -= 1
        fields.insert(min(target, len(fields) - 1), fields.pop(i))


_RENAMED_FIELD_OPTIONS = ("aggregate-function", "ignore-retract", "distinct", "list-agg-delimiter")
_KEY_GROUP_SUFFIXES = ("sequence-group", "nested-key")


def _rename_in_options(options: dict[str, str], renames: dict[str, str]) -> dict[str, str]:
    """Java's applyRenameColumnsToOptions: options that name a renamed column follow it."""
    if not renames:
        return options
    out = dict(options)

    def renamed(text: str) -> str:
        return ",".join(renames.get(c, c) for c in text.split(","))

    for key in (opts.BUCKET_KEY, _SEQUENCE_FIELD):
        value = options.get(key)
        if value is not None and value.strip():
            out[key] = renamed(value)
    for old_name, new_name in renames.items():
        for suffix in _RENAMED_FIELD_OPTIONS:
            key = f"{_FIELDS}.{old_name}.{suffix}"
            if key in out:
                out[f"{_FIELDS}.{new_name}.{suffix}"] = out.pop(key)
    for key in options:
        if not key.startswith(_FIELDS):
            continue
        group = next((s for s in _KEY_GROUP_SUFFIXES if key.endswith(s)), None)
        if group is None or key not in out:
            continue
        names = key[len(_FIELDS) + 1 : len(key) - len(group) - 1]
        value = out.pop(key)
        out[f"{_FIELDS}.{renamed(names)}.{group}"] = renamed(value)
    return out


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
