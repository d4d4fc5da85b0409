"""The task pipelines of compact, postpone compact, rescale and rewrite_file_index, and their
plans.

``CompactTasks`` mirrors CompactProcedure: one task per bucket (or per packed group of small
append files), each returning a CompactIncrement (compact/plan.py). ``SortCompactTasks`` is its
sort branch (``order_strategy``): one task per partition of a bucket-unaware append table,
whose files it replaces by sorted ones (compact/sort.py). ``PostponeCompactTasks``
mirrors SparkPostponeCompactProcedure: split one partition's postpone records to real buckets,
shuffle by bucket, merge each bucket (compact/postpone.py); the driver retires the postpone
files. ``RescaleTasks`` mirrors RescaleProcedure: read each real-bucket split as of the planned
snapshot and hash its rows among the new bucket count, shuffle by new bucket, write each bucket
from one task, commit one OVERWRITE of the partitions read. ``FileIndexRewriteTasks`` mirrors
RewriteFileIndexProcedure: each task rebuilds its files' indexes, the driver commits them as one
COMPACT snapshot of the files replaced by themselves. procedures/pipeline.py has the
shape they share and the runners that run them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa

from paimon_pyspark.commit.overwrite import Overwrite
from paimon_pyspark.compact.file_index_rewrite import (
    FileIndexRewriteTask,
    plan_file_index_rewrite,
    rewrite_tasks,
)
from paimon_pyspark.compact.plan import (
    CompactTask,
    PartitionFilter,
    kept_entries,
    plan_compaction,
    run_task,
)
from paimon_pyspark.compact.postpone import (
    PostponePartition,
    compact_postpone_bucket,
    group_by_bucket,
    plan_postpone,
    plan_rescale,
    rescaled_table,
    split_partition,
)
from paimon_pyspark.compact.sort import SortOrder, plan_sort, sort_partition
from paimon_pyspark.procedures.arguments import CompactRequest
from paimon_pyspark.procedures.pipeline import ProcedurePlan, Progress, TaskPipeline
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.split_codec import decode_split, encode_split
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.spec.versioned_record import RecordReader, RecordWriter
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.latest_plan import plan_latest
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.write_builder import BatchWriteBuilder

KeyedPartition = tuple[int, PostponePartition]
"""A postpone partition and the key of its bucket 0 (its bucket b has key ``offset + b``)."""
BucketRecords = tuple[CompactTask, pa.Table]
"""A real bucket's compaction and the postpone records (with ``_VALUE_KIND``) it receives."""
KeyedSplit = tuple[int, DataSplit]
"""A split to rescale and the key of its partition's new bucket 0."""

_VERSION = 1


def _keyed(magic: bytes, offset: int, payload: bytes) -> bytes:
    return RecordWriter(magic, _VERSION).write_int(offset).write_bytes(payload).to_bytes()


def _read_keyed(data: bytes, magic: bytes, what: str) -> tuple[int, bytes]:
    r = RecordReader(data, magic, {_VERSION}, what)
    offset, payload = r.read_int(), r.read_bytes()
    r.finish()
    return offset, payload


@dataclass(frozen=True)
class CompactTasks(TaskPipeline[CompactTask, CompactTask]):
    """One stage: each planned CompactTask runs where it lands."""

    def encode_input(self, item: CompactTask) -> bytes:
        return item.to_bytes()

    def decode_input(self, source: FileStoreTable, data: bytes) -> CompactTask:
        return CompactTask.from_bytes(data, source.partition_types)

    def split(self, source: FileStoreTable, item: CompactTask) -> Iterator[tuple[int, CompactTask]]:
        yield item.bucket, item

    def encode_unit(self, unit: CompactTask) -> bytes:
        return unit.to_bytes()

    def decode_unit(self, target: FileStoreTable, data: bytes) -> CompactTask:
        return CompactTask.from_bytes(data, target.partition_types)

    def run(
        self, target: FileStoreTable, commit_user: str, units: Iterable[CompactTask]
    ) -> Iterator[CommitMessage]:
        for task in units:
            message = run_task(target.store, task)
            if message is not None:
                yield message


