"""Spark Structured Streaming through the ``paimon`` Python Data Source: a sink that commits
every micro-batch exactly once, and a source that reads new snapshots as micro-batches.

**Sink** (``df.writeStream.format("paimon")``; the shape of Java's PaimonSink, with Flink's
committer semantics). Each micro-batch is one WriteJob (spark/job.py): its tasks write through
``WriteJob.write_task``, as ``df.write.format("paimon")`` does, and return their TaskResult as
versioned bytes; ``commit(messages, batchId)`` commits them with commit identifier ``batchId``
under the query's commit user. A query that dies after its Paimon commit and before Spark's
commit log runs that batch again on restart, with the same id: ``filter_committed`` finds the
id in the table, so the replay's files are deleted and nothing is committed twice.

The commit user must be the same across restarts of one query, so it is derived, never
random: option ``commit-user``, else ``spark-streaming-<query id>``. Spark keeps a query's id in
its checkpoint and sets it on every task of the query (local property
``sql.streaming.queryId``), so a restart on the checkpoint has the same user, while a new
checkpoint (a wiped one included) is a new query whose batch ids start again at 0 under a new
user; a user named by the option, or the checkpoint's path, would instead see those batches as
committed already and drop them.

Spark calls ``streamWriter`` twice per micro-batch, in different processes: in the planner,
whose writer it pickles for the write tasks, and in the commit runner, whose writer only gets
``commit`` or ``abort``. Neither knows the batch id. The batch's WriteJob (its staging
directory and ``_OPEN`` marker, spark/job.py) is therefore opened when the planner pickles the
writer, before any task runs, and each task's message names the job, so the commit runner
closes that job: keeping the committed attempts' files, deleting every other attempt's. A batch
whose every task failed (or that ran no task) hands ``abort`` no message; its tasks removed
their own files, and only its empty staging directory stays.

Tasks share buckets, as in the batch door: a dynamic-bucket primary-key table's tasks route by
the buckets the micro-batch's planner pinned (bucket/door_assigner.py) and the driver merges
their HASH index files per bucket before the commit (write/agreed_buckets.py); after the data
commit the driver compacts the fixed and dynamic buckets the batch wrote as a lone writer would
(WriteJob.commit does the same), committed under the same commit user and identifier, as
Java's Flink committer commits a checkpoint's compaction. Cross-partition upsert tables and
complete output mode (an overwrite per batch) are refused.

**Source** (``spark.readStream.format("paimon")``; Java's PaimonMicroBatchStream with the
default scan mode, latest-full). An offset is ``{"snapshot": id}``: every row up to snapshot
``id`` has been handed out. The first micro-batch reads the latest snapshot whole; each later
one reads the rows that the APPEND snapshots after the previous end added (read/incremental.py:
COMPACT and OVERWRITE snapshots add nothing, a primary-key delta is read unmerged without its
retractions). Every split is one input partition, as versioned bytes (read/split_codec.py).
With ``consumer-id`` a query without a checkpoint starts at its consumer, and the consumer
records each micro-batch Spark has committed (read/consumer_progress.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from paimon_pyspark import options as opts
from paimon_pyspark.bucket.door_assigner import AgreedBuckets, agreed_buckets
from paimon_pyspark.catalog.identifiers import parse_table_identifier
from paimon_pyspark.commit.file_store_commit import new_store_commit
from paimon_pyspark.compact.plan import plan_compaction, run_task, written_only
from paimon_pyspark.errors import (
    CommitOutcomeUnknownError,
    OptionError,
    PaimonError,
    UnsupportedOperationError,
    UnsupportedOptionError,
)
from paimon_pyspark.read.changes import CHANGE_TABLES, ROWKIND, ChangesRead
from paimon_pyspark.read.consumer_progress import ConsumerProgress
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.split_codec import decode_splits, encode_splits
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.read.stream_scan import starting_splits
from paimon_pyspark.spark.job import TableRef, TaskResult, WriteJob
from paimon_pyspark.spark.merge_schema import SPARK_MERGE_SCHEMA
from paimon_pyspark.spark.tables import ensure_table
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.deletion_vectors import index_handler_of
from paimon_pyspark.store.schema_merge import MERGE_SCHEMA
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.table_commit import TableCommit
from paimon_pyspark.table.upsert import refuse_upsert
from paimon_pyspark.write.agreed_buckets import (
    MergedIndex,
    merge_hash_index_files,
)
from paimon_pyspark.write.compact_manager import compact_written_buckets
from paimon_pyspark.write.shared_buckets import renumber_shared_buckets

try:  # pyspark >= 4.2
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
except ImportError:  # pyspark 4.1: Trigger.AvailableNow reads all that is there at each batch

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        def prepareForTriggerAvailableNow(self) -> None:
            pass


COMMIT_USER = "commit-user"
"""Sink option: the commit user of the query's snapshots instead of one named by the query id;
it must stay the same on every restart, and be new for a new checkpoint."""
CHECKPOINT_LOCATION = "checkpointlocation"
"""Spark's ``checkpointLocation``, as a sink sees it (Spark lowercases option keys)."""
STREAM_KEYS = frozenset({COMMIT_USER, CHECKPOINT_LOCATION})
"""Options of the query, not of the table."""
QUERY_ID = "sql.streaming.queryId"
"""The local property Spark sets on a streaming query's tasks: the id its checkpoint keeps."""
SNAPSHOT = "snapshot"
"""The offset's key: the id of the last snapshot whose rows the stream handed out."""
NOTHING_READ = -1
"""The initial offset: the next micro-batch reads the latest snapshot whole."""
LATEST_FULL = "latest-full"
LATEST = "latest"
SCAN_MODE = "scan.mode"


