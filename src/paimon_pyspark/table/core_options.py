"""pypaimon's ``CoreOptions.BUCKET.key()`` spelling over our CoreOptions.

pypaimon declares each table option once as a ConfigOption (key, type, default) on its
CoreOptions class (Java's org.apache.paimon.CoreOptions and org.apache.paimon.options.ConfigOption
do the same), and programs written for it spell option keys ``CoreOptions.BUCKET.key()``. Our
options.CoreOptions parses a table's options by property (``options.bucket``), so this subclass
adds the constants beside them; ``paimon_pyspark.CoreOptions`` is this class, and it parses
options exactly as options.CoreOptions does.

Defaults are Java 1.4.2's where pypaimon's differ (``metadata.stats-mode`` truncate(16), not
none; ``postpone.default-bucket-num`` 1; no default for ``scan.manifest.parallelism``; pypaimon
1.4.2 also had orc for ``file.format`` and primary-key for ``type``); memory sizes are bytes
(pypaimon: MemorySize), and enum-valued options give their text (``deduplicate``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar, Generic, TypeVar

from paimon_pyspark import options as opts

T = TypeVar("T")

_MB = 1024 * 1024
_NO_ENTRIES: Mapping[str, str] = MappingProxyType({})


class ConfigOption(Generic[T]):
    """One option: its key and its default (None when it has none). Immutable."""

    __slots__ = ("_default", "_key")

    def __init__(self, key: str, default: T | None = None) -> None:
        self._key = key
        self._default = default

    def key(self) -> str:
        return self._key

    def default_value(self) -> T | None:
        return self._default

    def has_default_value(self) -> bool:
        return self._default is not None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConfigOption) and (self._key, self._default) == (
            other._key,
            other._default,
        )

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"ConfigOption(key={self._key!r}, default={self._default!r})"


class CoreOptions(opts.CoreOptions):
    # pypaimon 1.4.2's constants
    AUTO_CREATE: ClassVar[ConfigOption[bool]] = ConfigOption("auto-create", False)
    PATH: ClassVar[ConfigOption[str]] = ConfigOption("path")
    TYPE: ClassVar[ConfigOption[str]] = ConfigOption("type", "table")
    BRANCH: ClassVar[ConfigOption[str]] = ConfigOption("branch", "main")
    BUCKET: ClassVar[ConfigOption[int]] = ConfigOption(opts.BUCKET, -1)
    BUCKET_KEY: ClassVar[ConfigOption[str]] = ConfigOption(opts.BUCKET_KEY)
    DYNAMIC_BUCKET_TARGET_ROW_NUM: ClassVar[ConfigOption[int]] = ConfigOption(
        opts.DYNAMIC_BUCKET_TARGET_ROW_NUM, 2_000_000
    )
    DYNAMIC_BUCKET_MAX_BUCKETS: ClassVar[ConfigOption[int]] = ConfigOption(
        opts.DYNAMIC_BUCKET_MAX_BUCKETS, -1
    )
    SCAN_MANIFEST_PARALLELISM: ClassVar[ConfigOption[int]] = ConfigOption(
        "scan.manifest.parallelism"
    )
    FILE_FORMAT: ClassVar[ConfigOption[str]] = ConfigOption(opts.FILE_FORMAT, "parquet")
    FILE_COMPRESSION: ClassVar[ConfigOption[str]] = ConfigOption(opts.FILE_COMPRESSION, "zstd")
    FILE_COMPRESSION_ZSTD_LEVEL: ClassVar[ConfigOption[int]] = ConfigOption(opts.ZSTD_LEVEL, 1)
    FILE_COMPRESSION_PER_LEVEL: ClassVar[ConfigOption[Mapping[str, str]]] = ConfigOption(
        "file.compression.per.level", _NO_ENTRIES
    )
    FILE_FORMAT_PER_LEVEL: ClassVar[ConfigOption[Mapping[str, str]]] = ConfigOption(
        "file.format.per.level", _NO_ENTRIES
    )
    FILE_BLOCK_SIZE: ClassVar[ConfigOption[int]] = ConfigOption("file.block-size")
    METADATA_STATS_MODE: ClassVar[ConfigOption[str]] = ConfigOption(opts.STATS_MODE, "truncate(16)")
    BLOB_AS_DESCRIPTOR: ClassVar[ConfigOption[bool]] = ConfigOption("blob-as-descriptor", False)
    BLOB_DESCRIPTOR_FIELD: ClassVar[ConfigOption[str]] = ConfigOption("blob-descriptor-field")
    TARGET_FILE_SIZE: ClassVar[ConfigOption[int]] = ConfigOption(opts.TARGET_FILE_SIZE)
    """No single default: 128 MB for a primary-key table, 256 MB otherwise."""
    BLOB_TARGET_FILE_SIZE: ClassVar[ConfigOption[int]] = ConfigOption("blob.target-file-size")
    DATA_FILE_PREFIX: ClassVar[ConfigOption[str]] = ConfigOption(opts.DATA_FILE_PREFIX, "data-")
    SCAN_FALLBACK_BRANCH: ClassVar[ConfigOption[str]] = ConfigOption("scan.fallback-branch")
    INCREMENTAL_BETWEEN_TIMESTAMP: ClassVar[ConfigOption[str]] = ConfigOption(
        opts.INCREMENTAL_BETWEEN_TIMESTAMP
    )
    SCAN_TAG_NAME: ClassVar[ConfigOption[str]] = ConfigOption(opts.SCAN_TAG_NAME)
    SOURCE_SPLIT_TARGET_SIZE: ClassVar[ConfigOption[int]] = ConfigOption(
        opts.SOURCE_SPLIT_TARGET_SIZE, 128 * _MB
    )
    SOURCE_SPLIT_OPEN_FILE_COST: ClassVar[ConfigOption[int]] = ConfigOption(
        opts.SOURCE_SPLIT_OPEN_FILE_COST, 4 * _MB
    )
    DELETION_VECTORS_ENABLED: ClassVar[ConfigOption[bool]] = ConfigOption(
        "deletion-vectors.enabled", False
    )
    CHANGELOG_PRODUCER: ClassVar[ConfigOption[str]] = ConfigOption("changelog-producer", "none")
    MERGE_ENGINE: ClassVar[ConfigOption[str]] = ConfigOption(opts.MERGE_ENGINE, "deduplicate")
    COMMIT_USER_PREFIX: ClassVar[ConfigOption[str]] = ConfigOption("commit.user-prefix")
    COMMIT_MAX_RETRIES: ClassVar[ConfigOption[int]] = ConfigOption(opts.COMMIT_MAX_RETRIES, 10)
    COMMIT_TIMEOUT: ClassVar[ConfigOption[dt.timedelta]] = ConfigOption("commit.timeout")
    COMMIT_MIN_RETRY_WAIT: ClassVar[ConfigOption[dt.timedelta]] = ConfigOption(
        opts.COMMIT_MIN_RETRY_WAIT, dt.timedelta(milliseconds=10)
    )
    COMMIT_MAX_RETRY_WAIT: ClassVar[ConfigOption[dt.timedelta]] = ConfigOption(
        opts.COMMIT_MAX_RETRY_WAIT, dt.timedelta(seconds=10)
    )
    ROW_TRACKING_ENABLED: ClassVar[ConfigOption[bool]] = ConfigOption("row-tracking.enabled", False)
    DATA_EVOLUTION_ENABLED: ClassVar[ConfigOption[bool]] = ConfigOption(
        "data-evolution.enabled", False
    )
    DATA_FILE_EXTERNAL_PATHS: ClassVar[ConfigOption[str]] = ConfigOption("data-file.external-paths")
    DATA_FILE_EXTERNAL_PATHS_STRATEGY: ClassVar[ConfigOption[str]] = ConfigOption(
        "data-file.external-paths.strategy", "none"
    )
    DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS: ClassVar[ConfigOption[str]] = ConfigOption(
        "data-file.external-paths.specific-fs"
    )
    GLOBAL_INDEX_ENABLED: ClassVar[ConfigOption[bool]] = ConfigOption("global-index.enabled", True)
    GLOBAL_INDEX_THREAD_NUM: ClassVar[ConfigOption[int]] = ConfigOption("global-index.thread-num")
    READ_BATCH_SIZE: ClassVar[ConfigOption[int]] = ConfigOption("read.batch-size", 1024)
    ADD_COLUMN_BEFORE_PARTITION: ClassVar[ConfigOption[bool]] = ConfigOption(
        "add-column-before-partition", False
    )
    PARTITION_DEFAULT_NAME: ClassVar[ConfigOption[str]] = ConfigOption(
        opts.PARTITION_DEFAULT_NAME, "__DEFAULT_PARTITION__"
    )

    # pypaimon 2.x's constants for options paimon_pyspark reads
    DYNAMIC_PARTITION_OVERWRITE: ClassVar[ConfigOption[bool]] = ConfigOption(
        opts.DYNAMIC_PARTITION_OVERWRITE, True
    )
    IGNORE_DELETE: ClassVar[ConfigOption[bool]] = ConfigOption(opts.IGNORE_DELETE_KEYS[0], False)
    MANIFEST_COMPRESSION: ClassVar[ConfigOption[str]] = ConfigOption(
        opts.MANIFEST_COMPRESSION, "zstd"
    )
    MANIFEST_TARGET_FILE_SIZE: ClassVar[ConfigOption[int]] = ConfigOption(
        opts.MANIFEST_TARGET_FILE_SIZE, 8 * _MB
    )
    PARTITION_GENERATE_LEGACY_NAME: ClassVar[ConfigOption[bool]] = ConfigOption(
        opts.PARTITION_LEGACY_NAME, True
    )
    POSTPONE_BATCH_WRITE_FIXED_BUCKET: ClassVar[ConfigOption[bool]] = ConfigOption(
        opts.POSTPONE_BATCH_WRITE_FIXED_BUCKET, True
    )
    POSTPONE_DEFAULT_BUCKET_NUM: ClassVar[ConfigOption[int]] = ConfigOption(
        opts.POSTPONE_DEFAULT_BUCKET_NUM, 1
    )
    PRIMARY_KEY_NULLABLE: ClassVar[ConfigOption[bool]] = ConfigOption(
        opts.PRIMARY_KEY_NULLABLE, False
    )
    SCAN_SNAPSHOT_ID: ClassVar[ConfigOption[int]] = ConfigOption(opts.SCAN_SNAPSHOT_ID)
    SCAN_TIMESTAMP: ClassVar[ConfigOption[str]] = ConfigOption(opts.SCAN_TIMESTAMP)
    SCAN_TIMESTAMP_MILLIS: ClassVar[ConfigOption[int]] = ConfigOption(opts.SCAN_TIMESTAMP_MILLIS)
    SCAN_MODE: ClassVar[ConfigOption[str]] = ConfigOption("scan.mode", "default")
    SEQUENCE_FIELD: ClassVar[ConfigOption[str]] = ConfigOption(opts.SEQUENCE_FIELD)
    SEQUENCE_FIELD_SORT_ORDER: ClassVar[ConfigOption[str]] = ConfigOption(
        opts.SEQUENCE_FIELD_SORT_ORDER, "ascending"
    )
    TARGET_FILE_ROW_NUM: ClassVar[ConfigOption[int]] = ConfigOption(
        opts.TARGET_FILE_ROW_NUM, 2**63 - 1
    )
