"""Java's file procedures: ``purge_files``, ``remove_unexisting_files``, ``compact_manifest``
and ``compact_database``.

    CALL sys.purge_files(`table` => 'db.t')                       -- FileStoreTable.purgeFiles
    CALL sys.remove_unexisting_files(`table` => 'db.t', dry_run => true, parallelism => 4)
    CALL sys.compact_manifest(`table` => 'db.t', options => 'manifest.target-file-size=16mb')
    CALL sys.compact_database(including_databases => 'db.*', excluding_tables => 'db.tmp_.*')

``remove_unexisting_files`` and ``compact_database`` take a ProcedureRunner
(procedures/pipeline.py): in this process (``paimon_pyspark.procedures``) or as Spark jobs
(``paimon_pyspark.spark.procedures``), where each table's compaction runs as its Spark job and
the data files' existence is checked by one Spark task per partition group.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, runtime_checkable

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.commit.file_store_commit import new_store_commit
from paimon_pyspark.commit.truncate import truncate
from paimon_pyspark.errors import CompactArgumentError, InvalidArgumentError, describe
from paimon_pyspark.maintenance import branches as branch_ops
from paimon_pyspark.maintenance import tags as tag_ops
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean
from paimon_pyspark.options import JAVA_INT_MAX
from paimon_pyspark.procedures import calls
from paimon_pyspark.procedures.arguments import parse_options, tables_of
from paimon_pyspark.procedures.pipeline import ProcedureRunner, Progress, reporter
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.commit_message import CommitMessage, DataIncrement
from paimon_pyspark.spec.manifest import ManifestEntry
from paimon_pyspark.spec.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_pyspark.store import clock
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.table.write_builder import BatchWriteBuilder

LOG = logging.getLogger("paimon_pyspark.procedures")

PURGE_RESULT = "Success"
"""Java's result row of ``purge_files``."""


# --- purge_files -------------------------------------------------------------------------------


def purge_files(catalog: Catalog, table: str) -> str:
    """Empty ``table`` and delete every file it no longer needs; returns Java's ``'Success'``.

    Java's ``CALL sys.purge_files(`table` => 'db.t')`` (FileStoreTable.purgeFiles), in its
    order: every branch dropped, every tag deleted (with the files only it kept), every
    consumer deleted, the table truncated by one OVERWRITE snapshot (no maintenance runs, as
    Java's ``truncateTable``), the long-lived changelogs deleted, every snapshot but that one
    expired, and the orphan files of any age removed. The schemas stay. Each step can be rerun,
    so a purge that failed half-way finishes when called again. Unlike Java, a branch named by
    ``scan.fallback-branch`` is not dropped (maintenance/branches.py refuses it): nothing is
    deleted then.
    """
    purge(catalog.get_table(table).store)
    return PURGE_RESULT


def purge(store: FileStore) -> None:
    """``purge_files``' work on ``store`` (a table's main branch)."""
    for branch in branch_ops.branches(store):
        branch_ops.drop_branch(store, branch)
    for tag in store.tag_manager.tag_names():
        tag_ops.delete_tag(store, tag)
    manager = store.consumer_manager
    for consumer in manager.consumers():
        manager.delete_consumer(consumer)
    truncate(store, str(uuid.uuid4()), None, BATCH_COMMIT_IDENTIFIER)
    store.file_io.delete_dir(store.changelog_manager.changelog_directory())
    keep_one = ExpireConfig(
        retain_max=1,
        retain_min=1,
        time_retained_ms=0,
        max_deletes=JAVA_INT_MAX,
        clean_empty_directories=store.options.snapshot_clean_empty_directories,
    )
    ExpireSnapshots(store, keep_one).expire()
    OrphanFilesClean(store, clock.now_millis()).run()


# --- compact_manifest --------------------------------------------------------------------------


def compact_manifest(
    catalog: Catalog, table: str, options: str | Mapping[str, Any] | None = None
) -> int | None:
    """Merge the manifests of ``table``'s latest snapshot into as few as
    ``manifest.target-file-size`` allows, with no DELETE entry left; returns the id of the
    COMPACT snapshot, or None when there was nothing to merge (Java's result row is ``true``).

    Java's ``CALL sys.compact_manifest(`table` => 'db.t', options => 'k=v')``
    (CompactManifestProcedure, ``BatchTableCommit.compactManifests``): the merge of every commit
    (commit/manifest_merger.py) with a minimum count and a full-compaction threshold of 1. The
    snapshot keeps the data files, index manifest, statistics and watermark of the latest one;
    its delta list is empty. ``options`` are dynamic table options (``'k1=v1,k2=v2'``).
    """
    loaded = catalog.get_table(table)
    dynamic = parse_options(options)
    if dynamic:
        loaded = loaded.copy(dynamic, time_travel=False)
    return compact_manifests(loaded.store)


