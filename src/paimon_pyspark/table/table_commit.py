"""TableCommit: the user-facing end of the write protocol.

Mirrors org.apache.paimon.table.sink.TableCommitImpl: one batch commit per builder under
identifier Long.MAX_VALUE, or numbered commits of one commit user (a streaming or retrying
driver), always filtered against what that user already committed (``filterCommitted``), so
committing the same identifier twice adds no second snapshot. A TableCommit made by an
overwriting builder replaces partitions (``FileStoreCommit.overwrite``) instead of appending,
through ``commit`` (pypaimon's and Java's spelling) or ``overwrite`` (seed 004's).

After every commit the table is maintained as TableCommitImpl's ``maintain`` does
(maintenance/commit_maintenance.py: automatic tags, then tag, partition, consumer and snapshot
expiry by the table's options), unless ``write-only`` is set. Java runs a batch commit's
maintenance in the committing thread whatever ``snapshot.expire.execution-mode`` says, and so
do we for every commit. Java lets a maintenance error escape from a batch commit that already
succeeded; we log it and return the new snapshots, so a caller never retries a commit that is
in the table.

With ``partition.end-input-to-done``, a batch commit (the end of its input) then marks done the
partitions it wrote new files into (maintenance/partition_mark_done.py), as Java's Spark and
Flink writers do after their commit.

Messages come from outside (another process's bytes, a user's objects), so every call that
takes them (``commit``, ``filter_and_commit``, ``abort``) first checks that they name only the
table's own files (store/path_checks.py) and refuses the whole call otherwise.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from paimon_pyspark.commit.commit_callback import CommitCallback, CommitCallbackContext
from paimon_pyspark.commit.file_store_commit import FileStoreCommit, new_store_commit
from paimon_pyspark.commit.overwrite import Overwrite, PartitionFilter, partition_spec
from paimon_pyspark.commit.truncate import partitions_filter, truncate
from paimon_pyspark.errors import (
    CommitConflictError,
    CommitError,
    InvalidArgumentError,
    UnsafeStoreError,
    describe,
)
from paimon_pyspark.maintenance.commit_maintenance import maintain
from paimon_pyspark.maintenance.partition_mark_done import (
    end_input_to_done,
    mark_done_actions,
    mark_partitions_done,
    partition_paths_of_messages,
)
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, ManifestCommittable
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.path_checks import check_commit_messages
from paimon_pyspark.store.paths import bucket_dir

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

IdentifierOrCommittable = TypeVar("IdentifierOrCommittable", int, ManifestCommittable)

LOG = logging.getLogger(__name__)


class TableCommit:
    def __init__(
        self,
        store: FileStore,
        commit_user: str,
        overwrite: Overwrite | None = None,
        new_user: bool = False,
    ) -> None:
        """``new_user``: the commit user was just generated and has committed nothing, so a
        batch commit cannot be a retry and the table's snapshots need not be searched for one
        of it (that search reads every snapshot back to the oldest)."""
        self.store = store
        self.commit_user = commit_user
        self.overwrite_spec = overwrite
        self.new_user = new_user
        self._committed = False
        self._append_check = False
        self._commit_callbacks: list[CommitCallback] = []

    def add_commit_callback(self, callback: CommitCallback) -> None:
        """Call ``callback`` after each snapshot this TableCommit commits (pypaimon's).

        It gets a CommitCallbackContext (commit/commit_callback.py): the snapshot, the manifest
        entries it committed and the commit identifier. A retry that commits nothing calls no
        callback. Its exception reaches the caller with the commit already in the table.
        """
        if not isinstance(callback, CommitCallback):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': add_commit_callback takes a CommitCallback, got "
                f"{describe(callback)}."
            )
        self._commit_callbacks.append(callback)

    def truncate_table(self) -> None:
        """Delete every row of the table in one OVERWRITE snapshot (Java's and pypaimon's
        ``truncate_table``; commit/truncate.py). Once per TableCommit, as a batch commit."""
        self._truncate(None, "TableCommit.truncate_table()")

    def truncate_partitions(self, partitions: Sequence[Mapping[str, Any]]) -> None:
        """Delete every row of the partitions matching any of ``partitions`` in one OVERWRITE
        snapshot (Java's ``truncatePartitions``). A spec may name some partition keys only
        (every partition under it goes); values are Python values or Java's strings, and
        ``partition.default-name`` or None is the null partition. Partitions that do not exist
        are ignored, and the snapshot is committed all the same, as in Java."""
        call = "TableCommit.truncate_partitions(partitions)"
        self._truncate(partitions_filter(self.store, partitions, call), call)

    def _truncate(self, filter_: PartitionFilter | None, call: str) -> None:
        if self._committed:
            raise CommitError(
                f"Table '{self.store.name}': {call}: a batch commit can only be committed once."
            )
        snapshot_id = truncate(self.store, self.commit_user, filter_, BATCH_COMMIT_IDENTIFIER)
        self._committed = True
        self._notify_commit_callbacks([snapshot_id], BATCH_COMMIT_IDENTIFIER)
        self._maintain(snapshot_id, BATCH_COMMIT_IDENTIFIER)

    def _notify_commit_callbacks(self, snapshot_ids: Sequence[int], identifier: int) -> None:
        if not self._commit_callbacks:
            return
        sm, mio = self.store.snapshot_manager, self.store.manifest_io
        for snapshot_id in snapshot_ids:
            snapshot = sm.snapshot(snapshot_id)
            entries = mio.read_entries(mio.read_manifest_list(snapshot.delta_manifest_list))
            context = CommitCallbackContext(snapshot, entries, identifier)
            for callback in self._commit_callbacks:
                callback.call(context)

    def append_commit_check_conflict(self, check: bool = True) -> TableCommit:
        """Check APPEND commits for conflicts too (Java's ``appendCommitCheckConflict``).

        By default, as in Java, only compactions, overwrites and appends that remove files
        are checked; with this, a plain append also fails with CommitConflictError when its
        bucket count differs from the partition's (a writer planned before a rescale).
        """
        self._append_check = check
        return self

    def commit(
        self, commit_messages: Sequence[CommitMessage], commit_identifier: int | None = None
    ) -> list[int]:
        """Commit the messages of every writer; returns the ids of the new snapshots.

        Without ``commit_identifier`` this is the one batch commit of this TableCommit
        (identifier Long.MAX_VALUE), committed as Java commits it: unfiltered, so a second
        builder-level commit of new files is never mistaken for a retry. With an identifier,
        identifiers of a commit user must increase from commit to commit, and the commit is
        skipped, returning ``[]``, when this commit user has committed that identifier already:
        a driver that retries after a crash cannot commit the same files twice.

        From an overwriting builder (``overwrite()``), the commit replaces partitions, even
        with no messages at all (a static overwrite then empties its partition). A message
        naming anything but the table's own files raises InvalidCommitMessageError and nothing
        is committed.
        """
        if self._committed and commit_identifier is None:
            raise CommitError(
                f"Table '{self.store.name}': a batch commit can only be committed once."
            )
        self._check_messages(commit_messages)
        end_of_input = commit_identifier is None and self._marks_done()
        identifier = BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier
        store_commit = self._store_commit()
        ids: list[int] = []
        try:
            if commit_identifier is None:
                todo = not self._is_batch_retry(commit_messages)
            else:
                todo = bool(store_commit.filter_committed([identifier]))
            if todo:
                self._check_files_exist(commit_messages)
        except OSError as e:
            raise CommitError(
                f"Table '{self.store.name}': checking the commit before it started failed: "
                f"{e}. Nothing was committed."
            ) from e
        if todo:
            try:
                ids = self._commit(store_commit, commit_messages, identifier)
            except UnsafeStoreError:
                self.abort(commit_messages)  # refused before any publish: the files go too
                raise
        self._committed = True
        # a batch write (Java's writers' postCommit: any message, an overwrite); a compaction
        # commits compact increments only and gets no batch tag, as Java's procedures
        batch_write = commit_identifier is None and (
            self.overwrite_spec is not None
            or any(not m.data_increment.is_empty() for m in commit_messages)
        )
        self._maintain(ids[-1] if ids else None, identifier, batch_write)
        if end_of_input:
            self._mark_done(commit_messages)
        return ids

    def _marks_done(self) -> bool:
        """Whether this batch commit ends with marking its partitions done
        (``partition.end-input-to-done``); an action we cannot run is refused here, before
        anything is committed (Java fails after its commit)."""
        store = self.store
        if not store.partition_keys or not end_input_to_done(store):
            return False
        mark_done_actions(store)
        return True

    def _mark_done(self, messages: Sequence[CommitMessage]) -> None:
        """Mark done the partitions the batch wrote new files into (Java's writers mark at
        the end of input, after the commit and its maintenance). A failure is logged: the
        commit stands, and ``mark_partition_done`` marks them again."""
        written = [m for m in messages if m.data_increment.new_files]
        try:
            mark_partitions_done(self.store, partition_paths_of_messages(self.store, written))
        except Exception:
            LOG.warning(
                "Table '%s': marking the written partitions done failed; the commit stands.",
                self.store.name,
                exc_info=True,
            )

    def overwrite(
        self,
        commit_messages: Sequence[CommitMessage],
        static_partitions: Mapping[str, Any] | None = None,
    ) -> list[int]:
        """Commit the messages as an insert overwrite; seed 004's (paimon-rust's) spelling.

        ``overwrite(messages)`` replaces what the builder's ``with_overwrite()`` said: the
        partitions the new files fall in (a dynamic overwrite), or the builder's static
        partition. ``overwrite(messages, {"dt": "2026-06-26"})`` replaces exactly the
        partitions that spec matches, even by no data, as ``with_overwrite(spec)`` does; it
        may not contradict a different spec given to the builder.

        The builder must have been told to overwrite (``with_overwrite()`` or ``overwrite()``)
        before its writers were made: the writers of an overwrite ignore the table's current
        files, and writers that did not could hand over compactions of files this commit
        deletes. Otherwise CommitError, and nothing is committed. Everything else is
        ``commit(messages)``.
        """
        base = self.overwrite_spec
        if base is None:
            raise CommitError(
                f"Table '{self.store.name}': TableCommit.overwrite needs a write builder told "
                "to overwrite (with_overwrite() or overwrite()) before its writers were made; "
                "nothing was committed."
            )
        if static_partitions is not None:
            call = "TableCommit.overwrite(static_partitions)"
            spec = static_partition_spec(self.store, static_partitions, call)
            if base.static_partition and self._canonical(spec) != self._canonical(
                base.static_partition
            ):
                raise InvalidArgumentError(
                    f"Table '{self.store.name}': {call} is {spec}, but the write builder "
                    f"was told to overwrite {dict(base.static_partition)}; give one of them."
                )
            self.overwrite_spec = Overwrite(spec, base.base_snapshot_id)
        return self.commit(commit_messages)

    def _canonical(self, spec: Mapping[str, Any]) -> dict[int, Any]:
        s = self.store
        return partition_spec(
            s.name, s.partition_keys, s.partition_types, spec, s.options.partition_default_name
        )

    def _commit(
        self,
        store_commit: FileStoreCommit,
        messages: Sequence[CommitMessage],
        identifier: int,
        check_append_files: bool = False,
    ) -> list[int]:
        if self.overwrite_spec is not None:
            ids = store_commit.overwrite(messages, self.overwrite_spec, identifier)
        else:
            store_commit.append_commit_check_conflict = self._append_check
            ids = store_commit.commit(messages, identifier, check_append_files)
        self._notify_commit_callbacks(ids, identifier)
        return ids

    def _is_batch_retry(self, messages: Sequence[CommitMessage]) -> bool:
        """True when a batch commit of this user already put exactly these files in the table.

        Only a commit user with a snapshot of its own pays for the check; files half present
        mean a corrupt retry and fail the commit instead of adding files twice.
        """
        sm = self.store.snapshot_manager
        if self.new_user or sm.latest_snapshot_of_user(self.commit_user) is None:
            return False
        latest = sm.latest()
        assert latest is not None
        live = {
            (e.partition, e.bucket, e.file.file_name, e.file.level)
            for e in self.store.manifest_io.live_entries(latest)
        }
        # What these messages leave live, by level: a compaction that only moves a file up keeps
        # its name, so a name alone would mistake a new commit for a retry of an old one.
        added = {
            (m.partition, m.bucket, f.file_name, f.level)
            for m in messages
            for f in m.data_increment.new_files + m.compact_increment.compact_after
        }
        removed = {
            (m.partition, m.bucket, f.file_name, f.level)
            for m in messages
            for f in m.data_increment.deleted_files + m.compact_increment.compact_before
        }
        ours = sorted(added - removed)
        present = sum(1 for key in ours if key in live)
        if ours and present == len(ours):
            return True
        if present:
            raise CommitConflictError(
                f"Table '{self.store.name}': {present} of the {len(ours)} files of this commit "
                "are already committed; nothing was committed."
            )
        return False

    def filter_committed(
        self, identifiers_or_committables: Sequence[IdentifierOrCommittable]
    ) -> list[IdentifierOrCommittable]:
        """Those not committed yet by this commit user, sorted by identifier (filterCommitted).

        Takes commit identifiers or ManifestCommittables. An identifier is committed when it is
        at most the identifier of the newest snapshot of this commit user.
        """
        items = sorted(identifiers_or_committables, key=_identifier)
        keep = set(self._store_commit().filter_committed([_identifier(i) for i in items]))
        return [i for i in items if _identifier(i) in keep]

    def filter_and_commit(
        self, messages_by_identifier: Mapping[int, Sequence[CommitMessage]]
    ) -> int:
        """Commit, in identifier order, those commits this user has not committed yet.

        Java's filterAndCommit, used by a driver recovering a list of pending commits; returns
        how many were committed. Every message is checked before anything is committed, and,
        as in Java, appends are checked for conflicts like compactions (``checkAppendFiles``).
        """
        for messages in messages_by_identifier.values():
            self._check_messages(messages)
        pending = self.filter_committed(list(messages_by_identifier))
        if self.overwrite_spec is not None and len(pending) > 1:
            raise CommitError(
                f"Table '{self.store.name}': an overwrite commits one set of messages, got "
                f"{len(pending)} pending identifiers."
            )
        for identifier in pending:
            self._check_files_exist(messages_by_identifier[identifier])
        store_commit = self._store_commit()
        ids: list[int] = []
        for identifier in pending:
            ids += self._commit(store_commit, messages_by_identifier[identifier], identifier, True)
        if pending:
            self._maintain(ids[-1] if ids else None, pending[-1])
        return len(pending)

    def _maintain(self, latest_id: int | None, identifier: int, batch_write: bool = False) -> None:
        """The table's maintenance after a commit, in Java's order
        (maintenance/commit_maintenance.py): automatic tags, tag, partition, consumer,
        snapshot and changelog expiry, unless ``write-only``.

        A failure is logged, never raised: the commit before it is already in the table.
        """
        try:
            maintain(
                self.store,
                latest_id,
                identifier,
                batch_write=batch_write,
                commit_user=self.commit_user,
            )
        except Exception:
            LOG.warning(
                "Table '%s': the maintenance after the commit failed; the commit stands.",
                self.store.name,
                exc_info=True,
            )

    def abort(self, commit_messages: Sequence[CommitMessage]) -> None:
        """Delete the files that uncommitted messages point to.

        A compact_after file named in compact_before was upgraded (same file, new level): it
        is a live file of the table and stays (Java's FileStoreCommitImpl.abort deletes it too).
        If any message names anything but the table's own files, the whole call is refused with
        InvalidCommitMessageError before the first deletion: none of the messages' files is
        deleted, not even the valid ones, since one forged message casts doubt on the rest.
        """
        self._check_messages(commit_messages)
        for m in commit_messages:
            inputs = {f.file_name for f in m.compact_increment.compact_before}
            after = [f for f in m.compact_increment.compact_after if f.file_name not in inputs]
            changelog = m.data_increment.changelog_files + m.compact_increment.changelog_files
            for f in m.data_increment.new_files + tuple(after) + changelog:
                path = self.data_file_path(m, f)
                self.store.file_io.delete_quietly(path)
                for extra in f.extra_files:  # separate file indexes (Java leaves them orphan)
                    self.store.file_io.delete_quietly(os.path.join(os.path.dirname(path), extra))
            index_dir = os.path.join(self.store.path, "index")
            for i in m.data_increment.new_index_files + m.compact_increment.new_index_files:
                self.store.file_io.delete_quietly(
                    i.external_path or os.path.join(index_dir, i.file_name)
                )

    def close(self) -> None:
        """Close the commit callbacks (pypaimon's FileStoreCommit.close does, ignoring their
        errors)."""
        for callback in self._commit_callbacks:
            try:
                callback.close()
            except Exception:
                LOG.warning("Closing commit callback %r failed.", callback, exc_info=True)

    def data_file_path(self, m: CommitMessage, file: str | DataFileMeta) -> str:
        """Where a data file of ``m`` lies: in its bucket directory, or at its external path
        (``data-file.external-paths``; the messages were checked to keep it under a root)."""
        values = deserialize_with_arity(m.partition, self.store.partition_types)
        rel = self.store.partition_rel_path(values)
        base = os.path.join(self.store.path, rel) if rel else self.store.path
        bucket_path = os.path.join(base, bucket_dir(m.bucket))
        if isinstance(file, str):
            return os.path.join(bucket_path, file)
        return data_file_path(self.store.external_paths, bucket_path, file, self.store.name)

    def _store_commit(self) -> FileStoreCommit:
        return new_store_commit(self.store, self.commit_user)

    def _check_messages(self, messages: Sequence[CommitMessage]) -> None:
        if not isinstance(messages, list | tuple):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': commit messages must be a list of the "
                f"CommitMessages prepare_commit() returned, got {describe(messages)}."
            )
        check_commit_messages(self.store, messages)

    def _check_files_exist(self, messages: Sequence[CommitMessage]) -> None:
        """Every file the messages add is there (checked in parallel: one request each on an
        object store)."""
        paths = [
            self.data_file_path(m, f)
            for m in messages
            for f in m.data_increment.new_files
            + m.compact_increment.compact_after
            + m.data_increment.changelog_files
            + m.compact_increment.changelog_files
        ]
        io = self.store.file_io
        if len(paths) > 1 and io.is_object_store:
            with ThreadPoolExecutor(min(16, len(paths))) as pool:
                present = list(pool.map(io.is_file, paths))
        else:
            present = [io.is_file(p) for p in paths]
        for path, there in zip(paths, present, strict=True):
            if not there:
                raise CommitError(
                    f"Table '{self.store.name}': data file {path} of a commit message is "
                    "missing; nothing was committed."
                )


def static_partition_spec(store: FileStore, static_partition: object, call: str) -> dict[str, Any]:
    """``static_partition`` (None for a dynamic overwrite) as a checked spec for Overwrite.

    Not a mapping, or a key that is not a string, raises InvalidArgumentError naming ``call``;
    a key that is not a partition key, or a value that does not fit, PartitionSpecError.
    """
    if static_partition is not None and not isinstance(static_partition, Mapping):
        raise InvalidArgumentError(
            f"Table '{store.name}': {call} takes a mapping of partition key to value, or None, "
            f"got {describe(static_partition)}."
        )
    spec = dict(static_partition or {})
    bad = [k for k in spec if not isinstance(k, str)]
    if bad:
        raise InvalidArgumentError(
            f"Table '{store.name}': {call} has the key {describe(bad[0])}; keys are partition "
            "key names."
        )
    partition_spec(
        store.name,
        store.partition_keys,
        store.partition_types,
        spec,
        store.options.partition_default_name,
    )
    return spec


def _identifier(item: int | ManifestCommittable) -> int:
    return item.identifier if isinstance(item, ManifestCommittable) else item
