"""Read-only system tables of a table: ``t$snapshots``, ``$schemas``, ``$options``, ``$files``,
``$manifests``, ``$partitions``, ``$buckets``, ``$tags``, ``$table_indexes`` and ``$ro``.

Mirrors org.apache.paimon.table.system.{SnapshotsTable, SchemasTable, OptionsTable, FilesTable,
ManifestsTable, PartitionsTable, BucketsTable, TagsTable, TableIndexesTable,
ReadOptimizedTable} and
SystemTableLoader (Java 1.4.2):
the same names, columns, types and nullability, and each value rendered as Java renders it.
Java turns values into text in three ways, kept apart here because they differ:

* a partition as the cast of its row to STRING (``{2024-01-01, 3}``; ``$partitions`` instead
  joins ``k=v`` with ``/``): dates in ISO form, timestamps ``yyyy-MM-dd HH:mm:ss[.f]``;
* ``$files``' keys and stats as the ``toString`` of Java's internal values (``Arrays.toString``,
  ``TreeMap.toString``): a DATE is its epoch day, a TIMESTAMP a ``LocalDateTime``, a double
  ``Double.toString``;
* JSON (``$schemas``) compact, as Jackson writes it; option maps keep Java's ``HashMap`` order,
  since Java's schema reader puts them in one.

Times Java shows as local wall-clock time (commit times, update times) use this process's time
zone, as Java uses the JVM's. Every table reads the latest snapshot; ``$files`` and
``$partitions`` skip postpone-bucket files (bucket -2), which Java's batch scan of a postpone
table leaves out, while ``$buckets`` (Java's snapshot reader, no such filter) shows them.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import os
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import pyarrow as pa

from paimon_pyspark.errors import (
    CorruptTableError,
    IdentifierError,
    InvalidArgumentError,
    PredicateError,
    UnsupportedOperationError,
    describe,
)
from paimon_pyspark.maintenance import branches
from paimon_pyspark.read.changes import AUDIT_LOG, CHANGE_TABLES, ROWKIND, ChangesRead
from paimon_pyspark.read.fallback_read import partition_sources
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder, check_fields
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.stream_scan import StreamReadBuilder, StreamTableRead, StreamTableScan
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.java_hash import string_hash
from paimon_pyspark.spec.java_hashmap import JavaHashMap
from paimon_pyspark.spec.manifest import ManifestEntry, ManifestFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.branches import branch_path
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.manifest_io import merge_entries
from paimon_pyspark.store.paths import bucket_dir
from paimon_pyspark.types.arrow import to_arrow_schema
from paimon_pyspark.types.data_types import (
    BIGINT,
    INT,
    STRING,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    RowType,
    TimestampType,
    TimeType,
)

# --- the tables' row types (Java's TABLE_TYPE constants) -------------------------------------


def _f(i: int, name: str, t: DataType, nullable: bool = True) -> DataField:
    return DataField(i, name, t.copy(nullable=nullable))


def _fields(*specs: tuple[str, DataType, bool]) -> tuple[DataField, ...]:
    return tuple(_f(i, n, t, nullable) for i, (n, t, nullable) in enumerate(specs))


_TS3 = TimestampType(precision=3)

SNAPSHOTS_FIELDS = _fields(
    ("snapshot_id", BIGINT(), False),
    ("schema_id", BIGINT(), False),
    ("commit_user", STRING(), False),
    ("commit_identifier", BIGINT(), False),
    ("commit_kind", STRING(), False),
    ("commit_time", _TS3, False),
    ("base_manifest_list", STRING(), False),
    ("delta_manifest_list", STRING(), False),
    ("changelog_manifest_list", STRING(), True),
    ("total_record_count", BIGINT(), True),
    ("delta_record_count", BIGINT(), True),
    ("changelog_record_count", BIGINT(), True),
    ("watermark", BIGINT(), True),
    ("next_row_id", BIGINT(), True),
)
SCHEMAS_FIELDS = _fields(
    ("schema_id", BIGINT(), False),
    ("fields", STRING(), False),
    ("partition_keys", STRING(), False),
    ("primary_keys", STRING(), False),
    ("options", STRING(), False),
    ("comment", STRING(), True),
    ("update_time", _TS3, False),
)
OPTIONS_FIELDS = _fields(("key", STRING(), False), ("value", STRING(), False))
FILES_FIELDS = _fields(
    ("partition", STRING(), True),
    ("bucket", INT(), False),
    ("file_path", STRING(), False),
    ("file_format", STRING(), False),
    ("schema_id", BIGINT(), False),
    ("level", INT(), False),
    ("record_count", BIGINT(), False),
    ("file_size_in_bytes", BIGINT(), False),
    ("min_key", STRING(), True),
    ("max_key", STRING(), True),
    ("null_value_counts", STRING(), False),
    ("min_value_stats", STRING(), False),
    ("max_value_stats", STRING(), False),
    ("min_sequence_number", BIGINT(), True),
    ("max_sequence_number", BIGINT(), True),
    ("creation_time", _TS3, True),
    ("deleteRowCount", BIGINT(), True),
    ("file_source", STRING(), True),
    ("first_row_id", BIGINT(), True),
    ("write_cols", ArrayType(element=STRING()), True),
)
MANIFESTS_FIELDS = _fields(
    ("file_name", STRING(), False),
    ("file_size", BIGINT(), False),
    ("num_added_files", BIGINT(), False),
    ("num_deleted_files", BIGINT(), False),
    ("schema_id", BIGINT(), False),
    ("min_partition_stats", STRING(), True),
    ("max_partition_stats", STRING(), True),
    ("min_row_id", BIGINT(), True),
    ("max_row_id", BIGINT(), True),
)
PARTITIONS_FIELDS = _fields(
    ("partition", STRING(), True),
    ("record_count", BIGINT(), False),
    ("file_size_in_bytes", BIGINT(), False),
    ("file_count", BIGINT(), False),
    ("last_update_time", _TS3, True),
    ("created_at", _TS3, True),
    ("created_by", STRING(), True),
    ("updated_by", STRING(), True),
    ("options", STRING(), True),
)
BUCKETS_FIELDS = _fields(
    ("partition", STRING(), True),
    ("bucket", INT(), False),
    ("record_count", BIGINT(), False),
    ("file_size_in_bytes", BIGINT(), False),
    ("file_count", BIGINT(), False),
    ("last_update_time", _TS3, True),
)
TAGS_FIELDS = _fields(
    ("tag_name", STRING(), False),
    ("snapshot_id", BIGINT(), False),
    ("schema_id", BIGINT(), False),
    ("commit_time", _TS3, False),
    ("record_count", BIGINT(), True),
    ("create_time", _TS3, True),
    ("time_retained", STRING(), True),
)
CONSUMERS_FIELDS = _fields(("consumer_id", STRING(), False), ("next_snapshot_id", BIGINT(), False))
BRANCHES_FIELDS = _fields(("branch_name", STRING(), False), ("create_time", _TS3, False))
DV_RANGE_TYPE = RowType(
    fields=_fields(
        ("f0", STRING(), False),
        ("f1", INT(), False),
        ("f2", INT(), False),
        ("_CARDINALITY", BIGINT(), True),
    )
)
"""Java's DeletionVectorMeta.SCHEMA: data file name, offset, length, cardinality."""
TABLE_INDEXES_FIELDS = _fields(
    ("partition", STRING(), True),
    ("bucket", INT(), False),
    ("index_type", STRING(), False),
    ("file_name", STRING(), False),
    ("file_size", BIGINT(), False),
    ("row_count", BIGINT(), False),
    ("dv_ranges", ArrayType(element=DV_RANGE_TYPE), True),
)