# --- sink ------------------------------------------------------------------------------------


def stream_commit_user(identifier: str, option: str | None, query_id: str | None) -> str:
    """The query's commit user: option ``commit-user``, else one named by the query's id."""
    if option is not None and option.strip():
        return option.strip()
    if query_id:
        return f"spark-streaming-{query_id}"
    raise OptionError(
        f"Table '{identifier}': a streaming write needs a commit user that stays the same when "
        f"the query restarts, so that a replayed micro-batch is not committed twice, and this "
        f"task has no streaming query id ('{QUERY_ID}') to name one: set "
        f"option('{COMMIT_USER}', ...) on writeStream."
    )


def stream_writer(
    warehouse: str,
    identifier: str,
    schema: StructType,
    overwrite: bool,
    options: dict[str, str],
    parallelism: int,
) -> PaimonStreamWriter:
    """The sink's writer for one micro-batch; writes and refuses what
    ``df.write.format("paimon")`` does, and refuses complete output mode. A dynamic-bucket
    primary-key table gets the batch door's agreed buckets, pinned to the latest snapshot for
    this micro-batch (bucket/door_assigner.py; ``parallelism``: the width's fallback)."""
    if parse_table_identifier(identifier)[3] is not None:  # t$branch_b is written
        raise UnsupportedOperationError(
            f"Table '{identifier}' is a system table, which is read-only."
        )
    if overwrite:
        raise UnsupportedOperationError(
            f"Table '{identifier}': writeStream.format('paimon') supports the append and update "
            "output modes; complete mode (an overwrite per micro-batch) is not supported."
        )
    for key in (MERGE_SCHEMA, SPARK_MERGE_SCHEMA):
        if (options.get(key) or "false").strip().lower() != "false":
            raise UnsupportedOptionError(
                f"Table '{identifier}': writeStream.format('paimon') does not merge schemas "
                f"('{key}' = '{options[key]}'); write each micro-batch with foreachBatch and "
                "paimon_pyspark.spark.write(df, warehouse, table, options={"
                f"'{MERGE_SCHEMA}': 'true'}})."
            )
    table_opts = {k: v for k, v in options.items() if k not in STREAM_KEYS}
    ref, table = ensure_table(warehouse, identifier, schema, table_opts)
    refuse_upsert(table.store, "writeStream.format('paimon')")
    if table.primary_keys and table.bucket_mode == BucketMode.KEY_DYNAMIC:
        raise UnsupportedOptionError(
            f"Table '{identifier}': writeStream.format('paimon') cannot write a cross-partition "
            f"upsert table (bucket = -1, mode {table.bucket_mode}, cross-partition upsert: the "
            "primary key leaves out partition keys), since a key's rows may reach several "
            "tasks with different partitions and only one task seeing them all can keep the "
            "key in one partition; use foreachBatch with "
            "paimon_pyspark.spark.write(df, warehouse, table), which shuffles by key."
        )
    agreed = None
    if _agreed(table):
        agreed = agreed_buckets(table.store, parallelism)
    return PaimonStreamWriter(ref, options.get(COMMIT_USER), agreed)


def _agreed(table: FileStoreTable) -> bool:
    """Whether the tasks route by agreed buckets (and write HASH index files to merge)."""
    return bool(table.primary_keys) and table.bucket_mode == BucketMode.HASH_DYNAMIC


