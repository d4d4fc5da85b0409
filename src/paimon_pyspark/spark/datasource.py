"""The ``paimon`` Python Data Source: ``df.write.format("paimon")`` and
``spark.read.format("paimon")``, without a JVM connector.

Writes go through the same per-task function as ``paimon_pyspark.spark.write`` (WriteJob):
each task returns its commit messages, ``commit()`` commits them once, ``abort()`` removes every
file the job wrote. The Data Source API cannot ask Spark for a distribution, so a fixed-bucket
table may get one bucket from several tasks. For append tables their sequence numbers are
renumbered at commit so the bucket reads as if one writer wrote it; the tasks of a primary-key
table interleave their sequence numbers instead (see WriteJob), since those live in the files.
Tasks that may share a bucket never compact it; after the data commit the job's driver
compacts the fixed buckets written as a lone writer would at its commit (a COMPACT snapshot).
Reads are one input partition per split.

Spark's filters are not pushed down: pyspark 4.1.4, 4.2.1 and 4.3.0 keep the reader that
``pushFilters`` configured on the relation and reuse it for a later query on the same DataFrame
or view that pushes no filter, so a pushed predicate would silently drop rows from that query
(tests/spark/test_spark_push_filters.py shows it on the installed pyspark). Nor does Spark
prune columns for a Python source. Pruning is therefore bound to the relation, set when it is
loaded: ``option("filter", "<SQL boolean expression>")`` (parsed by read/sql_predicate.py)
restricts the relation to those rows, pruning partitions and files by the manifests' stats
and filtering rows exactly; ``option("columns", "a,b")``, or a schema given to the reader
(``.schema("id BIGINT, amount DOUBLE")``), restricts it to those columns, the only ones read.
``paimon_pyspark.spark.read`` sets both.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from paimon_pyspark.bucket.door_assigner import agreed_buckets
from paimon_pyspark.catalog.identifiers import parse_table_identifier
from paimon_pyspark.errors import (
    CatalogError,
    CorruptRecordError,
    OptionError,
    SchemaMismatchError,
    UnsupportedOperationError,
    UnsupportedOptionError,
)
from paimon_pyspark.fs.options import fs_options
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
from paimon_pyspark.spark.job import TableRef, TaskResult, WriteJob
from paimon_pyspark.spark.merge_schema import align_batches, merge_into_table, pop_merge_options
from paimon_pyspark.spark.native import SKIP_RAW_SPLITS, is_raw
from paimon_pyspark.spark.reader_options import COLUMNS, FILTER, METADATA_COLUMNS, PARALLELISM
from paimon_pyspark.spark.schema import spark_arrow_schema, spark_schema
from paimon_pyspark.spark.streaming import (
    PaimonStreamReader,
    PaimonStreamWriter,
    stream_reader,
    stream_writer,
)
from paimon_pyspark.spark.tables import (
    OVERWRITE_PARTITION,
    ensure_table,
    plan_overwrite,
    table_options,
)
from paimon_pyspark.spark.write import commit_or_abort
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.system_tables import SystemTable
from paimon_pyspark.table.upsert import refuse_upsert

DEFAULT_PARALLELISM = os.cpu_count() or 2
MAX_PARTITION_BYTES = 128 * 1024 * 1024
"""Spark's spark.sql.files.maxPartitionBytes default."""


def _locate(options: dict[str, str]) -> tuple[str, str]:
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


class PaimonDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "paimon"

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        self.opts = {str(k).lower(): str(v) for k, v in dict(options).items()}
        self.warehouse, self.identifier = _locate(self.opts)

    def _ref(self) -> TableRef:
        opts = table_options(self.opts)
        snapshot = self.opts.get("snapshot-id")
        if snapshot is not None:
            opts["scan.snapshot-id"] = snapshot
        return TableRef(self.warehouse, self.identifier, opts, fs_options(self.opts))

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
        meta = self._metadata(table)
        if names is None and not meta:
            return full
        by_name = {f.name: f for f in full.fields}
        fields = [by_name[n] for n in (names if names is not None else full.fieldNames())]
        return StructType(fields + _metadata_fields(meta, table, full))

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

    def reader(self, schema: StructType) -> DataSourceReader:
        ref = self._ref()
        table = ref.load()
        allowed = self._columns(table)
        meta = self._metadata(table)
        if meta:
            schema = StructType([f for f in schema.fields if f.name not in meta])
        if allowed is not None:
            kept = {a.lower() for a in allowed}
            outside = [n for n in schema.fieldNames() if n.lower() not in kept]
            if outside:
                raise SchemaMismatchError(
                    f"Table '{self.identifier}': the read schema names fields {outside} that "
                    f"option 'columns' leaves out (columns: {allowed})."
                )
        skip_raw = self.opts.get(SKIP_RAW_SPLITS, "false").lower() == "true"
        return PaimonReader(
            ref, table, schema, self.opts.get(FILTER), self._parallelism(), skip_raw, meta
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
        names = _projection(table.field_names, wanted, self.identifier)
        if len(set(names)) != len(names):
            raise OptionError(
                f"Table '{self.identifier}': option '{COLUMNS}' = '{text}' names a field twice."
            )
        return names

    def writer(self, schema: StructType, overwrite: bool) -> PaimonWriter:
        """``overwrite``: mode('overwrite') or INSERT OVERWRITE, a dynamic partition overwrite,
        or a static one with option ``overwrite-partition`` (``dt=2026-06-26,hr=10``).

        ``write.merge-schema`` (or ``mergeSchema``) merges ``schema`` into the table's first
        (spark/merge_schema.py); the session's ``spark.paimon.*`` settings do not reach a data
        source, so here it is a write option only.

        A dynamic-bucket table (HASH_DYNAMIC): every task gives a key the bucket its index or
        the job's pinned plan gives it (bucket/door_assigner.py); a partition keeps option
        ``parallelism`` buckets open (default: the driver's cores), as Java's Spark writer has
        that many assigners, at most ``dynamic-bucket.initial-buckets``."""
        if parse_table_identifier(self.identifier)[3] is not None:  # t$branch_b is written
            raise UnsupportedOperationError(
                f"Table '{self.identifier}' is a system table, which is read-only."
            )
        opts = dict(self.opts)
        merge, explicit = pop_merge_options(opts)
        ref, table = ensure_table(self.warehouse, self.identifier, schema, opts)
        if merge and merge_into_table(table, schema, explicit)[0]:
            table = ref.load()  # the merged schema is committed before any task writes
        if not overwrite:
            refuse_upsert(table.store, "df.write.format('paimon')")
        if table.primary_keys and table.bucket_mode == BucketMode.KEY_DYNAMIC:
            # two tasks may put one key in two partitions: only a shuffle by key can pick one
            raise UnsupportedOptionError(
                f"Table '{self.identifier}': format('paimon') cannot write a cross-partition "
                f"upsert table (bucket = -1, mode {table.bucket_mode}, cross-partition upsert: "
                "the primary key leaves out partition keys), since a key's rows may reach "
                "several tasks with different partitions and only one task seeing them all "
                "can keep the key in one partition; use "
                "paimon_pyspark.spark.write(df, warehouse, table), which shuffles by key."
            )
        agreed = None
        if table.primary_keys and table.bucket_mode == BucketMode.HASH_DYNAMIC:
            agreed = agreed_buckets(table.store, self._parallelism())
        spec = self.opts.get(OVERWRITE_PARTITION)
        if spec is not None and not overwrite:
            raise OptionError(
                f"Table '{self.identifier}': option '{OVERWRITE_PARTITION}' needs "
                "mode('overwrite')."
            )
        plan = plan_overwrite(table, spec) if overwrite else None
        job = WriteJob(ref, shared_buckets=True, overwrite=plan, agreed_buckets=agreed)
        return PaimonWriter(job, align=merge)

    def streamWriter(self, schema: StructType, overwrite: bool) -> PaimonStreamWriter:
        """``df.writeStream.format("paimon")``: every micro-batch committed exactly once, as
        identifier batchId under the query's commit user (spark/streaming.py)."""
        return stream_writer(
            self.warehouse, self.identifier, schema, overwrite, self.opts, self._parallelism()
        )

    def streamReader(self, schema: StructType) -> PaimonStreamReader:
        """``spark.readStream.format("paimon")``: the latest snapshot whole, then the rows each
        new snapshot adds (spark/streaming.py); columns and filter are checked as ``reader``
        checks them."""
        batch = self.reader(schema)
        assert isinstance(batch, PaimonReader)
        return stream_reader(batch.ref, batch.projection, batch.arrow_schema, batch.filter)


class PaimonPySparkDataSource(PaimonDataSource):
    """The same source under a name that cannot clash with Paimon's JVM connector."""

    @classmethod
    def name(cls) -> str:
        return "paimon_pyspark"


@dataclass(frozen=True)
class PaimonCommitMessage(WriterCommitMessage):
    """A task's TaskResult as versioned bytes (spark/job.py); Spark carries it to the driver,
    which decodes it without unpickling anything of ours."""

    payload: bytes


class PaimonWriter(DataSourceArrowWriter):
    """``align``: ``write.merge-schema`` is on, so each task aligns its batches to the
    table's latest schema by name (spark/merge_schema.py) before writing them."""

    def __init__(self, job: WriteJob, align: bool = False) -> None:
        self.job = job
        self.align = align

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        if self.align:
            table = self.job.ref.load()
            iterator = align_batches(iterator, table.arrow_schema, table.name)
        return PaimonCommitMessage(self.job.write_task(iterator).to_bytes())

    def commit(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        results = [
            TaskResult.from_bytes(m.payload) for m in messages if isinstance(m, PaimonCommitMessage)
        ]
        commit_or_abort(self.job, results)

    def abort(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        """Runs in a Python worker without a SparkContext, maybe while attempts of the failed
        job still run: it cannot wait for them, nor needs to, since the job it closes tells
        them to remove their own files when they end (spark/job.py)."""
        self.job.abort()


class PaimonReader(DataSourceReader):
    """Reads the relation's columns and rows: ``filter`` is the option's SQL text, parsed again
    on each executor (a Predicate is not sent across processes)."""

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
        """``table``: ``ref`` as the planner loaded it, for the projection and ``partitions()``
        (Spark calls both in the one planner process); the reader goes to the executors as
        ``ref`` and loads the table there. ``skip_raw``: read only what Spark's Parquet
        reader does not (spark/native.py): the splits that need a merge, without their final
        files. ``metadata``: the metadata columns that follow ``schema``'s."""
        self.skip_raw = skip_raw
        self.ref = ref
        self.filter = filter if filter is not None and filter.strip() else None
        self.parallelism = parallelism
        self.metadata = list(metadata)
        self.projection = _projection(table.field_names, schema.fieldNames(), ref.identifier)
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

    def partitions(self) -> Sequence[InputPartition]:
        """Splits packed into input partitions as Spark packs files (``pack_splits``); an append
        table's splits are cut into single files first, so a small read still uses every core.
        Each partition goes as versioned bytes (read/split_codec.py): Spark pickles the
        InputPartition to the executors, and nothing read from the warehouse goes there as a
        pickle of our objects."""
        table = self._table if self._table is not None else self.ref.load()
        rows = self._system_rows(table)
        if rows is not None:
            return [InputPartition(encode_rows(rows))]
        if isinstance(table, SystemTable):  # $audit_log, $binlog: the data table's splits
            splits = ReadBuilder(table.data_store).new_scan().plan().splits()
            open_cost = table.data_store.options.source_split_open_file_cost
            groups = pack_splits(splits, self.parallelism, open_cost)
            return [InputPartition(encode_splits(group)) for group in groups]
        splits = self._builder(table).new_scan().plan().splits()
        if self.skip_raw:
            settings = MergeSettings.from_table(table.store) if table.primary_keys else None
            dv = table.options.deletion_vectors_enabled
            splits = [s for s in splits if not is_raw(s, settings, dv)]
        if not table.primary_keys:  # nothing to merge: any file may go to any task
            splits = [s.with_files((f,)) for s in splits for f in s.files]
        open_cost = table.options.source_split_open_file_cost
        current, other = split_by_branch(splits)  # scan.fallback-branch: read/fallback_read.py
        groups = pack_splits(current, self.parallelism, open_cost)
        out = [InputPartition(encode_splits(group)) for group in groups]
        for group in pack_splits(other, self.parallelism, open_cost):
            out.append(InputPartition(mark_other(encode_splits(group))))
        return out

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        # when we plan none, Spark reads one empty partition: pyspark 4.1 passes None for it,
        # 4.2 and later InputPartition(None)
        if partition is None or partition.value is None:
            return
        types = self.arrow_schema.types
        loaded = None if is_rows(partition.value) else self.ref.load()
        if is_rows(partition.value):
            batches: Iterator[pa.RecordBatch] = iter(decode_rows(partition.value).to_batches())
        elif isinstance(loaded, SystemTable):
            batches = self._changes(loaded, partition.value)
        else:
            assert loaded is not None
            rb = self._builder(loaded).with_projection(self.projection)
            payload, other = unmark_other(partition.value)
            splits = decode_splits(payload, rb.store.partition_types)
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


def _metadata_fields(
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


def _projection(table_fields: list[str], wanted: list[str], identifier: str) -> list[str]:
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