def compact_manifests(store: FileStore) -> int | None:
    """``compact_manifest``'s commit on ``store``: the new snapshot's id, or None."""
    return new_store_commit(store, str(uuid.uuid4())).compact_manifest()


# --- remove_unexisting_files -------------------------------------------------------------------


@runtime_checkable
class ChecksFiles(Protocol):
    """A runner that checks files' existence its own way (the Spark runner: one task per group
    of paths); other runners check them on threads of this process."""

    def missing_files(
        self, store: FileStore, groups: list[list[str]], parallelism: int | None
    ) -> list[str]: ...


def missing_paths(store: FileStore, groups: Iterable[list[str]]) -> Iterator[str]:
    """The paths of ``groups`` that do not exist: a task's work. A task gets the store as a
    StoreRef (read/store_ref.py), which unpickles as the store."""
    io = store.file_io
    for group in groups:
        yield from (p for p in group if not io.exists(p))


def remove_unexisting_files(
    runner: ProcedureRunner,
    table: str,
    dry_run: bool | None = None,
    parallelism: int | None = None,
    progress: Progress | None = None,
) -> list[str]:
    """Remove from ``table``'s latest snapshot the data files that are not on the store;
    returns their paths (Java's result rows, one ``fileName`` each).

    Java's ``CALL sys.remove_unexisting_files(`table` => 'db.t', dry_run => true,
    parallelism => 4)`` (RemoveUnexistingFilesProcedure, ListUnexistingFiles): every live data
    file of every partition and level is looked up, and unless ``dry_run`` the missing ones are
    committed as deleted, one DELETE entry each, in one OVERWRITE snapshot (Java's commit of
    deleted files under Long.MAX_VALUE, which runs the table's maintenance). ``'db.*'`` covers
    every table of ``db``. ``parallelism``: threads here, Spark tasks in the Spark twin (by
    partition). As Java warns, rows of the missing files are gone for good: use it only to
    repair a table whose files were lost.
    """
    if dry_run is not None and not isinstance(dry_run, bool):
        raise InvalidArgumentError(
            f"remove_unexisting_files: dry_run must be a bool, got {describe(dry_run)}."
        )
    if parallelism is not None and (
        not isinstance(parallelism, int) or isinstance(parallelism, bool) or parallelism < 1
    ):
        raise InvalidArgumentError(
            "remove_unexisting_files: parallelism must be a positive int, got "
            f"{describe(parallelism)}."
        )
    say = reporter(progress)
    removed: list[str] = []
    for name in tables_of(runner.catalog, table):
        removed += _remove_unexisting(runner, name, bool(dry_run), parallelism, say)
    return removed


def _remove_unexisting(
    runner: ProcedureRunner, name: str, dry_run: bool, parallelism: int | None, say: Progress
) -> list[str]:
    loaded = runner.catalog.get_table(name)
    store = loaded.store
    latest = store.snapshot_manager.latest()
    if latest is None:
        return []
    by_path: dict[str, ManifestEntry] = {}
    by_partition: dict[bytes, list[str]] = {}
    for e in store.manifest_io.live_entries(latest):
        bucket_path = store.bucket_path_of(e.partition, e.bucket)
        path = data_file_path(store.external_paths, bucket_path, e.file, store.name)
        by_path[path] = e
        by_partition.setdefault(e.partition, []).append(path)
    groups = list(by_partition.values())
    if isinstance(runner, ChecksFiles):
        missing = runner.missing_files(store, groups, parallelism)
    else:
        missing = _check_here(store, groups, parallelism)
    say(f"{store.name}: {len(missing)} of {len(by_path)} data file(s) missing")
    if missing and not dry_run:
        messages = _deletions(loaded.options.bucket, [by_path[p] for p in missing])
        builder = BatchWriteBuilder(loaded, str(uuid.uuid4()))
        builder.new_commit().commit(messages)
    return missing


