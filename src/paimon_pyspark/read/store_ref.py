"""Plain references to a table's store and to a read's filter, for other processes.

Ray pickles its read and write tasks, and users pickle tables and reads. What crosses the
boundary is the table's URI (with its scheme), its filesystem options, its name, the id of the
schema it reads with and its dynamic options, plus a filter as nested tuples of plain values;
the receiver reads that schema file back from the warehouse. No object read from the warehouse
(a schema, a snapshot, a DataFileMeta) is ever pickled: splits go as versioned bytes
(read/split_codec.py), commit messages as Java's CommitMessageSerializer bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paimon_pyspark.errors import (
    CorruptRecordError,
    CorruptTableError,
    PredicateError,
    TableNotExistError,
    describe,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.read.predicate import CompoundPredicate, LeafPredicate, Predicate
from paimon_pyspark.store.branches import branch_path, check_branch_path_name, normalize_branch
from paimon_pyspark.store.file_store import BRANCH_OPTION, FileStore
from paimon_pyspark.store.managers import SchemaManager
from paimon_pyspark.types.data_types import DataField

PlainPredicate = tuple[Any, ...]
"""``("leaf", function, field, literals)`` or ``("and" | "or", (child, ...))``."""


@dataclass(frozen=True)
class StoreRef:
    """A FileStore as plain values. It pickles as those values and unpickles as the store,
    reloaded from the warehouse (``load``), so it can stand for a store inside another
    object's ``__reduce__`` arguments."""

    uri: str
    fs_options: tuple[tuple[str, str], ...]
    name: str
    schema_id: int
    dynamic_options: tuple[tuple[str, str], ...]

    @staticmethod
    def of(store: FileStore) -> StoreRef:
        return StoreRef(
            store.file_io.describe(store.path),
            tuple(sorted(store.file_io.options.raw.items())),
            store.name,
            store.table_schema.id,
            tuple(sorted(store.dynamic_options.items())),
        )

    def load(self) -> FileStore:
        return load_store(
            self.uri, dict(self.fs_options), self.name, self.schema_id, dict(self.dynamic_options)
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return load_store, (
            self.uri,
            dict(self.fs_options),
            self.name,
            self.schema_id,
            dict(self.dynamic_options),
        )


def load_store(
    uri: str,
    fs_options: Mapping[str, str],
    name: str,
    schema_id: int,
    dynamic_options: Mapping[str, str],
) -> FileStore:
    """The store at ``uri`` with schema ``schema_id``, read from the warehouse now."""
    file_io, path = FileIO.for_uri(uri, fs_options)
    branch = normalize_branch(dynamic_options.get(BRANCH_OPTION))
    manager = SchemaManager(file_io, branch_path(path, check_branch_path_name(branch, name)))
    if not file_io.is_file(manager.schema_path(schema_id)):
        if not manager.list_ids():
            raise TableNotExistError(name, f"Its directory {uri} holds no schema any more.")
        raise CorruptTableError(
            f"Table '{name}': schema {schema_id} is not in {uri} any more; a table or read "
            "handed to another process is reloaded there with the schema it was opened with."
        )
    return FileStore(file_io, path, name, manager.schema(schema_id), dynamic_options)


def predicate_to_plain(predicate: Predicate | None) -> PlainPredicate | None:
    """``predicate`` as nested tuples of strings and its literals' Python values."""
    if predicate is None:
        return None
    if isinstance(predicate, LeafPredicate):
        return ("leaf", predicate.function, predicate.field, tuple(predicate.literals))
    if isinstance(predicate, CompoundPredicate):
        children = tuple(predicate_to_plain(c) for c in predicate.children)
        return (predicate.function, children)
    raise PredicateError(f"A filter of type {describe(predicate)} cannot be sent elsewhere.")


def predicate_from_plain(
    data: PlainPredicate | None, fields: Sequence[DataField], table: str
) -> Predicate | None:
    """The predicate ``predicate_to_plain`` described, typed by the table's ``fields`` (those
    of the schema it was built against, so its literals already have the field's type)."""
    if data is None:
        return None
    types = {f.name: f.type for f in fields}
    return _from_plain(data, types, table)


def _from_plain(data: PlainPredicate, types: Mapping[str, Any], table: str) -> Predicate:
    kind = data[0] if isinstance(data, tuple) and data else None
    if kind == "leaf" and len(data) == 4:
        _, function, field, literals = data
        if field not in types:
            raise PredicateError(
                f"Table '{table}': the filter names field '{field}', which the schema it was "
                f"reloaded with does not have (fields: {list(types)})."
            )
        return LeafPredicate(function, field, types[field], tuple(literals))
    if kind in ("and", "or") and len(data) == 2:
        children = tuple(_from_plain(c, types, table) for c in data[1])
        return CompoundPredicate(kind, children)
    raise CorruptRecordError(f"Table '{table}': {describe(data)} is not a plain filter.")
