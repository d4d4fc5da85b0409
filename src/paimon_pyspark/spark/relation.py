"""The relation a Spark read door reads, apart from any Spark API that pyspark 3.5 or a Spark
Connect client lacks: the same code behind ``format("paimon")`` (spark/datasource.py, a
Python Data Source) and ``paimon_pyspark.spark.read`` / the SQL door (spark/read.py, a
``mapInArrow`` job over a frame of payloads).

:class:`Relation` resolves the reader options (table, time travel, ``filter``, ``columns``,
metadata columns, ``parallelism``) to the relation's Spark schema, checking them where the
relation is made, so a bad one fails at ``load()`` with its typed error. :class:`RelationRead`
plans the relation on the driver into payloads, versioned bytes (read/split_codec.py for
splits, :func:`encode_rows` for a system table's rows), and reads one payload on an executor.
A payload is one task's splits, packed as Spark packs files (:func:`pack_splits`); nothing read
from the warehouse crosses to an executor as a pickle of our objects.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import pyarrow as pa
from pyspark.sql.types import (
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from paimon_pyspark.errors import (
    CatalogError,
    CorruptRecordError,
    OptionError,
    SchemaMismatchError,
    UnsupportedOperationError,
)
from paimon_pyspark.merge.merge_function import MergeSettings
from paimon_pyspark.read import metadata_columns as meta
from paimon_pyspark.read.changes import CHANGE_TABLES, ROWKIND, ChangesRead
from paimon_pyspark.read.fallback_read import (
    mark_other,
    reading_other,
    split_by_branch,
    unmark_other,
)
from paimon_pyspark.read.metadata_columns import PER_FILE, refuse_merged
from paimon_pyspark.read.metadata_columns import arrow_fields as metadata_arrow_fields
from paimon_pyspark.read.metadata_columns import parse_names as parse_metadata
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.split_codec import decode_splits, encode_splits
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.spark.job import TableRef
from paimon_pyspark.spark.native import SKIP_RAW_SPLITS, is_raw
from paimon_pyspark.spark.reader_options import COLUMNS, FILTER, METADATA_COLUMNS, PARALLELISM
from paimon_pyspark.spark.schema import spark_arrow_schema, spark_schema
from paimon_pyspark.spark.tables import catalog_options, table_options
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.system_tables import SystemTable

DEFAULT_PARALLELISM = os.cpu_count() or 2
MAX_PARTITION_BYTES = 128 * 1024 * 1024
"""Spark's spark.sql.files.maxPartitionBytes default."""


def locate(options: Mapping[str, str]) -> tuple[str, str]:
    """(warehouse, 'db.table') from the options, or from a table path given to save/load."""
    table = options.get("table")
    warehouse = options.get("warehouse", "")
    path = options.get("path")
    if table:
        return warehouse, table
    if path:
        path = path.rstrip("/")
        db_dir, name = os.path.split(path)
        wh, db = os.path.split(db_dir)
        if db.endswith(".db"):
            return warehouse or wh, f"{db[:-3]}.{name}"
    raise CatalogError(
        "Paimon data source: give option('table', 'db.table') with option('warehouse', ...), "
        "or the table's path: save('<warehouse>/<db>.db/<table>')."
    )