@dataclass(frozen=True)
class PaimonStreamCommitMessage(WriterCommitMessage):
    """A task's TaskResult as versioned bytes (spark/job.py), the commit user of the
    micro-batch's WriteJob (which names its staging directory) and the query's commit user;
    plain values only."""

    payload: bytes
    job: str
    commit_user: str


class PaimonStreamWriter(DataSourceStreamArrowWriter):
    """Writes one micro-batch through a WriteJob; see the module docstring for when the job is
    opened and who closes it."""

    def __init__(
        self, ref: TableRef, commit_user: str | None, agreed: AgreedBuckets | None = None
    ) -> None:
        """``commit_user``: option ``commit-user``; None names it by the query id.
        ``agreed``: the buckets a dynamic-bucket table's tasks agree on (see stream_writer)."""
        self.ref = ref
        self.commit_user = commit_user
        self.agreed = agreed
        self._job: WriteJob | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Spark pickles the planner's writer once per micro-batch to ship it to the write
        tasks, and never the commit runner's: the moment to open the batch's job."""
        if self._job is None:
            self._job = WriteJob(self.ref, shared_buckets=True, agreed_buckets=self.agreed)
        return dict(self.__dict__)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonStreamCommitMessage:
        job = self._job
        if job is None:
            raise PaimonError(
                f"Table '{self.ref.identifier}': this stream writer reached a task without "
                "being pickled by Spark's planner, so no write job was opened for it."
            )
        context = TaskContext.get()
        query = context.getLocalProperty(QUERY_ID) if context is not None else None
        user = stream_commit_user(self.ref.identifier, self.commit_user, query)
        result = job.write_task(iterator)
        return PaimonStreamCommitMessage(result.to_bytes(), job.commit_user, user)

    def commit(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        """Commit the batch as identifier ``batchId``, or, when this commit user has committed
        it already (a replay after a crash), delete the replay's files and commit nothing."""
        found = self._results(messages)
        if found is None:
            return
        job, user, results = found
        table = self.ref.load()
        commit = TableCommit(table.store, user)
        if not commit.filter_committed([batchId]):
            job._close(table, keep=set())
            return
        batch = [m for r in results for m in r.messages]
        if not table.primary_keys and not table.options.row_tracking_enabled:
            batch = renumber_shared_buckets(batch)
        merged = MergedIndex(batch)
        if _agreed(table):
            merged = merge_hash_index_files(table.store, batch)
            batch = merged.messages
        try:
            ids = commit.commit(batch, batchId)
        except CommitOutcomeUnknownError:
            raise
        except BaseException:
            index_handler_of(table.store).delete_quietly(merged.written)
            job._close(table, keep=set())
            raise
        index_handler_of(table.store).delete_quietly(merged.superseded)
        job._close(table, keep={r.record for r in results})
        if ids:
            self._compact(table, user, batch, batchId, ids[-1])

    def abort(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        """Delete the files the batch's tasks wrote, unless the batch is in the table (Spark
        aborts after a commit that failed past its data commit too)."""
        found = self._results(messages)
        if found is None:
            return
        job, user, results = found
        table = self.ref.load()
        committed = not TableCommit(table.store, user).filter_committed([batchId])
        job._close(table, keep={r.record for r in results} if committed else set())

    def _results(
        self, messages: Sequence[WriterCommitMessage | None]
    ) -> tuple[WriteJob, str, list[TaskResult]] | None:
        """The batch's job (still open: recreating it puts down the marker it has), the
        query's commit user and the tasks' results; None when no task returned a message."""
        ours = [m for m in messages if isinstance(m, PaimonStreamCommitMessage)]
        if not ours:
            return None
        named = {(m.job, m.commit_user) for m in ours}
        if len(named) != 1:
            raise PaimonError(
                f"Table '{self.ref.identifier}': the tasks of one micro-batch name several "
                f"write jobs or commit users ({sorted(named)}); nothing was committed."
            )
        job_user, user = named.pop()
        job = WriteJob(self.ref, commit_user=job_user, shared_buckets=True)
        return job, user, [TaskResult.from_bytes(m.payload) for m in ours]

    def _compact(
        self,
        table: FileStoreTable,
        user: str,
        messages: Sequence[CommitMessage],
        batch_id: int,
        snapshot_id: int,
    ) -> None:
        """The compaction a lone writer makes at its commit, for the buckets the batch's tasks
        shared (as WriteJob.commit: push level 0 up for lookup tables, else compact fixed
        buckets), committed unfiltered as identifier ``batch_id``: the data commit of that
        identifier is already in the table."""
        touched = {(m.partition, m.bucket) for m in messages if m.new_files}
        compacted: list[CommitMessage] = []
        try:
            if table.options.need_lookup(bool(table.primary_keys)):
                if table.options.write_only:
                    return
                plan = plan_compaction(table.store, False, buckets={b for _, b in touched})
                for task in plan.tasks:
                    if (task.partition, task.bucket) in touched:
                        message = run_task(table.store, task)
                        if message is not None:
                            compacted.append(message)
            elif table.bucket_mode in (BucketMode.HASH_FIXED, BucketMode.HASH_DYNAMIC):
                # Java's Spark writer compacts fully when (batchId + 1) % delta-commits == 0
                compacted = compact_written_buckets(table.store, touched, batch_id + 1)
            if compacted:
                new_store_commit(table.store, user).commit(compacted, batch_id)
        except CommitOutcomeUnknownError:
            raise
        except Exception as e:
            TableCommit(table.store, user).abort([written_only(m) for m in compacted])
            after = (
                "A batch read of this table (it skips level 0) shows its rows only after "
                if table.options.need_lookup(bool(table.primary_keys))
                else "Its rows are readable; compact them with "
            )
            raise PaimonError(
                f"Table '{table.name}': micro-batch {batch_id} is committed (snapshot "
                f"{snapshot_id}), but compacting the buckets it wrote failed: {e}. {after}"
                "paimon_pyspark.procedures.compact."
            ) from e


# --- source ----------------------------------------------------------------------------------


def stream_reader(
    ref: TableRef, projection: list[str], arrow_schema: pa.Schema, filter: str | None
) -> PaimonStreamReader:
    """The source's reader of the relation ``spark/datasource.py`` checked (its columns and
    filter). Of Java's startup modes, ``scan.mode`` = ``latest-full`` (the default) and
    ``latest`` (only what is committed after the start) are read; the others are refused."""
    changes = None
    system = parse_table_identifier(ref.identifier)[3]
    if system is not None:
        data_name = ref.identifier[: -len(system) - 1]  # t$branch_b$audit_log: t$branch_b
        if system.lower() not in CHANGE_TABLES:
            raise UnsupportedOperationError(
                f"Table '{ref.identifier}': of the system tables only '$audit_log' and "
                "'$binlog' can be read as a stream, as in Java."
            )
        changes = system.lower()
        ref = dataclasses.replace(ref, identifier=data_name)
    table = ref.load()
    given = [k for k in opts.SCAN_START_KEYS if table.options.get(k) is not None]
    if given:
        raise UnsupportedOptionError(
            f"Table '{ref.identifier}': option '{given[0]}' chooses where a read starts; a "
            "streaming read of paimon_pyspark starts from the latest snapshot, read whole "
            f"('{SCAN_MODE}' = '{LATEST_FULL}') or not ('{LATEST}'), and takes no such option."
        )
    mode = (table.options.get(SCAN_MODE) or "default").strip().lower()
    if mode not in ("default", LATEST_FULL, LATEST):
        raise UnsupportedOptionError(
            f"Table '{ref.identifier}': option '{SCAN_MODE}' = '{mode}' is not supported by a "
            f"streaming read (supported: default, {LATEST_FULL}, {LATEST})."
        )
    return PaimonStreamReader(ref, projection, arrow_schema, filter, mode == LATEST, changes)


def _snapshot(offset: dict[str, Any] | None) -> int:
    if offset is None:
        return NOTHING_READ
    value = offset.get(SNAPSHOT)
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(
            f"A paimon stream offset is {{'{SNAPSHOT}': <snapshot id>}}, got {offset!r}; was the "
            "checkpoint written by another source?"
        )
    return value


class PaimonStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans micro-batches in Spark's source runner (one process for the query) and reads
    their splits on the executors, where it arrives pickled with plain values only."""

    def __init__(
        self,
        ref: TableRef,
        projection: list[str],
        arrow_schema: pa.Schema,
        filter: str | None,
        from_latest: bool = False,
        changes: str | None = None,
    ) -> None:
        """``from_latest``: start after the latest snapshot (``scan.mode`` = ``latest``).
        ``changes``: ``audit_log`` or ``binlog``, the stream of that system table of ``ref``
        (the data table): its rows with ``rowkind``."""
        self.ref = ref
        self.changes = changes
        self.from_latest = from_latest
        self.projection = projection
        self.arrow_schema = arrow_schema
        self.filter = filter if filter is not None and filter.strip() else None
        self._until: int | None = None
        self._latest: FileStoreTable | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled for the executors without the planner's table handle: they load their own."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_latest", "_progress")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._latest = None

    def _latest_id(self) -> int:
        """The latest snapshot id, or NOTHING_READ; Spark asks at every trigger, so the table
        handle is opened once (its snapshot manager reads the snapshots afresh)."""
        if self._latest is None:
            self._latest = self.ref.load()
        latest = self._latest.snapshot_manager.latest_id()
        return NOTHING_READ if latest is None else latest

    def _consumer(self) -> ConsumerProgress | None:
        """The query's consumer (option ``consumer-id``), in the source runner only."""
        if self._latest is None:
            self._latest = self.ref.load()
        if getattr(self, "_progress", False) is False:
            self._progress = ConsumerProgress.of(self._latest.store)
        return self._progress

    def initialOffset(self) -> dict[str, int]:
        """Where a query without a checkpoint starts (Spark's checkpoint wins after that): at
        its consumer's ``nextSnapshot`` when it has one (every snapshot before it read, as
        Java's PaimonMicroBatchStream starts from the scan's consumer); else nothing read;
        with ``from_latest``, everything up to the latest snapshot read (0, the id before the
        first, on a table without one)."""
        consumer = self._consumer()
        resumed = consumer.start() if consumer is not None else None
        if resumed is not None:
            return {SNAPSHOT: resumed - 1}
        if not self.from_latest:
            return {SNAPSHOT: NOTHING_READ}
        return {SNAPSHOT: max(self._latest_id(), 0)}

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: object = None
    ) -> dict[str, int]:
        """The latest snapshot (up to the one ``prepareForTriggerAvailableNow`` saw), never
        before ``start``. ``start`` and ``limit``: pyspark >= 4.2 passes them, 4.1 neither;
        every read limit reads all there is, as ``ReadAllAvailable``. Spark asks for the next
        batch only once the previous one (ending at ``start``) is in its commit log, and calls
        ``commit`` only when it has a next batch: so the consumer is recorded here too."""
        if start is not None:
            self.commit(start)
        end = self._latest_id()
        if self._until is not None:
            end = min(end, self._until)
        return {SNAPSHOT: max(end, _snapshot(start))}

    def prepareForTriggerAvailableNow(self) -> None:
        self._until = self._latest_id()

    def commit(self, end: dict[str, Any]) -> None:
        """Spark committed every micro-batch up to ``end``: record the next snapshot in the
        query's consumer file (``consumer-id``), as Flink's source does when a checkpoint
        completes; nothing without a consumer."""
        consumer = self._consumer()
        last = _snapshot(end)
        if consumer is not None and last != NOTHING_READ:
            consumer.record(last + 1)  # written only when it moved

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """One input partition per split of (start, end]: the whole snapshot ``end`` when
        nothing was read yet, else the deltas of the APPEND snapshots in between. Each holds
        the range and the split's versioned bytes, plain values Spark pickles."""
        first, last = _snapshot(start), _snapshot(end)
        if last <= first:
            return []
        table = self._table(first, last)
        if first == NOTHING_READ:
            table = table.copy({"scan.snapshot-id": str(last)})
        rb = ReadBuilder(table.store)  # a stream reads its own branch alone, as Java's
        if self.filter is not None:
            rb = rb.with_filter(parse_predicate(self.filter, table.fields, self.ref.identifier))
        splits = rb.new_scan().plan().splits()
        if first == NOTHING_READ:
            splits = starting_splits(table.store, splits)
        return [InputPartition((first, last, encode_splits([s]))) for s in splits]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        first, last, payload = partition.value
        table = self._table(first, last)
        predicate = None
        if self.filter is not None:
            predicate = parse_predicate(self.filter, table.fields, self.ref.identifier)
        if self.changes is not None:
            read = ChangesRead(
                table.store, self.projection, predicate, None, ROWKIND, True, self.changes
            )
        else:
            read = ChangesRead(table.store, self.projection, predicate, None)
        splits = decode_splits(payload, table.partition_types)
        types = self.arrow_schema.types
        for batch in read.to_arrow_batch_reader(splits):
            columns = [
                c if c.type == t else c.cast(t) for c, t in zip(batch.columns, types, strict=True)
            ]
            yield pa.RecordBatch.from_arrays(columns, schema=self.arrow_schema)

    def _table(self, first: int, last: int) -> FileStoreTable:
        """The table to plan or read (first, last] with: a primary-key table's changes in
        between, its delta or with a changelog producer its changelog files (the ``auto`` mode
        of read/incremental.py), read unmerged with their retractions (read/changes.py), as
        Java's PaimonMicroBatchStream hands them out; ``$audit_log`` gives their kinds."""
        table = self.ref.load()
        if first == NOTHING_READ:
            return table
        return table.copy({opts.INCREMENTAL_BETWEEN: f"{first},{last}"})