_TABLES: dict[str, tuple[tuple[DataField, ...], tuple[str, ...]]] = {
    "snapshots": (SNAPSHOTS_FIELDS, ("snapshot_id",)),
    "schemas": (SCHEMAS_FIELDS, ("schema_id",)),
    "options": (OPTIONS_FIELDS, ("key",)),
    "files": (FILES_FIELDS, ("file_path",)),
    "manifests": (MANIFESTS_FIELDS, ("file_name",)),
    "partitions": (PARTITIONS_FIELDS, ("partition",)),
    "buckets": (BUCKETS_FIELDS, ("partition", "bucket")),
    "tags": (TAGS_FIELDS, ("tag_name",)),
    "consumers": (CONSUMERS_FIELDS, ("consumer_id",)),
    "branches": (BRANCHES_FIELDS, ("branch_name",)),
    "table_indexes": (TABLE_INDEXES_FIELDS, ("partition", "bucket", "index_type", "file_name")),
}
_ROWKIND_ID = 2**31 - 1 - 4
"""Java's SpecialFields.ROW_KIND field id (Integer.MAX_VALUE - 4)."""
READ_OPTIMIZED = "ro"
"""``$ro``: the table's own columns, read from its top level (``_read_optimized``)."""
SYSTEM_TABLES = (*_TABLES, READ_OPTIMIZED, *CHANGE_TABLES)
"""The system tables served here, by the name after ``$``."""

JAVA_ONLY_SYSTEM_TABLES = (
    "file_key_ranges",
    "aggregation_fields",
    "statistics",
    "row_tracking",
)
"""Java 1.4.2's other system tables (SystemTableLoader), refused by name."""


def load_system_table(data_table: FileStore, system_name: str) -> SystemTable:
    """The system table ``system_name`` (case-insensitive, as Java's loader) of ``data_table``;
    IdentifierError naming it when it is not served here."""
    kind = system_name.lower()
    if kind not in SYSTEM_TABLES:
        full = f"{data_table.name}${system_name}"
        known = ", ".join(SYSTEM_TABLES)
        if kind in JAVA_ONLY_SYSTEM_TABLES:
            raise IdentifierError(
                f"Table '{full}': Java Paimon's system table '{kind}' is not supported by "
                f"paimon_pyspark (supported: {known})."
            )
        raise IdentifierError(
            f"Table '{full}': '{system_name}' is not a system table (supported: {known})."
        )
    return SystemTable(data_table, kind)


