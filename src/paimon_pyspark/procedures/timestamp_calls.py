"""Tags and rollbacks found by commit time or watermark: Java 1.4.2's
CreateTagFromTimestampProcedure, RollbackToTimestampProcedure, RollbackToWatermarkProcedure
(Spark and Flink) and Flink's CreateTagFromWatermarkProcedure.

Each finds a snapshot as Java's SnapshotManager does (``laterOrEqualTimeMills``,
``earlierOrEqualTimeMills``, ``laterOrEqualWatermark``, ``earlierOrEqualWatermark``: binary
searches over the snapshot ids, since commit times and watermarks grow with the id), then
hands the work to maintenance/tags.py, which tags or rolls back as ``create_tag`` and
``rollback`` do (crash-safe order, files of the rolled back snapshots deleted).

    CALL sys.create_tag_from_timestamp(`table` => 'db.t', tag => 'd1', `timestamp` => 1700000000000)
    create_tag_from_timestamp(catalog, "db.t", "d1", 1700000000000, "1 d")
    CALL sys.rollback_to_timestamp(`table` => 'db.t', `timestamp` => 1700000000000)
    rollback_to_timestamp(catalog, "db.t", 1700000000000)
    CALL sys.rollback_to_watermark(`table` => 'db.t', watermark => 1700000000000)
"""

from __future__ import annotations

from typing import NamedTuple

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.maintenance import tags as tag_ops
from paimon_pyspark.procedures.calls import RollbackResult
from paimon_pyspark.read.incremental import earlier_or_equal
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.managers import SnapshotManager

_LONG_MIN = -(2**63)


class CreateTagResult(NamedTuple):
    """Java's result row of ``create_tag_from_timestamp`` / ``create_tag_from_watermark``
    (columns ``tagName``, ``snapshot``, ``commit_time``, ``watermark``)."""

    tag_name: str
    snapshot: int
    commit_time: int
    watermark: str
    """``String.valueOf`` of the snapshot's watermark: ``'null'`` when it has none, as Java."""


