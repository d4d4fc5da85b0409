"""Which files of one LSM bucket to compact: sorted runs, levels and the universal pick.

Mirrors org.apache.paimon.mergetree.{Levels, SortedRun, LevelSortedRun},
org.apache.paimon.compact.CompactUnit, org.apache.paimon.mergetree.compact.{UniversalCompaction,
ForceUpLevel0Compaction, CompactStrategy.pickFullCompaction, IntervalPartition}. Everything here
is a pure function over DataFileMeta lists, so the planner is tested without a table.

Keys are compared through a ``KeyOrder``: a function from a file's serialized min/max key
BinaryRow to a sortable Python value (see ``key_order``), which stands in for Java's key
comparator. Runs are listed newest first, as Java lists them: every level-0 file is its own run
(newest sequence numbers first), then one run per non-empty level 1..max.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec import float_keys
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.types.data_types import DataType

T = TypeVar("T")


class KeyOrder:
    """Serialized key rows as sortable tuples, ordered as Java orders a bucket's records: field
    by field, nulls first; FLOAT/DOUBLE fields by Java's normalized key (NaN last, -0.0 before
    +0.0, see ``spec/float_keys.py``).

    Python compares str by code point, which is the order of their UTF-8 bytes, and bytes
    unsigned, so decoded values sort as Java's BinaryRow comparator sorts them.
    """

    def __init__(self, key_types: Sequence[DataType]) -> None:
        self.types = [t.copy(nullable=True) for t in key_types]
        self.floats = {i: t.root == "FLOAT" for i, t in enumerate(key_types) if _is_float(t)}

    def __call__(self, row: bytes) -> tuple[tuple[bool, Any], ...]:
        values = deserialize_with_arity(row, self.types)
        return tuple(
            (False, 0)
            if v is None
            else (True, float_keys.normalized(v, self.floats[i]) if i in self.floats else v)
            for i, v in enumerate(values)
        )

    def same(self, a: tuple[tuple[bool, Any], ...], b: tuple[tuple[bool, Any], ...]) -> bool:
        """Java's key comparator returns 0 for the two keys (-0.0 is +0.0, a NaN is anything)."""
        return self.compare(a, b) == 0

    def compare(self, a: tuple[tuple[bool, Any], ...], b: tuple[tuple[bool, Any], ...]) -> int:
        """Java's generated key comparator (``a > b ? 1 : a < b ? -1 : 0`` on FLOAT/DOUBLE
        fields, nulls first) on two keys of :meth:`__call__`: not a total order."""
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x == y:
                continue
            if i in self.floats and x[0] and y[0] and float_keys.same(x[1], y[1], self.floats[i]):
                continue
            return -1 if x < y else 1
        return 0

    def sorted_run_check(
        self, items: Sequence[T], min_key: Callable[[T], bytes], max_key: Callable[[T], bytes]
    ) -> tuple[list[T], tuple[T, T] | None]:
        """``items`` sorted by min key with Java's comparator, and the first neighbours that
        overlap (``compare(max, next min) >= 0``) or None: the check of Java's
        ``ConflictDetection.checkKeyRange`` and ``FileStoreCommitImpl.tryUpgrade``.

        ``list.sort`` is the TimSort Java's ``List.sort`` runs, with the same binary insertion
        below 32 items, so even keys the comparator does not order (a NaN) end up in Java's
        order; from 32 items Java merges runs where Python sorts by insertion up to 64.
        """
        decoded: dict[bytes, tuple[tuple[bool, Any], ...]] = {}

        def key(row: bytes) -> tuple[tuple[bool, Any], ...]:
            value = decoded.get(row)
            if value is None:
                value = decoded[row] = self(row)
            return value

        def by_min(a: T, b: T) -> int:
            return self.compare(key(min_key(a)), key(min_key(b)))

        ranked = list(items)
        ranked.sort(key=functools.cmp_to_key(by_min))
        for a, b in itertools.pairwise(ranked):
            if self.compare(key(max_key(a)), key(min_key(b))) >= 0:
                return ranked, (a, b)
        return ranked, None


