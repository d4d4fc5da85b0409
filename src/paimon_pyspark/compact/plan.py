"""Planning a table's compaction into independent tasks, and running one task.

Mirrors what Java's CompactProcedure does around the writers: it lists the (partition, bucket)
pairs of the latest snapshot that the ``partitions`` / ``where`` / ``buckets`` arguments keep,
hands each pair to a writer's ``compact(partition, bucket, full)`` (fixed-bucket append and
primary-key tables), or lets AppendCompactCoordinator pack small files into tasks (bucket-
unaware append tables, where ``compact_strategy`` does not matter). Here the driver already
knows each bucket's files, so buckets with nothing to do get no task at all.

A ``CompactTask`` is a frozen, picklable value: the same plan runs in this process
(``paimon_pyspark.procedures.compact``) or as one Spark task per bucket
(``paimon_pyspark.spark.procedures.compact``). ``run_task`` returns the CommitMessage of one
task (a CompactIncrement), the driver commits all of them as one COMPACT snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from paimon_pyspark.compact.append import (
    pack_unaware,
    pick_bucketed_full,
    pick_bucketed_minor,
    rewrite_append_files,
)
from paimon_pyspark.compact.merge_tree import (
    compact_kv_bucket,
    lookup_compaction_supported,
    strategy_of,
)
from paimon_pyspark.compact.settings import CompactSettings
from paimon_pyspark.compact.universal import Levels, key_order, pick_full_compaction, pick_minor
from paimon_pyspark.errors import PaimonError, UnsupportedOptionError
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.paths import partition_value_string

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

FULL = "full"
MINOR = "minor"
KV = "kv"
APPEND = "append"

PartitionSpecs = str | Sequence[Mapping[str, Any]] | None


class CompactArgumentError(PaimonError):
    """An argument of ``compact`` that Java's procedure would refuse too."""


@dataclass(frozen=True)
class CompactTask:
    """One unit of compaction work, self-contained so that it can travel to an executor.

    ``kind`` ``kv``: every file of a primary-key bucket, picked from in the task (as a Java
    writer does). ``append``: exactly the append files to rewrite into one, in order.
    """

    kind: str
    partition: bytes
    partition_values: tuple[Any, ...]
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    full: bool


@dataclass(frozen=True)
class CompactPlan:
    snapshot_id: int | None
    tasks: tuple[CompactTask, ...]
    buckets_seen: int


# --- arguments ------------------------------------------------------------------------------


def parse_strategy(compact_strategy: str | None) -> bool:
    """True for a full compaction; Java's default (no strategy) is full."""
    if compact_strategy is None or not compact_strategy.strip():
        return True
    s = compact_strategy.strip().lower()
    if s not in (FULL, MINOR):
        raise CompactArgumentError(
            "The compact strategy only supports 'full' or 'minor', but "
            f"'{compact_strategy}' is configured."
        )
    return s == FULL


def parse_partitions(partitions: PartitionSpecs) -> list[dict[str, str]] | None:
    """Java's partition spec string ``'dt=1,hr=2;dt=2'`` or a list of dicts, as string specs."""
    if partitions is None:
        return None
    if isinstance(partitions, str):
        if not partitions.strip():
            return None
        specs = []
        for part in partitions.split(";"):
            spec: dict[str, str] = {}
            for kv in part.split(","):
                if not kv.strip():
                    continue
                key, sep, value = kv.partition("=")
                if not sep or not key.strip():
                    raise CompactArgumentError(
                        f"Partition spec '{part}' must look like 'key1=value1,key2=value2'."
                    )
                spec[key.strip()] = value.strip()
            if spec:
                specs.append(spec)
        return specs or None
    return [{str(k): _spec_text(v) for k, v in p.items()} for p in partitions]