# --- the table and its read API --------------------------------------------------------------


@dataclass(frozen=True)
class SystemSplit:
    """The one split of a system table (Java's SingletonSplit): its rows are computed whole."""

    table: str


@dataclass(frozen=True)
class SystemPlan:
    _splits: tuple[SystemSplit, ...]

    def splits(self) -> list[SystemSplit]:
        return list(self._splits)


class SystemTableScan:
    def __init__(self, table: SystemTable) -> None:
        self._table = table

    def plan(self) -> SystemPlan:
        return SystemPlan((SystemSplit(self._table.name),))


class SystemTableRead:
    def __init__(
        self,
        table: SystemTable,
        projection: list[str] | None,
        predicate: Predicate | None,
        limit: int | None,
    ) -> None:
        self._table = table
        self._projection = projection
        self._predicate = predicate
        self._limit = limit

    def to_arrow(self, splits: Sequence[SystemSplit]) -> pa.Table:
        if isinstance(splits, str | bytes) or not isinstance(splits, Sequence):
            raise InvalidArgumentError(
                f"Table '{self._table.name}': SystemTableRead.to_arrow(splits) takes the list "
                f"from new_scan().plan().splits(), got {describe(splits)}."
            )
        for s in splits:
            if not isinstance(s, SystemSplit) or s.table != self._table.name:
                raise InvalidArgumentError(
                    f"Table '{self._table.name}': SystemTableRead.to_arrow(splits) got "
                    f"{describe(s)}, which is not a split of this system table."
                )
        parts = [self._table.to_arrow() for _ in splits]
        result = pa.concat_tables(parts) if parts else self._table.arrow_schema.empty_table()
        if self._predicate is not None:
            result = result.filter(self._predicate.to_arrow_expression())
        if self._projection is not None:
            result = result.select(self._projection)
        if self._limit is not None:
            result = result.slice(0, self._limit)
        return result


class SystemReadBuilder:
    """Projection, filter (applied to the computed rows) and limit, as ``ReadBuilder``."""

    def __init__(self, table: SystemTable) -> None:
        self._table = table
        self._projection: list[str] | None = None
        self._predicate: Predicate | None = None
        self._limit: int | None = None

    def with_projection(self, projection: list[str]) -> SystemReadBuilder:
        if isinstance(projection, str | bytes) or not isinstance(projection, list | tuple):
            raise InvalidArgumentError(
                f"Table '{self._table.name}': with_projection(projection) takes a list of "
                f"field names, got {describe(projection)}."
            )
        unknown = [n for n in projection if n not in self._table.field_names]
        if unknown:
            raise PredicateError(
                f"Table '{self._table.name}': projected fields {unknown} do not exist "
                f"(fields: {self._table.field_names})."
            )
        self._projection = list(projection)
        return self

    def with_filter(self, predicate: Predicate | None) -> SystemReadBuilder:
        if predicate is not None and not isinstance(predicate, Predicate):
            raise InvalidArgumentError(
                f"Table '{self._table.name}': with_filter(predicate) takes a Predicate from "
                f"new_predicate_builder(), or None, got {describe(predicate)}."
            )
        if predicate is not None:
            check_fields(predicate, self._table.fields, self._table.name)
        self._predicate = predicate
        return self

    def with_limit(self, limit: int | None) -> SystemReadBuilder:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise InvalidArgumentError(
                f"Table '{self._table.name}': with_limit(limit) takes an int >= 0, or None, "
                f"got {describe(limit)}."
            )
        if limit is not None and limit < 0:
            raise InvalidArgumentError(
                f"Table '{self._table.name}': with_limit(limit) takes an int >= 0, got {limit}."
            )
        self._limit = limit
        return self

    def new_predicate_builder(self) -> PredicateBuilder:
        return PredicateBuilder(RowType(self._table.fields), self._table.name)

    def new_scan(self) -> SystemTableScan:
        return SystemTableScan(self._table)

    def new_read(self) -> SystemTableRead:
        return SystemTableRead(self._table, self._projection, self._predicate, self._limit)