@dataclass(frozen=True)
class SortCompactTasks(CompactTasks):
    """One stage: each partition's task sorts the partition's files by ``order``."""

    order: SortOrder

    def run(
        self, target: FileStoreTable, commit_user: str, units: Iterable[CompactTask]
    ) -> Iterator[CommitMessage]:
        for task in units:
            message = sort_partition(target.store, task, self.order)
            if message is not None:
                yield message


@dataclass(frozen=True)
class FileIndexRewriteTasks(TaskPipeline[FileIndexRewriteTask, FileIndexRewriteTask]):
    """One stage: each task rebuilds the file indexes of its files (compact/file_index_rewrite.py)
    and replaces each file by itself with its new index."""

    def encode_input(self, item: FileIndexRewriteTask) -> bytes:
        return item.to_bytes()

    def decode_input(self, source: FileStoreTable, data: bytes) -> FileIndexRewriteTask:
        return FileIndexRewriteTask.from_bytes(data, source.partition_types)

    def split(
        self, source: FileStoreTable, item: FileIndexRewriteTask
    ) -> Iterator[tuple[int, FileIndexRewriteTask]]:
        yield item.task.bucket, item

    def encode_unit(self, unit: FileIndexRewriteTask) -> bytes:
        return unit.to_bytes()

    def decode_unit(self, target: FileStoreTable, data: bytes) -> FileIndexRewriteTask:
        return FileIndexRewriteTask.from_bytes(data, target.partition_types)

    def run(
        self, target: FileStoreTable, commit_user: str, units: Iterable[FileIndexRewriteTask]
    ) -> Iterator[CommitMessage]:
        yield from rewrite_tasks(target.store, list(units))


@dataclass(frozen=True)
class PostponeCompactTasks(TaskPipeline[KeyedPartition, BucketRecords]):
    """Split per partition (replay its postpone files, hash each record to its real bucket),
    shuffle by (partition, bucket), merge each bucket with ``full`` or minor compaction."""

    full: bool
    shuffle: ClassVar[bool] = True
    INPUT: ClassVar[bytes] = b"PPpi"
    UNIT: ClassVar[bytes] = b"PPpb"

    def encode_input(self, item: KeyedPartition) -> bytes:
        return _keyed(self.INPUT, item[0], item[1].to_bytes())

    def decode_input(self, source: FileStoreTable, data: bytes) -> KeyedPartition:
        offset, payload = _read_keyed(data, self.INPUT, "postpone compaction input")
        return offset, PostponePartition.from_bytes(payload, source.partition_types)

    def split(
        self, source: FileStoreTable, item: KeyedPartition
    ) -> Iterator[tuple[int, BucketRecords]]:
        offset, part = item
        for bucket, records in sorted(split_partition(source.store, part).items()):
            yield offset + bucket, (part.bucket_task(bucket, self.full), records)

    def encode_unit(self, unit: BucketRecords) -> bytes:
        task, records = unit
        w = RecordWriter(self.UNIT, _VERSION).write_bytes(task.to_bytes())
        return w.write_arrow(records).to_bytes()

    def decode_unit(self, target: FileStoreTable, data: bytes) -> BucketRecords:
        r = RecordReader(data, self.UNIT, {_VERSION}, "postpone bucket records")
        task = CompactTask.from_bytes(r.read_bytes(), target.partition_types)
        records = r.read_arrow()
        r.finish()
        return task, records

    def run(
        self, target: FileStoreTable, commit_user: str, units: Iterable[BucketRecords]
    ) -> Iterator[CommitMessage]:
        for task, records in units:
            yield compact_postpone_bucket(target.store, task, records)