def _spec_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def parse_buckets(buckets: str | Sequence[int] | None, num_buckets: int) -> set[int] | None:
    """``'0-3,7'`` (Java's ParameterUtils.parseIntegerRanges) or a list of bucket ids."""
    if buckets is None:
        return None
    if not isinstance(buckets, str):
        return {int(b) for b in buckets}
    out: set[int] = set()
    for piece in buckets.split(","):
        piece = piece.strip()
        if not piece:
            continue
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", piece)
        lo, hi = (int(m.group(1)), int(m.group(2))) if m else (int(piece), int(piece))
        if lo > hi or hi >= num_buckets:
            raise CompactArgumentError(
                f"Bucket range '{piece}' is not within 0..{num_buckets - 1}."
            )
        out.update(range(lo, hi + 1))
    return out or None


def parse_options(options: str | Mapping[str, Any] | None) -> dict[str, str]:
    """Dynamic table options: ``'k1=v1,k2=v2'`` as Java's procedures take them, or a dict."""
    if options is None:
        return {}
    if isinstance(options, str):
        out = {}
        for kv in options.split(","):
            if kv.strip():
                key, sep, value = kv.partition("=")
                if not sep:
                    raise CompactArgumentError(f"Option '{kv}' must look like 'key=value'.")
                out[key.strip()] = value.strip()
        return out
    return {str(k): str(v) for k, v in options.items()}


PartitionFilter = Callable[[Sequence[Any]], bool]


def partition_filter(
    table: FileStore, specs: list[dict[str, str]] | None, where: Predicate | None
) -> PartitionFilter | None:
    """Partition values -> kept? From string specs (matched as partition directory values,
    so ``__DEFAULT_PARTITION__`` names null) or from a predicate on partition columns."""
    if specs is not None and where is not None:
        raise CompactArgumentError("partitions and where cannot be used together.")
    keys = table.partition_keys
    if where is not None:
        outside = where.fields() - set(keys)
        if outside:
            raise CompactArgumentError(
                f"Table '{table.name}': where may only use partition columns {keys}, "
                f"got {sorted(outside)}."
            )
        return lambda values: where.test_values(dict(zip(keys, values, strict=True)))
    if specs is None:
        return None
    for spec in specs:
        unknown = [k for k in spec if k not in keys]
        if unknown:
            raise CompactArgumentError(
                f"Table '{table.name}': {unknown} are not partition keys (partition keys: {keys})."
            )
    legacy = table.options.partition_legacy_name
    default = table.options.partition_default_name
    types = table.partition_types

    def keep(values: Sequence[Any]) -> bool:
        texts = {
            k: partition_value_string(v, t, legacy, default)
            for k, v, t in zip(keys, values, types, strict=True)
        }
        return any(all(texts[k] == v for k, v in spec.items()) for spec in specs)

    return keep


# --- planning -------------------------------------------------------------------------------


def check_compactable(table: FileStore, full: bool = True) -> None:
    """Refuse what this compaction would get wrong rather than do it differently from Java.

    A minor compaction of a table that needs lookup (``first-row``, ``force-lookup``) must
    consult the higher levels for every level-0 key (LookupMergeTreeCompactRewriter): done for
    first-row and deduplicate tables (``merge_tree.lookup_compaction_supported``), refused for
    the others; a full compaction merges every file and needs no lookup.
    """
    mode = table.bucket_mode
    supported = (
        (BucketMode.HASH_FIXED, BucketMode.POSTPONE_MODE)
        if table.primary_keys
        else (BucketMode.HASH_FIXED, BucketMode.BUCKET_UNAWARE)
    )
    if mode not in supported:
        raise UnsupportedOptionError(
            f"Table '{table.name}': compaction of bucket mode {mode} is not supported by "
            "paimon_pyspark yet."
        )
    lookup = table.primary_keys and CompactSettings.from_table(table).need_lookup
    if lookup and not full and not lookup_compaction_supported(table):
        raise UnsupportedOptionError(
            f"Table '{table.name}': minor compaction of a table that needs lookup "
            "(force-lookup with the partial-update or aggregation merge engine, or with "
            "sequence.field) is not supported by paimon_pyspark yet; use compact_strategy 'full'."
        )


