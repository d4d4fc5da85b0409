"""The LSM planner: levels, universal pick, full pick, interval partition (pure functions).

Expected units are worked out by hand from the rules of Java's UniversalCompaction,
CompactStrategy.pickFullCompaction and IntervalPartition (docstrings in mergetree/universal.py).
"""

from __future__ import annotations

import pytest

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.mergetree.universal import (
    ForceUpLevel0Compaction,
    Levels,
    LevelSortedRun,
    SortedRun,
    UniversalCompaction,
    drop_delete,
    interval_partition,
    key_order,
    pick_full_compaction,
    pick_minor,
)
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import EMPTY_STATS, DataFileMeta
from paimon_pyspark.types.data_types import BIGINT as BIGINT_TYPE
from paimon_pyspark.types.data_types import STRING

BIGINT = BIGINT_TYPE().copy(nullable=False)
ORDER = key_order([BIGINT])
_seq = iter(range(10_000))


def meta(
    name: str, size: int = 100, level: int = 0, keys: tuple[int, int] = (0, 100), seq: int = -1
) -> DataFileMeta:
    s = next(_seq) if seq < 0 else seq
    return DataFileMeta(
        file_name=name,
        file_size=size,
        row_count=1,
        min_key=serialize_with_arity([keys[0]], [BIGINT]),
        max_key=serialize_with_arity([keys[1]], [BIGINT]),
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=s,
        max_sequence_number=s,
        schema_id=0,
        level=level,
    )


def runs(*spec: tuple[int, int]) -> list[LevelSortedRun]:
    """Runs newest first from (level, size) pairs, one file each."""
    return [
        LevelSortedRun(level, SortedRun((meta(f"f{i}", size, level),)))
        for i, (level, size) in enumerate(spec)
    ]


def names(unit_files: tuple[DataFileMeta, ...]) -> list[str]:
    return [f.file_name for f in unit_files]


U = UniversalCompaction(max_size_amp=200, size_ratio=1, trigger=5)


def test_fewer_runs_than_trigger_pick_nothing() -> None:
    assert U.pick(6, runs((0, 1), (0, 1), (0, 1), (5, 100))) is None


def test_size_amplification_compacts_everything_to_the_max_level() -> None:
    # newer runs hold 4 * 5 = 20 bytes against 1 in the oldest: 2000 % > 200 %
    unit = U.pick(6, runs((0, 5), (0, 5), (0, 5), (0, 5), (3, 1)))
    assert unit is not None
    assert unit.output_level == 5
    assert names(unit.files) == ["f0", "f1", "f2", "f3", "f4"]


def test_size_ratio_stops_before_a_much_bigger_high_run() -> None:
    unit = U.pick(6, runs((0, 1), (0, 1), (0, 1), (0, 1), (5, 100)))
    assert unit is not None
    assert names(unit.files) == ["f0", "f1", "f2", "f3"]
    assert unit.output_level == 4  # just below the run left out


def test_output_never_level_zero_takes_the_next_run() -> None:
    # two level-0 runs picked, the next is level 0 too: the output would land on level 0, so
    # runs are taken up to and including the first one above level 0, whose level is kept
    unit = U.create_unit(runs((0, 1), (0, 1), (0, 1), (3, 50), (5, 900)), max_level=5, count=2)
    assert names(unit.files) == ["f0", "f1", "f2", "f3"]
    assert unit.output_level == 3


def test_all_runs_picked_go_to_the_max_level() -> None:
    unit = U.create_unit(runs((0, 1), (2, 1)), max_level=5, count=2)
    assert unit.output_level == 5


def test_too_many_runs_force_picks_the_newest() -> None:
    # sizes grow fast, so neither size amplification nor size ratio picks; 6 runs > trigger 5
    # pick the newest 6 - 5 + 1 = 2, which may not swallow the big level-2 run after them
    spec = runs((0, 1), (0, 10), (2, 100), (3, 1000), (4, 10_000), (5, 100_000))
    unit = U.pick(6, spec)
    assert unit is not None
    assert names(unit.files) == ["f0", "f1"]
    assert unit.output_level == 1


def test_size_ratio_stops_at_the_first_much_bigger_run_whatever_its_level() -> None:
    # Java 1.4.2 (later releases let level-0/1 runs join once triggered; we match 1.4.2, see
    # tests/interop/test_write_compaction_java.py)
    unit = U.pick(6, runs((0, 1), (0, 1), (1, 50), (0, 1), (1, 60), (5, 10_000)))
    assert unit is not None
    # f0 + f1 trigger; f2 is much bigger and ends the candidates, but the output may not be
    # level 0, so it joins as the run the output goes to: level 1
    assert names(unit.files) == ["f0", "f1", "f2"]
    assert unit.output_level == 1


