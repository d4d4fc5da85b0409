"""FileStore: a table's schema, options, bucket mode and files, for the operations below the facade.

Mirrors org.apache.paimon.FileStore (KeyValueFileStore, AppendOnlyFileStore) with the parts of
org.apache.paimon.table.FileStoreTable that write, commit, read, compaction and maintenance
need: identity, schema, typed options, bucket mode, partition paths, the snapshot and schema
managers and the manifest I/O. ``table/`` puts the user-facing facade (builders, ``copy``,
``delete``) on top of it; nothing below the facade sees the facade.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import pyarrow as pa

from paimon_pyspark import options as opts
from paimon_pyspark.errors import (
    BranchNotExistError,
    OptionError,
    SchemaError,
    UnsupportedOptionError,
)
from paimon_pyspark.format.files import check_format_types
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.branches import (
    branch_path,
    check_branch_path_name,
    is_main_branch,
    normalize_branch,
)
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.changelog_manager import ChangelogManager
from paimon_pyspark.store.external_paths import ExternalPaths, external_paths_of
from paimon_pyspark.store.managers import (
    ConsumerManager,
    SchemaManager,
    SnapshotManager,
    TagManager,
)
from paimon_pyspark.store.manifest_io import ManifestIO
from paimon_pyspark.store.paths import bucket_dir, partition_path, partition_value_string
from paimon_pyspark.store.snapshot_commit import SnapshotCommit
from paimon_pyspark.types.arrow import to_arrow_schema
from paimon_pyspark.types.data_types import CharType, DataField, DataType

BRANCH_OPTION = "branch"
"""The branch a handle reads and writes (Java's CoreOptions.BRANCH); ``main`` when unset."""

IMMUTABLE_OPTIONS = (
    "bucket",
    "bucket-key",
    "merge-engine",
    "sequence.field",
    "primary-key",
    "partition",
)
"""Options fixed at CREATE TABLE: a dynamic option may repeat them, never change them."""


class FileStore:
    """One table's files as every operation below the facade sees them.

    Built from a schema and the dynamic options of one handle. It validates what the store
    layer knows (immutable, unsupported and out-of-range options, file format types), so a
    schema file holding a value Java cannot read fails at load, not in a later commit; the
    merge-engine options are checked by the facade, which knows the merge engines.
    """

    def __init__(
        self,
        file_io: FileIO,
        path: str,
        name: str,
        schema: TableSchema,
        dynamic_options: Mapping[str, str] | None = None,
        snapshot_commit: SnapshotCommit | None = None,
    ) -> None:
        self.file_io = file_io
        self.path = path
        self.name = name
        self.table_schema = schema
        self.dynamic_options = dict(dynamic_options or {})
        self.snapshot_commit = snapshot_commit
        """The catalog's way of publishing a snapshot (store/snapshot_commit.py); None for the
        store's create-if-absent. Kept by every store derived from this one; not by a store
        another process reopens (store_ref), which never commits."""
        _check_immutable(schema.options, self.dynamic_options, name)
        merged = dict(schema.options)
        merged.update(self.dynamic_options)
        self.options = opts.CoreOptions(merged, name)
        opts.check_supported(merged, name)
        opts.check_ranges(merged, name, bool(schema.primary_keys))
        self.options.check_time_travel()
        check_format_types(list(schema.fields), self.options.file_format, name)
        self.branch = normalize_branch(self.options.get(BRANCH_OPTION))
        if not is_main_branch(self.branch):
            check_branch_path_name(self.branch, name)
        self.branch_path = branch_path(path, self.branch)
        """Where this branch keeps snapshots, schemas, tags, consumers and long-lived
        changelogs: the table directory for ``main``, ``branch/branch-<name>`` otherwise.
        Data files, manifests and index files are the table directory's, shared by branches."""

    # --- identity and schema -----------------------------------------------------------------

    @property
    def fields(self) -> tuple[DataField, ...]:
        return self.table_schema.fields

    @property
    def field_names(self) -> list[str]:
        return self.table_schema.field_names

    @property
    def partition_keys(self) -> list[str]:
        return list(self.table_schema.partition_keys)

    @property
    def primary_keys(self) -> list[str]:
        return list(self.table_schema.primary_keys)

    @cached_property
    def external_paths(self) -> ExternalPaths | None:
        """``data-file.external-paths`` (store/external_paths.py). Checked on first use, by a
        read or a write, as Java builds its path factory: a table whose roots are wrong still
        loads, so ALTER TABLE can correct them."""
        return external_paths_of(self.options.options, self.file_io, self.path, self.name)

    @cached_property
    def partition_types(self) -> list[DataType]:
        return [f.type for f in self.table_schema.partition_fields()]

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        return to_arrow_schema(self.fields)

    @cached_property
    def bucket_mode(self) -> BucketMode:
        return BucketMode.of(self.options.bucket, self.primary_keys, self.partition_keys)

    @cached_property
    def trimmed_primary_keys(self) -> list[str]:
        return self.table_schema.trimmed_primary_keys()

    @property
    def bucket_keys(self) -> list[str]:
        return self.options.bucket_key or self.table_schema.trimmed_primary_keys()

    def partition_rel_path(self, values: list[Any]) -> str:
        legacy = self.options.partition_legacy_name
        default = self.options.partition_default_name
        texts = [
            partition_value_string(v, t, legacy, default)
            for v, t in zip(values, self.partition_types, strict=False)
        ]
        return partition_path(self.partition_keys, texts)

    def copy(self, dynamic_options: Mapping[str, Any]) -> FileStore:
        """The same store with options overridden (a pinned snapshot, another bucket count).

        A copy that chooses what to read (``scan.snapshot-id``, ``scan.tag-name``,
        ``scan.timestamp[-millis]``, ``incremental-between[-timestamp]``) replaces an earlier
        copy's choice: an internal pin on a handle the user opened at a tag, or for an
        incremental read, must not collide with it (a compaction or a cross-partition
        bootstrap on such a handle reads the pinned snapshot whole). One copy that gives two
        choices is refused, as Java's SchemaValidation refuses them."""
        new = {str(k): str(v) for k, v in dynamic_options.items()}
        merged = dict(self.dynamic_options)
        if any(k in new for k in opts.SCAN_START_KEYS):
            for key in opts.SCAN_START_KEYS:
                merged.pop(key, None)
        merged.update(new)
        file_io = self.file_io.with_options(merged)
        schema = self.table_schema
        branch = normalize_branch(new.get(BRANCH_OPTION, self.branch))
        if branch != self.branch:
            schema = self.branch_schema(branch)
        return FileStore(file_io, self.path, self.name, schema, merged, self.snapshot_commit)

    def branch_schema(self, branch: str) -> TableSchema:
        """The latest schema of ``branch`` of this table (Java's switchToBranch reads it);
        BranchNotExistError when the branch has none."""
        if not is_main_branch(branch):
            check_branch_path_name(branch, self.name)
        latest = SchemaManager(self.file_io, branch_path(self.path, branch)).latest()
        if latest is None:
            raise BranchNotExistError(branch, self.name)
        return latest

    def check_append_only(self, action: str) -> None:
        if self.primary_keys:
            raise UnsupportedOptionError(
                f"Table '{self.name}': {action} primary-key tables is not supported by "
                "paimon_pyspark yet."
            )

    def check_readable(self) -> None:
        """Append tables, and primary-key tables with fixed buckets, are read."""
        self._check_primary_key_table("reading")

    def check_writable(self) -> None:
        """Append tables (unaware or fixed buckets) and fixed-bucket PK tables are written."""
        self._check_primary_key_table("writing to")
        self.options.check_files_writable("writing")
        if not self.primary_keys:
            # an append table orders upserts by sequence.field (RewriteUpsertTable); set,
            # even emptied by a dynamic option (the writers under an upsert), it is allowed
            upsert = self.options.get(opts.UPSERT_KEY) is not None
            for key in (opts.ROWKIND_FIELD, *(() if upsert else (opts.SEQUENCE_FIELD,))):
                if self.options.get(key):
                    raise UnsupportedOptionError(
                        f"Table '{self.name}': option '{key}' applies to primary-key tables "
                        "only; this table has no primary key."
                    )
            buffered = (self.options.get("write-buffer-for-append") or "").strip().lower()
            if buffered == "true" and not self.options.write_buffer_spillable:
                # Java's AppendOnlyWriter then closes a file whenever its buffer fills
                raise UnsupportedOptionError(
                    f"Table '{self.name}': option 'write-buffer-for-append' = 'true' with "
                    "'write-buffer-spillable' = 'false' makes Java close an append file whenever "
                    "the write buffer fills; here append files roll at target-file-size only. "
                    "Unset one of them."
                )

    def _check_primary_key_table(self, action: str) -> None:
        if not self.primary_keys:
            return
        missing = [k for k in self.partition_keys if k not in self.primary_keys]
        if missing and self.options.sequence_fields:
            # Java's SchemaValidation, for any bucket mode (TableSchema.crossPartitionUpdate)
            raise SchemaError(
                f"Table '{self.name}': you can not use sequence.field in cross partition update "
                f"case (Primary key constraint '{self.primary_keys}' not include all partition "
                f"fields '{self.partition_keys}')."
            )
        # A key without every partition key is a cross-partition upsert only with bucket = -1;
        # with bucket = N or -2 (Java accepts both) the user keeps keys unique per partition.
        if not self.table_schema.trimmed_primary_keys():
            raise SchemaError(
                f"Table '{self.name}': primary key {self.primary_keys} must not be the same "
                f"as the partition keys {self.partition_keys}."
            )
        rowkind = self.options.rowkind_field
        if rowkind is not None:
            if rowkind not in self.field_names:
                raise OptionError(
                    f"Table '{self.name}': 'rowkind.field' = '{rowkind}' is not a column "
                    f"(columns: {self.field_names})."
                )
            if not isinstance(self.table_schema.field(rowkind).type, CharType):
                raise OptionError(
                    f"Table '{self.name}': 'rowkind.field' '{rowkind}' must be a string "
                    f"column, it is {self.table_schema.field(rowkind).type}."
                )
        for f in self.options.sequence_fields:
            if f not in self.field_names:
                raise OptionError(
                    f"Table '{self.name}': 'sequence.field' '{f}' is not a column "
                    f"(columns: {self.field_names})."
                )

    # --- files -------------------------------------------------------------------------------

    @cached_property
    def manifest_io(self) -> ManifestIO:
        return ManifestIO(
            self.file_io, self.path, self.options.manifest_compression, self.partition_types
        )

    @cached_property
    def snapshot_manager(self) -> SnapshotManager:
        return SnapshotManager(self.file_io, self.branch_path, self.snapshot_commit, self.branch)

    @cached_property
    def schema_manager(self) -> SchemaManager:
        return SchemaManager(self.file_io, self.branch_path)

    @cached_property
    def tag_manager(self) -> TagManager:
        return TagManager(self.file_io, self.branch_path)

    @cached_property
    def consumer_manager(self) -> ConsumerManager:
        return ConsumerManager(self.file_io, self.branch_path)

    @cached_property
    def changelog_manager(self) -> ChangelogManager:
        return ChangelogManager(self.file_io, self.branch_path)

    def bucket_path(self, partition_values: Sequence[Any], bucket: int) -> str:
        """The directory of one bucket of one partition."""
        rel = self.partition_rel_path(list(partition_values))
        base = os.path.join(self.path, rel) if rel else self.path
        return os.path.join(base, bucket_dir(bucket))

    def bucket_path_of(self, partition: bytes, bucket: int) -> str:
        """``bucket_path`` for a partition given as BinaryRow bytes."""
        return self.bucket_path(deserialize_with_arity(partition, self.partition_types), bucket)


def _check_immutable(options: Mapping[str, str], dynamic: Mapping[str, str], table: str) -> None:
    defaults = {"bucket": "-1", "merge-engine": "deduplicate"}
    for key in IMMUTABLE_OPTIONS:
        if key not in dynamic:
            continue
        current = options.get(key, defaults.get(key, ""))
        if dynamic[key].strip() != current.strip():
            raise OptionError(
                f"Table '{table}': option '{key}' cannot be changed by a dynamic option "
                f"(the table has '{current}', the write asked for '{dynamic[key]}'); "
                "recreate or rescale the table instead."
            )
