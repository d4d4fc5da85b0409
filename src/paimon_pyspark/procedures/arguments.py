"""The arguments of Java's ``CALL sys.*`` procedures, parsed in one place for every runner.

Mirrors org.apache.paimon.utils.ParameterUtils (partition specs ``'dt=1,hr=2;dt=2'``, integer
ranges ``'0-3,7'``, dynamic options ``'k1=v1,k2=v2'``) and the argument checks of
CompactProcedure (Flink's, whose positional order the seed's ``CALL sys.compact`` uses, with
Spark's checks where Flink's action has none): an empty or whitespace-only string is "not
given"; the strategy; ``partitions`` or ``where`` (not both), ``where`` a SQL boolean
expression (read/sql_predicate.py) or a Predicate on partition columns only;
``order_strategy`` and ``order_by`` both or neither, never with ``partition_idle_time``;
``partition_idle_time`` a duration as TimeUtils.parseDuration reads it; ``buckets`` only for
fixed-bucket tables. ``CompactRequest`` is ``CALL sys.compact``'s arguments resolved against the
table. ``remove_orphan_files``' ``table`` (``'db.t'`` or ``'db.*'``), ``older_than`` and ``mode``
are parsed as RemoveOrphanFilesProcedure and OrphanFilesClean.olderThanMillis parse them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.compact.plan import PartitionFilter
from paimon_pyspark.compact.sort import NONE, SortOrder, check_sortable, parse_sort_order
from paimon_pyspark.errors import (
    CompactArgumentError,
    InvalidArgumentError,
    OptionError,
    PredicateError,
    UnsupportedOptionError,
    describe,
)
from paimon_pyspark.maintenance.expire import parse_timestamp_ms
from paimon_pyspark.maintenance.orphan_files import default_older_than_ms
from paimon_pyspark.options import parse_duration_ms
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import partition_value_string
from paimon_pyspark.table.file_store_table import FileStoreTable

FULL = "full"
MINOR = "minor"
LOCAL = "local"
DISTRIBUTED = "distributed"

PartitionSpecs = str | Sequence[Mapping[str, Any]] | None


def given(name: str, value: Any) -> str | None:
    """A string argument, or None when it is None, empty or whitespace only (Java's
    ``isNullOrWhitespaceOnly``: not given)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(
            f"compact: argument '{name}' must be a string, got {describe(value)}."
        )
    return value if value.strip() else None


def parse_strategy(compact_strategy: str | None) -> bool:
    """True for a full compaction; Java's default (no strategy) is full."""
    compact_strategy = given("compact_strategy", compact_strategy)
    if compact_strategy is None:
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


def parse_order(
    order_strategy: str | None, order_by: str | Sequence[str] | None, partition_idle_time: Any
) -> SortOrder | None:
    """The sort of a sort compaction, or None; Flink's CompactProcedure checks (both or
    neither, no ``partition_idle_time``) and Spark's for ``'none'``."""
    strategy = given("order_strategy", order_strategy)
    if order_by is None or isinstance(order_by, str):
        text = given("order_by", order_by)
        columns = None if text is None else text.split(",")
    elif isinstance(order_by, Sequence) and all(isinstance(c, str) for c in order_by):
        columns = list(order_by) or None
    else:
        raise InvalidArgumentError(
            "compact: argument 'order_by' must be a string of comma-separated columns or a "
            f"list of column names, got {describe(order_by)}."
        )
    if strategy is not None and strategy.strip().lower() == NONE:
        if columns is not None:
            raise CompactArgumentError('order_strategy "none" cannot work with order_by columns.')
        return None
    if strategy is None and columns is None:
        return None
    if strategy is None or columns is None:
        raise CompactArgumentError("You must specify 'order strategy' and 'order by columns' both.")
    if given("partition_idle_time", partition_idle_time) is not None:
        raise CompactArgumentError("sort compact do not support 'partition_idle_time'.")
    return parse_sort_order(strategy, columns)


def parse_idle_time(partition_idle_time: str | None, table: str) -> int | None:
    """``partition_idle_time`` in milliseconds (TimeUtils.parseDuration: ``'1 d'``, ``'2h'``,
    ``'30 min'``; no unit is milliseconds), or None when not given."""
    text = given("partition_idle_time", partition_idle_time)
    if text is None:
        return None
    try:
        return parse_duration_ms(text, "partition_idle_time", table)
    except OptionError as e:
        raise CompactArgumentError(
            f"Table '{table}': partition_idle_time '{text}' is not a duration like '1 d' or "
            f"'30 min': {e}"
        ) from e


def parse_where(where: str | Predicate | None, table: FileStore) -> Predicate | None:
    """``where`` as SQL text (parsed against the table's fields) or a Predicate as it is."""
    if where is None or isinstance(where, Predicate):
        return where
    text = given("where", where)
    if text is None:
        return None
    try:
        return parse_predicate(text, table.fields, table.name)
    except PredicateError as e:
        raise CompactArgumentError(f"Argument 'where': {e}") from e


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
                f"Table '{table.name}': Only partition key can be specialized in compaction "
                f"action: where may only use partition columns {keys}, got {sorted(outside)}."
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


