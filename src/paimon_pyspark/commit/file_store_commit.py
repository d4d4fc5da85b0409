"""The commit protocol: commit messages become one new snapshot, atomically.

Mirrors org.apache.paimon.operation.FileStoreCommitImpl and RenamingSnapshotCommit.

    filter    identifiers <= this commit user's newest identifier (its newest snapshot, or the
              record in the newest snapshot) are committed already and skipped
              (filter_committed; makes a retried commit a no-op)
    prepare   messages -> manifest entries (ADD for new files, DELETE for removed ones)
    attempt   schema id = the table's, or a newer one (the next ids probed)
              latest = LATEST snapshot (verified); after a lost race, the winner's snapshot
               and any after it, read directly (the winner may not have rewritten LATEST)
              [after an uncertain publish: did one of this commit's uncertain publishes land
               on latest's chain? its snapshot still there and ours -> the chain check; gone
               (expired) or another's -> latest's commit ledger: this user's newest snapshot
               is one of those ids -> done, at that id (commit returns it, expired or not);
               the ledger complete from the first of them -> not in; else
               CommitOutcomeUnknownError. Never from a snapshot's absence]
              [overwrite: other writers' commits since the overwrite was planned must not
               touch the replaced partitions; DELETE every live file of them in latest]
              conflict check (COMPACT, OVERWRITE, an APPEND removing files, or asked for;
               commit/conflict_detection.py): one bucket count per partition (not for
               OVERWRITE), every DELETE hits a live file, PK levels >= 1 stay sorted runs
              [row tracking: new files numbered from latest's nextRowId, a writer's first
               file's sequence numbers = the new id (commit/row_tracking.py)]
              delta list = a manifest with this commit's entries (written once per commit;
               per attempt with row tracking, whose entries depend on latest)
              snapshot-<latest+1> exists already -> lost before writing anything else
              base list  = latest's base + delta manifests, merged as Java's
               ManifestFileMerger: full past manifest.full-compaction-threshold-size, else
               small ones (commit/manifest_merger.py)
              [index changes: index manifest = previous entries combined with them]
              [record of committed identifiers = latest's, with this user's identifier;
               commit ledger = latest's, with this user's newest snapshot = this id (both
               walked back through snapshots without them, written by Java: spec/snapshot.py)]
              latest expired meanwhile -> lost (the id after it may be free again)
              snapshot-<latest+1> JSON published with create-if-absent (FileIO.try_write_atomic)
    verify    the snapshot is on the table's chain (commit/chain_check.py), not a publish at
              an expired id below the newest: else it is withdrawn and the commit retries on
              the newest snapshot found by listing; gone before it could be checked -> the
              newest snapshot's commit ledger decides, as after an uncertain publish
    retry     id taken by another writer, or a store call failed -> delete what this attempt
              wrote (unless its publish request was sent), back off, again
    settle    retries exhausted after an uncertain publish: the publishes at ids up to the
              newest are decided as above; the last one's id above the newest is claimed now
              with the same snapshot (a request in flight cannot land later); an id at or
              below the newest is never published again (taken or expired: off the chain).
              CommitOutcomeUnknownError if the store cannot be asked or the ledger cannot
              tell (never a false "nothing was committed", never the same files twice)
    post      LATEST hint rewritten once verified (readers verify it anyway)

Data files are written before the commit starts and are never touched here, so a crash at any
point leaves the table at its previous snapshot; at worst unreferenced manifests remain.
"""

from __future__ import annotations

import itertools
import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paimon_pyspark.commit.chain_check import Verdict, chain_verdict
from paimon_pyspark.commit.conflict_detection import ConflictDetection
from paimon_pyspark.commit.manifest_merger import merge_manifests
from paimon_pyspark.commit.overwrite import (
    Overwrite,
    PartitionFilter,
    describe_spec,
    partition_spec,
    upgrade_for_overwrite,
)
from paimon_pyspark.commit.row_tracking import assign_row_tracking
from paimon_pyspark.errors import (
    CommitConflictError,
    CommitError,
    CommitOutcomeUnknownError,
    CorruptTableError,
)
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.manifest import IndexManifestEntry, ManifestEntry
from paimon_pyspark.spec.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    COMMIT_LEDGER_PROPERTY,
    COMMITTED_IDENTIFIERS_PROPERTY,
    Snapshot,
    with_identifier,
)
from paimon_pyspark.store import clock
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.index_io import DELETION_VECTORS_INDEX, IndexFileHandler
from paimon_pyspark.store.managers import SchemaManager, SnapshotManager
from paimon_pyspark.store.manifest_io import ManifestIO, merge_entries
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataType

APPEND = "APPEND"
COMPACT = "COMPACT"
OVERWRITE = "OVERWRITE"
_DATA_CHANGING_KINDS = (APPEND, OVERWRITE)

LOG = logging.getLogger(__name__)

_MAX_PROBES = 4
"""Ids read forward from a lost race; more commits since then and the LATEST hint is cheaper."""

EntriesOf = Callable[[Snapshot | None], list[ManifestEntry]]
"""The entries of one commit attempt, given the latest snapshot it commits on."""
IndexOf = Callable[[Snapshot | None], list[IndexManifestEntry]]
"""The index-file changes of one commit attempt (Java's index ADD/DELETE entries)."""


