"""A Ray Data datasink: Ray tasks write files, the driver commits them once.

Mirrors pypaimon's ``write.ray_datasink.PaimonDatasink`` (``TableWrite.write_ray`` uses it).
``on_write_start`` opens one batch write builder on the driver (planning an overwrite there,
against the latest snapshot then); every write task opens a builder of the same commit user on
its copy of the table, writes its blocks and returns the commit messages as versioned bytes
(spec/versioned_record.py: a header, then Java's CommitMessageSerializer bytes), never a pickle;
``on_write_complete`` commits all of them as one snapshot through the driver's builder.

The table arrives through the constructor as the facade (anything shaped like ``RayWriteTable``,
as FileStoreTable is), so this module needs nothing from the layers above ``write/``. Ray
pickles the datasink to its workers: the table pickles as plain values and reloads there
(``FileStoreTable.__reduce__``), and the driver's builder stays on the driver.

Any task may write any bucket, so tasks write as shared-bucket writers do
(write/shared_buckets.py): interleaved sequence numbers, no compaction at a task's commit,
append files renumbered on the driver; after the data snapshot the driver gives a fixed-bucket
table's written buckets the compaction a lone writer's commit makes (a COMPACT snapshot, as the
Spark door does). Tables with ``bucket = -1`` and a primary key are refused: their buckets are
assigned per key by one assigner, which a Ray task of arbitrary rows cannot be.

A task that fails removes its own files (``TableWrite.close``), and a failed commit removes the
files of every task. If the job fails after some tasks finished, their files stay unreferenced,
as a killed Java writer's do, until ``remove_orphan_files``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
from ray.data.block import Block, BlockAccessor
from ray.data.datasource.datasink import Datasink, WriteResult

from paimon_pyspark.errors import CommitOutcomeUnknownError, PaimonError, UnsupportedOptionError
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.versioned_record import RecordReader, RecordWriter
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.write.compact_manager import compact_written_buckets
from paimon_pyspark.write.shared_buckets import SHARED_BUCKET_STRIDE, renumber_shared_buckets

if TYPE_CHECKING:
    from ray.data._internal.execution.interfaces import TaskContext

    from paimon_pyspark.store.file_store import FileStore
    from paimon_pyspark.write.table_write import TableWrite

LOG = logging.getLogger(__name__)

_RESULT_MAGIC = b"PPrw"
_RESULT_VERSION = 1


class RayCommit(Protocol):
    def commit(
        self, commit_messages: Sequence[CommitMessage], commit_identifier: int | None = None
    ) -> list[int]: ...

    def abort(self, commit_messages: Sequence[CommitMessage]) -> None: ...


class RayWriteBuilder(Protocol):
    commit_user: str

    def overwrite(self, static_partition: Mapping[str, Any] | None = None) -> RayWriteBuilder: ...

    def new_write(self, sequence_slot: tuple[int, int] | None = None) -> TableWrite: ...

    def new_commit(self) -> RayCommit: ...


class RayWriteTable(Protocol):
    """What the datasink needs of a table: its name, its store and batch write builders."""

    @property
    def name(self) -> str: ...

    @property
    def store(self) -> FileStore: ...

    def new_batch_write_builder(self, commit_user: str | None = None) -> RayWriteBuilder: ...


class PaimonDatasink(Datasink[bytes]):
    """``dataset.write_datasink(PaimonDatasink(table))``: one snapshot for the whole dataset
    (an overwrite with ``overwrite=True``: the partitions written are replaced, or the whole
    table if it is unpartitioned)."""

    def __init__(self, table: RayWriteTable, overwrite: bool = False) -> None:
        self.table = table
        self.overwrite = overwrite
        self.commit_user: str | None = None
        self.snapshot_ids: list[int] = []
        """The snapshots the commit made (on the driver, after the write)."""
        self._builder: RayWriteBuilder | None = None

    def __getstate__(self) -> dict[str, Any]:
        """What a write task gets: the table, the overwrite flag and the commit user."""
        return {k: v for k, v in self.__dict__.items() if k != "_builder"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._builder = None

    def get_name(self) -> str:
        return f"PaimonTable({self.table.name})"

    def on_write_start(self, schema: pa.Schema | None = None) -> None:
        mode = self.table.store.bucket_mode
        if mode in (BucketMode.HASH_DYNAMIC, BucketMode.KEY_DYNAMIC):
            raise UnsupportedOptionError(
                f"Table '{self.table.name}': a Ray write cannot write a primary-key table with "
                f"'bucket' = '-1' ({mode.value}): one assigner must see every row of a key. Use "
                "paimon_pyspark.spark.write, or a TableWrite in one process."
            )
        store = self.table.store
        if not self.overwrite and not store.primary_keys and store.options.upsert_key:
            raise UnsupportedOptionError(
                f"Table '{self.table.name}': option 'upsert-key' makes an insert replace the "
                "rows with the same key, which a Ray write cannot do (its tasks never see all "
                "rows at once). Use table.new_batch_write_builder().new_write() or "
                "paimon_pyspark.spark.write, or an overwrite."
            )
        builder = self.table.new_batch_write_builder()
        self._builder = builder.overwrite() if self.overwrite else builder
        self.commit_user = self._builder.commit_user

    def write(self, blocks: Iterable[Block], ctx: TaskContext) -> bytes:
        """One write task, in a Ray worker: its blocks' rows as new files, described by commit
        messages in versioned bytes."""
        if ctx.task_idx >= SHARED_BUCKET_STRIDE:
            raise PaimonError(
                f"Table '{self.table.name}': a Ray write supports up to {SHARED_BUCKET_STRIDE} "
                f"write tasks, this is task {ctx.task_idx}; repartition the dataset into fewer "
                "blocks."
            )
        builder = self.table.new_batch_write_builder(self.commit_user)
        if self.overwrite:
            builder = builder.overwrite()
        slot = (ctx.task_idx, SHARED_BUCKET_STRIDE)
        with builder.new_write(slot) as table_write:
            for block in blocks:
                data = BlockAccessor.for_block(block).to_arrow()
                if data.num_rows:
                    table_write.write_arrow(data)
            messages = table_write.prepare_commit()
        return RecordWriter(_RESULT_MAGIC, _RESULT_VERSION).write_messages(messages).to_bytes()

    def on_write_complete(self, write_result: WriteResult[bytes]) -> None:
        if self._builder is None:
            raise PaimonError(
                f"Table '{self.table.name}': the Ray write completed without on_write_start "
                "on this datasink; nothing was committed."
            )
        store = self.table.store
        messages = [m for data in write_result.write_returns for m in _messages(data)]
        if not store.primary_keys and not store.options.row_tracking_enabled:
            messages = renumber_shared_buckets(messages)
        if not messages and not self.overwrite:
            LOG.info("Table '%s': the Ray write produced no rows to commit.", self.table.name)
            return
        self.snapshot_ids = _commit_or_abort(self._builder.new_commit(), messages)
        # a table that needs lookup (first-row, deletion vectors) is read without level 0:
        # its written buckets are compacted in every bucket mode that compacts at commit
        lookup = store.options.need_lookup(bool(store.primary_keys)) and store.bucket_mode in (
            BucketMode.HASH_DYNAMIC,
            BucketMode.KEY_DYNAMIC,
        )
        if self.snapshot_ids and (store.bucket_mode == BucketMode.HASH_FIXED or lookup):
            self.snapshot_ids += self._compact_written(messages)

    def _compact_written(self, messages: Sequence[CommitMessage]) -> list[int]:
        """The compaction each written bucket's lone writer would have made at its commit."""
        touched = {(m.partition, m.bucket) for m in messages if m.new_files}
        try:
            compacted = compact_written_buckets(self.table.store, touched)
            if not compacted:
                return []
            commit = self.table.new_batch_write_builder(self.commit_user).new_commit()
            return _commit_or_abort(commit, compacted)
        except Exception as e:
            raise PaimonError(
                f"Table '{self.table.name}': the Ray write is committed (snapshot "
                f"{self.snapshot_ids[-1]}), but compacting the buckets it wrote failed: {e}. The "
                "rows are readable; compact them with paimon_pyspark.procedures.compact."
            ) from e

    def on_write_failed(self, error: Exception) -> None:
        ids = self.snapshot_ids
        outcome = f"after committing snapshots {ids}" if ids else "and committed nothing"
        LOG.error("Table '%s': the Ray write failed %s: %s", self.table.name, outcome, error)


def _commit_or_abort(commit: RayCommit, messages: Sequence[CommitMessage]) -> list[int]:
    """Commit ``messages``; if the commit surely failed, delete the files they name."""
    try:
        return commit.commit(messages)
    except CommitOutcomeUnknownError:
        raise
    except BaseException:
        commit.abort(messages)
        raise


def _messages(data: bytes) -> tuple[CommitMessage, ...]:
    r = RecordReader(data, _RESULT_MAGIC, {_RESULT_VERSION}, "a Ray write task's result")
    messages = r.read_messages()
    r.finish()
    return messages
