"""Planning a table's compaction into independent tasks, and running one task.

Mirrors what Java's CompactProcedure does around the writers: it lists the (partition, bucket)
pairs of the latest snapshot that the ``partitions`` / ``where`` / ``buckets`` arguments keep,
hands each pair to a writer's ``compact(partition, bucket, full)`` (fixed-bucket append and
primary-key tables), or lets AppendCompactCoordinator pack small files into tasks (bucket-
unaware append tables, where ``compact_strategy`` does not matter). Here the driver already
knows each bucket's files, so buckets with nothing to do get no task at all.

A ``CompactTask`` is a frozen value with versioned bytes of its own (``to_bytes``): the same
plan runs in this process (``paimon_pyspark.procedures.compact``) or as one Spark task per
bucket (``paimon_pyspark.spark.procedures.compact``). ``run_task`` returns the CommitMessage of
one task (a CompactIncrement), the driver commits all of them as one COMPACT snapshot. The
procedures' arguments are parsed in procedures/arguments.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from paimon_pyspark.compact.append import append_dv_entries, pick_append, rewrite_append_files
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.mergetree.compaction import (
    compact_kv_bucket,
    strategy_of,
)
from paimon_pyspark.mergetree.record_expire import RecordLevelExpire
from paimon_pyspark.mergetree.universal import Levels, key_order, pick_full_compaction, pick_minor
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.manifest import IndexFileMeta, ManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.spec.versioned_record import RecordReader, RecordWriter
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.latest_plan import plan_latest
from paimon_pyspark.store.path_checks import check_listed_file
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataType
from paimon_pyspark.write.compact_manager import dv_bases, restore_dv

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

KV = "kv"
APPEND = "append"

PartitionFilter = Callable[[Sequence[Any]], bool]
"""Partition values -> kept by the procedure's ``partitions`` / ``where`` arguments?"""


@dataclass(frozen=True)
class CompactTask:
    """One unit of compaction work, self-contained so that it can travel to an executor.

    ``kind`` ``kv``: every file of a primary-key bucket, picked from in the task (as a Java
    writer does); a postpone compaction merges its records into such a bucket. ``append``:
    exactly the append files to rewrite into one, in order. ``dv_index``: a primary-key
    bucket's deletion-vector index file in the planned snapshot (its vectors are those of
    ``files``), empty when it has none.
    """

    kind: str
    partition: bytes
    partition_values: tuple[Any, ...]
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    full: bool
    dv_index: tuple[IndexFileMeta, ...] = ()

    MAGIC: ClassVar[bytes] = b"PPct"
    VERSION: ClassVar[int] = 2

    def to_bytes(self) -> bytes:
        """Versioned bytes (spec/versioned_record.py); the partition values travel as the
        partition row, read back with the table's partition types."""
        w = RecordWriter(self.MAGIC, self.VERSION).write_str(self.kind)
        w.write_bytes(self.partition).write_int(self.bucket).write_int(self.total_buckets)
        w.write_files(self.files).write_bool(self.full)
        return write_index_files(w, self.partition, self.bucket, self.dv_index).to_bytes()

    def message(
        self,
        before: Sequence[DataFileMeta],
        after: Sequence[DataFileMeta],
        dv_written: IndexFileMeta | None = None,
        changelog: Sequence[DataFileMeta] = (),
    ) -> CommitMessage:
        """The task's result: its inputs replaced (compact_before) by its outputs, the
        changelog files its rewrites produced; and the bucket's new deletion-vector index
        file, which replaces ``dv_index`` (see write/compact_manager.py's
        MergeTreeWriteCompaction)."""
        increment = CompactIncrement(
            compact_before=tuple(before),
            compact_after=tuple(after),
            changelog_files=tuple(changelog),
        )
        if dv_written is not None:
            increment = replace(
                increment, new_index_files=(dv_written,), deleted_index_files=self.dv_index
            )
        return CommitMessage(
            self.partition, self.bucket, self.total_buckets, compact_increment=increment
        )

    @staticmethod
    def from_bytes(data: bytes, partition_types: Sequence[DataType]) -> CompactTask:
        r = RecordReader(data, CompactTask.MAGIC, {1, CompactTask.VERSION}, "compaction task")
        kind = r.read_str()
        if kind not in (KV, APPEND):
            raise r.error(f"unknown kind {kind!r}")
        partition, values = r.read_partition(partition_types)
        bucket, total = r.read_int(), r.read_int()
        files, full = r.read_files(), r.read_bool()
        dv_index = read_index_files(r) if r.version >= 2 else ()
        r.finish()
        return CompactTask(kind, partition, values, bucket, total, files, full, dv_index)


