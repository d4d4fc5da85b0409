"""Typed table options: key, default and meaning, and the guard against options we do not implement.

Mirrors the subset of org.apache.paimon.CoreOptions that paimon_pyspark honours. An option that
changes what a table holds or how it is read, and that we do not implement, raises
:class:`UnsupportedOptionError`: silently ignoring it would write or read wrong rows.
"""

from __future__ import annotations

import datetime
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from paimon_pyspark import options_ledger as ledger
from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.spec import file_index
from paimon_pyspark.spec.java_quantity import parse_memory_size as parse_memory_size
from paimon_pyspark.spec.java_quantity import quantity as _quantity
from paimon_pyspark.spec.java_quantity import too_many_digits as _big
from paimon_pyspark.spec.java_quantity import where as _where

BUCKET = "bucket"
BUCKET_KEY = "bucket-key"
FILE_FORMAT = "file.format"
FILE_COMPRESSION = "file.compression"
ZSTD_LEVEL = "file.compression.zstd-level"
TARGET_FILE_SIZE = "target-file-size"
MANIFEST_COMPRESSION = "manifest.compression"
MANIFEST_TARGET_FILE_SIZE = "manifest.target-file-size"
MANIFEST_MERGE_MIN_COUNT = "manifest.merge-min-count"
MANIFEST_FULL_COMPACTION_THRESHOLD_SIZE = "manifest.full-compaction-threshold-size"
PARTITION_DEFAULT_NAME = "partition.default-name"
PARTITION_LEGACY_NAME = "partition.legacy-name"
STATS_MODE = "metadata.stats-mode"
DATA_FILE_PREFIX = "data-file.prefix"
SCAN_SNAPSHOT_ID = "scan.snapshot-id"
SCAN_TAG_NAME = "scan.tag-name"
SCAN_TIMESTAMP_MILLIS = "scan.timestamp-millis"
SCAN_TIMESTAMP = "scan.timestamp"
TIME_TRAVEL_KEYS = (SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_TIMESTAMP_MILLIS, SCAN_TIMESTAMP)
INCREMENTAL_BETWEEN = "incremental-between"
INCREMENTAL_BETWEEN_TIMESTAMP = "incremental-between-timestamp"
INCREMENTAL_BETWEEN_SCAN_MODE = "incremental-between-scan-mode"
INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT = "incremental-between-tag-to-snapshot"
INCREMENTAL_TO_AUTO_TAG = "incremental-to-auto-tag"
INCREMENTAL_KEYS = (INCREMENTAL_BETWEEN, INCREMENTAL_BETWEEN_TIMESTAMP)
SCAN_MODE = "scan.mode"
UNSUPPORTED_SCAN_MODES = ("compacted-full", "from-creation-timestamp", "from-file-creation-time")
SCAN_START_KEYS = (*TIME_TRAVEL_KEYS, *INCREMENTAL_KEYS)
"""Every option that chooses what a batch scan reads (Java's startup modes): at most one."""
COMMIT_MAX_RETRIES = "commit.max-retries"
COMMIT_MIN_RETRY_WAIT = "commit.min-retry-wait"
COMMIT_MAX_RETRY_WAIT = "commit.max-retry-wait"
ROWKIND_FIELD = "rowkind.field"
SEQUENCE_FIELD = "sequence.field"
DATA_FILE_THIN_MODE = "data-file.thin-mode"
WRITE_BUFFER_SIZE = "write-buffer-size"
WRITE_BUFFER_SPILLABLE = "write-buffer-spillable"
WRITE_BUFFER_SPILL_MAX_DISK_SIZE = "write-buffer-spill.max-disk-size"
SPILL_COMPRESSION = "spill-compression"
SPILL_COMPRESSION_ZSTD_LEVEL = "spill-compression.zstd-level"
LOCAL_SORT_MAX_NUM_FILE_HANDLES = "local-sort.max-num-file-handles"
MERGE_ENGINE = "merge-engine"
DYNAMIC_PARTITION_OVERWRITE = "dynamic-partition-overwrite"
OVERWRITE_UPGRADE = "overwrite-upgrade"
NUM_LEVELS = "num-levels"
NUM_SORTED_RUN_COMPACTION_TRIGGER = "num-sorted-run.compaction-trigger"
MAX_SIZE_AMPLIFICATION_PERCENT = "compaction.max-size-amplification-percent"
COMPACTION_SIZE_RATIO = "compaction.size-ratio"
COMPACTION_FORCE_UP_LEVEL_0 = "compaction.force-up-level-0"
COMPACTION_FORCE_REWRITE_ALL_FILES = "compaction.force-rewrite-all-files"
COMPACTION_MIN_FILE_NUM = "compaction.min.file-num"
COMPACTION_SMALL_FILE_RATIO = "compaction.small-file-ratio"
COMPACTION_DELETE_RATIO_THRESHOLD = "compaction.delete-ratio-threshold"
SOURCE_SPLIT_OPEN_FILE_COST = "source.split.open-file-cost"
SOURCE_SPLIT_TARGET_SIZE = "source.split.target-size"
TARGET_FILE_ROW_NUM = "target-file-row-num"
PRIMARY_KEY_NULLABLE = "primary-key.nullable"
FORCE_LOOKUP = "force-lookup"
POSTPONE_BATCH_WRITE_FIXED_BUCKET = "postpone.batch-write-fixed-bucket"
POSTPONE_DEFAULT_BUCKET_NUM = "postpone.default-bucket-num"
WRITE_ONLY = "write-only"
PARTITION_END_INPUT_TO_DONE = "partition.end-input-to-done"
PARTITION_MARK_DONE_ACTION = "partition.mark-done-action"
SNAPSHOT_NUM_RETAINED_MIN = "snapshot.num-retained.min"
SNAPSHOT_NUM_RETAINED_MAX = "snapshot.num-retained.max"
SNAPSHOT_TIME_RETAINED = "snapshot.time-retained"
SNAPSHOT_EXPIRE_LIMIT = "snapshot.expire.limit"
SNAPSHOT_EXPIRE_EXECUTION_MODE = "snapshot.expire.execution-mode"
SNAPSHOT_CLEAN_EMPTY_DIRECTORIES = "snapshot.clean-empty-directories"
CHANGELOG_NUM_RETAINED_MIN = "changelog.num-retained.min"
CHANGELOG_NUM_RETAINED_MAX = "changelog.num-retained.max"
CHANGELOG_TIME_RETAINED = "changelog.time-retained"
CONSUMER_CHANGELOG_ONLY = "consumer.changelog-only"
CONSUMER_ID = "consumer-id"
CONSUMER_EXPIRATION_TIME = "consumer.expiration-time"
CONSUMER_MODE = "consumer.mode"
CONSUMER_IGNORE_PROGRESS = "consumer.ignore-progress"
NUM_SORTED_RUN_STOP_TRIGGER = "num-sorted-run.stop-trigger"
FULL_COMPACTION_DELTA_COMMITS = "full-compaction.delta-commits"
DYNAMIC_BUCKET_TARGET_ROW_NUM = "dynamic-bucket.target-row-num"
DYNAMIC_BUCKET_MAX_BUCKETS = "dynamic-bucket.max-buckets"
DYNAMIC_BUCKET_INITIAL_BUCKETS = "dynamic-bucket.initial-buckets"
DYNAMIC_BUCKET_ASSIGNER_PARALLELISM = "dynamic-bucket.assigner-parallelism"
CROSS_PARTITION_UPSERT_INDEX_TTL = "cross-partition-upsert.index-ttl"
SORT_SPILL_THRESHOLD = "sort-spill-threshold"
WRITE_COMPACTION_SKIP = "write.compaction-skip"
WRITE_PARALLELISM = "write.parallelism"
DELETION_VECTORS_ENABLED = "deletion-vectors.enabled"
DELETION_VECTORS_BITMAP64 = "deletion-vectors.bitmap64"
DELETION_VECTORS_MODIFIABLE = "deletion-vectors.modifiable"
DELETION_VECTOR_INDEX_FILE_TARGET_SIZE = "deletion-vector.index-file.target-size"
SNAPSHOT_EXPIRE_CLEAN_EMPTY_DIRECTORIES = "snapshot.expire.clean-empty-directories"
FILE_INDEX_IN_MANIFEST_THRESHOLD = "file-index.in-manifest-threshold"
FILE_INDEX_READ_ENABLED = "file-index.read.enabled"
BUCKET_FUNCTION_TYPE = "bucket-function.type"
ROW_TRACKING_ENABLED = "row-tracking.enabled"
JAVA_INT_MIN = -(2**31)
JAVA_INT_MAX = 2**31 - 1
JAVA_LONG_MIN = -(2**63)
JAVA_LONG_MAX = 2**63 - 1

