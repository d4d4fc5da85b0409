"""Automatic tags and tag expiry: ``tag.automatic-creation`` and tags' ``time_retained``.

Mirrors org.apache.paimon.tag.TagAutoManager, TagAutoCreation, TagPeriodHandler,
TagTimeExtractor, TagTimeExpire and TagBatchCreation (Spark's WriteHelper.batchCreateTag).

- ``process-time`` / ``watermark``: every snapshot after the newest automatic tag is looked at
  in id order; its time (``timeMillis`` in ``sink.process-time-zone``, or its watermark in
  ``sink.watermark-time-zone``) minus ``tag.creation-delay`` reaching the end of the period
  after the last tag's creates the tag of the period before its own, named by
  ``tag.creation-period`` (``daily``, ``hourly``, ``two-hours``) and ``tag.period-formatter``,
  or by ``tag.creation-period-duration`` (``yyyyMMddHHmm``). ``tag.automatic-completion`` names
  it after the period following the last tag instead. Java keeps where it stopped in the
  commit object; we start again from the tags on disk at every commit, which is where a fresh
  Java commit starts, so a crash between two steps loses nothing (and skip, per table in this
  process, the snapshots after the newest tag already looked at). Beyond
  ``tag.num-retained-max`` automatic tags, the oldest go (their files with them when their
  snapshot expired).
- ``batch``: the latest snapshot is tagged ``batch-write-<yyyy-MM-dd of its time>`` (or
  ``tag.batch.customized-name``), replacing a tag of that name, then, beyond
  ``tag.num-retained-max`` tags of any kind, the oldest go (Java's TagBatchCreation). Java's
  Spark writer does it after each non-empty commit; we do it after each commit whose latest
  snapshot does not carry the tag yet (so a rerun after a crash finishes it, and an empty
  commit changes nothing).
- Expiry: a tag whose ``tagCreateTime + tagTimeRetained`` has passed goes, unless
  ``tag.time-expire-enabled`` is false; the procedure's ``older_than`` also takes the tags
  created before it (a tag without a creation time by its file's modification time).

Every "now" is :mod:`paimon_pyspark.store.clock`'s.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import threading
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_pyspark.errors import CorruptTableError, InvalidArgumentError, OptionError
from paimon_pyspark.maintenance.tags import check_tag_name, delete_tag
from paimon_pyspark.options import option_value, parse_duration_ms
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store import clock
from paimon_pyspark.store.managers import TAG_PREFIX

if TYPE_CHECKING:
    from paimon_pyspark.options import CoreOptions
    from paimon_pyspark.store.file_store import FileStore

LOG = logging.getLogger(__name__)

TAG_AUTOMATIC_CREATION = "tag.automatic-creation"
TAG_CREATION_PERIOD = "tag.creation-period"
TAG_CREATION_DELAY = "tag.creation-delay"
TAG_PERIOD_FORMATTER = "tag.period-formatter"
TAG_PERIOD_DURATION = "tag.creation-period-duration"
TAG_NUM_RETAINED_MAX = "tag.num-retained-max"
TAG_DEFAULT_TIME_RETAINED = "tag.default-time-retained"
TAG_TIME_EXPIRE_ENABLED = "tag.time-expire-enabled"
TAG_AUTOMATIC_COMPLETION = "tag.automatic-completion"
TAG_BATCH_CUSTOMIZED_NAME = "tag.batch.customized-name"
SINK_PROCESS_TIME_ZONE = "sink.process-time-zone"
SINK_WATERMARK_TIME_ZONE = "sink.watermark-time-zone"
SNAPSHOT_WATERMARK_IDLE_TIMEOUT = "snapshot.watermark-idle-timeout"

BATCH_WRITE_TAG_PREFIX = "batch-write-"
_JAVA_LONG_MIN = -(2**63)
_EPOCH = dt.datetime(1970, 1, 1)


# --- periods (TagPeriodHandler) --------------------------------------------------------------

_D4, _D2 = "([0-9]{4})", "([0-9]{2})"
_FORMATS: dict[str, tuple[str, str]] = {
    # name: (regex of the whole tag, strftime pattern)
    "day": (f"{_D4}-{_D2}-{_D2}", "%Y-%m-%d"),
    "day_nodash": (f"{_D4}{_D2}{_D2}", "%Y%m%d"),
    "hour": (f"{_D4}-{_D2}-{_D2} {_D2}", "%Y-%m-%d %H"),
    "hour_nodash": (f"{_D4}{_D2}{_D2} {_D2}", "%Y%m%d %H"),
    "hour_compact": (f"{_D4}{_D2}{_D2}{_D2}", "%Y%m%d%H"),
    "minute": (f"{_D4}{_D2}{_D2}{_D2}{_D2}", "%Y%m%d%H%M"),
}


@dataclass(frozen=True)
class Period:
    """One TagPeriodHandler: the period's length and the tag names' format."""

    length: dt.timedelta
    format: str
    daily: bool = False

    def tag_to_time(self, name: str) -> dt.datetime | None:
        """The period start a tag name stands for; None if it is not an automatic tag's name
        (Java's ``isAutoTag``: strict parsing; a daily tag is read up to its first space)."""
        if self.daily:
            name = name.split(" ")[0]
        pattern, _ = _FORMATS[self.format]
        m = re.fullmatch(pattern, name)
        if m is None:
            return None
        try:
            parts = [int(g) for g in m.groups()] + [0, 0]
            return dt.datetime(parts[0], parts[1], parts[2], parts[3], parts[4])
        except ValueError:
            return None

    def time_to_tag(self, time: dt.datetime) -> str:
        year = f"{time.year:04d}"  # strftime's %Y does not pad on every platform
        return time.strftime(_FORMATS[self.format][1].replace("%Y", year))

    def normalize_to_previous_tag(self, time: dt.datetime) -> dt.datetime:
        """The start of the period before the one ``time`` falls in (periods counted from the
        epoch in local time, as Java's ``Timestamp.fromLocalDateTime``)."""
        period_ms = self.length // dt.timedelta(milliseconds=1)
        millis = (time - _EPOCH) // dt.timedelta(milliseconds=1)
        floor = abs(millis) // period_ms * period_ms * (1 if millis >= 0 else -1)
        return _EPOCH + dt.timedelta(milliseconds=floor) - self.length


def period_of(options: CoreOptions) -> Period:
    """Java's ``TagPeriodHandler.create``: the period duration when set, else the period."""
    duration = options.get(TAG_PERIOD_DURATION)
    if duration is not None:
        ms = parse_duration_ms(duration, TAG_PERIOD_DURATION, options.table)
        return Period(dt.timedelta(milliseconds=ms), "minute")
    period = str(_option(options, TAG_CREATION_PERIOD, "daily"))
    formatter = str(_option(options, TAG_PERIOD_FORMATTER, "with_dashes"))
    if period == "daily":
        return Period(
            dt.timedelta(days=1), "day" if formatter == "with_dashes" else "day_nodash", True
        )
    if period == "hourly":
        fmt = {"with_dashes": "hour", "without_dashes": "hour_nodash"}.get(formatter)
        return Period(dt.timedelta(hours=1), fmt or "hour_compact")
    return Period(dt.timedelta(hours=2), "hour")


def _option(options: CoreOptions, key: str, default: int | bool | str) -> int | float | bool | str:
    return (
        default if key not in options.options else option_value(options.options, key, options.table)
    )


def _zone(options: CoreOptions, key: str, default: str | None) -> dt.tzinfo | None:
    """Java's ``ZoneId.of``: a region (``Asia/Shanghai``), ``UTC``/``Z`` or an offset
    (``+08:00``, ``UTC+8``); None: the system's zone."""
    raw = options.get(key, default)
    if raw is None:
        return None
    text = raw.strip()
    m = re.fullmatch(r"(?:UTC|GMT|UT)?([+-])([0-9]{1,2})(?::?([0-9]{2}))?", text)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        return dt.timezone(sign * dt.timedelta(minutes=minutes))
    if text in ("Z", "UTC", "GMT", "UT"):
        return dt.UTC
    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as e:
        raise OptionError(
            f"Table '{options.table}': option '{key}' = '{raw}' is not a time zone id."
        ) from e


def _local(millis: int, zone: dt.tzinfo | None) -> dt.datetime:
    """Java's ``Instant.ofEpochMilli(millis).atZone(zone).toLocalDateTime()``."""
    seconds, rest = divmod(millis, 1000)
    if zone is None:
        base = dt.datetime.fromtimestamp(seconds)
    else:
        base = dt.datetime.fromtimestamp(seconds, zone).replace(tzinfo=None)
    return base + dt.timedelta(milliseconds=rest)


def _now_in(zone: dt.tzinfo | None) -> dt.datetime:
    return _local(clock.now_millis(), zone)


# --- automatic creation (TagAutoCreation) ----------------------------------------------------


def creation_mode(options: CoreOptions) -> str:
    return str(_option(options, TAG_AUTOMATIC_CREATION, "none"))


@dataclass
class _AutoCreation:
    store: FileStore
    period: Period
    extract: Callable[[Snapshot], dt.datetime | None]
    delay: dt.timedelta
    num_retained_max: int | None
    retained_ms: int | None
    completion: bool
    key: tuple[str, ...] = ()
    next_tag: dt.datetime | None = None
    next_snapshot: int = 1
    newest: tuple[int, tuple[str, ...]] | None = None

    @staticmethod
    def of(store: FileStore) -> _AutoCreation | None:
        options = store.options
        mode = creation_mode(options)
        if mode in ("none", "batch"):
            return None
        if mode == "process-time":
            zone = _zone(options, SINK_PROCESS_TIME_ZONE, None)

            def extract(s: Snapshot) -> dt.datetime | None:
                return _local(s.time_millis, zone)

        else:
            zone = _zone(options, SINK_WATERMARK_TIME_ZONE, "UTC")

            def extract(s: Snapshot) -> dt.datetime | None:
                w = s.watermark
                return None if w is None or w == _JAVA_LONG_MIN else _local(w, zone)

        period = period_of(options)
        delay = dt.timedelta(milliseconds=int(_option(options, TAG_CREATION_DELAY, 0)))
        if not period.length > delay:
            raise InvalidArgumentError(
                f"Table '{store.name}': '{TAG_CREATION_DELAY}' ({delay}) must be shorter than "
                f"one tag period ({period.length})."
            )
        retained = options.get(TAG_DEFAULT_TIME_RETAINED)
        max_raw = _option(options, TAG_NUM_RETAINED_MAX, -1)
        creation = _AutoCreation(
            store,
            period,
            extract,
            delay,
            None if TAG_NUM_RETAINED_MAX not in options.options else int(max_raw),
            None
            if retained is None
            else parse_duration_ms(retained, TAG_DEFAULT_TIME_RETAINED, store.name),
            bool(_option(options, TAG_AUTOMATIC_COMPLETION, False)),
            (store.tag_manager.tag_dir, mode, repr(period), str(delay), repr(zone)),
        )
        creation._start()
        return creation

    def auto_tags(self) -> list[tuple[int, list[str]]]:
        """The automatic tags by snapshot id, oldest first (``tags(isAutoTag)``)."""
        by_id: dict[int, list[str]] = {}
        for name, snapshot in self.store.tag_manager.tags().items():
            if self.period.tag_to_time(name) is not None:
                by_id.setdefault(snapshot.id, []).append(name)
        return [(i, sorted(by_id[i])) for i in sorted(by_id)]

    def _start(self) -> None:
        tags = self.auto_tags()
        sm = self.store.snapshot_manager
        if not tags:
            earliest = sm.earliest_id()
            self.next_snapshot = 1 if earliest is None else earliest
        else:
            last_id, names = tags[-1]
            self.next_snapshot = last_id + 1
            time = self.period.tag_to_time(_one_auto_tag(self.store, names))
            assert time is not None
            self.next_tag = time + self.period.length
            self.newest = (last_id, tuple(names))
        # Snapshots looked at since the newest tag made none, and cannot make one while it is
        # the newest: resume after them, as Java's commit object does, if the last one looked
        # at is still the same snapshot (a rollback may have replaced it).
        with _PROGRESS_LOCK:
            cached = _PROGRESS.get(self.key)
        if cached is None or cached[0] != self.newest or cached[1] <= self.next_snapshot:
            return
        seen = sm.snapshot_if_exists(cached[1] - 1)
        if seen is not None and (seen.time_millis, seen.commit_user) == cached[2]:
            self.next_snapshot = cached[1]

    def run(self) -> None:
        sm = self.store.snapshot_manager
        while True:
            snapshot = sm.snapshot_if_exists(self.next_snapshot)
            if snapshot is not None:
                self._try_to_create(snapshot)
                self.next_snapshot += 1
                continue
            earliest = sm.earliest_id()
            if earliest is not None and earliest > self.next_snapshot:
                self.next_snapshot = earliest
            else:
                self._trim()  # a run that failed half-way may have left it to do
                self._remember()
                return

    def _remember(self) -> None:
        seen = self.store.snapshot_manager.snapshot_if_exists(self.next_snapshot - 1)
        if seen is None:
            return
        with _PROGRESS_LOCK:
            if len(_PROGRESS) >= _PROGRESS_MAX:
                _PROGRESS.clear()
            _PROGRESS[self.key] = (
                self.newest,
                self.next_snapshot,
                (seen.time_millis, seen.commit_user),
            )

    def _due(self, time: dt.datetime) -> bool:
        return self.next_tag is None or time - self.delay >= self.next_tag + self.period.length

    def force_creating_snapshot(self, now: dt.datetime) -> bool:
        return self._due(now)

    def _try_to_create(self, snapshot: Snapshot) -> None:
        time = self.extract(snapshot)
        if time is None or not self._due(time):
            return
        this_tag = self.period.normalize_to_previous_tag(time)
        if self.completion and self.next_tag is not None:
            this_tag = self.next_tag
        name = self.period.time_to_tag(this_tag)
        tags = self.store.tag_manager
        if not tags.tag_exists(name):
            tags.try_create(snapshot, name, self.retained_ms)
        self.next_tag = this_tag + self.period.length
        self.newest = (snapshot.id, (name,))
        self._trim()

    def _trim(self) -> None:
        """Beyond ``tag.num-retained-max`` automatic tags, delete the oldest."""
        if self.num_retained_max is None:
            return
        auto = self.auto_tags()
        kept = auto[max(0, len(auto) - self.num_retained_max) :]
        self.newest = (kept[-1][0], tuple(kept[-1][1])) if kept else None
        for _, names in auto[: max(0, len(auto) - self.num_retained_max)]:
            name = _one_auto_tag(self.store, names)
            LOG.info(
                "Table '%s': delete tag %s, beyond tag.num-retained-max = %d automatic tags.",
                self.store.name,
                name,
                self.num_retained_max,
            )
            delete_tag(self.store, name)


_PROGRESS_LOCK = threading.Lock()
_PROGRESS: dict[
    tuple[str, ...], tuple[tuple[int, tuple[str, ...]] | None, int, tuple[int, str]]
] = {}
"""Per table and tag settings: the newest automatic tag, the next snapshot to look at and the
(time, commit user) of the one before it; bounded by :data:`_PROGRESS_MAX` tables."""
_PROGRESS_MAX = 1024


def _one_auto_tag(store: FileStore, names: list[str]) -> str:
    if len(names) != 1:
        raise CorruptTableError(
            f"Table '{store.name}': There are more than 1 auto-created tags of the same "
            f"snapshot: {','.join(names)}. This is unexpected."
        )
    return names[0]


def force_creating_snapshot(store: FileStore) -> bool:
    """Whether a streaming commit with nothing to commit should still make a snapshot so the
    next automatic tag can be created (Java's ``TableCommitImpl.forceCreatingSnapshot`` for
    ``process-time``, and ``watermark`` with ``snapshot.watermark-idle-timeout``; never for
    ``batch``)."""
    options = store.options
    mode = creation_mode(options)
    if mode == "process-time":
        creation = _AutoCreation.of(store)
        assert creation is not None
        return creation.force_creating_snapshot(
            _now_in(_zone(options, SINK_PROCESS_TIME_ZONE, None))
        )
    if mode == "watermark" and options.get(SNAPSHOT_WATERMARK_IDLE_TIMEOUT) is not None:
        latest = store.snapshot_manager.latest()
        if latest is None or latest.watermark is None:
            return False
        idle = parse_duration_ms(
            options.options[SNAPSHOT_WATERMARK_IDLE_TIMEOUT], SNAPSHOT_WATERMARK_IDLE_TIMEOUT
        )
        return clock.now_local() - dt.timedelta(milliseconds=idle) >= _local(latest.watermark, None)
    return False


# --- batch creation (TagBatchCreation) -------------------------------------------------------


def batch_tag_name(store: FileStore, snapshot: Snapshot) -> str:
    custom = store.options.get(TAG_BATCH_CUSTOMIZED_NAME)
    if custom is not None:
        return check_tag_name(custom, store.name, TAG_BATCH_CUSTOMIZED_NAME)
    local = _local(snapshot.time_millis, _zone(store.options, SINK_PROCESS_TIME_ZONE, None))
    return BATCH_WRITE_TAG_PREFIX + local.strftime(f"{local.year:04d}-%m-%d")


def create_batch_tag(store: FileStore) -> str | None:
    """Tag the latest snapshot as a batch write does; the tag's name, or None when there is no
    snapshot or the tag is there already."""
    snapshot = store.snapshot_manager.latest()
    if snapshot is None:
        return None
    name = batch_tag_name(store, snapshot)
    tags = store.tag_manager
    current = tags.get(name)
    if current is not None and current.id == snapshot.id:
        _expire_batch_tags(store)  # a run that failed half-way may have left it to do
        return None
    options = store.options
    retained = options.get(TAG_DEFAULT_TIME_RETAINED)
    retained_ms = (
        None if retained is None else parse_duration_ms(retained, TAG_DEFAULT_TIME_RETAINED)
    )
    if current is not None:
        delete_tag(store, name)
    if not tags.try_create(snapshot, name, retained_ms):
        LOG.warning(
            "Table '%s': Failed to create tag '%s' from snapshot %d (created meanwhile), you "
            "can create this tag manually.",
            store.name,
            name,
            snapshot.id,
        )
    _expire_batch_tags(store)
    return name


def _expire_batch_tags(store: FileStore) -> None:
    """Beyond ``tag.num-retained-max`` tags (of any kind), delete the oldest: whole snapshots'
    tags first, then, in the snapshot that crosses the limit, by tag file age."""
    if TAG_NUM_RETAINED_MAX not in store.options.options:
        return
    keep = int(_option(store.options, TAG_NUM_RETAINED_MAX, 0))
    tags = store.tag_manager
    by_id: dict[int, list[str]] = {}
    for name, snapshot in tags.tags().items():
        by_id.setdefault(snapshot.id, []).append(name)
    count = sum(len(v) for v in by_id.values())
    for i in sorted(by_id):
        if count <= keep:
            return
        names = sorted(by_id[i], key=lambda n: (store.file_io.mtime(tags.tag_path(n)), n))
        for name in names:
            delete_tag(store, name)
            count -= 1
            if count == keep:
                return


# --- expiry (TagTimeExpire) ------------------------------------------------------------------


@dataclass(frozen=True)
class TagTimes:
    """A tag file's ``tagCreateTime`` and ``tagTimeRetained``, None where it has none."""

    create_time: dt.datetime | None
    time_retained: dt.timedelta | None


def read_tag_times(text: str, path: str) -> TagTimes:
    try:
        data = json.loads(text)
        created = data.get("tagCreateTime")
        retained = data.get("tagTimeRetained")
        create_time = None if created is None else _jackson_local_date_time(created)
        time_retained = None if retained is None else dt.timedelta(seconds=float(retained))
    except (ValueError, TypeError, AttributeError, OverflowError) as e:
        raise CorruptTableError(f"Tag file {path} is not valid: {e}") from e
    return TagTimes(create_time, time_retained)


def _jackson_local_date_time(value: object) -> dt.datetime:
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    if not isinstance(value, list):
        raise ValueError(f"tagCreateTime is {value!r}")
    parts = [int(v) for v in value] + [0] * (7 - len(value))
    year, month, day, hour, minute, second, nanos = parts[:7]
    return dt.datetime(year, month, day, hour, minute, second, nanos // 1000)


def expire_tags(store: FileStore, older_than: dt.datetime | None = None) -> list[str]:
    """Delete the tags past their ``time_retained`` and, with ``older_than``, those created
    before it; their names, in name order (Java's TagTimeExpire.expire)."""
    tags = store.tag_manager
    now = clock.now_local()
    expired = []
    for file_name in sorted(store.file_io.list_names(tags.tag_dir)):
        if not file_name.startswith(TAG_PREFIX):
            continue
        name = file_name[len(TAG_PREFIX) :]
        path = tags.tag_path(name)
        try:
            times = read_tag_times(store.file_io.read_text(path), path)
        except CorruptTableError:
            if not tags.tag_exists(name):
                continue  # deleted meanwhile
            raise
        create_time, retained = times.create_time, times.time_retained
        if create_time is None or retained is None:
            if older_than is None:
                continue
            try:
                create_time = dt.datetime.fromtimestamp(store.file_io.mtime(path))
            except OSError:
                LOG.warning("Tag path %s not exist, skip expire it.", path)
                continue
        reached = retained is not None and now > create_time + retained
        older = older_than is not None and older_than > create_time
        if reached or older:
            LOG.info(
                "Table '%s': delete tag %s: created %s, retained %s, older than %s.",
                store.name,
                name,
                create_time,
                retained,
                older_than,
            )
            delete_tag(store, name)
            expired.append(name)
    return expired


# --- the steps of a commit's maintenance -----------------------------------------------------


def run_tag_auto_manager(store: FileStore) -> None:
    """Java's ``TagAutoManager.run`` (``trigger_tag_automatic_creation``): automatic creation
    (``process-time``, ``watermark``), then expiry by time unless ``tag.time-expire-enabled``
    is false."""
    creation = _AutoCreation.of(store)
    if creation is not None:
        creation.run()
    if time_expire_enabled(store.options):
        expire_tags(store)


def time_expire_enabled(options: CoreOptions) -> bool:
    return bool(_option(options, TAG_TIME_EXPIRE_ENABLED, True))


def create_tags_after_commit(store: FileStore) -> None:
    """The automatic tag creation step of a commit's maintenance (process-time and watermark
    tags; Java's TagAutoManager builds no creation for ``batch``, which batch writes do after
    the commit and its maintenance: :func:`create_tag_after_batch_write`)."""
    mode = creation_mode(store.options)
    if mode == "batch":
        return
    creation = _AutoCreation.of(store)
    if creation is not None:
        creation.run()


def create_tag_after_batch_write(store: FileStore) -> None:
    """The batch tag of a batch write (``tag.automatic-creation = batch``), created after its
    commit and that commit's maintenance, as Java's Spark writers' postCommit and Flink's batch
    sink do; compactions and other procedures commit without one, as in Java."""
    if creation_mode(store.options) == "batch":
        create_batch_tag(store)


def expire_tags_after_commit(store: FileStore) -> None:
    """The tag expiry step of a commit's maintenance (tags past their ``time_retained``)."""
    if time_expire_enabled(store.options):
        expire_tags(store)


__all__ = [
    "Period",
    "TagTimes",
    "batch_tag_name",
    "create_batch_tag",
    "create_tag_after_batch_write",
    "create_tags_after_commit",
    "creation_mode",
    "expire_tags",
    "expire_tags_after_commit",
    "force_creating_snapshot",
    "period_of",
    "read_tag_times",
    "run_tag_auto_manager",
]
