"""Java's ``CALL sys.*`` procedures, with the same names and arguments, run in this process.

``compact`` mirrors org.apache.paimon.spark.procedure.CompactProcedure:

    CALL sys.compact(table => 'db.t', partitions => 'dt=1,hr=2;dt=2', compact_strategy => 'full')
    compact(catalog, "db.t", partitions="dt=1,hr=2;dt=2", compact_strategy="full")

The Spark twin, one Spark task per bucket, is ``paimon_pyspark.spark.procedures.compact``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.commit.table_commit import TableCommit
from paimon_pyspark.compact.plan import (
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
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.table.file_store_table import FileStoreTable

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
    full = parse_strategy(compact_strategy)
    specs = parse_partitions(partitions)
    dynamic = {"write-only": "false", **parse_options(options)}
    loaded = prepare_table(catalog.get_table(table), dynamic, buckets is not None)
    keep = partition_filter(loaded, specs, where)
    bucket_set = parse_buckets(buckets, loaded.options.bucket)
    plan = plan_compaction(loaded, full, keep, bucket_set)
    say(
        f"planned {len(plan.tasks)} compaction task(s) over {plan.buckets_seen} bucket(s) "
        f"of {table} (snapshot {plan.snapshot_id}, {'full' if full else 'minor'})"
    )
    if not plan.tasks:
        return None
    messages: list[CommitMessage] = []
    commit = TableCommit(loaded, str(uuid.uuid4()))
    try:
        for i, task in enumerate(plan.tasks, 1):
            message = run_task(loaded, task)
            if message is not None:
                messages.append(message)
            say(f"compacted task {i}/{len(plan.tasks)} (bucket {task.bucket})")
        ids = commit.commit(messages) if messages else []
    except BaseException:
        commit.abort([written_only(m) for m in messages])
        raise
    say(f"committed snapshot {ids[-1] if ids else None} of {table}")
    return ids[-1] if ids else None


def prepare_table(
    table: FileStoreTable, dynamic: Mapping[str, str], with_buckets: bool
) -> FileStoreTable:
    """The table with the procedure's dynamic options, checked to be compactable."""
    loaded = table.copy(dict(dynamic)) if dynamic else table
    check_compactable(loaded)
    if with_buckets and loaded.bucket_mode != "HASH_FIXED":
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