CHANGELOG_PRODUCER = "changelog-producer"
CHANGELOG_FILE_PREFIX = "changelog-file.prefix"
CHANGELOG_FILE_FORMAT = "changelog-file.format"
CHANGELOG_FILE_COMPRESSION = "changelog-file.compression"
CHANGELOG_FILE_STATS_MODE = "changelog-file.stats-mode"
UPSERT_KEY = "upsert-key"
RECORD_LEVEL_EXPIRE_TIME = "record-level.expire-time"
RECORD_LEVEL_TIME_FIELD = "record-level.time-field"
CHANGELOG_PRODUCERS = ("none", "input", "lookup", "full-compaction")
# Options whose non-default value changes the data or its reading and is not implemented yet.
_UNSUPPORTED_UNLESS: dict[str, set[str]] = {
    # gentle: level 0 is pushed up only now and then (Java's LookupCompactMode); we always do
    "lookup-compact": {"radical"},
    "data-evolution.enabled": {"false"},
    "file.suffix.include.compression": {"false"},
    "metadata.stats-dense-store": {"true"},
    # Java's spill codecs; Arrow IPC, which our spill files are, has no LZO
    SPILL_COMPRESSION: {"zstd", "lz4", "none"},
    # Both came after Java 1.4.2 (which ignores them). Rolling by row count needs the limit
    # in every writer's DataFileSettings; nullable keys need null-safe key merging. Only
    # their defaults (Long.MAX_VALUE: no limit; false) are accepted until then.
    TARGET_FILE_ROW_NUM: {str(2**63 - 1)},
    PRIMARY_KEY_NULLABLE: {"false"},
}
# Every other refused key (a value other than Java's default) is refused by the options
# ledger (options_ledger.py, docs/options.md); these by key, whatever their value.
_UNSUPPORTED_KEYS: set[str] = set()
_UNSUPPORTED_PREFIXES = ("fields.",)
# Options that change which files a compaction picks; refused by compaction only (Java's
# defaults, off-peak hours of -1 and a ratio of 0, are accepted: they change nothing).
_COMPACTION_UNSUPPORTED = (
    "compaction.optimization-interval",
    "compaction.total-size-threshold",
    "compaction.incremental-size-threshold",
    "compaction.offpeak.start.hour",
    "compaction.offpeak.end.hour",
    "compaction.offpeak-ratio",
)
# The fields.* options the merge engines implement; merge.merge_function.check_merge_options
# validates their fields and values against the schema. Every other fields.* key is refused.
FIELDS_PREFIX = "fields."
FIELDS_DEFAULT_AGG_FUNC = "fields.default-aggregate-function"
AGG_FUNCTION = "aggregate-function"
IGNORE_RETRACT = "ignore-retract"
LIST_AGG_DELIMITER = "list-agg-delimiter"
DISTINCT = "distinct"
NESTED_KEY = "nested-key"
COUNT_LIMIT = "count-limit"
MERGE_MAP_TS_FIELD = "ts-field"
SEQUENCE_GROUP = "sequence-group"
MERGE_FIELD_OPTION_SUFFIXES = (
    AGG_FUNCTION,
    IGNORE_RETRACT,
    LIST_AGG_DELIMITER,
    DISTINCT,
    NESTED_KEY,
    COUNT_LIMIT,
    MERGE_MAP_TS_FIELD,
    SEQUENCE_GROUP,
)
SEQUENCE_FIELD_SORT_ORDER = "sequence.field.sort-order"
IGNORE_DELETE_KEYS = (
    "ignore-delete",
    "first-row.ignore-delete",
    "deduplicate.ignore-delete",
    "partial-update.ignore-delete",
)
"""CoreOptions.IGNORE_DELETE and its fallback keys, in Java's lookup order."""
AGGREGATION_REMOVE_RECORD_ON_DELETE = "aggregation.remove-record-on-delete"
PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE = "partial-update.remove-record-on-delete"
PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP = "partial-update.remove-record-on-sequence-group"


def is_merge_fields_option(key: str) -> bool:
    """``fields.default-aggregate-function`` or ``fields.<f>.<suffix>`` with an implemented
    suffix."""
    if key == FIELDS_DEFAULT_AGG_FUNC:
        return True
    return key.startswith("fields.") and key.rsplit(".", 1)[-1] in MERGE_FIELD_OPTION_SUFFIXES


_STATS_MODE_RE = re.compile(r"^(none|counts|full|truncate\(([0-9]+)\))$")