class SystemTable:
    """A read-only view of one table's metadata, computed when read (Java's ReadonlyTable)."""

    def __init__(self, data_table: FileStore, kind: str) -> None:
        self._store = data_table
        self.kind = kind
        if kind == READ_OPTIMIZED:
            self.fields, keys = data_table.fields, tuple(data_table.primary_keys)
        elif kind in CHANGE_TABLES:
            self.fields, keys = change_fields(data_table, kind), ()
        else:
            self.fields, keys = _TABLES[kind]
        self.primary_keys: list[str] = list(keys)
        self.name = f"{data_table.name}${kind}"

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def data_store(self) -> FileStore:
        """The data table this system table reads."""
        return self._store

    @property
    def partition_keys(self) -> list[str]:
        return []

    @property
    def arrow_schema(self) -> pa.Schema:
        return to_arrow_schema(self.fields)

    def to_arrow(self) -> pa.Table:
        """Every row, computed now from the table's metadata files (``$ro``: read now)."""
        if self.kind == READ_OPTIMIZED:
            return _read_optimized(self._store)
        if self.kind in CHANGE_TABLES:
            return _changes(self._store, self.kind)
        rows = _ROWS[self.kind](self._store)
        columns = {f.name: [r[i] for r in rows] for i, f in enumerate(self.fields)}
        return pa.Table.from_pydict(columns, schema=self.arrow_schema)

    def new_read_builder(self) -> SystemReadBuilder:
        return SystemReadBuilder(self)

    def new_stream_read_builder(self) -> ChangesStreamReadBuilder:
        """A stream read of ``$audit_log`` or ``$binlog`` (Java's AuditLogTable stream scan):
        the data table's stream, each row with its ``rowkind``; other system tables have
        none."""
        if self.kind not in CHANGE_TABLES:
            raise UnsupportedOperationError(
                f"Table '{self.name}': only '$audit_log' and '$binlog' can be read as a "
                "stream, as in Java."
            )
        return ChangesStreamReadBuilder(self)

    def copy(self, dynamic_options: Mapping[str, str]) -> SystemTable:
        """The same system table over the data table with these options (Java's copy); the
        data table checks them as ``FileStoreTable.copy`` does. Rows still come from the latest
        snapshot: time travel (``scan.snapshot-id``) is not applied to system tables yet."""
        if not isinstance(dynamic_options, Mapping):
            raise InvalidArgumentError(
                f"Table '{self.name}': copy(dynamic_options) takes a mapping of option key to "
                f"value, got {describe(dynamic_options)}."
            )
        return SystemTable(self._store.copy(dynamic_options), self.kind)

    def new_batch_write_builder(self, commit_user: str | None = None) -> NoReturn:
        self._read_only("written")

    def delete(self, predicate: Predicate | None, commit_user: str | None = None) -> NoReturn:
        self._read_only("deleted from")

    def _read_only(self, action: str) -> NoReturn:
        raise UnsupportedOperationError(
            f"Table '{self.name}': a system table is read-only and cannot be {action}."
        )


# --- $audit_log and $binlog ------------------------------------------------------------------


def change_fields(store: FileStore, kind: str) -> tuple[DataField, ...]:
    """Java's AuditLogTable / BinlogTable row type: ``rowkind`` (STRING), then the table's
    columns, each an ARRAY of its nullable type in ``$binlog``."""
    rowkind = DataField(_ROWKIND_ID, ROWKIND, STRING())
    if kind == AUDIT_LOG:
        return (rowkind, *store.fields)
    arrays = (
        DataField(f.id, f.name, ArrayType(element=f.type.copy(nullable=True)), f.description)
        for f in store.fields
    )
    return (rowkind, *arrays)


def _changes(store: FileStore, kind: str) -> pa.Table:
    """A batch read of ``$audit_log`` / ``$binlog``: the data table's batch plan (its
    incremental options too), merged keeping deletes, each row's kind in ``rowkind``
    (read/changes.py)."""
    read = ChangesRead(store, None, None, None, ROWKIND, True, kind)
    return read.to_arrow(ReadBuilder(store).new_scan().plan().splits())


class ChangesStreamReadBuilder:
    """The StreamReadBuilder of ``$audit_log`` / ``$binlog``: the data table's stream scan,
    read with ``rowkind`` first. A filter may name the data columns only (it is pushed to the
    data table, as Java's AuditLogTable drops the ``rowkind`` conjuncts from its scan)."""

    def __init__(self, table: SystemTable) -> None:
        self._table = table
        self._data = StreamReadBuilder(table._store)
        self._projection: list[str] | None = None
        self._predicate: Predicate | None = None

    def with_projection(self, projection: list[str]) -> ChangesStreamReadBuilder:
        unknown = [n for n in projection if n not in self._table.field_names]
        if isinstance(projection, str | bytes) or unknown:
            raise InvalidArgumentError(
                f"Table '{self._table.name}': with_projection(projection) takes a list of its "
                f"field names {self._table.field_names}, got {describe(projection)}."
            )
        self._projection = list(projection)
        return self

    def with_filter(self, predicate: Predicate | None) -> ChangesStreamReadBuilder:
        self._data.with_filter(predicate)
        self._predicate = predicate
        return self

    def with_consumer_id(self, consumer_id: str) -> ChangesStreamReadBuilder:
        self._data.with_consumer_id(consumer_id)
        return self

    def new_predicate_builder(self) -> PredicateBuilder:
        return self._data.new_predicate_builder()

    def new_scan(self) -> StreamTableScan:
        return self._data.new_scan()

    def new_read(self) -> StreamTableRead:
        table = self._table
        return StreamTableRead(
            table._store, self._projection, self._predicate, None, False, table.kind
        )


# --- rows ------------------------------------------------------------------------------------


