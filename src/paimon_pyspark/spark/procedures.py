"""Java's ``CALL sys.*`` procedures as Spark jobs: the driver plans, executors work, the
driver commits once.

``compact`` mirrors org.apache.paimon.spark.procedure.CompactProcedure: the driver plans the
compaction tasks (one per bucket of primary-key and fixed-bucket append tables, one per packed
group of small files of bucket-unaware tables), Spark runs one task per plan entry, each
returning its CommitMessages, and the driver commits them as one COMPACT snapshot. Tasks record
the files they wrote in the write job's staging area (spark/job.py), so a failed job, and every
attempt Spark did not keep, leaves no snapshot and no files behind. A postpone-bucket table's
compaction runs in two stages (``_compact_postpone``): split per partition, merge per bucket.

``rescale`` mirrors RescaleProcedure: one task per real-bucket split reads its rows and hashes
them among the new bucket count, a shuffle brings each new bucket to one task, which writes it,
and the driver commits one OVERWRITE of the partitions read.
"""

from __future__ import annotations

import itertools
import os
import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession

from paimon_pyspark.catalog.filesystem_catalog import CatalogFactory
from paimon_pyspark.compact.plan import (
    CompactTask,
    PartitionFilter,
    PartitionSpecs,
    parse_partitions,
    partition_filter,
    run_task,
    written_only,
)
from paimon_pyspark.compact.postpone import (
    PostponeBucketTask,
    PostponePartition,
    PostponePlan,
    compact_postpone_bucket,
    group_by_bucket,
    plan_postpone,
    plan_rescale,
    rescaled_table,
    split_partition,
)
from paimon_pyspark.errors import PaimonError
from paimon_pyspark.procedures import CompactRequest, Progress, reporter
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.spark.job import FINISHED, TableRef, TaskResult, WriteJob
from paimon_pyspark.spark.write import commit_or_abort
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.table_commit import TableCommit


@dataclass(frozen=True)
class CompactJob(WriteJob):
    """A WriteJob whose tasks compact instead of write; commit and cleanup are the same.

    The staging record of a task lists only the files it wrote: an upgraded file appears in
    its message as an input and an output, and must never be deleted by a cleanup.
    """

    def compact_task(self, tasks: Iterable[CompactTask]) -> TaskResult:
        table = self.ref.load()
        messages: list[CommitMessage] = []
        try:
            for task in tasks:
                message = run_task(table.store, task)
                if message is not None:
                    messages.append(message)
            record = self._save_record(table, [written_only(m) for m in messages])
            if table.file_io.exists(os.path.join(self.staging_dir(table), FINISHED)):
                raise PaimonError(f"compact job {self.commit_user} already finished")
        except BaseException:
            TableCommit(table.store, self.commit_user).abort([written_only(m) for m in messages])
            raise
        return TaskResult(record, tuple(messages))

    def postpone_merge_task(
        self, items: Iterable[tuple[PostponeBucketTask, pa.Table]]
    ) -> TaskResult:
        """The merge step of a postpone compaction for the buckets this Spark task received."""
        table = self.ref.load()
        messages: list[CommitMessage] = []
        try:
            for task, records in items:
                messages.append(compact_postpone_bucket(table.store, task, records))
            record = self._save_record(table, [written_only(m) for m in messages])
            if table.file_io.exists(os.path.join(self.staging_dir(table), FINISHED)):
                raise PaimonError(f"compact job {self.commit_user} already finished")
        except BaseException:
            TableCommit(table.store, self.commit_user).abort([written_only(m) for m in messages])
            raise
        return TaskResult(record, tuple(messages))


def compact(
    spark: SparkSession,
    warehouse: str,
    table: str,
    partitions: PartitionSpecs = None,
    compact_strategy: str | None = None,
    where: Predicate | None = None,
    options: str | Mapping[str, Any] | None = None,
    buckets: str | Sequence[int] | None = None,
    progress: Progress | None = None,
) -> int | None:
    """Compact ``table`` with a Spark job; the id of the COMPACT snapshot, or None.

    Arguments as ``paimon_pyspark.procedures.compact`` (Java's ``CALL sys.compact``).
    """
    say = reporter(progress)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    request = CompactRequest.of(
        catalog.get_table(table), partitions, compact_strategy, where, options, buckets
    )
    ref = TableRef(warehouse, table, request.dynamic)
    if request.table.bucket_mode == BucketMode.POSTPONE_MODE:
        return _compact_postpone(spark, ref, request.table, request.full, request.keep, say)
    plan = request.plan(say)
    if not plan.tasks:
        return None
    job = CompactJob(ref)
    payloads = [pickle.dumps(t) for t in plan.tasks]
    rdd = spark.sparkContext.parallelize(payloads, len(payloads))
    try:
        collected = rdd.mapPartitions(_task_fn(job)).collect()
    except BaseException:
        job.abort()
        raise
    results = [TaskResult.from_bytes(b) for b in collected]
    say(f"ran {len(results)} Spark task(s); committing")
    ids = commit_or_abort(job, results)
    say(f"committed snapshot {ids[-1] if ids else None} of {table}")
    return ids[-1] if ids else None