@dataclass(frozen=True)
class CoreOptions:
    """Parsed view of a table's options, with Java's defaults."""

    options: Mapping[str, str]
    table: str = ""
    """The table's name, for the messages of errors that need it."""

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def _value(self, key: str, default: int | float | bool | str) -> int | float | bool | str:
        """Option ``key`` parsed as Java parses it and checked against its range."""
        if key not in self.options:
            return default
        return option_value(self.options, key, self.table)

    def _int(self, key: str, default: int) -> int:
        return int(self._value(key, default))

    def _size(self, key: str, default: int) -> int:
        return int(self._value(key, default))

    def _duration_ms(self, key: str, default: int) -> int:
        return int(self._value(key, default))

    def _true(self, key: str) -> bool:
        return bool(self._value(key, False))

    @property
    def bucket(self) -> int:
        return self._int(BUCKET, -1)

    @property
    def bucket_key(self) -> list[str]:
        raw = self.options.get(BUCKET_KEY)
        return [k.strip() for k in raw.split(",") if k.strip()] if raw else []

    @property
    def file_format(self) -> str:
        return (self.options.get(FILE_FORMAT) or "parquet").lower()

    @property
    def file_compression(self) -> str:
        return (self.options.get(FILE_COMPRESSION) or "zstd").lower()

    @property
    def zstd_level(self) -> int:
        return self._int(ZSTD_LEVEL, 1)

    def target_file_size(self, primary_key: bool) -> int:
        return self._size(TARGET_FILE_SIZE, (128 if primary_key else 256) * 1024 * 1024)

    @property
    def manifest_compression(self) -> str:
        return self.options.get(MANIFEST_COMPRESSION) or "zstd"

    @property
    def manifest_target_file_size(self) -> int:
        return self._size(MANIFEST_TARGET_FILE_SIZE, 8 * 1024 * 1024)

    @property
    def manifest_merge_min_count(self) -> int:
        return self._int(MANIFEST_MERGE_MIN_COUNT, 30)

    @property
    def manifest_full_compaction_threshold_size(self) -> int:
        """At least this many bytes of small or deleting manifests and a commit rewrites them
        all without DELETE entries (Java's ManifestFileMerger.tryFullCompaction)."""
        return self._size(MANIFEST_FULL_COMPACTION_THRESHOLD_SIZE, 16 * 1024 * 1024)

    @property
    def partition_default_name(self) -> str:
        return self.options.get(PARTITION_DEFAULT_NAME) or "__DEFAULT_PARTITION__"

    @property
    def partition_legacy_name(self) -> bool:
        return bool(self._value(PARTITION_LEGACY_NAME, True))

    @property
    def stats_mode(self) -> str:
        return (self.options.get(STATS_MODE) or "truncate(16)").lower()

    @property
    def data_file_prefix(self) -> str:
        return self.options.get(DATA_FILE_PREFIX) or "data-"

    @property
    def scan_snapshot_id(self) -> int | None:
        return None if SCAN_SNAPSHOT_ID not in self.options else self._int(SCAN_SNAPSHOT_ID, 0)

    @property
    def scan_tag_name(self) -> str | None:
        raw = self.options.get(SCAN_TAG_NAME)
        return raw.strip() if raw and raw.strip() else None

    @property
    def scan_timestamp_millis(self) -> int | None:
        """``scan.timestamp-millis``, or ``scan.timestamp`` (local time, as Java reads it with
        the JVM's zone: ``yyyy-MM-dd[ HH:mm:ss[.SSS]]``) as epoch milliseconds."""
        if SCAN_TIMESTAMP_MILLIS in self.options:
            return self._int(SCAN_TIMESTAMP_MILLIS, 0)
        raw = self.options.get(SCAN_TIMESTAMP)
        if raw is None:
            return None
        try:
            return round(datetime.datetime.fromisoformat(raw.strip()).timestamp() * 1000)
        except ValueError:
            raise OptionError(
                f"{_where(self.table)}option '{SCAN_TIMESTAMP}' = '{raw}' must be a local time "
                "such as '2026-11-26 12:00:00' or '2026-11-26'."
            ) from None

    def check_time_travel(self) -> None:
        """At most one way to pick what a scan reads: Java's SchemaValidation of its startup
        modes (from-timestamp, then from-snapshot, then incremental), whose words end the
        message."""
        given = [k for k in SCAN_START_KEYS if self.options.get(k, "").strip()]
        if len(given) <= 1:
            return
        legal: tuple[str, ...]
        if SCAN_TIMESTAMP_MILLIS in given or SCAN_TIMESTAMP in given:
            mode, legal = "from-timestamp", (SCAN_TIMESTAMP_MILLIS, SCAN_TIMESTAMP)
        elif SCAN_SNAPSHOT_ID in given or SCAN_TAG_NAME in given:
            mode, legal = "from-snapshot", (SCAN_SNAPSHOT_ID, SCAN_TAG_NAME)
        else:
            mode, legal = "incremental", (*INCREMENTAL_KEYS, INCREMENTAL_TO_AUTO_TAG)
        illegal = [k for k in given if k not in legal]
        if illegal:
            java = f"[{illegal[0]}] must be null when you set [{','.join(legal)}]"
        else:
            java = f"must set only one key in [{','.join(legal)}] when you use {mode} for scan.mode"
        raise OptionError(
            f"{_where(self.table)}options "
            f"{', '.join(f'{k!r} = {self.options[k]!r}' for k in given)} each choose what to "
            f"read; set only one ({java})."
        )

    def check_batch_scan_mode(self) -> None:
        """Refuse a ``scan.mode`` a batch read would not honour (Java's compacted-full reads the
        latest COMPACT snapshot, the creation-time modes filter files); the other modes read
        what the time-travel and incremental keys choose, as here."""
        raw = self.options.get(SCAN_MODE) or self.options.get("log.scan") or "default"
        if raw.strip().lower() in UNSUPPORTED_SCAN_MODES:
            raise UnsupportedOptionError(
                f"{_where(self.table)}option '{SCAN_MODE}' = '{raw}' is a startup mode "
                "paimon_pyspark does not implement; unset it, or read a snapshot with "
                f"'{SCAN_SNAPSHOT_ID}' or '{SCAN_TIMESTAMP_MILLIS}'."
            )

    @property
    def rowkind_field(self) -> str | None:
        """The string column whose value (+I, -U, +U, -D) is each row's kind (PK tables)."""
        raw = self.options.get(ROWKIND_FIELD)
        return raw.strip() if raw and raw.strip() else None

    @property
    def sequence_fields(self) -> list[str]:
        """User columns that order the records of a key before ``_SEQUENCE_NUMBER``."""
        raw = self.options.get(SEQUENCE_FIELD)
        return [s.strip() for s in raw.split(",") if s.strip()] if raw else []

    @property
    def data_file_thin_mode(self) -> bool:
        """PK data files without the ``_KEY_`` copies of the key columns (Java 1.0+ readers)."""
        return self._true(DATA_FILE_THIN_MODE)

    @property
    def write_buffer_size(self) -> int:
        """Arrow bytes the PK writers of one TableWrite buffer together (256 mb) before a
        buffer spills or flushes a sorted run (see mergetree/write_buffer.py)."""
        return self._size(WRITE_BUFFER_SIZE, 256 * 1024 * 1024)

    @property
    def write_parallelism(self) -> int:
        """Threads one TableWrite encodes its writers' files on (ours, not Java's: a Java writer
        encodes on its task's thread); default: the cores this process may run on."""
        return self._int(WRITE_PARALLELISM, available_cores())

    @property
    def write_buffer_spillable(self) -> bool:
        """A full write buffer spills sorted records to local disk (Java 1.4.2: true)."""
        return bool(self._value(WRITE_BUFFER_SPILLABLE, True))

    @property
    def write_buffer_spill_max_disk_size(self) -> int:
        """Spill bytes a write buffer may hold on local disk before it flushes instead."""
        return self._size(WRITE_BUFFER_SPILL_MAX_DISK_SIZE, JAVA_LONG_MAX)

    @property
    def spill_compression(self) -> str:
        """Codec of spill files: zstd (default), lz4 or none (lzo is refused at load)."""
        return (self.options.get(SPILL_COMPRESSION) or "zstd").strip().lower()

    @property
    def spill_compression_zstd_level(self) -> int:
        return self._int(SPILL_COMPRESSION_ZSTD_LEVEL, 1)

    @property
    def sort_spill_threshold(self) -> int:
        """Sorted runs a compaction merges straight from their files; the smallest beyond
        that are first copied to local spill files (Java's sortSpillThreshold: the stop
        trigger + 1 unless set; ``check_ranges`` makes sure it is at least 2)."""
        if SORT_SPILL_THRESHOLD in self.options:
            return self._int(SORT_SPILL_THRESHOLD, 0)
        trigger = self.num_sorted_run_compaction_trigger
        stop = self._int(NUM_SORTED_RUN_STOP_TRIGGER, _saturated(trigger + 3))
        return _saturated(max(trigger, stop) + 1)

    @property
    def local_sort_max_num_file_handles(self) -> int:
        """Spill files a write buffer merges at once (Java's external sort fan-in, 128)."""
        return self._int(LOCAL_SORT_MAX_NUM_FILE_HANDLES, 128)

    @property
    def merge_engine(self) -> str:
        return (self.options.get(MERGE_ENGINE) or "deduplicate").strip().lower()

    @property
    def dynamic_partition_overwrite(self) -> bool:
        """An overwrite without a static spec replaces only the partitions it writes."""
        return bool(self._value(DYNAMIC_PARTITION_OVERWRITE, True))

    @property
    def overwrite_upgrade(self) -> bool:
        """Overwritten PK buckets whose new files do not overlap get them at the top level."""
        return bool(self._value(OVERWRITE_UPGRADE, True))

    @property
    def num_levels(self) -> int:
        """LSM levels; Java defaults it to ``num-sorted-run.compaction-trigger`` + 1."""
        return self._int(NUM_LEVELS, _saturated(self.num_sorted_run_compaction_trigger + 1))

    @property
    def bucket_function_type(self) -> str:
        """How a fixed bucket is chosen from the bucket key: default (BinaryRow hash), mod or
        hive (Java's BucketFunctionType; bucket/functions.py)."""
        return str(self._value(BUCKET_FUNCTION_TYPE, "default"))

    @property
    def row_tracking_enabled(self) -> bool:
        """Rows carry ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (read/row_tracking.py); only for
        append tables with ``bucket = -1``, as Java's SchemaValidation requires."""
        return self._true(ROW_TRACKING_ENABLED)

    def check_row_tracking_rewrite(self, action: str, instead: str) -> None:
        """Refuse ``action`` on a row-tracking table: it writes rows the table holds already
        into new files, and Java carries their ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` into them
        (PaimonSparkWriter.withRowTracking), which paimon_pyspark does not. Appends,
        overwrites, compactions and deletion-vector deletes keep Java's ids
        (commit/row_tracking.py, compact/append.py)."""
        if self.row_tracking_enabled:
            raise UnsupportedOptionError(
                f"Table '{self.table}': {action} is refused: option '{ROW_TRACKING_ENABLED}' = "
                "'true' needs the rewritten rows to keep their _ROW_ID and _SEQUENCE_NUMBER, "
                f"which paimon_pyspark does not do; {instead}"
            )

    @property
    def postpone_batch_write_fixed_bucket(self) -> bool:
        """Batch writes of a postpone-bucket table go straight into real buckets (Java: true)."""
        return bool(self._value(POSTPONE_BATCH_WRITE_FIXED_BUCKET, True))

    @property
    def postpone_default_bucket_num(self) -> int:
        """Buckets of a postpone table's partition that has no real bucket yet (Java: 1)."""
        return self._int(POSTPONE_DEFAULT_BUCKET_NUM, 1)

    # --- snapshot expiration (Java's CoreOptions.expireConfig) ---

    @property
    def write_only(self) -> bool:
        """No compaction at commit and no expiry after it (fallback key write.compaction-skip)."""
        key = WRITE_ONLY if WRITE_ONLY in self.options else WRITE_COMPACTION_SKIP
        return self._true(key)

    @property
    def snapshot_num_retained_min(self) -> int:
        return self._int(SNAPSHOT_NUM_RETAINED_MIN, 10)

    @property
    def snapshot_num_retained_max(self) -> int:
        return self._int(SNAPSHOT_NUM_RETAINED_MAX, JAVA_INT_MAX)

    @property
    def snapshot_time_retained_ms(self) -> int:
        return self._duration_ms(SNAPSHOT_TIME_RETAINED, 3_600_000)

    @property
    def snapshot_expire_limit(self) -> int:
        return self._int(SNAPSHOT_EXPIRE_LIMIT, 50)

    @property
    def changelog_num_retained_min(self) -> int:
        """``changelog.num-retained.min``, else the snapshots' (Java's changelogNumRetainMin)."""
        return self._int(CHANGELOG_NUM_RETAINED_MIN, self.snapshot_num_retained_min)

    @property
    def changelog_num_retained_max(self) -> int:
        return self._int(CHANGELOG_NUM_RETAINED_MAX, self.snapshot_num_retained_max)

    @property
    def changelog_time_retained_ms(self) -> int:
        return self._duration_ms(CHANGELOG_TIME_RETAINED, self.snapshot_time_retained_ms)

    @property
    def changelog_lifecycle_decoupled(self) -> bool:
        """Changelog outlives snapshots: snapshot expiry writes ``changelog/changelog-<id>``
        instead of deleting the changelog (Java's changelogLifecycleDecoupled)."""
        return (
            self.changelog_num_retained_max > self.snapshot_num_retained_max
            or self.changelog_time_retained_ms > self.snapshot_time_retained_ms
            or self.changelog_num_retained_min > self.snapshot_num_retained_min
        )

    @property
    def consumer_changelog_only(self) -> bool:
        """Consumers hold back changelog expiry only, not snapshot expiry; only while the
        changelog is decoupled (Java's consumerChangelogOnly)."""
        return self._true(CONSUMER_CHANGELOG_ONLY) and self.changelog_lifecycle_decoupled

    @property
    def consumer_id(self) -> str | None:
        """The stream's consumer (``consumer/consumer-<id>``), None when unset; Java refuses
        an empty id."""
        raw = self.options.get(CONSUMER_ID)
        if raw is None:
            return None
        if not raw:
            raise OptionError(f"{_where(self.table)}option '{CONSUMER_ID}' must not be empty.")
        return raw

    @property
    def consumer_expiration_ms(self) -> int | None:
        """Consumers not written for this long are deleted after each commit (Java's
        consumerExpireTime), None when unset."""
        key = CONSUMER_EXPIRATION_TIME
        return self._duration_ms(key, 0) if key in self.options else None

    @property
    def consumer_ignore_progress(self) -> bool:
        """A new stream with a consumer id starts by ``scan.mode``, not at the consumer."""
        return self._true(CONSUMER_IGNORE_PROGRESS)

    @property
    def consumer_mode(self) -> str:
        return str(self._value(CONSUMER_MODE, "exactly-once"))

    @property
    def snapshot_expire_execution_mode(self) -> str:
        return str(self._value(SNAPSHOT_EXPIRE_EXECUTION_MODE, "sync"))

    @property
    def snapshot_clean_empty_directories(self) -> bool:
        key = SNAPSHOT_CLEAN_EMPTY_DIRECTORIES
        if key not in self.options:
            key = SNAPSHOT_EXPIRE_CLEAN_EMPTY_DIRECTORIES
        return self._true(key)

    @property
    def file_index_in_manifest_threshold(self) -> int:
        """A data file's index blob up to this size goes into the manifest, a larger one into
        ``<data file>.index`` beside it (Java: 500 B)."""
        return self._size(FILE_INDEX_IN_MANIFEST_THRESHOLD, 500)

    @property
    def file_index_read_enabled(self) -> bool:
        """Scans skip files by their indexes (Java: true)."""
        return bool(self._value(FILE_INDEX_READ_ENABLED, True))

    @property
    def commit_max_retries(self) -> int:
        return self._int(COMMIT_MAX_RETRIES, 10)

    @property
    def commit_min_retry_wait_ms(self) -> int:
        return self._duration_ms(COMMIT_MIN_RETRY_WAIT, 10)

    @property
    def commit_max_retry_wait_ms(self) -> int:
        return self._duration_ms(COMMIT_MAX_RETRY_WAIT, 10_000)

    # --- compaction of primary-key and append buckets (Java's CoreOptions.compactionFileSize,
    # --- numSortedRunCompactionTrigger, ...); see mergetree/compact_settings.py

    def check_compaction_supported(self) -> None:
        """Raise UnsupportedOptionError for an option that changes which files a compaction
        picks and that is not implemented (early full compaction, off-peak hours): a table
        configured for it would silently compact differently than under Java."""
        for key in _COMPACTION_UNSUPPORTED:
            raw = self.options.get(key)
            if raw is not None and not _is_off(key, raw):
                raise UnsupportedOptionError(
                    f"Table '{self.table}': option '{key}' is not supported by compaction in "
                    "paimon_pyspark yet."
                )
        self.check_files_writable("compaction")

    def check_files_writable(self, action: str) -> None:
        """Raise UnsupportedOptionError for a refused key that changes only the data files
        written (``options_ledger.WRITES``, and ``ORC_WRITES`` for an ORC table): reads of the
        table go on, writes and compactions would roll other files than Java's."""
        orc = (self.options.get(FILE_FORMAT) or "parquet").strip().lower() == "orc"
        for key, raw in self.options.items():
            entry = ledger.status_of(key)  # a fallback key has its key's entry
            if not isinstance(entry, ledger.Entry) or is_java_default(entry, raw):
                continue
            by = ledger.REFUSED_ONLY_BY.get(entry.key)
            if by == ledger.WRITES or (by == ledger.ORC_WRITES and orc):
                raise UnsupportedOptionError(
                    f"Table '{self.table}': option '{key}' = '{raw}' is not supported by "
                    f"{action} in paimon_pyspark ({entry.note}). See docs/options.md."
                )

    @property
    def num_sorted_run_compaction_trigger(self) -> int:
        return self._int(NUM_SORTED_RUN_COMPACTION_TRIGGER, 5)

    @property
    def num_sorted_run_stop_trigger(self) -> int:
        """Sorted runs above which a writer waits for compaction (Java: the compaction trigger
        + 3, never below the trigger)."""
        trigger = self.num_sorted_run_compaction_trigger
        stop = self._int(NUM_SORTED_RUN_STOP_TRIGGER, _saturated(trigger + 3))
        return max(trigger, stop)

    @property
    def full_compaction_delta_commits(self) -> int | None:
        """The option's value, None when unset; which commits compact fully is
        ``write/compact_manager.full_compaction_due`` (Java's Flink writer: every batch commit
        and each n-th stream commit for a value >= 0 or the full-compaction producer)."""
        key = FULL_COMPACTION_DELTA_COMMITS
        return self._int(key, 0) if key in self.options else None

    @property
    def max_size_amplification_percent(self) -> int:
        return self._int(MAX_SIZE_AMPLIFICATION_PERCENT, 200)

    @property
    def compaction_size_ratio(self) -> int:
        return self._int(COMPACTION_SIZE_RATIO, 1)

    @property
    def compaction_force_up_level_0(self) -> bool:
        return self._true(COMPACTION_FORCE_UP_LEVEL_0)

    @property
    def compaction_force_rewrite_all_files(self) -> bool:
        return self._true(COMPACTION_FORCE_REWRITE_ALL_FILES)

    @property
    def compaction_min_file_num(self) -> int:
        return self._int(COMPACTION_MIN_FILE_NUM, 5)

    @property
    def compaction_small_file_ratio(self) -> float:
        """Files below ``target-file-size`` times this are small (Java's compactionFileSize)."""
        return float(self._value(COMPACTION_SMALL_FILE_RATIO, 0.7))

    @property
    def compaction_delete_ratio_threshold(self) -> float:
        """An unaware-bucket append file whose deletion vector deletes more than this share of
        its rows is compacted like a small file (Java: 0.2)."""
        return float(self._value(COMPACTION_DELETE_RATIO_THRESHOLD, 0.2))

    @property
    def source_split_open_file_cost(self) -> int:
        """The least weight of a file when files are packed into splits (Java: 4 mb)."""
        return self._size(SOURCE_SPLIT_OPEN_FILE_COST, 4 * 1024 * 1024)

    @property
    def source_split_target_size(self) -> int:
        """The weight a scan packs into one split of a bucket (Java: 128 mb)."""
        return self._size(SOURCE_SPLIT_TARGET_SIZE, 128 * 1024 * 1024)

    def need_lookup(self, primary_key: bool) -> bool:
        """Java's CoreOptions.needLookup: ``first-row``, ``changelog-producer = lookup``,
        deletion vectors or ``force-lookup`` on a primary-key table."""
        return primary_key and (
            self.merge_engine == "first-row"
            or self.changelog_producer == "lookup"
            or self.deletion_vectors_enabled
            or self._true(FORCE_LOOKUP)
        )

    # --- deletion vectors ---------------------------------------------------------------------

    @property
    def deletion_vectors_enabled(self) -> bool:
        """Writers mark replaced and deleted rows in deletion vectors; readers of a primary-key
        table skip level 0 and merge nothing (Java: false)."""
        return self._true(DELETION_VECTORS_ENABLED)

    @property
    def deletion_vectors_bitmap64(self) -> bool:
        """New vectors are 64-bit RoaringBitmaps (Iceberg's format) instead of 32-bit ones."""
        return self._true(DELETION_VECTORS_BITMAP64)

    @property
    def deletion_vectors_modifiable(self) -> bool:
        """ALTER TABLE may turn ``deletion-vectors.enabled`` on or off (Java: false)."""
        return self._true(DELETION_VECTORS_MODIFIABLE)

    @property
    def deletion_vector_index_file_target_size(self) -> int:
        """Where an index file of an unaware-bucket table's vectors rolls (Java: 2 mb)."""
        return self._size(DELETION_VECTOR_INDEX_FILE_TARGET_SIZE, 2 * 1024 * 1024)

    @property
    def batch_scan_skip_level0(self) -> bool:
        """Java's batchScanSkipLevel0: a batch read of a primary-key table leaves out level-0
        files, which a commit's lookup compaction has already folded into the levels above."""
        return self.deletion_vectors_enabled or self.merge_engine == "first-row"

    # --- dynamic bucket and cross-partition upsert (bucket = -1 on primary-key tables) ---

    @property
    def dynamic_bucket_target_row_num(self) -> int:
        """Keys a dynamic bucket takes before the next one is opened (Java: 2,000,000)."""
        return self._int(DYNAMIC_BUCKET_TARGET_ROW_NUM, 2_000_000)

    @property
    def dynamic_bucket_max_buckets(self) -> int:
        """Buckets a partition may have, -1 for unlimited (Java's default)."""
        return self._int(DYNAMIC_BUCKET_MAX_BUCKETS, -1)

    @property
    def dynamic_bucket_initial_buckets(self) -> int | None:
        """Assigners of a distributed (Spark) write; None: the job's parallelism."""
        key = DYNAMIC_BUCKET_INITIAL_BUCKETS
        return self._int(key, 1) if key in self.options else None

    @property
    def dynamic_bucket_assigner_parallelism(self) -> int | None:
        key = DYNAMIC_BUCKET_ASSIGNER_PARALLELISM
        return self._int(key, 1) if key in self.options else None

    @property
    def cross_partition_upsert_index_ttl_ms(self) -> int | None:
        """Cross-partition upsert: buckets whose files are all older are not bootstrapped."""
        key = CROSS_PARTITION_UPSERT_INDEX_TTL
        return self._duration_ms(key, 0) if key in self.options else None

    # --- merge engines (Java's CoreOptions.ignoreDelete, fieldAggFunc, ...): merge/ checks
    # --- them against the schema and the engine

    def strict_bool(self, key: str, default: bool = False) -> bool:
        """A boolean option that must read ``true`` or ``false``."""
        raw = self.options.get(key)
        return default if raw is None else parse_java_bool(raw, key, self.table)

    @property
    def ignore_delete(self) -> bool:
        """``ignore-delete``, or the first of its fallback keys that is set."""
        for key in IGNORE_DELETE_KEYS:
            if key in self.options:
                return self.strict_bool(key)
        return False

    @property
    def changelog_producer(self) -> str:
        """``changelog-producer``: none, input, lookup or full-compaction (Java: none)."""
        return self.options.get(CHANGELOG_PRODUCER, "none").strip().lower()

    @property
    def changelog_file_prefix(self) -> str:
        return self.options.get(CHANGELOG_FILE_PREFIX, "changelog-")

    @property
    def changelog_file_format(self) -> str:
        """``changelog-file.format``, else ``file.format`` (Java's KeyValueFileWriterFactory)."""
        return (self.options.get(CHANGELOG_FILE_FORMAT) or self.file_format).lower()

    @property
    def changelog_file_compression(self) -> str:
        """``changelog-file.compression``, else ``file.compression``."""
        return (self.options.get(CHANGELOG_FILE_COMPRESSION) or self.file_compression).lower()

    @property
    def changelog_file_stats_mode(self) -> str:
        """``changelog-file.stats-mode``, else ``metadata.stats-mode``."""
        return (self.options.get(CHANGELOG_FILE_STATS_MODE) or self.stats_mode).strip().lower()

    @property
    def record_level_expire_seconds(self) -> int | None:
        """``record-level.expire-time`` in whole seconds (Java's Duration.getSeconds), or
        None: primary-key compactions drop records older than this (RecordLevelExpire)."""
        raw = self.options.get(RECORD_LEVEL_EXPIRE_TIME)
        if raw is None:
            return None
        return parse_duration_ms(raw, RECORD_LEVEL_EXPIRE_TIME, self.table) // 1000

    @property
    def record_level_time_field(self) -> str | None:
        return self.options.get(RECORD_LEVEL_TIME_FIELD)

    @property
    def upsert_key(self) -> list[str]:
        """``upsert-key`` of an append table: inserts replace the rows with the same key
        (Java's CoreOptions.upsertKey; empty when unset or empty)."""
        raw = self.options.get(UPSERT_KEY) or ""
        return raw.split(",") if raw else []

    @property
    def ignore_update_before(self) -> bool:
        """``ignore-update-before``: writes drop -U records (Java's RowKindFilter)."""
        return self.strict_bool("ignore-update-before")

    @property
    def sequence_ascending(self) -> bool:
        return self._value(SEQUENCE_FIELD_SORT_ORDER, "ascending") == "ascending"

    @property
    def partial_update_remove_record_on_delete(self) -> bool:
        return self.strict_bool(PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE)

    @property
    def aggregation_remove_record_on_delete(self) -> bool:
        return self.strict_bool(AGGREGATION_REMOVE_RECORD_ON_DELETE)

    @property
    def fields_default_agg_func(self) -> str | None:
        return self.options.get(FIELDS_DEFAULT_AGG_FUNC)

    def field_agg_func(self, field: str) -> str | None:
        """``fields.<f>.aggregate-function`` (not the table default)."""
        return self.options.get(f"{FIELDS_PREFIX}{field}.{AGG_FUNCTION}")

    def field_ignore_retract(self, field: str) -> bool:
        return self.strict_bool(f"{FIELDS_PREFIX}{field}.{IGNORE_RETRACT}")

    def field_list_agg_delimiter(self, field: str) -> str:
        return self.options.get(f"{FIELDS_PREFIX}{field}.{LIST_AGG_DELIMITER}", ",")

    def field_distinct(self, field: str) -> bool:
        """``fields.<f>.distinct`` (collect, listagg)."""
        return self.strict_bool(f"{FIELDS_PREFIX}{field}.{DISTINCT}")

    def field_nested_key(self, field: str) -> tuple[str, ...]:
        """``fields.<f>.nested-key`` (nested_update, nested_partial_update): comma-separated,
        trimmed, as Java's fieldNestedUpdateAggNestedKey."""
        raw = self.options.get(f"{FIELDS_PREFIX}{field}.{NESTED_KEY}")
        if raw is None:
            return ()
        parts = raw.split(",")
        while len(parts) > 1 and parts[-1] == "":  # String.split drops trailing empty parts
            parts.pop()
        return tuple(k.strip() for k in parts)

    def field_count_limit(self, field: str) -> int:
        """``fields.<f>.count-limit`` (nested_update; Java: Integer.MAX_VALUE)."""
        key = f"{FIELDS_PREFIX}{field}.{COUNT_LIMIT}"
        raw = self.options.get(key)
        if raw is None:
            return 2**31 - 1
        try:
            value = int(raw.strip())
        except ValueError:
            value = 2**31
        if not -(2**31) <= value < 2**31:
            raise OptionError(f"Table '{self.table}': '{key}' = '{raw}' is not an integer.")
        return value

    def field_ts_field(self, field: str) -> str | None:
        """``fields.<f>.ts-field`` (merge_map_with_keytime; Java: the ROW's last field)."""
        return self.options.get(f"{FIELDS_PREFIX}{field}.{MERGE_MAP_TS_FIELD}")

    def field_options(self) -> list[FieldOption]:
        """Every per-field ``fields.<f1,f2>.<suffix>`` option (not the table default)."""
        out = []
        for key, value in self.options.items():
            if not key.startswith(FIELDS_PREFIX) or key == FIELDS_DEFAULT_AGG_FUNC:
                continue
            field_part, _, suffix = key[len(FIELDS_PREFIX) :].partition(".")
            out.append(FieldOption(key, tuple(field_part.split(",")), suffix, value))
        return out