def _snapshot_rows(store: FileStore) -> list[tuple[Any, ...]]:
    sm = store.snapshot_manager
    rows = []
    for sid in sm.list_ids():
        s = sm.snapshot_if_exists(sid)
        if s is None:
            continue  # expired while listing
        rows.append(
            (
                s.id,
                s.schema_id,
                s.commit_user,
                s.commit_identifier,
                s.commit_kind,
                _local_time(s.time_millis),
                s.base_manifest_list,
                s.delta_manifest_list,
                s.changelog_manifest_list,
                s.total_record_count,
                s.delta_record_count,
                s.changelog_record_count,
                s.watermark,
                s.next_row_id,
            )
        )
    return rows


def _schema_rows(store: FileStore) -> list[tuple[Any, ...]]:
    sm = store.schema_manager
    rows = []
    for sid in sm.list_ids():
        s = sm.schema(sid)
        rows.append(
            (
                s.id,
                _flat_json([f.to_json() for f in s.fields]),
                _flat_json(list(s.partition_keys)),
                _flat_json(list(s.primary_keys)),
                _flat_json(java_hash_map_order(s.options)),
                s.comment,
                _local_time(s.time_millis),
            )
        )
    return rows


def _option_rows(store: FileStore) -> list[tuple[Any, ...]]:
    latest = store.schema_manager.latest()
    if latest is None:
        return []
    return list(java_hash_map_order(latest.options).items())


def _latest(store: FileStore) -> Snapshot | None:
    return store.snapshot_manager.latest()


def _raw_entries(store: FileStore, snapshot: Snapshot) -> list[ManifestEntry]:
    mio = store.manifest_io
    return mio.read_entries(mio.data_manifests(snapshot))


def _skips_postpone(store: FileStore) -> bool:
    """Java's batch scan reads real buckets only when the table's ``bucket`` is -2."""
    return store.options.bucket == POSTPONE_BUCKET


def _file_rows(store: FileStore) -> list[tuple[Any, ...]]:
    snapshot = _latest(store)
    if snapshot is None:
        return []
    skip_postpone = _skips_postpone(store)
    live = [
        e
        for e in merge_entries(_raw_entries(store, snapshot))
        if e.kind == mf.KIND_ADD and not (skip_postpone and e.bucket < 0)
    ]
    live.sort(key=lambda e: (e.partition, e.bucket, e.file.level, e.file.min_sequence_number))
    types = store.partition_types
    current = store.table_schema
    schemas: dict[int, TableSchema] = {}
    rows = []
    for e in live:
        f = e.file
        schema = schemas.get(f.schema_id)
        if schema is None:
            schema = schemas[f.schema_id] = store.schema_manager.schema(f.schema_id)
        values = deserialize_with_arity(e.partition, types)
        rel = store.partition_rel_path(values)
        base = f"{store.path}/{rel}" if rel else store.path
        path = f.external_path or store.file_io.describe(
            f"{base}/{bucket_dir(e.bucket)}/{f.file_name}"
        )
        nulls, mins, maxs = _value_stats(f, schema, current)
        rows.append(
            (
                partition_cast_string(values, types),
                e.bucket,
                path,
                f.file_name.rsplit(".", 1)[-1],
                f.schema_id,
                f.level,
                f.row_count,
                f.file_size,
                _key_string(f.min_key, schema),
                _key_string(f.max_key, schema),
                nulls,
                mins,
                maxs,
                f.min_sequence_number,
                f.max_sequence_number,
                _epoch_as_utc(f.creation_time),
                f.delete_row_count,
                _FILE_SOURCES.get(f.file_source) if f.file_source is not None else None,
                f.first_row_id,
                None if f.write_cols is None else list(f.write_cols),
            )
        )
    return rows


_FILE_SOURCES = {0: "APPEND", 1: "COMPACT"}


def _key_string(key: bytes, schema: TableSchema) -> str | None:
    """``Arrays.toString`` of the key row's internal values; None for an empty key (append)."""
    if int.from_bytes(key[:4], "big", signed=True) <= 0:
        return None
    trimmed = schema.trimmed_primary_keys()
    key_fields = [schema.field(k) for k in trimmed] if trimmed else list(schema.fields)
    types = [fd.type.copy(nullable=True) for fd in key_fields]
    values = deserialize_with_arity(key, types)
    return "[" + ", ".join(java_to_string(v, t) for v, t in zip(values, types, strict=False)) + "]"


