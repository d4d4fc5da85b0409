"""Compaction of postpone-bucket tables: postpone files into real buckets; and rescale.

Mirrors what Java's postpone compaction does (Spark's SparkPostponeCompactProcedure, Flink's
CompactAction.buildForPostponeBucketCompaction with PostponeBucketCompactSplitSource and
BucketFiles), split into two steps that can run on different machines:

    plan      per partition with postpone files: the files in write order, and the bucket
              count (the partition's real buckets' count, else postpone.default-bucket-num,
              as PostponeUtils.getKnownNumBuckets and the procedures decide)
    split     one task per partition: replay the files' records (row kinds kept, order kept)
              and hash each to its real bucket with the table's bucket function
    merge     one task per (partition, bucket): number the records after the bucket's highest
              sequence number (so they are newer than everything in the bucket, as Java's
              bucket writer numbers them), flush them as a level-0 run, then compact the bucket
              with the table's merge engine: ``full`` takes it to the top level, ``minor`` is
              the writer's universal pick
    commit    one COMPACT snapshot: per real bucket compact_before = the inputs replaced,
              compact_after = the outputs (total buckets recorded); per partition one message
              for bucket -2 whose compact_before lists its postpone files

Unlike Java (whose procedures refuse ``partitions`` for postpone tables), the plan takes any
partition filter: only the chosen partitions' postpone files are consumed.

A primary key without every partition key changes nothing here, as in Java, whose postpone
compaction writes through a fixed-bucket copy of the table: there is no global key index, each
partition's records are hashed by the trimmed primary key among its own buckets, and a key in
two partitions stays in both.

``plan_rescale`` / ``rescaled_table`` mirror Java's RescaleProcedure: the real buckets of the
chosen partitions (never their postpone files) are read merged and written anew with
``bucket_num`` buckets, committed as an OVERWRITE of those partitions; ``procedures.rescale``
runs it in this process, ``spark.procedures.rescale`` as a Spark job.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pyarrow as pa

from paimon_pyspark.bucket.fixed import FixedBucketAssigner
from paimon_pyspark.commit.overwrite import Overwrite
from paimon_pyspark.compact.plan import (
    KV,
    CompactTask,
    PartitionFilter,
    kept_entries,
    read_index_files,
    write_index_files,
)
from paimon_pyspark.errors import CompactArgumentError
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.merge.merge_function import MergeSettings, merge, sort_records
from paimon_pyspark.mergetree.compaction import compact_kv_bucket
from paimon_pyspark.mergetree.sorted_run_writer import write_changelog, write_sorted_run
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement
from paimon_pyspark.spec.data_file_meta import (
    FILE_SOURCE_APPEND,
    FILE_SOURCE_COMPACT,
    DataFileMeta,
)
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.spec.versioned_record import RecordReader, RecordWriter
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET, BucketMode
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.latest_plan import plan_latest
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.store.postpone import known_num_buckets, order_postpone_files
from paimon_pyspark.types.data_types import DataType
from paimon_pyspark.write.compact_manager import dv_bases, restore_dv

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


@dataclass(frozen=True)
class PostponePartition:
    """The postpone files of one partition, in write order, its real bucket count, and the
    live files of its real buckets (what their compaction merges the records into), with their
    deletion-vector index files (``bucket_dv``, tables with deletion vectors)."""

    partition: bytes
    partition_values: tuple[Any, ...]
    num_buckets: int
    files: tuple[DataFileMeta, ...]
    bucket_files: dict[int, tuple[DataFileMeta, ...]] = field(default_factory=dict)
    bucket_dv: dict[int, IndexFileMeta] = field(default_factory=dict)

    MAGIC: ClassVar[bytes] = b"PPpp"
    VERSION: ClassVar[int] = 2

    def removal(self) -> CommitMessage:
        """The message that retires this partition's postpone files (bucket -2)."""
        increment = CompactIncrement(compact_before=self.files)
        return CommitMessage(
            self.partition, POSTPONE_BUCKET, POSTPONE_BUCKET, compact_increment=increment
        )

    def bucket_task(self, bucket: int, full: bool) -> CompactTask:
        """The compaction of real bucket ``bucket`` that receives this partition's records."""
        files = self.bucket_files.get(bucket, ())
        found = self.bucket_dv.get(bucket)
        dv = (found,) if found is not None else ()
        return CompactTask(
            KV, self.partition, self.partition_values, bucket, self.num_buckets, files, full, dv
        )

    def to_bytes(self) -> bytes:
        """Versioned bytes (spec/versioned_record.py), as CompactTask.to_bytes."""
        w = RecordWriter(self.MAGIC, self.VERSION).write_bytes(self.partition)
        w.write_int(self.num_buckets).write_files(self.files).write_int(len(self.bucket_files))
        for bucket, files in self.bucket_files.items():
            w.write_int(bucket).write_files(files)
        w.write_int(len(self.bucket_dv))
        for bucket, meta in self.bucket_dv.items():
            write_index_files(w.write_int(bucket), self.partition, bucket, [meta])
        return w.to_bytes()

    @staticmethod
    def from_bytes(data: bytes, partition_types: Sequence[DataType]) -> PostponePartition:
        r = RecordReader(
            data, PostponePartition.MAGIC, {1, PostponePartition.VERSION}, "postpone partition"
        )
        partition, values = r.read_partition(partition_types)
        num_buckets, files = r.read_int(), r.read_files()
        buckets = {}
        for _ in range(r.read_int()):
            bucket = r.read_int()
            buckets[bucket] = r.read_files()
        vectors: dict[int, IndexFileMeta] = {}
        for _ in range(r.read_int() if r.version >= 2 else 0):
            bucket = r.read_int()
            metas = read_index_files(r)
            if len(metas) != 1:
                raise r.error(f"bucket {bucket} has {len(metas)} deletion-vector index files")
            vectors[bucket] = metas[0]
        r.finish()
        return PostponePartition(partition, values, num_buckets, files, buckets, vectors)


