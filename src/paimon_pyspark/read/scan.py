"""Scan planning: from a snapshot to the splits that hold the rows asked for.

Mirrors org.apache.paimon.table.source.{DataTableBatchScan, DataSplit} and the file skipping of
org.apache.paimon.operation.{AppendOnlyFileStoreScan, KeyValueFileStoreScan}: manifests are
pruned by partition stats, entries by partition value, then

* append tables: files by their value stats, packed per bucket into splits of
  ``source.split.target-size`` (each file weighing at least ``source.split.open-file-cost``;
  Java's AppendOnlySplitGenerator);
* primary-key tables: files by the stats of their key fields only (a newer file of a key must
  never be skipped while an older one is read), buckets as a whole by value stats (a bucket is
  dropped when no file can match, files one by one only when they form one sorted run above
  level 0). A bucket is cut into splits as Java's MergeTreeSplitGenerator cuts it: files whose
  key ranges overlap (one section of IntervalPartition) stay in one split, since the merge
  needs all of them, and sections are packed in key order into splits of
  ``source.split.target-size``. With ``merge-engine = first-row`` or deletion vectors
  level-0 files are skipped and files are dropped one by one by their value stats (Java's
  batchScanSkipLevel0 with enableValueFilter): a key has one live row above level 0 there.

With ``deletion-vectors.enabled`` a batch plan attaches to each split where every file's
deletion vector is (``DataSplit.deletion_files``, Java's SnapshotReaderImpl.scanDvIndex and
withDataDeletionFiles), read from the snapshot's index manifest once per plan. A delta (an
incremental ``delta`` read, a stream's follow-up) attaches none, as Java's streaming splits
carry none.

An incremental read (``incremental-between[-timestamp]``, read/incremental.py) plans the files
that the commits in between added instead, filtered the same way.

A plan of the latest snapshot runs through store/latest_plan.py's ``plan_latest`` (planned again
on the newest snapshot when a concurrent expiry removes its manifests), a pinned one through
``plan_pinned`` (SnapshotExpiredError then).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from paimon_pyspark.errors import (
    CorruptTableError,
    FileMissingError,
    InvalidArgumentError,
    ManifestMissingError,
    UnsupportedOperationError,
    describe,
)
from paimon_pyspark.mergetree.universal import interval_partition, key_order
from paimon_pyspark.options import (
    INCREMENTAL_BETWEEN,
    INCREMENTAL_BETWEEN_TIMESTAMP,
    SCAN_TIMESTAMP,
    SCAN_TIMESTAMP_MILLIS,
)
from paimon_pyspark.read.file_index_filter import FileIndexFilter
from paimon_pyspark.read.incremental import (
    DeltaRange,
    DiffRange,
    IncrementalRange,
    delta_snapshots,
    earlier_or_equal,
    incremental_range,
)
from paimon_pyspark.read.predicate import FieldStats, Predicate
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.manifest import KIND_ADD, ManifestEntry, ManifestFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.store.deletion_vectors import (
    DeletionFile,
    deletion_files,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.store.external_paths import planned_file_path
from paimon_pyspark.store.latest_plan import pinned_snapshot, plan_latest, plan_pinned
from paimon_pyspark.store.manifest_io import merge_entries
from paimon_pyspark.store.path_checks import check_listed_file, check_split_paths
from paimon_pyspark.store.paths import bucket_dir
from paimon_pyspark.store.postpone import order_postpone_files
from paimon_pyspark.types.casts import is_implicit_widening
from paimon_pyspark.types.data_types import DataType

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

T = TypeVar("T")

_TAG = "'scan.tag-name'"


class PartitionRow(bytes):
    """A split's partition: the BinaryRow bytes (Java's ``DataSplit.partition()``), and the row
    pypaimon hands out (its GenericRow's ``values``, ``get_field``, ``to_dict``).

    Being bytes, it hashes, compares and serializes as the partition row always did; ``len``
    is the byte length, not the arity (``arity`` is that).
    """

    values: tuple[Any, ...]
    keys: tuple[str, ...]

    def __new__(cls, data: bytes, values: tuple[Any, ...], keys: tuple[str, ...]) -> PartitionRow:
        row = super().__new__(cls, data)
        row.values = tuple(values)
        row.keys = tuple(keys)
        return row

    def __reduce__(self) -> tuple[Any, ...]:
        return (PartitionRow, (bytes(self), self.values, self.keys))

    @property
    def arity(self) -> int:
        return len(self.values)

    def get_field(self, pos: int) -> Any:
        if not 0 <= pos < len(self.values):
            raise IndexError(f"Position {pos} is out of bounds for row arity {len(self.values)}.")
        return self.values[pos]

    def to_dict(self) -> dict[str, Any]:
        """Partition key -> value, as pypaimon's ``split.partition.to_dict()``."""
        if len(self.keys) != len(self.values):
            raise InvalidArgumentError(
                f"This partition row has {len(self.values)} values but {len(self.keys)} key "
                "names: a split decoded without its table's partition keys cannot name them."
            )
        return dict(zip(self.keys, self.values, strict=True))


@dataclass(frozen=True)
class DataSplit:
    """Files of one bucket of one partition, read together (Java's DataSplit).

    ``partition`` is a :class:`PartitionRow` (bytes) when ``partition_keys`` names the table's
    partition keys (a planned split does): pypaimon's ``split.partition.to_dict()``.
    """

    snapshot_id: int
    partition: bytes
    partition_values: tuple[Any, ...]
    bucket: int
    bucket_path: str
    files: tuple[DataFileMeta, ...]
    before_files: tuple[DataFileMeta, ...] | None = None
    """Only in a primary-key split of an incremental diff (Java's IncrementalSplit): the files
    of the bucket that the start snapshot had and the end has not; ``files`` are the reverse.
    None elsewhere, and where a split's encoding dropped them (TableRead plans them again)."""
    partition_keys: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    file_ranges: tuple[tuple[str, int, int], ...] = ()
    """Only in a split of ``TableScan.with_slice``: (file name, first row, end row) of the files
    read in part (pypaimon's SlicedSplit); the other files are read whole."""
    deletion_files: tuple[DeletionFile | None, ...] = ()
    """Where each file's deletion vector is, parallel to ``files`` (None: the file has none);
    empty when the plan attaches none (a table without deletion vectors, a delta)."""
    before_deletion_files: tuple[DeletionFile | None, ...] | None = None
    """The vectors of ``before_files`` in the start snapshot, parallel to them (Java's
    IncrementalSplit.beforeDeletionFiles); None wherever ``before_files`` is."""

    def __post_init__(self) -> None:
        if not isinstance(self.partition, PartitionRow):
            row = PartitionRow(self.partition, self.partition_values, self.partition_keys)
            object.__setattr__(self, "partition", row)
        if self.deletion_files and len(self.deletion_files) != len(self.files):
            raise InvalidArgumentError(
                f"A DataSplit of bucket {self.bucket} has {len(self.files)} files and "
                f"{len(self.deletion_files)} deletion files; they go in pairs (use "
                "DataSplit.with_files to take some of its files)."
            )
        before = self.before_deletion_files
        if before and len(before) != len(self.before_files or ()):
            raise InvalidArgumentError(
                f"A DataSplit of bucket {self.bucket} has {len(self.before_files or ())} "
                f"before files and {len(before)} deletion files for them."
            )

    def check_paths(self, store: FileStore) -> None:
        """Refuse this split, with InvalidSplitError, unless every path it names is one of
        ``store``'s (store/path_checks.py): a split may be built by hand or decoded from bytes
        in another process, and a read follows its paths."""
        deletions = (*self.deletion_files, *(self.before_deletion_files or ()))
        check_split_paths(
            store,
            self.bucket,
            self.bucket_path,
            (*self.files, *(self.before_files or ())),
            (d.path for d in deletions if isinstance(d, DeletionFile)),
        )

    @property
    def data_deletion_files(self) -> list[DeletionFile | None] | None:
        """``deletion_files`` as pypaimon's ``DataSplit.data_deletion_files`` (None: none)."""
        return list(self.deletion_files) if self.deletion_files else None

    def deletion_file_of(self, f: DataFileMeta) -> DeletionFile | None:
        """Where the deletion vector of file ``f`` (of this split) is, or None."""
        if not self.deletion_files:
            return None
        for g, found in zip(self.files, self.deletion_files, strict=True):
            if g.file_name == f.file_name:
                return found
        return None

    @property
    def live_row_count(self) -> int | None:
        """The rows of the split's files not deleted by a vector (of a sliced file, of its
        slice): ``row_count`` less each vector's cardinality. None when a vector's
        cardinality is unknown or a sliced file has one (only reading it tells). A merge of
        primary-key files may leave fewer."""
        total = 0
        pairs = zip(self.files, self.deletion_files or (None,) * len(self.files), strict=True)
        for f, deletion in pairs:
            rows = self.file_rows(f)
            total += f.row_count if rows is None else rows[1] - rows[0]
            if deletion is not None:
                if deletion.cardinality is None or rows is not None:
                    return None
                total -= deletion.cardinality
        return total

    @property
    def row_count(self) -> int:
        """The rows the split reads (of a sliced file, its slice)."""
        total = 0
        for f in self.files:
            rows = self.file_rows(f)
            total += f.row_count if rows is None else rows[1] - rows[0]
        return total

    def file_rows(self, f: DataFileMeta) -> tuple[int, int] | None:
        """(first row, end row) of file ``f`` when the split reads it in part, else None."""
        for name, start, end in self.file_ranges:
            if name == f.file_name:
                return start, end
        return None

    @property
    def file_size(self) -> int:
        """The bytes of the split's files (pypaimon's ``DataSplit.file_size``)."""
        return sum(f.file_size for f in self.files)

    @property
    def file_paths(self) -> list[str]:
        return [planned_file_path(self.bucket_path, f) for f in self.files]

    def filter_file(self, func: Callable[[DataFileMeta], bool]) -> DataSplit | None:
        """The split with only the files ``func`` keeps, or None for none (pypaimon's)."""
        kept = tuple(f for f in self.files if func(f))
        return self.with_files(kept) if kept else None

    def with_files(self, files: Sequence[DataFileMeta]) -> DataSplit:
        """The split reading only ``files`` (of its own), each with its row range if sliced
        and its deletion vector."""
        names = {f.file_name for f in files}
        ranges = tuple(r for r in self.file_ranges if r[0] in names)
        deletions: tuple[DeletionFile | None, ...] = ()
        if self.deletion_files:
            by_name = {f.file_name: d for f, d in zip(self.files, self.deletion_files, strict=True)}
            deletions = tuple(by_name[f.file_name] for f in files)
        return dataclasses.replace(
            self, files=tuple(files), file_ranges=ranges, deletion_files=deletions
        )


@dataclass(frozen=True)
class Plan:
    snapshot_id: int | None
    _splits: tuple[DataSplit, ...]

    def splits(self) -> list[DataSplit]:
        return list(self._splits)


_StatsLayout = tuple[list[str], list[DataType], dict[str, str]]
"""(stats field names, their nullable types, current name by stats name): see
``TableScan._stats_layout``."""


class TableScan:
    def __init__(self, store: FileStore, predicate: Predicate | None, limit: int | None) -> None:
        self.store = store
        self.predicate = predicate
        self.limit = limit
        keys = set(store.partition_keys)
        self.partition_predicate = predicate.extract(keys) if predicate and keys else None
        self.primary_key = bool(store.primary_keys)
        trimmed = set(store.table_schema.trimmed_primary_keys())
        self.key_predicate = predicate.extract(trimmed) if predicate and self.primary_key else None
        self.merge_engine = store.options.merge_engine
        self.deletion_vectors = store.options.deletion_vectors_enabled
        self.skip_level_0 = self.primary_key and store.options.batch_scan_skip_level0
        """Java's batchScanSkipLevel0 (deletion vectors, first-row); with it, files are
        dropped one by one by their value stats (DataTableBatchScan's enableValueFilter)."""
        self.scan_all_files = False
        self.only_level: int | None = None
        self._stats_layouts: dict[tuple[int, tuple[str, ...] | None], _StatsLayout] = {}
        self.shard: tuple[int, int] | None = None
        self.slice: tuple[int, int] | None = None
        self.file_index = FileIndexFilter(store, predicate)
        """Skips files by their ``file-index.*`` indexes, where Java's scan and read would."""

    def with_scan_all_files(self) -> TableScan:
        """Also plan the postpone-bucket files (bucket -2) that batch scans skip, one split
        per partition; reading such a split replays its records in write order."""
        self.scan_all_files = True
        return self

    def with_all_levels(self) -> TableScan:
        """Also plan the level-0 files that a batch scan of a table with deletion vectors or
        first-row skips, with value stats judged per bucket as for any primary-key table: a
        stream's plans (Java's DataTableStreamScan sets no level filter) and the key bootstrap
        of cross-partition upserts (IndexBootstrap's ``withLevelFilter(level -> true)``). The
        splits that then hold level-0 files are merged, their files' vectors applied."""
        self.skip_level_0 = False
        return self

    def with_level(self, level: int) -> TableScan:
        """Plan only the files at ``level``, each dropped by its value stats too (Java's
        ``withLevel`` with ``enableValueFilter``): the read-optimized ``$ro`` view of a
        primary-key table reads its top level alone, which needs no merge."""
        self.only_level = level
        self.skip_level_0 = True
        return self

    def with_shard(self, idx_of_this_subtask: int, number_of_para_subtasks: int) -> TableScan:
        """Plan only shard ``idx_of_this_subtask`` of ``number_of_para_subtasks`` (pypaimon's).

        The shards of one snapshot are disjoint and together the whole plan. A primary-key
        table is sharded by bucket (``bucket % n == idx``), as pypaimon does, so a key's files
        are merged in one shard. An append table's rows are cut into n even row ranges in plan
        order, as in pypaimon, but by whole files: a shard takes the files that start inside
        its range, where pypaimon also cuts a file at the boundary.
        """
        n, idx = number_of_para_subtasks, idx_of_this_subtask
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (idx, n)) or not (
            0 <= idx < n
        ):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': TableScan.with_shard(idx_of_this_subtask, "
                "number_of_para_subtasks) takes ints with 0 <= idx_of_this_subtask < "
                f"number_of_para_subtasks, got {describe(idx)} and {describe(n)}."
            )
        if self.slice is not None:
            raise InvalidArgumentError(
                f"Table '{self.store.name}': with_shard and with_slice cannot be used together."
            )
        self.shard = (idx, n)
        return self

    def with_slice(self, start_pos: int, end_pos: int) -> TableScan:
        """Plan only the rows at positions ``[start_pos, end_pos)`` of the plan (pypaimon's).

        Append tables only (a primary-key table's rows have no position before the merge;
        use ``with_shard``). Positions count the planned files' rows in plan order, before
        the filter's row-level part, so consecutive slices read every planned row once; a
        file at a boundary is read in part (``DataSplit.file_ranges``). An end past the last
        row is clamped.
        """
        call = "TableScan.with_slice(start_pos, end_pos)"
        if (
            any(isinstance(v, bool) or not isinstance(v, int) for v in (start_pos, end_pos))
            or start_pos < 0
            or start_pos >= end_pos
        ):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': {call} takes ints with 0 <= start_pos < end_pos, "
                f"got {describe(start_pos)} and {describe(end_pos)}."
            )
        if self.primary_key:
            raise UnsupportedOperationError(
                f"Table '{self.store.name}': {call} is for append tables; a primary-key "
                "table's rows are merged per bucket, so use with_shard instead."
            )
        if self.shard is not None:
            raise InvalidArgumentError(
                f"Table '{self.store.name}': with_shard and with_slice cannot be used together."
            )
        self.slice = (start_pos, end_pos)
        return self

    def plan(self) -> Plan:
        plan = self._plan()
        if self.slice is not None:
            return Plan(plan.snapshot_id, tuple(slice_splits(plan.splits(), *self.slice)))
        if self.shard is None:
            return plan
        splits = shard_splits(plan.splits(), *self.shard, by_bucket=self.primary_key)
        return Plan(plan.snapshot_id, tuple(splits))

    def _plan(self) -> Plan:
        """The plan of the latest snapshot, planned again on the newest one if it expires
        meanwhile; of a pinned snapshot, whose expiry meanwhile is a SnapshotExpiredError
        (store/latest_plan.py). A tag keeps its snapshot's files: a missing one is corruption."""
        between = incremental_range(self.store)
        if between is not None:
            return self._incremental_plan(between)
        pin = self._pin()
        if pin is None:
            return plan_latest(self.store, self._plan_of)
        snapshot, asked_by = pin
        if asked_by == _TAG:
            return self._plan_of(snapshot)
        return plan_pinned(self.store, snapshot, self._plan_of, asked_by)

    def _plan_of(self, snapshot: Snapshot | None) -> Plan:
        if snapshot is None:
            return Plan(None, ())
        entries = self._entries(snapshot)
        if self.primary_key:
            splits = self._pk_splits(snapshot.id, entries)
        else:
            splits = self._pack(snapshot.id, entries)
        return Plan(snapshot.id, tuple(self._with_deletion_files(snapshot, splits)))

    def _with_deletion_files(self, snapshot: Snapshot, splits: list[DataSplit]) -> list[DataSplit]:
        """``splits`` with their files' deletion vectors in ``snapshot`` (every split of a
        table with deletion vectors carries them, None for a file without one)."""
        if not self.deletion_vectors or not splits:
            return splits
        found = self._deletion_files(snapshot)
        return [
            dataclasses.replace(s, deletion_files=_deletions_of(found, s, s.files)) for s in splits
        ]

    def _deletion_files(
        self, snapshot: Snapshot
    ) -> dict[tuple[bytes, int], dict[str, DeletionFile]]:
        """Per (partition, bucket), where each data file's vector is in ``snapshot``. Its index
        manifest found missing is a ManifestMissingError, so a plan of the latest snapshot
        tells a concurrent expiry from a lost file as for the data manifests."""
        try:
            entries = dv_index_entries(index_handler_of(self.store), snapshot)
        except FileMissingError as e:
            name = snapshot.index_manifest or ""
            raise ManifestMissingError(
                f"Table '{self.store.name}': index manifest '{name}' of snapshot {snapshot.id} "
                f"is missing ({e})",
                name,
            ) from e
        return deletion_files(dv_index_of(self.store), entries)

    def snapshot(self) -> Snapshot | None:
        """The snapshot a plan reads: the latest, or the one the time-travel option names."""
        return self._snapshot()

    def _snapshot(self) -> Snapshot | None:
        pin = self._pin()
        return self.store.snapshot_manager.latest() if pin is None else pin[0]

    def _pin(self) -> tuple[Snapshot, str] | None:
        """The snapshot a time-travel option names, with the option; None for the latest."""
        options = self.store.options
        options.check_time_travel()
        tag = options.scan_tag_name
        if tag is not None:
            tagged = self.store.tag_manager.get(tag)
            if tagged is None:
                raise CorruptTableError(
                    f"Table '{self.store.name}': tag '{tag}' asked for by 'scan.tag-name' does "
                    "not exist."
                )
            return tagged, _TAG  # a tag keeps its snapshot's files even after expiry
        at = options.scan_timestamp_millis
        if at is not None:
            key = (
                SCAN_TIMESTAMP_MILLIS
                if options.get(SCAN_TIMESTAMP_MILLIS) is not None
                else SCAN_TIMESTAMP
            )
            return self._at_or_before(at), f"'{key}' [{at}]"
        wanted = options.scan_snapshot_id
        if wanted is None:
            return None
        return pinned_snapshot(self.store, wanted, "'scan.snapshot-id'"), "'scan.snapshot-id'"

    def _at_or_before(self, millis: int) -> Snapshot:
        """The latest snapshot committed at or before ``millis`` (Java's
        earlierOrEqualTimeMills); none is an error, as in Java."""
        sm = self.store.snapshot_manager
        found = earlier_or_equal(sm, millis)
        if found is None:
            earliest = sm.earliest_id()
            first = None if earliest is None else sm.snapshot_if_exists(earliest)
            raise InvalidArgumentError(
                f"Table '{self.store.name}': there is no snapshot earlier than or equal to "
                f"timestamp [{millis}]; the earliest snapshot's timestamp is "
                f"[{None if first is None else first.time_millis}]."
            )
        return found

    def _entries(self, snapshot: Snapshot) -> list[ManifestEntry]:
        mio = self.store.manifest_io
        metas = [m for m in mio.data_manifests(snapshot) if self._keep_manifest(m)]
        return self._kept(snapshot.id, merge_entries(mio.read_entries(metas)))

    def _kept(
        self, snapshot_id: int, merged: list[ManifestEntry], changelog: bool = False
    ) -> list[ManifestEntry]:
        """The ADD entries of ``merged`` that the partition and file filters keep (changelog
        files, all at level 0, whatever the level filter)."""
        partition_ok: dict[bytes, bool] = {}
        out = []
        skip_level0 = self.skip_level_0 and not changelog
        for e in merged:
            if e.kind != 0:
                continue
            check_listed_file(self.store, e.file, f"snapshot {snapshot_id}")
            if e.bucket == POSTPONE_BUCKET:  # invisible until compacted (onlyReadRealBuckets)
                if self.scan_all_files and self._keep_partition(e.partition):
                    out.append(e)
                continue
            if skip_level0 and e.file.level == 0:
                continue
            if self.only_level is not None and e.file.level != self.only_level:
                continue
            ok = partition_ok.get(e.partition)
            if ok is None:
                ok = self._keep_partition(e.partition)
                partition_ok[e.partition] = ok
            if ok and self._keep_file(e.file):
                out.append(e)
        if not self.primary_key or self.skip_level_0:  # files judged one by one
            out = self.file_index.drop_by_separate_files(out, _file_of, self._entry_dir)
        return out

    def _entry_dir(self, e: ManifestEntry) -> str:
        """The directory of an entry's data file (where its extra files lie)."""
        if e.file.external_path:
            return planned_file_path("", e.file).rsplit("/", 1)[0]
        values = tuple(deserialize_with_arity(e.partition, self.store.partition_types))
        return self._bucket_path(values, e.bucket)

    def _incremental_plan(self, between: IncrementalRange) -> Plan:
        """Splits of an incremental read: the APPEND deltas in between (a primary-key bucket is
        one split, read unmerged), or the end's files the start had not (a primary-key split
        also carries the start's files the end has not, ``before_files``, to compare with)."""
        asked_by = self._incremental_option()
        if isinstance(between, DeltaRange):
            added = self._changelog if between.changelog else self._delta
            entries = [
                e
                for s in delta_snapshots(self.store, between)
                for e in plan_pinned(self.store, s, added, asked_by)
            ]
            if self.primary_key:
                splits = self._bucket_splits(between.end, entries, None, between.changelog)
                return Plan(between.end, tuple(splits))
            return Plan(between.end, tuple(self._pack(between.end, entries)))
        if isinstance(between, DiffRange):
            return self._diff_plan(between, asked_by)
        return Plan(None, ())

    def _diff_plan(self, between: DiffRange, asked_by: str) -> Plan:
        """The end's files the start lacks, with their vectors in the end snapshot; a
        primary-key split also carries the start's files the end lacks, with their vectors in
        the start snapshot (Java's IncrementalSplit before/after deletion files). A file both
        have is left out even if its vector changed, as in Java."""
        end_id = between.end.id
        before = plan_pinned(self.store, between.start, self._entries, asked_by)
        after = plan_pinned(self.store, between.end, self._entries, asked_by)
        common = {_entry_id(e) for e in before} & {_entry_id(e) for e in after}
        added = [e for e in after if _entry_id(e) not in common]
        if not self.primary_key:
            splits = self._with_deletion_files(between.end, self._pack(end_id, added))
            return Plan(end_id, tuple(splits))
        removed: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for e in before:
            if _entry_id(e) not in common:
                removed.setdefault((e.partition, e.bucket), []).append(e.file)
        splits = self._bucket_splits(end_id, added, removed)
        splits = self._with_deletion_files(between.end, splits)
        if self.deletion_vectors and splits:
            found = self._deletion_files(between.start)
            splits = [
                dataclasses.replace(
                    s, before_deletion_files=_deletions_of(found, s, s.before_files or ())
                )
                for s in splits
            ]
        return Plan(end_id, tuple(splits))

    def _incremental_option(self) -> str:
        """The option (and value) of an incremental read, for its errors."""
        for key in (INCREMENTAL_BETWEEN, INCREMENTAL_BETWEEN_TIMESTAMP):
            value = self.store.options.get(key)
            if value is not None:
                return f"'{key}' = '{value}'"
        return "an incremental read"

    def plan_changes(self, snapshot: Snapshot, changelog: bool) -> Plan:
        """The files one snapshot added (its delta), or with ``changelog`` its changelog files:
        a stream's follow-up plan (Java's DeltaFollowUpScanner, ChangelogFollowUpScanner), one
        split per primary-key bucket."""
        asked_by = f"the stream read of snapshot {snapshot.id}"
        added = self._changelog if changelog else self._delta
        entries = plan_pinned(self.store, snapshot, added, asked_by)
        if self.primary_key:
            splits = self._bucket_splits(snapshot.id, entries, None, keep_order=True)
            return Plan(snapshot.id, tuple(splits))
        return Plan(snapshot.id, tuple(self._pack(snapshot.id, entries)))

    def _changelog(self, snapshot: Snapshot) -> list[ManifestEntry]:
        """The changelog files of a snapshot (none without ``changelogManifestList``)."""
        if not snapshot.changelog_manifest_list:
            return []
        return self._delta(snapshot, snapshot.changelog_manifest_list)

    def _delta(self, snapshot: Snapshot, changelog_list: str | None = None) -> list[ManifestEntry]:
        """The files an APPEND snapshot added (or those of ``changelog_list``, its changelog),
        filtered as a scan filters them; a delta that deletes a file is refused, as Java
        refuses it."""
        mio = self.store.manifest_io
        metas = mio.read_manifest_list(changelog_list or snapshot.delta_manifest_list)
        entries = mio.read_entries([m for m in metas if self._keep_manifest(m)])
        deleted = [e.file.file_name for e in entries if e.kind != KIND_ADD]
        if deleted:
            raise CorruptTableError(
                f"Table '{self.store.name}': APPEND snapshot {snapshot.id} deletes files "
                f"{deleted[:3]}; an incremental read expects its delta to only add files."
            )
        return self._kept(snapshot.id, entries, changelog=changelog_list is not None)

    def _bucket_splits(
        self,
        snapshot_id: int,
        entries: list[ManifestEntry],
        before: dict[tuple[bytes, int], list[DataFileMeta]] | None,
        keep_order: bool = False,
    ) -> list[DataSplit]:
        """One split per primary-key bucket of an incremental read; a delta's files are dropped
        one by one by value stats (they are read unmerged). ``keep_order``: the files stay in
        manifest order, snapshot after snapshot, as Java's splitForStreaming leaves them (a
        changelog's records come out in the order they happened)."""
        groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for e in entries:
            if before is not None or self._keep_by_value(e.file):
                groups.setdefault((e.partition, e.bucket), []).append(e.file)
        splits = []
        keys = tuple(self.store.partition_keys)
        for (partition, bucket), files in groups.items():
            if not keep_order:
                files.sort(key=lambda f: (f.level, f.min_sequence_number))
            start = None if before is None else tuple(before.get((partition, bucket), ()))
            values = tuple(deserialize_with_arity(partition, self.store.partition_types))
            path = self._bucket_path(values, bucket)
            splits.append(
                DataSplit(snapshot_id, partition, values, bucket, path, tuple(files), start, keys)
            )
        return splits

    def _keep_manifest(self, meta: ManifestFileMeta) -> bool:
        if self.partition_predicate is None:
            return True
        stats = self._decode_stats(
            meta.partition_stats.min_values,
            meta.partition_stats.max_values,
            meta.partition_stats.null_counts,
            self.store.partition_keys,
            self.store.partition_types,
        )
        return self.partition_predicate.test_stats(
            stats, meta.num_added_files + meta.num_deleted_files
        )

    def _keep_partition(self, partition: bytes) -> bool:
        if self.partition_predicate is None:
            return True
        values = deserialize_with_arity(partition, self.store.partition_types)
        return self.partition_predicate.test_values(
            dict(zip(self.store.partition_keys, values, strict=False))
        )

    def _keep_file(self, f: DataFileMeta) -> bool:
        if self.primary_key:
            return self._keep_by_key(f) and (not self.skip_level_0 or self._keep_by_value(f))
        return self._keep_by_value(f)

    def _keep_by_value(self, f: DataFileMeta) -> bool:
        if self.predicate is None:
            return True
        schema = self.store.schema_manager.schema(f.schema_id)
        stats = self._file_stats(f, schema)
        return self.predicate.test_stats(stats, f.row_count) and self.file_index.keep_embedded(f)

    def _keep_by_key(self, f: DataFileMeta) -> bool:
        """Key stats cover the trimmed primary key of the schema the file was written with."""
        if self.key_predicate is None:
            return True
        schema = self.store.schema_manager.schema(f.schema_id)
        key_fields = [schema.field(k) for k in schema.trimmed_primary_keys()]
        decoded = self._decode_stats(
            f.key_stats.min_values,
            f.key_stats.max_values,
            f.key_stats.null_counts,
            [fd.name for fd in key_fields],
            [fd.type for fd in key_fields],
        )
        current_by_id = {fd.id: fd.name for fd in self.store.fields}
        stats = {
            current_by_id[fd.id]: decoded[fd.name]
            for fd in key_fields
            if fd.id in current_by_id and fd.name in decoded
        }
        return self.key_predicate.test_stats(stats, f.row_count)

    def _keep_bucket_files(self, files: list[DataFileMeta]) -> list[DataFileMeta]:
        """Value-stats filtering of one bucket of a primary-key table (whole-bucket filter).

        Files forming one sorted run above level 0 hold distinct keys: each is kept or dropped
        on its own. Otherwise a merged row comes from one of the records of its key, so for
        deduplicate and first-row the bucket can go only when no file can match; partial-update
        and aggregation build rows from several records and keep every file, unless deletion
        vectors keep each key's merged row whole in one file (Java's filterWholeBucketAllFiles).
        A scan that skips level 0 has judged its files one by one already.
        """
        if self.predicate is None or not files or self.skip_level_0:
            return files
        levels = {f.level for f in files}
        if len(files) == 1 or (len(levels) == 1 and 0 not in levels):
            return [f for f in files if self._keep_by_value(f)]
        if self.merge_engine not in ("deduplicate", "first-row") and not self.deletion_vectors:
            return files
        return files if any(self._keep_by_value(f) for f in files) else []

    def _file_stats(self, f: DataFileMeta, schema: TableSchema) -> dict[str, FieldStats]:
        """Value stats of ``f`` keyed by the *current* name of each field (matched by id)."""
        cols = None if f.value_stats_cols is None else tuple(f.value_stats_cols)
        layout = self._stats_layouts.get((schema.id, cols))
        if layout is None:
            layout = self._stats_layout(schema, cols)
            self._stats_layouts[(schema.id, cols)] = layout
        names, types, current_names = layout
        if not names:
            return {}
        decoded = self._decode_nullable(
            f.value_stats.min_values,
            f.value_stats.max_values,
            f.value_stats.null_counts,
            names,
            types,
        )
        return {current_names[n]: st for n, st in decoded.items() if n in current_names}

    def _stats_layout(self, schema: TableSchema, cols: tuple[str, ...] | None) -> _StatsLayout:
        """What decoding the value stats of a file of ``schema`` with ``value_stats_cols``
        ``cols`` takes, worked out once per scan (per file it was most of a plan's time): the
        stats' field names and nullable types, and the current name of each field whose stats
        still bound its values."""
        by_name = {fd.name: fd for fd in schema.fields}
        stats_fields = list(schema.fields) if cols is None else [by_name[c] for c in cols]
        current_by_id = {fd.id: fd for fd in self.store.fields}
        current_names = {}
        for fd in stats_fields:
            current = current_by_id.get(fd.id)
            # a column retyped since the file was written: its old bounds bound the new values
            # only through a widening that keeps every value (else the column is unknown)
            if current is not None and is_implicit_widening(fd.type, current.type):
                current_names[fd.name] = current.name
        names = [fd.name for fd in stats_fields]
        types = [fd.type.copy(nullable=True) for fd in stats_fields]
        return names, types, current_names

    @staticmethod
    def _decode_stats(
        min_bytes: bytes,
        max_bytes: bytes,
        null_counts: Sequence[int | None] | None,
        names: Sequence[str],
        types: Sequence[DataType],
    ) -> dict[str, FieldStats]:
        nullable = [t.copy(nullable=True) for t in types]
        return TableScan._decode_nullable(min_bytes, max_bytes, null_counts, names, nullable)

    @staticmethod
    def _decode_nullable(
        min_bytes: bytes,
        max_bytes: bytes,
        null_counts: Sequence[int | None] | None,
        names: Sequence[str],
        nullable: Sequence[DataType],
    ) -> dict[str, FieldStats]:
        try:
            mins = deserialize_with_arity(min_bytes, nullable)
            maxs = deserialize_with_arity(max_bytes, nullable)
        except Exception:
            return {}
        counts = list(null_counts) if null_counts else [None] * len(names)
        if len(mins) != len(names) or len(counts) != len(names):
            return {}
        return {
            n: FieldStats(lo, hi, c)
            for n, lo, hi, c in zip(names, mins, maxs, counts, strict=False)
        }

    def _bucket_path(self, partition_values: tuple[Any, ...], bucket: int) -> str:
        rel = self.store.partition_rel_path(list(partition_values))
        base = f"{self.store.path}/{rel}" if rel else self.store.path
        return f"{base}/{bucket_dir(bucket)}"

    def _pk_splits(self, snapshot_id: int, entries: list[ManifestEntry]) -> list[DataSplit]:
        """One split per (partition, bucket): merge-on-read needs every file of a bucket."""
        groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e.file)
        types = self.store.partition_types
        keys = tuple(self.store.partition_keys)
        splits = []
        for (partition, bucket), group in groups.items():
            files = group if bucket == POSTPONE_BUCKET else self._keep_bucket_files(group)
            if not files:
                continue
            values = tuple(deserialize_with_arity(partition, types))
            path = self._bucket_path(values, bucket)
            if bucket == POSTPONE_BUCKET:
                groups_of_bucket = [order_postpone_files(files)]
            else:
                groups_of_bucket = self._split_bucket(files)
            for part in groups_of_bucket:
                splits.append(
                    DataSplit(snapshot_id, partition, values, bucket, path, tuple(part), None, keys)
                )
        return splits

    def _split_bucket(self, files: list[DataFileMeta]) -> list[list[DataFileMeta]]:
        """The files of one primary-key bucket cut into splits (MergeTreeSplitGenerator's
        splitForBatch). Files that already hold one record per key, with no retraction, are
        packed one by one: every file above level 0 when they share one level, or for
        first-row or with deletion vectors (whose levels never hold a live key twice).
        Otherwise the sections of files with overlapping key ranges are packed whole, in key
        order."""
        o = self.store.options
        target, cost = o.source_split_target_size, o.source_split_open_file_cost
        files.sort(key=lambda f: (f.level, f.min_sequence_number))
        raw = all(f.level != 0 and not f.delete_row_count for f in files)
        one_level = len({f.level for f in files}) == 1
        if raw and (self.merge_engine == "first-row" or self.deletion_vectors or one_level):
            return pack_ordered(files, lambda f: max(f.file_size, cost), target)
        key_fields = self.store.table_schema.trimmed_primary_keys()
        order = key_order([self.store.table_schema.field(k).type for k in key_fields])
        sections = [
            sorted((f for run in section for f in run.files), key=_level_then_sequence)
            for section in interval_partition(files, order)
        ]
        packed = pack_ordered(sections, lambda s: max(sum(f.file_size for f in s), cost), target)
        return [sorted((f for s in bin_ for f in s), key=_level_then_sequence) for bin_ in packed]

    def _pack(self, snapshot_id: int, entries: list[ManifestEntry]) -> list[DataSplit]:
        """Group files per (partition, bucket) and pack them, oldest first, into splits of
        ``source.split.target-size`` (Java's AppendOnlySplitGenerator)."""
        groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e.file)
        splits: list[DataSplit] = []
        # deleted rows count in a file's row count: Java pushes no limit down with vectors
        pushed = self.predicate is None and not self.deletion_vectors
        remaining = self.limit if pushed else None
        types = self.store.partition_types
        o = self.store.options
        target, cost = o.source_split_target_size, o.source_split_open_file_cost
        keys = tuple(self.store.partition_keys)
        for (partition, bucket), files in groups.items():
            values = tuple(deserialize_with_arity(partition, types))
            bucket_path = self._bucket_path(values, bucket)
            files.sort(key=lambda f: f.min_sequence_number)
            for pack in pack_ordered(files, lambda f: max(f.file_size, cost), target):
                splits.append(
                    DataSplit(
                        snapshot_id, partition, values, bucket, bucket_path, tuple(pack), None, keys
                    )
                )
            if remaining is not None:
                remaining -= sum(f.row_count for f in files)
                if remaining <= 0:
                    break
        return splits