def _value_stats(
    f: DataFileMeta, schema: TableSchema, current: TableSchema
) -> tuple[str, str, str]:
    """Java's StatsLazyGetter: the file's value stats mapped to the current fields by id,
    as ``TreeMap.toString`` (sorted by name); a field the file has no stats for is null."""
    by_name = {fd.name: fd for fd in schema.fields}
    cols = f.value_stats_cols
    stats_fields = list(schema.fields) if cols is None else [by_name[c] for c in cols]
    decoded: dict[int, tuple[Any, Any, int | None]] = {}
    if stats_fields:
        types = [fd.type.copy(nullable=True) for fd in stats_fields]
        mins = deserialize_with_arity(f.value_stats.min_values, types)
        maxs = deserialize_with_arity(f.value_stats.max_values, types)
        counts = list(f.value_stats.null_counts or [None] * len(stats_fields))
        for fd, lo, hi, n in zip(stats_fields, mins, maxs, counts, strict=False):
            decoded[fd.id] = (lo, hi, n)
    nulls: dict[str, str] = {}
    lows: dict[str, str] = {}
    highs: dict[str, str] = {}
    for fd in current.fields:
        lo, hi, n = decoded.get(fd.id, (None, None, None))
        nulls[fd.name] = "null" if n is None else str(n)
        lows[fd.name] = java_to_string(lo, fd.type)
        highs[fd.name] = java_to_string(hi, fd.type)
    return _tree_map(nulls), _tree_map(lows), _tree_map(highs)


def _tree_map(values: Mapping[str, str]) -> str:
    keys = sorted(values, key=_utf16_key)
    return "{" + ", ".join(f"{k}={values[k]}" for k in keys) + "}"


def _manifest_rows(store: FileStore) -> list[tuple[Any, ...]]:
    snapshot = _latest(store)
    if snapshot is None:
        return []
    mio = store.manifest_io
    metas: list[ManifestFileMeta] = mio.data_manifests(snapshot)
    if snapshot.changelog_manifest_list:
        metas = metas + mio.read_manifest_list(snapshot.changelog_manifest_list)
    types = [t.copy(nullable=True) for t in store.partition_types]
    rows = []
    for m in metas:
        stats = m.partition_stats
        rows.append(
            (
                m.file_name,
                m.file_size,
                m.num_added_files,
                m.num_deleted_files,
                m.schema_id,
                partition_cast_string(deserialize_with_arity(stats.min_values, types), types),
                partition_cast_string(deserialize_with_arity(stats.max_values, types), types),
                m.min_row_id,
                m.max_row_id,
            )
        )
    return rows


@dataclass
class _Totals:
    records: int = 0
    size: int = 0
    files: int = 0
    last: int = -(2**63)

    def add(self, e: ManifestEntry) -> None:
        sign = 1 if e.kind == mf.KIND_ADD else -1
        self.records += sign * e.file.row_count
        self.size += sign * e.file.file_size
        self.files += sign
        if e.file.creation_time is not None:
            self.last = max(self.last, e.file.creation_time)


def _totals(
    entries: Iterable[ManifestEntry],
    key: Callable[[ManifestEntry], Hashable],
    keep: Callable[[ManifestEntry], bool],
) -> dict[Any, _Totals]:
    """Java's PartitionEntry / BucketEntry merge: every entry, ADD counted up and DELETE down,
    the latest creation time of either; groups whose files cancel out are dropped."""
    out: dict[Any, _Totals] = {}
    for e in entries:
        if keep(e):
            out.setdefault(key(e), _Totals()).add(e)
    return {k: v for k, v in out.items() if v.files > 0}


def _partition_rows(store: FileStore) -> list[tuple[Any, ...]]:
    """Those of every branch a batch read takes partitions from (read/fallback_read.py)."""
    rows: dict[str, tuple[Any, ...]] = {}
    for source in partition_sources(store):
        for row in _branch_partition_rows(source):
            rows.setdefault(row[0], row)
    return sorted(rows.values(), key=lambda r: r[0].encode("utf-8"))


def _branch_partition_rows(store: FileStore) -> list[tuple[Any, ...]]:
    snapshot = _latest(store)
    if snapshot is None:
        return []
    skip_postpone = _skips_postpone(store)
    totals = _totals(
        _raw_entries(store, snapshot),
        lambda e: e.partition,
        lambda e: not (skip_postpone and e.bucket < 0),
    )
    types = store.partition_types
    default = store.options.partition_default_name
    rows = []
    for partition, t in totals.items():
        values = deserialize_with_arity(partition, types)
        text = "/".join(
            f"{k}={default if v is None else cast_to_string(v, ty)}"
            for k, v, ty in zip(store.partition_keys, values, types, strict=False)
        )
        rows.append(
            (text, t.records, t.size, t.files, _epoch_as_utc(t.last), None, None, None, None)
        )
    rows.sort(key=lambda r: r[0].encode("utf-8"))
    return rows


def _bucket_rows(store: FileStore) -> list[tuple[Any, ...]]:
    snapshot = _latest(store)
    if snapshot is None:
        return []
    totals = _totals(
        _raw_entries(store, snapshot), lambda e: (e.partition, e.bucket), lambda e: True
    )
    types = store.partition_types
    rows = []
    for (partition, bucket), t in totals.items():
        text = partition_cast_string(deserialize_with_arity(partition, types), types)
        rows.append((text, bucket, t.records, t.size, t.files, _epoch_as_utc(t.last)))
    rows.sort(key=lambda r: (r[0].encode("utf-8"), r[1]))
    return rows