@dataclass(frozen=True)
class PostponePlan:
    snapshot_id: int | None
    partitions: tuple[PostponePartition, ...]

    @property
    def file_count(self) -> int:
        return sum(len(p.files) for p in self.partitions)


def plan_postpone(table: FileStore, keep_partition: PartitionFilter | None) -> PostponePlan:
    """The postpone partitions of the latest snapshot that ``keep_partition`` keeps (planned
    again on the newest snapshot if it expires meanwhile)."""
    return plan_latest(table, lambda s: _plan_postpone(table, s, keep_partition))


def _plan_postpone(
    table: FileStore, snapshot: Snapshot | None, keep_partition: PartitionFilter | None
) -> PostponePlan:
    if snapshot is None:
        return PostponePlan(None, ())
    known = known_num_buckets(table, snapshot)
    default = table.options.postpone_default_bucket_num
    postpone: dict[bytes, list[DataFileMeta]] = {}
    bucket_files: dict[bytes, dict[int, list[DataFileMeta]]] = {}
    values_of: dict[bytes, tuple[Any, ...]] = {}
    for e, values in kept_entries(table, snapshot, keep_partition):
        values_of[e.partition] = values
        if e.bucket == POSTPONE_BUCKET:
            postpone.setdefault(e.partition, []).append(e.file)
        elif e.bucket >= 0:
            bucket_files.setdefault(e.partition, {}).setdefault(e.bucket, []).append(e.file)
    vectors = dv_bases(table, snapshot)
    partitions = tuple(
        PostponePartition(
            p,
            values_of[p],
            known.get(p, default),
            tuple(order_postpone_files(fs)),
            {b: tuple(files) for b, files in bucket_files.get(p, {}).items()},
            {b: meta for (q, b), meta in vectors.items() if q == p and b >= 0},
        )
        for p, fs in postpone.items()
    )
    return PostponePlan(snapshot.id, partitions)