def _check_here(store: FileStore, groups: list[list[str]], parallelism: int | None) -> list[str]:
    """Each group's paths checked on a pool of ``parallelism`` threads (Java's
    ``file-operation.thread-num``: the cores by default)."""
    if not groups:
        return []
    threads = max(1, min(parallelism or os.cpu_count() or 1, len(groups)))
    if threads == 1:
        return list(missing_paths(store, groups))
    with ThreadPoolExecutor(threads) as pool:
        parts = pool.map(lambda g: list(missing_paths(store, [g])), groups)
        return [p for part in parts for p in part]


def _deletions(total_buckets: int, entries: Sequence[ManifestEntry]) -> list[CommitMessage]:
    """One message per (partition, bucket) deleting ``entries``' files (Java's)."""
    grouped: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        assert e.kind == mf.KIND_ADD
        grouped.setdefault((e.partition, e.bucket), []).append(e)
    return [
        CommitMessage(
            partition,
            bucket,
            total_buckets,
            DataIncrement(deleted_files=tuple(e.file for e in group)),
        )
        for (partition, bucket), group in grouped.items()
    ]


# --- compact_database --------------------------------------------------------------------------

DATABASE_MODES = ("divided", "combined")
"""Flink's ``mode``: how its job lays out the compactions; both compact the same tables."""


def compact_database(
    runner: ProcedureRunner,
    including_databases: str | None = None,
    including_tables: str | None = None,
    excluding_tables: str | None = None,
    options: str | Mapping[str, Any] | None = None,
    mode: str | None = None,
    partition_idle_time: str | None = None,
    compact_strategy: str | None = None,
    progress: Progress | None = None,
) -> str:
    """Compact every table whose database matches ``including_databases`` and whose
    ``db.table`` matches ``including_tables`` and not ``excluding_tables`` (regular
    expressions matched whole, all by default); returns Java's ``'Compact database finished.
    Success: <n>, Failed: <m>'``.

    Spark's ``CALL sys.compact_database(including_databases, including_tables,
    excluding_tables, options)`` (CompactDatabaseProcedure: ``compact`` per table with
    ``options`` as its dynamic options; a table that fails is counted and logged, the others
    go on). Flink's order is ``including_databases, mode, including_tables, excluding_tables,
    table_options, partition_idle_time, compact_strategy``; its ``mode`` (``divided`` or
    ``combined``) only shapes Flink's job and changes nothing here, ``table_options`` is
    ``options``, and the last two are ``compact``'s.
    """
    say = reporter(progress)
    databases = _pattern("including_databases", including_databases, ".*")
    including = _pattern("including_tables", including_tables, ".*")
    excluding = _pattern("excluding_tables", excluding_tables, None)
    if mode is not None and mode.strip() and mode.strip().lower() not in DATABASE_MODES:
        raise CompactArgumentError(
            f"compact_database: mode must be one of {', '.join(DATABASE_MODES)}, got '{mode}'."
        )
    parse_options(options)  # a malformed text fails before any table is compacted
    succeeded = failed = 0
    catalog = runner.catalog
    for database in catalog.list_databases():
        if databases is None or not databases.fullmatch(database):
            continue
        for name in catalog.list_tables(database):
            full = f"{database}.{name}"
            if including is None or not including.fullmatch(full):
                continue
            if excluding is not None and excluding.fullmatch(full):
                continue
            try:
                calls.compact(
                    runner,
                    full,
                    options=options,
                    partition_idle_time=partition_idle_time,
                    compact_strategy=compact_strategy,
                    progress=progress,
                )
                succeeded += 1
                say(f"compacted table {full}")
            except Exception:
                failed += 1
                LOG.exception("compact_database: failed to compact table %s", full)
    return f"Compact database finished. Success: {succeeded}, Failed: {failed}"


def _pattern(name: str, value: object, default: str | None) -> re.Pattern[str] | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None if default is None else re.compile(default)
    if not isinstance(value, str):
        raise InvalidArgumentError(
            f"compact_database: argument '{name}' must be a regular expression (a string), "
            f"got {describe(value)}."
        )
    try:
        return re.compile(value)
    except re.error as e:
        raise CompactArgumentError(
            f"compact_database: argument '{name}' is not a regular expression: '{value}' ({e})."
        ) from e
