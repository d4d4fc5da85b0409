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

Filters are not pushed down: pyspark 4.3 keeps the reader that ``pushFilters`` configured on the
relation and reuses it for a later query on the same DataFrame or view that pushes no filter, so
a pushed predicate would silently drop rows from that query. Spark filters the rows itself.
Nor does Spark prune columns for a Python source; a schema given to the reader
(``spark.read.format("paimon").schema("id BIGINT, amount DOUBLE")``) reads only those columns.
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
from pyspark.sql.types import StructType

from paimon_pyspark.errors import (
    CatalogError,
    OptionError,
    SchemaMismatchError,
    UnsupportedOptionError,
)
from paimon_pyspark.fs.options import fs_options
from paimon_pyspark.spark.job import TableRef, TaskResult, WriteJob
from paimon_pyspark.spark.schema import spark_arrow_schema, spark_schema
from paimon_pyspark.spark.tables import (
    OVERWRITE_PARTITION,
    ensure_table,
    plan_overwrite,
    table_options,
)
from paimon_pyspark.spark.write import commit_or_abort
from paimon_pyspark.store.bucket_mode import BucketMode


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

    def schema(self) -> StructType:
        return spark_schema(self._ref().load())

    def reader(self, schema: StructType) -> DataSourceReader:
        return PaimonReader(self._ref(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> PaimonWriter:
        """``overwrite``: mode('overwrite') or INSERT OVERWRITE, a dynamic partition overwrite,
        or a static one with option ``overwrite-partition`` (``dt=2026-06-26,hr=10``)."""
        ref, table = ensure_table(self.warehouse, self.identifier, schema, self.opts)
        if table.primary_keys and table.bucket_mode in (
            BucketMode.HASH_DYNAMIC,
            BucketMode.KEY_DYNAMIC,
        ):
            # each task would run its own bucket assigner: a key could land in two buckets
            mode = str(table.bucket_mode)
            if table.bucket_mode == BucketMode.KEY_DYNAMIC:
                mode += ", cross-partition upsert"
            raise UnsupportedOptionError(
                f"Table '{self.identifier}': format('paimon') cannot write a dynamic-bucket "
                f"primary-key table (bucket = -1, mode {mode}), since Spark gives "
                "a Python data source no way to route keys to one assigner; use "
                "paimon_pyspark.spark.write(df, warehouse, table), which does."
            )
        spec = self.opts.get(OVERWRITE_PARTITION)
        if spec is not None and not overwrite:
            raise OptionError(
                f"Table '{self.identifier}': option '{OVERWRITE_PARTITION}' needs "
                "mode('overwrite')."
            )
        plan = plan_overwrite(table, spec) if overwrite else None
        return PaimonWriter(WriteJob(ref, shared_buckets=True, overwrite=plan))


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
    def __init__(self, job: WriteJob) -> None:
        self.job = job

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
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
    def __init__(self, ref: TableRef, schema: StructType) -> None:
        self.ref = ref
        self.arrow_schema = spark_arrow_schema(schema)
        self.projection = _projection(ref.load().field_names, schema.fieldNames(), ref.identifier)

    def partitions(self) -> Sequence[InputPartition]:
        rb = self.ref.load().new_read_builder()
        return [InputPartition(split) for split in rb.new_scan().plan().splits()]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:  # Spark reads one empty partition when we plan none
            return
        rb = self.ref.load().new_read_builder().with_projection(self.projection)
        reader = rb.new_read().to_arrow_batch_reader([partition.value])
        target = self.arrow_schema
        for batch in reader:
            columns = [batch.column(i).cast(target.field(i).type) for i in range(batch.num_columns)]
            yield pa.RecordBatch.from_arrays(columns, schema=target)


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