def _long_arg(procedure: str, name: str, value: object) -> int | None:
    """A BIGINT argument: an int or its digits (a sign allowed); None if not given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("+-").isdecimal():
            value = int(text)
    if isinstance(value, int) and not isinstance(value, bool) and _LONG_MIN <= value < 2**63:
        return value
    raise InvalidArgumentError(
        f"{procedure}: argument '{name}' must be a BIGINT (int), got {describe(value)}."
    )


def _tag_arg(procedure: str, tag: object) -> str:
    if not isinstance(tag, str):
        raise InvalidArgumentError(
            f"{procedure}: argument 'tag' must be a string, got {describe(tag)}."
        )
    return tag


def _retained_arg(procedure: str, time_retained: object) -> str | None:
    if time_retained is None or (isinstance(time_retained, str) and not time_retained.strip()):
        return None
    if not isinstance(time_retained, str):
        raise InvalidArgumentError(
            f"{procedure}: argument 'time_retained' must be a duration string ('1 d'), got "
            f"{describe(time_retained)}."
        )
    return time_retained


# --- Java's SnapshotManager searches ------------------------------------------------------


def _earliest(sm: SnapshotManager, latest: int) -> Snapshot | None:
    """Java's ``earliestSnapshot(latest)``: the earliest snapshot still readable (one expired
    while we looked is skipped)."""
    earliest = sm.earliest_id()
    if earliest is None:
        return None
    for i in range(earliest, latest + 1):
        snapshot = sm.snapshot_if_exists(i)
        if snapshot is not None:
            return snapshot
    return None


def later_or_equal_time(sm: SnapshotManager, millis: int) -> Snapshot | None:
    """The earliest snapshot committed at or after ``millis`` (Java's laterOrEqualTimeMills)."""
    latest_id = sm.latest_id()
    first = None if latest_id is None else _earliest(sm, latest_id)
    if latest_id is None or first is None:
        return None
    if sm.snapshot(latest_id).time_millis < millis:
        return None
    low, high = first.id, latest_id
    found: Snapshot | None = None
    while low <= high:
        mid = low + (high - low) // 2
        snapshot = sm.snapshot(mid)
        if snapshot.time_millis > millis:
            high, found = mid - 1, snapshot
        elif snapshot.time_millis < millis:
            low = mid + 1
        else:
            return snapshot
    return found


def _watermark_search(
    sm: SnapshotManager, watermark: int, later: bool, table: str
) -> Snapshot | None:
    """Java's ``laterOrEqualWatermark`` (``later``) or ``earlierOrEqualWatermark``, quirks kept:
    a watermark at or below the first snapshot's that has one answers that snapshot either
    way, and snapshots without a watermark are stepped over downwards."""
    latest_id = sm.latest_id()
    if latest_id is None:
        return None
    latest_mark = sm.snapshot(latest_id).watermark
    if latest_mark is None:
        # Java unboxes this null and fails with a NullPointerException
        raise InvalidArgumentError(
            f"Table '{table}': the latest snapshot {latest_id} has no watermark; "
            "no snapshot can be found by watermark."
        )
    if latest_mark == _LONG_MIN:
        return None
    first = _earliest(sm, latest_id)
    if first is None:
        return None
    earliest = first.id
    first_mark = first.watermark
    while first_mark is None and earliest < latest_id:
        earliest += 1
        first_mark = sm.snapshot(earliest).watermark
    if first_mark is None:
        return None
    if first_mark >= watermark:
        return sm.snapshot(earliest)
    low, high = earliest, latest_id
    found: Snapshot | None = None
    while low <= high:
        mid = low + (high - low) // 2
        snapshot = sm.snapshot(mid)
        mark = snapshot.watermark
        if mark is None:
            while mid >= low:
                mid -= 1
                mark = sm.snapshot(mid).watermark
                if mark is not None:
                    break
        if mark is None:
            low = mid + 1
        elif mark > watermark:
            high = mid - 1
            if later:
                found = snapshot
        elif mark < watermark:
            low = mid + 1
            if not later:
                found = snapshot
        else:
            return snapshot
    return found


def later_or_equal_watermark(
    sm: SnapshotManager, watermark: int, table: str = ""
) -> Snapshot | None:
    """Java's laterOrEqualWatermark (``table`` names the table in errors)."""
    return _watermark_search(sm, watermark, True, table)


def earlier_or_equal_watermark(
    sm: SnapshotManager, watermark: int, table: str = ""
) -> Snapshot | None:
    """Java's earlierOrEqualWatermark (``table`` names the table in errors)."""
    return _watermark_search(sm, watermark, False, table)


# --- procedures -----------------------------------------------------------------------------


def _tag(store: FileStore, tag: str, snapshot: Snapshot, time_retained: str | None) -> None:
    """Java's ``createTag(tag, snapshot.id(), timeRetained)``: no retention when none is given
    (the table's ``tag.default-time-retained`` is not applied, as in Java)."""
    tag_ops.create_tag(store, tag, snapshot.id, time_retained=time_retained, default_retained=False)


def _result(tag: str, snapshot: Snapshot) -> CreateTagResult:
    mark = "null" if snapshot.watermark is None else str(snapshot.watermark)
    return CreateTagResult(tag, snapshot.id, snapshot.time_millis, mark)


def create_tag_from_timestamp(
    catalog: Catalog,
    table: str,
    tag: str,
    timestamp: int | str | None = None,
    time_retained: str | None = None,
) -> CreateTagResult:
    """Tag the earliest snapshot of ``table`` committed at or after ``timestamp`` (epoch
    milliseconds), or a tag's snapshot if an earlier-committed one qualifies; returns Java's
    row (tag, snapshot id, its commit time, its watermark).

    Java's ``CALL sys.create_tag_from_timestamp(`table` => 'db.t', tag => 't1', `timestamp`
    => 1700000000000, time_retained => '1 d')`` (CreateTagFromTimestampProcedure, the same
    arguments in Spark and Flink). Of the tags, the one with the lowest snapshot id whose
    commit time is at or after ``timestamp`` is taken instead when it was committed before
    the snapshot found, so a snapshot that expired but is tagged can be tagged again. Spark's
    procedure declares ``timestamp`` optional and reads a missing one as 0 (the earliest
    snapshot); so does this. No snapshot at or after it raises InvalidArgumentError, an
    existing tag TagAlreadyExistError, as in Java.
    """
    name = "create_tag_from_timestamp"
    tag_name = _tag_arg(name, tag)
    millis = _long_arg(name, "timestamp", timestamp) or 0
    retained = _retained_arg(name, time_retained)
    store = catalog.get_table(table).store
    snapshot = later_or_equal_time(store.snapshot_manager, millis)
    for tagged in store.tag_manager.tagged_snapshots():
        if millis <= tagged.time_millis:
            if snapshot is None or tagged.time_millis < snapshot.time_millis:
                snapshot = tagged
            break
    if snapshot is None:
        raise InvalidArgumentError(
            f"{name}: table '{table}': Could not find any snapshot whose commit-time later "
            f"than {millis}."
        )
    _tag(store, tag_name, snapshot, retained)
    return _result(tag_name, snapshot)


def create_tag_from_watermark(
    catalog: Catalog,
    table: str,
    tag: str,
    watermark: int | str,
    time_retained: str | None = None,
) -> CreateTagResult:
    """Tag the earliest snapshot of ``table`` whose watermark is at or after ``watermark``, or
    a tag's snapshot with a lower watermark that qualifies; returns Java's row.

    Flink's ``CALL sys.create_tag_from_watermark(`table` => 'db.t', tag => 't1', watermark =>
    1700000000000, time_retained => '1 d')`` (CreateTagFromWatermarkProcedure; Spark 1.4.2 has
    none). Java's laterOrEqualWatermark decides, quirks included (module docstring); a table
    whose latest snapshot has no watermark raises InvalidArgumentError (Java: a
    NullPointerException).
    """
    name = "create_tag_from_watermark"
    tag_name = _tag_arg(name, tag)
    mark = _long_arg(name, "watermark", watermark)
    if mark is None:
        raise InvalidArgumentError(f"{name}: argument 'watermark' is required.")
    retained = _retained_arg(name, time_retained)
    store = catalog.get_table(table).store
    snapshot = later_or_equal_watermark(store.snapshot_manager, mark, table)
    for tagged in store.tag_manager.tagged_snapshots():
        if tagged.watermark is not None and mark <= tagged.watermark:
            if (
                snapshot is None
                or snapshot.watermark is None
                or tagged.watermark < snapshot.watermark
            ):
                snapshot = tagged
            break
    if snapshot is None:
        raise InvalidArgumentError(
            f"{name}: table '{table}': Could not find any snapshot whose watermark later than "
            f"{mark}."
        )
    _tag(store, tag_name, snapshot, retained)
    return _result(tag_name, snapshot)


def _rollback_found(
    catalog: Catalog, table: str, procedure: str, value: int, by_watermark: bool
) -> RollbackResult:
    store = catalog.get_table(table).store
    sm = store.snapshot_manager
    latest = sm.latest_id()
    if latest is None:
        raise InvalidArgumentError(
            f"{procedure}: table '{table}': Latest snapshot is null, can not rollback."
        )
    found = (
        earlier_or_equal_watermark(sm, value, table)
        if by_watermark
        else earlier_or_equal(sm, value)
    )
    if found is None:
        raise InvalidArgumentError(
            f"{procedure}: table '{table}': Can not find snapshot earlier than {value}."
        )
    return RollbackResult(latest, tag_ops.rollback_to(store, found.id))


def rollback_to_timestamp(catalog: Catalog, table: str, timestamp: int | str) -> RollbackResult:
    """Roll ``table`` back to its latest snapshot committed at or before ``timestamp`` (epoch
    milliseconds); returns (previous latest, rolled back to).

    Java's ``CALL sys.rollback_to_timestamp(`table` => 'db.t', `timestamp` => 1700000000000)``
    (RollbackToTimestampProcedure, the same arguments in Spark and Flink; Spark's result row).
    The rollback itself is ``rollback``'s (maintenance/tags.py). No snapshot that early (the
    earliest one is later, or the table is empty) raises InvalidArgumentError, as in Java.
    """
    name = "rollback_to_timestamp"
    millis = _long_arg(name, "timestamp", timestamp)
    if millis is None:
        raise InvalidArgumentError(f"{name}: argument 'timestamp' is required.")
    return _rollback_found(catalog, table, name, millis, by_watermark=False)


def rollback_to_watermark(catalog: Catalog, table: str, watermark: int | str) -> RollbackResult:
    """Roll ``table`` back to its latest snapshot whose watermark is at or before
    ``watermark``; returns (previous latest, rolled back to).

    Java's ``CALL sys.rollback_to_watermark(`table` => 'db.t', watermark => 1700000000000)``
    (RollbackToWatermarkProcedure; Spark's result row, Flink answers a sentence). Java's
    earlierOrEqualWatermark decides, quirks included: a watermark at or below the first
    snapshot's that has one rolls back to that snapshot. A table whose latest snapshot has no
    watermark raises InvalidArgumentError (Java: a NullPointerException).
    """
    name = "rollback_to_watermark"
    mark = _long_arg(name, "watermark", watermark)
    if mark is None:
        raise InvalidArgumentError(f"{name}: argument 'watermark' is required.")
    return _rollback_found(catalog, table, name, mark, by_watermark=True)


__all__ = [
    "CreateTagResult",
    "create_tag_from_timestamp",
    "create_tag_from_watermark",
    "earlier_or_equal_watermark",
    "later_or_equal_time",
    "later_or_equal_watermark",
    "rollback_to_timestamp",
    "rollback_to_watermark",
]