@dataclass
class _Collected:
    """A commit's messages as manifest entries, split as Java's ManifestEntryChanges: the new
    files' (APPEND) and the compaction's (COMPACT) table files, changelog files and index
    changes."""

    append: list[ManifestEntry]
    compact: list[ManifestEntry]
    append_index: list[IndexManifestEntry]
    compact_index: list[IndexManifestEntry]
    append_changelog: list[ManifestEntry]
    compact_changelog: list[ManifestEntry]


@dataclass(frozen=True)
class CommitSettings:
    table_name: str
    table_path: str
    bucket: int
    manifest_target_size: int
    manifest_merge_min_count: int
    max_retries: int
    min_retry_wait_ms: int
    max_retry_wait_ms: int
    partition_keys: tuple[str, ...] = ()
    partition_types: tuple[DataType, ...] = ()
    partition_default_name: str = "__DEFAULT_PARTITION__"
    dynamic_partition_overwrite: bool = True
    overwrite_upgrade: bool = True
    key_types: tuple[DataType, ...] = ()
    """Types of the trimmed primary key (empty for append tables)."""
    num_levels: int = 6
    deletion_vectors: bool = False
    schema_id: int = 0
    """The schema the table was loaded with: the commit stamps the latest one from there on."""
    row_tracking: bool = False
    """``row-tracking.enabled``: new files get row ids at commit (commit/row_tracking.py)."""
    manifest_full_compaction_size: int = 16 * 1024 * 1024
    """``manifest.full-compaction-threshold-size`` (commit/manifest_merger.py)."""


