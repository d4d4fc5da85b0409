"""Java's ``CALL sys.*`` procedures, each written once against a ProcedureRunner.

``paimon_pyspark.procedures`` binds them to the in-process runner (``compact(catalog, ...)``),
``paimon_pyspark.spark.procedures`` to the Spark runner (``compact(spark, warehouse, ...)``);
the arguments after the runner are the public ones, the same for both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.errors import CompactArgumentError, InvalidArgumentError, describe
from paimon_pyspark.io.data_file import local_now_millis
from paimon_pyspark.maintenance import tags as tag_ops
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots, parse_timestamp_ms
from paimon_pyspark.maintenance.expire_changelog import ExpireChangelog
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean, OrphanFilesResult
from paimon_pyspark.procedures.arguments import (
    CompactRequest,
    PartitionSpecs,
    parse_mode,
    parse_older_than,
    parse_options,
    parse_partitions,
    parse_where,
    partition_filter,
    tables_of,
)
from paimon_pyspark.procedures.pipeline import ProcedureRunner, Progress, reporter
from paimon_pyspark.procedures.tasks import (
    idle_partitions,
    plan_bucket_compaction,
    plan_file_index_rewrite_tasks,
    plan_postpone_compaction,
    plan_rescale_tasks,
    plan_sort_compaction,
)
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.managers import Consumer


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
    where: str | Predicate | None = None,
    progress: Progress | None = None,
) -> int | None:
    """Rewrite the real buckets of the kept partitions (all if neither ``partition`` nor
    ``where`` is given) into ``bucket_num`` buckets; returns the id of the OVERWRITE snapshot,
    or None if there was nothing to read.

    Java's RescaleProcedure: Flink's ``CALL sys.rescale(`table` => 'db.t', bucket_num => 1,
    partition => 'dt=1')``, Spark's ``partitions => 'dt=1;dt=2'`` (the SQL door's name for
    ``partition``, which takes several specs too) or ``where => "dt > '1'"`` (a condition on
    partition columns; not with ``partition``). Each kept partition's rows are read as a batch
    read sees them (postpone files are not read and stay in place) and written with the new
    bucket count as an insert overwrite of that partition. ``bucket_num`` is required for
    postpone tables.
    """
    say = reporter(progress)
    loaded = runner.catalog.get_table(table)
    keep = partition_filter(
        loaded.store, parse_partitions(partition), parse_where(where, loaded.store)
    )
    plan = plan_rescale_tasks(loaded, bucket_num, keep, say)
    return None if plan is None else runner.run(plan, say)


_SQL_CONDITION = re.compile(r"['\"<>!()]|\s(and|or|in|between|like|is|not)\s", re.IGNORECASE)
"""Text that is no partition spec ('dt=1,hr=2;dt=2') but a SQL condition: Spark's ``where``."""


class RewriteFileIndexResult(NamedTuple):
    """Java's result row of Spark's ``CALL sys.rewrite_file_index``, and the snapshot."""

    written_partitions: int
    """Partitions whose files were re-indexed."""
    written_indexes: int
    """Files re-indexed (each is replaced by itself with its new index)."""
    snapshot_id: int | None
    """The COMPACT snapshot committed, None when there was no file."""


def rewrite_file_index(
    runner: ProcedureRunner,
    table: str,
    partitions: PartitionSpecs = None,
    where: str | Predicate | None = None,
    progress: Progress | None = None,
) -> RewriteFileIndexResult:
    """Rebuild the file indexes of every live file of ``table`` (in the kept partitions) from
    the table's current ``file-index.*`` options, for files written before the options were
    set or changed; returns Java's (``written_partitions``, ``written_indexes``) and the
    snapshot.

    Java's RewriteFileIndexProcedure: Flink's ``CALL sys.rewrite_file_index(`table` =>
    'db.t', partitions => 'dt=1,hr=2;dt=2')``, Spark's ``CALL sys.rewrite_file_index(table
    => 'db.t', where => "dt = '1'")``. Positional arguments follow Flink's order (table,
    partitions), except that a second one that reads as a SQL condition (a quote, a comparison
    other than ``=``, a parenthesis, or AND/OR/IN/BETWEEN/LIKE/IS/NOT between spaces) is
    Spark's ``where``. ``partitions`` and ``where`` are those of ``compact``, not both.

    Each file is replaced by itself with its new index (embedded, or a new ``.index`` file
    beside it) in one COMPACT snapshot; old ``.index`` files stay for older snapshots and
    ``remove_orphan_files`` (compact/file_index_rewrite.py says exactly what each file gets).
    Nothing to index (no ``file-index.*`` columns) drops the files' separate indexes, as Java
    does. Unlike Java, a file whose index comes out as one it has or had is left out of the
    commit (Java's readers would lose it); ``written_indexes`` counts every file processed, as
    Java's does.
    """
    say = reporter(progress)
    loaded = runner.catalog.get_table(table)
    if where is None and isinstance(partitions, str) and _SQL_CONDITION.search(partitions):
        partitions, where = None, partitions  # Spark's order: (table, where)
    keep = partition_filter(
        loaded.store, parse_partitions(partitions), parse_where(where, loaded.store)
    )
    plan, written_partitions = plan_file_index_rewrite_tasks(loaded, keep, say)
    if plan is None:
        return RewriteFileIndexResult(0, 0, None)
    snapshot = runner.run(plan, say)
    files = sum(len(t.task.files) for t in plan.inputs)
    return RewriteFileIndexResult(written_partitions, files, snapshot)


