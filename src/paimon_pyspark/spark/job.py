"""A distributed write job: executors write files and return commit messages, the driver
commits them once.

Every Spark door uses it: ``paimon_pyspark.spark.write`` (mapInArrow + collect), the Python
Data Source (``df.write.format("paimon")``) and the procedures run as Spark jobs (``run_task``).
Every task records the files it produced in a staging record under
``<table>/.paimon-staging/<commit user>/`` before returning; the driver commits the messages of
the attempts Spark kept and then deletes the files of every other record (failed jobs, retried
or speculative attempts), so no job leaves orphan files behind.

A job is open while its ``_OPEN`` marker is in that directory. The driver puts it down when it
creates the job, before any task can run, and when it commits or aborts it removes the marker
first, then lists and cleans the records, then removes the directory. A task attempt checks the
marker after saving its record: an attempt whose record the driver's listing missed saved it
after the marker went, so it sees no marker and removes its own files and record. Attempts that
outlive their job (speculative, retried, or still running when a failed job is aborted) thus
clean up after themselves, and nothing of the job is left once its last attempt is over.

Why the job marks "open" rather than "finished": earlier versions put down a ``_FINISHED``
marker at the end and had to keep it (an hour) for attempts still running, since a straggler
that saves its record after the marker is gone keeps its files for good. No bound on that wait
can be read from Spark: a killed task's Python worker outlives its JVM task until its next read
of the input, the Data Source's ``abort`` runs in a worker with no SparkContext to ask, and an
executor may stall for any time. With an "open" marker the absence of an object is what tells a
straggler that the job is over, so no timing is involved and nothing stays behind. Directories
of earlier versions' jobs (with ``_FINISHED``) are still removed an hour after they finished.
A worker killed between writing a data file and recording it leaves that file, as a killed
writer of Java Paimon does (Java's ``remove_orphan_files`` procedure finds such files).

Staging records and task results are versioned bytes (spec/versioned_record.py: a header, then
CommitMessageSerializer's Java-compatible bytes), never pickles: the driver reads every file in
the staging directory, and a file there that does not decode is refused with CorruptRecordError,
reported in the log, and removed; nothing in it runs. A record that decodes but names a file
that is not the table's (store/path_checks.py) is refused the same way: none of its files is
deleted.

An overwriting job carries the Overwrite its driver planned (``overwrite``): tasks write as an
overwrite does (ignoring the table's files) and the driver commits it, even with no rows.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import pyarrow as pa
from pyspark import TaskContext

from paimon_pyspark.bucket.door_assigner import AgreedBuckets
from paimon_pyspark.catalog import Catalog, CatalogFactory
from paimon_pyspark.catalog.identifiers import parse_table_identifier
from paimon_pyspark.commit.overwrite import Overwrite
from paimon_pyspark.compact.plan import plan_compaction, run_task, written_only
from paimon_pyspark.errors import (
    CommitOutcomeUnknownError,
    CorruptRecordError,
    InvalidCommitMessageError,
    PaimonError,
    TableNotExistError,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.versioned_record import RecordReader, RecordWriter
from paimon_pyspark.store.branches import branch_path, is_main_branch
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.deletion_vectors import index_handler_of
from paimon_pyspark.store.file_store import BRANCH_OPTION
from paimon_pyspark.store.managers import SchemaManager
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.system_tables import SystemTable, load_system_table
from paimon_pyspark.table.table_commit import TableCommit
from paimon_pyspark.table.write_builder import BatchWriteBuilder
from paimon_pyspark.write.agreed_buckets import (
    MergedIndex,
    merge_hash_index_files,
    route_agreed,
)
from paimon_pyspark.write.compact_manager import compact_written_buckets
from paimon_pyspark.write.shared_buckets import SHARED_BUCKET_STRIDE, renumber_shared_buckets
from paimon_pyspark.write.table_write import TableWrite

STAGING_DIR = ".paimon-staging"
OPEN = "_OPEN"
"""In a job's staging directory while the job can still commit its tasks' files."""
FINISHED = "_FINISHED"
"""What earlier versions left in an ended job's staging directory, for an hour."""
_FINISHED_JOB_RETENTION_S = 3600
_BATCH_ROWS = 256 * 1024
_STAGING_MAGIC = b"PPsr"
_STAGING_VERSION = 1
_RESULT_MAGIC = b"PPtr"
_RESULT_VERSION = 1

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoreLocation:
    """Where a table's files are: its directory as a URI and the filesystem options its store
    opens with (``s3.*``, ``fs.single-writer``), as the driver's catalog gave them."""

    uri: str
    fs_options: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class TableRef:
    """What a process needs to open the table; Spark ships it to every task.

    ``options``: the table's dynamic options; ``catalog_options``: every option of the catalog
    (``metastore``, ``uri``, ``jdbc.*``, ``token``, the filesystem's ``s3.*``) but the
    warehouse, with which the driver reopens the catalog (``CatalogFactory.create``).

    Only the driver (and the Python workers Spark runs a Data Source's planning and commit in,
    on the driver) opens the catalog: a Spark task opens the table's directory only, at the
    :class:`StoreLocation` the driver's catalog gave, so executors never reach a JDBC database
    or a REST server, and a table they open has no SnapshotCommit: commits stay on the driver.
    The catalog options still travel inside the pickled job (a Data Source's writer object
    writes on the executors and commits in a driver worker), but no task uses them, and the
    ref's repr leaves them out (a REST token, a JDBC password)."""

    warehouse: str
    identifier: str
    options: dict[str, str] = field(default_factory=dict)
    catalog_options: dict[str, str] = field(default_factory=dict, repr=False)
    store: StoreLocation | None = field(default=None, compare=False)

    def catalog(self) -> Catalog:
        """The catalog, opened again from its options (on the driver)."""
        return CatalogFactory.create({**self.catalog_options, "warehouse": self.warehouse})

    def load(self) -> FileStoreTable:
        """The table: from its directory in a Spark task, from the catalog elsewhere."""
        if self.store is not None and TaskContext.get() is not None:
            table = table_at(self.store, self.identifier)
        else:
            table = self.catalog().get_table(self.identifier)
            if self.store is None:
                object.__setattr__(self, "store", location_of(table))
        return table.copy(self.options) if self.options else table

    def __getstate__(self) -> dict[str, object]:
        """Pickled with the table's location, found now if no load found it yet: a task
        that unpickles it opens that directory, never the catalog."""
        if self.store is None and TaskContext.get() is None:
            with contextlib.suppress(PaimonError):  # no table yet: whoever loads it fails
                TableRef.load(self)
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, object]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)


