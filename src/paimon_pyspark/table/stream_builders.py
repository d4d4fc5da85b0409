"""Streaming writes: one long-lived write, a commit per checkpoint, each committed once.

Mirrors org.apache.paimon.table.sink.{StreamWriteBuilderImpl, StreamTableWrite,
StreamTableCommit} (TableWriteImpl and TableCommitImpl behind them), with pypaimon's names:
``new_stream_write_builder()``, ``new_write()``, ``prepare_commit(commit_identifier)``,
``new_commit()``, ``commit(messages, commit_identifier)``, ``filter_and_commit``.

The write is the batch TableWrite (write/table_write.py), kept open across checkpoints as
Java keeps its writers: after each ``prepare_commit`` the files it handed out are taken as the
bucket's new state, so the next checkpoint's records continue the bucket's sequence numbers,
its commit compaction sees the files the last one left (the LSM levels of a primary-key
bucket), and a dynamic-bucket write extends the hash index file it wrote last. This holds when
every prepared checkpoint is committed (by ``commit`` or, after a restart, by
``filter_and_commit``) before a later one is: after a failed commit, close the write and open
a new one, as a restarted job does.

Exactly once, across restarts: commit identifiers of one commit user increase, and a commit
skips the identifiers that user already committed (FileStoreCommit.filter_committed, read from
the user's newest snapshot, or from the record of committed identifiers that every snapshot
carries once that expired). The commit user must therefore be fixed by the caller (a job's
name, kept across restarts): a generated one is new after a restart and would commit a replay
again. A restarted write that is asked to prepare an identifier its user already committed
deletes that checkpoint's files and returns no messages, so a source that replays from an
earlier checkpoint leaves neither duplicates nor orphan files.

An empty checkpoint commits nothing, as pypaimon's StreamTableCommit (Java's stream commit
writes an empty APPEND snapshot instead). With ``full-compaction.delta-commits`` = n (or the
``full-compaction`` changelog producer, n = 1 when unset) a checkpoint whose identifier is a
multiple of n fully compacts the buckets written since the last such checkpoint (Java's
GlobalFullCompactionSinkWrite).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from numbers import Integral
from typing import TYPE_CHECKING

import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from paimon_pyspark.bucket.cross_partition import KeyIndexBootstrap
from paimon_pyspark.bucket.dynamic import HashIndex
from paimon_pyspark.errors import CommitError, InvalidArgumentError, describe
from paimon_pyspark.options import JAVA_LONG_MAX, JAVA_LONG_MIN
from paimon_pyspark.read.bootstrap import bootstrapped_global_assigner
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.store.index_io import HASH_INDEX
from paimon_pyspark.table.table_commit import TableCommit
from paimon_pyspark.write.compact_manager import full_compaction_due
from paimon_pyspark.write.table_write import TableWrite

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore
    from paimon_pyspark.table.file_store_table import FileStoreTable

_UNKNOWN = -1


class StreamWriteBuilder:
    """Makes the StreamTableWrite and StreamTableCommit of one commit user."""

    def __init__(self, table: FileStoreTable, commit_user: str | None = None) -> None:
        if commit_user is not None:
            _check_user(table.name, "new_stream_write_builder(commit_user)", commit_user)
        self.table = table
        self.commit_user = commit_user or str(uuid.uuid4())
        self._new_user = not commit_user

    def with_commit_user(self, commit_user: str) -> StreamWriteBuilder:
        """Write and commit as ``commit_user``: fix it across restarts for exactly once."""
        _check_user(
            self.table.name, "StreamWriteBuilder.with_commit_user(commit_user)", commit_user
        )
        self.commit_user = commit_user
        self._new_user = False
        return self

    def new_write(self) -> StreamTableWrite:
        return StreamTableWrite(self.table.store, self.commit_user, self._new_user)

    def new_commit(self) -> StreamTableCommit:
        return StreamTableCommit(self.table.store, self.commit_user)


class StreamTableWrite:
    """Writes Arrow data; ``prepare_commit(commit_identifier)`` once per checkpoint."""

    def __init__(self, store: FileStore, commit_user: str, new_user: bool = False) -> None:
        self.store = store
        self.commit_user = commit_user
        self._write = _CheckpointedWrite(
            store, commit_user, key_index_bootstrap=bootstrapped_global_assigner
        )
        self._new_user = new_user
        self._last_prepared: int | None = None
        self._last_committed: int | None = None
        """The identifier of this commit user's newest snapshot when the write first prepared."""
        self._looked_up = False
        self._since_full: set[tuple[bytes, int]] = set()
        """Buckets written since the last full compaction, compacted at the next one (Java's
        GlobalFullCompactionSinkWrite.writtenBuckets)."""

    def write_arrow(
        self,
        table: pa.Table,
        buckets: npt.ArrayLike | None = None,
        row_kinds: npt.ArrayLike | None = None,
    ) -> None:
        """As ``TableWrite.write_arrow``."""
        self._write.write_arrow(table, buckets, row_kinds)

    def write_arrow_batch(self, batch: pa.RecordBatch) -> None:
        self._write.write_arrow_batch(batch)

    def write_pandas(self, dataframe: pd.DataFrame) -> None:
        self._write.write_pandas(dataframe)

    def delete_arrow(self, table: pa.Table) -> None:
        """Write ``table``'s rows as -D records (primary-key tables)."""
        self._write.delete_arrow(table)

    def prepare_commit(self, commit_identifier: int) -> list[CommitMessage]:
        """Flush and describe what this checkpoint wrote; the write stays open.

        Identifiers must increase from call to call. An identifier this commit user already
        committed (a restarted job replaying) gets no messages, and its files are deleted.
        """
        identifier = check_identifier(
            self.store.name, "StreamTableWrite.prepare_commit(commit_identifier)", commit_identifier
        )
        if self._last_prepared is not None and identifier <= self._last_prepared:
            raise InvalidArgumentError(
                f"Table '{self.store.name}': StreamTableWrite.prepare_commit(commit_identifier) "
                f"got {identifier} after {self._last_prepared}; identifiers must increase."
            )
        self._last_prepared = identifier
        if self._committed_already(identifier):
            self._write.abort()
            return []
        full = full_compaction_due(self.store.options, identifier)
        self._write.full_compaction = full
        if full:
            for partition, bucket in self._since_full:
                self._write.compact_bucket(partition, bucket)
        messages = self._write.prepare_commit()
        if full:
            self._since_full.clear()
        elif self._write.compact_at_commit and full_compaction_due(self.store.options, None):
            self._since_full.update((m.partition, m.bucket) for m in messages if m.new_files)
        return messages

    def _committed_already(self, identifier: int) -> bool:
        if self._new_user:
            return False
        if not self._looked_up:
            sm = self.store.snapshot_manager
            self._last_committed = sm.last_identifier_of_user(self.commit_user)
            self._looked_up = True
        return self._last_committed is not None and identifier <= self._last_committed

    def abort(self) -> None:
        """Delete every file written since the last ``prepare_commit``."""
        self._write.abort()

    def close(self) -> None:
        self._write.close()

    def __enter__(self) -> StreamTableWrite:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StreamTableCommit:
    """Commits the messages of each checkpoint under its identifier, once per commit user."""

    def __init__(self, store: FileStore, commit_user: str) -> None:
        self.store = store
        self.commit_user = commit_user
        self._commit = TableCommit(store, commit_user)

    def commit(self, commit_messages: Sequence[CommitMessage], commit_identifier: int) -> list[int]:
        """Commit one checkpoint; returns the ids of the new snapshots (APPEND, then COMPACT
        when the write compacted). An identifier this commit user has committed already is
        skipped and returns ``[]``, so a retried or replayed checkpoint is never doubled."""
        identifier = check_identifier(
            self.store.name, "StreamTableCommit.commit(commit_identifier)", commit_identifier
        )
        return self._commit.commit(commit_messages, identifier)

    def filter_and_commit(
        self, commit_identifiers_and_messages: Mapping[int, Sequence[CommitMessage]]
    ) -> int:
        """Commit, in identifier order, the checkpoints this commit user has not committed
        (Java's filterAndCommit: a restarted job recommitting what its state held); returns
        how many were committed. Appends are checked for conflicts, as Java checks them."""
        if not isinstance(commit_identifiers_and_messages, Mapping):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': StreamTableCommit.filter_and_commit takes a mapping "
                "of commit identifier to the messages prepare_commit returned, got "
                f"{describe(commit_identifiers_and_messages)}."
            )
        checked = {
            check_identifier(
                self.store.name, "StreamTableCommit.filter_and_commit(identifier)", i
            ): messages
            for i, messages in commit_identifiers_and_messages.items()
        }
        return self._commit.filter_and_commit(checked)

    def filter_committed(self, commit_identifiers: Sequence[int]) -> list[int]:
        """The identifiers this commit user has not committed yet, sorted."""
        checked = [
            check_identifier(self.store.name, "StreamTableCommit.filter_committed", i)
            for i in commit_identifiers
        ]
        return self._commit.filter_committed(checked)

    def abort(self, commit_messages: Sequence[CommitMessage]) -> None:
        """Delete the files of messages that will not be committed."""
        self._commit.abort(commit_messages)

    def close(self) -> None:
        self._commit.close()

    def __enter__(self) -> StreamTableCommit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _CheckpointedWrite(TableWrite):
    """The batch TableWrite, carrying each checkpoint's files into the next one."""

    def __init__(
        self, store: FileStore, commit_user: str, key_index_bootstrap: KeyIndexBootstrap
    ) -> None:
        super().__init__(store, commit_user, key_index_bootstrap=key_index_bootstrap)
        self._written_index: _WrittenHashIndex | None = None
        if self.index_maintainer is not None:
            self._written_index = _WrittenHashIndex(self.index_maintainer.index)
            self.index_maintainer.index = self._written_index

    def prepare_commit(self) -> list[CommitMessage]:
        messages = super().prepare_commit()
        for m in messages:
            self._carry(m)
        return messages

    def _carry(self, m: CommitMessage) -> None:
        """Take ``m``'s files as its bucket's state: the highest sequence number, the live
        files a commit compaction picks from, the bucket's hash index file."""
        key = (m.partition, m.bucket)
        added = m.data_increment.new_files + m.compact_increment.compact_after
        if self._restored is not None and added:
            top = max(f.max_sequence_number for f in added)
            self._restored[key] = max(self._restored.get(key, _UNKNOWN), top)
        if self._restored is not None and self.compact_at_commit:
            gone = {(f.file_name, f.level) for f in m.compact_increment.compact_before}
            kept = [*self._live_files.get(key, ()), *m.data_increment.new_files]
            live = [f for f in kept if (f.file_name, f.level) not in gone]
            self._live_files[key] = live + list(m.compact_increment.compact_after)
        if self._written_index is not None:
            for index in m.data_increment.new_index_files + m.compact_increment.new_index_files:
                if index.index_type == HASH_INDEX:
                    self._written_index.written[key] = index