def expire_snapshots(
    catalog: Catalog,
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


def expire_changelogs(
    catalog: Catalog,
    table: str,
    retain_max: int | None = None,
    retain_min: int | None = None,
    older_than: str | None = None,
    max_deletes: int | None = None,
    delete_all: bool | None = None,
) -> str:
    """Expire the long-lived changelogs (``changelog/changelog-<id>``) of ``table``; returns
    Java's result text: how many ids the expired range spans, or, with ``delete_all``, that
    all were deleted.

    Flink's ``CALL sys.expire_changelogs(`table` => 'db.t', retain_max => 5, retain_min => 1,
    older_than => '2024-01-01 12:00:00', max_deletes => 10, delete_all => false)``
    (ExpireChangelogsProcedure; Spark 1.4.2 has none, so positional arguments take Flink's
    order). As in Java, an argument left out is not the table's option but the expiry's own
    default: no maximum, a minimum of 1, no age (so nothing expires by time without
    ``older_than``), no limit. ``delete_all`` expires every long-lived changelog (they must all
    be older than the earliest snapshot). Consumers and tags keep what they need, and the
    latest long-lived changelog is always kept (maintenance/expire_changelog.py).
    """
    if delete_all is not None and not isinstance(delete_all, bool):
        text = str(delete_all).strip().lower()
        if text not in ("true", "false"):
            raise InvalidArgumentError(
                f"expire_changelogs: delete_all must be a bool, got {describe(delete_all)}."
            )
        delete_all = text == "true"
    loaded = catalog.get_table(table)
    expiry = ExpireChangelog(
        loaded.store,
        ExpireConfig(
            changelog_retain_max=retain_max,
            changelog_retain_min=retain_min,
            changelog_max_deletes=max_deletes,
            changelog_older_than_ms=(
                parse_timestamp_ms(older_than) if older_than and older_than.strip() else None
            ),
            clean_empty_directories=loaded.options.snapshot_clean_empty_directories,
        ),
    )
    if delete_all:
        expiry.expire_all()
        return "Delete all separated changelogs success."
    return str(expiry.expire())


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


# --- tags ------------------------------------------------------------------------------------


class RollbackResult(NamedTuple):
    """Java's result row of ``CALL sys.rollback`` / ``sys.rollback_to``."""

    previous_snapshot_id: int
    current_snapshot_id: int


def _snapshot_arg(procedure: str, name: str, value: object) -> int | None:
    """A BIGINT argument: an int, or its digits as SQL text may bring them; None if not given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidArgumentError(
        f"{procedure}: argument '{name}' must be a snapshot id (int), got {describe(value)}."
    )


def _text_arg(procedure: str, name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(
            f"{procedure}: argument '{name}' must be a string, got {describe(value)}."
        )
    return value


def _tag_snapshot_arg(procedure: str, snapshot_id: object, snapshot: object) -> int | None:
    """The snapshot id a tag procedure is given, under Flink's name ``snapshot_id`` or Spark's
    ``snapshot`` (the same position), not both."""
    if snapshot_id is not None and snapshot is not None:
        raise CompactArgumentError(
            f"{procedure}: give the snapshot as 'snapshot_id' (Flink) or 'snapshot' (Spark), not "
            "both."
        )
    if snapshot is None:
        return _snapshot_arg(procedure, "snapshot_id", snapshot_id)
    return _snapshot_arg(procedure, "snapshot", snapshot)


def create_tag(
    catalog: Catalog,
    table: str,
    tag: str,
    snapshot_id: int | str | None = None,
    time_retained: str | None = None,
    snapshot: int | str | None = None,
) -> None:
    """Tag snapshot ``snapshot_id`` (the latest if None) of ``table``.

    Java's ``CALL sys.create_tag(`table` => 'db.t', tag => 'v1', snapshot_id => 3,
    time_retained => '1 d')`` (CreateTagProcedure: Flink calls the id ``snapshot_id``, Spark
    ``snapshot``, at the same position; both names work here, not both at once). An existing
    tag, a blank name, a missing snapshot or an empty table raise, as in Java.
    """
    name = "create_tag"
    sid = _tag_snapshot_arg(name, snapshot_id, snapshot)
    retained = _text_arg(name, "time_retained", time_retained)
    catalog.get_table(table).create_tag(tag, sid, time_retained=retained)


def replace_tag(
    catalog: Catalog,
    table: str,
    tag: str,
    snapshot_id: int | str | None = None,
    time_retained: str | None = None,
    snapshot: int | str | None = None,
) -> None:
    """Point the existing tag ``tag`` of ``table`` at snapshot ``snapshot_id`` (the latest if
    None), with ``time_retained`` (none if None).

    Java's ``CALL sys.replace_tag(`table` => 'db.t', tag => 'v1', snapshot_id => 3,
    time_retained => '1 d')`` (ReplaceTagProcedure: Flink's ``snapshot_id``, Spark's
    ``snapshot``, at the same position). A missing tag or snapshot raises, as in Java.
    """
    name = "replace_tag"
    sid = _tag_snapshot_arg(name, snapshot_id, snapshot)
    retained = _text_arg(name, "time_retained", time_retained)
    tag_ops.replace_tag(catalog.get_table(table).store, tag, sid, retained)


def rename_tag(
    catalog: Catalog,
    table: str,
    tag: str | None = None,
    target_tag: str | None = None,
    tagname: str | None = None,
    targettagname: str | None = None,
) -> None:
    """Rename tag ``tag`` of ``table`` to ``target_tag``.

    Java's ``CALL sys.rename_tag(`table` => 'db.t', tag => 'v1', target_tag => 'v2')``
    (Spark's RenameTagProcedure; Flink's names the two ``tagName`` and ``targetTagName``, at
    the same positions, accepted here as ``tagname`` and ``targettagname``). A missing tag or
    an existing target raises, as in Java.
    """
    name = "rename_tag"
    pairs = (
        ("tag", tag, "tagName", tagname),
        ("target_tag", target_tag, "targetTagName", targettagname),
    )
    given: list[str] = []
    for spark_name, spark_value, flink_name, flink_value in pairs:
        if spark_value is not None and flink_value is not None:
            raise CompactArgumentError(
                f"{name}: give '{spark_name}' (Spark) or '{flink_name}' (Flink), not both."
            )
        value = _text_arg(name, spark_name, spark_value if flink_value is None else flink_value)
        if value is None:
            raise InvalidArgumentError(f"{name}: argument '{spark_name}' is required.")
        given.append(value)
    tag_ops.rename_tag(catalog.get_table(table).store, given[0], given[1])


def delete_tag(catalog: Catalog, table: str, tag: str) -> None:
    """Delete the tags ``tag`` of ``table``: one name or several separated by commas.

    Java's ``CALL sys.delete_tag(`table` => 'db.t', tag => 'v1,v2')`` (DeleteTagProcedure,
    Table.deleteTags): each name is trimmed; a name with no tag is skipped with a warning, a
    blank one raises. The files only a deleted tag kept (its snapshot expired) go with it.
    """
    names = _text_arg("delete_tag", "tag", tag)
    if names is None:
        raise InvalidArgumentError("delete_tag: argument 'tag' is required.")
    tag_ops.delete_tags(catalog.get_table(table).store, names)


def rollback(
    catalog: Catalog,
    table: str,
    version: str | int | None = None,
    snapshot: int | str | None = None,
    tag: str | None = None,
) -> RollbackResult:
    """Roll ``table`` back to a snapshot or a tag; returns (previous latest, rolled back to).

    Spark's ``CALL sys.rollback(table => 'db.t', version => '3')`` (RollbackProcedure):
    ``version`` of digits only is a snapshot id, anything else a tag name, so a tag named by
    digits is reached with ``tag``; exactly one of ``version``, ``snapshot`` and ``tag``.
    """
    name = "rollback"
    text = version if isinstance(version, str) else None
    if isinstance(version, int) and not isinstance(version, bool):
        text = str(version)
    elif version is not None and text is None:
        raise InvalidArgumentError(
            f"{name}: argument 'version' is a snapshot id or a tag name, got {describe(version)}."
        )
    sid = _snapshot_arg(name, "snapshot", snapshot)
    tag_name = _text_arg(name, "tag", tag)
    if text is not None and text.strip():
        if sid is not None or tag_name is not None:
            raise CompactArgumentError(
                f"{name}: only can set one of version/snapshot/tag in RollbackProcedure."
            )
        if text.isdecimal():
            sid = int(text)
        else:
            tag_name = text
    elif (sid is None) == (tag_name is None):
        raise CompactArgumentError(
            f"{name}: only can set one of version/snapshot/tag in RollbackProcedure."
        )
    return _rollback(catalog, table, sid, tag_name, name)


def rollback_to(
    catalog: Catalog,
    table: str,
    tag: str | None = None,
    snapshot_id: int | str | None = None,
) -> RollbackResult:
    """Flink's ``CALL sys.rollback_to(`table` => 'db.t', tag => 'v1')`` or ``snapshot_id =>
    3`` (RollbackToProcedure): a non-blank ``tag`` wins, else ``snapshot_id``."""
    name = "rollback_to"
    tag_name = _text_arg(name, "tag", tag)
    if tag_name is not None and tag_name.strip():
        return _rollback(catalog, table, None, tag_name, name)
    sid = _snapshot_arg(name, "snapshot_id", snapshot_id)
    if sid is None:
        raise CompactArgumentError(f"{name}: give 'tag' or 'snapshot_id'.")
    return _rollback(catalog, table, sid, None, name)


def _rollback(
    catalog: Catalog,
    table: str,
    snapshot_id: int | None,
    tag_name: str | None,
    procedure: str,
) -> RollbackResult:
    loaded = catalog.get_table(table)
    latest = loaded.snapshot_manager.latest_id()
    if latest is None:
        raise InvalidArgumentError(
            f"{procedure}: table '{table}': Latest snapshot is null, can not rollback."
        )
    target: int | str | None = tag_name if tag_name is not None else snapshot_id
    assert target is not None
    current = tag_ops.rollback_to(loaded.store, target)
    return RollbackResult(latest, current)


def reset_consumer(
    catalog: Catalog,
    table: str,
    consumer_id: str,
    next_snapshot_id: int | str | None = None,
) -> None:
    """Set consumer ``consumer_id`` of ``table`` to read snapshot ``next_snapshot_id`` next, or
    delete the consumer when it is not given.

    Java's ``CALL sys.reset_consumer(`table` => 'db.t', consumer_id => 'c1', next_snapshot_id
    => 3)`` (ResetConsumerProcedure; Spark names them ``consumerId``, ``nextSnapshotId``, at the
    same positions): the snapshot must exist, as Java's ``snapshotManager().snapshot(id)``
    requires. The stream with that consumer id resumes there when it starts next.
    """
    name = "reset_consumer"
    cid = _text_arg(name, "consumer_id", consumer_id)
    if cid is None or not cid.strip():
        raise InvalidArgumentError(f"{name}: argument 'consumer_id' is required.")
    sid = _snapshot_arg(name, "next_snapshot_id", next_snapshot_id)
    store = catalog.get_table(table).store
    manager = store.consumer_manager
    if sid is None:
        manager.delete_consumer(cid)
        return
    if store.snapshot_manager.snapshot_if_exists(sid) is None:
        raise InvalidArgumentError(
            f"{name}: table '{table}' has no snapshot {sid} (earliest "
            f"{store.snapshot_manager.earliest_id()}, latest "
            f"{store.snapshot_manager.latest_id()}); a consumer can only be reset to one."
        )
    manager.reset_consumer(cid, Consumer(sid))


def clear_consumers(
    catalog: Catalog,
    table: str,
    including_consumers: str | None = None,
    excluding_consumers: str | None = None,
) -> list[str]:
    """Delete the consumers of ``table`` whose id matches the regular expression
    ``including_consumers`` whole (all when not given) and not ``excluding_consumers``;
    returns their ids.

    Java's ``CALL sys.clear_consumers(`table` => 'db.t', including_consumers => 'job.*',
    excluding_consumers => 'job-keep')`` (ClearConsumersProcedure; Spark names them
    ``includingConsumers``, ``excludingConsumers``, at the same positions).
    """
    name = "clear_consumers"
    including = _text_arg(name, "including_consumers", including_consumers)
    excluding = _text_arg(name, "excluding_consumers", excluding_consumers)
    store = catalog.get_table(table).store
    return store.consumer_manager.clear_consumers(including, excluding)
