"""Streaming reads: a scan that keeps a position and plans each new snapshot once.

Mirrors org.apache.paimon.table.source.DataTableStreamScan with the starting scanners of
AbstractDataTableScan.createStartingScanner and the DeltaFollowUpScanner (no changelog
producer, which is every table paimon_pyspark opens), and pypaimon's StreamReadBuilder.

The first ``plan()`` starts by ``scan.mode`` (Java's StartupMode, resolved as Java resolves
``default``): ``latest-full`` (``full``) plans the whole latest snapshot; ``latest`` plans
nothing and reads the snapshots after the latest (from the first snapshot if the table had
none when the scan started); ``from-snapshot`` (``scan.snapshot-id``) reads the deltas from
that snapshot on; ``from-snapshot-full`` plans that snapshot whole, then its successors;
``from-timestamp`` (``scan.timestamp-millis`` or ``scan.timestamp``) reads the deltas of the
snapshots committed at or after that time. A start snapshot that expired is replaced by the
earliest, as in Java. Every later ``plan()`` returns the files that the next APPEND snapshot
added (read/incremental.py's delta of one snapshot); COMPACT and OVERWRITE snapshots add no
rows and are skipped, and so is a snapshot whose delta the filter empties. With nothing new
the plan is empty and the position stays.

``checkpoint()`` is the position (the next snapshot id to read, None before the first plan)
and ``restore(next_snapshot_id)`` resumes from one, as Java's StreamTableScan.

A follow-up split of a primary-key table is a ``DeltaSplit`` (Java's DataSplit with
``isStreaming``): ``StreamTableRead`` reads it unmerged, every record as written, without
retractions (-U, -D), as an incremental delta read does; a split codec round trip
(read/split_codec.py) loses the mark, so hand such splits to a StreamTableRead in-process.

Every plan of a stream reads all levels (Java's DataTableStreamScan has no level filter): a
table with deletion vectors writes its rows at level 0 first, which a batch scan skips. The
starting plan carries the files' deletion vectors and merges a bucket that holds level-0 files
with them applied; follow-up splits carry none, as in Java.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from numbers import Integral
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from paimon_pyspark import options as opts
from paimon_pyspark.errors import (
    CorruptTableError,
    InvalidArgumentError,
    OptionError,
    SnapshotExpiredError,
    UnsupportedOptionError,
    describe,
)
from paimon_pyspark.read.incremental import APPEND, added_records, earlier_or_equal, is_incremental
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.scan import DataSplit, Plan, TableScan
from paimon_pyspark.read.table_read import TableRead
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
    "consumer-id": "recording and resuming a consumer's progress",
    "streaming.read.snapshot.delay": "delaying the snapshots a stream reads",
}
_TIMESTAMP_KEYS = (opts.SCAN_TIMESTAMP_MILLIS, opts.SCAN_TIMESTAMP)


@dataclass(frozen=True)
class DeltaSplit(DataSplit):
    """A follow-up split of a primary-key table: the files one snapshot added, read unmerged."""

    is_streaming: bool = True


class StreamTableScan:
    """Plans a table's snapshots one after another; see the module docstring."""

    def __init__(self, store: FileStore, predicate: Predicate | None) -> None:
        self.store = store
        self.predicate = predicate
        self.mode = startup_mode(store)
        self._next: int | None = None
        self._started = False
        self._latest_at_start: int | None = None

    def plan(self) -> Plan:
        """The splits of the starting snapshot (first call), or of the next APPEND snapshot
        after the position; an empty plan when there is none yet."""
        if self._next is None:
            first = self._first_plan()
            if first is not None or self._next is None:
                return first if first is not None else Plan(None, ())
        return self._next_plan()

    def checkpoint(self) -> int | None:
        """The next snapshot id this scan will read (None until the first plan positioned it)."""
        return self._next

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
        if mode == "latest-full":
            # unpinned, so a snapshot expired under the plan is planned again on the newest
            plan = TableScan(self.store, self.predicate, None).with_all_levels().plan()
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
        earliest = sm.earliest_id()
        if earliest is None:
            return None
        if mode == "from-timestamp":
            millis = options.scan_timestamp_millis
            assert millis is not None
            first = sm.snapshot_if_exists(earliest)
            if first is None or first.time_millis >= millis:
                self._next = earliest
            else:
                before = earlier_or_equal(sm, millis - 1)
                self._next = (before.id if before is not None else earliest - 1) + 1
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
        return plan

    # --- following ------------------------------------------------------------------------------

    def _next_plan(self) -> Plan:
        sm = self.store.snapshot_manager
        while True:
            assert self._next is not None
            snapshot_id = self._next
            snapshot = sm.snapshot_if_exists(snapshot_id)
            if snapshot is None:
                self._check_range(snapshot_id)
                return Plan(None, ())
            if snapshot.commit_kind != APPEND:
                self._next = snapshot_id + 1
                continue
            plan = self._delta_plan(snapshot_id)
            self._next = snapshot_id + 1
            if plan.splits():
                return plan

    def _delta_plan(self, snapshot_id: int) -> Plan:
        between = self.store.copy({opts.INCREMENTAL_BETWEEN: f"{snapshot_id - 1},{snapshot_id}"})
        plan = TableScan(between, self.predicate, None).with_all_levels().plan()
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
        earliest, latest = sm.earliest_id(), sm.latest_id()
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
    if store.primary_keys and options.merge_engine == "first-row":
        raise UnsupportedOptionError(
            f"Table '{name}': a stream read of a 'first-row' table needs 'changelog-producer' = "
            "'lookup', which paimon_pyspark does not write."
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


class StreamTableRead(TableRead):
    """A TableRead that also reads the DeltaSplits of a stream's follow-up plans: unmerged,
    every +I/+U record as written (Java's MergeFileSplitRead of a streaming split)."""

    def _read_merged(self, split: DataSplit) -> pa.Table:
        if isinstance(split, DeltaSplit):
            table = added_records(self.table, split.bucket_path, split.files)
            return self._filtered(split, table).select(self.projection)
        return super()._read_merged(split)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickles as TableRead does (plain values, read/table_read.py), coming back as a
        StreamTableRead."""
        reopen, args = super().__reduce__()
        return _as_stream_read, (reopen, args)


def _as_stream_read(reopen: Callable[..., TableRead], args: tuple[Any, ...]) -> StreamTableRead:
    read = reopen(*args)
    return StreamTableRead(read.table, read.projection, read.predicate, read.limit)


class StreamReadBuilder:
    """Projection and filter, then a StreamTableScan and a StreamTableRead (pypaimon's
    StreamReadBuilder; Java's ReadBuilder.newStreamScan)."""

    def __init__(self, store: FileStore) -> None:
        startup_mode(store)
        self.store = store
        self._builder = ReadBuilder(store)
        self._projection: list[str] | None = None
        self._predicate: Predicate | None = None

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
        return StreamTableScan(self.store, self._predicate)

    def new_read(self) -> StreamTableRead:
        return StreamTableRead(self.store, self._projection, self._predicate, None)