@dataclass(frozen=True)
class FieldOption:
    """One ``fields.<f1,f2>.<suffix>`` option: the fields it names and what it sets."""

    key: str
    fields: tuple[str, ...]
    suffix: str
    value: str


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def check_supported(options: Mapping[str, str], table: str) -> None:
    """Raise UnsupportedOptionError for any option whose meaning we do not implement."""
    for key, value in options.items():
        _check_ledger(key, value, table)
        allowed = _UNSUPPORTED_UNLESS.get(key)
        if allowed is not None and value.strip().lower() not in allowed:
            raise UnsupportedOptionError(
                f"Table '{table}': option '{key}' = '{value}' is not supported by "
                f"paimon_pyspark (supported values: {', '.join(sorted(allowed))})."
            )
        if key in _UNSUPPORTED_KEYS or (
            key.startswith(_UNSUPPORTED_PREFIXES) and not is_merge_fields_option(key)
        ):
            raise UnsupportedOptionError(
                f"Table '{table}': option '{key}' is not supported by paimon_pyspark yet."
            )
    file_index.parse_options(options, table)  # unknown index types, options or keys raise
    for key in (STATS_MODE, CHANGELOG_FILE_STATS_MODE):
        mode = (options.get(key) or "truncate(16)").strip().lower()
        if not _STATS_MODE_RE.match(mode):
            raise OptionError(f"Table '{table}': invalid '{key}' = '{mode}'.")
    for key in (FILE_FORMAT, CHANGELOG_FILE_FORMAT):
        fmt = (options.get(key) or "parquet").lower()
        if fmt not in ("parquet", "orc", "avro"):
            raise UnsupportedOptionError(
                f"Table '{table}': {key} '{fmt}' is not supported (parquet, orc, avro)."
            )