def location_of(table: FileStoreTable | SystemTable) -> StoreLocation:
    """Where ``table`` (a system table: its data table) keeps its files."""
    store = table.data_store if isinstance(table, SystemTable) else table.store
    io = store.file_io
    return StoreLocation(io.describe(store.path), tuple(sorted(io.options.raw.items())))


def table_at(location: StoreLocation, identifier: str) -> FileStoreTable:
    """The table ``identifier`` (``db.t``, ``db.t$branch_b``, ``db.t$files``) from its
    directory alone, with its latest schema, as the catalog's ``get_table`` gives it but
    with no SnapshotCommit: what a Spark task opens."""
    db, name, branch, system = parse_table_identifier(identifier)
    full = f"{db}.{name}"
    file_io, path = FileIO.for_uri(location.uri, dict(location.fs_options))
    dynamic: dict[str, str] = {}
    schema_dir = path
    if branch is not None and not is_main_branch(branch):
        schema_dir = branch_path(path, branch)
        dynamic[BRANCH_OPTION] = branch
    schema = SchemaManager(file_io, schema_dir).latest()
    if schema is None:
        raise TableNotExistError(full, f"Its directory {location.uri} holds no schema.")
    label = f"{full}$branch_{branch}" if dynamic else full
    table = FileStoreTable(file_io.with_options(schema.options), path, label, schema, dynamic)
    if system is not None:
        return cast(FileStoreTable, load_system_table(table.store, system))
    return table


@dataclass(frozen=True)
class TaskResult:
    """One task attempt's commit messages, named by its staging record."""

    record: str
    messages: tuple[CommitMessage, ...]

    def to_bytes(self) -> bytes:
        """Versioned bytes: the record's name, then the messages as CommitMessageSerializer
        writes them."""
        w = RecordWriter(_RESULT_MAGIC, _RESULT_VERSION).write_str(self.record)
        return w.write_messages(self.messages).to_bytes()

    @staticmethod
    def from_bytes(data: bytes) -> TaskResult:
        r = RecordReader(data, _RESULT_MAGIC, {_RESULT_VERSION}, "a task result")
        result = TaskResult(r.read_str(), r.read_messages())
        r.finish()
        return result


def driver_result(messages: Sequence[CommitMessage]) -> TaskResult:
    """Messages the driver adds to a job's commit itself (no task wrote them, no record)."""
    return TaskResult("", tuple(messages))


