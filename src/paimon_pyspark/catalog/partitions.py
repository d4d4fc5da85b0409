"""A table's partitions as the catalog lists them: pypaimon's ``Partition`` and ``PagedList``.

Mirrors org.apache.paimon.catalog.CatalogUtils.listPartitionsFromFileSystem (PartitionEntry
merged over the live files of the latest snapshot; every level, postpone buckets too), with
pypaimon's paging (``page_token`` is the index of the next partition, as a string) and name
pattern (``*`` matches any text, over ``k=v,k2=v2``). A partition's ``spec`` values are the
strings of its directory name (``partition.default-name`` for null), as Java's
InternalRowPartitionComputer gives them; ``total_buckets`` is the partition's bucket count
(Java's PartitionEntry.totalBuckets), where pypaimon counts the buckets that hold files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.read.fallback_read import partition_sources
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import partition_value_string

T = TypeVar("T")


@dataclass
class Partition:
    """One partition's totals (Java's org.apache.paimon.partition.Partition)."""

    spec: dict[str, str]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int
    total_buckets: int
    done: bool = False


@dataclass
class PagedList(Generic[T]):
    """A page of results and the token of the next one (None on the last page)."""

    elements: list[T] = field(default_factory=list)
    next_page_token: str | None = None


def list_partitions(store: FileStore) -> list[Partition]:
    """The partitions of the latest snapshot, sorted by name; with ``scan.fallback-branch`` or
    ``scan.primary-branch``, those of both branches, as a batch read takes them
    (read/fallback_read.py)."""
    found: dict[str, Partition] = {}
    for source in partition_sources(store):
        for p in _branch_partitions(source):
            found.setdefault(partition_name(p), p)
    return sorted(found.values(), key=partition_name)


def _branch_partitions(store: FileStore) -> list[Partition]:
    snapshot = store.snapshot_manager.latest()
    if snapshot is None:
        return []
    o = store.options
    types = store.partition_types
    totals: dict[bytes, Partition] = {}
    for e in store.manifest_io.live_entries(snapshot):
        p = totals.get(e.partition)
        if p is None:
            values = deserialize_with_arity(e.partition, types)
            spec = {
                k: partition_value_string(v, t, o.partition_legacy_name, o.partition_default_name)
                for k, v, t in zip(store.partition_keys, values, types, strict=True)
            }
            p = totals[e.partition] = Partition(spec, 0, 0, 0, 0, e.total_buckets)
        p.record_count += e.file.row_count
        p.file_size_in_bytes += e.file.file_size
        p.file_count += 1
        p.total_buckets = max(p.total_buckets, e.total_buckets)
        if e.file.creation_time is not None:
            p.last_file_creation_time = max(p.last_file_creation_time, e.file.creation_time)
    return sorted(totals.values(), key=partition_name)


def partition_name(p: Partition) -> str:
    return ",".join(f"{k}={v}" for k, v in p.spec.items())


def page_partitions(
    partitions: list[Partition],
    max_results: int | None,
    page_token: str | None,
    pattern: str | None,
    table: str,
) -> PagedList[Partition]:
    """pypaimon's paging of ``partitions``; an invalid argument raises InvalidArgumentError."""
    call = f"Table '{table}': list_partitions_paged"
    if max_results is not None and (
        isinstance(max_results, bool) or not isinstance(max_results, int)
    ):
        raise InvalidArgumentError(
            f"{call}: max_results must be an int, got {describe(max_results)}."
        )
    if pattern is not None:
        if not isinstance(pattern, str):
            raise InvalidArgumentError(
                f"{call}: partition_name_pattern must be a string, got {describe(pattern)}."
            )
        regex = re.compile(re.escape(pattern).replace(r"\*", ".*"))
        partitions = [p for p in partitions if regex.fullmatch(partition_name(p))]
    start = 0
    if page_token is not None:
        if not isinstance(page_token, str) or not page_token.isdigit():
            raise InvalidArgumentError(
                f"{call}: page_token must be a token a previous page returned, got "
                f"{describe(page_token)}."
            )
        start = int(page_token)
    end = len(partitions)
    if max_results is not None and max_results > 0:
        end = min(start + max_results, end)
    token = str(end) if max_results is not None and end < len(partitions) else None
    return PagedList(partitions[start:end], token)
