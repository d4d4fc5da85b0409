"""Java's ``CALL sys.*`` procedures, each written once against a ProcedureRunner.

``paimon_pyspark.procedures`` binds them to the in-process runner (``compact(catalog, ...)``),
``paimon_pyspark.spark.procedures`` to the Spark runner (``compact(spark, warehouse, ...)``);
the arguments after the runner are the public ones, the same for both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.errors import InvalidArgumentError
from paimon_pyspark.io.data_file import local_now_millis
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots, parse_timestamp_ms
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean, OrphanFilesResult
from paimon_pyspark.procedures.arguments import (
    CompactRequest,
    PartitionSpecs,
    parse_mode,
    parse_older_than,
    parse_options,
    parse_partitions,
    partition_filter,
    tables_of,
)
from paimon_pyspark.procedures.pipeline import ProcedureRunner, Progress, reporter
from paimon_pyspark.procedures.tasks import (
    idle_partitions,
    plan_bucket_compaction,
    plan_postpone_compaction,
    plan_rescale_tasks,
    plan_sort_compaction,
)
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.store.bucket_mode import BucketMode


def compact(
    runner: ProcedureRunner,
    table: str,
    partitions: PartitionSpecs = None,
    order_strategy: str | None = None,
    order_by: str | Sequence[str] | None = None,
    options: str | Mapping[str, Any] | None = None,
    where: str | Predicate | None = None,
    partition_idle_time: str | None = None,
    compact_strategy: str | None = None,
    buckets: str | Sequence[int] | None = None,
    progress: Progress | None = None,
) -> int | None:
    """Compact ``table``; returns the id of the COMPACT snapshot, or None if nothing needed it.

    Java's ``CALL sys.compact(table, partitions, order_strategy, order_by, options, where,
    partition_idle_time, compact_strategy)`` in Flink's order (Flink's CompactProcedure, as the
    seed's ``CALL sys.compact('ods.with_pk_table', '', '', '', '')``); Spark's Java procedure
    orders them ``table, partitions, compact_strategy, order_strategy, order_by, where,
    options, partition_idle_time``, so pass them by name to be safe: names work everywhere,
    here and in the Spark twin. An empty or whitespace-only string means "not given".

    ``partitions``: ``'dt=1,hr=2;dt=2'`` or ``[{"dt": "1", "hr": "2"}, {"dt": "2"}]``;
    ``where``: a SQL boolean expression on partition columns (``"dt >= '2024-01-01' AND hr
    IN (1, 2)"``) or a Predicate, not with ``partitions``; ``compact_strategy``: ``'full'``
    (default) or ``'minor'``; ``options``: dynamic table options (``'k=v,k2=v2'`` or a dict);
    ``partition_idle_time``: only partitions whose newest file is at least this old
    (``'1 d'``, ``'12 h'``); ``buckets`` (ours, after Java's arguments): ``'0-3,7'`` for
    fixed-bucket tables. ``order_strategy`` (``'order'``, ``'zorder'``, ``'hilbert'``) with
    ``order_by`` (``'a,b'``) sort-compacts a bucket-unaware append table instead: each kept
    partition's files are replaced by files sorted by those columns (compact/sort.py), so
    reads filtering on them skip files. On a postpone-bucket table (``bucket = -2``) the
    postpone files of every kept partition move into real buckets, as Java's postpone branch
    does, with ``partitions`` honoured. All tasks' results are committed at once; if any task
    fails, the files written by the others are deleted and nothing is committed.
    """
    say = reporter(progress)
    request = CompactRequest.of(
        runner.catalog.get_table(table),
        partitions,
        compact_strategy,
        where,
        options,
        buckets,
        order_strategy,
        order_by,
        partition_idle_time,
    )
    if request.sort is not None:
        sort = plan_sort_compaction(request, request.sort, say)
        return None if sort is None else runner.run(sort, say)
    if request.table.bucket_mode == BucketMode.POSTPONE_MODE:
        postpone = plan_postpone_compaction(request, say)
        return None if postpone is None else runner.run(postpone, say)
    if request.idle_ms is not None:
        now = local_now_millis()
        keep = idle_partitions(request.table.store, request.keep, request.idle_ms, now)
        request = replace(request, keep=keep)
    plan = plan_bucket_compaction(request, say)
    return None if plan is None else runner.run(plan, say)


def rescale(
    runner: ProcedureRunner,
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
    loaded = runner.catalog.get_table(table)
    keep = partition_filter(loaded.store, parse_partitions(partition), None)
    plan = plan_rescale_tasks(loaded, bucket_num, keep, say)
    return None if plan is None else runner.run(plan, say)


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
    tags keep their snapshots' files. Deleting files is the work; it runs in this process.
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


def remove_orphan_files(
    runner: ProcedureRunner,
    table: str,
    older_than: str | None = None,
    dry_run: bool = False,
    parallelism: int | None = None,
    mode: str | None = None,
    progress: Progress | None = None,
) -> OrphanFilesResult:
    """Delete the files of ``table`` that no snapshot, tag, branch or changelog uses and that
    are older than ``older_than``; returns what was deleted (or, with ``dry_run``, what would
    be).

    Java's ``CALL sys.remove_orphan_files(table => 'db.t', older_than => '2024-01-01
    12:00:00', dry_run => true, parallelism => 4, mode => 'local')``
    (RemoveOrphanFilesProcedure, OrphanFilesClean): ``table`` is ``'db.t'`` or ``'db.*'``
    (every table of ``db``); ``older_than`` (``'yyyy-MM-dd HH:mm:ss'``, local time, before now)
    defaults to one day ago; ``parallelism``: threads here, Spark partitions in the Spark
    twin; ``mode``: ``'local'`` runs in the calling process (the Spark twin's default is
    ``'distributed'``). Data, manifest, index, statistics and changelog files, temp files of
    interrupted publishes and the staging leftovers of Spark jobs whose driver died are
    removed (maintenance/orphan_files.py says exactly which). The result's
    ``deleted_file_count`` and ``deleted_file_total_len_in_bytes`` are Java's result row;
    ``deleted_files`` lists the paths.
    """
    if not isinstance(dry_run, bool):
        raise InvalidArgumentError(f"remove_orphan_files: dry_run must be a bool, got {dry_run!r}.")
    if parallelism is not None and (not isinstance(parallelism, int) or parallelism < 1):
        raise InvalidArgumentError(
            f"remove_orphan_files: parallelism must be a positive int, got {parallelism!r}."
        )
    say = reporter(progress)
    cutoff = parse_older_than(older_than)
    how = parse_mode(mode)
    result = OrphanFilesResult()
    for name in tables_of(runner.catalog, table):
        loaded = runner.catalog.get_table(name)
        clean = OrphanFilesClean(loaded.store, cutoff, dry_run, parallelism)
        result += runner.clean_orphan_files(clean, how, say)
    return result