def _check_ledger(key: str, value: str, table: str) -> None:
    """Refuse ``key`` when the options ledger refuses it and ``value`` is not Java's default
    (compared as Java parses it: ``60 s`` is ``1 min``)."""
    found = ledger.status_of(key)
    if found is None or found.status != ledger.REFUSED or key in ledger.REFUSED_ONLY_BY:
        return
    if isinstance(found, ledger.Entry):
        if is_java_default(found, value):
            return
        default = "unset" if found.default is None else f"'{found.default}'"
        why = f"{found.note}; Java's default: {default}"
    else:
        why = found.note
    raise UnsupportedOptionError(
        f"Table '{table}': option '{key}' = '{value}' is not supported by paimon_pyspark "
        f"({why}). See docs/options.md."
    )


def is_java_default(entry: ledger.Entry, raw: str) -> bool:
    """``raw`` means what Java's default for ``entry`` means (a value Java cannot parse does
    not); a key without a default has none, unless it is a blank string."""
    if entry.default is None:
        return entry.kind == "string" and not raw.strip()
    key, default = entry.key, entry.default
    try:
        if entry.kind == "bool":
            return parse_java_bool(raw.strip(), key) == parse_java_bool(default, key)
        if entry.kind in ("int", "long"):
            return parse_java_int(raw.strip(), key, long=True) == int(default)
        if entry.kind == "double":
            return parse_java_double(raw, key) == float(default)
        if entry.kind == "memory":
            return parse_memory_size(raw, key) == parse_memory_size(default, key)
        if entry.kind == "duration":
            return parse_duration_ms(raw, key) == parse_duration_ms(default, key)
    except OptionError:
        return False
    if entry.kind == "enum":
        return raw.strip().lower() == default.lower()
    if entry.kind == "map":
        return _java_map(raw) == _java_map(default)
    return raw == default