def split_partition(table: FileStore, part: PostponePartition) -> dict[int, pa.Table]:
    """Replay one partition's postpone records and group them by real bucket, order kept.

    Each group holds the table columns and ``_VALUE_KIND`` (no sequence numbers yet).
    """
    rel = table.partition_rel_path(list(part.partition_values))
    bucket_path = PathFactory(table.path).bucket_path(rel, POSTPONE_BUCKET)
    records = read_kv_records(table, bucket_path, part.files).drop_columns([SEQUENCE_NUMBER])
    if records.num_rows == 0:
        return {}
    return group_by_bucket(table, records, part.num_buckets)


def group_by_bucket(table: FileStore, rows: pa.Table, num_buckets: int) -> dict[int, pa.Table]:
    """``rows`` grouped by the bucket their key hashes to among ``num_buckets``, order kept."""
    key_types = [table.table_schema.field(k).type for k in table.bucket_keys]
    assigner = FixedBucketAssigner(
        key_types, num_buckets, table.options.bucket_function_type, table.name
    )
    buckets = assigner.assign([rows.column(k) for k in table.bucket_keys])
    order = np.argsort(buckets, kind="stable")
    ordered = buckets[order]
    starts = [0, *(np.flatnonzero(np.diff(ordered)) + 1).tolist(), len(order)]
    return {
        int(ordered[lo]): rows.take(pa.array(order[lo:hi]))
        for lo, hi in itertools.pairwise(starts)
        if hi > lo
    }


def compact_postpone_bucket(
    table: FileStore, task: CompactTask, records: pa.Table
) -> CommitMessage:
    """Merge one bucket's postpone records (write order) into the bucket; see the module doc.

    On failure every file written here is deleted; live files of the bucket are never touched.
    """
    keys = table.table_schema.trimmed_primary_keys()
    settings = MergeSettings.from_table(table)
    values = list(task.partition_values)
    base = max((f.max_sequence_number for f in task.files), default=-1) + 1
    seq = pa.array(np.arange(base, base + records.num_rows, dtype=np.int64))
    records = records.append_column(SEQUENCE_NUMBER, seq)
    producer = table.options.changelog_producer
    inputs: list[DataFileMeta] = []
    if producer == "input":  # the bucket writer's flush writes them (Java's BucketFiles)
        records = sort_records(records, keys, settings)
        inputs = write_changelog(table, values, task.bucket, records)
    try:
        return _merge_into_bucket(table, task, records, keys, settings, inputs)
    except BaseException:
        _delete(table, task, inputs)
        raise


def _merge_into_bucket(
    table: FileStore,
    task: CompactTask,
    records: pa.Table,
    keys: list[str],
    settings: MergeSettings,
    inputs: list[DataFileMeta],
) -> CommitMessage:
    values = list(task.partition_values)
    if task.full and not task.files and table.options.changelog_producer in ("none", "input"):
        # nothing older in the bucket: merge straight to the top level, retractions dropped
        # (a lookup or full-compaction producer needs the compaction's changelog)
        merged = merge(records, keys, settings, drop_delete=True, buffer=True)
        top = table.options.num_levels - 1
        after = write_sorted_run(table, values, task.bucket, merged, top, FILE_SOURCE_COMPACT)
        return task.message([], after, changelog=inputs)
    # as Java's bucket writer: flush the records as a level-0 run, then compact the bucket
    merged = merge(records, keys, settings, drop_delete=False, buffer=True)
    new = write_sorted_run(table, values, task.bucket, merged, 0, FILE_SOURCE_APPEND)
    rounds = 2 if task.full else 1
    dv = restore_dv(table, task.dv_index[0] if task.dv_index else None)
    try:
        before, after, changelog = compact_kv_bucket(
            table, values, task.bucket, [*task.files, *new], task.full, rounds, dv=dv
        )
    except BaseException:
        _delete(table, task, new)
        raise
    new_names = {f.file_name for f in new}
    before_names = {f.file_name for f in before}
    after_names = {f.file_name for f in after}
    _delete(table, task, [f for f in new if f.file_name in before_names - after_names])
    kept_before = [f for f in before if f.file_name not in new_names]
    kept_after = [*after, *(f for f in new if f.file_name not in before_names)]
    try:
        written = dv.write_index(PathFactory(table.path)) if dv is not None else None
    except BaseException:
        _delete(table, task, [f for f in kept_after if f.file_name not in before_names])
        _delete(table, task, changelog)
        raise
    return task.message(kept_before, kept_after, written, [*inputs, *changelog])


