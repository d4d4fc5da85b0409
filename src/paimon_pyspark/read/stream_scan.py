"""Streaming reads: a scan that keeps a position and plans each new snapshot once.

Mirrors org.apache.paimon.table.source.DataTableStreamScan with the starting scanners of
AbstractDataTableScan.createStartingScanner, its follow-up scanners (DeltaFollowUpScanner
without a changelog producer, ChangelogFollowUpScanner with one), and pypaimon's
StreamReadBuilder.

The first ``plan()`` starts by ``scan.mode`` (Java's StartupMode, resolved as Java resolves
``default``): ``latest-full`` (``full``) plans the whole latest snapshot; ``latest`` plans
nothing and reads the snapshots after the latest (from the first snapshot if the table had
none when the scan started); ``from-snapshot`` (``scan.snapshot-id``) reads the deltas from
that snapshot on; ``from-snapshot-full`` plans that snapshot whole, then its successors;
``from-timestamp`` (``scan.timestamp-millis`` or ``scan.timestamp``) reads the deltas of the
snapshots committed at or after that time. A start snapshot that expired is replaced by the
earliest, as in Java. Every later ``plan()`` returns the changes of the next snapshot that has
some, a snapshot whose changes the filter empties skipped:

* without a changelog producer, the files that the next APPEND snapshot added (COMPACT and
  OVERWRITE snapshots add no rows);
* with one (``input``, ``lookup``, ``full-compaction``), the changelog files of the next
  snapshot that has a ``changelogManifestList``, of any commit kind (``lookup`` and
  ``full-compaction`` write theirs in COMPACT snapshots).

With nothing new the plan is empty and the position stays. Snapshots are fetched through
store/changelog_manager.py, so a stream also follows a snapshot's long-lived changelog.

The starting full plan of a ``lookup`` table reads the levels above 0, and of a
``full-compaction`` table only the top level (their level-0 rows will come as changelog when
compacted), as Java's DataTableStreamScan.tryFirstPlan; a postpone-bucket table's plans read
only real buckets.

``checkpoint()`` is the position (the next snapshot id to read, None before the first plan)
and ``restore(next_snapshot_id)`` resumes from one, as Java's StreamTableScan.

A follow-up split of a primary-key table is a ``DeltaSplit`` (Java's DataSplit with
``isStreaming``): ``StreamTableRead`` reads it unmerged, every record as written in file order,
retractions (-U, -D) included, as Java's no-merge reader of a streaming split; with
``with_include_row_kind()`` each row carries its kind in a first column ``_row_kind`` ("+I",
"-U", "+U", "-D"; a row of the starting full plan has its merged kind, see read/changes.py). A split
codec round trip (read/split_codec.py) loses the mark, so hand such splits to a
StreamTableRead in-process.

Every plan of a stream reads all levels (Java's DataTableStreamScan has no level filter): a
table with deletion vectors writes its rows at level 0 first, which a batch scan skips. The
starting plan carries the files' deletion vectors and merges a bucket that holds level-0 files
with them applied; follow-up splits carry none, as in Java.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from numbers import Integral
from typing import TYPE_CHECKING, Any

from paimon_pyspark import options as opts
from paimon_pyspark.errors import (
    CorruptTableError,
    InvalidArgumentError,
    OptionError,
    SnapshotExpiredError,
    UnsupportedOptionError,
    describe,
)
from paimon_pyspark.read.changes import (
    NONE,
    ROW_KIND_COLUMN,
    ROWKIND,
    ChangesRead,
    changelog_producer,
)
from paimon_pyspark.read.consumer_progress import ConsumerProgress
from paimon_pyspark.read.incremental import APPEND, is_incremental
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.scan import DataSplit, Plan, TableScan
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.changelog_manager import earliest_readable_id, snapshot_or_changelog
from paimon_pyspark.store.managers import check_consumer_id
from paimon_pyspark.types.data_types import RowType

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

SCAN_MODE = "scan.mode"
_STREAM_MODES = (
    "default",
    "latest-full",
    "full",
    "latest",
    "compacted-full",
    "from-timestamp",
    "from-creation-timestamp",
    "from-file-creation-time",
    "from-snapshot",
    "from-snapshot-full",
    "incremental",
)
_UNSUPPORTED_MODES = ("compacted-full", "from-creation-timestamp", "from-file-creation-time")
_UNSUPPORTED_STREAM_OPTIONS = {
    "streaming.read.snapshot.delay": "delaying the snapshots a stream reads",
}
_TIMESTAMP_KEYS = (opts.SCAN_TIMESTAMP_MILLIS, opts.SCAN_TIMESTAMP)


@dataclass(frozen=True)
class DeltaSplit(DataSplit):
    """A follow-up split of a primary-key table: the files one snapshot added, read unmerged."""

    is_streaming: bool = True


class StreamTableScan:
    """Plans a table's snapshots one after another; see the module docstring."""

    def __init__(
        self, store: FileStore, predicate: Predicate | None, consumer_id: str | None = None
    ) -> None:
        """``consumer_id`` (else option ``consumer-id``): the consumer this stream starts at
        and records its progress in (read/consumer_progress.py)."""
        self.store = store
        self.predicate = predicate
        self.consumer = ConsumerProgress.of(store, consumer_id)
        self.mode = startup_mode(store)
        self.producer = changelog_producer(store)
        self._next: int | None = None
        self._started = False
        self._latest_at_start: int | None = None

    def plan(self) -> Plan:
        """The splits of the starting snapshot (first call), or of the next APPEND snapshot
        after the position; an empty plan when there is none yet. With a consumer, the
        position the previous plan left is recorded first: asking for more means it is
        processed (pypaimon's with_consumer_id)."""
        if self.consumer is not None:
            self.consumer.record(self._next)
        if self._next is None:
            first = self._first_plan()
            if first is not None or self._next is None:
                return first if first is not None else Plan(None, ())
        return self._next_plan()

    def checkpoint(self) -> int | None:
        """The next snapshot id this scan will read (None until the first plan positioned it)."""
        return self._next

    def notify_checkpoint_complete(self, next_snapshot: int | None) -> None:
        """Record ``next_snapshot`` (a ``checkpoint()`` whose rows are processed) in the
        consumer file, as Java's DataTableStreamScan; nothing without a consumer."""
        if self.consumer is not None:
            self.consumer.record(next_snapshot)

    def restore(self, next_snapshot_id: int | None) -> None:
        """Resume at ``next_snapshot_id`` (a ``checkpoint()``); None starts over by
        ``scan.mode``."""
        if next_snapshot_id is not None and (
            isinstance(next_snapshot_id, bool)
            or not isinstance(next_snapshot_id, Integral)
            or next_snapshot_id < 1
        ):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': StreamTableScan.restore(next_snapshot_id) takes a "
                f"snapshot id >= 1 from checkpoint(), or None, got {describe(next_snapshot_id)}."
            )
        self._next = None if next_snapshot_id is None else int(next_snapshot_id)
        self._started = False

    # --- starting ------------------------------------------------------------------------------

    def _first_plan(self) -> Plan | None:
        """Java's starting scanners: a full plan, or None after positioning ``_next`` (or
        leaving it None while the table has no snapshot)."""
        sm = self.store.snapshot_manager
        options = self.store.options
        mode = self.mode
        resumed = self.consumer.start() if self.consumer is not None else None
        if resumed is not None:
            self._next = resumed
            return None
        if mode == "latest-full":
            # unpinned, so a snapshot expired under the plan is planned again on the newest
            plan = TableScan(self.store, self.predicate, None).with_all_levels().plan()
            plan = self._starting_levels(plan)
            if plan.snapshot_id is None:
                return None
            self._next = plan.snapshot_id + 1
            return plan
        if mode == "latest":
            if not self._started:
                self._started = True
                self._latest_at_start = sm.latest_id()
            latest_id = sm.latest_id()
            if latest_id is None:
                return None
            self._next = 1 if self._latest_at_start is None else latest_id + 1
            return None
        earliest = earliest_readable_id(self.store)
        if earliest is None:
            return None
        if mode == "from-timestamp":
            millis = options.scan_timestamp_millis
            assert millis is not None
            self._next = _first_committed_at_or_after(self.store, earliest, millis)
            return None
        wanted = options.scan_snapshot_id
        assert wanted is not None
        start = max(wanted, earliest)
        if mode == "from-snapshot-full":
            return self._full_plan(start)
        self._next = start
        return None

    def _full_plan(self, snapshot_id: int) -> Plan:
        pinned = self.store.copy({opts.SCAN_SNAPSHOT_ID: str(snapshot_id)})
        plan = TableScan(pinned, self.predicate, None).with_all_levels().plan()
        self._next = snapshot_id + 1
        return self._starting_levels(plan)

    def _starting_levels(self, plan: Plan) -> Plan:
        return Plan(plan.snapshot_id, tuple(starting_splits(self.store, plan.splits())))

    # --- following ------------------------------------------------------------------------------

    def _next_plan(self) -> Plan:
        while True:
            assert self._next is not None
            snapshot_id = self._next
            snapshot = snapshot_or_changelog(self.store, snapshot_id)
            if snapshot is None:
                self._check_range(snapshot_id)
                return Plan(None, ())
            if not self._has_changes(snapshot):
                self._next = snapshot_id + 1
                continue
            plan = self._delta_plan(snapshot)
            self._next = snapshot_id + 1
            if plan.splits():
                return plan

    def _has_changes(self, snapshot: Snapshot) -> bool:
        """Java's FollowUpScanner.shouldScanSnapshot: an APPEND snapshot without a producer,
        one with changelog files with a producer."""
        if self.producer == NONE:
            return snapshot.commit_kind == APPEND
        return snapshot.changelog_manifest_list is not None

    def _delta_plan(self, snapshot: Snapshot) -> Plan:
        scan = TableScan(self.store, self.predicate, None).with_all_levels()
        plan = scan.plan_changes(snapshot, changelog=self.producer != NONE)
        if not self.store.primary_keys:
            return plan
        marked = tuple(
            DeltaSplit(**{f.name: getattr(s, f.name) for f in fields(DataSplit)})
            for s in plan.splits()
        )
        return Plan(plan.snapshot_id, marked)

    def _check_range(self, snapshot_id: int) -> None:
        """Java's NextSnapshotFetcher.rangeCheck: a missing next snapshot either is not
        written yet, or has expired, or lies past a table that was recreated."""
        sm = self.store.snapshot_manager
        earliest, latest = earliest_readable_id(self.store), sm.latest_id()
        if earliest is not None and snapshot_id < earliest:
            raise SnapshotExpiredError(
                f"Table '{self.store.name}': the next snapshot {snapshot_id} of this stream has "
                f"expired (earliest {earliest}, latest {latest}). Keep snapshots longer "
                "('snapshot.time-retained', 'snapshot.num-retained.min') or restore the stream "
                "from a later position."
            )
        if (earliest is None and snapshot_id > 1) or (
            latest is not None and snapshot_id > latest + 1
        ):
            raise CorruptTableError(
                f"Table '{self.store.name}': the next snapshot {snapshot_id} of this stream is "
                f"past the latest ({latest}); was the table recreated?"
            )