def plan_compaction(
    table: FileStore,
    full: bool,
    keep_partition: PartitionFilter | None = None,
    buckets: set[int] | None = None,
) -> CompactPlan:
    """The tasks of one compaction of the latest snapshot (empty: nothing to compact)."""
    check_compactable(table, full)
    snapshot = table.snapshot_manager.latest()
    if snapshot is None:
        return CompactPlan(None, (), 0)
    groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    totals: dict[tuple[bytes, int], int] = {}
    values_of: dict[bytes, tuple[Any, ...]] = {}
    for e in table.manifest_io.live_entries(snapshot):
        if e.bucket < 0 or (buckets is not None and e.bucket not in buckets):
            continue
        values = values_of.get(e.partition)
        if values is None:
            values = tuple(deserialize_with_arity(e.partition, table.partition_types))
            values_of[e.partition] = values
        if keep_partition is not None and not keep_partition(values):
            continue
        groups.setdefault((e.partition, e.bucket), []).append(e.file)
        totals[(e.partition, e.bucket)] = e.total_buckets
    s = CompactSettings.from_table(table)
    tasks: list[CompactTask] = []
    for (partition, bucket), files in groups.items():
        total = totals[(partition, bucket)]
        values = values_of[partition]
        if table.primary_keys:
            if _kv_has_work(table, files, full, s):
                tasks.append(CompactTask(KV, partition, values, bucket, total, tuple(files), full))
        elif table.bucket_mode == BucketMode.BUCKET_UNAWARE:
            for group in pack_unaware(files, s):
                tasks.append(
                    CompactTask(APPEND, partition, values, bucket, total, tuple(group), full)
                )
        else:
            picked = pick_bucketed_full(files, s) if full else pick_bucketed_minor(files, s)
            if picked:
                tasks.append(
                    CompactTask(APPEND, partition, values, bucket, total, tuple(picked), full)
                )
    return CompactPlan(snapshot.id, tuple(tasks), len(groups))


def _kv_has_work(
    table: FileStore, files: Sequence[DataFileMeta], full: bool, s: CompactSettings
) -> bool:
    """Whether the first round of the bucket's compaction picks anything (a second round only
    runs on what the first one changed, so no first pick means no work)."""
    types = [table.table_schema.field(k).type for k in table.table_schema.trimmed_primary_keys()]
    levels = Levels(files, s.num_levels, key_order(types))
    runs = levels.level_sorted_runs()
    if full:
        return pick_full_compaction(levels.num_levels, runs, s.force_rewrite_all_files) is not None
    return pick_minor(strategy_of(s), levels.num_levels, runs) is not None


# --- running --------------------------------------------------------------------------------


def run_task(table: FileStore, task: CompactTask) -> CommitMessage | None:
    """Compact one task's files; the message holds inputs as compact_before, outputs after."""
    if task.kind == KV:
        before, after = compact_kv_bucket(
            table, task.partition_values, task.bucket, task.files, task.full
        )
    else:
        before = list(task.files)
        after = rewrite_append_files(
            table, task.partition, task.partition_values, task.bucket, task.files
        )
    if not before and not after:
        return None
    increment = CompactIncrement(compact_before=tuple(before), compact_after=tuple(after))
    return CommitMessage(
        task.partition, task.bucket, task.total_buckets, compact_increment=increment
    )


def written_only(message: CommitMessage) -> CommitMessage:
    """The message with only the files its task wrote: what an abort may delete.

    An upgraded file is in compact_before and compact_after under the same name; it is a live
    file of the table and must survive an aborted compaction.
    """
    inputs = {f.file_name for f in message.compact_increment.compact_before}
    written = tuple(f for f in message.compact_increment.compact_after if f.file_name not in inputs)
    return replace(message, compact_increment=CompactIncrement(compact_after=written))