def shard_splits(splits: Sequence[DataSplit], idx: int, n: int, by_bucket: bool) -> list[DataSplit]:
    """Shard ``idx`` of ``n`` of ``splits`` (see TableScan.with_shard)."""
    if by_bucket:
        return [s for s in splits if s.bucket % n == idx]
    total = sum(s.row_count for s in splits)
    low, high = idx * total // n, (idx + 1) * total // n
    out: list[DataSplit] = []
    position = 0
    for split in splits:
        kept = []
        for f in split.files:
            if low <= position < high:
                kept.append(f)
            position += f.row_count
        if kept:
            out.append(split.with_files(kept))
    return out


def slice_splits(splits: Sequence[DataSplit], start: int, end: int) -> list[DataSplit]:
    """The rows at positions ``[start, end)`` of ``splits`` (see TableScan.with_slice)."""
    out: list[DataSplit] = []
    position = 0
    for split in splits:
        kept: list[DataFileMeta] = []
        ranges: list[tuple[str, int, int]] = []
        for f in split.files:
            low, high = max(0, start - position), min(f.row_count, end - position)
            position += f.row_count
            if low < high:
                kept.append(f)
                if (low, high) != (0, f.row_count):
                    ranges.append((f.file_name, low, high))
        if kept:
            out.append(dataclasses.replace(split.with_files(kept), file_ranges=tuple(ranges)))
        if position >= end:
            break
    return out


