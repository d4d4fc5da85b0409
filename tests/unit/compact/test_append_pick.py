"""Append-table pickers and the procedure's argument parsing (pure functions).

Expected picks follow Java's BucketedAppendCompactManager (FullCompactTask, pickCompactBefore)
and AppendCompactCoordinator (pack), worked out by hand.
"""

from __future__ import annotations

import pytest

from paimon_pyspark.compact.append import pack_unaware, pick_bucketed_full, pick_bucketed_minor
from paimon_pyspark.errors import CompactArgumentError
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.procedures.arguments import (
    parse_buckets,
    parse_options,
    parse_partitions,
    parse_strategy,
)
from paimon_pyspark.spec.data_file_meta import EMPTY_ROW_BYTES, EMPTY_STATS, DataFileMeta

# target 100 bytes: files below 70 are small
S = CompactSettings(target_file_size=100, compaction_file_size=70, min_file_num=3, open_file_cost=0)


def f(name: str, size: int, seq: int) -> DataFileMeta:
    return DataFileMeta(
        file_name=name,
        file_size=size,
        row_count=1,
        min_key=EMPTY_ROW_BYTES,
        max_key=EMPTY_ROW_BYTES,
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=seq,
        max_sequence_number=seq,
        schema_id=0,
        level=0,
    )


def names(files: list[DataFileMeta]) -> list[str]:
    return [x.file_name for x in files]


def test_full_keeps_leading_big_files_and_rewrites_the_rest_in_sequence_order() -> None:
    files = [f("s2", 10, 4), f("big0", 90, 0), f("s1", 10, 2), f("big1", 90, 1), f("s3", 10, 5)]
    assert names(pick_bucketed_full(files, S)) == ["s1", "s2", "s3"]


def test_full_needs_more_small_than_big_files_and_three_files() -> None:
    assert pick_bucketed_full([f("a", 10, 0), f("b", 10, 1)], S) == []
    mixed = [f("s", 10, 0), f("b1", 90, 1), f("b2", 90, 2)]  # one small, two big after it
    assert pick_bucketed_full(mixed, S) == []
    forced = CompactSettings(
        target_file_size=100, compaction_file_size=70, force_rewrite_all_files=True
    )
    assert names(pick_bucketed_full(mixed, forced)) == ["s", "b1", "b2"]


def test_minor_takes_the_oldest_window_of_min_file_num_files() -> None:
    files = [f(f"x{i}", 10, i) for i in range(5)]
    assert names(pick_bucketed_minor(files, S)) == ["x0", "x1", "x2"]
    assert pick_bucketed_minor(files[:2], S) == []


def test_minor_window_slides_past_files_that_make_it_too_big() -> None:
    files = [f("huge", 250, 0), f("a", 10, 1), f("b", 10, 2), f("c", 10, 3)]
    assert names(pick_bucketed_minor(files, S)) == ["a", "b", "c"]


def test_unaware_pack_ignores_big_files_and_needs_enough_small_ones() -> None:
    files = [f("big", 80, 0), f("a", 10, 1), f("b", 20, 2), f("c", 5, 3)]
    assert names(pack_unaware(files, S)[0]) == ["c", "a", "b"]  # by size
    assert pack_unaware(files[:3], S) == []  # two small files < min_file_num 3


def test_unaware_pack_cuts_bins_at_twice_the_target() -> None:
    files = [f(f"m{i}", 60, i) for i in range(7)]
    groups = pack_unaware(files, S)
    # 60+60+60+60 = 240 >= 200 closes a bin of 4; the 3 left make a last bin of min_file_num
    assert [len(g) for g in groups] == [4, 3]


def test_strategy_defaults_to_full_and_rejects_others() -> None:
    assert parse_strategy(None) is True
    assert parse_strategy("MINOR") is False
    with pytest.raises(CompactArgumentError, match="only supports 'full' or 'minor'"):
        parse_strategy("major")


def test_partitions_take_java_spec_strings_and_dicts() -> None:
    assert parse_partitions("dt=1,hr=2;dt=2") == [{"dt": "1", "hr": "2"}, {"dt": "2"}]
    assert parse_partitions([{"dt": 1}]) == [{"dt": "1"}]
    assert parse_partitions(" ") is None
    with pytest.raises(CompactArgumentError):
        parse_partitions("dt")


def test_buckets_and_options_parse_like_java() -> None:
    assert parse_buckets("0-2,5", 8) == {0, 1, 2, 5}
    with pytest.raises(CompactArgumentError):
        parse_buckets("3-9", 8)
    assert parse_options("a=1, b = x") == {"a": "1", "b": "x"}