def starting_splits(store: FileStore, splits: Sequence[DataSplit]) -> list[DataSplit]:
    """A stream's starting full plan without the levels whose rows a ``lookup`` or
    ``full-compaction`` producer will still hand out as changelog (Java's
    DataTableStreamScan.tryFirstPlan level filters: above 0, the top level)."""
    producer = changelog_producer(store)
    if producer == "lookup":
        keep: Callable[[DataFileMeta], bool] = lambda f: f.level > 0  # noqa: E731
    elif producer == "full-compaction":
        top = store.options.num_levels - 1
        keep = lambda f: f.level == top  # noqa: E731
    else:
        return list(splits)
    kept = (s.filter_file(keep) for s in splits)
    return [s for s in kept if s is not None]


def _first_committed_at_or_after(store: FileStore, earliest: int, millis: int) -> int:
    """The first id from ``earliest`` on (a long-lived changelog or a snapshot) committed at
    or after ``millis``, by a binary search since commit times grow with the id; the id after
    the latest when none was (Java's from-timestamp start, over decoupled changelogs too)."""
    latest = store.snapshot_manager.latest_id()
    if latest is None:
        return earliest
    low, high = earliest, latest
    while low <= high:
        mid = (low + high) // 2
        found = snapshot_or_changelog(store, mid)
        if found is None or found.time_millis < millis:
            low = mid + 1  # expired meanwhile (oldest first), or older than wanted
        else:
            high = mid - 1
    return low