def pack_ordered(items: Sequence[T], weight: Callable[[T], int], target: int) -> list[list[T]]:
    """``items`` in their order, cut into bins: a bin closes when the next item would take
    its weight over ``target`` (Java's BinPacking.packForOrdered); an item heavier than
    ``target`` gets a bin of its own."""
    bins: list[list[T]] = []
    current: list[T] = []
    total = 0
    for item in items:
        w = weight(item)
        if current and total + w > target:
            bins.append(current)
            current, total = [], 0
        current.append(item)
        total += w
    if current:
        bins.append(current)
    return bins


def _deletions_of(
    found: dict[tuple[bytes, int], dict[str, DeletionFile]],
    split: DataSplit,
    files: Sequence[DataFileMeta],
) -> tuple[DeletionFile | None, ...]:
    """Where each of ``files`` (of ``split``'s bucket) has its vector in ``found``."""
    by_name = found.get((bytes(split.partition), split.bucket), {})
    return tuple(by_name.get(f.file_name) for f in files)


def _file_of(e: ManifestEntry) -> DataFileMeta:
    return e.file


def _level_then_sequence(f: DataFileMeta) -> tuple[int, int]:
    return (f.level, f.min_sequence_number)


def _entry_id(e: ManifestEntry) -> tuple[Any, ...]:
    """What makes two entries the same file in an incremental diff (Java's ManifestEntry
    equality: a file upgraded to another level is another entry)."""
    return (e.total_buckets, *e.identifier())
