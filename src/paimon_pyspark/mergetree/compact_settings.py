"""The table options that steer compaction, as one plain record.

Mirrors the compaction getters of org.apache.paimon.CoreOptions (numLevels, compactionFileSize,
compactionMinFileNum, ...); the options are parsed by ``options.CoreOptions``, with Java's
defaults. Options that change *which* files a compaction picks and that we do not implement
(early full compaction, off-peak hours) raise UnsupportedOptionError when the settings are made.
"""

from __future__ import annotations

from dataclasses import dataclass

from paimon_pyspark.errors import OptionError
from paimon_pyspark.options import NUM_LEVELS
from paimon_pyspark.store.file_store import FileStore


@dataclass(frozen=True)
class CompactSettings:
    num_sorted_run_compaction_trigger: int = 5
    num_sorted_run_stop_trigger: int = 8
    """A writer whose bucket has more sorted runs than this compacts before going on (Java's
    MergeTreeCompactManager.shouldWaitForLatestCompaction)."""
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
    """Java's CoreOptions.needLookup (first-row, ``changelog-producer = lookup``, deletion
    vectors, force-lookup): level-0 files are compacted at every commit
    (ForceUpLevel0Compaction)."""

    @staticmethod
    def of(store: FileStore) -> CompactSettings:
        o = store.options
        o.check_compaction_supported()
        trigger = o.num_sorted_run_compaction_trigger
        num_levels = o.num_levels
        if num_levels < 2:
            raise OptionError(f"Table '{store.name}': '{NUM_LEVELS}' must be at least 2.")
        pk = bool(store.primary_keys)
        target = o.target_file_size(primary_key=pk)
        ratio = o.compaction_small_file_ratio
        return CompactSettings(
            num_sorted_run_compaction_trigger=trigger,
            num_sorted_run_stop_trigger=o.num_sorted_run_stop_trigger,
            num_levels=num_levels,
            max_size_amplification_percent=o.max_size_amplification_percent,
            size_ratio=o.compaction_size_ratio,
            force_up_level_0=o.compaction_force_up_level_0,
            force_rewrite_all_files=o.compaction_force_rewrite_all_files,
            target_file_size=target,
            compaction_file_size=int(target * ratio),
            min_file_num=o.compaction_min_file_num,
            open_file_cost=o.source_split_open_file_cost,
            need_lookup=o.need_lookup(pk),
        )