def startup_mode(store: FileStore) -> str:
    """The table's ``scan.mode`` for a streaming read, ``default`` resolved as Java's
    CoreOptions.startupMode resolves it; modes and options a stream cannot use are refused."""
    name = store.name
    options = store.options
    for key, what in _UNSUPPORTED_STREAM_OPTIONS.items():
        if options.get(key) is not None:
            raise UnsupportedOptionError(
                f"Table '{name}': option '{key}' = '{options.get(key)}' asks for {what}, "
                "which paimon_pyspark's stream reads do not implement."
            )
    overwrite = (options.get("streaming-read-overwrite") or "false").strip().lower()
    if overwrite != "false":
        raise UnsupportedOptionError(
            f"Table '{name}': option 'streaming-read-overwrite' = "
            f"'{options.get('streaming-read-overwrite')}' reads the changes of OVERWRITE "
            "snapshots, which paimon_pyspark's stream reads do not implement; they are skipped."
        )
    if (
        store.primary_keys
        and options.merge_engine == "first-row"
        and (changelog_producer(store) != "lookup")
    ):
        raise OptionError(
            f"Table '{name}': a stream read of a 'first-row' table needs 'changelog-producer' = "
            "'lookup' (as in Java)."
        )
    raw = options.get(SCAN_MODE) or "default"
    mode = raw.strip().lower()
    if mode not in _STREAM_MODES:
        raise OptionError(
            f"Table '{name}': option '{SCAN_MODE}' = '{raw}' is not a startup mode; use one of "
            f"{list(_STREAM_MODES)}."
        )
    given = [k for k in opts.SCAN_START_KEYS if (options.get(k) or "").strip()]
    if mode == "default":
        if any(k in given for k in _TIMESTAMP_KEYS):
            mode = "from-timestamp"
        elif opts.SCAN_SNAPSHOT_ID in given or opts.SCAN_TAG_NAME in given:
            mode = "from-snapshot"
        elif is_incremental(store):
            mode = "incremental"
        else:
            mode = "latest-full"
    elif mode == "full":
        mode = "latest-full"
    where = f"Table '{name}': option '{SCAN_MODE}' = '{raw}'"
    if mode in _UNSUPPORTED_MODES:
        raise UnsupportedOptionError(
            f"{where} is a startup mode paimon_pyspark's stream reads do not implement; use "
            "'latest-full', 'latest', 'from-snapshot', 'from-snapshot-full' or 'from-timestamp'."
        )
    if mode == "incremental":
        raise OptionError(
            f"Table '{name}': an incremental read ('incremental-between...' or scan.mode "
            "'incremental') is a batch read; a stream cannot read it (as in Java)."
        )
    allowed: tuple[str, ...] = ()
    needed: tuple[str, ...] = ()
    if mode == "from-timestamp":
        allowed = needed = _TIMESTAMP_KEYS
    elif mode == "from-snapshot":
        allowed = needed = (opts.SCAN_SNAPSHOT_ID, opts.SCAN_TAG_NAME)
    elif mode == "from-snapshot-full":
        allowed = needed = (opts.SCAN_SNAPSHOT_ID,)
    illegal = [k for k in given if k not in allowed]
    if illegal:
        raise OptionError(
            f"{where}: option '{illegal[0]}' must not be set when a stream starts in mode '{mode}'."
        )
    if needed and not any(k in given for k in needed):
        raise OptionError(f"{where} needs one of the options {list(needed)}.")
    if mode == "from-snapshot" and opts.SCAN_TAG_NAME in given:
        raise OptionError(
            f"Table '{name}': option '{opts.SCAN_TAG_NAME}' cannot start a stream (as in Java: "
            "cannot scan from tag in streaming mode); use 'scan.snapshot-id'."
        )
    return mode