class FileStoreCommit:
    def __init__(
        self,
        settings: CommitSettings,
        commit_user: str,
        snapshots: SnapshotManager,
        schemas: SchemaManager,
        manifests: ManifestIO,
    ) -> None:
        self.settings = settings
        self.commit_user = commit_user
        self.snapshots = snapshots
        self.schemas = schemas
        self.manifests = manifests
        self.index_files = IndexFileHandler(manifests.file_io, settings.table_path, manifests.codec)
        self.conflicts = ConflictDetection(
            settings.table_name,
            commit_user,
            settings.key_types,
            self._partition_text,
            settings.deletion_vectors and self._unaware,
        )
        self.append_commit_check_conflict = False
        """Check APPEND commits for conflicts too (Java's ``appendCommitCheckConflict``)."""
        self._delta: _DeltaFiles | None = None
        self._compacting_manifests = False
        """Set by ``compact_manifest``: the next attempts merge every manifest they can."""
        self._list_latest = False
        """The next attempt takes the newest id by listing, not the LATEST hint: the last one
        met a snapshot off the chain (commit/chain_check.py), which a hint may name too."""

    @property
    def _unaware(self) -> bool:
        """A bucket-unaware append table (its vectors combine by index file name)."""
        return self.settings.bucket == -1 and not self.settings.key_types

    def filter_committed(self, identifiers: Sequence[int]) -> list[int]:
        """The identifiers this commit user has not committed yet (Java's filterCommitted).

        ``identifiers`` must be strictly increasing. A commit user numbers its commits in
        increasing order, so everything up to the identifier of its newest commit is in the
        table already; a batch commit (Long.MAX_VALUE) is committed once its snapshot exists.
        The newest commit is known from the user's newest snapshot or, once that expired, from
        the record of committed identifiers every snapshot of ours carries (spec/snapshot.py).
        """
        for previous, current in itertools.pairwise(identifiers):
            if current <= previous:
                raise CommitError(
                    f"Table '{self.settings.table_name}': commit identifiers must be strictly "
                    f"increasing to be filtered, got {previous} before {current}."
                )
        last = self.snapshots.last_identifier_of_user(self.commit_user)
        if last is None:
            return list(identifiers)
        return [i for i in identifiers if i > last]

    def commit(
        self,
        messages: Sequence[CommitMessage],
        identifier: int = BATCH_COMMIT_IDENTIFIER,
        check_append_files: bool = False,
    ) -> list[int]:
        """Commit ``messages``; returns the ids of the snapshots created (none if empty).

        An id is where the snapshot landed, which may have expired already: a publish whose
        answer was lost and whose snapshot expired before the retry is found in by the commit
        ledger (module docstring), and its id is returned rather than committing again.

        As Java's ``commit(committable, checkAppendFiles)``: the COMPACT snapshot is always
        checked for conflicts; the APPEND one only with ``check_append_files`` (a recovering
        ``filter_and_commit``), ``append_commit_check_conflict``, or when it removes files or
        carries deletion vectors, which also makes it an OVERWRITE snapshot.
        """
        c = self._collect(messages)
        append, append_index = c.append, c.append_index
        created = []
        if append or append_index or c.append_changelog:
            has_delete = any(e.kind == mf.KIND_DELETE for e in append) or any(
                e.index_file.index_type == DELETION_VECTORS_INDEX for e in append_index
            )
            kind = OVERWRITE if has_delete else APPEND
            check = check_append_files or self.append_commit_check_conflict or has_delete
            created.append(
                self._try_commit(
                    lambda _: append,
                    kind,
                    identifier,
                    check,
                    lambda _: append_index,
                    c.append_changelog,
                )
            )
        created += self._commit_compaction(c, identifier)
        return created

    def _commit_compaction(self, c: _Collected, identifier: int) -> list[int]:
        """The COMPACT snapshot of a commit's compaction changes, if it has any."""
        if not (c.compact or c.compact_index or c.compact_changelog):
            return []
        compact, compact_index = c.compact, c.compact_index
        snapshot_id = self._try_commit(
            lambda _: compact,
            COMPACT,
            identifier,
            True,
            lambda _: compact_index,
            c.compact_changelog,
        )
        return [snapshot_id]

    def overwrite(
        self,
        messages: Sequence[CommitMessage],
        overwrite: Overwrite,
        identifier: int = BATCH_COMMIT_IDENTIFIER,
    ) -> list[int]:
        """Replace partitions (see ``commit/overwrite.py``) by ``messages``' new files.

        Java's ``overwritePartition``: one OVERWRITE snapshot deleting every live file of the
        replaced partitions and adding the new files (re-levelled by ``overwrite-upgrade``),
        then a COMPACT snapshot for compaction changes in the same messages. A dynamic overwrite
        with no new files commits nothing; a static one always commits.
        """
        s = self.settings
        c = self._collect(messages)
        append, compact = c.append, c.compact
        new_files = [e for e in append if e.kind == mf.KIND_ADD]
        if c.append_changelog or c.compact_changelog:
            LOG.warning(
                "Table '%s': an overwrite commits no changelog (as Java's overwritePartition); "
                "make sure no streaming reader consumes the overwritten partitions. Ignored "
                "changelog files: %s",
                s.table_name,
                ", ".join(e.file.file_name for e in c.append_changelog + c.compact_changelog),
            )
        if len(new_files) != len(append):
            raise CommitError(
                f"Table '{s.table_name}': an overwrite commit cannot also delete files."
            )
        filter_, skip = self._overwrite_filter(new_files, overwrite)
        if not compact:
            new_files = self._try_upgrade(new_files)
        created = []
        if not skip:
            changes = self._overwrite_changes(new_files, filter_, overwrite.base_snapshot_id)
            index_changes = self._overwrite_index_changes(c.append_index, filter_)
            created.append(self._try_commit(changes, OVERWRITE, identifier, True, index_changes))
        if compact or c.compact_index:
            no_changelog = _Collected([], compact, [], c.compact_index, [], [])
            created += self._commit_compaction(no_changelog, identifier)
        return created

    def _overwrite_filter(
        self, new_files: list[ManifestEntry], overwrite: Overwrite
    ) -> tuple[PartitionFilter | None, bool]:
        """(partitions to replace, None for the whole table; True when nothing is replaced)."""
        s = self.settings
        types = s.partition_types
        if overwrite.static_partition:
            spec = partition_spec(
                s.table_name,
                s.partition_keys,
                types,
                overwrite.static_partition,
                s.partition_default_name,
            )
            text = describe_spec(s.partition_keys, spec)
            filter_ = PartitionFilter(types, spec=spec, description=text)
            for e in new_files:
                if not filter_(e.partition):
                    raise CommitError(
                        f"Table '{s.table_name}': trying to overwrite partition {text}, but "
                        f"file {e.file.file_name} belongs to partition "
                        f"{self._partition_text(e.partition)}, outside it; nothing was committed."
                    )
            return filter_, False
        if types and s.dynamic_partition_overwrite:
            if not new_files:
                return None, True
            partitions = {e.partition for e in new_files}
            texts = sorted(self._partition_text(p) for p in partitions)
            text = "; ".join(texts[:5]) + (f" and {len(texts) - 5} more" if len(texts) > 5 else "")
            return PartitionFilter(types, partitions=partitions, description=text), False
        return None, False

    def _partition_text(self, partition: bytes) -> str:
        s = self.settings
        types = [t.copy(nullable=True) for t in s.partition_types]
        values = deserialize_with_arity(partition, types)
        return ", ".join(f"{k}={v!r}" for k, v in zip(s.partition_keys, values, strict=True))

    def _try_upgrade(self, new_files: list[ManifestEntry]) -> list[ManifestEntry]:
        s = self.settings
        if not s.overwrite_upgrade or not s.key_types:
            return new_files
        return upgrade_for_overwrite(new_files, s.key_types, s.num_levels - 1)

    def _overwrite_changes(
        self,
        new_files: list[ManifestEntry],
        filter_: PartitionFilter | None,
        base_snapshot_id: int | None,
    ) -> EntriesOf:
        """The entries of each attempt: DELETE for the replaced partitions' live files at the
        attempt's latest snapshot (Java's readOverwriteChanges), then the new files."""
        postpone = self.settings.bucket == POSTPONE_BUCKET  # only these replace bucket -2 files

        def changes(latest: Snapshot | None) -> list[ManifestEntry]:
            if latest is None:
                return list(new_files)
            if base_snapshot_id is not None:
                self._check_concurrent_changes(base_snapshot_id, latest, filter_)
            deletes = [
                ManifestEntry(mf.KIND_DELETE, e.partition, e.bucket, e.total_buckets, e.file)
                for e in self.manifests.live_entries(latest)
                if (postpone or e.bucket >= 0) and (filter_ is None or filter_(e.partition))
            ]
            return deletes + new_files

        return changes

    def _overwrite_index_changes(
        self, new_index: list[IndexManifestEntry], filter_: PartitionFilter | None
    ) -> IndexOf:
        """DELETE for every index file of the replaced partitions, then the new index files
        (Java's OverwriteChangesProvider)."""

        def changes(latest: Snapshot | None) -> list[IndexManifestEntry]:
            if latest is None or not latest.index_manifest:
                return list(new_index)
            deletes = [
                IndexManifestEntry(mf.KIND_DELETE, e.partition, e.bucket, e.index_file)
                for e in self.index_files.read_manifest(latest.index_manifest)
                if filter_ is None or filter_(e.partition)
            ]
            return deletes + new_index

        return changes

    def _check_concurrent_changes(
        self, base_id: int, latest: Snapshot, filter_: PartitionFilter | None
    ) -> None:
        """No other writer changed rows of the replaced partitions after snapshot ``base_id``.

        Not a Java rule: Java would delete those rows with the rest (see commit/overwrite.py).
        """
        s = self.settings
        where = "the table" if filter_ is None else f"partition(s) {filter_.description}"
        for sid in range(base_id + 1, latest.id + 1):
            snap = latest if sid == latest.id else None
            if snap is None:
                if not self.snapshots.snapshot_exists(sid):
                    raise CommitConflictError(
                        f"Table '{s.table_name}': snapshot {sid}, committed while this "
                        f"overwrite of {where} was running, has expired, so the overwrite cannot "
                        "tell whether it changed those rows. Give up committing; nothing was "
                        "committed."
                    )
                snap = self.snapshots.snapshot(sid)
            if snap.commit_user == self.commit_user or snap.commit_kind not in _DATA_CHANGING_KINDS:
                continue
            metas = self.manifests.read_manifest_list(snap.delta_manifest_list)
            for e in self.manifests.read_entries(metas):
                if filter_ is None or filter_(e.partition):
                    raise CommitConflictError(
                        f"Table '{s.table_name}': overwrite conflict: snapshot {sid} "
                        f"({snap.commit_kind} by commit user {snap.commit_user}) changed "
                        f"{where} after this overwrite was planned on snapshot {base_id}; "
                        "overwriting would drop its rows. Give up committing; nothing was "
                        "committed. Plan the overwrite again on the latest snapshot."
                    )

    def _collect(self, messages: Sequence[CommitMessage]) -> _Collected:
        append: list[ManifestEntry] = []
        compact: list[ManifestEntry] = []
        append_index: list[IndexManifestEntry] = []
        compact_index: list[IndexManifestEntry] = []
        append_changelog: list[ManifestEntry] = []
        compact_changelog: list[ManifestEntry] = []
        for m in messages:
            total = m.total_buckets if m.total_buckets is not None else self.settings.bucket

            def entry(
                kind: int, f: object, m: CommitMessage = m, total: int = total
            ) -> ManifestEntry:
                return ManifestEntry(kind, m.partition, m.bucket, total, f)  # type: ignore[arg-type]

            append += [entry(mf.KIND_ADD, f) for f in m.data_increment.new_files]
            append += [entry(mf.KIND_DELETE, f) for f in m.data_increment.deleted_files]
            compact += [entry(mf.KIND_DELETE, f) for f in m.compact_increment.compact_before]
            compact += [entry(mf.KIND_ADD, f) for f in m.compact_increment.compact_after]
            append_changelog += [entry(mf.KIND_ADD, f) for f in m.data_increment.changelog_files]
            compact_changelog += [
                entry(mf.KIND_ADD, f) for f in m.compact_increment.changelog_files
            ]
            for target, increment in (
                (append_index, m.data_increment),
                (compact_index, m.compact_increment),
            ):
                target += [
                    IndexManifestEntry(mf.KIND_ADD, m.partition, m.bucket, f)
                    for f in increment.new_index_files
                ]
                target += [
                    IndexManifestEntry(mf.KIND_DELETE, m.partition, m.bucket, f)
                    for f in increment.deleted_index_files
                ]
        return _Collected(
            append, compact, append_index, compact_index, append_changelog, compact_changelog
        )

    def _try_commit(
        self,
        entries_of: EntriesOf,
        kind: str,
        identifier: int,
        check: bool,
        index_of: IndexOf | None = None,
        changelog: Sequence[ManifestEntry] = (),
    ) -> int:
        """Attempt until a snapshot is published, retrying when another writer took the id or
        a store call failed.

        A failed publish request is uncertain: it may have gone through. Every later attempt
        first decides the uncertain publishes so far (:meth:`_find_committed`, by the commit
        ledger once their snapshots are gone); and when the attempts run out, they are settled
        (:meth:`_settle`), so "nothing was committed" is only ever said when it is true, and
        the same files are never committed twice.
        """
        self._delta = None
        self._list_latest = False
        try:
            self.snapshots.file_io.check_atomic_publish(self.snapshots.snapshot_dir)
        except OSError as e:
            raise CommitError(
                f"Table '{self.settings.table_name}': the store cannot be reached: {e}. "
                "Nothing was committed."
            ) from e
        try:
            return self._attempt_until_published(
                entries_of, kind, identifier, check, index_of, changelog
            )
        except BaseException as e:
            if not isinstance(e, CommitOutcomeUnknownError):
                self._drop_delta()
            raise
        finally:
            self._delta = None

    def _attempt_until_published(
        self,
        entries_of: EntriesOf,
        kind: str,
        identifier: int,
        check: bool,
        index_of: IndexOf | None,
        changelog: Sequence[ManifestEntry] = (),
    ) -> int:
        s = self.settings
        retry = 0
        attempts: dict[int, Snapshot] = {}  # the uncertain publishes, by id
        uncertain: Snapshot | None = None
        last_error: OSError | None = None
        taken: int | None = None
        while True:
            snapshot_id: int | None = None
            latest: Snapshot | None = None
            lost_to = taken
            taken = None
            try:
                # Before reading the latest snapshot, so the window in which another writer
                # can take the next id is one request shorter.
                schema_id = self._latest_schema_id()
                latest = self._latest_after(lost_to)
                if attempts:
                    done = self._find_committed(attempts, latest, identifier, kind)
                    if done is not None:
                        return done
                entries = entries_of(latest)
                index_delta = index_of(latest) if index_of is not None else []
                snapshot_id = self._try_commit_once(
                    entries, kind, identifier, latest, check, index_delta, schema_id, changelog
                )
                if snapshot_id is None:
                    taken = latest.id + 1 if latest is not None else 1
            except _UncertainPublish as e:
                uncertain, last_error = e.snapshot, e.cause
                attempts[uncertain.id] = uncertain
            except OSError as e:
                last_error = e
            except CommitOutcomeUnknownError:
                raise
            except Exception as e:
                # A file of the attempt's base snapshot vanished while newer snapshots came: an
                # expiry removed it and the attempt lost the race, so it retries. A conflict (or
                # anything else) ends the commit, after deciding an earlier uncertain publish of
                # ours, so the error never hides a commit that is in.
                # The newest id by listing: a LATEST hint can name a stale publish whose files
                # are gone (commit/chain_check.py).
                lost = isinstance(e, CorruptTableError) and latest is not None
                if lost and latest is not None:
                    listed = self.snapshots.list_ids()
                    lost = bool(listed) and listed[-1] != latest.id
                    self._list_latest = lost
                if not lost:
                    if uncertain is not None:
                        settled = self._settle(attempts, uncertain, identifier, kind, last_error)
                        if settled is not None:
                            return settled
                    raise
            if snapshot_id is not None:
                return snapshot_id
            retry += 1
            if retry > s.max_retries:
                if uncertain is not None:
                    settled = self._settle(attempts, uncertain, identifier, kind, last_error)
                    if settled is not None:
                        return settled
                reason = (
                    f"the last attempt failed with {last_error!r}"
                    if last_error is not None
                    else "other writers kept taking the next snapshot id"
                )
                raise CommitError(
                    f"Table '{s.table_name}': commit failed after {s.max_retries} retries; "
                    f"{reason}. Nothing was committed."
                ) from last_error
            # Java's RetryWaiter: min wait doubled per earlier retry, capped, plus up to a fifth
            wait = min(s.min_retry_wait_ms * 2 ** (retry - 1), s.max_retry_wait_ms)
            time.sleep((wait + random.randrange(max(1, int(wait * 0.2)))) / 1000.0)

    def _latest_schema_id(self) -> int:
        """The id of the table's latest schema, which the new snapshot records.

        Schema ids are published in order, so the ids after the one the table was loaded with
        are probed (one HEAD each); the schema itself is not read, only its id is needed.
        """
        known = self.settings.schema_id
        while self.schemas.file_io.is_file(self.schemas.schema_path(known + 1)):
            known += 1
        return known

    def _latest_after(self, taken: int | None) -> Snapshot | None:
        """The base snapshot of an attempt; ``taken`` is the id another writer just took.

        After a lost race the winner's snapshot and the ids after it are read directly (one GET
        each, the last a miss) instead of the LATEST hint, which the winners may not have
        rewritten yet (a stale hint costs a directory listing). Any existing snapshot is a safe
        base: if it is no longer the latest, the attempt sees its successor before writing
        (``_try_commit_once``) or fails to publish, and retries.
        """
        if taken is not None and not self._list_latest:
            snapshot = self.snapshots.snapshot_if_exists(taken)
            for _ in range(_MAX_PROBES):
                if snapshot is None:
                    break  # expired meanwhile
                after = self.snapshots.snapshot_if_exists(snapshot.id + 1)
                if after is None:
                    return snapshot
                snapshot = after
        if self._list_latest:
            return self.snapshots.listed_latest()
        return self.snapshots.latest()

    def _is_ours(self, snapshot: Snapshot, identifier: int, kind: str) -> bool:
        return (
            snapshot.commit_user == self.commit_user
            and snapshot.commit_identifier == identifier
            and snapshot.commit_kind == kind
        )

    def _settle(
        self,
        attempts: dict[int, Snapshot],
        snapshot: Snapshot,
        identifier: int,
        kind: str,
        cause: OSError | None,
    ) -> int | None:
        """Decide the uncertain publishes (``attempts``; ``snapshot`` the last) once no attempt
        is left.

        Those at ids up to the newest snapshot are decided as a retry decides them
        (:meth:`_find_committed`). An id above the newest is still free, and a request in flight
        could still land there: ``snapshot`` is published there again, so the id is decided now.
        An id at or below the newest is never published again: it is another writer's, or
        expired, and a snapshot put there would be off the chain. If the store cannot be asked,
        CommitOutcomeUnknownError says so instead of guessing.
        """
        sid = snapshot.id
        try:
            latest = self.snapshots.listed_latest()
            done = self._find_committed(attempts, latest, identifier, kind)
            if done is not None or (latest is not None and sid <= latest.id):
                return done
            if self.snapshots.try_publish(snapshot):
                return sid if self._accept(snapshot) else None
            found = self.snapshots.snapshot(sid)
            if self._is_ours(found, identifier, kind) and self._accept(found):
                return sid
            return None
        except (OSError, CorruptTableError) as e:
            raise CommitOutcomeUnknownError(
                f"Table '{self.settings.table_name}': the publish of snapshot {sid} failed "
                f"({cause!r}) and checking whether it went through failed too ({e!r}); the "
                "commit may or may not be in. Retrying it with the same commit user and "
                "identifier is safe: a committed identifier is skipped."
            ) from e

    def _find_committed(
        self, attempts: dict[int, Snapshot], latest: Snapshot | None, identifier: int, kind: str
    ) -> int | None:
        """The id where an uncertain publish of this commit landed on the chain that ends at
        ``latest``; None when none of those at ids up to ``latest`` did (a higher id may still
        be taken by a request in flight: the next attempt's publish, or :meth:`_settle`,
        decides it).

        A snapshot of ours still at its id is checked to be on the chain; another writer's
        there means ours never landed (create-if-absent). An id whose snapshot is gone (expired)
        is decided by the commit ledger (:meth:`_ledger_decides`), never by its absence: an
        expired snapshot may have been ours. Ids found not to hold ours are dropped from
        ``attempts``: a request landing there later would be off the chain, so a later ledger,
        which may know less, need not be asked again.
        """
        if latest is None:
            return None
        due = sorted(sid for sid in attempts if sid <= latest.id)
        if not due:
            return None
        gone = []
        for sid in due:
            found = latest if sid == latest.id else self.snapshots.snapshot_if_exists(sid)
            if found is None:
                gone.append(sid)
            elif self._is_ours(found, identifier, kind) and self._accept(found):
                return sid
        landed = self._ledger_decides(latest, gone) if gone else None
        if landed is not None:
            return landed
        for sid in due:
            del attempts[sid]
        return None

    def _ledger_decides(self, latest: Snapshot, due: Sequence[int]) -> int | None:
        """Which of the ids ``due`` (ascending, up to ``latest``'s) holds a snapshot of this
        commit on ``latest``'s chain, by its commit ledger (spec/snapshot.py), or None.

        While a commit is in doubt its user commits nothing else, so the user's newest snapshot
        is one of these publishes or precedes them all; the ledger proves "none" only when it is
        complete from the first of them. Otherwise (snapshots written without a ledger, by Java,
        in between and expired, or more commit users since than the ledger keeps)
        CommitOutcomeUnknownError: committing again could add the files twice, and "nothing
        was committed" could be false.
        """
        _, ledger = self.snapshots.commit_records(latest)
        newest = ledger.users.get(self.commit_user)
        if newest in due:
            return newest
        if ledger.since <= due[0]:
            return None
        raise CommitOutcomeUnknownError(
            f"Table '{self.settings.table_name}': snapshot {', '.join(map(str, due))} "
            f"published by commit user {self.commit_user} is gone (expired, or withdrawn) "
            "before the commit could tell whether it was in, and the commit ledger of snapshot "
            f"{latest.id} is complete only from snapshot {ledger.since} on (snapshots "
            "committed by another engine, or by more commit users than it keeps, came in "
            "between); the commit may or may not be in. Retrying it with the same commit user "
            "and identifier is safe: a committed identifier is skipped."
        )

    def _accept(
        self,
        published: Snapshot,
        delta: Sequence[ManifestEntry] | None = None,
        written: Sequence[str] = (),
    ) -> bool:
        """Whether ``published``, a snapshot of ours, is on the table's chain; if not, it is
        withdrawn with the manifests ``written`` for it, and the commit goes on trying.

        When it is gone before it could be checked (it expired: it was in; or another process
        removed it as a stale publish: it was not), the commit ledger of the newest snapshot
        decides (:meth:`_ledger_decides`), or CommitOutcomeUnknownError says it cannot.
        """
        if delta is None:
            mio = self.manifests
            delta = mio.read_entries(mio.read_manifest_list(published.delta_manifest_list))
        verdict = chain_verdict(self.snapshots, self.manifests, published, delta)
        if verdict is Verdict.UNKNOWN:
            latest = self.snapshots.listed_latest()
            if latest is None or latest.id < published.id:
                raise CommitOutcomeUnknownError(
                    f"Table '{self.settings.table_name}': snapshot {published.id} was "
                    "published but the table's snapshots were gone before the commit could "
                    "check it; the commit may or may not be in. Retrying it with the same "
                    "commit user and identifier is safe: a committed identifier is skipped."
                )
            if self._ledger_decides(latest, [published.id]) == published.id:
                return True  # in, and expired already: no LATEST hint at an expired id
            verdict = Verdict.OFF_CHAIN
        if verdict is Verdict.ON_CHAIN:
            self.snapshots.write_latest_hint(published.id)
            return True
        if verdict is Verdict.OFF_CHAIN:
            LOG.warning(
                "Table '%s': snapshot %d of commit user %s was published at an id that had "
                "expired, below the newest snapshot; withdrawn, committing again on the newest.",
                self.settings.table_name,
                published.id,
                self.commit_user,
            )
            current = self.snapshots.snapshot_if_exists(published.id)
            if current is not None and current.uuid == published.uuid:
                self.snapshots.delete_snapshot(published.id)
            self.manifests.delete_quietly(written)
            self._list_latest = True
            return False
        raise AssertionError(verdict)  # UNKNOWN was decided above

    def _try_commit_once(
        self,
        delta: list[ManifestEntry],
        kind: str,
        identifier: int,
        latest: Snapshot | None,
        check: bool,
        index_delta: Sequence[IndexManifestEntry] = (),
        schema_id: int | None = None,
        changelog: Sequence[ManifestEntry] = (),
    ) -> int | None:
        """One attempt on ``latest``: the new snapshot's id, or None if another writer took it.

        ``schema_id`` is the table's latest schema, probed by the caller before it read
        ``latest`` (probed here when not given). ``changelog`` (the changelog files' ADD
        entries) gets a manifest list of its own, the snapshot's ``changelogManifestList``,
        with ``changelogRecordCount`` their rows; both stay null without changelog, as in
        Java's tryCommitOnce."""
        s = self.settings
        if schema_id is None:
            schema_id = self._latest_schema_id()
        base_metas = self.manifests.data_manifests(latest) if latest is not None else []
        if check and latest is not None:  # as Java: nothing to conflict with on a new table
            self._check_conflicts(delta, base_metas, latest, kind, index_delta)
        else:
            merge_entries(delta)  # a delta alone must be consistent

        next_row_id = (latest.next_row_id or 0) if latest else 0
        source, row_key = delta, None
        if s.row_tracking:  # from this attempt's base: a retry numbers the rows again
            row_key = ((latest.id + 1) if latest else 1, next_row_id)
            next_row_id, delta = assign_row_tracking(s.table_name, *row_key, delta)
        pf = PathFactory(s.table_path)
        # Reused by every attempt, so written before the check below.
        delta_list, delta_size = self._delta_manifests(delta, schema_id, pf, source, row_key)
        if latest is not None and self.snapshots.snapshot_exists(latest.id + 1):
            return None  # taken while this attempt read: lost before writing anything for it
        written: list[str] = []
        try:
            merged_base, new_base_files = self._merge_base(base_metas, pf, schema_id)
            written += new_base_files
            base_list, base_size = self.manifests.write_manifest_list(merged_base, pf)
            written.append(base_list)
            changelog_list: str | None = None
            changelog_size: int | None = None
            if changelog:
                metas = self.manifests.write_manifests(
                    list(changelog), pf, schema_id, s.manifest_target_size
                )
                written += [m.file_name for m in metas]
                changelog_list, changelog_size = self.manifests.write_manifest_list(metas, pf)
                written.append(changelog_list)
            index_manifest = latest.index_manifest if latest else None
            if index_delta:
                index_manifest = self.index_files.write_manifest(
                    index_manifest, index_delta, pf, self._unaware
                )
                written.append(index_manifest)

            added = sum(e.file.row_count for e in delta if e.kind == mf.KIND_ADD)
            deleted = sum(e.file.row_count for e in delta if e.kind == mf.KIND_DELETE)
            previous_total = (latest.total_record_count or 0) if latest else 0
            record, ledger = self.snapshots.commit_records(latest)
            snapshot = Snapshot(
                uuid=str(uuid.uuid4()),
                id=(latest.id + 1) if latest else 1,
                schema_id=schema_id,
                base_manifest_list=base_list,
                base_manifest_list_size=base_size,
                delta_manifest_list=delta_list,
                delta_manifest_list_size=delta_size,
                changelog_manifest_list=changelog_list,
                changelog_manifest_list_size=changelog_size,
                index_manifest=index_manifest,
                commit_user=self.commit_user,
                commit_identifier=identifier,
                commit_kind=kind,
                time_millis=clock.now_millis(),
                total_record_count=previous_total + added - deleted,
                delta_record_count=added - deleted,
                changelog_record_count=sum(e.file.row_count for e in changelog)
                if changelog
                else None,
                watermark=latest.watermark if latest else None,
                statistics=latest.statistics
                if latest is not None and latest.schema_id == schema_id
                else None,
                next_row_id=next_row_id,
                properties={
                    COMMITTED_IDENTIFIERS_PROPERTY: with_identifier(
                        record, self.commit_user, identifier
                    ),
                    COMMIT_LEDGER_PROPERTY: ledger.with_snapshot(
                        self.commit_user, (latest.id + 1) if latest else 1
                    ).to_text(),
                },
            )
            if latest is not None and not self.snapshots.snapshot_exists(latest.id):
                # expired while this attempt wrote: a newer snapshot exists, and the id after
                # the base may be free again (chain_check.py); cheaper to see now than after
                LOG.info(
                    "Table '%s': base snapshot %d expired while the commit ran; trying again.",
                    s.table_name,
                    latest.id,
                )
                self.manifests.delete_quietly(written)
                self._list_latest = True
                return None
        except BaseException:
            self.manifests.delete_quietly(written)
            raise
        try:
            published = self.snapshots.try_publish(snapshot)
        except OSError as e:
            # the request may have gone through: its manifests stay, it is looked for later
            raise _UncertainPublish(snapshot, e) from e
        if published:
            try:
                accepted = self._accept(snapshot, delta, written)
            except OSError as e:
                # published, but not yet verified: decided like a publish whose answer was lost
                raise _UncertainPublish(snapshot, e) from e
            return snapshot.id if accepted else None
        self.manifests.delete_quietly(written)
        return None

    def compact_manifest(self) -> int | None:
        """Java's ``compactManifest``: one COMPACT snapshot whose base list is the latest
        snapshot's manifests merged with a minimum count and a full-compaction threshold of 1
        (every small manifest merged, every DELETE entry dropped with its ADD), its delta list
        empty; no snapshot when the merge changes nothing or the table has none. Returns the
        new snapshot's id, or None."""
        self._compacting_manifests = True
        try:
            return self._try_commit(lambda _: [], COMPACT, BATCH_COMMIT_IDENTIFIER, False)
        except _NothingToCompact:
            return None
        finally:
            self._compacting_manifests = False

    def _merge_base(
        self, base_metas: list[mf.ManifestFileMeta], pf: PathFactory, schema_id: int
    ) -> tuple[list[mf.ManifestFileMeta], list[str]]:
        """The new base list from the latest snapshot's manifests (commit/manifest_merger.py),
        with the table's thresholds, or with 1 and 1 for ``compact_manifest``."""
        s = self.settings
        full = self._compacting_manifests
        merged, written = merge_manifests(
            self.manifests,
            base_metas,
            pf,
            schema_id,
            s.manifest_target_size,
            1 if full else s.manifest_merge_min_count,
            1 if full else s.manifest_full_compaction_size,
        )
        if full and [m.file_name for m in merged] == [m.file_name for m in base_metas]:
            raise _NothingToCompact
        return merged, written

    def _delta_manifests(
        self,
        delta: list[ManifestEntry],
        schema_id: int,
        pf: PathFactory,
        source: list[ManifestEntry] | None = None,
        row_key: tuple[int, int] | None = None,
    ) -> tuple[str, int]:
        """The delta manifest list of ``delta``: written once per commit and reused by every
        attempt that commits the same entries (an append's do not depend on the latest
        snapshot), so an attempt that lost the race rewrites only the base list. With row
        tracking ``delta`` is ``source`` numbered for ``row_key`` (snapshot id, first row id):
        the same pair gives the same entries, so an attempt after an uncertain publish of that
        snapshot reuses (never deletes) the manifests the publish may refer to."""
        source = delta if source is None else source
        cached = self._delta
        if (
            cached is not None
            and cached.entries is source
            and cached.schema_id == schema_id
            and cached.row_key == row_key
        ):
            return cached.list_name, cached.list_size
        self._drop_delta()
        s = self.settings
        metas = self.manifests.write_manifests(delta, pf, schema_id, s.manifest_target_size)
        try:
            name, size = self.manifests.write_manifest_list(metas, pf)
        except BaseException:
            self.manifests.delete_quietly([m.file_name for m in metas])
            raise
        files = [m.file_name for m in metas]
        self._delta = _DeltaFiles(source, schema_id, name, size, files, row_key)
        return name, size

    def _drop_delta(self) -> None:
        """Delete the cached delta manifests (no snapshot of ours refers to them)."""
        if self._delta is not None:
            self.manifests.delete_quietly([*self._delta.files, self._delta.list_name])
            self._delta = None

    def _check_conflicts(
        self,
        delta: list[ManifestEntry],
        base_metas: list[mf.ManifestFileMeta],
        latest: Snapshot,
        kind: str,
        index_delta: Sequence[IndexManifestEntry] = (),
    ) -> None:
        """Java's ConflictDetection.checkConflicts (commit/conflict_detection.py) against the
        live files (and, for deletion vectors, index files) of the partitions this commit
        changes in ``latest``."""
        partitions = {e.partition for e in delta} | {e.partition for e in index_delta}
        base = merge_entries(
            e for e in self.manifests.read_entries(base_metas) if e.partition in partitions
        )
        base_index: list[IndexManifestEntry] = []
        if latest.index_manifest and self.conflicts.reads_base_index(index_delta):
            base_index = [
                e
                for e in self.index_files.read_manifest(latest.index_manifest)
                if e.partition in partitions
            ]
        self.conflicts.check_conflicts(
            latest.id, latest.commit_user, base, delta, kind, base_index, index_delta
        )


