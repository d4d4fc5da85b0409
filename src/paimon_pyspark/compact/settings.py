"""The table options that steer compaction, parsed once with Java's defaults.

Mirrors the compaction getters of org.apache.paimon.CoreOptions (numLevels, compactionFileSize,
compactionMinFileNum, ...). Options that change *which* files a compaction picks and that we do
not implement (early full compaction, off-peak hours) raise UnsupportedOptionError instead of
being ignored: a table configured for them would silently compact differently than under Java.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.options import parse_memory_size

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

NUM_SORTED_RUN_COMPACTION_TRIGGER = "num-sorted-run.compaction-trigger"
NUM_LEVELS = "num-levels"
MAX_SIZE_AMPLIFICATION_PERCENT = "compaction.max-size-amplification-percent"
SIZE_RATIO = "compaction.size-ratio"
FORCE_UP_LEVEL_0 = "compaction.force-up-level-0"
FORCE_REWRITE_ALL_FILES = "compaction.force-rewrite-all-files"
MIN_FILE_NUM = "compaction.min.file-num"
SMALL_FILE_RATIO = "compaction.small-file-ratio"
OPEN_FILE_COST = "source.split.open-file-cost"
FORCE_LOOKUP = "force-lookup"

_UNSUPPORTED = (
    "compaction.optimization-interval",
    "compaction.total-size-threshold",
    "compaction.incremental-size-threshold",
    "compaction.offpeak.start.hour",
    "compaction.offpeak.end.hour",
    "compaction.offpeak-ratio",
)


@dataclass(frozen=True)
class CompactSettings:
    num_sorted_run_compaction_trigger: int = 5
    num_levels: int = 6
    max_size_amplification_percent: int = 200
    size_ratio: int = 1
    force_up_level_0: bool = False
    force_rewrite_all_files: bool = False
    target_file_size: int = 256 * 1024 * 1024
    compaction_file_size: int = int(256 * 1024 * 1024 * 0.7)
    """Files at least this big are left alone or upgraded (Java's compactionFileSize)."""
    min_file_num: int = 5
    open_file_cost: int = 4 * 1024 * 1024
    need_lookup: bool = False
    """Java's CoreOptions.needLookup (first-row or force-lookup here; lookup changelogs and
    deletion vectors are refused by the options check): level-0 files are compacted at every
    commit (ForceUpLevel0Compaction)."""

    @staticmethod
    def from_table(table: FileStore) -> CompactSettings:
        o = table.options
        name = table.name
        for key in _UNSUPPORTED:
            if o.get(key) is not None and not _is_off(key, o.get(key) or ""):
                raise UnsupportedOptionError(
                    f"Table '{name}': option '{key}' is not supported by compaction in "
                    "paimon_pyspark yet."
                )
        trigger = _int(
            o.get(NUM_SORTED_RUN_COMPACTION_TRIGGER), 5, NUM_SORTED_RUN_COMPACTION_TRIGGER
        )
        num_levels = _int(o.get(NUM_LEVELS), trigger + 1, NUM_LEVELS)
        if num_levels < 2:
            raise OptionError(f"Table '{name}': '{NUM_LEVELS}' must be at least 2.")
        pk = bool(table.primary_keys)
        target = o.target_file_size(primary_key=pk)
        ratio_text = o.get(SMALL_FILE_RATIO)
        try:
            ratio = 0.7 if ratio_text is None else float(ratio_text)
        except ValueError as e:
            raise OptionError(f"Option '{SMALL_FILE_RATIO}' must be a number.") from e
        cost = o.get(OPEN_FILE_COST)
        first_row = (o.get("merge-engine") or "").strip().lower() == "first-row"
        return CompactSettings(
            num_sorted_run_compaction_trigger=trigger,
            num_levels=num_levels,
            max_size_amplification_percent=_int(
                o.get(MAX_SIZE_AMPLIFICATION_PERCENT), 200, MAX_SIZE_AMPLIFICATION_PERCENT
            ),
            size_ratio=_int(o.get(SIZE_RATIO), 1, SIZE_RATIO),
            force_up_level_0=_bool(o.get(FORCE_UP_LEVEL_0)),
            force_rewrite_all_files=_bool(o.get(FORCE_REWRITE_ALL_FILES)),
            target_file_size=target,
            compaction_file_size=int(target * ratio),
            min_file_num=_int(o.get(MIN_FILE_NUM), 5, MIN_FILE_NUM),
            open_file_cost=4 * 1024 * 1024
            if cost is None
            else parse_memory_size(cost, OPEN_FILE_COST),
            need_lookup=pk and (first_row or _bool(o.get(FORCE_LOOKUP))),
        )


def _is_off(key: str, value: str) -> bool:
    """Off-peak hours of -1 and a ratio of 0 are Java's defaults: nothing changes."""
    v = value.strip()
    return (key.endswith(".hour") and v == "-1") or (key.endswith("-ratio") and v == "0")


def _int(raw: str | None, default: int, key: str) -> int:
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError as e:
        raise OptionError(f"Option '{key}' must be an integer, got '{raw}'.") from e


def _bool(raw: str | None) -> bool:
    return (raw or "false").strip().lower() == "true"