@dataclass(frozen=True)
class RescaleTasks(TaskPipeline[KeyedSplit, pa.Table]):
    """Read each split as of ``snapshot_id`` and hash its rows among ``bucket_num`` buckets,
    shuffle by (partition, new bucket), write through the rescaled table as ``planned``."""

    bucket_num: int
    snapshot_id: int
    planned: Overwrite
    shuffle: ClassVar[bool] = True
    INPUT: ClassVar[bytes] = b"PPri"
    UNIT: ClassVar[bytes] = b"PPru"

    @property
    def overwrite(self) -> Overwrite:
        return self.planned

    def source(self, table: FileStoreTable) -> FileStoreTable:
        return table.copy({"scan.snapshot-id": str(self.snapshot_id)}, time_travel=False)

    def target(self, table: FileStoreTable) -> FileStoreTable:
        return FileStoreTable.of(rescaled_table(table.store, self.bucket_num))

    def encode_input(self, item: KeyedSplit) -> bytes:
        return _keyed(self.INPUT, item[0], encode_split(item[1]))

    def decode_input(self, source: FileStoreTable, data: bytes) -> KeyedSplit:
        offset, payload = _read_keyed(data, self.INPUT, "rescale input")
        return offset, decode_split(payload, source.partition_types)

    def split(self, source: FileStoreTable, item: KeyedSplit) -> Iterator[tuple[int, pa.Table]]:
        offset, split = item
        rows = source.new_read_builder().new_read().to_arrow([split])
        if rows.num_rows == 0:
            return
        rows = rows.cast(source.arrow_schema)
        for bucket, group in group_by_bucket(source.store, rows, self.bucket_num).items():
            yield offset + bucket, group

    def encode_unit(self, unit: pa.Table) -> bytes:
        return RecordWriter(self.UNIT, _VERSION).write_arrow(unit).to_bytes()

    def decode_unit(self, target: FileStoreTable, data: bytes) -> pa.Table:
        r = RecordReader(data, self.UNIT, {_VERSION}, "rescaled rows")
        rows = r.read_arrow()
        r.finish()
        return rows

    def run(
        self, target: FileStoreTable, commit_user: str, units: Iterable[pa.Table]
    ) -> Iterator[CommitMessage]:
        builder = BatchWriteBuilder(target, commit_user, self.overwrite)
        with builder.new_write() as write:
            for rows in units:
                write.write_arrow(rows)
            yield from write.prepare_commit()


# --- plans ----------------------------------------------------------------------------------


def plan_bucket_compaction(
    request: CompactRequest, say: Progress
) -> ProcedurePlan[CompactTask, CompactTask] | None:
    """CompactProcedure's plan: one task per bucket (or small-file group) with work to do."""
    plan = plan_compaction(request.table.store, request.full, request.keep, request.buckets)
    say(
        f"planned {len(plan.tasks)} compaction task(s) over {plan.buckets_seen} bucket(s) "
        f"of {request.table.name} (snapshot {plan.snapshot_id}, "
        f"{'full' if request.full else 'minor'})"
    )
    if not plan.tasks:
        return None
    scopes = tuple((task,) for task in plan.tasks)
    return ProcedurePlan(request.table, CompactTasks(), scopes, len(plan.tasks))


def plan_sort_compaction(
    request: CompactRequest, order: SortOrder, say: Progress
) -> ProcedurePlan[CompactTask, CompactTask] | None:
    """The sort branch of CompactProcedure: one task per kept partition, all its files."""
    plan = plan_sort(request.table.store, request.keep)
    files = sum(len(t.files) for t in plan.tasks)
    say(
        f"planned {order.strategy} sort of {len(plan.tasks)} partition(s), {files} file(s) of "
        f"{request.table.name} by {', '.join(order.columns)} (snapshot {plan.snapshot_id})"
    )
    if not plan.tasks:
        return None
    scopes = tuple((task,) for task in plan.tasks)
    pipeline = SortCompactTasks(order)
    return ProcedurePlan(request.table, pipeline, scopes, len(plan.tasks), scope_name="partition")


