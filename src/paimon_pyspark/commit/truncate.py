"""Truncating a table or some of its partitions: an OVERWRITE commit that adds no files.

Mirrors org.apache.paimon.operation.FileStoreCommitImpl.truncateTable and dropPartitions
(TableCommitImpl.truncateTable / truncatePartitions, which Catalog.dropPartitions calls for a
filesystem catalog): one OVERWRITE snapshot deleting every live data file, and every index
file, of the table or of the partitions that match any of the given (possibly partial) specs.
It goes through the overwrite path of file_store_commit.py with no new files, so it retries
and checks conflicts as an overwrite does, and it commits even when nothing matches, as Java.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from paimon_pyspark.commit.file_store_commit import OVERWRITE, new_store_commit
from paimon_pyspark.commit.overwrite import PartitionFilter, describe_spec, partition_spec
from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import DataType


class AnyOfSpecs(PartitionFilter):
    """The partitions matching any of several canonical specs (Java's OR of partition
    predicates; a full spec is one partition, a partial one every partition under it)."""

    def __init__(self, types: Sequence[DataType], specs: list[dict[int, Any]], text: str) -> None:
        super().__init__(types, spec={}, description=text)
        self.specs = specs
        self._hits: dict[bytes, bool] = {}

    def __call__(self, partition: bytes) -> bool:
        hit = self._hits.get(partition)
        if hit is None:
            values = self._values(partition)
            hit = any(all(values[i] == v for i, v in s.items()) for s in self.specs)
            self._hits[partition] = hit
        return hit


def partitions_filter(store: FileStore, partitions: object, call: str) -> AnyOfSpecs:
    """``partitions`` (a non-empty list of partition key -> value mappings, values as Python
    values or Java's strings) as a filter; InvalidArgumentError or PartitionSpecError else."""
    if not isinstance(partitions, list | tuple) or not partitions:
        raise InvalidArgumentError(
            f"Table '{store.name}': {call} takes a non-empty list of partition specs "
            f"(dicts of partition key to value), got {describe(partitions)}."
        )
    if not store.partition_keys:
        raise InvalidArgumentError(
            f"Table '{store.name}': {call} needs a partitioned table; this one has no "
            "partition keys (truncate_table empties it)."
        )
    specs: list[dict[int, Any]] = []
    for p in partitions:
        if not isinstance(p, Mapping) or not p or not all(isinstance(k, str) for k in p):
            raise InvalidArgumentError(
                f"Table '{store.name}': {call}: each partition spec is a non-empty dict of "
                f"partition key to value, got {describe(p)}."
            )
        specs.append(
            partition_spec(
                store.name,
                store.partition_keys,
                store.partition_types,
                p,
                store.options.partition_default_name,
            )
        )
    text = "; ".join(describe_spec(store.partition_keys, s) for s in specs)
    return AnyOfSpecs(store.partition_types, specs, text)


def truncate(
    store: FileStore, commit_user: str, filter_: PartitionFilter | None, identifier: int
) -> int:
    """Commit the OVERWRITE snapshot that deletes what ``filter_`` matches (everything for
    None); returns its id."""
    commit = new_store_commit(store, commit_user)
    return commit._try_commit(
        commit._overwrite_changes([], filter_, None),
        OVERWRITE,
        identifier,
        True,
        commit._overwrite_index_changes([], filter_),
    )
