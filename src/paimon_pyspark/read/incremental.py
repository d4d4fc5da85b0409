"""Incremental reads: the rows that the commits between two snapshots, tags or times added.

Mirrors org.apache.paimon.table.source.AbstractDataTableScan.createIncrementalStartingScanner
and the two scanners it chooses from, with the reads of their splits:

* ``delta`` (the ``auto`` mode of a table without a changelog producer):
  IncrementalDeltaStartingScanner. The files that the APPEND snapshots in (start, end]
  added; COMPACT and OVERWRITE snapshots add nothing. A primary-key split is read without a
  merge (MergeFileSplitRead.createNoMergeReader), every record as written, and the retractions
  (-U, -D) are dropped, as Java's batch reads drop them.
* ``changelog`` (the ``auto`` mode of a table with a changelog producer): the same scanner in
  CHANGELOG mode. The changelog files of every snapshot in (start, end] but OVERWRITE ones
  (APPEND and COMPACT: lookup and full-compaction write theirs at compaction), read without a
  merge, every record as written, retractions included (Java's streaming split; a plain
  TableRead shows them without their kind, ``$audit_log`` with it in ``rowkind``).
* ``diff``: IncrementalDiffStartingScanner and SnapshotReaderImpl.readIncrementalDiff. The files
  of the end snapshot that the start snapshot had not. An append table reads them
  (RawFileSplitRead); a primary-key bucket merges them, and merges the start's files that the
  end has not, and returns the merged rows that are new or changed (IncrementalDiffSplitRead:
  a key only the start has is a deletion, not returned). Two tags are always compared this way,
  unless ``incremental-between-tag-to-snapshot`` asks for the deltas between their snapshots.

With deletion vectors, a diff applies to each side the vectors of its own snapshot (Java's
IncrementalSplit before and after deletion files); a delta reads its files as written, as
Java's delta splits carry no deletion files, and of a primary-key table it skips level 0 as
every batch scan of such a table does (Java's level filter applies to the delta too).

``incremental-to-auto-tag`` is refused. Java's checks and their order are kept: a start after
the end is refused, equal bounds or a table without snapshots read nothing, ids must lie in
[earliest - 1, latest] for ``delta``, and times outside the snapshots' read nothing.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark import options as opts
from paimon_pyspark.errors import (
    InconsistentBucketsError,
    OptionError,
    SnapshotExpiredError,
)
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.key_value import INSERT, UPDATE_AFTER, VALUE_KIND
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.changelog_manager import snapshot_or_changelog
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.latest_plan import pinned_snapshot
from paimon_pyspark.store.managers import SnapshotManager, TagManager

DELTA = "delta"
DIFF = "diff"
CHANGELOG = "changelog"
APPEND = "APPEND"
OVERWRITE = "OVERWRITE"
_JAVA_LONG_RE = re.compile(r"[+-]?[0-9]{1,19}")


@dataclass(frozen=True)
class DeltaRange:
    """The APPEND deltas of snapshots ``start`` (exclusive) to ``end`` (inclusive), or with
    ``changelog`` the changelog files of every snapshot in between but OVERWRITE ones."""

    start: int
    end: int
    changelog: bool = False


@dataclass(frozen=True)
class DiffRange:
    """The files of ``end`` that ``start`` had not (and, per primary-key bucket, the reverse)."""

    start: Snapshot
    end: Snapshot


@dataclass(frozen=True)
class EmptyRange:
    """Bounds that read nothing (equal bounds, no snapshot, times outside the snapshots')."""


IncrementalRange = DeltaRange | DiffRange | EmptyRange


def is_incremental(store: FileStore) -> bool:
    return any(store.options.get(k) is not None for k in opts.INCREMENTAL_KEYS)


def incremental_mode(store: FileStore) -> str | None:
    """DELTA, CHANGELOG or DIFF for an incremental read, None for any other read; it decides
    how a primary-key split is read, and costs at most the two tag files of
    ``incremental-between``."""
    if not is_incremental(store):
        return None
    options = store.options
    between = options.get(opts.INCREMENTAL_BETWEEN)
    if between is not None:
        start, end = _bounds(store, opts.INCREMENTAL_BETWEEN, between)
        tags = store.tag_manager
        if _tag(tags, start) is not None and _tag(tags, end) is not None:
            return _delta_mode(store, tag_to_snapshot=True) if _tag_to_snapshot(store) else DIFF
    mode = _scan_mode(store)
    return DIFF if mode == DIFF else _delta_mode(store)


def incremental_range(store: FileStore) -> IncrementalRange | None:
    """What an incremental read of ``store`` reads, or None when its options ask for no
    incremental read. Bad bounds raise OptionError (or SnapshotExpiredError) naming the table,
    the option and its value."""
    if not is_incremental(store):
        return None
    store.options.check_time_travel()
    between = store.options.get(opts.INCREMENTAL_BETWEEN)
    if between is not None:
        return _between(store, between)
    text = store.options.get(opts.INCREMENTAL_BETWEEN_TIMESTAMP)
    assert text is not None
    return _between_timestamps(store, text)


def delta_snapshots(store: FileStore, delta: DeltaRange) -> list[Snapshot]:
    """The APPEND snapshots in (start, end]: COMPACT and OVERWRITE commits add no rows; of a
    changelog range, every snapshot with changelog files but OVERWRITE ones (Java's
    IncrementalDeltaStartingScanner in CHANGELOG mode)."""
    snapshots = []
    for i in range(delta.start + 1, delta.end + 1):
        snapshot = snapshot_or_changelog(store, i)
        if snapshot is None:
            asked_by = f"the incremental read ({delta.start}, {delta.end}]"
            snapshot = pinned_snapshot(store, i, asked_by)
        if delta.changelog:
            if snapshot.commit_kind != OVERWRITE and snapshot.changelog_manifest_list:
                snapshots.append(snapshot)
        elif snapshot.commit_kind == APPEND:
            snapshots.append(snapshot)
    return snapshots


def earlier_or_equal(sm: SnapshotManager, millis: int) -> Snapshot | None:
    """The latest snapshot committed at or before ``millis`` (Java's earlierOrEqualTimeMills),
    by a binary search, since commit times grow with the id."""
    ids = sm.list_ids()
    found: Snapshot | None = None
    low, high = 0, len(ids) - 1
    while low <= high:
        mid = (low + high) // 2
        snapshot = sm.snapshot_if_exists(ids[mid])
        if snapshot is None:
            earliest = sm.earliest_id()
            if earliest is not None and ids[mid] < earliest:
                # expired since the listing, with every snapshot before it (expiry goes oldest
                # first): the answer, if any, is among the later ones
                low = mid + 1
                continue
            snapshot = sm.snapshot(ids[mid])  # not expired: CorruptTableError naming it
        if snapshot.time_millis <= millis:
            found, low = snapshot, mid + 1
        else:
            high = mid - 1
    return found


# --- reading primary-key splits ------------------------------------------------------------


def all_records(store: FileStore, bucket_path: str, files: Sequence[DataFileMeta]) -> pa.Table:
    """Every record of ``files`` as written, unmerged, retractions (-U, -D) included."""
    return read_kv_records(store, bucket_path, files).select(store.field_names)


def added_records(store: FileStore, bucket_path: str, files: Sequence[DataFileMeta]) -> pa.Table:
    """Every record of ``files`` as written, unmerged, without its retractions (-U, -D)."""
    records = read_kv_records(store, bucket_path, files)
    added = pc.is_in(records.column(VALUE_KIND), pa.array([INSERT, UPDATE_AFTER], pa.int8()))
    return records.filter(added).select(store.field_names)


def diff_rows(before: pa.Table, after: pa.Table, keys: Sequence[str]) -> pa.Table:
    """The rows of ``after`` whose key ``before`` lacks, or holds with other values (both hold
    one row per key, as a merge leaves them)."""
    if before.num_rows == 0 or after.num_rows == 0:
        return after
    a_index, b_index = "__paimon_after_row", "__paimon_before_row"
    left = after.select(list(keys)).append_column(a_index, pa.array(np.arange(after.num_rows)))
    right = before.select(list(keys)).append_column(b_index, pa.array(np.arange(before.num_rows)))
    joined = left.join(right, keys=list(keys), join_type="left outer")
    new = joined.filter(pc.is_null(joined.column(b_index)))
    both = joined.filter(pc.is_valid(joined.column(b_index)))
    at, bt = both.column(a_index), both.column(b_index)
    changed = np.zeros(both.num_rows, dtype=bool)
    for name in after.column_names:
        if name not in keys:
            changed |= _differs(after.column(name).take(at), before.column(name).take(bt))
    rows = np.concatenate([new.column(a_index).to_numpy(), at.to_numpy()[changed]]).astype(np.int64)
    rows.sort()
    return after.take(pa.array(rows))


def _differs(x: pa.ChunkedArray, y: pa.ChunkedArray) -> np.ndarray:
    """Per row, whether two columns differ, a null equal only to a null and NaN to NaN (Java
    compares the binary rows)."""
    t = x.type
    if pa.types.is_nested(t):
        return np.array([a != b for a, b in zip(x.to_pylist(), y.to_pylist(), strict=True)])
    same = pc.or_(pc.fill_null(pc.equal(x, y), False), pc.and_(x.is_null(), y.is_null()))
    if pa.types.is_floating(t):
        nan = pc.and_(pc.fill_null(pc.is_nan(x), False), pc.fill_null(pc.is_nan(y), False))
        same = pc.or_(same, nan)
    return np.asarray(pc.invert(same).to_numpy(zero_copy_only=False), dtype=bool)


# --- resolving the bounds ------------------------------------------------------------------


def _where(store: FileStore, key: str, value: str) -> str:
    return f"Table '{store.name}': option '{key}' = '{value}'"


def _java_split(text: str) -> list[str]:
    """``text.split(",")`` as Java splits it: trailing empty parts are dropped."""
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _bounds(store: FileStore, key: str, text: str) -> tuple[str, str]:
    parts = _java_split(text)
    if len(parts) != 2:
        what = "snapshots or tags" if key == opts.INCREMENTAL_BETWEEN else "timestamps"
        raise OptionError(
            f"{_where(store, key, text)} must give a start (exclusive) and an end (inclusive), "
            f"two {what} separated by a comma, such as '5,10'."
        )
    return parts[0], parts[1]


def _java_long(text: str) -> int | None:
    """``text`` as Java's Long.parseLong reads it, or None where that throws."""
    if not _JAVA_LONG_RE.fullmatch(text):
        return None
    value = int(text)
    return value if opts.JAVA_LONG_MIN <= value <= opts.JAVA_LONG_MAX else None


def _tag(tags: TagManager, name: str) -> Snapshot | None:
    """The snapshot of tag ``name``; None when there is none, or ``name`` cannot name one."""
    if not name.strip() or "/" in name or "\\" in name:
        return None
    return tags.get(name)


def _tag_to_snapshot(store: FileStore) -> bool:
    key = opts.INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT
    if store.options.get(key) is None:
        return False
    return bool(opts.option_value(store.options.options, key, store.name))


def _scan_mode(store: FileStore) -> str:
    key = opts.INCREMENTAL_BETWEEN_SCAN_MODE
    if store.options.get(key) is None:
        return "auto"
    return str(opts.option_value(store.options.options, key, store.name))


def _delta_mode(store: FileStore, tag_to_snapshot: bool = False) -> str:
    """Java's toSnapshotScanMode: ``delta`` reads the deltas, ``changelog`` the changelog
    files, ``auto`` the changelog files of a table with a changelog producer, else the
    deltas."""
    mode = _scan_mode(store)
    key = opts.INCREMENTAL_BETWEEN_SCAN_MODE
    if mode == DIFF and tag_to_snapshot:
        raise OptionError(
            f"{_where(store, key, mode)}: unsupported incremental scan mode DIFF with "
            f"'{opts.INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT}' = 'true' (as in Java)."
        )
    if mode == CHANGELOG:
        return CHANGELOG
    if mode == "auto" and store.primary_keys and store.options.changelog_producer != "none":
        return CHANGELOG
    return DELTA


def _between(store: FileStore, text: str) -> IncrementalRange:
    key = opts.INCREMENTAL_BETWEEN
    start, end = _bounds(store, key, text)
    tags = store.tag_manager
    start_tag, end_tag = _tag(tags, start), _tag(tags, end)
    if start_tag is not None and end_tag is not None:
        if _tag_to_snapshot(store):
            mode = _delta_mode(store, tag_to_snapshot=True)
            return _delta_between_ids(store, key, text, start_tag.id, end_tag.id, mode)
        if end_tag.id < start_tag.id:
            raise OptionError(
                f"{_where(store, key, text)}: the end tag '{end}' (snapshot {end_tag.id}) must "
                f"not be earlier than the start tag '{start}' (snapshot {start_tag.id})."
            )
        if start_tag.id == end_tag.id:
            return EmptyRange()
        return _diff(store, key, text, start_tag, end_tag)
    start_id, end_id = _java_long(start), _java_long(end)
    if start_id is None or end_id is None:
        raise OptionError(
            f"{_where(store, key, text)}: '{start}' and '{end}' are neither two tags nor two "
            "snapshot ids; give two tags or two snapshot ids."
        )
    if end_id < start_id:
        raise OptionError(
            f"{_where(store, key, text)}: the end snapshot {end_id} must not be earlier than "
            f"the start snapshot {start_id}."
        )
    sm = store.snapshot_manager
    if sm.earliest_id() is None or start_id == end_id:
        return EmptyRange()
    if _scan_mode(store) == DIFF:
        start_snapshot = _snapshot(store, key, text, start_id)
        return _diff(store, key, text, start_snapshot, _snapshot(store, key, text, end_id))
    return _delta_between_ids(store, key, text, start_id, end_id, _delta_mode(store))


def _delta_between_ids(
    store: FileStore, key: str, text: str, start: int, end: int, mode: str
) -> DeltaRange | EmptyRange:
    """Java's IncrementalDeltaStartingScanner.betweenSnapshotIds: the start may be the
    snapshot before the earliest (the range is open on the left)."""
    sm = store.snapshot_manager
    earliest, latest = sm.earliest_id(), sm.latest_id()
    if earliest is None or latest is None:
        return EmptyRange()
    if start >= earliest - 1 and end <= latest:
        return DeltaRange(start, end, mode == CHANGELOG)
    message = (
        f"{_where(store, key, text)}: the snapshot range [{start}, {end}] is out of the "
        f"available snapshot range [{earliest}, {latest}]."
    )
    if start < earliest - 1:
        raise SnapshotExpiredError(message + " The snapshots before it have expired.")
    raise OptionError(message)


def _snapshot(store: FileStore, key: str, text: str, snapshot_id: int) -> Snapshot:
    sm = store.snapshot_manager
    found = sm.snapshot_if_exists(snapshot_id)
    if found is not None:
        return found
    earliest, latest = sm.earliest_id(), sm.latest_id()
    message = (
        f"{_where(store, key, text)}: snapshot {snapshot_id} does not exist (earliest "
        f"{earliest}, latest {latest})."
    )
    if earliest is not None and snapshot_id < earliest:
        raise SnapshotExpiredError(message + " It has expired.")
    raise OptionError(message)


def _diff(store: FileStore, key: str, text: str, start: Snapshot, end: Snapshot) -> DiffRange:
    """Java's TimeTravelUtil.checkRescaleBucketForIncrementalDiffQuery: the buckets of the two
    snapshots' schemas must match."""
    if start.schema_id != end.schema_id:
        schemas = store.schema_manager
        buckets = [
            opts.CoreOptions(schemas.schema(s.schema_id).options, store.name).bucket
            for s in (start, end)
        ]
        if buckets[0] != buckets[1]:
            raise InconsistentBucketsError(
                f"{_where(store, key, text)}: the bucket numbers of snapshots {start.id} and "
                f"{end.id} differ ({buckets[0]}, {buckets[1]}), which an incremental diff "
                "does not support.",
                start.id,
                end.id,
            )
    return DiffRange(start, end)


def _millis(store: FileStore, key: str, text: str, start: str, end: str) -> tuple[int, int]:
    """Two epoch milliseconds, or two local times (``2026-11-26 12:00:00``) read as Java
    reads them with the JVM's zone."""
    start_ms, end_ms = _java_long(start), _java_long(end)
    if start_ms is not None and end_ms is not None:
        return start_ms, end_ms
    try:
        local = [datetime.datetime.fromisoformat(t) for t in (start, end)]
        return round(local[0].timestamp() * 1000), round(local[1].timestamp() * 1000)
    except ValueError:
        raise OptionError(
            f"{_where(store, key, text)} must give two epoch milliseconds or two local times "
            "such as '2026-11-26 12:00:00', separated by a comma."
        ) from None


def _between_timestamps(store: FileStore, text: str) -> IncrementalRange:
    key = opts.INCREMENTAL_BETWEEN_TIMESTAMP
    start_text, end_text = _bounds(store, key, text)
    start, end = _millis(store, key, text, start_text, end_text)
    sm = store.snapshot_manager
    earliest_id, latest = sm.earliest_id(), sm.latest()
    earliest = None if earliest_id is None else sm.snapshot_if_exists(earliest_id)
    if earliest is None or latest is None:
        return EmptyRange()
    if end < start:
        raise OptionError(
            f"{_where(store, key, text)}: the end timestamp {end} must not be earlier than the "
            f"start timestamp {start}."
        )
    if start == end or start > latest.time_millis or end < earliest.time_millis:
        return EmptyRange()
    at_start, at_end = earlier_or_equal(sm, start), earlier_or_equal(sm, end)
    if _scan_mode(store) == DIFF:
        return _diff(store, key, text, at_start or earliest, at_end or latest)
    mode = _delta_mode(store)
    before_all = at_start is None or earliest.time_millis > start
    start_id = earliest.id - 1 if before_all or at_start is None else at_start.id
    end_id = latest.id if at_end is None else at_end.id
    return DeltaRange(start_id, end_id, mode == CHANGELOG)