def _delete(table: FileStore, task: CompactTask, files: Sequence[DataFileMeta]) -> None:
    rel = table.partition_rel_path(list(task.partition_values))
    bucket_path = PathFactory(table.path).bucket_path(rel, task.bucket)
    for f in files:
        table.file_io.delete_quietly(data_file_path(table.external_paths, bucket_path, f))


# --- rescale --------------------------------------------------------------------------------


def rescaled_table(table: FileStore, bucket_num: int | None) -> FileStore:
    """The table with ``bucket_num`` fixed buckets, for writing a rescaled partition (Java's
    ``table.copy(schema.copy(bucket -> n))``): its commit replaces real buckets only."""
    if bucket_num is None:
        if table.bucket_mode == BucketMode.POSTPONE_MODE:
            raise CompactArgumentError(
                f"Table '{table.name}': when rescaling postpone bucket tables, you must provide "
                "the resulting bucket number."
            )
        bucket_num = table.options.bucket
    if bucket_num <= 0:
        raise CompactArgumentError(
            f"Table '{table.name}': bucket_num must be a positive bucket count, got {bucket_num}."
        )
    if table.bucket_mode not in (BucketMode.HASH_FIXED, BucketMode.POSTPONE_MODE):
        raise CompactArgumentError(
            f"Table '{table.name}': rescale needs a fixed-bucket or postpone-bucket table, this "
            f"one is {table.bucket_mode}."
        )
    schema = table.table_schema
    options = {**schema.options, "bucket": str(bucket_num)}
    dynamic = {**table.dynamic_options, "dynamic-partition-overwrite": "true"}
    dynamic.pop("bucket", None)
    rescaled_schema = replace(schema, options=options)
    return type(table)(table.file_io, table.path, table.name, rescaled_schema, dynamic)


@dataclass(frozen=True)
class RescalePlan:
    """A rescale planned on one snapshot: the rescaled table to write with, the overwrite its
    commit is (planned against ``snapshot_id``), and the real-bucket splits to read there."""

    rescaled: FileStore
    overwrite: Overwrite
    snapshot_id: int
    splits: tuple[DataSplit, ...]

    @property
    def bucket_num(self) -> int:
        return self.rescaled.options.bucket

    def source(self, table: FileStore) -> FileStore:
        """``table`` as of the planned snapshot, to read the splits from."""
        return table.copy({"scan.snapshot-id": str(self.snapshot_id)})


def plan_rescale(
    table: FileStore, bucket_num: int | None, keep_partition: PartitionFilter | None
) -> RescalePlan:
    """Java's RescaleProcedure up to the write: the kept partitions' real-bucket splits of the
    latest snapshot (a batch scan never returns postpone files) and a dynamic overwrite of
    the rescaled table planned against that snapshot."""
    rescaled = rescaled_table(table, bucket_num)

    def plan(snapshot: Snapshot | None) -> RescalePlan:
        # pinned, so as not to take a time-travel option of ``table``; a pin that expires
        # under the plan is planned again on the newest snapshot
        if snapshot is None:
            raise CompactArgumentError(f"Table '{table.name}' has no snapshot, no need to rescale.")
        source = table.copy({"scan.snapshot-id": str(snapshot.id)})
        splits = tuple(
            s
            for s in ReadBuilder(source).new_scan().plan().splits()
            if keep_partition is None or keep_partition(s.partition_values)
        )
        return RescalePlan(rescaled, Overwrite({}, snapshot.id), snapshot.id, splits)

    return plan_latest(table, plan)
