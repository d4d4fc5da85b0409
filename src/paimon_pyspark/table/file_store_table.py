"""FileStoreTable: the user-facing table, the facade over its FileStore.

Mirrors org.apache.paimon.table.FileStoreTable (AppendOnlyFileStoreTable for tables without a
primary key): builders for writing and reading, named as pypaimon names them (and
``new_write_builder`` as seed 004 names it), ``copy`` with dynamic options, and ``delete``.
Everything the operations need lives in ``self.store`` (store/file_store.py); the properties
here are the table's public identity.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

import pyarrow as pa

from paimon_pyspark.errors import (
    InvalidArgumentError,
    PaimonError,
    UnsupportedOptionError,
    describe,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.maintenance import tags
from paimon_pyspark.merge.merge_function import check_merge_options
from paimon_pyspark.options import TIME_TRAVEL_KEYS, CoreOptions
from paimon_pyspark.read.incremental import earlier_or_equal
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.scan import TableScan
from paimon_pyspark.read.store_ref import StoreRef
from paimon_pyspark.read.stream_scan import StreamReadBuilder
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.external_paths import ExternalPaths
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.managers import SchemaManager
from paimon_pyspark.store.manifest_io import ManifestIO
from paimon_pyspark.store.snapshot_commit import SnapshotCommit
from paimon_pyspark.table.append_delete import delete_rows
from paimon_pyspark.table.branch_manager import BranchManager
from paimon_pyspark.table.snapshot_manager import TableSnapshotManager
from paimon_pyspark.table.stream_builders import StreamWriteBuilder
from paimon_pyspark.table.tag_manager import TableTagManager
from paimon_pyspark.table.write_builder import BatchWriteBuilder
from paimon_pyspark.types.data_types import DataField, DataType


class FileStoreTable:
    def __init__(
        self,
        file_io: FileIO,
        path: str,
        name: str,
        schema: TableSchema,
        dynamic_options: Mapping[str, str] | None = None,
        snapshot_commit: SnapshotCommit | None = None,
    ) -> None:
        self.store = FileStore(file_io, path, name, schema, dynamic_options, snapshot_commit)
        check_merge_options(self.store.options.options, schema.fields, schema.primary_keys, name)

    @staticmethod
    def of(store: FileStore) -> FileStoreTable:
        """The facade over ``store`` (a distributed task that was handed the store)."""
        return FileStoreTable(
            store.file_io,
            store.path,
            store.name,
            store.table_schema,
            store.dynamic_options,
            store.snapshot_commit,
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickles as plain values (pypaimon's tables pickle; Ray ships one to its write
        tasks): the store's URI, filesystem options, name, schema id and dynamic options.
        Unpickling reads that schema back from the warehouse (read/store_ref.py)."""
        return FileStoreTable.of, (StoreRef.of(self.store),)

    # --- identity and schema -----------------------------------------------------------------

    @property
    def file_io(self) -> FileIO:
        return self.store.file_io

    @property
    def path(self) -> str:
        return self.store.path

    @property
    def name(self) -> str:
        return self.store.name

    @property
    def table_schema(self) -> TableSchema:
        return self.store.table_schema

    @property
    def dynamic_options(self) -> dict[str, str]:
        return self.store.dynamic_options

    @property
    def options(self) -> CoreOptions:
        return self.store.options

    @property
    def fields(self) -> tuple[DataField, ...]:
        return self.store.fields

    @property
    def field_names(self) -> list[str]:
        return self.store.field_names

    @property
    def partition_keys(self) -> list[str]:
        return self.store.partition_keys

    @property
    def primary_keys(self) -> list[str]:
        return self.store.primary_keys

    @property
    def partition_types(self) -> list[DataType]:
        return self.store.partition_types

    @property
    def arrow_schema(self) -> pa.Schema:
        return self.store.arrow_schema

    @property
    def bucket_mode(self) -> BucketMode:
        return self.store.bucket_mode

    @property
    def bucket_keys(self) -> list[str]:
        return self.store.bucket_keys

    @property
    def external_paths(self) -> ExternalPaths | None:
        """``data-file.external-paths`` (store/external_paths.py), None when unset."""
        return self.store.external_paths

    @cached_property
    def snapshot_manager(self) -> TableSnapshotManager:
        """The snapshot manager; also callable, as pypaimon's ``table.snapshot_manager()``."""
        return TableSnapshotManager(self.file_io, self.store.branch_path)

    @property
    def schema_manager(self) -> SchemaManager:
        return self.store.schema_manager

    @property
    def manifest_io(self) -> ManifestIO:
        return self.store.manifest_io

    @property
    def tag_manager(self) -> TableTagManager:
        """The tag manager; also callable, as pypaimon's ``table.tag_manager()``."""
        return TableTagManager(self.file_io, self.store.branch_path)

    def branch_manager(self) -> BranchManager:
        """pypaimon's ``table.branch_manager()``: create, drop, rename, fast-forward and list
        branches from this handle's branch (table/branch_manager.py)."""
        return BranchManager(self.store)

    def current_branch(self) -> str:
        """The branch this handle reads and writes: ``main``, or ``b`` for ``db.t$branch_b``."""
        return self.store.branch

    def rename_branch(self, from_branch: str, to_branch: str) -> None:
        """pypaimon's ``table.rename_branch``: ``branch_manager().rename_branch``."""
        self.branch_manager().rename_branch(from_branch, to_branch)

    def partition_rel_path(self, values: list[Any]) -> str:
        return self.store.partition_rel_path(values)

    def copy(self, options: Mapping[str, Any], time_travel: bool = True) -> FileStoreTable:
        """The same table with options overridden for this handle only (pypaimon's copy).

        Options are strings, as in Java; ints and floats are taken as their text and bools as
        ``true``/``false``. Anything else (None, bytes, a list) is refused rather than turned
        into its repr. A copy that reads an earlier snapshot (``scan.snapshot-id``,
        ``scan.tag-name``, ``scan.timestamp[-millis]``) takes the schema that snapshot was
        committed with, as Java's copy does; ``time_travel=False`` keeps the latest schema, for
        a pin whose handle writes (Java's copyWithoutTimeTravel).
        """
        if not isinstance(options, Mapping):
            raise InvalidArgumentError(
                f"Table '{self.name}': FileStoreTable.copy(dynamic_options) takes a mapping of "
                f"option key to value, got {describe(options)}."
            )
        texts: dict[str, str] = {}
        for key, value in options.items():
            if not isinstance(key, str):
                raise InvalidArgumentError(
                    f"Table '{self.name}': FileStoreTable.copy(dynamic_options) has the key "
                    f"{describe(key)}; option keys are strings."
                )
            if isinstance(value, bool):
                texts[key] = "true" if value else "false"
            elif isinstance(value, str | int | float):
                texts[key] = str(value)
            else:
                raise InvalidArgumentError(
                    f"Table '{self.name}': FileStoreTable.copy(dynamic_options) gives option "
                    f"'{key}' the value {describe(value)}; a value is a string (or an int, float "
                    "or bool)."
                )
        store = self.store.copy(texts)
        if time_travel and any(texts.get(k, "").strip() for k in TIME_TRAVEL_KEYS):
            store = _with_snapshot_schema(store)
        return FileStoreTable.of(store)

    # --- builders ----------------------------------------------------------------------------

    def new_batch_write_builder(self, commit_user: str | None = None) -> BatchWriteBuilder:
        """A builder with a fresh commit user, or ``commit_user`` for a driver that retries."""
        return BatchWriteBuilder(self, commit_user)

    def new_write_builder(self, commit_user: str | None = None) -> BatchWriteBuilder:
        """``new_batch_write_builder`` by its name in seed 004's (paimon-rust's) Python API."""
        return self.new_batch_write_builder(commit_user)

    def new_postpone_fixed_bucket_write_builder(
        self, commit_user: str | None = None
    ) -> BatchWriteBuilder:
        """A batch write builder of a postpone-bucket table (``bucket = -2``) whose rows go
        straight to real buckets (pypaimon's; Java's ``postpone.batch-write-fixed-bucket``):
        a partition keeps its bucket count, a new one gets ``postpone.default-bucket-num``.
        Readable at once, with no postpone compaction. Another bucket mode raises
        UnsupportedOptionError."""
        if self.bucket_mode is not BucketMode.POSTPONE_MODE:
            raise UnsupportedOptionError(
                f"Table '{self.name}': new_postpone_fixed_bucket_write_builder needs a "
                f"postpone-bucket table (bucket = -2); this one is {self.bucket_mode}."
            )
        fixed = self.copy({"postpone.batch-write-fixed-bucket": "true"}, time_travel=False)
        return fixed.new_batch_write_builder(commit_user)

    def new_read_builder(self) -> ReadBuilder:
        return ReadBuilder(self.store, two_branches=True)

    def new_stream_write_builder(self, commit_user: str | None = None) -> StreamWriteBuilder:
        """A builder for a long-lived write committed once per checkpoint (pypaimon's and
        Java's StreamWriteBuilder). Pass the same ``commit_user`` after a restart: its commits
        are what makes a replayed checkpoint commit once (table/stream_builders.py)."""
        return StreamWriteBuilder(self, commit_user)

    def new_stream_read_builder(self) -> StreamReadBuilder:
        """A builder for a stream read: a scan that plans each new snapshot once, from the
        start ``scan.mode`` picks, with ``checkpoint()``/``restore()`` (read/stream_scan.py)."""
        return StreamReadBuilder(self.store)

    def delete(self, predicate: Predicate | None, commit_user: str | None = None) -> int:
        """Delete the rows matching ``predicate`` (every row if None); one snapshot.

        A primary-key table: the live rows that match are read and written back as -D
        records (Java's DELETE on a primary-key table does the same), so a later upsert of
        the same key brings it back. An append table with ``deletion-vectors.enabled``: the
        matching rows are marked in the deletion vectors of their files, which stay
        (table/append_delete.py; None truncates the table). Returns the number of rows
        deleted.
        """
        if predicate is not None and not isinstance(predicate, Predicate):
            raise InvalidArgumentError(
                f"Table '{self.name}': FileStoreTable.delete(predicate) takes a Predicate from "
                f"new_predicate_builder(), or None, got {describe(predicate)}."
            )
        if not self.primary_keys:
            if self.options.deletion_vectors_enabled:
                return delete_rows(self, predicate, commit_user)
            raise UnsupportedOptionError(
                f"Table '{self.name}': delete needs a primary key or, on an append table, "
                "'deletion-vectors.enabled' = 'true'; this table has neither."
            )
        rb = ReadBuilder(self.store).with_filter(predicate)
        rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        if rows.num_rows == 0:
            return 0
        builder = self.new_batch_write_builder(commit_user)
        with builder.new_write() as write:
            write.delete_arrow(rows)
            messages = write.prepare_commit()
        builder.new_commit().commit(messages)
        return int(rows.num_rows)

    # --- tags (Java's Table.createTag/deleteTag/rollbackTo, pypaimon's names) ----------------

    def create_tag(
        self,
        tag_name: str,
        snapshot_id: int | None = None,
        ignore_if_exists: bool = False,
        time_retained: str | None = None,
    ) -> None:
        """Tag the latest snapshot, or ``snapshot_id`` (also an expired one that a tag keeps).

        A tag keeps its snapshot's files through snapshot expiration. ``time_retained``
        (``'1 d'``; default the table's ``tag.default-time-retained``) is recorded in the tag
        file as Java records it. An existing name raises InvalidArgumentError unless
        ``ignore_if_exists``; so do a blank name, a missing snapshot and an empty table.
        """
        tags.create_tag(self.store, tag_name, snapshot_id, ignore_if_exists, time_retained)

    def delete_tag(self, tag_name: str) -> bool:
        """Delete a tag; False if there was none. If its snapshot has expired, the files only
        the tag kept are deleted too (maintenance/tags.py)."""
        return tags.delete_tag(self.store, tag_name)

    def list_tags(self) -> list[str]:
        """The tag names, sorted by name as Java's SHOW TAGS lists them."""
        return self.tag_manager.tag_names()

    def rollback_to(self, target: int | str) -> None:
        """Make snapshot ``target`` (an int) or tag ``target`` (a str) the latest snapshot.

        The snapshots and tags after it are deleted, then the files only they used, in an
        order where a crash leaves a table that reads as one of its snapshots
        (maintenance/tags.py). A tag whose snapshot expired becomes a snapshot again.
        """
        tags.rollback_to(self.store, target)

    def rollback_to_timestamp(self, timestamp_millis: int) -> None:
        """Roll back to the latest snapshot committed at or before ``timestamp_millis``
        (pypaimon's call, Java's RollbackToTimestampProcedure); none raises
        InvalidArgumentError."""
        found = earlier_or_equal(self.store.snapshot_manager, timestamp_millis)
        if found is None:
            raise InvalidArgumentError(
                f"Table '{self.name}': no snapshot committed at or before {timestamp_millis}."
            )
        tags.rollback_to(self.store, found.id)

    def rename_tag(self, old_name: str, new_name: str) -> None:
        """Rename a tag (pypaimon's call, Java's renameTag): a missing tag or an existing
        target raises."""
        tags.rename_tag(self.store, old_name, new_name)

    def replace_tag(
        self, tag_name: str, snapshot_id: int | None = None, time_retained: str | None = None
    ) -> None:
        """Point the existing tag ``tag_name`` at ``snapshot_id`` (the latest if None), with
        ``time_retained`` (pypaimon's call, Java's replaceTag)."""
        tags.replace_tag(self.store, tag_name, snapshot_id, time_retained)


def _with_snapshot_schema(store: FileStore) -> FileStore:
    """``store`` with the schema of the snapshot its options travel to. A snapshot that cannot
    be found leaves the store as it is: its scan raises the typed error when it plans."""
    try:
        snapshot = TableScan(store, None, None).snapshot()
    except PaimonError:
        return store
    if snapshot is None or snapshot.schema_id == store.table_schema.id:
        return store
    schema = store.schema_manager.schema(snapshot.schema_id)
    return FileStore(
        store.file_io, store.path, store.name, schema, store.dynamic_options, store.snapshot_commit
    )