def _java_map(raw: str) -> dict[str, str]:
    """A ``k:v,k:v`` option as Java's map parser reads it (blank: empty)."""
    pairs = (p.split(":", 1) for p in raw.split(",") if p.strip())
    return {p[0].strip(): p[-1].strip() for p in pairs}


@dataclass(frozen=True)
class _Range:
    """An option's Java type, and the values it may hold beyond fitting that type."""

    kind: str
    """int, long, memory, duration, double, bool or choice."""
    ok: Callable[[int | float], bool] | None = None
    expected: str = ""
    choices: tuple[str, ...] = ()


def _at_least(low: int) -> _Range:
    return _Range("int", lambda n: n >= low, f"at least {low}")


_POSITIVE_SIZE = _Range("memory", lambda n: n > 0, "more than 0 bytes")
_INT, _LONG, _MEMORY, _DURATION, _BOOL = (
    _Range("int"),
    _Range("long"),
    _Range("memory"),
    _Range("duration"),
    _Range("bool"),
)
_RANGES: dict[str, _Range] = {
    BUCKET: _Range(
        "int",
        lambda n: n > 0 or n in (-1, -2),
        "a positive number of buckets, -1 (dynamic or unaware) or -2 (postpone)",
    ),
    ZSTD_LEVEL: _INT,
    TARGET_FILE_SIZE: _POSITIVE_SIZE,
    MANIFEST_TARGET_FILE_SIZE: _POSITIVE_SIZE,
    MANIFEST_MERGE_MIN_COUNT: _INT,
    MANIFEST_FULL_COMPACTION_THRESHOLD_SIZE: _POSITIVE_SIZE,
    SCAN_SNAPSHOT_ID: _LONG,
    SCAN_TIMESTAMP_MILLIS: _LONG,
    INCREMENTAL_BETWEEN_SCAN_MODE: _Range("choice", choices=("auto", "delta", "changelog", "diff")),
    COMMIT_MAX_RETRIES: _INT,
    COMMIT_MIN_RETRY_WAIT: _DURATION,
    COMMIT_MAX_RETRY_WAIT: _DURATION,
    WRITE_BUFFER_SIZE: _POSITIVE_SIZE,
    WRITE_BUFFER_SPILL_MAX_DISK_SIZE: _MEMORY,
    SPILL_COMPRESSION_ZSTD_LEVEL: _INT,
    LOCAL_SORT_MAX_NUM_FILE_HANDLES: _at_least(2),
    NUM_LEVELS: _INT,
    NUM_SORTED_RUN_COMPACTION_TRIGGER: _INT,
    NUM_SORTED_RUN_STOP_TRIGGER: _INT,
    FULL_COMPACTION_DELTA_COMMITS: _INT,
    SORT_SPILL_THRESHOLD: _INT,
    MAX_SIZE_AMPLIFICATION_PERCENT: _INT,
    COMPACTION_SIZE_RATIO: _INT,
    COMPACTION_MIN_FILE_NUM: _INT,
    COMPACTION_SMALL_FILE_RATIO: _Range("double", lambda r: r >= 0, "0 or more"),
    COMPACTION_DELETE_RATIO_THRESHOLD: _Range("double"),
    SOURCE_SPLIT_OPEN_FILE_COST: _MEMORY,
    SOURCE_SPLIT_TARGET_SIZE: _MEMORY,
    POSTPONE_DEFAULT_BUCKET_NUM: _at_least(1),
    SNAPSHOT_NUM_RETAINED_MIN: _at_least(1),
    SNAPSHOT_NUM_RETAINED_MAX: _INT,
    SNAPSHOT_TIME_RETAINED: _DURATION,
    CHANGELOG_NUM_RETAINED_MIN: _at_least(1),
    CHANGELOG_NUM_RETAINED_MAX: _INT,
    CHANGELOG_TIME_RETAINED: _DURATION,
    CONSUMER_CHANGELOG_ONLY: _Range("bool"),
    CONSUMER_EXPIRATION_TIME: _DURATION,
    CONSUMER_MODE: _Range("choice", choices=("exactly-once", "at-least-once")),
    CONSUMER_IGNORE_PROGRESS: _BOOL,
    SNAPSHOT_EXPIRE_LIMIT: _INT,  # 0 or less: expiry deletes nothing, as in Java
    SNAPSHOT_EXPIRE_EXECUTION_MODE: _Range("choice", choices=("sync", "async")),
    # automatic tags (maintenance/tag_automatic.py)
    "tag.automatic-creation": _Range(
        "choice", choices=("none", "process-time", "watermark", "batch")
    ),
    "tag.creation-period": _Range("choice", choices=("daily", "hourly", "two-hours")),
    "tag.period-formatter": _Range(
        "choice", choices=("with_dashes", "without_dashes", "without_dashes_and_spaces")
    ),
    "tag.creation-delay": _DURATION,
    "tag.creation-period-duration": _Range("duration", lambda n: n > 0, "more than 0 ms"),
    "tag.num-retained-max": _INT,
    "tag.default-time-retained": _DURATION,
    "tag.time-expire-enabled": _BOOL,
    "tag.automatic-completion": _BOOL,
    # partition expiry (maintenance/partition_expire.py)
    "partition.expiration-time": _DURATION,
    "partition.expiration-check-interval": _DURATION,
    "partition.expiration-strategy": _Range("choice", choices=("values-time", "update-time")),
    "partition.expiration-max-num": _INT,
    "partition.expiration-batch-size": _INT,
    "end-input.check-partition-expire": _BOOL,
    SEQUENCE_FIELD_SORT_ORDER: _Range("choice", choices=("ascending", "descending")),
    BUCKET_FUNCTION_TYPE: _Range("choice", choices=("default", "mod", "hive")),
    ROW_TRACKING_ENABLED: _BOOL,
    PARTITION_END_INPUT_TO_DONE: _BOOL,
    # Avro codecs both Java and fastavro write (snappy and lz4 need libraries we do not ship)
    MANIFEST_COMPRESSION: _Range(
        "choice",
        choices=("zstd", "zstandard", "none", "null", "uncompressed", "deflate", "bzip2", "xz"),
    ),
    DYNAMIC_BUCKET_TARGET_ROW_NUM: _Range("long", lambda n: n >= 1, "at least 1"),
    DYNAMIC_BUCKET_MAX_BUCKETS: _Range("int", lambda n: n > 0 or n == -1, "-1 (unlimited) or > 0"),
    DYNAMIC_BUCKET_INITIAL_BUCKETS: _at_least(1),
    DYNAMIC_BUCKET_ASSIGNER_PARALLELISM: _at_least(1),
    WRITE_PARALLELISM: _at_least(1),
    CROSS_PARTITION_UPSERT_INDEX_TTL: _DURATION,
    DELETION_VECTOR_INDEX_FILE_TARGET_SIZE: _MEMORY,
    FILE_INDEX_IN_MANIFEST_THRESHOLD: _MEMORY,
    FILE_INDEX_READ_ENABLED: _BOOL,
    **{
        key: _BOOL
        for key in (
            PARTITION_LEGACY_NAME,
            DATA_FILE_THIN_MODE,
            DYNAMIC_PARTITION_OVERWRITE,
            OVERWRITE_UPGRADE,
            COMPACTION_FORCE_UP_LEVEL_0,
            COMPACTION_FORCE_REWRITE_ALL_FILES,
            FORCE_LOOKUP,
            DELETION_VECTORS_ENABLED,
            DELETION_VECTORS_BITMAP64,
            DELETION_VECTORS_MODIFIABLE,
            INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT,
            POSTPONE_BATCH_WRITE_FIXED_BUCKET,
            WRITE_ONLY,
            WRITE_COMPACTION_SKIP,
            WRITE_BUFFER_SPILLABLE,
            SNAPSHOT_CLEAN_EMPTY_DIRECTORIES,
            SNAPSHOT_EXPIRE_CLEAN_EMPTY_DIRECTORIES,
            AGGREGATION_REMOVE_RECORD_ON_DELETE,
            PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE,
            *IGNORE_DELETE_KEYS,
        )
    },
}
"""Every option CoreOptions reads as a number, a size, a duration, a boolean or one of a few
words: its Java type (the values Java can parse) and the values it may hold (Java's
SchemaValidation, the checks Java makes where it uses the option, or what we need; the
docstring of :func:`check_ranges` lists where the two differ)."""