def key_order(key_types: Sequence[DataType]) -> KeyOrder:
    return KeyOrder(key_types)


def _is_float(t: DataType) -> bool:
    return t.root in ("FLOAT", "DOUBLE")


@dataclass(frozen=True)
class SortedRun:
    """Files whose key ranges do not overlap, in key order."""

    files: tuple[DataFileMeta, ...]

    @property
    def total_size(self) -> int:
        return sum(f.file_size for f in self.files)


@dataclass(frozen=True)
class LevelSortedRun:
    level: int
    run: SortedRun


@dataclass(frozen=True)
class CompactUnit:
    """Files to compact together and the level their output goes to."""

    output_level: int
    files: tuple[DataFileMeta, ...]
    file_rewrite: bool = False

    @staticmethod
    def from_level_runs(output_level: int, runs: Sequence[LevelSortedRun]) -> CompactUnit:
        return CompactUnit(output_level, tuple(f for r in runs for f in r.run.files))


def _level0_order(f: DataFileMeta) -> tuple[int, int, int, str]:
    """Newest first (highest max sequence), then Java's tie-breakers."""
    return (-f.max_sequence_number, f.min_sequence_number, f.creation_time or 0, f.file_name)


class Levels:
    """The files of one bucket by level (Java's Levels).

    ``num_levels`` grows to hold a file found at a higher level than configured, as Java does
    when the option was lowered after files were written.
    """

    def __init__(self, files: Sequence[DataFileMeta], num_levels: int, order: KeyOrder) -> None:
        highest = max((f.level for f in files), default=-1)
        self.num_levels = max(num_levels, highest + 1)
        if self.num_levels < 2:
            raise CorruptTableError("Number of levels must be at least 2.")
        self.order = order
        self.level0: list[DataFileMeta] = []
        self.runs: list[list[DataFileMeta]] = [[] for _ in range(self.num_levels - 1)]
        self.update((), files)

    @property
    def max_level(self) -> int:
        return self.num_levels - 1

    def level_sorted_runs(self) -> list[LevelSortedRun]:
        runs = [LevelSortedRun(0, SortedRun((f,))) for f in self.level0]
        for i, files in enumerate(self.runs):
            if files:
                runs.append(LevelSortedRun(i + 1, SortedRun(tuple(files))))
        return runs

    def number_of_sorted_runs(self) -> int:
        return len(self.level0) + sum(1 for r in self.runs if r)

    def non_empty_highest_level(self) -> int:
        """The highest level holding a file, 0 for only level-0 files, -1 when empty."""
        for i in range(len(self.runs) - 1, -1, -1):
            if self.runs[i]:
                return i + 1
        return 0 if self.level0 else -1

    def all_files(self) -> list[DataFileMeta]:
        return [f for r in self.level_sorted_runs() for f in r.run.files]

    def update(self, before: Sequence[DataFileMeta], after: Sequence[DataFileMeta]) -> None:
        """Remove ``before`` and add ``after``; a level >= 1 must stay one sorted run."""
        gone = {(f.level, f.file_name) for f in before}
        self.level0 = [f for f in self.level0 if (0, f.file_name) not in gone]
        self.level0 += [f for f in after if f.level == 0]
        self.level0.sort(key=_level0_order)
        for i in range(len(self.runs)):
            level = i + 1
            added = [f for f in after if f.level == level]
            if not added and not any(lv == level for lv, _ in gone):
                continue
            files = [f for f in self.runs[i] if (level, f.file_name) not in gone] + added
            files.sort(key=lambda f: self.order(f.min_key))
            for a, b in itertools.pairwise(files):
                if self.order(a.max_key) >= self.order(b.min_key):
                    raise CorruptTableError(
                        f"Files {a.file_name} and {b.file_name} of level {level} overlap in "
                        "their keys; a level above 0 must be one sorted run."
                    )
            self.runs[i] = files


