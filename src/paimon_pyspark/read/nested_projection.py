"""Projection of ROW subfields, ``with_projection(["id", "info.name"])``, as pypaimon does it.

pypaimon (ReadBuilder.with_projection, utils/projection.NestedProjection) reads a dotted name
as a path into ROW columns when no top-level column has that exact name (a top-level name wins;
otherwise the longest top-level ROW column whose name and a dot begin it). The result column
is named by its path joined with ``_`` (``info_name``), a name taken already gets ``__0``,
``__1``, ... in turn, and it is nullable when any step of its path is. Unlike pypaimon, a name
that resolves to nothing raises PredicateError instead of being dropped, and a path through a
MAP or ARRAY is refused.

The read itself is the ordinary TableRead of the top-level columns the paths start from (the
filter and limit work as for any read); :class:`NestedTableRead` then takes the subfields out
of each file's (or merged bucket's) table with ``pyarrow.compute.struct_field``, which makes a
subfield of a null ROW null.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.errors import PredicateError, UnsupportedOperationError
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.store_ref import (
    PlainPredicate,
    StoreRef,
    predicate_from_plain,
    predicate_to_plain,
)
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.store.deletion_vectors import DeletionFile
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import DataField, RowType


@dataclass(frozen=True)
class ProjectedColumn:
    """One result column: its name, its path from a top-level column, and its field (the
    leaf's id and type, named as the result column)."""

    name: str
    path: tuple[str, ...]
    field: DataField


def resolve_projection(
    fields: Sequence[DataField], names: Sequence[str], table: str
) -> list[ProjectedColumn]:
    """The result columns of ``with_projection(names)`` (see the module docstring)."""
    by_name = {f.name: f for f in fields}
    out: list[ProjectedColumn] = []
    seen: set[str] = set()
    duplicates = 0
    for name in names:
        path = _path(by_name, name, table)
        leaf = by_name[path[0]]
        nullable = leaf.type.nullable
        for step in path[1:]:
            assert isinstance(leaf.type, RowType)
            leaf = leaf.type.field(step)
            nullable = nullable or leaf.type.nullable
        base = "_".join(path)
        final = base
        while final in seen:
            final = f"{base}__{duplicates}"
            duplicates += 1
        seen.add(final)
        field = replace(leaf, name=final, type=leaf.type.copy(nullable=nullable))
        out.append(ProjectedColumn(final, path, field))
    return out


def is_nested(names: Sequence[str], fields: Sequence[DataField]) -> bool:
    """Whether ``names`` asks for more than top-level columns."""
    top = {f.name for f in fields}
    return any(n not in top for n in names)


def _path(by_name: dict[str, DataField], name: str, table: str) -> tuple[str, ...]:
    if name in by_name:
        return (name,)
    where = f"Table '{table}': projected field '{name}'"
    parts = name.split(".")
    tops = [parts[0]] if parts[0] in by_name else []
    tops += sorted(
        (t for t in by_name if name.startswith(t + ".") and t != parts[0]),
        key=len,
        reverse=True,
    )
    if not tops:
        raise PredicateError(
            f"{where} does not exist (fields: {list(by_name)}); a ROW subfield is "
            "'column.subfield'."
        )
    top = tops[0]
    steps = name[len(top) + 1 :].split(".")
    current = by_name[top]
    for step in steps:
        if not isinstance(current.type, RowType):
            raise UnsupportedOperationError(
                f"{where}: '{current.name}' is of type {current.type}; only ROW subfields "
                "can be projected."
            )
        if step not in current.type.field_names:
            raise PredicateError(
                f"{where}: ROW '{current.name}' has no field '{step}' (fields: "
                f"{current.type.field_names})."
            )
        current = current.type.field(step)
    return (top, *steps)


class NestedTableRead(TableRead):
    """A TableRead whose result columns may be ROW subfields (ReadBuilder.with_projection)."""

    def __init__(
        self,
        table: FileStore,
        names: Sequence[str],
        predicate: Predicate | None,
        limit: int | None,
    ) -> None:
        columns = resolve_projection(table.fields, names, table.name)
        tops = list(dict.fromkeys(c.path[0] for c in columns))
        super().__init__(table, tops, predicate, limit)
        self.names = list(names)
        self.columns = columns
        self.output_fields = [c.field for c in columns]
        self.output_schema = pa.schema(
            [pa.field(f.name, to_arrow_type(f.type), f.type.nullable) for f in self.output_fields]
        )

    def _nest(self, table: pa.Table) -> pa.Table:
        arrays = []
        for c in self.columns:
            column = table.column(c.path[0])
            if len(c.path) > 1:
                column = pc.struct_field(column, list(c.path[1:]))
            arrays.append(column)
        return pa.Table.from_arrays(arrays, schema=self.output_schema)

    def _read_one(
        self,
        split: DataSplit,
        f: DataFileMeta,
        deletion: DeletionFile | DeletionVector | None,
        row_group: int | None = None,
        first_row: int = 0,
    ) -> pa.Table:
        return self._nest(super()._read_one(split, f, deletion, row_group, first_row))

    def _read_merged(self, split: DataSplit) -> pa.Table:
        return self._nest(super()._read_merged(split))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Plain values, as TableRead's: the store's reference, the projected names, the
        filter as tuples and the limit."""
        predicate = predicate_to_plain(self.predicate)
        return _reopen_nested, (StoreRef.of(self.table), self.names, predicate, self.limit)


def _reopen_nested(
    store: FileStore, names: list[str], predicate: PlainPredicate | None, limit: int | None
) -> NestedTableRead:
    restored = predicate_from_plain(predicate, store.fields, store.name)
    return NestedTableRead(store, names, restored, limit)