def test_force_up_level_0_takes_level_zero_files_when_universal_picks_nothing() -> None:
    spec = runs((0, 1), (0, 1), (5, 1000))
    assert U.pick(6, spec) is None
    unit = ForceUpLevel0Compaction(U).pick(6, spec)
    assert unit is not None
    assert names(unit.files) == ["f0", "f1"]
    assert unit.output_level == 4


def test_pick_minor_ignores_a_unit_that_only_keeps_one_file_in_place() -> None:
    one = UniversalCompaction(200, 1, trigger=1)
    assert pick_minor(one, 6, runs((5, 10))) is None


def test_full_pick_takes_every_run_to_the_max_level() -> None:
    unit = pick_full_compaction(6, runs((0, 1), (2, 5), (5, 100)))
    assert unit is not None
    assert unit.output_level == 5
    assert names(unit.files) == ["f0", "f1", "f2"]


def test_full_pick_of_one_max_level_run_is_nothing_unless_forced() -> None:
    assert pick_full_compaction(6, runs((5, 100))) is None
    assert pick_full_compaction(6, []) is None
    forced = pick_full_compaction(6, runs((5, 100)), force_rewrite_all_files=True)
    assert forced is not None and forced.file_rewrite


def test_levels_list_level_zero_newest_first_then_levels_by_key() -> None:
    old = meta("old", seq=1)
    new = meta("new", seq=9)
    b = meta("b", level=2, keys=(50, 60))
    a = meta("a", level=2, keys=(10, 20))
    top = meta("top", level=5, keys=(0, 100))
    levels = Levels([old, b, top, new, a], 6, ORDER)
    listed = [(r.level, names(r.run.files)) for r in levels.level_sorted_runs()]
    assert listed == [(0, ["new"]), (0, ["old"]), (2, ["a", "b"]), (5, ["top"])]
    assert levels.non_empty_highest_level() == 5
    assert levels.number_of_sorted_runs() == 4


def test_levels_grow_to_hold_a_file_above_num_levels() -> None:
    levels = Levels([meta("x", level=7)], 6, ORDER)
    assert levels.max_level == 7


def test_levels_refuse_overlapping_files_on_one_level() -> None:
    with pytest.raises(CorruptTableError, match="overlap"):
        Levels([meta("a", level=1, keys=(0, 10)), meta("b", level=1, keys=(5, 20))], 6, ORDER)


def test_levels_update_moves_upgraded_files() -> None:
    f = meta("f", seq=3)
    levels = Levels([f], 6, ORDER)
    levels.update([f], [f.with_level(5)])
    assert [(r.level, names(r.run.files)) for r in levels.level_sorted_runs()] == [(5, ["f"])]


def test_deletes_are_dropped_only_at_or_above_the_highest_level() -> None:
    levels = Levels([meta("a"), meta("b", level=3)], 6, ORDER)
    low = U.create_unit(levels.level_sorted_runs(), 5, 1)  # a alone -> level 2
    assert low.output_level == 2 and not drop_delete(low, levels)
    everything = pick_full_compaction(6, levels.level_sorted_runs())
    assert everything is not None and drop_delete(everything, levels)


def test_interval_partition_cuts_sections_and_packs_runs() -> None:
    files = [
        meta("a", keys=(1, 5)),
        meta("b", keys=(3, 8)),
        meta("c", keys=(10, 12)),
        meta("d", keys=(11, 15)),
        meta("e", keys=(20, 25)),
    ]
    sections = interval_partition(files, ORDER)
    shape = [sorted(names(r.files) for r in section) for section in sections]
    assert shape == [[["a"], ["b"]], [["c"], ["d"]], [["e"]]]


def test_interval_partition_appends_a_file_to_the_run_that_ends_first() -> None:
    files = [meta("wide", keys=(1, 10)), meta("x", keys=(1, 2)), meta("y", keys=(3, 4))]
    (section,) = interval_partition(files, ORDER)
    assert sorted(names(r.files) for r in section) == [["wide"], ["x", "y"]]


def test_key_order_compares_strings_by_utf8_bytes() -> None:
    text = STRING()
    order = key_order([text])
    keys = ["b", "a", "é", "z", "ab"]
    rows = sorted(keys, key=lambda k: order(serialize_with_arity([k], [text])))
    assert rows == sorted(keys, key=lambda k: k.encode())