class StreamTableRead(ChangesRead):
    """A TableRead that also reads the DeltaSplits of a stream's follow-up plans: unmerged,
    every record as written, retractions included (Java's MergeFileSplitRead of a streaming
    split); ``include_row_kind`` puts each row's kind first, in ``_row_kind``
    (read/changes.py). ``changes_table`` (``audit_log`` or ``binlog``): the rows of that
    system table's stream, ``rowkind`` first, deletes kept in the starting plan (Java's
    AuditLogTable stream read)."""

    def __init__(
        self,
        table: FileStore,
        projection: list[str] | None,
        predicate: Predicate | None,
        limit: int | None,
        include_row_kind: bool = False,
        changes_table: str | None = None,
    ) -> None:
        if changes_table is not None:
            super().__init__(table, projection, predicate, limit, ROWKIND, True, changes_table)
        else:
            kind = ROW_KIND_COLUMN if include_row_kind else None
            if kind is not None and projection is not None and kind not in projection:
                projection = [kind, *projection]  # pypaimon's: always first
            super().__init__(table, projection, predicate, limit, kind)
        self.include_row_kind = include_row_kind
        self.changes_table = changes_table

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickles as TableRead does (plain values, read/table_read.py), coming back as a
        StreamTableRead."""
        reopen, args = super().__reduce__()
        extra = (self.selected, self.include_row_kind, self.changes_table)
        return _as_stream_read, (reopen, args, *extra)


def _as_stream_read(
    reopen: Callable[..., TableRead],
    args: tuple[Any, ...],
    selected: list[str] | None = None,
    include_row_kind: bool = False,
    changes_table: str | None = None,
) -> StreamTableRead:
    read = reopen(*args)
    return StreamTableRead(
        read.table, selected, read.predicate, read.limit, include_row_kind, changes_table
    )


class StreamReadBuilder:
    """Projection and filter, then a StreamTableScan and a StreamTableRead (pypaimon's
    StreamReadBuilder; Java's ReadBuilder.newStreamScan)."""

    def __init__(self, store: FileStore) -> None:
        startup_mode(store)
        ConsumerProgress.of(store)  # refuses an empty or path-like 'consumer-id' up front
        self.store = store
        self._builder = ReadBuilder(store)
        self._projection: list[str] | None = None
        self._predicate: Predicate | None = None
        self._consumer_id: str | None = None
        self._include_row_kind = False

    def with_include_row_kind(self, include: bool = True) -> StreamReadBuilder:
        """Put each row's kind first, in a column ``_row_kind``: "+I", "-U", "+U" or "-D"
        (pypaimon's)."""
        if not isinstance(include, bool):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': StreamReadBuilder.with_include_row_kind(include) "
                f"takes a bool, got {describe(include)}."
            )
        self._include_row_kind = include
        return self

    def with_consumer_id(self, consumer_id: str) -> StreamReadBuilder:
        """Start at this consumer's recorded position (when it has one) and record the
        scan's progress in ``consumer/consumer-<id>`` (pypaimon's; option ``consumer-id``)."""
        self._consumer_id = check_consumer_id(consumer_id)
        return self

    def with_projection(self, projection: list[str]) -> StreamReadBuilder:
        """Read only these columns, in this order (a list of top-level field names)."""
        self._builder.with_projection(projection)
        nested = [n for n in projection if n not in self.store.field_names]
        if nested:
            raise InvalidArgumentError(
                f"Table '{self.store.name}': StreamReadBuilder.with_projection(projection) takes "
                f"top-level column names; {nested} name ROW subfields, which only a batch "
                "ReadBuilder projects."
            )
        self._projection = list(projection)
        return self

    def with_filter(self, predicate: Predicate | None) -> StreamReadBuilder:
        self._builder.with_filter(predicate)
        self._predicate = predicate
        return self

    def new_predicate_builder(self) -> PredicateBuilder:
        return self._builder.new_predicate_builder()

    def read_type(self) -> RowType:
        return self._builder.read_type()

    def new_scan(self) -> StreamTableScan:
        return StreamTableScan(self.store, self._predicate, self._consumer_id)

    def new_read(self) -> StreamTableRead:
        return StreamTableRead(
            self.store, self._projection, self._predicate, None, self._include_row_kind
        )