def _compact_postpone(
    spark: SparkSession,
    ref: TableRef,
    loaded: FileStoreTable,
    full: bool,
    keep: PartitionFilter | None,
    say: Progress,
) -> int | None:
    """A postpone table's compaction as a Spark job (compact/postpone.py has the steps).

    Stage 1, one task per partition: replay its postpone files and hash the records to real
    buckets; each (partition, bucket) group travels as Arrow IPC bytes through Spark's shuffle,
    keyed by its index among all (partition, bucket) pairs. Stage 2, the groups spread over
    up to ``_MAX_MERGE_TASKS`` tasks: merge each group into its bucket. The driver adds one
    message per partition retiring its postpone files and commits once.
    """
    plan = plan_postpone(loaded.store, keep)
    say(
        f"planned postpone compaction of {len(plan.partitions)} partition(s), "
        f"{plan.file_count} postpone file(s) of {ref.identifier} (snapshot {plan.snapshot_id})"
    )
    if not plan.partitions:
        return None
    job = CompactJob(ref)
    keys: list[tuple[int, int]] = []
    offsets: list[int] = []
    for i, part in enumerate(plan.partitions):
        offsets.append(len(keys))
        keys += [(i, b) for b in range(part.num_buckets)]
    merge_tasks = min(len(keys), _MAX_MERGE_TASKS)
    payloads = [pickle.dumps((i, p)) for i, p in enumerate(plan.partitions)]
    sc = spark.sparkContext
    try:
        groups = sc.parallelize(payloads, len(payloads)).mapPartitions(_split_fn(ref, offsets))
        shuffled = groups.partitionBy(merge_tasks, _identity)
        collected = shuffled.mapPartitions(_merge_fn(job, plan, keys, full)).collect()
    except BaseException:
        job.abort()
        raise
    results = [TaskResult.from_bytes(b) for b in collected]
    removals = tuple(p.removal() for p in plan.partitions)
    say(f"ran {len(results)} merge task(s) over {len(keys)} bucket(s); committing")
    ids = commit_or_abort(job, [*results, TaskResult("postpone-files-retired", removals)])
    say(f"committed snapshot {ids[-1] if ids else None} of {ref.identifier}")
    return ids[-1] if ids else None


_MAX_MERGE_TASKS = 1024


def _identity(key: int) -> int:
    return key


def _split_fn(ref: TableRef, offsets: list[int]) -> Any:
    def run(payloads: Iterator[bytes]) -> Iterator[tuple[int, bytes]]:
        table = ref.load()
        for payload in payloads:
            index, part = pickle.loads(payload)
            if not isinstance(part, PostponePartition):
                raise PaimonError(f"Unexpected postpone partition {type(part).__name__}")
            for bucket, records in split_partition(table.store, part).items():
                yield offsets[index] + bucket, _to_ipc(records)

    return run


def _merge_fn(job: CompactJob, plan: PostponePlan, keys: list[tuple[int, int]], full: bool) -> Any:
    def run(items: Iterator[tuple[int, bytes]]) -> Iterator[bytes]:
        work = []
        for key, payload in items:
            index, bucket = keys[key]
            task = plan.bucket_task(plan.partitions[index], bucket, full)
            work.append((task, _from_ipc(payload)))
        if work:
            yield job.postpone_merge_task(work).to_bytes()

    return run


def _to_ipc(records: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, records.schema) as writer:
        writer.write_table(records)
    return bytes(sink.getvalue())


def _from_ipc(payload: bytes) -> pa.Table:
    return pa.ipc.open_stream(payload).read_all()


def _task_fn(job: CompactJob) -> Any:
    def run(payloads: Iterator[bytes]) -> Iterator[bytes]:
        tasks = [_load_task(p) for p in payloads]
        yield job.compact_task(tasks).to_bytes()

    return run


