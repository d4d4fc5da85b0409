"""Typed table options: key, default and meaning, and the guard against options we do not implement.

Mirrors the subset of org.apache.paimon.CoreOptions that paimon_pyspark honours. An option that
changes what a table holds or how it is read, and that we do not implement, raises
:class:`UnsupportedOptionError`: silently ignoring it would write or read wrong rows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from paimon_pyspark.errors import OptionError, UnsupportedOptionError

BUCKET = "bucket"
BUCKET_KEY = "bucket-key"
FILE_FORMAT = "file.format"
FILE_COMPRESSION = "file.compression"
ZSTD_LEVEL = "file.compression.zstd-level"
TARGET_FILE_SIZE = "target-file-size"
MANIFEST_COMPRESSION = "manifest.compression"
MANIFEST_TARGET_FILE_SIZE = "manifest.target-file-size"
MANIFEST_MERGE_MIN_COUNT = "manifest.merge-min-count"
PARTITION_DEFAULT_NAME = "partition.default-name"
PARTITION_LEGACY_NAME = "partition.legacy-name"
STATS_MODE = "metadata.stats-mode"
DATA_FILE_PREFIX = "data-file.prefix"
SCAN_SNAPSHOT_ID = "scan.snapshot-id"
COMMIT_MAX_RETRIES = "commit.max-retries"
COMMIT_MIN_RETRY_WAIT = "commit.min-retry-wait"
COMMIT_MAX_RETRY_WAIT = "commit.max-retry-wait"
ROWKIND_FIELD = "rowkind.field"
SEQUENCE_FIELD = "sequence.field"
DATA_FILE_THIN_MODE = "data-file.thin-mode"
WRITE_BUFFER_SIZE = "write-buffer-size"
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
SOURCE_SPLIT_OPEN_FILE_COST = "source.split.open-file-cost"
FORCE_LOOKUP = "force-lookup"
POSTPONE_BATCH_WRITE_FIXED_BUCKET = "postpone.batch-write-fixed-bucket"
POSTPONE_DEFAULT_BUCKET_NUM = "postpone.default-bucket-num"
WRITE_ONLY = "write-only"
SNAPSHOT_NUM_RETAINED_MIN = "snapshot.num-retained.min"
SNAPSHOT_NUM_RETAINED_MAX = "snapshot.num-retained.max"
SNAPSHOT_TIME_RETAINED = "snapshot.time-retained"
SNAPSHOT_EXPIRE_LIMIT = "snapshot.expire.limit"
SNAPSHOT_EXPIRE_EXECUTION_MODE = "snapshot.expire.execution-mode"
SNAPSHOT_CLEAN_EMPTY_DIRECTORIES = "snapshot.clean-empty-directories"
JAVA_INT_MAX = 2**31 - 1

# Options whose non-default value changes the data or its reading and is not implemented yet.
_UNSUPPORTED_UNLESS: dict[str, set[str]] = {
    "deletion-vectors.enabled": {"false"},
    "changelog-producer": {"none"},
    "row-tracking.enabled": {"false"},
    "data-evolution.enabled": {"false"},
    "bucket-function.type": {"default"},
    "file.suffix.include.compression": {"false"},
    "metadata.stats-dense-store": {"true"},
    "ignore-update-before": {"false"},
}
_UNSUPPORTED_KEYS = {
    "partial-update.remove-record-on-sequence-group",
    "data-file.external-paths",
    "data-file.path-directory",
    "record-level.expire-time",
    "scan.timestamp-millis",
    "scan.timestamp",
    "scan.tag-name",
    "scan.watermark",
    "scan.file-creation-time-millis",
    "scan.bounded.watermark",
    "incremental-between",
    "incremental-between-timestamp",
    "scan.manifest.parallelism",
    "index-file-in-data-file-dir",
    "global-index.external-path",
}
_UNSUPPORTED_PREFIXES = ("file-index.", "fields.", "blob", "vector.", "lookup.", "changelog.")
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
SEQUENCE_GROUP = "sequence-group"
MERGE_FIELD_OPTION_SUFFIXES = (AGG_FUNCTION, IGNORE_RETRACT, LIST_AGG_DELIMITER, DISTINCT)
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


_STATS_MODE_RE = re.compile(r"^(none|counts|full|truncate\((\d+)\))$")


@dataclass(frozen=True)
class CoreOptions:
    """Parsed view of a table's options, with Java's defaults."""

    options: Mapping[str, str]
    table: str = ""
    """The table's name, for the messages of errors that need it."""

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def _int(self, key: str, default: int) -> int:
        raw = self.options.get(key)
        if raw is None:
            return default
        try:
            return int(raw)
        except ValueError as e:
            raise OptionError(f"Option '{key}' must be an integer, got '{raw}'.") from e

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
        default = (128 if primary_key else 256) * 1024 * 1024
        raw = self.options.get(TARGET_FILE_SIZE)
        return default if raw is None else parse_memory_size(raw, TARGET_FILE_SIZE)

    @property
    def manifest_compression(self) -> str:
        return self.options.get(MANIFEST_COMPRESSION) or "zstd"

    @property
    def manifest_target_file_size(self) -> int:
        raw = self.options.get(MANIFEST_TARGET_FILE_SIZE)
        return 8 * 1024 * 1024 if raw is None else parse_memory_size(raw, MANIFEST_TARGET_FILE_SIZE)

    @property
    def manifest_merge_min_count(self) -> int:
        return self._int(MANIFEST_MERGE_MIN_COUNT, 30)

    @property
    def partition_default_name(self) -> str:
        return self.options.get(PARTITION_DEFAULT_NAME) or "__DEFAULT_PARTITION__"

    @property
    def partition_legacy_name(self) -> bool:
        return (self.options.get(PARTITION_LEGACY_NAME) or "true").lower() == "true"

    @property
    def stats_mode(self) -> str:
        return (self.options.get(STATS_MODE) or "truncate(16)").lower()

    @property
    def data_file_prefix(self) -> str:
        return self.options.get(DATA_FILE_PREFIX) or "data-"

    @property
    def scan_snapshot_id(self) -> int | None:
        raw = self.options.get(SCAN_SNAPSHOT_ID)
        return None if raw is None else self._int(SCAN_SNAPSHOT_ID, 0)

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
        return (self.options.get(DATA_FILE_THIN_MODE) or "false").strip().lower() == "true"

    @property
    def write_buffer_size(self) -> int:
        """Arrow bytes a PK bucket writer buffers before it flushes a sorted run (256 mb)."""
        raw = self.options.get(WRITE_BUFFER_SIZE)
        return 256 * 1024 * 1024 if raw is None else parse_memory_size(raw, WRITE_BUFFER_SIZE)

    @property
    def merge_engine(self) -> str:
        return (self.options.get(MERGE_ENGINE) or "deduplicate").strip().lower()

    @property
    def dynamic_partition_overwrite(self) -> bool:
        """An overwrite without a static spec replaces only the partitions it writes."""
        return (self.options.get(DYNAMIC_PARTITION_OVERWRITE) or "true").strip().lower() == "true"

    @property
    def overwrite_upgrade(self) -> bool:
        """Overwritten PK buckets whose new files do not overlap get them at the top level."""
        return (self.options.get(OVERWRITE_UPGRADE) or "true").strip().lower() == "true"

    @property
    def num_levels(self) -> int:
        """LSM levels; Java defaults it to ``num-sorted-run.compaction-trigger`` + 1."""
        raw = self.options.get(NUM_LEVELS)
        if raw is not None:
            return self._int(NUM_LEVELS, 0)
        return self._int(NUM_SORTED_RUN_COMPACTION_TRIGGER, 5) + 1

    @property
    def postpone_batch_write_fixed_bucket(self) -> bool:
        """Batch writes of a postpone-bucket table go straight into real buckets (Java: true)."""
        raw = self.options.get(POSTPONE_BATCH_WRITE_FIXED_BUCKET) or "true"
        return raw.strip().lower() == "true"

    @property
    def postpone_default_bucket_num(self) -> int:
        """Buckets of a postpone table's partition that has no real bucket yet (Java: 1)."""
        n = self._int(POSTPONE_DEFAULT_BUCKET_NUM, 1)
        if n < 1:
            raise OptionError(f"Option '{POSTPONE_DEFAULT_BUCKET_NUM}' must be >= 1, got {n}.")
        return n

    # --- snapshot expiration (Java's CoreOptions.expireConfig) ---

    @property
    def write_only(self) -> bool:
        """No compaction at commit and no expiry after it (fallback key write.compaction-skip)."""
        raw = self.options.get(WRITE_ONLY) or self.options.get("write.compaction-skip") or "false"
        return raw.strip().lower() == "true"

    @property
    def snapshot_num_retained_min(self) -> int:
        n = self._int(SNAPSHOT_NUM_RETAINED_MIN, 10)
        if n < 1:
            raise OptionError(f"Option '{SNAPSHOT_NUM_RETAINED_MIN}' must be >= 1, got {n}.")
        return n

    @property
    def snapshot_num_retained_max(self) -> int:
        return self._int(SNAPSHOT_NUM_RETAINED_MAX, JAVA_INT_MAX)

    @property
    def snapshot_time_retained_ms(self) -> int:
        return parse_duration_ms(self.options.get(SNAPSHOT_TIME_RETAINED) or "1 h")

    @property
    def snapshot_expire_limit(self) -> int:
        n = self._int(SNAPSHOT_EXPIRE_LIMIT, 50)
        if n < 1:
            raise OptionError(f"Option '{SNAPSHOT_EXPIRE_LIMIT}' must be >= 1, got {n}.")
        return n

    @property
    def snapshot_expire_execution_mode(self) -> str:
        mode = (self.options.get(SNAPSHOT_EXPIRE_EXECUTION_MODE) or "sync").strip().lower()
        if mode not in ("sync", "async"):
            raise OptionError(
                f"Option '{SNAPSHOT_EXPIRE_EXECUTION_MODE}' must be 'sync' or 'async', "
                f"got '{mode}'."
            )
        return mode

    @property
    def snapshot_clean_empty_directories(self) -> bool:
        raw = (
            self.options.get(SNAPSHOT_CLEAN_EMPTY_DIRECTORIES)
            or self.options.get("snapshot.expire.clean-empty-directories")
            or "false"
        )
        return raw.strip().lower() == "true"

    @property
    def commit_max_retries(self) -> int:
        return self._int(COMMIT_MAX_RETRIES, 10)

    @property
    def commit_min_retry_wait_ms(self) -> int:
        return parse_duration_ms(self.options.get(COMMIT_MIN_RETRY_WAIT) or "10 ms")

    @property
    def commit_max_retry_wait_ms(self) -> int:
        return parse_duration_ms(self.options.get(COMMIT_MAX_RETRY_WAIT) or "10 s")

    # --- compaction of primary-key and append buckets (Java's CoreOptions.compactionFileSize,
    # --- numSortedRunCompactionTrigger, ...); see mergetree/compact_settings.py

    def _true(self, key: str) -> bool:
        return (self.options.get(key) or "false").strip().lower() == "true"

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

    @property
    def num_sorted_run_compaction_trigger(self) -> int:
        return self._int(NUM_SORTED_RUN_COMPACTION_TRIGGER, 5)

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
        raw = self.options.get(COMPACTION_SMALL_FILE_RATIO)
        try:
            return 0.7 if raw is None else float(raw)
        except ValueError as e:
            raise OptionError(f"Option '{COMPACTION_SMALL_FILE_RATIO}' must be a number.") from e

    @property
    def source_split_open_file_cost(self) -> int:
        raw = self.options.get(SOURCE_SPLIT_OPEN_FILE_COST)
        default = 4 * 1024 * 1024
        return default if raw is None else parse_memory_size(raw, SOURCE_SPLIT_OPEN_FILE_COST)

    def need_lookup(self, primary_key: bool) -> bool:
        """Java's CoreOptions.needLookup as far as implemented: ``first-row`` or ``force-lookup``
        on a primary-key table (lookup changelogs and deletion vectors are refused)."""
        return primary_key and (self.merge_engine == "first-row" or self._true(FORCE_LOOKUP))

    # --- dynamic bucket and cross-partition upsert (bucket = -1 on primary-key tables) ---

    @property
    def dynamic_bucket_target_row_num(self) -> int:
        """Keys a dynamic bucket takes before the next one is opened (Java: 2,000,000)."""
        n = self._int("dynamic-bucket.target-row-num", 2_000_000)
        if n < 1:
            raise OptionError(f"Option 'dynamic-bucket.target-row-num' must be >= 1, got {n}.")
        return n

    @property
    def dynamic_bucket_max_buckets(self) -> int:
        """Buckets a partition may have, -1 for unlimited (Java's default)."""
        n = self._int("dynamic-bucket.max-buckets", -1)
        if n == 0 or n < -1:
            raise OptionError(
                f"Option 'dynamic-bucket.max-buckets' must be -1 (unlimited) or > 0, got {n}."
            )
        return n

    @property
    def dynamic_bucket_initial_buckets(self) -> int | None:
        """Assigners of a distributed (Spark) write; None: the job's parallelism."""
        raw = self.options.get("dynamic-bucket.initial-buckets")
        return None if raw is None else self._int("dynamic-bucket.initial-buckets", 1)

    @property
    def dynamic_bucket_assigner_parallelism(self) -> int | None:
        raw = self.options.get("dynamic-bucket.assigner-parallelism")
        return None if raw is None else self._int("dynamic-bucket.assigner-parallelism", 1)

    @property
    def cross_partition_upsert_index_ttl_ms(self) -> int | None:
        """Cross-partition upsert: buckets whose files are all older are not bootstrapped."""
        raw = self.options.get("cross-partition-upsert.index-ttl")
        return None if raw is None else parse_duration_ms(raw)

    # --- merge engines (Java's CoreOptions.ignoreDelete, fieldAggFunc, ...): merge/ checks
    # --- them against the schema and the engine

    @property
    def _where(self) -> str:
        return f"Table '{self.table}': " if self.table else ""

    def strict_bool(self, key: str, default: bool = False) -> bool:
        """A boolean option that must read ``true`` or ``false``."""
        raw = self.options.get(key)
        if raw is None:
            return default
        text = raw.strip().lower()
        if text not in ("true", "false"):
            raise OptionError(f"{self._where}option '{key}' must be true or false, got '{raw}'.")
        return text == "true"

    @property
    def ignore_delete(self) -> bool:
        """``ignore-delete``, or the first of its fallback keys that is set."""
        for key in IGNORE_DELETE_KEYS:
            if key in self.options:
                return self.strict_bool(key)
        return False

    @property
    def sequence_ascending(self) -> bool:
        order = (self.options.get(SEQUENCE_FIELD_SORT_ORDER) or "ascending").strip().lower()
        if order not in ("ascending", "descending"):
            raise OptionError(
                f"{self._where}'{SEQUENCE_FIELD_SORT_ORDER}' must be ascending or descending, "
                f"got '{order}'."
            )
        return order == "ascending"

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