def staging_record(messages: Sequence[CommitMessage]) -> bytes:
    """A staging record: the files one task attempt wrote, as versioned bytes."""
    return RecordWriter(_STAGING_MAGIC, _STAGING_VERSION).write_messages(messages).to_bytes()


def read_staging_record(io: FileIO, path: str) -> tuple[CommitMessage, ...]:
    """The messages of the staging record at ``path``; CorruptRecordError naming the file if
    it is no staging record of ours (a pickle, another version, truncated)."""
    what = f"staging record {path}"
    r = RecordReader(io.read_bytes(path), _STAGING_MAGIC, {_STAGING_VERSION}, what)
    messages = r.read_messages()
    r.finish()
    return messages


@dataclass(frozen=True)
class WriteJob:
    """``shared_buckets``: tasks are not one per bucket (the Data Source door), so the tasks of a
    primary-key table take interleaved sequence numbers, ``base + k * stride + partition id``:
    records of one bucket never share a sequence number, whichever tasks wrote them, and a
    retried or speculative attempt of a task reuses that task's numbers.

    ``postpone_buckets``: a postpone table's fixed-bucket write, the bucket count of every
    partition that has real buckets as the driver read them once; tasks route with these.

    ``agreed_buckets``: a dynamic-bucket table written by tasks that cannot shuffle (the Data
    Source door): the snapshot and width the driver pinned, from which every task gives a key
    the same bucket (bucket/door_assigner.py); the driver merges the tasks' HASH index files
    of a bucket into one before the commit (write/agreed_buckets.py).

    Creating a job (on the driver) opens it: its ``_OPEN`` marker goes down before any task
    can run, and ``commit`` or ``abort`` close it (see the module docstring). The marker is
    written here, not by a separate call, so that every door, the procedures' included, opens
    its job before shipping it; Spark unpickles the job on executors without running this."""

    ref: TableRef
    commit_user: str = field(default_factory=lambda: str(uuid.uuid4()))
    shared_buckets: bool = False
    overwrite: Overwrite | None = None
    postpone_buckets: Mapping[bytes, int] | None = None
    agreed_buckets: AgreedBuckets | None = None

    def __post_init__(self) -> None:
        table = self.ref.load()
        directory = self.staging_dir(table)
        table.file_io.mkdirs(directory)
        table.file_io.write_bytes(os.path.join(directory, OPEN), b"")

    def staging_dir(self, table: FileStoreTable) -> str:
        return os.path.join(table.path, STAGING_DIR, self.commit_user)

    # --- on executors --------------------------------------------------------------------

    def write_task(
        self,
        batches: Iterable[pa.RecordBatch],
        bucket_column: str | None = None,
        kind_column: str | None = None,
    ) -> TaskResult:
        """Write every batch of one task; on any failure the task's files are removed.

        ``bucket_column``: the rows' buckets, chosen by an assigner stage (dynamic buckets);
        ``kind_column``: their row kinds (int8), as a cross-partition assigner or a row-level
        DELETE/UPDATE (spark/dml.py) left them.
        """
        table = self.ref.load()

        def put(write: TableWrite, data: pa.Table) -> None:
            buckets = kinds = None
            if kind_column is not None:
                kinds = data.column(kind_column).to_numpy(zero_copy_only=False)
                data = data.drop_columns([kind_column])
            if bucket_column is not None:
                buckets = data.column(bucket_column).to_numpy()
                data = data.drop_columns([bucket_column])
            write.write_arrow(data, buckets, kinds)

        builder = BatchWriteBuilder(table, self.commit_user, self.overwrite)
        with builder.new_write(self._sequence_slot(table)) as write:
            if self.postpone_buckets is not None:
                write.pin_postpone_buckets(self.postpone_buckets)
            if self.agreed_buckets is not None and bucket_column is None:
                route_agreed(write, self.agreed_buckets)
            pending: list[pa.RecordBatch] = []
            rows = 0
            for batch in batches:
                pending.append(batch)
                rows += batch.num_rows
                if rows >= _BATCH_ROWS:
                    put(write, pa.Table.from_batches(pending))
                    pending, rows = [], 0
            if pending:
                put(write, pa.Table.from_batches(pending))
            messages = tuple(write.prepare_commit())
            return self._finish_task(table, messages, messages)

    def run_task(self, work: Callable[[FileStoreTable], Iterable[CommitMessage]]) -> TaskResult:
        """One task of a procedure (procedures/pipeline.py): ``work`` writes into the job's
        table and yields messages; on any failure the files of those yielded are removed (work
        removes those of the unit it fails in). The record lists only the files the task
        wrote: a file upgraded by a compaction is an input and an output of its message, and
        must never be deleted by a cleanup."""
        table = self.ref.load()
        messages: list[CommitMessage] = []
        try:
            for message in work(table):
                messages.append(message)
        except BaseException:
            TableCommit(table.store, self.commit_user).abort([written_only(m) for m in messages])
            raise
        return self._finish_task(table, messages, [written_only(m) for m in messages])

    def _finish_task(
        self,
        table: FileStoreTable,
        messages: Sequence[CommitMessage],
        written: Sequence[CommitMessage],
    ) -> TaskResult:
        """Save the record of ``written``, then check that the job is still open; the attempt's
        result, or, if the driver closed the job meanwhile (its listing may have missed this
        record), none: the attempt removes its files and its record itself."""
        io = table.file_io
        directory = self.staging_dir(table)
        record = None
        try:
            record = self._save_record(table, written)
            if not io.is_file(os.path.join(directory, OPEN)):
                raise PaimonError(
                    f"Job {self.commit_user} was committed or aborted while this task attempt "
                    "ran; the attempt removed its files."
                )
        except BaseException:
            TableCommit(table.store, self.commit_user).abort(written)
            if record is not None:
                io.delete_quietly(os.path.join(directory, record))
            raise
        return TaskResult(record, tuple(messages))

    def _sequence_slot(self, table: FileStoreTable) -> tuple[int, int] | None:
        """Tasks sharing buckets: interleaved sequence numbers for a primary-key table; for an
        append table (renumbered at commit) the stride only says the bucket is shared, so no
        task compacts it at commit."""
        if not self.shared_buckets:
            return None
        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        if not table.primary_keys:
            return (task % SHARED_BUCKET_STRIDE, SHARED_BUCKET_STRIDE)
        if task >= SHARED_BUCKET_STRIDE:
            raise PaimonError(
                f"Table '{table.name}': df.write.format('paimon') into a primary-key table "
                f"supports up to {SHARED_BUCKET_STRIDE} tasks, this is task {task}; use "
                "paimon_pyspark.spark.write, which writes each bucket from one task."
            )
        return (task, SHARED_BUCKET_STRIDE)

    def _save_record(self, table: FileStoreTable, messages: Sequence[CommitMessage]) -> str:
        directory = self.staging_dir(table)
        table.file_io.mkdirs(directory)
        name = str(uuid.uuid4())
        table.file_io.write_bytes(os.path.join(directory, name), staging_record(messages))
        return name

    # --- on the driver ---------------------------------------------------------------------

    def commit(self, results: Sequence[TaskResult]) -> list[int]:
        """Commit the kept attempts' messages as one snapshot, then close the job: every other
        record's files are deleted, and an attempt still running removes its own."""
        table = self.ref.load()
        messages = [m for r in results for m in r.messages]
        if not table.primary_keys and not table.options.row_tracking_enabled:
            # (a row-tracking commit gives each task's first file the snapshot id, as Java's)
            messages = renumber_shared_buckets(messages)
        merged = MergedIndex(messages)
        if self.agreed_buckets is not None:
            merged = merge_hash_index_files(table.store, messages)
            messages = merged.messages
        # the job's commit user is its own and commits here first: no earlier snapshot of it
        # to search the table for (a search reads every snapshot back to the oldest)
        commit = TableCommit(table.store, self.commit_user, self.overwrite, new_user=True)
        try:
            ids = commit.commit(messages) if messages or self.overwrite is not None else []
        except CommitOutcomeUnknownError:
            raise
        except BaseException:
            index_handler_of(table.store).delete_quietly(merged.written)
            raise
        index_handler_of(table.store).delete_quietly(merged.superseded)
        self._close(table, keep={r.record for r in results})
        if ids and self.shared_buckets:
            lookup = table.options.need_lookup(bool(table.primary_keys))
            try:
                if lookup:
                    ids += self._push_up_level0(table, messages)
                elif table.bucket_mode in (BucketMode.HASH_FIXED, BucketMode.HASH_DYNAMIC):
                    ids += self._compact_shared_buckets(table, messages)
            except Exception as e:
                after = (
                    "A batch read of this table (it skips level 0) shows the new rows only after "
                    if lookup
                    else "The rows are readable; compact them with "
                )
                raise PaimonError(
                    f"Table '{table.name}': the data is committed (snapshot {ids[-1]}), but "
                    f"compacting the buckets it wrote failed: {e}. {after}"
                    "paimon_pyspark.procedures.compact."
                ) from e
        return ids

    def _compact_shared_buckets(
        self, table: FileStoreTable, messages: Sequence[CommitMessage]
    ) -> list[int]:
        """Tasks sharing a bucket cannot compact it at commit as a lone writer does
        (TableWrite): after the data commit, the driver gives every bucket written the picks a
        lone writer's commit makes (write/compact_manager.py), in one COMPACT snapshot."""
        touched = {(m.partition, m.bucket) for m in messages if m.new_files}
        compacted = compact_written_buckets(table.store, touched)
        commit = BatchWriteBuilder(table, self.commit_user).new_commit()
        try:
            return commit.commit(compacted) if compacted else []
        except CommitOutcomeUnknownError:
            raise
        except BaseException:
            commit.abort([written_only(m) for m in compacted])
            raise

    def _push_up_level0(
        self, table: FileStoreTable, messages: Sequence[CommitMessage]
    ) -> list[int]:
        """Compact the buckets this job wrote when the table needs lookup (first-row).

        Tasks sharing a bucket cannot compact it at commit as a lone writer does (TableWrite),
        and a batch read skips level 0 of such tables, so the driver pushes level 0 up right
        after the data commit: the rows are visible once the job returns, as in Java.
        """
        if not table.options.need_lookup(bool(table.primary_keys)) or table.options.write_only:
            return []
        touched = {(m.partition, m.bucket) for m in messages if m.new_files}
        plan = plan_compaction(table.store, False, buckets={b for _, b in touched})
        compacted = []
        commit = BatchWriteBuilder(table, self.commit_user).new_commit()
        try:
            for task in plan.tasks:
                if (task.partition, task.bucket) in touched:
                    message = run_task(table.store, task)
                    if message is not None:
                        compacted.append(message)
            return commit.commit(compacted) if compacted else []
        except CommitOutcomeUnknownError:
            raise
        except BaseException:
            commit.abort([written_only(m) for m in compacted])
            raise

    def abort(self) -> None:
        """Remove every file any attempt of this job wrote, unless a commit of this job is (or
        may be) in the table: Spark aborts after a failed commit too, and a commit whose
        outcome is unknown must keep its files. Attempts still running when it returns remove
        their own files when they end (the job is closed), so nothing is left once they are."""
        table = self.ref.load()
        if table.snapshot_manager.latest_snapshot_of_user(self.commit_user) is not None:
            return
        self._close(table, keep=set())

    def _close(self, table: FileStoreTable, keep: set[str]) -> None:
        """Remove the ``_OPEN`` marker, then every record (and, but for ``keep``, its files),
        then the directory. The marker goes first: an attempt that saves its record after the
        listing below must find it gone (module docstring). If it cannot be removed, the
        records are cleaned all the same, and only such late attempts keep their files."""
        io = table.file_io
        directory = self.staging_dir(table)
        marker = os.path.join(directory, OPEN)
        io.delete_quietly(marker)
        if io.is_file(marker):
            LOG.warning(
                "Job %s could not remove %s: task attempts that end after it may leave files.",
                self.commit_user,
                io.describe(marker),
            )
        commit = BatchWriteBuilder(table, self.commit_user).new_commit()
        for name in io.list_names(directory):
            path = os.path.join(directory, name)
            if name not in keep:
                try:
                    commit.abort(read_staging_record(io, path))
                except (CorruptRecordError, InvalidCommitMessageError) as e:
                    LOG.warning("Job %s refused staging file %s: %s", self.commit_user, path, e)
            io.delete_quietly(path)
        io.delete_dir(directory)
        self._drop_ended_jobs(table)

    def _drop_ended_jobs(self, table: FileStoreTable) -> None:
        """Remove other jobs' staging directories that have been over for an hour: those
        earlier versions left with a ``_FINISHED`` marker, and empty ones (a straggler that
        recreated a local directory and removed its record; a live job's holds ``_OPEN``, an
        object store has no empty directories)."""
        io = table.file_io
        root = os.path.join(table.path, STAGING_DIR)
        horizon = time.time() - _FINISHED_JOB_RETENTION_S
        for job in io.list_names(root):
            if job == self.commit_user:
                continue
            directory = os.path.join(root, job)
            names = io.list_names(directory)
            if names and FINISHED not in names:
                continue
            if not names and io.is_object_store:
                continue
            stamp = os.path.join(directory, FINISHED) if names else directory
            with contextlib.suppress(FileNotFoundError):  # removed by another job meanwhile
                if io.mtime(stamp) < horizon:
                    io.delete_dir(directory)
