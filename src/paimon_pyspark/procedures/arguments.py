"""The arguments of Java's ``CALL sys.*`` procedures, parsed in one place for every runner.

Mirrors org.apache.paimon.utils.ParameterUtils (partition specs ``'dt=1,hr=2;dt=2'``, integer
ranges ``'0-3,7'``, dynamic options ``'k1=v1,k2=v2'``) and the argument checks of
CompactProcedure: the strategy, ``partitions`` or ``where`` (not both), and ``buckets`` only for
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

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.compact.plan import PartitionFilter, check_compactable
from paimon_pyspark.errors import CompactArgumentError, UnsupportedOptionError
from paimon_pyspark.maintenance.expire import parse_timestamp_ms
from paimon_pyspark.maintenance.orphan_files import default_older_than_ms
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import partition_value_string
from paimon_pyspark.table.file_store_table import FileStoreTable

FULL = "full"
MINOR = "minor"
LOCAL = "local"
DISTRIBUTED = "distributed"

PartitionSpecs = str | Sequence[Mapping[str, Any]] | None


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


@dataclass(frozen=True)
class CompactRequest:
    """The arguments of ``CALL sys.compact`` resolved against the table: the table with the
    procedure's dynamic options (``write-only`` off, as Java's procedure sets it), checked to
    be compactable."""

    table: FileStoreTable
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
        loaded = table.copy({"write-only": "false", **parse_options(options)})
        check_compactable(loaded.store)
        if buckets is not None and loaded.bucket_mode != BucketMode.HASH_FIXED:
            raise UnsupportedOptionError(
                f"Table '{loaded.name}': specifying buckets is only supported for fixed-bucket "
                f"tables, but the table bucket mode is {loaded.bucket_mode}."
            )
        keep = partition_filter(loaded.store, specs, where)
        bucket_set = None
        if loaded.bucket_mode != BucketMode.POSTPONE_MODE:
            bucket_set = parse_buckets(buckets, loaded.options.bucket)
        return CompactRequest(loaded, full, keep, bucket_set)


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


def tables_of(catalog: FileSystemCatalog, table: str) -> list[str]:
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
