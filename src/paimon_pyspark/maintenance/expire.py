"""Snapshot expiration: which snapshots go, and in which order their files are deleted.

Mirrors org.apache.paimon.table.ExpireSnapshotsImpl with org.apache.paimon.options.ExpireConfig
(built from CoreOptions.expireConfig): of the snapshots from the earliest to the latest,

- those beyond ``snapshot.num-retained.max`` (newest kept) always expire;
- the next ones expire while older than ``snapshot.time-retained`` (the first younger one
  stops the walk), but never one of the newest ``snapshot.num-retained.min``, nor one that a
  consumer (``consumer/consumer-<id>``) will still read, nor more than ``snapshot.expire.limit``
  counted from the earliest in one run.

With ``end`` the first snapshot kept, the files go in Java's order, so that a crash at any point
leaves every retained snapshot and tag readable (only expired snapshots may lose files):

1. data files removed by the deltas of snapshots ``(earliest, end]`` and used by no retained
   snapshot or tag (snapshot_deletion.py says how that is decided), then changelog files of the
   expired snapshots, then (optionally) empty directories;
2. manifests, manifest lists, index manifests, index files and statistics of the expired
   snapshots that the first retained snapshot and the tags do not use;
3. the snapshot files, oldest first, and finally ``snapshot/EARLIEST`` = ``end``.

Tagged snapshots (``tag/tag-<name>``) keep their data files and metadata whether or not their
snapshot file still exists.

When the changelog outlives snapshots (``changelog.num-retained.*`` or ``changelog.time-retained``
above the snapshots', Java's ExpireConfig.isChangelogDecoupled), step 3 first writes each expired
snapshot as its long-lived changelog ``changelog/changelog-<id>`` (and ``changelog/LATEST``),
then deletes the snapshot file, and what that changelog reads stays: a table with a
``changelog-producer`` keeps the changelog files and the changelog manifest list (its base and
delta lists go); one without keeps the delta's APPEND files (level 0, written by a write, not a
compaction) and the base and delta manifest lists. expire_changelog.py expires them later. With
``consumer.changelog-only`` consumers then hold back only that, not snapshot expiry. The
procedure's expiry (``expire_snapshots``) is not decoupled, as Java's ProcedureUtils builds it
without the changelog settings: it deletes changelog files with their snapshot. Unlike Java, an
expiry that is not decoupled still keeps the level-0 files existing long-lived changelogs read.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_pyspark.errors import CorruptTableError, OptionError
from paimon_pyspark.maintenance.branches import branch_anchors, changelogs_of_other_branches
from paimon_pyspark.maintenance.snapshot_deletion import DataFileCandidate, SnapshotDeletion
from paimon_pyspark.options import JAVA_INT_MAX, CoreOptions
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store import clock

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

LOG = logging.getLogger(__name__)

_NEVER_MS = 2**63 - 1


@dataclass(frozen=True)
class ExpireConfig:
    """Java's ExpireConfig; the builder's defaults here, the table's via :meth:`from_options`.

    ``older_than_ms``, when set, replaces ``time_retained_ms``: snapshots committed before this
    epoch millisecond may expire (the procedure's ``older_than``). The ``changelog_*`` settings,
    None for the snapshots' (Java's builder), are those of the long-lived changelogs
    (expire_changelog.py); ``changelog_older_than_ms`` is ``expire_changelogs``' older_than.
    """

    retain_max: int = JAVA_INT_MAX
    retain_min: int = 1
    time_retained_ms: int = _NEVER_MS
    max_deletes: int = JAVA_INT_MAX
    older_than_ms: int | None = None
    clean_empty_directories: bool = False
    changelog_retain_max: int | None = None
    changelog_retain_min: int | None = None
    changelog_time_retained_ms: int | None = None
    changelog_max_deletes: int | None = None
    changelog_older_than_ms: int | None = None
    consumer_changelog_only: bool = False

    @staticmethod
    def from_options(options: CoreOptions) -> ExpireConfig:
        """Java's CoreOptions.expireConfig: the changelog's settings fall back to the
        snapshots', and ``snapshot.expire.limit`` bounds both."""
        limit = max(0, options.snapshot_expire_limit)
        return ExpireConfig(
            retain_max=options.snapshot_num_retained_max,
            retain_min=options.snapshot_num_retained_min,
            time_retained_ms=options.snapshot_time_retained_ms,
            max_deletes=limit,
            clean_empty_directories=options.snapshot_clean_empty_directories,
            changelog_retain_max=options.changelog_num_retained_max,
            changelog_retain_min=options.changelog_num_retained_min,
            changelog_time_retained_ms=options.changelog_time_retained_ms,
            changelog_max_deletes=limit,
            consumer_changelog_only=options.consumer_changelog_only,
        )

    @property
    def changelog_max(self) -> int:
        return self.retain_max if self.changelog_retain_max is None else self.changelog_retain_max

    @property
    def changelog_min(self) -> int:
        return self.retain_min if self.changelog_retain_min is None else self.changelog_retain_min

    @property
    def changelog_time_ms(self) -> int:
        if self.changelog_time_retained_ms is None:
            return self.time_retained_ms
        return self.changelog_time_retained_ms

    @property
    def changelog_deletes(self) -> int:
        if self.changelog_max_deletes is None:
            return self.max_deletes
        return self.changelog_max_deletes

    @property
    def changelog_decoupled(self) -> bool:
        """The changelog outlives snapshots (Java's ExpireConfig.changelogDecoupled)."""
        return (
            self.changelog_max > self.retain_max
            or self.changelog_min > self.retain_min
            or self.changelog_time_ms > self.time_retained_ms
        )

    def changelog_older_than(self, now_ms: int) -> int:
        """Long-lived changelogs with ``timeMillis`` below this may expire by time."""
        if self.changelog_older_than_ms is not None:
            return self.changelog_older_than_ms
        return now_ms - self.changelog_time_ms

    def older_than(self, now_ms: int) -> int:
        """Snapshots with ``timeMillis`` below this may expire by time."""
        if self.older_than_ms is not None:
            return self.older_than_ms
        return now_ms - self.time_retained_ms

    def check(self) -> None:
        if self.retain_min < 1:
            raise OptionError(f"retain_min must be at least 1, got {self.retain_min}.")
        if self.retain_max < self.retain_min:
            raise OptionError(
                f"retainMax ({self.retain_max}) must not be less than retainMin "
                f"({self.retain_min})."
            )
        if self.max_deletes < 0:
            raise OptionError(f"max_deletes must not be negative, got {self.max_deletes}.")