class _WrittenHashIndex(HashIndex):
    """The snapshot's hash index, with the index files this write produced since in front."""

    def __init__(self, base: HashIndex) -> None:
        super().__init__(base.handler, base.snapshot, base.ignore_previous_files)
        self.base = base
        self.written: dict[tuple[bytes, int], IndexFileMeta] = {}

    def entry(self, partition: bytes, bucket: int) -> IndexFileMeta | None:
        own = self.written.get((partition, bucket))
        return own if own is not None else self.base.entry(partition, bucket)


def check_identifier(table: str, call: str, identifier: object) -> int:
    """``identifier`` as a Java long, or InvalidArgumentError naming ``call``."""
    if (
        isinstance(identifier, bool)
        or not isinstance(identifier, Integral)
        or not JAVA_LONG_MIN <= int(identifier) <= JAVA_LONG_MAX
    ):
        raise InvalidArgumentError(
            f"Table '{table}': {call} takes a commit identifier, an int in Java's long range, "
            f"got {describe(identifier)}."
        )
    return int(identifier)


def _check_user(table: str, call: str, commit_user: object) -> None:
    if not isinstance(commit_user, str):
        raise InvalidArgumentError(
            f"Table '{table}': {call} must be a non-empty string, got {describe(commit_user)}."
        )
    if not commit_user:
        raise CommitError(f"Table '{table}': a commit user must be a non-empty string.")