@dataclass(frozen=True)
class CompactRequest:
    """The arguments of ``CALL sys.compact`` resolved against the table: the table with the
    procedure's dynamic options (``write-only`` off, as Java's procedure sets it), checked to
    be compactable (or sortable, with ``sort``). ``idle_ms``: ``partition_idle_time``."""

    table: FileStoreTable
    full: bool
    keep: PartitionFilter | None
    buckets: set[int] | None
    sort: SortOrder | None = None
    idle_ms: int | None = None

    @staticmethod
    def of(
        table: FileStoreTable,
        partitions: PartitionSpecs,
        compact_strategy: str | None,
        where: str | Predicate | None,
        options: str | Mapping[str, Any] | None,
        buckets: str | Sequence[int] | None,
        order_strategy: str | None = None,
        order_by: str | Sequence[str] | None = None,
        partition_idle_time: str | None = None,
    ) -> CompactRequest:
        if options is not None and not isinstance(options, str | Mapping):
            raise InvalidArgumentError(
                "compact: argument 'options' must be a string 'k1=v1,k2=v2' or a dict, got "
                f"{describe(options)}."
            )
        dynamic = parse_options(options)
        sort = parse_order(order_strategy, order_by, partition_idle_time)
        if sort is not None:  # Java's is an overwrite: new files, new ids for every row
            table.options.check_row_tracking_rewrite(
                "a sort compaction",
                "Java's sort compaction overwrites the rows as new ones, with new ids; compact "
                "without 'order_strategy' (the rows keep their ids), or sort with Java Paimon.",
            )
        idle_ms = parse_idle_time(partition_idle_time, table.name)
        full = parse_strategy(compact_strategy)
        if partitions is not None and not isinstance(partitions, str | Sequence):
            raise InvalidArgumentError(
                "compact: argument 'partitions' must be a string 'k1=v1,k2=v2;k1=v3' or a list "
                f"of dicts, got {describe(partitions)}."
            )
        specs = parse_partitions(partitions)
        if where is not None and not isinstance(where, str | Predicate):
            raise InvalidArgumentError(
                "compact: argument 'where' must be a SQL boolean expression or a Predicate, "
                f"got {describe(where)}."
            )
        loaded = table.copy({"write-only": "false", **dynamic})
        if sort is not None:
            check_sortable(loaded.store, sort)
        if buckets is not None and loaded.bucket_mode != BucketMode.HASH_FIXED:
            raise UnsupportedOptionError(
                f"Table '{loaded.name}': specifying buckets is only supported for fixed-bucket "
                f"tables, but the table bucket mode is {loaded.bucket_mode}."
            )
        keep = partition_filter(loaded.store, specs, parse_where(where, loaded.store))
        bucket_set = None
        if loaded.bucket_mode != BucketMode.POSTPONE_MODE:
            bucket_set = parse_buckets(buckets, loaded.options.bucket)
        return CompactRequest(loaded, full, keep, bucket_set, sort, idle_ms)


def parse_older_than(older_than: str | None, now_ms: int | None = None) -> int:
    """The cutoff of ``remove_orphan_files`` in epoch milliseconds: one day before now when
    blank, else ``'yyyy-MM-dd HH:mm:ss'`` in local time, which must be before now, as Java
    checks it: files being written now are not in a snapshot yet."""
    if older_than is None or not older_than.strip():
        return default_older_than_ms(now_ms)
    cutoff = parse_timestamp_ms(older_than)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if cutoff >= now:
        raise CompactArgumentError(
            f"older_than '{older_than}' must be before now: data files being written and not "
            "yet referenced by a snapshot would be deleted."
        )
    return cutoff


def parse_mode(mode: str | None) -> str | None:
    """``'local'`` or ``'distributed'`` (any case), or None for the runner's own way."""
    if mode is None or not mode.strip():
        return None
    m = mode.strip().lower()
    if m not in (LOCAL, DISTRIBUTED):
        raise CompactArgumentError(
            f"Unknown mode: {mode}. Only 'DISTRIBUTED' and 'LOCAL' are supported."
        )
    return m


def tables_of(catalog: Catalog, table: str) -> list[str]:
    """``['db.t']`` (the catalog checks the name when it loads it), or every table of ``db``
    for ``'db.*'``."""
    if not isinstance(table, str) or not table.strip():
        raise CompactArgumentError(f"table must name a table ('db.t' or 'db.*'), got {table!r}.")
    text = table.strip()
    if text.endswith(".*"):
        database = text[:-2]
        if not database or "." in database:
            raise CompactArgumentError(f"table '{table}' must look like 'db.t' or 'db.*'.")
        return [f"{database}.{t}" for t in catalog.list_tables(database)]
    return [text]