def _load_task(payload: bytes) -> CompactTask:
    task = pickle.loads(payload)
    if not isinstance(task, CompactTask):
        raise PaimonError(f"Unexpected compaction task {type(task).__name__}")
    return task


@dataclass(frozen=True)
class RescaledTableRef(TableRef):
    """The table as a rescale writes and commits it: ``bucket = bucket_num`` in its schema
    options (compact/postpone.py's ``rescaled_table``)."""

    bucket_num: int = 1

    def load(self) -> FileStoreTable:
        return FileStoreTable.of(rescaled_table(super().load().store, self.bucket_num))


def rescale(
    spark: SparkSession,
    warehouse: str,
    table: str,
    bucket_num: int | None = None,
    partition: PartitionSpecs = None,
    progress: Progress | None = None,
) -> int | None:
    """Rescale ``table`` with a Spark job; the id of the OVERWRITE snapshot, or None if the
    chosen partitions have no real-bucket data.

    Arguments as ``paimon_pyspark.procedures.rescale`` (Java's ``CALL sys.rescale``). Stage 1,
    one task per split of the latest snapshot's real buckets (postpone files are never read and
    stay): read the rows merged and hash them among ``bucket_num`` buckets; each (partition,
    new bucket) group travels as Arrow IPC through Spark's shuffle, keyed by its index. Stage 2:
    each task writes the groups it received through the rescaled table, so every new bucket has
    one writer. The driver commits once, as an overwrite of the partitions written; a failed
    job leaves no snapshot and no files.
    """
    say = reporter(progress)
    loaded = CatalogFactory.create({"warehouse": warehouse}).get_table(table)
    keep = partition_filter(loaded.store, parse_partitions(partition), None)
    plan = plan_rescale(loaded.store, bucket_num, keep)
    if not plan.splits:
        say(f"no real-bucket data in the chosen partitions of {table}: nothing to rescale")
        return None
    n = plan.bucket_num
    source = TableRef(warehouse, table, {"scan.snapshot-id": str(plan.snapshot_id)})
    job = WriteJob(RescaledTableRef(warehouse, table, bucket_num=n), overwrite=plan.overwrite)
    partitions = {p: i for i, p in enumerate(sorted({s.partition for s in plan.splits}))}
    payloads = [pickle.dumps((partitions[s.partition] * n, s)) for s in plan.splits]
    write_tasks = min(len(partitions) * n, _MAX_MERGE_TASKS)
    say(
        f"planned rescale of {len(partitions)} partition(s) of {table} to {n} bucket(s): "
        f"{len(payloads)} split(s) of snapshot {plan.snapshot_id}"
    )
    sc = spark.sparkContext
    try:
        groups = sc.parallelize(payloads, len(payloads)).mapPartitions(_rescale_read_fn(source, n))
        shuffled = groups.partitionBy(write_tasks, _identity)
        collected = shuffled.mapPartitions(_rescale_write_fn(job)).collect()
    except BaseException:
        job.abort()
        raise
    results = [TaskResult.from_bytes(b) for b in collected]
    say(f"ran {len(results)} write task(s); committing")
    ids = commit_or_abort(job, results)
    say(f"rescaled to {n} bucket(s): snapshot {ids[-1] if ids else None} of {table}")
    return ids[-1] if ids else None


def _rescale_read_fn(source: TableRef, bucket_num: int) -> Any:
    def run(payloads: Iterator[bytes]) -> Iterator[tuple[int, bytes]]:
        table = source.load()
        read = table.new_read_builder().new_read()
        for payload in payloads:
            offset, split = pickle.loads(payload)
            if not isinstance(split, DataSplit):
                raise PaimonError(f"Unexpected split {type(split).__name__}")
            rows = read.to_arrow([split])
            if rows.num_rows == 0:
                continue
            rows = rows.cast(table.arrow_schema)
            for bucket, group in group_by_bucket(table.store, rows, bucket_num).items():
                yield offset + bucket, _to_ipc(group)

    return run


def _rescale_write_fn(job: WriteJob) -> Any:
    def run(items: Iterator[tuple[int, bytes]]) -> Iterator[bytes]:
        first = next(items, None)
        if first is None:
            return
        batches = (
            batch
            for _, payload in itertools.chain([first], items)
            for batch in _from_ipc(payload).to_batches()
        )
        yield job.write_task(batches).to_bytes()

    return run
