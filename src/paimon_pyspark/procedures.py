"""Java's ``CALL sys.*`` procedures, with the same names and arguments, run in this process.

``compact`` mirrors org.apache.paimon.spark.procedure.CompactProcedure:

    CALL sys.compact(table => 'db.t', partitions => 'dt=1,hr=2;dt=2', compact_strategy => 'full')
    compact(catalog, "db.t", partitions="dt=1,hr=2;dt=2", compact_strategy="full")

On a postpone-bucket table (``bucket = -2``) ``compact`` moves the postpone files of every kept
partition into real buckets (compact/postpone.py), as Java's postpone branch does, with
``partitions`` honoured. ``rescale`` mirrors RescaleProcedure:

    CALL sys.rescale(table => 'db.t', bucket_num => 1, partition => 'dt=1')
    rescale(catalog, "db.t", bucket_num=1, partition="dt=1")

The Spark twin, one Spark task per bucket, is ``paimon_pyspark.spark.procedures.compact``.
``expire_snapshots`` mirrors ExpireSnapshotsProcedure (maintenance/expire.py does the work):

    CALL sys.expire_snapshots(table => 'db.t', retain_max => 5, older_than => '2024-01-01 12:00:00')
    expire_snapshots(catalog, "db.t", retain_max=5, older_than="2024-01-01 12:00:00")
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.compact.plan import (
    CompactPlan,
    PartitionFilter,
    PartitionSpecs,
    check_compactable,
    parse_buckets,
    parse_options,
    parse_partitions,
    parse_strategy,
    partition_filter,
    plan_compaction,
    run_task,
    written_only,
)
from paimon_pyspark.compact.postpone import compact_partition, plan_postpone, plan_rescale
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots, parse_timestamp_ms
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.table_commit import TableCommit
from paimon_pyspark.table.write_builder import BatchWriteBuilder

Progress = Callable[[str], None]

LOG = logging.getLogger(__name__)


def compact(
    catalog: FileSystemCatalog,
    table: str,
    partitions: PartitionSpecs = None,
    compact_strategy: str | None = None,
    where: Predicate | None = None,
    options: str | Mapping[str, Any] | None = None,
    buckets: str | Sequence[int] | None = None,
    progress: Progress | None = None,
) -> int | None:
    """Compact ``table``; returns the id of the COMPACT snapshot, or None if nothing needed it.

    ``partitions``: ``'dt=1,hr=2;dt=2'`` or ``[{"dt": "1", "hr": "2"}, {"dt": "2"}]``;
    ``where``: a predicate on partition columns (not with ``partitions``);
    ``compact_strategy``: ``'full'`` (default) or ``'minor'``; ``options``: dynamic table
    options (``'k=v,k2=v2'`` or a dict); ``buckets``: ``'0-3,7'`` for fixed-bucket tables.
    All tasks' results are committed at once; if any task fails, the files written by the
    others are deleted and nothing is committed.
    """
    say = reporter(progress)
    request = CompactRequest.of(
        catalog.get_table(table), partitions, compact_strategy, where, options, buckets
    )
    loaded, full, keep = request.table, request.full, request.keep
    if loaded.bucket_mode == BucketMode.POSTPONE_MODE:
        return _compact_postpone(loaded, table, full, keep, say)
    plan = request.plan(say)
    if not plan.tasks:
        return None
    messages: list[CommitMessage] = []
    commit = TableCommit(loaded.store, str(uuid.uuid4()))
    try:
        for i, task in enumerate(plan.tasks, 1):
            message = run_task(loaded.store, task)
            if message is not None:
                messages.append(message)
            say(f"compacted task {i}/{len(plan.tasks)} (bucket {task.bucket})")
        ids = commit.commit(messages) if messages else []
    except BaseException:
        commit.abort([written_only(m) for m in messages])
        raise
    say(f"committed snapshot {ids[-1] if ids else None} of {table}")
    return ids[-1] if ids else None


def _compact_postpone(
    loaded: FileStoreTable, name: str, full: bool, keep: PartitionFilter | None, say: Progress
) -> int | None:
    """A postpone table's compaction (compact/postpone.py): every kept partition's postpone
    files go into real buckets; one COMPACT snapshot."""
    plan = plan_postpone(loaded.store, keep)
    say(
        f"planned postpone compaction of {len(plan.partitions)} partition(s), "
        f"{plan.file_count} postpone file(s) of {name} (snapshot {plan.snapshot_id})"
    )
    if not plan.partitions:
        return None
    messages: list[CommitMessage] = []
    commit = TableCommit(loaded.store, str(uuid.uuid4()))
    try:
        for i, part in enumerate(plan.partitions, 1):
            messages += compact_partition(loaded.store, plan, part, full)
            say(f"compacted postpone partition {i}/{len(plan.partitions)}")
        ids = commit.commit(messages)
    except BaseException:
        commit.abort([written_only(m) for m in messages])
        raise
    say(f"committed snapshot {ids[-1] if ids else None} of {name}")
    return ids[-1] if ids else None


def rescale(
    catalog: FileSystemCatalog,
    table: str,
    bucket_num: int | None = None,
    partition: PartitionSpecs = None,
    progress: Progress | None = None,
) -> int | None:
    """Rewrite the real buckets of ``partition`` (all partitions if None) into ``bucket_num``
    buckets; returns the id of the OVERWRITE snapshot, or None if there was nothing to read.

    Java's ``CALL sys.rescale(table => 'db.t', bucket_num => 1, partition => 'dt=1')``
    (RescaleProcedure): the partition's rows are read as a batch read sees them (postpone
    files are not read and stay in place) and written with the new bucket count as an insert
    overwrite of that partition. ``bucket_num`` is required for postpone tables.
    """
    say = reporter(progress)
    loaded = catalog.get_table(table)
    keep = partition_filter(loaded.store, parse_partitions(partition), None)
    plan = plan_rescale(loaded.store, bucket_num, keep)
    if not plan.splits:
        say(f"no real-bucket data in the chosen partitions of {table}: nothing to rescale")
        return None
    rows = ReadBuilder(plan.source(loaded.store)).new_read().to_arrow(list(plan.splits))
    say(f"read {rows.num_rows} row(s) from {len(plan.splits)} bucket(s) of {table}")
    builder = BatchWriteBuilder(FileStoreTable.of(plan.rescaled), overwrite_spec=plan.overwrite)
    with builder.new_write() as write:
        write.write_arrow(rows)
        messages = write.prepare_commit()
        ids = builder.new_commit().commit(messages)
    say(f"rescaled to {plan.bucket_num} bucket(s): snapshot {ids[-1] if ids else None}")
    return ids[-1] if ids else None


def expire_snapshots(
    catalog: FileSystemCatalog,
    table: str,
    retain_max: int | None = None,
    retain_min: int | None = None,
    older_than: str | None = None,
    max_deletes: int | None = None,
    options: str | Mapping[str, Any] | None = None,
) -> int:
    """Expire snapshots of ``table``; returns how many were expired.

    Java's ``CALL sys.expire_snapshots(table, retain_max, retain_min, older_than, max_deletes,
    options)``: each argument left out takes the table's option (``snapshot.num-retained.max``,
    ``snapshot.num-retained.min``, ``snapshot.expire.limit``); ``older_than``
    (``'yyyy-MM-dd HH:mm:ss'``, local time) replaces ``snapshot.time-retained``: snapshots
    committed before it may expire. At least ``retain_min`` snapshots are always kept, and
    tags keep their snapshots' files.
    """
    loaded = catalog.get_table(table)
    dynamic = parse_options(options)
    if dynamic:
        loaded = loaded.copy(dynamic)
    config = ExpireConfig.from_options(loaded.options)
    config = ExpireConfig(
        retain_max=config.retain_max if retain_max is None else retain_max,
        retain_min=config.retain_min if retain_min is None else retain_min,
        time_retained_ms=config.time_retained_ms,
        max_deletes=config.max_deletes if max_deletes is None else max_deletes,
        older_than_ms=parse_timestamp_ms(older_than) if older_than and older_than.strip() else None,
        clean_empty_directories=config.clean_empty_directories,
    )
    return ExpireSnapshots(loaded.store, config).expire()


@dataclass(frozen=True)
class CompactRequest:
    """The arguments of ``CALL sys.compact`` resolved against the table, shared by the
    in-process procedure and its Spark twin."""

    table: FileStoreTable
    dynamic: dict[str, str]
    full: bool
    keep: PartitionFilter | None
    buckets: set[int] | None

    @staticmethod
    def of(
        table: FileStoreTable,
        partitions: PartitionSpecs,
        compact_strategy: str | None,
        where: Predicate | None,
        options: str | Mapping[str, Any] | None,
        buckets: str | Sequence[int] | None,
    ) -> CompactRequest:
        full = parse_strategy(compact_strategy)
        specs = parse_partitions(partitions)
        dynamic = {"write-only": "false", **parse_options(options)}
        loaded = prepare_table(table, dynamic, buckets is not None)
        keep = partition_filter(loaded.store, specs, where)
        bucket_set = None
        if loaded.bucket_mode != BucketMode.POSTPONE_MODE:
            bucket_set = parse_buckets(buckets, loaded.options.bucket)
        return CompactRequest(loaded, dynamic, full, keep, bucket_set)

    def plan(self, say: Progress) -> CompactPlan:
        plan = plan_compaction(self.table.store, self.full, self.keep, self.buckets)
        say(
            f"planned {len(plan.tasks)} compaction task(s) over {plan.buckets_seen} bucket(s) "
            f"of {self.table.name} (snapshot {plan.snapshot_id}, "
            f"{'full' if self.full else 'minor'})"
        )
        return plan


def prepare_table(
    table: FileStoreTable, dynamic: Mapping[str, str], with_buckets: bool
) -> FileStoreTable:
    """The table with the procedure's dynamic options, checked to be compactable."""
    loaded = table.copy(dict(dynamic)) if dynamic else table
    check_compactable(loaded.store)
    if with_buckets and loaded.bucket_mode != BucketMode.HASH_FIXED:
        raise UnsupportedOptionError(
            f"Table '{loaded.name}': specifying buckets is only supported for fixed-bucket "
            f"tables, but the table bucket mode is {loaded.bucket_mode}."
        )
    return loaded


def reporter(progress: Progress | None) -> Progress:
    """Each progress line goes to this module's logger and, if given, to ``progress``."""

    def say(message: str) -> None:
        LOG.info(message)
        if progress is not None:
            progress(message)

    return say