def _tag_rows(store: FileStore) -> list[tuple[Any, ...]]:
    tag_dir = store.tag_manager.tag_dir
    rows = []
    for file_name in store.file_io.list_names(tag_dir):
        if not file_name.startswith("tag-"):
            continue
        path = os.path.join(tag_dir, file_name)
        try:
            text = store.file_io.read_text(path)
        except CorruptTableError:
            continue  # deleted meanwhile
        snapshot = Snapshot.from_json(text, path)
        try:
            extra = json.loads(text, parse_float=decimal.Decimal)
            created = _jackson_local_date_time(extra.get("tagCreateTime"))
            retained = extra.get("tagTimeRetained")
        except (ValueError, TypeError, AttributeError) as e:
            raise CorruptTableError(f"Tag file {path} is not valid: {e}") from e
        rows.append(
            (
                file_name[len("tag-") :],
                snapshot.id,
                snapshot.schema_id,
                _local_time(snapshot.time_millis),
                snapshot.total_record_count,
                created,
                None if retained is None else java_duration(decimal.Decimal(retained)),
            )
        )
    rows.sort(key=lambda r: _utf16_key(r[0]))
    return rows


def _consumer_rows(store: FileStore) -> list[tuple[Any, ...]]:
    """Java's ConsumersTable: each consumer's next snapshot, in Java's HashMap order."""
    found = store.consumer_manager.consumers()
    order = java_hash_map_order({k: str(v) for k, v in found.items()})
    return [(k, found[k]) for k in order]


def _branch_rows(store: FileStore) -> list[tuple[Any, ...]]:
    """Java's BranchesTable: every branch but main, created when its directory was last
    modified (Java reads the directory's modification time too), local wall clock."""
    rows = []
    for name in branches.branches(store):
        seconds = store.file_io.mtime(branch_path(store.path, name))
        rows.append((name, _local_time(int(seconds * 1000))))
    return rows


def _read_optimized(store: FileStore) -> pa.Table:
    """Java's ReadOptimizedTable: a primary-key table's top-level files alone (compacted rows,
    no merge with newer levels; with deletion vectors, their vectors applied), an append
    table's rows as they are."""
    rb = ReadBuilder(store)
    scan = rb.new_scan()
    if store.primary_keys:
        scan = scan.with_level(store.options.num_levels - 1)
    return rb.new_read().to_arrow(scan.plan().splits())


def _table_index_rows(store: FileStore) -> list[tuple[Any, ...]]:
    """The latest snapshot's index files (hash index, deletion vectors, global indexes), one
    row each, in the index manifest's order (Java's TableIndexesTable)."""
    snapshot = _latest(store)
    if snapshot is None or not snapshot.index_manifest:
        return []
    path = os.path.join(store.path, "manifest", snapshot.index_manifest)
    types = store.partition_types
    rows = []
    for e in mf.decode_index_manifest(store.file_io.read_bytes(path), path):
        meta = e.index_file
        ranges = (
            None
            if meta.dv_ranges is None
            else [
                {
                    "f0": r.data_file_name,
                    "f1": r.offset,
                    "f2": r.length,
                    "_CARDINALITY": r.cardinality,
                }
                for r in meta.dv_ranges
            ]
        )
        rows.append(
            (
                partition_cast_string(deserialize_with_arity(e.partition, types), types),
                e.bucket,
                meta.index_type,
                meta.file_name,
                meta.file_size,
                meta.row_count,
                ranges,
            )
        )
    return rows


_ROWS = {
    "snapshots": _snapshot_rows,
    "schemas": _schema_rows,
    "options": _option_rows,
    "files": _file_rows,
    "manifests": _manifest_rows,
    "partitions": _partition_rows,
    "buckets": _bucket_rows,
    "tags": _tag_rows,
    "consumers": _consumer_rows,
    "branches": _branch_rows,
    "table_indexes": _table_index_rows,
}


# --- Java's renderings -----------------------------------------------------------------------


def _utf16_key(text: str) -> bytes:
    """Java's String.compareTo order (UTF-16 code units)."""
    return text.encode("utf-16-be")


def _local_time(epoch_millis: int) -> dt.datetime:
    """An instant as this process's local wall clock (Java: ``ZoneId.systemDefault()``)."""
    seconds, millis = divmod(epoch_millis, 1000)
    local = dt.datetime.fromtimestamp(seconds)
    return local + dt.timedelta(milliseconds=millis)


def _epoch_as_utc(millis: int | None) -> dt.datetime | None:
    """A wall-clock time stored as epoch millis read as UTC (a manifest's creation time)."""
    if millis is None or millis == -(2**63):
        return None
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=millis)