@dataclass
class _DeltaFiles:
    entries: list[ManifestEntry]
    schema_id: int
    list_name: str
    list_size: int
    files: list[str]
    row_key: tuple[int, int] | None = None


class _NothingToCompact(Exception):
    """``compact_manifest`` found nothing to merge: no snapshot is written (as Java)."""


class _UncertainPublish(Exception):
    """A snapshot's publish request failed after it was sent: it may or may not be in."""

    def __init__(self, snapshot: Snapshot, cause: OSError) -> None:
        super().__init__(str(cause))
        self.snapshot = snapshot
        self.cause = cause


def new_store_commit(store: FileStore, commit_user: str) -> FileStoreCommit:
    """The commit of ``store``'s snapshots for ``commit_user`` (Java's FileStore.newCommit)."""
    o = store.options
    settings = CommitSettings(
        table_name=store.name,
        table_path=store.path,
        bucket=o.bucket,
        manifest_target_size=o.manifest_target_file_size,
        manifest_merge_min_count=o.manifest_merge_min_count,
        max_retries=o.commit_max_retries,
        min_retry_wait_ms=o.commit_min_retry_wait_ms,
        max_retry_wait_ms=o.commit_max_retry_wait_ms,
        partition_keys=tuple(store.partition_keys),
        partition_types=tuple(store.partition_types),
        partition_default_name=o.partition_default_name,
        dynamic_partition_overwrite=o.dynamic_partition_overwrite,
        overwrite_upgrade=o.overwrite_upgrade,
        key_types=tuple(
            store.table_schema.field(k).type for k in store.table_schema.trimmed_primary_keys()
        )
        if store.primary_keys
        else (),
        num_levels=o.num_levels,
        deletion_vectors=o.deletion_vectors_enabled,
        schema_id=store.table_schema.id,
        row_tracking=o.row_tracking_enabled,
        manifest_full_compaction_size=o.manifest_full_compaction_threshold_size,
    )
    return FileStoreCommit(
        settings, commit_user, store.snapshot_manager, store.schema_manager, store.manifest_io
    )
