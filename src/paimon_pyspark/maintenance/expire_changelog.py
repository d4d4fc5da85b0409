"""Long-lived changelog expiration: which ``changelog/changelog-<id>`` go, and their files.

Mirrors org.apache.paimon.table.ExpireChangelogImpl with org.apache.paimon.operation
.ChangelogDeletion. Snapshot expiry (expire.py) writes a long-lived changelog for each snapshot
it expires while the changelog outlives snapshots; this expires them, after each commit's
snapshot expiry (Java's expire runnable) and in ``CALL sys.expire_changelogs``. Of the
long-lived changelogs from the earliest to the latest,

- those older than the newest ``changelog.num-retained.max`` ids (counted back from the latest
  *snapshot*) always expire;
- the next ones expire while older than ``changelog.time-retained``, but never one of the
  newest ``changelog.num-retained.min`` ids, nor one a consumer will still read, nor more than
  ``snapshot.expire.limit`` counted from the earliest, nor the latest long-lived changelog.

Each expired changelog's files: with a changelog manifest list (a producer's changelog), the
changelog files it ADDed, then that list and its manifests; without one, the files its delta
DELETEd (the level-0 files snapshot expiry kept), then its delta and base lists, each only while
it still exists. Files and manifests a tag, the earliest snapshot or the first kept changelog
uses stay. Java protects the data files of the newest tag before each changelog; we protect
every tag's, the earliest snapshot's, the first kept changelog's and every file its or a
snapshot's delta ADDs, by name, as expire.py does.

Unlike Java, which deletes each changelog's files and then its JSON, the JSON files go first,
oldest first, then ``changelog/EARLIEST``, then the files: a crash leaves orphans
(``remove_orphan_files`` finds them), never a listed changelog whose files are gone.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from paimon_pyspark.errors import CorruptTableError, OptionError
from paimon_pyspark.maintenance.branches import branch_anchors
from paimon_pyspark.maintenance.expire import ExpireConfig
from paimon_pyspark.maintenance.snapshot_deletion import DataFileCandidate, SnapshotDeletion
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store import clock

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

LOG = logging.getLogger(__name__)


class ExpireChangelog:
    """Expire the long-lived changelogs of one table (``table.options`` give the defaults)."""

    def __init__(self, store: FileStore, config: ExpireConfig | None = None) -> None:
        self.store = store
        self.expire_config = config or ExpireConfig.from_options(store.options)
        self.snapshot_manager = store.snapshot_manager
        self.changelog_manager = store.changelog_manager
        self.tag_manager = store.tag_manager
        self.consumer_manager = store.consumer_manager

    def expire(self, now_ms: int | None = None) -> int:
        """Expire what the config allows; returns how many ids the expired range spans
        (Java's count, changelogs missing in it included)."""
        cfg = self.expire_config
        retain_max, retain_min = cfg.changelog_max, cfg.changelog_min
        if retain_max < retain_min:
            raise OptionError(
                f"retainMax ({retain_max}) must not be less than retainMin ({retain_min})."
            )
        sm, cm = self.snapshot_manager, self.changelog_manager
        latest = sm.latest_id()
        if latest is None or sm.earliest_id() is None:
            return 0
        latest_changelog = cm.latest_long_lived_changelog_id()
        earliest_changelog = cm.earliest_long_lived_changelog_id()
        if latest_changelog is None or earliest_changelog is None:
            return 0
        now = clock.now_millis() if now_ms is None else now_ms
        older_than = cfg.changelog_older_than(now)
        low = max(latest - retain_max + 1, earliest_changelog)
        max_exclusive = latest - retain_min + 1
        consumer_next = self.consumer_manager.min_next_snapshot()
        if consumer_next is not None:
            max_exclusive = min(max_exclusive, consumer_next)
        max_exclusive = min(
            max_exclusive, earliest_changelog + max(0, cfg.changelog_deletes), latest_changelog
        )
        for cid in range(low, max_exclusive + 1):
            changelog = cm.try_get_changelog(cid)
            if changelog is not None and older_than <= changelog.time_millis:
                return self.expire_until(earliest_changelog, cid)
        return self.expire_until(earliest_changelog, max_exclusive)

    def expire_until(self, earliest_id: int, end_exclusive: int) -> int:
        """Expire long-lived changelogs ``[earliest_id, end_exclusive)``; ``end_exclusive``
        must be a long-lived changelog (it is kept, and protects its files)."""
        cm = self.changelog_manager
        if end_exclusive <= earliest_id:
            return 0
        end = cm.try_get_changelog(end_exclusive)
        earliest_snapshot = self.snapshot_manager.earliest_id()
        if end is None or earliest_snapshot is None:
            return 0
        expiring = [c for c in map(cm.try_get_changelog, range(earliest_id, end_exclusive)) if c]
        tags = self.tag_manager.tagged_snapshots()
        kept = [end, self.snapshot_manager.snapshot(earliest_snapshot)]
        if not self._delete(expiring, kept, tags):
            return 0
        cm.commit_long_lived_changelog_earliest_hint(end_exclusive)
        LOG.info(
            "Table '%s': expired %d long-lived changelog(s), range [%d, %d)",
            self.store.name,
            len(expiring),
            earliest_id,
            end_exclusive,
        )
        return end_exclusive - earliest_id

    def expire_all(self) -> None:
        """Expire every long-lived changelog (``expire_changelogs`` with ``delete_all``, Java's
        expireAll); they must all be older than the earliest snapshot."""
        sm, cm = self.snapshot_manager, self.changelog_manager
        if sm.latest_id() is None:
            return
        earliest_snapshot = sm.earliest_id()
        latest_changelog = cm.latest_long_lived_changelog_id()
        earliest_changelog = cm.earliest_long_lived_changelog_id()
        if earliest_snapshot is None or latest_changelog is None or earliest_changelog is None:
            return
        if latest_changelog >= earliest_snapshot:
            raise CorruptTableError(
                f"Table '{self.store.name}': latest changelog id ({latest_changelog}) should be "
                f"less than earliest snapshot id ({earliest_snapshot}), please check your table!"
            )
        ids = range(earliest_changelog, latest_changelog + 1)
        expiring = [c for c in map(cm.try_get_changelog, ids) if c is not None]
        kept = [sm.snapshot(earliest_snapshot)]
        if self._delete(expiring, kept, self.tag_manager.tagged_snapshots()):
            cm.delete_earliest_hint()
            cm.delete_latest_hint()

    def _delete(self, expiring: list[Snapshot], kept: list[Snapshot], tags: list[Snapshot]) -> bool:
        """The JSON files of ``expiring``, oldest first, then their data files and metadata
        that ``kept`` (the first kept changelog and the earliest snapshot) and ``tags`` do not
        use; False, with nothing deleted, when what they use cannot be read."""
        tags = tags + branch_anchors(self.store)  # what other branches read stays
        deletion = SnapshotDeletion(self.store)
        try:
            skip = self._manifest_skipping_set(deletion, [*tags, *kept])
        except (CorruptTableError, OSError) as e:
            LOG.info("Skip expiring changelogs: failed to build the skipping set: %s", e)
            return False
        for c in expiring:
            self.changelog_manager.delete_changelog(c.id)

        candidates: list[DataFileCandidate] = []
        for c in expiring:
            if c.changelog_manifest_list:
                deletion.delete_added_changelog_files(c.changelog_manifest_list)
            elif self._exists(c.delta_manifest_list):
                candidates.extend(deletion.removed_data_files(c) or [])
        if candidates:
            protected = self._protected_data_files(deletion, kept, tags)
            if protected is not None:
                deletion.delete_data_files(c for c in candidates if c.file_name not in protected)
        for c in expiring:
            if c.changelog_manifest_list:
                deletion.clean_manifest_list(c.changelog_manifest_list, skip)
                continue
            for name in (c.delta_manifest_list, c.base_manifest_list):
                if self._exists(name):
                    deletion.clean_manifest_list(name, skip)
        if self.expire_config.clean_empty_directories:
            deletion.clean_empty_directories()
        return True

    def _exists(self, name: str) -> bool:
        """Whether manifest (list) ``name`` of the table's ``manifest/`` is there; a name
        that is not bare is not (the deletion skips it too)."""
        try:
            path = self.store.manifest_io.path(name)
        except CorruptTableError:
            return False
        return self.store.file_io.is_file(path)

    def _manifest_skipping_set(
        self, deletion: SnapshotDeletion, snapshots: list[Snapshot]
    ) -> set[str]:
        """ChangelogDeletion.manifestSkippingSet: the base and delta lists (and manifests) of
        ``snapshots`` that still exist, their index manifests and files, their statistics."""
        mio = self.store.manifest_io
        skip: set[str] = set()
        for s in snapshots:
            for name in (s.base_manifest_list, s.delta_manifest_list):
                if self._exists(name):
                    skip.add(name)
                    skip.update(m.file_name for m in mio.read_manifest_list(name))
            if s.index_manifest and self._exists(s.index_manifest):
                skip.add(s.index_manifest)
                entries = deletion.index_files.read_manifest(s.index_manifest)
                skip.update(e.index_file.file_name for e in entries)
            if s.statistics:
                skip.add(s.statistics)
        return skip

    def _protected_data_files(
        self, deletion: SnapshotDeletion, kept: list[Snapshot], tags: list[Snapshot]
    ) -> set[str] | None:
        """Names of the data files the first kept changelog, the earliest snapshot or a tag
        reads, or the delta of the first kept changelog or of a snapshot ADDs; None if
        unknowable."""
        sm = self.snapshot_manager
        try:
            protected: set[str] = set()
            for s in [*kept, *tags]:
                if self._exists(s.base_manifest_list) and self._exists(s.delta_manifest_list):
                    protected |= deletion.live_file_names(s)
            if self._exists(kept[0].delta_manifest_list):
                protected |= deletion.added_file_names(kept[0])
            latest = sm.latest_id()
            earliest = sm.earliest_id()
            if latest is not None and earliest is not None:
                for sid in range(earliest, latest + 1):
                    snapshot = sm.snapshot_if_exists(sid)
                    if snapshot is not None:
                        protected |= deletion.added_file_names(snapshot)
        except (CorruptTableError, OSError) as e:
            LOG.info("Skip cleaning changelog data files: failed to build the skipping set: %s", e)
            return None
        return protected