class RelationRead:
    """Plans and reads the relation's columns and rows: ``filter`` is the option's SQL text,
    parsed again on each executor (a Predicate is not sent across processes)."""

    def __init__(
        self,
        ref: TableRef,
        table: FileStoreTable,
        schema: StructType,
        filter: str | None = None,
        parallelism: int = DEFAULT_PARALLELISM,
        skip_raw: bool = False,
        metadata: Sequence[str] = (),
    ) -> None:
        """``table``: ``ref`` as the planner loaded it, for the projection and :meth:`plan`;
        the executors get ``ref`` and load the table themselves. ``skip_raw``: read only what
        Spark's Parquet reader does not (spark/native.py): the splits that need a merge,
        without their final files. ``metadata``: the metadata columns that follow
        ``schema``'s."""
        self.skip_raw = skip_raw
        self.ref = ref
        self.filter = filter if filter is not None and filter.strip() else None
        self.parallelism = parallelism
        self.metadata = list(metadata)
        self.projection = projection(table.field_names, schema.fieldNames(), ref.identifier)
        self.arrow_schema = spark_arrow_schema(schema)
        if self.metadata:
            partition_fields = list(table.table_schema.partition_fields())
            extra = metadata_arrow_fields(self.metadata, partition_fields)
            self.arrow_schema = pa.schema([*self.arrow_schema, *extra])
        self._table: FileStoreTable | None = table

    def __getstate__(self) -> dict[str, Any]:
        """Pickled for the executors without the planner's table: they load their own."""
        return {k: v for k, v in self.__dict__.items() if k != "_table"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._table = None

    def _builder(self, table: FileStoreTable) -> ReadBuilder:
        rb = table.new_read_builder()
        if self.filter is not None:
            rb = rb.with_filter(parse_predicate(self.filter, table.fields, self.ref.identifier))
        return rb

    def _system_rows(self, table: object) -> pa.Table | None:
        """A system table's rows (``db.t$files``), computed here on the driver: they are
        metadata, small, and Java computes them the same way; None for a data table, and for
        ``$audit_log`` / ``$binlog``, whose data table's splits are read by the tasks."""
        if not isinstance(table, SystemTable) or table.kind in CHANGE_TABLES:
            return None
        rb = table.new_read_builder()
        if self.filter is not None:
            rb = rb.with_filter(parse_predicate(self.filter, table.fields, self.ref.identifier))
        rb = rb.with_projection(self.projection)
        return rb.new_read().to_arrow(rb.new_scan().plan().splits())

    def plan(self) -> list[bytes]:
        """One payload per task: splits packed as Spark packs files (:func:`pack_splits`); an
        append table's splits are cut into single files first, so a small read still uses
        every core."""
        table = self._table if self._table is not None else self.ref.load()
        rows = self._system_rows(table)
        if rows is not None:
            return [encode_rows(rows)]
        if isinstance(table, SystemTable):  # $audit_log, $binlog: the data table's splits
            splits = ReadBuilder(table.data_store).new_scan().plan().splits()
            open_cost = table.data_store.options.source_split_open_file_cost
            groups = pack_splits(splits, self.parallelism, open_cost)
            return [encode_splits(group) for group in groups]
        splits = self._builder(table).new_scan().plan().splits()
        if self.skip_raw:
            settings = MergeSettings.from_table(table.store) if table.primary_keys else None
            dv = table.options.deletion_vectors_enabled
            splits = [s for s in splits if not is_raw(s, settings, dv)]
        if not table.primary_keys:  # nothing to merge: any file may go to any task
            splits = [s.with_files((f,)) for s in splits for f in s.files]
        open_cost = table.options.source_split_open_file_cost
        current, other = split_by_branch(splits)  # scan.fallback-branch: read/fallback_read.py
        out = [encode_splits(group) for group in pack_splits(current, self.parallelism, open_cost)]
        for group in pack_splits(other, self.parallelism, open_cost):
            out.append(mark_other(encode_splits(group)))
        return out

    def batches(self, payload: bytes | None) -> Iterator[pa.RecordBatch]:
        """The rows of one payload of :meth:`plan`, in the relation's Arrow schema; None (an
        empty task) has none."""
        if payload is None:
            return
        types = self.arrow_schema.types
        loaded = None if is_rows(payload) else self.ref.load()
        if is_rows(payload):
            batches: Iterator[pa.RecordBatch] = iter(decode_rows(payload).to_batches())
        elif isinstance(loaded, SystemTable):
            batches = self._changes(loaded, payload)
        else:
            assert loaded is not None
            rb = self._builder(loaded).with_projection(self.projection)
            body, other = unmark_other(payload)
            splits = decode_splits(body, rb.store.partition_types)
            read = rb.new_read()
            if other:
                splits = reading_other(read, splits)
            if self.skip_raw:
                read = read.leaving_out_final_files()
            if self.metadata:
                read = read.with_metadata_columns(self.metadata)
            batches = iter(read.to_arrow_batch_reader(splits))
        for batch in batches:
            columns = [
                c if c.type == t else c.cast(t) for c, t in zip(batch.columns, types, strict=True)
            ]
            yield pa.RecordBatch.from_arrays(columns, schema=self.arrow_schema)

    def _changes(self, table: SystemTable, payload: bytes) -> Iterator[pa.RecordBatch]:
        """``$audit_log`` / ``$binlog`` rows of the data table's splits in ``payload``
        (read/changes.py), filtered by the whole filter (``rowkind`` too), then projected."""
        store = table.data_store
        splits = decode_splits(payload, store.partition_types)
        read = ChangesRead(store, None, None, None, ROWKIND, True, table.kind)
        rows = read.to_arrow(splits)
        if self.filter is not None:
            predicate = parse_predicate(self.filter, table.fields, self.ref.identifier)
            rows = rows.filter(predicate.to_arrow_expression())
        return iter(rows.select(self.projection).to_batches())


R = TypeVar("R", bound=RelationRead)


class Relation:
    """The relation of reader options: the table as read, its Spark schema, its reader."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.opts = {str(k).lower(): str(v) for k, v in dict(options).items()}
        self.warehouse, self.identifier = locate(self.opts)

    def _ref(self) -> TableRef:
        opts = table_options(self.opts)
        snapshot = self.opts.get("snapshot-id")
        if snapshot is not None:
            opts["scan.snapshot-id"] = snapshot
        return TableRef(self.warehouse, self.identifier, opts, catalog_options(self.opts))

    def table(self) -> FileStoreTable:
        """The table as this relation reads it: its dynamic and time-travel options applied."""
        return self._ref().load()

    def schema(self) -> StructType:
        """The table's columns, or those of option ``columns`` in its order; a bad ``filter``
        or ``columns`` fails here, at ``load()``."""
        table = self._ref().load()
        full = spark_schema(table)
        self._predicate(table)
        self._parallelism()
        names = self._columns(table)
        metadata = self._metadata(table)
        if names is None and not metadata:
            return full
        by_name = {f.name: f for f in full.fields}
        fields = [by_name[n] for n in (names if names is not None else full.fieldNames())]
        return StructType(fields + metadata_fields(metadata, table, full))

    def _metadata(self, table: FileStoreTable) -> list[str]:
        """The metadata columns asked for; a primary-key split that needs a merge refuses file
        path and row index here, at ``load()``, as Java refuses them when it reads."""
        names = parse_metadata(self.opts.get(METADATA_COLUMNS), self.identifier)
        if not names:
            return names
        if isinstance(table, SystemTable):
            raise UnsupportedOperationError(
                f"Table '{self.identifier}' is a system table, which has no metadata columns."
            )
        if table.primary_keys and PER_FILE.intersection(names):
            if table.options.get("incremental-between") or table.options.get(
                "incremental-between-timestamp"
            ):
                refuse_merged(self.identifier, names)
            settings = MergeSettings.from_table(table.store)
            dv = table.options.deletion_vectors_enabled
            splits = self._builder_splits(table)
            if not all(is_raw(s, settings, dv) for s in splits):
                refuse_merged(self.identifier, names)
        return names

    def _builder_splits(self, table: FileStoreTable) -> list[DataSplit]:
        rb = table.new_read_builder()
        predicate = self._predicate(table)
        if predicate is not None:
            rb = rb.with_filter(predicate)
        return list(rb.new_scan().plan().splits())

    def read_for(self, schema: StructType, kind: type[R]) -> R:
        """The reader (a ``kind``) of ``schema``: the relation's, or a narrower one Spark or
        the user gives, checked against option ``columns``."""
        ref = self._ref()
        table = ref.load()
        allowed = self._columns(table)
        metadata = self._metadata(table)
        if metadata:
            schema = StructType([f for f in schema.fields if f.name not in metadata])
        if allowed is not None:
            kept = {a.lower() for a in allowed}
            outside = [n for n in schema.fieldNames() if n.lower() not in kept]
            if outside:
                raise SchemaMismatchError(
                    f"Table '{self.identifier}': the read schema names fields {outside} that "
                    f"option 'columns' leaves out (columns: {allowed})."
                )
        skip_raw = self.opts.get(SKIP_RAW_SPLITS, "false").lower() == "true"
        return kind(
            ref, table, schema, self.opts.get(FILTER), self._parallelism(), skip_raw, metadata
        )

    def _parallelism(self) -> int:
        text = self.opts.get(PARALLELISM)
        if text is None:
            return DEFAULT_PARALLELISM
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise OptionError(
                f"Table '{self.identifier}': option '{PARALLELISM}' = '{text}' must be an "
                "integer >= 1 (the cores the read spreads over)."
            )
        return value

    def _predicate(self, table: FileStoreTable) -> Predicate | None:
        text = self.opts.get(FILTER)
        if text is None or not text.strip():
            return None
        return parse_predicate(text, table.fields, self.identifier)

    def _columns(self, table: FileStoreTable) -> list[str] | None:
        text = self.opts.get(COLUMNS)
        if text is None:
            return None
        wanted = [c.strip() for c in text.split(",")]
        if not all(wanted):
            raise OptionError(
                f"Table '{self.identifier}': option '{COLUMNS}' = '{text}' must be field names "
                "separated by commas."
            )
        names = projection(table.field_names, wanted, self.identifier)
        if len(set(names)) != len(names):
            raise OptionError(
                f"Table '{self.identifier}': option '{COLUMNS}' = '{text}' names a field twice."
            )
        return names


PAYLOADS = StructType(
    [StructField("task", IntegerType(), False), StructField("payload", BinaryType(), False)]
)
"""The rows of a read job: a task index (cluster.task_rows) and one payload of
:meth:`RelationRead.plan`, versioned bytes."""


def payload_task(
    read: RelationRead,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function of a frame of :data:`PAYLOADS` rows (spark/cluster.py
    ``task_rows``, one task per payload): the rows of every payload its task is given."""

    def task(rows: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in rows:
            for payload in batch.column(1).to_pylist():
                yield from read.batches(payload)

    return task


ROWS_MAGIC = b"PPsy"
ROWS_VERSION = 1


def encode_rows(rows: pa.Table) -> bytes:
    """A system table's rows for an executor: magic, version, an Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, rows.schema) as writer:
        writer.write_table(rows)
    body: bytes = sink.getvalue().to_pybytes()
    return ROWS_MAGIC + bytes([ROWS_VERSION]) + body


def is_rows(value: object) -> bool:
    return isinstance(value, bytes) and value[: len(ROWS_MAGIC)] == ROWS_MAGIC


def decode_rows(value: bytes) -> pa.Table:
    head = len(ROWS_MAGIC)
    if value[head : head + 1] != bytes([ROWS_VERSION]):
        raise CorruptRecordError(
            f"System table rows of an unknown version {value[head : head + 1]!r}; this reader "
            f"knows version {ROWS_VERSION}."
        )
    try:
        return pa.ipc.open_stream(pa.py_buffer(value[head + 1 :])).read_all()
    except pa.ArrowInvalid as e:
        raise CorruptRecordError(f"System table rows do not decode: {e}") from None


def metadata_fields(
    names: Sequence[str], table: FileStoreTable, full: StructType
) -> list[StructField]:
    """The Spark fields of the metadata columns ``names``: the partition's struct has the
    partition columns' Spark types."""
    by_name = {f.name: f for f in full.fields}
    partition = StructType([by_name[k] for k in table.partition_keys])
    types: dict[str, DataType] = {
        meta.FILE_PATH: StringType(),
        meta.ROW_INDEX: LongType(),
        meta.PARTITION: partition,
        meta.BUCKET: IntegerType(),
    }
    return [StructField(n, types[n], True) for n in names]


def projection(table_fields: list[str], wanted: list[str], identifier: str) -> list[str]:
    """Table fields for the reader's schema, matched case-insensitively as Spark matches."""
    by_lower = {f.lower(): f for f in table_fields}
    unknown = [w for w in wanted if w not in table_fields and w.lower() not in by_lower]
    if unknown:
        raise SchemaMismatchError(
            f"Table '{identifier}': the read schema names fields {unknown} that the table does "
            f"not have (fields: {table_fields})."
        )
    return [w if w in table_fields else by_lower[w.lower()] for w in wanted]


def pack_splits(
    splits: Sequence[DataSplit], parallelism: int, open_cost: int
) -> list[list[DataSplit]]:
    """Splits grouped into input partitions as Spark groups files (FilePartition): every
    split weighs its files' bytes plus ``open_cost`` per file, a partition holds up to
    min(128 MiB, max(open_cost, total weight / parallelism)), filled largest first ("next fit
    decreasing"), and a split joins the current partition while the partition's weight plus the
    split's bytes (its open cost not counted, as Spark counts it) stays within that. One task
    per small split costs more than reading it; this keeps the tasks few (the 8 files of one
    partition on 2 cores: 2 tasks, one wave) and still spreads a large read over every core."""
    if not splits:
        return []
    sizes = [sum(f.file_size for f in s.files) for s in splits]
    weights = [size + open_cost * len(s.files) for size, s in zip(sizes, splits, strict=True)]
    limit = min(MAX_PARTITION_BYTES, max(open_cost, sum(weights) // max(1, parallelism)))
    groups: list[list[DataSplit]] = []
    current: list[DataSplit] = []
    weight = 0
    for i in sorted(range(len(splits)), key=lambda i: -sizes[i]):
        if current and weight + sizes[i] > limit:
            groups.append(current)
            current, weight = [], 0
        current.append(splits[i])
        weight += weights[i]
    if current:
        groups.append(current)
    return groups