class UniversalCompaction:
    """RocksDB-style universal compaction over sorted runs (Java's UniversalCompaction).

    Trades read amplification for low write amplification: runs are only merged when there
    are too many of them (``trigger``), when the newer runs outgrow the oldest one (size
    amplification), or when neighbouring runs have similar sizes (size ratio).
    """

    def __init__(self, max_size_amp: int, size_ratio: int, trigger: int) -> None:
        self.max_size_amp = max_size_amp
        self.size_ratio = size_ratio
        self.trigger = trigger

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        max_level = num_levels - 1
        unit = self.pick_for_size_amp(max_level, runs)
        if unit is not None:
            return unit
        unit = self.pick_for_size_ratio(max_level, runs)
        if unit is not None:
            return unit
        if len(runs) > self.trigger:
            # too many runs: take the newest ones, enough to get back to the trigger
            return self._pick_for_size_ratio(max_level, runs, len(runs) - self.trigger + 1)
        return None

    def force_pick_l0(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        """Every level-0 run, and following runs of similar size (Java's forcePickL0)."""
        count = next((i for i, r in enumerate(runs) if r.level > 0), len(runs))
        if count == 0:
            return None
        return self._pick_for_size_ratio(num_levels - 1, runs, count, force=True)

    def pick_for_size_amp(
        self, max_level: int, runs: Sequence[LevelSortedRun]
    ) -> CompactUnit | None:
        """Everything to the top level once the newer runs exceed max-size-amp % of the oldest."""
        if len(runs) < self.trigger:
            return None
        candidate = sum(r.run.total_size for r in runs[:-1])
        earliest = runs[-1].run.total_size
        if candidate * 100 > self.max_size_amp * earliest:
            return CompactUnit.from_level_runs(max_level, runs)
        return None

    def pick_for_size_ratio(
        self, max_level: int, runs: Sequence[LevelSortedRun]
    ) -> CompactUnit | None:
        if len(runs) < self.trigger:
            return None
        return self._pick_for_size_ratio(max_level, runs, 1)

    def _pick_for_size_ratio(
        self, max_level: int, runs: Sequence[LevelSortedRun], count: int, force: bool = False
    ) -> CompactUnit | None:
        """Grow the newest ``count`` runs while the next run is not much bigger than them.

        As Java 1.4.2 does: the first much bigger run ends the candidates, whatever its level
        (later Java releases let level-0 and level-1 runs join once triggered; following them
        would make our writers compact differently from 1.4.2's).
        """
        candidate = sum(r.run.total_size for r in runs[:count])
        for nxt in runs[count:]:
            if candidate * (100.0 + self.size_ratio) / 100.0 < nxt.run.total_size:
                break
            candidate += nxt.run.total_size
            count += 1
        return self.create_unit(runs, max_level, count) if force or count > 1 else None

    def create_unit(
        self, runs: Sequence[LevelSortedRun], max_level: int, count: int
    ) -> CompactUnit:
        """The output goes just below the first run left out, never to level 0."""
        output = max_level if count == len(runs) else max(0, runs[count].level - 1)
        if output == 0:
            # level 0 is only ever written by flushes: take runs until one above level 0
            for nxt in runs[count:]:
                count += 1
                if nxt.level != 0:
                    output = nxt.level
                    break
        if count == len(runs):
            output = max_level
        return CompactUnit.from_level_runs(output, runs[:count])


class ForceUpLevel0Compaction:
    """Universal compaction, and when it picks nothing, all level-0 files anyway."""

    def __init__(self, universal: UniversalCompaction) -> None:
        self.universal = universal

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        unit = self.universal.pick(num_levels, runs)
        return unit if unit is not None else self.universal.force_pick_l0(num_levels, runs)


CompactStrategy = UniversalCompaction | ForceUpLevel0Compaction


def pick_full_compaction(
    num_levels: int,
    runs: Sequence[LevelSortedRun],
    force_rewrite_all_files: bool = False,
    has_vector: Callable[[str], bool] | None = None,
    expired: Callable[[DataFileMeta], bool] | None = None,
) -> CompactUnit | None:
    """Every file to the top level. When the bucket is one top-level run already, only the
    files to rewrite one by one (``file_rewrite``): all with ``force_rewrite_all_files``, else
    those whose records ``record-level.expire-time`` may expire (``expired``) or with a
    deletion vector (``has_vector``, by file name), else nothing.

    Java's CompactStrategy.pickFullCompaction.
    """
    max_level = num_levels - 1
    if not runs:
        return None
    if len(runs) == 1 and runs[0].level == max_level:
        files = runs[0].run.files
        if not force_rewrite_all_files:
            files = tuple(
                f
                for f in files
                if (expired is not None and expired(f))
                or (has_vector is not None and has_vector(f.file_name))
            )
        return CompactUnit(max_level, files, file_rewrite=True) if files else None
    return CompactUnit.from_level_runs(max_level, runs)


def pick_minor(
    strategy: CompactStrategy, num_levels: int, runs: Sequence[LevelSortedRun]
) -> CompactUnit | None:
    """The strategy's pick, dropped when it would only move one file onto its own level."""
    unit = strategy.pick(num_levels, runs)
    if unit is None or not unit.files:
        return None
    if len(unit.files) == 1 and unit.files[0].level == unit.output_level:
        return None
    return unit


def drop_delete(unit: CompactUnit, levels: Levels, deletion_vectors: bool = False) -> bool:
    """Whether retractions may be dropped (MergeTreeCompactManager.triggerCompaction).

    Only when no older data can exist outside the unit: its output is above level 0 and at or
    above the highest non-empty level of the bucket. With deletion vectors, whenever the output
    is above level 0: a retraction has already marked the row it retracts (the lookup of its
    key in the levels above), and readers read those levels without merging.
    """
    if unit.output_level == 0:
        return False
    return deletion_vectors or unit.output_level >= levels.non_empty_highest_level()


def interval_partition(files: Sequence[DataFileMeta], order: KeyOrder) -> list[list[SortedRun]]:
    """Split files into sections with disjoint key ranges, each as few sorted runs as possible.

    Java's IntervalPartition: files sorted by (min key, max key) are cut into sections where a
    file starts after every key seen so far; within a section, each file joins the run whose
    last file ends first, if it starts after that end, else opens a new run.
    """
    ordered = sorted(files, key=lambda f: (order(f.min_key), order(f.max_key)))
    sections: list[list[SortedRun]] = []
    section: list[DataFileMeta] = []
    bound: Any = None
    for f in ordered:
        # Java cuts where its comparator puts the next file's first key after the bound;
        # a NaN equals every key, so a file starting at NaN joins the section before it
        if section and order(f.min_key) > bound and not order.same(order(f.min_key), bound):
            sections.append(_runs_of_section(section, order))
            section, bound = [], None
        section.append(f)
        if bound is None or order(f.max_key) > bound:
            bound = order(f.max_key)
    if section:
        sections.append(_runs_of_section(section, order))
    return sections


def _runs_of_section(files: list[DataFileMeta], order: KeyOrder) -> list[SortedRun]:
    tie = itertools.count()
    heap: list[tuple[Any, int, list[DataFileMeta]]] = [(order(files[0].max_key), 0, [files[0]])]
    next(tie)
    for f in files[1:]:
        end, n, run = heapq.heappop(heap)
        if order(f.min_key) > end:
            run.append(f)
            heapq.heappush(heap, (order(f.max_key), n, run))
        else:
            heapq.heappush(heap, (end, n, run))
            heapq.heappush(heap, (order(f.max_key), next(tie), [f]))
    return [SortedRun(tuple(run)) for _, _, run in heap]