def _jackson_local_date_time(value: Any) -> dt.datetime | None:
    """A LocalDateTime as Jackson writes it: ``[y, m, d, h, mi(, s(, nanos))]`` or ISO text."""
    if value is None:
        return None
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    parts = [int(v) for v in value]
    nanos = parts[6] if len(parts) > 6 else 0
    second = parts[5] if len(parts) > 5 else 0
    year, month, day, hour, minute = parts[:5]
    return dt.datetime(year, month, day, hour, minute, second, nanos // 1000)


def java_duration(seconds: decimal.Decimal) -> str:
    """``java.time.Duration.toString`` of a duration given in seconds: ``PT1H30M``, ``PT0.5S``."""
    secs, nanos = divmod(int(seconds * 1_000_000_000), 1_000_000_000)
    effective = secs + 1 if secs < 0 < nanos else secs

    def trunc_div(a: int, b: int) -> int:
        return a // b if a >= 0 else -((-a) // b)

    hours = trunc_div(effective, 3600)
    minutes = trunc_div(effective - hours * 3600, 60)
    rest = effective - hours * 3600 - minutes * 60
    out = "PT"
    if hours:
        out += f"{hours}H"
    if minutes:
        out += f"{minutes}M"
    if rest == 0 and nanos == 0 and len(out) > 2:
        return out
    negative_fraction = secs < 0 < nanos
    out += "-0" if negative_fraction and rest == 0 else str(rest)
    if nanos:
        frac = 1_000_000_000 - nanos if negative_fraction else nanos
        out += "." + f"{frac:09d}".rstrip("0")
    return out + "S"


def java_hash_map_order(values: Mapping[str, str]) -> dict[str, str]:
    """``values`` in the iteration order of a ``java.util.HashMap`` they were put into in this
    order (String hash codes)."""
    m = JavaHashMap()
    for k in values:
        m.put(k, string_hash(k), None)
    return {str(k): values[str(k)] for k, _ in m.items()}


def _flat_json(value: Any) -> str:
    """Jackson's compact JSON (``JsonSerdeUtil.toFlatJson``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def partition_cast_string(values: Sequence[Any], types: Sequence[DataType]) -> str:
    """A partition row cast to STRING (Java's RowToStringCastRule): ``{v1, v2}``."""
    parts = [
        "null" if v is None else cast_to_string(v, t) for v, t in zip(values, types, strict=False)
    ]
    return "{" + ", ".join(parts) + "}"


def cast_to_string(value: Any, t: DataType) -> str:
    """One value CAST to STRING as Java's cast rules do it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, dt.datetime):
        precision = t.precision if isinstance(t, TimestampType) else 6
        if value.tzinfo is not None:  # TIMESTAMP_LTZ: the JVM's zone
            value = value.astimezone().replace(tzinfo=None)
        text = str(value.strftime("%Y-%m-%d %H:%M:%S"))
        fraction = f"{value.microsecond * 1000 + int(getattr(value, 'nanosecond', 0)):09d}"
        while len(fraction) > precision and fraction.endswith("0"):
            fraction = fraction[:-1]
        return text + ("." + fraction if fraction else "")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        precision = t.precision if isinstance(t, TimeType) else 0
        text = value.strftime("%H:%M:%S")
        if precision > 0:
            text += "." + f"{value.microsecond // 1000:03d}".ljust(precision, "0")[:precision]
        return text
    return java_to_string(value, t)


def java_to_string(value: Any, t: DataType) -> str:
    """``toString`` of Java's internal value for ``value`` of type ``t`` (``String.valueOf``):
    what ``Arrays.toString`` and ``Map.toString`` print in ``$files``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        single = isinstance(t, AtomicType) and t.name == "FLOAT"
        return java_float_string(value, single)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return _java_local_date_time(value)
    if isinstance(value, dt.date):
        return str((value - dt.date(1970, 1, 1)).days)
    if isinstance(value, dt.time):
        return str(
            ((value.hour * 60 + value.minute) * 60 + value.second) * 1000
            + value.microsecond // 1000
        )
    # byte[] and nested values print their identity in Java ("[B@1b6d3586"): not reproducible
    return str(value)


def _java_local_date_time(value: dt.datetime) -> str:
    """LocalDateTime.toString: seconds only when not zero, fractions in groups of three."""
    text = value.strftime("%Y-%m-%dT%H:%M")
    nanos = value.microsecond * 1000 + int(getattr(value, "nanosecond", 0))
    if value.second or nanos:
        text += f":{value.second:02d}"
        if nanos:
            if nanos % 1_000_000 == 0:
                text += f".{nanos // 1_000_000:03d}"
            elif nanos % 1000 == 0:
                text += f".{nanos // 1000:06d}"
            else:
                text += f".{nanos:09d}"
    return text


def java_float_string(value: float, single: bool = False) -> str:
    """``Double.toString`` (or ``Float.toString`` for a FLOAT) from the shortest digits that
    read back as the value: plain between 1e-3 and 1e7, else ``d.dddE±n``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if single:
        text = np.format_float_scientific(np.float32(value), unique=True, trim="-")
    else:
        text = f"{value!r}"
    sign = "-" if value < 0 else ""
    d = decimal.Decimal(text.lstrip("-"))
    digits_tuple = d.as_tuple()
    digits = "".join(str(x) for x in digits_tuple.digits).rstrip("0") or "0"
    exponent = len(digits_tuple.digits) + int(digits_tuple.exponent) - 1
    if 1e-3 <= abs(value) < 1e7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            frac = digits[exponent + 1 :] or "0"
        else:
            whole = "0"
            frac = "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"