def write_index_files(
    w: RecordWriter, partition: bytes, bucket: int, metas: Sequence[IndexFileMeta]
) -> RecordWriter:
    """Index file metadata in a record: as the index files of a CommitMessage of their bucket,
    so CommitMessageSerializer's IndexFileMeta codec (Java's) is the one that writes them."""
    carrier = CompactIncrement(new_index_files=tuple(metas))
    return w.write_messages([CommitMessage(partition, bucket, None, compact_increment=carrier)])


def read_index_files(r: RecordReader) -> tuple[IndexFileMeta, ...]:
    messages = r.read_messages()
    if len(messages) != 1:
        raise r.error(f"{len(messages)} carriers of index files, expected 1")
    return messages[0].compact_increment.new_index_files


@dataclass(frozen=True)
class CompactPlan:
    snapshot_id: int | None
    tasks: tuple[CompactTask, ...]
    buckets_seen: int


# --- planning -------------------------------------------------------------------------------


def kept_entries(
    table: FileStore, snapshot: Snapshot, keep_partition: PartitionFilter | None
) -> Iterator[tuple[ManifestEntry, tuple[Any, ...]]]:
    """The live entries of ``snapshot`` in the partitions ``keep_partition`` keeps, each with
    its partition values (read, and tested, once per partition). Every planner's entries come
    from here: a file whose name or external path is not the table's is refused as the scan
    refuses it (store/path_checks.py), before any task names it."""
    kept: dict[bytes, tuple[Any, ...] | None] = {}
    where = f"snapshot {snapshot.id}"
    for e in table.manifest_io.live_entries(snapshot):
        check_listed_file(table, e.file, where)
        if e.partition not in kept:
            values = tuple(deserialize_with_arity(e.partition, table.partition_types))
            keep = keep_partition is None or keep_partition(values)
            kept[e.partition] = values if keep else None
        found = kept[e.partition]
        if found is not None:
            yield e, found


def plan_compaction(
    table: FileStore,
    full: bool,
    keep_partition: PartitionFilter | None = None,
    buckets: set[int] | None = None,
) -> CompactPlan:
    """The tasks of one compaction of the latest snapshot (empty: nothing to compact),
    planned again on the newest one if it expires meanwhile (store/latest_plan.py)."""
    return plan_latest(table, lambda s: _plan_compaction(table, s, full, keep_partition, buckets))


def _plan_compaction(
    table: FileStore,
    snapshot: Snapshot | None,
    full: bool,
    keep_partition: PartitionFilter | None,
    buckets: set[int] | None,
) -> CompactPlan:
    if snapshot is None:
        return CompactPlan(None, (), 0)
    groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    totals: dict[tuple[bytes, int], int] = {}
    values_of: dict[bytes, tuple[Any, ...]] = {}
    for e, values in kept_entries(table, snapshot, keep_partition):
        if e.bucket < 0 or (buckets is not None and e.bucket not in buckets):
            continue
        values_of[e.partition] = values
        groups.setdefault((e.partition, e.bucket), []).append(e.file)
        totals[(e.partition, e.bucket)] = e.total_buckets
    s = CompactSettings.of(table)
    dv_entries = append_dv_entries(table, snapshot)
    kv_vectors = dv_bases(table, snapshot) if table.primary_keys else {}
    tasks: list[CompactTask] = []
    for (partition, bucket), files in groups.items():
        total = totals[(partition, bucket)]
        values = values_of[partition]
        if table.primary_keys:
            base = kv_vectors.get((partition, bucket))
            dv = (base,) if base is not None else ()
            if _kv_has_work(table, files, full, s, dv):
                tasks.append(
                    CompactTask(KV, partition, values, bucket, total, tuple(files), full, dv)
                )
        else:
            picks = pick_append(table, snapshot, partition, bucket, files, full, s, dv_entries)
            for group in picks:
                tasks.append(
                    CompactTask(APPEND, partition, values, bucket, total, tuple(group), full)
                )
    return CompactPlan(snapshot.id, tuple(tasks), len(groups))