def check_supported(options: Mapping[str, str], table: str) -> None:
    """Raise UnsupportedOptionError for any option whose meaning we do not implement."""
    for key, value in options.items():
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
    mode = (options.get(STATS_MODE) or "truncate(16)").strip().lower()
    if not _STATS_MODE_RE.match(mode):
        raise OptionError(f"Table '{table}': invalid '{STATS_MODE}' = '{mode}'.")
    fmt = (options.get(FILE_FORMAT) or "parquet").lower()
    if fmt not in ("parquet", "orc", "avro"):
        raise UnsupportedOptionError(
            f"Table '{table}': file.format '{fmt}' is not supported (parquet, orc, avro)."
        )


_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "bytes": 1,
    "k": 1024,
    "kb": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tb": 1024**4,
}
_DURATION_UNITS = {
    "": 1,
    "ms": 1,
    "milli": 1,
    "millis": 1,
    "s": 1000,
    "sec": 1000,
    "second": 1000,
    "seconds": 1000,
    "min": 60000,
    "m": 60000,
    "minute": 60000,
    "minutes": 60000,
    "h": 3600000,
    "hour": 3600000,
    "hours": 3600000,
    "d": 86400000,
    "day": 86400000,
    "days": 86400000,
}
_QUANTITY_RE = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")


def _is_off(key: str, value: str) -> bool:
    """Off-peak hours of -1 and a ratio of 0 are Java's defaults: nothing changes."""
    v = value.strip()
    return (key.endswith(".hour") and v == "-1") or (key.endswith("-ratio") and v == "0")


def parse_memory_size(text: str, key: str) -> int:
    m = _QUANTITY_RE.match(text)
    unit = m.group(2).lower() if m else None
    if not m or unit not in _SIZE_UNITS:
        raise OptionError(f"Option '{key}' must be a memory size like '128 mb', got '{text}'.")
    return int(m.group(1)) * _SIZE_UNITS[unit]


def parse_duration_ms(text: str) -> int:
    m = _QUANTITY_RE.match(text)
    unit = m.group(2).lower() if m else None
    if not m or unit not in _DURATION_UNITS:
        raise OptionError(f"Invalid duration '{text}'.")
    return int(m.group(1)) * _DURATION_UNITS[unit]
