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
Reads plan and read as ``paimon_pyspark.spark.read`` does (spark/relation.py): one input
partition per task's payload of versioned bytes.

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

from paimon_pyspark.bucket.door_assigner import agreed_buckets
from paimon_pyspark.catalog.identifiers import parse_table_identifier
from paimon_pyspark.errors import (
    OptionError,
    UnsupportedOperationError,
    UnsupportedOptionError,
)
from paimon_pyspark.spark.job import TaskResult, WriteJob
from paimon_pyspark.spark.merge_schema import align_batches, merge_into_table, pop_merge_options
from paimon_pyspark.spark.relation import Relation, RelationRead
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
)
from paimon_pyspark.spark.write import commit_or_abort
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.table.upsert import refuse_upsert


class PaimonDataSource(Relation, DataSource):
    """The options resolve as every read door resolves them (spark/relation.py)."""

    @classmethod
    def name(cls) -> str:
        return "paimon"

    def __init__(self, options: Any) -> None:
        DataSource.__init__(self, options)
        Relation.__init__(self, options)

    def reader(self, schema: StructType) -> DataSourceReader:
        return self.read_for(schema, PaimonReader)

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


class PaimonReader(RelationRead, DataSourceReader):
    """The relation's reader (spark/relation.py) as Spark drives a Python source: one input
    partition per payload, which Spark pickles to the executors as the bytes it is."""

    def partitions(self) -> Sequence[InputPartition]:
        return [InputPartition(payload) for payload in self.plan()]

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        # when we plan none, Spark reads one empty partition: pyspark 4.1 passes None for it,
        # 4.2 and later InputPartition(None)
        return self.batches(None if partition is None else partition.value)