def _kv_has_work(
    table: FileStore,
    files: Sequence[DataFileMeta],
    full: bool,
    s: CompactSettings,
    dv_index: Sequence[IndexFileMeta] = (),
) -> bool:
    """Whether the first round of the bucket's compaction picks anything (a second round only
    runs on what the first one changed, so no first pick means no work). ``dv_index``: the
    bucket's deletion-vector index file (a full compaction rewrites top-level files with a
    vector)."""
    types = [table.table_schema.field(k).type for k in table.table_schema.trimmed_primary_keys()]
    levels = Levels(files, s.num_levels, key_order(types))
    runs = levels.level_sorted_runs()
    if full:
        with_vector = {r.data_file_name for m in dv_index for r in m.dv_ranges or ()}
        expire = RecordLevelExpire.create(table)
        unit = pick_full_compaction(
            levels.num_levels,
            runs,
            s.force_rewrite_all_files,
            with_vector.__contains__,
            expire.is_expire_file if expire is not None else None,
        )
        return unit is not None
    return pick_minor(strategy_of(s), levels.num_levels, runs) is not None


# --- running --------------------------------------------------------------------------------


def run_task(table: FileStore, task: CompactTask) -> CommitMessage | None:
    """Compact one task's files; the message holds inputs as compact_before, outputs after."""
    if task.kind == KV:
        dv = restore_dv(table, task.dv_index[0] if task.dv_index else None)
        result = compact_kv_bucket(
            table, task.partition_values, task.bucket, task.files, task.full, dv=dv
        )
        before, after, changelog = result
        if dv is None or result.is_empty():
            return None if result.is_empty() else task.message(before, after, None, changelog)
        try:
            written = dv.write_index(PathFactory(table.path))
        except BaseException:
            _delete_outputs(table, task, before, [*after, *changelog])
            raise
        return task.message(before, after, written, changelog)
    else:
        before = list(task.files)
        after, index = rewrite_append_files(
            table, task.partition, task.partition_values, task.bucket, task.files
        )
        if not index.is_empty():
            message = task.message(before, after)
            increment = replace(
                message.compact_increment,
                new_index_files=index.added,
                deleted_index_files=index.deleted,
            )
            return replace(message, compact_increment=increment)
    if not before and not after:
        return None
    return task.message(before, after)


def _delete_outputs(
    table: FileStore,
    task: CompactTask,
    before: Sequence[DataFileMeta],
    after: Sequence[DataFileMeta],
) -> None:
    """Delete the files a compaction of ``task`` wrote (never an upgraded input)."""
    inputs = {f.file_name for f in before}
    path = table.bucket_path(task.partition_values, task.bucket)
    for f in after:
        if f.file_name not in inputs:
            table.file_io.delete_quietly(data_file_path(table.external_paths, path, f))


def written_only(message: CommitMessage) -> CommitMessage:
    """The message with only the files its task wrote: what an abort may delete.

    An upgraded file is in compact_before and compact_after under the same name; it is a live
    file of the table and must survive an aborted compaction.
    """
    increment = message.compact_increment
    inputs = {f.file_name for f in increment.compact_before}
    written = tuple(f for f in increment.compact_after if f.file_name not in inputs)
    kept = CompactIncrement(compact_after=written, new_index_files=increment.new_index_files)
    return replace(message, compact_increment=kept)