class ExpireSnapshots:
    """Expire the snapshots of one table (``table.options`` give the defaults)."""

    def __init__(self, store: FileStore, config: ExpireConfig | None = None) -> None:
        self.store = store
        self.expire_config = config or ExpireConfig.from_options(store.options)
        self.snapshot_manager = store.snapshot_manager
        self.tag_manager = store.tag_manager
        self.consumer_manager = store.consumer_manager

    def config(self, config: ExpireConfig) -> ExpireSnapshots:
        self.expire_config = config
        return self

    def expire(self, now_ms: int | None = None, latest_id: int | None = None) -> int:
        """Expire what the config allows; returns how many snapshots were expired.

        ``latest_id``: a snapshot known to exist (the one a commit just made); a newer latest
        only means fewer snapshots expire now. The common case after a commit, nothing old
        enough, is decided before the consumers are listed: they can only keep more.
        """
        cfg = self.expire_config
        cfg.check()
        sm = self.snapshot_manager
        latest = sm.latest_id() if latest_id is None else latest_id
        earliest, hinted = sm.earliest_id_and_hint()
        if latest is None or earliest is None:
            return 0
        now = clock.now_millis() if now_ms is None else now_ms
        older_than = cfg.older_than(now)
        low = max(latest - cfg.retain_max + 1, earliest)
        max_exclusive = min(latest - cfg.retain_min + 1, earliest + cfg.max_deletes)
        first = sm.snapshot_if_exists(low) if low == earliest < max_exclusive else None
        if max_exclusive <= earliest or (first is not None and older_than <= first.time_millis):
            if not hinted:
                sm.write_earliest_hint(earliest)
            return 0
        consumer_next = (
            None if cfg.consumer_changelog_only else self.consumer_manager.min_next_snapshot()
        )
        if consumer_next is not None:
            max_exclusive = min(max_exclusive, consumer_next)
        max_exclusive = min(max_exclusive, earliest + cfg.max_deletes)
        for sid in range(low, max_exclusive):
            snapshot = sm.snapshot_if_exists(sid)
            if snapshot is None:
                continue  # deleted by another expiring process meanwhile
            if older_than <= snapshot.time_millis:
                return self.expire_until(earliest, sid)
        return self.expire_until(earliest, max_exclusive)

    def expire_until(self, earliest_id: int, end_exclusive: int) -> int:
        """Expire snapshots ``[earliest_id, end_exclusive)``; ``end_exclusive`` must exist."""
        sm = self.snapshot_manager
        if end_exclusive <= earliest_id:
            if not sm.earliest_hint_exists():
                sm.write_earliest_hint(earliest_id)
            return 0
        latest = sm.latest_id()
        if latest is None or end_exclusive > latest or not sm.snapshot_exists(end_exclusive):
            # The first snapshot to keep must be there: its files are what we protect.
            return 0
        # one read each: another expiring process may delete one between a check and a read
        found = (sm.snapshot_if_exists(i) for i in range(earliest_id, end_exclusive + 1))
        snapshots = [s for s in found if s is not None]
        if not snapshots or snapshots[-1].id != end_exclusive:
            return 0
        expiring = snapshots[:-1]
        end = snapshots[-1]
        begin = snapshots[0].id
        # other branches' earliest snapshots and tags keep what they read (maintenance/branches)
        tags = self.tag_manager.tagged_snapshots() + branch_anchors(self.store)
        deletion = SnapshotDeletion(self.store)
        decoupled = self.expire_config.changelog_decoupled
        # without a producer, a decoupled changelog is the delta's level-0 (APPEND) files
        keep_appends = decoupled and self.store.options.changelog_producer == "none"

        # 1. data files no retained snapshot or tag uses, then changelog files
        candidates: list[DataFileCandidate] = []
        for s in snapshots:
            if s.id == begin:
                continue  # what it removed belonged to an earlier, already expired snapshot
            removed = deletion.removed_data_files(s)
            if removed is not None:
                candidates.extend(c for c in removed if not (keep_appends and c.appended))
        if candidates:
            protected = self._protected_data_files(deletion, end, latest, tags)
            if protected is not None:
                deleted = deletion.delete_data_files(
                    c for c in candidates if c.file_name not in protected
                )
                LOG.debug("expired %d data files of snapshots [%d, %d)", deleted, begin, end.id)
        shared = changelogs_of_other_branches(self.store, expiring) if not decoupled else set()
        for s in expiring if not decoupled else ():
            if s.changelog_manifest_list and s.changelog_manifest_list not in shared:
                deletion.delete_added_changelog_files(s.changelog_manifest_list)
        if self.expire_config.clean_empty_directories:
            deletion.clean_empty_directories()

        # 2. metadata the first retained snapshot and the tags do not use
        try:
            skip: set[str] | None = deletion.manifest_skipping_set([*tags, end])
        except (CorruptTableError, OSError) as e:
            LOG.info("Skip cleaning manifest files: failed to build the skipping set: %s", e)
            skip = None
        if skip is not None:
            for s in expiring:
                deletion.clean_unused_manifests(
                    s, skip, data_lists=not keep_appends, changelog_list=not decoupled
                )

        # 3. snapshot files, oldest first (each kept as its changelog first), then the hint
        changelogs = self.store.changelog_manager
        for s in expiring:
            if decoupled:
                changelogs.commit_changelog(s, s.id)
                changelogs.commit_long_lived_changelog_latest_hint(s.id)
            sm.delete_snapshot(s.id)
        sm.write_earliest_hint(end.id)
        LOG.info(
            "Table '%s': expired %d snapshot(s), range [%d, %d)",
            self.store.name,
            len(expiring),
            begin,
            end.id,
        )
        return len(expiring)

    def _protected_data_files(
        self, deletion: SnapshotDeletion, end: Snapshot, latest: int, tags: list[Snapshot]
    ) -> set[str] | None:
        """Names of data files a retained snapshot or a tag reads, or None if unknowable.

        Java's skipper holds the files of the newest tag before each snapshot only, and relies on
        a removed file never coming back. We take every tag, the first retained snapshot ``end``
        and every file a later delta ADDs, so no retained snapshot's file can be a candidate.
        """
        sm = self.snapshot_manager
        try:
            protected = deletion.live_file_names(end)
            if not self.expire_config.changelog_decoupled:
                # long-lived changelogs from when it was (or Java's procedure expiry): unlike
                # Java, their level-0 files stay
                protected |= deletion.long_lived_changelog_files()
            for tag in tags:
                protected |= deletion.live_file_names(tag)
            for sid in range(end.id + 1, latest + 1):
                if sm.snapshot_exists(sid):
                    protected |= deletion.added_file_names(sm.snapshot(sid))
        except (CorruptTableError, OSError) as e:
            LOG.info("Skip cleaning data files: failed to build the skipping set: %s", e)
            return None
        # A commit that landed after ``latest`` was read builds on files live at ``latest``,
        # which are protected above; what it adds is new.
        return protected


_TIMESTAMP_RE = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?\s*$"
)


def parse_timestamp_ms(text: str) -> int:
    """``yyyy-MM-dd[ HH:mm:ss[.fff]]`` in the local time zone, as epoch milliseconds.

    Java's ``DateTimeUtils.parseTimestampData(text, 3, TimeZone.getDefault())``, which the
    expire procedures use for ``older_than``.
    """
    m = _TIMESTAMP_RE.match(text)
    if not m:
        raise OptionError(
            f"older_than must be a timestamp like '2024-01-01 12:00:00', got '{text}'."
        )
    y, mo, d, h, mi, s, frac = m.groups()
    micros = int((frac or "0").ljust(9, "0")[:9]) // 1000
    try:
        local = dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0), micros)
    except ValueError as e:
        raise OptionError(f"older_than '{text}' is not a valid timestamp: {e}") from e
    return int(local.astimezone().timestamp() * 1000)
