"""FileStoreTable: one table on a filesystem, its schema, options and bucket mode.

Mirrors org.apache.paimon.table.FileStoreTable (AppendOnlyFileStoreTable for tables without a
primary key). Builders for writing and reading hang off it, named as pypaimon names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

import pyarrow as pa

from paimon_pyspark import options as opts
from paimon_pyspark.commit.file_store_commit import CommitSettings, FileStoreCommit
from paimon_pyspark.errors import OptionError, SchemaError, UnsupportedOptionError
from paimon_pyspark.format.files import check_format_types
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.merge.merge_function import check_merge_options
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.table.managers import SchemaManager, SnapshotManager
from paimon_pyspark.table.manifest_io import ManifestIO
from paimon_pyspark.table.paths import partition_path, partition_value_string
from paimon_pyspark.types.arrow import to_arrow_schema
from paimon_pyspark.types.data_types import CharType, DataField, DataType
from paimon_pyspark.write.write_builder import BatchWriteBuilder

IMMUTABLE_OPTIONS = (
    "bucket",
    "bucket-key",
    "merge-engine",
    "sequence.field",
    "primary-key",
    "partition",
)
"""Options fixed at CREATE TABLE: a dynamic option may repeat them, never change them."""

BUCKET_UNAWARE = "BUCKET_UNAWARE"
HASH_FIXED = "HASH_FIXED"
HASH_DYNAMIC = "HASH_DYNAMIC"
CROSS_PARTITION = "CROSS_PARTITION"
POSTPONE = "POSTPONE_MODE"


class FileStoreTable:
    def __init__(
        self,
        file_io: FileIO,
        path: str,
        name: str,
        schema: TableSchema,
        dynamic_options: Mapping[str, str] | None = None,
    ) -> None:
        self.file_io = file_io
        self.path = path
        self.name = name
        self.table_schema = schema
        self.dynamic_options = dict(dynamic_options or {})
        _check_immutable(schema.options, self.dynamic_options, name)
        merged = dict(schema.options)
        merged.update(self.dynamic_options)
        self.options = opts.CoreOptions(merged)
        opts.check_supported(merged, name)
        check_merge_options(merged, schema.fields, schema.primary_keys, name)
        check_format_types(list(schema.fields), self.options.file_format, name)
        self.snapshot_manager = SnapshotManager(file_io, path)
        self.schema_manager = SchemaManager(file_io, path)

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
    def partition_types(self) -> list[DataType]:
        return [f.type for f in self.table_schema.partition_fields()]

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        return to_arrow_schema(self.fields)

    @property
    def bucket_mode(self) -> str:
        bucket = self.options.bucket
        if self.primary_keys:
            if bucket == -2:
                return POSTPONE
            if bucket == -1:
                pk = set(self.primary_keys)
                return HASH_DYNAMIC if pk >= set(self.partition_keys) else CROSS_PARTITION
            return HASH_FIXED
        return BUCKET_UNAWARE if bucket == -1 else HASH_FIXED

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

    def copy(self, dynamic_options: Mapping[str, Any]) -> FileStoreTable:
        """The same table with options overridden for this handle only (pypaimon's copy)."""
        merged = dict(self.dynamic_options)
        merged.update({str(k): str(v) for k, v in dynamic_options.items()})
        return FileStoreTable(self.file_io, self.path, self.name, self.table_schema, merged)

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
        mode = self.bucket_mode
        if mode not in (BUCKET_UNAWARE, HASH_FIXED, POSTPONE, HASH_DYNAMIC, CROSS_PARTITION):
            raise UnsupportedOptionError(
                f"Table '{self.name}': writing bucket mode {mode} is not supported by "
                "paimon_pyspark yet."
            )
        self._check_primary_key_table("writing to")
        if not self.primary_keys:
            for key in (opts.ROWKIND_FIELD, opts.SEQUENCE_FIELD):
                if self.options.get(key):
                    raise UnsupportedOptionError(
                        f"Table '{self.name}': option '{key}' applies to primary-key tables "
                        "only; this table has no primary key."
                    )

    def _check_primary_key_table(self, action: str) -> None:
        if not self.primary_keys:
            return
        mode = self.bucket_mode
        if mode not in (HASH_FIXED, POSTPONE, HASH_DYNAMIC, CROSS_PARTITION):
            raise UnsupportedOptionError(
                f"Table '{self.name}': {action} primary-key tables in bucket mode {mode} "
                "is not supported by paimon_pyspark yet; use bucket = N."
            )
        missing = [k for k in self.partition_keys if k not in self.primary_keys]
        if missing and self.options.sequence_fields:
            # Java's SchemaValidation, for any bucket mode (TableSchema.crossPartitionUpdate)
            raise SchemaError(
                f"Table '{self.name}': you can not use sequence.field in cross partition update "
                f"case (Primary key constraint '{self.primary_keys}' not include all partition "
                f"fields '{self.partition_keys}')."
            )
        # bucket = N with such a key is Java's too: the user keeps keys unique per partition
        if missing and mode == POSTPONE:
            raise SchemaError(
                f"Table '{self.name}': primary key {self.primary_keys} must include every "
                f"partition key {self.partition_keys} (missing {missing}) in fixed-bucket mode; "
                "Java Paimon refuses such a table too (cross-partition upsert needs bucket = -1)."
            )
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

    # --- builders ----------------------------------------------------------------------------

    def new_batch_write_builder(self, commit_user: str | None = None) -> BatchWriteBuilder:
        """A builder with a fresh commit user, or ``commit_user`` for a driver that retries."""
        return BatchWriteBuilder(self, commit_user)

    def new_read_builder(self) -> ReadBuilder:
        return ReadBuilder(self)

    def delete(self, predicate: Predicate | None, commit_user: str | None = None) -> int:
        """Delete the rows matching ``predicate`` (every row if None); one snapshot.

        Primary-key tables only: the live rows that match are read and written back as -D
        records (Java's DELETE on a primary-key table does the same), so a later upsert of
        the same key brings it back. Returns the number of rows deleted.
        """
        if not self.primary_keys:
            raise UnsupportedOptionError(
                f"Table '{self.name}': delete needs a primary key; this table has none."
            )
        rb = self.new_read_builder().with_filter(predicate)
        rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        if rows.num_rows == 0:
            return 0
        builder = self.new_batch_write_builder(commit_user)
        with builder.new_write() as write:
            write.delete_arrow(rows)
            messages = write.prepare_commit()
        builder.new_commit().commit(messages)
        return int(rows.num_rows)

    # --- internals shared by write, commit and read ------------------------------------------

    @cached_property
    def manifest_io(self) -> ManifestIO:
        return ManifestIO(
            self.file_io, self.path, self.options.manifest_compression, self.partition_types
        )

    def store_commit(self, commit_user: str) -> FileStoreCommit:
        o = self.options
        settings = CommitSettings(
            table_name=self.name,
            table_path=self.path,
            bucket=o.bucket,
            manifest_target_size=o.manifest_target_file_size,
            manifest_merge_min_count=o.manifest_merge_min_count,
            max_retries=o.commit_max_retries,
            min_retry_wait_ms=o.commit_min_retry_wait_ms,
            max_retry_wait_ms=o.commit_max_retry_wait_ms,
            partition_keys=tuple(self.partition_keys),
            partition_types=tuple(self.partition_types),
            partition_default_name=o.partition_default_name,
            dynamic_partition_overwrite=o.dynamic_partition_overwrite,
            overwrite_upgrade=o.overwrite_upgrade,
            key_types=tuple(
                self.table_schema.field(k).type for k in self.table_schema.trimmed_primary_keys()
            )
            if self.primary_keys
            else (),
            num_levels=o.num_levels,
        )
        return FileStoreCommit(
            settings, commit_user, self.snapshot_manager, self.schema_manager, self.manifest_io
        )


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