def option_value(options: Mapping[str, str], key: str, table: str = "") -> int | float | bool | str:
    """Option ``key`` parsed as its Java type and checked against its range; it must be set."""
    rng = _RANGES[key]
    raw = options[key]
    value: int | float | bool | str
    if rng.kind in ("int", "long"):
        value = parse_java_int(raw, key, table, long=rng.kind == "long")
    elif rng.kind == "memory":
        value = parse_memory_size(raw, key, table)
    elif rng.kind == "duration":
        value = parse_duration_ms(raw, key, table)
    elif rng.kind == "double":
        value = parse_java_double(raw, key, table)
    elif rng.kind == "bool":
        return parse_java_bool(raw, key, table)
    else:
        value = raw.strip().lower()
        if value not in rng.choices:
            raise OptionError(
                f"{_where(table)}option '{key}' = '{raw}' must be one of {', '.join(rng.choices)}."
            )
        return value
    if rng.ok is not None and not rng.ok(value):
        raise OptionError(f"{_where(table)}option '{key}' = '{raw}' must be {rng.expected}.")
    return value


def check_ranges(options: Mapping[str, str], table: str, primary_key: bool) -> None:
    """Raise OptionError, naming the table, the key and the value, for an option Java cannot read or
    that is outside its range; run when a table is created, loaded and copied.

    Java's own limits: integers fit the int or long the option is declared as (Java parses some only
    where it uses them), sizes and durations fit a long in Java's units, booleans are true or false;
    ``bucket`` > 0, -1 or -2 and ``snapshot.num-retained.min`` >= 1 and <= ``.max``, and the same of
    ``changelog.num-retained.*`` (each falling back to the snapshot's) (SchemaValidation); on a
    primary-key table at least 2 LSM levels (Levels) and a sort spill threshold of at least 2
    (MergeSorter); ``write-buffer-size`` > 0 and ``dynamic-bucket.max-buckets`` -1 or > 0. Ours
    alone, where Java goes on with a value that means nothing useful: ``target-file-size`` and
    ``manifest.target-file-size`` > 0, ``snapshot.expire.limit`` any int (at 0 or less expiry
    deletes nothing, as in Java), the other dynamic-bucket counts and
    ``postpone.default-bucket-num`` >= 1, a finite ``compaction.small-file-ratio`` >= 0,
    ``local-sort.max-num-file-handles`` >= 2 (a merge of spill files needs two), our own
    ``write.parallelism`` >= 1, and at most MAX_LEVELS levels. ``full-compaction.delta-commits`` is
    refused on an append table with ``bucket = -1`` (SchemaValidation).
    tests/interop/test_option_ranges_java.py holds Java to this.
    """
    for key in _RANGES:
        if key in options:
            option_value(options, key, table)
    where = _where(table)
    o = CoreOptions(options, table)
    low = o.snapshot_num_retained_min
    if o.snapshot_num_retained_max < low:
        raw = options[SNAPSHOT_NUM_RETAINED_MAX]
        raise OptionError(
            f"{where}option '{SNAPSHOT_NUM_RETAINED_MAX}' = '{raw}' must not be less than "
            f"'{SNAPSHOT_NUM_RETAINED_MIN}' ({low})."
        )
    if o.changelog_num_retained_max < o.changelog_num_retained_min:
        # SchemaValidation: the changelog's, each falling back to the snapshot's
        raise OptionError(
            f"{where}option '{CHANGELOG_NUM_RETAINED_MIN}' ({o.changelog_num_retained_min}) "
            f"should not be larger than '{CHANGELOG_NUM_RETAINED_MAX}' "
            f"({o.changelog_num_retained_max})."
        )
    mode = _STATS_MODE_RE.match(o.stats_mode)
    if mode is not None and mode.group(2) is not None and int(mode.group(2)) > JAVA_INT_MAX:
        raise OptionError(
            f"{where}option '{STATS_MODE}' = '{options[STATS_MODE]}': the length does not fit "
            "a Java int."
        )
    producer = o.changelog_producer
    if producer not in CHANGELOG_PRODUCERS:
        raise OptionError(
            f"{where}option '{CHANGELOG_PRODUCER}' = '{options[CHANGELOG_PRODUCER]}' is not one "
            f"of {', '.join(CHANGELOG_PRODUCERS)}."
        )
    if producer != "none" and not primary_key:
        # SchemaValidation.validateTableSchema
        raise OptionError(
            f"{where}can not set '{CHANGELOG_PRODUCER}' = '{producer}' on a table without "
            "primary keys, please define primary keys."
        )
    if producer not in ("none", "lookup") and o.merge_engine == "first-row":
        raise OptionError(
            f"{where}only 'none' and 'lookup' '{CHANGELOG_PRODUCER}' are supported by the "
            f"first-row merge engine, not '{producer}'."
        )
    if producer == "full-compaction" and o.deletion_vectors_enabled:
        raise OptionError(
            f"{where}deletion vectors need '{CHANGELOG_PRODUCER}' none, input or lookup, not "
            f"'{producer}'."
        )
    overwrite = options.get("streaming-read-overwrite")
    if (
        producer in ("lookup", "full-compaction")
        and overwrite is not None
        and parse_java_bool(overwrite, "streaming-read-overwrite", table)
    ):
        raise OptionError(  # SchemaValidation.validateTableSchema
            f"{where}cannot set 'streaming-read-overwrite' to true when "
            f"'{CHANGELOG_PRODUCER}' is '{producer}': it would read duplicated changes."
        )
    if o.row_tracking_enabled and (o.bucket != -1 or primary_key):
        # Java's SchemaValidation.validateRowTracking, in its words
        raise OptionError(
            f"{where}Cannot define "
            + ("bucket" if o.bucket != -1 else "primary-key")
            + " for row tracking table"
            + (", it only support bucket = -1." if o.bucket != -1 else ".")
        )
    if primary_key:
        _check_lsm_triggers(options, where)
        if o.deletion_vectors_enabled and o.merge_engine == "first-row":
            # Java's SchemaValidation.validateForDeletionVectors
            raise OptionError(
                f"{where}First row merge engine does not need deletion vectors because there "
                "is no deletion of old data in this merge engine."
            )
    elif FULL_COMPACTION_DELTA_COMMITS in options and o.bucket == -1:
        raise OptionError(
            f"{where}option '{FULL_COMPACTION_DELTA_COMMITS}' is not supported by an append "
            "table of unaware or dynamic bucket (bucket = -1), as in Java."
        )