def plan_file_index_rewrite_tasks(
    table: FileStoreTable, keep: PartitionFilter | None, say: Progress
) -> tuple[ProcedurePlan[FileIndexRewriteTask, FileIndexRewriteTask] | None, int]:
    """RewriteFileIndexProcedure's plan: every live file of the kept partitions of the latest
    snapshot, a bucket's files in one or more tasks; and how many partitions they are in."""
    plan = plan_file_index_rewrite(table.store, keep)
    say(
        f"planned file index rewrite of {plan.files} file(s) in {plan.partitions} partition(s) "
        f"of {table.name} (snapshot {plan.snapshot_id}): {len(plan.tasks)} task(s)"
    )
    if not plan.tasks:
        return None, 0
    scopes = tuple((task,) for task in plan.tasks)
    pipeline = FileIndexRewriteTasks()
    return ProcedurePlan(table, pipeline, scopes, len(plan.tasks)), plan.partitions


def idle_partitions(
    table: FileStore, keep: PartitionFilter | None, idle_ms: int, now_ms: int
) -> PartitionFilter:
    """``keep`` narrowed to the partitions whose newest live file was created at least
    ``idle_ms`` before ``now_ms`` (CompactProcedure's ``getHistoryPartition``: a partition's
    ``lastFileCreationTime`` against now minus ``partition_idle_time``; both are local
    wall-clock milliseconds, as a file's creation time is)."""

    def newest_files(snapshot: Snapshot | None) -> dict[tuple[Any, ...], int]:
        newest: dict[tuple[Any, ...], int] = {}
        if snapshot is not None:
            for e, values in kept_entries(table, snapshot, keep):
                created = e.file.creation_time or 0
                newest[values] = max(newest.get(values, created), created)
        return newest

    newest = plan_latest(table, newest_files)
    idle = {values for values, created in newest.items() if created <= now_ms - idle_ms}
    return lambda values: tuple(values) in idle


def plan_postpone_compaction(
    request: CompactRequest, say: Progress
) -> ProcedurePlan[KeyedPartition, BucketRecords] | None:
    """A postpone table's compaction: every kept partition's postpone files go into real
    buckets (one key per (partition, bucket)), and are retired in the same COMPACT snapshot."""
    table = request.table
    plan = plan_postpone(table.store, request.keep)
    say(
        f"planned postpone compaction of {len(plan.partitions)} partition(s), "
        f"{plan.file_count} postpone file(s) of {table.name} (snapshot {plan.snapshot_id})"
    )
    if not plan.partitions:
        return None
    scopes: list[tuple[KeyedPartition]] = []
    keys = 0
    for part in plan.partitions:
        scopes.append(((keys, part),))
        keys += part.num_buckets
    retired = tuple(p.removal() for p in plan.partitions)
    pipeline = PostponeCompactTasks(request.full)
    return ProcedurePlan(table, pipeline, tuple(scopes), keys, retired, "postpone partition")


def plan_rescale_tasks(
    table: FileStoreTable, bucket_num: int | None, keep: PartitionFilter | None, say: Progress
) -> ProcedurePlan[KeyedSplit, pa.Table] | None:
    """RescaleProcedure's plan: the kept partitions' real-bucket splits of the latest snapshot,
    grouped by partition (one key per (partition, new bucket))."""
    plan = plan_rescale(table.store, bucket_num, keep)
    if not plan.splits:
        say(f"no real-bucket data in the chosen partitions of {table.name}: nothing to rescale")
        return None
    n = plan.bucket_num
    by_partition: dict[bytes, list[DataSplit]] = {}
    for s in plan.splits:
        by_partition.setdefault(s.partition, []).append(s)
    scopes = tuple(
        tuple((i * n, s) for s in by_partition[p]) for i, p in enumerate(sorted(by_partition))
    )
    say(
        f"planned rescale of {len(scopes)} partition(s) of {table.name} to {n} bucket(s): "
        f"{len(plan.splits)} split(s) of snapshot {plan.snapshot_id}"
    )
    pipeline = RescaleTasks(n, plan.snapshot_id, plan.overwrite)
    return ProcedurePlan(table, pipeline, scopes, len(scopes) * n, scope_name="partition")