MAX_LEVELS = 10_000
"""More LSM levels than any table needs: Java takes any int, but holds a list per level in every
bucket (near the int limit Java and we both run out of memory)."""


def _saturated(n: int) -> int:
    """Java's MathUtils.addSafely / incrementSafely: a sum past the int limit is the limit."""
    return min(n, JAVA_INT_MAX)


def _check_lsm_triggers(options: Mapping[str, str], where: str) -> None:
    """Java's level and trigger arithmetic on a primary-key table (numLevels = trigger + 1,
    stop trigger = trigger + 3, sortSpillThreshold = max(trigger, stop) + 1, each unless set,
    sums saturating at the int limit): from 2 to MAX_LEVELS levels (Java's Levels needs 2), and
    a spill threshold of at least 2 (Java's MergeSorter)."""
    trigger = int(options.get(NUM_SORTED_RUN_COMPACTION_TRIGGER, "5"))
    levels = int(options.get(NUM_LEVELS, _saturated(trigger + 1)))
    if not 2 <= levels <= MAX_LEVELS:
        key = NUM_LEVELS if NUM_LEVELS in options else NUM_SORTED_RUN_COMPACTION_TRIGGER
        derived = "" if key == NUM_LEVELS else f" (the trigger + 1, as '{NUM_LEVELS}' is unset)"
        raise OptionError(
            f"{where}option '{key}' = '{options[key]}' gives {levels} LSM levels{derived}; a "
            f"primary-key table needs from 2 to {MAX_LEVELS}."
        )
    stop = int(options.get(NUM_SORTED_RUN_STOP_TRIGGER, _saturated(trigger + 3)))
    spill = int(options.get(SORT_SPILL_THRESHOLD, _saturated(max(trigger, stop) + 1)))
    if spill < 2:
        given = [k for k in (SORT_SPILL_THRESHOLD, NUM_SORTED_RUN_STOP_TRIGGER) if k in options]
        key = given[0] if given else NUM_SORTED_RUN_COMPACTION_TRIGGER
        raise OptionError(
            f"{where}option '{key}' = '{options[key]}' gives a sort spill threshold of {spill} "
            f"(at least 2; unless '{SORT_SPILL_THRESHOLD}' is set it is the larger of the "
            "compaction and stop triggers + 1)."
        )


def _labels(nanos: int, singular: tuple[str, ...], plural: tuple[str, ...]) -> dict[str, int]:
    return {label: nanos for label in (*singular, *plural, *(p + "s" for p in plural))}


_DURATION_UNITS_NS = {
    "": 10**6,
    **_labels(86_400 * 10**9, ("d",), ("day",)),
    **_labels(3_600 * 10**9, ("h",), ("hour",)),
    **_labels(60 * 10**9, ("min", "m"), ("minute",)),
    **_labels(10**9, ("s",), ("sec", "second")),
    **_labels(10**6, ("ms",), ("milli", "millisecond")),
    **_labels(10**3, ("µs",), ("micro", "microsecond")),
    **_labels(1, ("ns",), ("nano", "nanosecond")),
}
"""Java's TimeUtils labels in nanoseconds; no unit is milliseconds."""

_JAVA_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_JAVA_DOUBLE_RE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[dDfF]?")


def _is_off(key: str, value: str) -> bool:
    """Off-peak hours of -1 and a ratio of 0 are Java's defaults: nothing changes."""
    v = value.strip()
    return (key.endswith(".hour") and v == "-1") or (key.endswith("-ratio") and v == "0")


def parse_java_int(raw: str, key: str, table: str = "", long: bool = False) -> int:
    """``raw`` as Java's Integer.parseInt (Long.parseLong with ``long``) reads it: ASCII digits
    with an optional sign, no spaces, within the type's range."""
    low, high, kind = (
        (JAVA_LONG_MIN, JAVA_LONG_MAX, "long") if long else (JAVA_INT_MIN, JAVA_INT_MAX, "int")
    )
    if not _JAVA_INTEGER_RE.fullmatch(raw):
        raise OptionError(f"{_where(table)}option '{key}' = '{raw}' is not an integer.")
    if _big(raw) or not low <= int(raw) <= high:
        raise OptionError(
            f"{_where(table)}option '{key}' = '{raw}' does not fit a Java {kind} ({low} to {high})."
        )
    return int(raw)


def parse_java_bool(raw: str, key: str, table: str = "") -> bool:
    """``true`` or ``false`` in any case, as Java's option parser reads a boolean."""
    text = raw.upper()
    if text not in ("TRUE", "FALSE"):
        raise OptionError(f"{_where(table)}option '{key}' = '{raw}' must be true or false.")
    return text == "TRUE"


def parse_java_double(raw: str, key: str, table: str = "") -> float:
    """A finite decimal number (Java's Double.parseDouble also takes NaN and Infinity, which no
    ratio can be)."""
    text = raw.strip()
    if not _JAVA_DOUBLE_RE.fullmatch(text) or not math.isfinite(float(text.rstrip("dDfF"))):
        raise OptionError(f"{_where(table)}option '{key}' = '{raw}' is not a finite number.")
    return float(text.rstrip("dDfF"))


def parse_duration_ms(text: str, key: str = "", table: str = "") -> int:
    """Milliseconds, as Java's TimeUtils.parseDuration(...).toMillis(): within a Java long."""
    ms = _quantity(text, key, table, _DURATION_UNITS_NS, "duration like '1 h'") // 10**6
    if ms > JAVA_LONG_MAX:
        raise OptionError(
            f"{_where(table)}option '{key}' = '{text}' is more milliseconds than a Java long holds."
        )
    return ms
