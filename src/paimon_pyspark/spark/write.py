"""``paimon_pyspark.spark.write``: a DataFrame into a Paimon table, with Java's write topology.

Mirrors the shape of Paimon's Spark writer (PaimonSparkWriter): for fixed-bucket tables the
bucket is computed vectorized on the executors, rows are repartitioned by (partition, bucket) so
that one task writes each bucket, tasks write with mapInArrow and return commit messages, and the
driver commits once. Bucket-unaware tables need no shuffle: every task writes its own files.
Postpone-bucket tables are written as bucket-unaware ones (into postpone files), or, with
``postpone.batch-write-fixed-bucket``, as fixed-bucket ones with each partition's bucket count.
Dynamic-bucket and cross-partition tables first go through assigner tasks, shuffled by key
(``_plan_dynamic``, ``_plan_cross_partition``). ``PLANNERS`` maps each ``BucketMode`` to its
topology; the buckets every stage computes come from the same routers (bucket/routers.py,
bucket/postpone.py) a ``TableWrite`` routes with. ``run_write`` runs that topology through an
open WriteJob for every writer of rows: ``write`` and the row-level DELETE and UPDATE
(spark/dml.py), whose rows carry their kind (-D, +U) in a column and whose copy-on-write commits
also delete the files they rewrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import BinaryType, ByteType, IntegerType, StructField, StructType

from paimon_pyspark.bucket.cross_partition import new_global_assigner
from paimon_pyspark.bucket.postpone import PostponeRouter
from paimon_pyspark.bucket.routers import (
    HashDynamicRouter,
    HashFixedRouter,
    KeyDynamicRouter,
    KeyHasher,
)
from paimon_pyspark.errors import CommitOutcomeUnknownError, OptionError, UnsupportedOptionError
from paimon_pyspark.read.bootstrap import bootstrap_splits
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.split_codec import decode_split, encode_split
from paimon_pyspark.spark.cluster import default_parallelism, task_rows
from paimon_pyspark.spark.job import TaskResult, WriteJob, driver_result
from paimon_pyspark.spark.merge_schema import merge_frame, pop_merge_options, session_merge_options
from paimon_pyspark.spark.schema import spark_arrow_schema, spark_schema
from paimon_pyspark.spark.tables import OVERWRITE_PARTITION, ensure_table, plan_overwrite
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.key_value import VALUE_KIND
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.postpone import known_num_buckets
from paimon_pyspark.table.file_store_table import (
    FileStoreTable,
)
from paimon_pyspark.table.upsert import is_upsert_table, upsert_arrow
from paimon_pyspark.write.table_write import TableWrite

BUCKET_COLUMN = "_paimon_bucket"
ASSIGNER_COLUMN = "_paimon_assigner"
BOOTSTRAP_COLUMN = "_paimon_bootstrap_bucket"
ROW_KIND_COLUMN = "_paimon_row_kind"
"""The int8 row-kind column a row-level write (spark/dml.py) hands ``run_write``."""
MAX_BYTES_PER_BATCH = "spark.sql.execution.arrow.maxBytesPerBatch"
_SPLITS = StructType(
    [StructField("task", IntegerType(), False), StructField("split", BinaryType(), False)]
)


def write(
    df: DataFrame,
    warehouse: str,
    table: str,
    mode: str = "append",
    options: Mapping[str, Any] | None = None,
) -> list[int]:
    """Write ``df`` into ``table``; returns the id of the snapshot created (none if empty).

    ``options`` are table options for this write (dynamic options); with ``create = true`` a
    missing table is created from the DataFrame's schema, using ``partition-keys`` and
    ``primary-keys`` (comma-separated) and the remaining options as table options.
    ``write.merge-schema`` (or ``mergeSchema``, or the session's
    ``spark.paimon.write.merge-schema``) merges the DataFrame's schema into the table's first,
    with ``write.merge-schema.explicit-cast`` for narrowing casts (spark/merge_schema.py).

    ``mode = "overwrite"`` replaces the partitions ``df`` writes (dynamic partition overwrite;
    the whole table with ``dynamic-partition-overwrite = false`` or no partition keys), or,
    with ``overwrite-partition`` (``"dt=2026-06-26,hr=10"`` or a dict), exactly that
    partition, even if ``df`` is empty.
    """
    if mode not in ("append", "overwrite"):
        raise UnsupportedOptionError(
            f"Table '{table}': write mode '{mode}' is not supported; use 'append' or 'overwrite'."
        )
    raw = {str(k).lower(): v for k, v in (options or {}).items()}
    spec = raw.pop(OVERWRITE_PARTITION, None)
    if spec is not None and mode != "overwrite":
        raise OptionError(
            f"Table '{table}': option '{OVERWRITE_PARTITION}' needs mode 'overwrite'."
        )
    merge, explicit = pop_merge_options(raw, session_merge_options(df))
    opts = {k: str(v) for k, v in raw.items()}
    ref, loaded = ensure_table(warehouse, table, df.schema, opts)
    if merge:  # the merged schema is committed before any data file is written, as in Java
        df, loaded = merge_frame(df, loaded, explicit, ref.load)
    if mode == "append" and is_upsert_table(loaded.store):
        # RewriteUpsertTable: the rows are gathered on the driver and upserted in one commit
        return upsert_arrow(loaded, df.toArrow())
    plan = plan_overwrite(loaded, spec) if mode == "overwrite" else None
    counts = postpone_bucket_counts(loaded)
    job = WriteJob(ref, overwrite=plan, postpone_buckets=counts)  # open: abort on any failure
    return run_write(df, loaded, job)


def run_write(
    df: DataFrame,
    table: FileStoreTable,
    job: WriteJob,
    kind_column: str | None = None,
    driver_messages: Sequence[CommitMessage] = (),
) -> list[int]:
    """Write ``df`` with the topology of ``table``'s bucket mode through the open ``job`` and
    commit once; on any failure the job is aborted (none of its files stay).

    ``kind_column``: an int8 column of ``df`` holding each row's kind (primary-key tables:
    the -D records of a DELETE, the +U rows of an UPDATE), taken instead of +I.
    ``driver_messages``: messages the driver adds to the same commit (the files a
    copy-on-write rewrite deletes), committed with the tasks' in one snapshot.
    """
    conf = df.sparkSession.conf
    # Spark's per-row Arrow size check halves the write's speed; batches stay bounded by
    # maxRecordsPerBatch. A value the user set on purpose is kept.
    lift = conf.get(MAX_BYTES_PER_BATCH, None) is None
    try:
        if lift:
            conf.set(MAX_BYTES_PER_BATCH, str(2**31 - 1))
        rows = _plan(df, table, job, kind_column).collect()
    except BaseException:
        job.abort()
        raise
    finally:
        if lift:
            conf.unset(MAX_BYTES_PER_BATCH)
    results = [TaskResult.from_bytes(bytes(r[0])) for r in rows]
    if driver_messages:
        results.append(driver_result(driver_messages))
    return commit_or_abort(job, results)


def commit_or_abort(job: WriteJob, results: list[TaskResult]) -> list[int]:
    """Commit; if that fails before any snapshot of this job exists, remove all its files
    (WriteJob.abort checks), unless the commit's outcome is unknown."""
    try:
        return job.commit(results)
    except CommitOutcomeUnknownError:
        raise
    except BaseException:
        job.abort()
        raise


def _plan(
    df: DataFrame, table: FileStoreTable, job: WriteJob, kind_column: str | None = None
) -> DataFrame:
    """The write topology of the table's bucket mode (``PLANNERS``)."""
    result_schema = StructType([StructField("record", BinaryType(), False)])
    return PLANNERS[table.bucket_mode](df, table, job, result_schema, kind_column)


def _plan_fixed(
    df: DataFrame,
    table: FileStoreTable,
    job: WriteJob,
    result_schema: StructType,
    kind_column: str | None = None,
) -> DataFrame:
    """HASH_FIXED: each row's bucket is computed on the executors by the table's router, rows
    are shuffled by (partition, bucket), and one task writes each bucket."""
    shuffled = _shuffled_by_bucket(df, table, job, lambda store: HashFixedRouter(store).assign)
    writer = _write_fn(job, drop_bucket=True, kind_column=kind_column)
    return shuffled.mapInArrow(writer, result_schema)


def _shuffled_by_bucket(
    df: DataFrame,
    table: FileStoreTable,
    job: WriteJob,
    assigner: Callable[[FileStore], Callable[[pa.RecordBatch], npt.NDArray[np.int32]]],
) -> DataFrame:
    """``df`` with the bucket column the table's router computes on the executors
    (``assigner(store)`` gives its per-batch assign), repartitioned by (partition keys, bucket)
    so that one task writes each bucket."""
    ref = job.ref

    def add_bucket(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        assign = assigner(ref.load().store)
        for batch in batches:
            buckets = pa.array(assign(batch))
            yield batch.append_column(pa.field(BUCKET_COLUMN, pa.int32(), False), buckets)

    with_bucket = df.mapInArrow(
        add_bucket,
        StructType([*df.schema.fields, StructField(BUCKET_COLUMN, IntegerType(), False)]),
    )
    return with_bucket.repartition(*table.partition_keys, BUCKET_COLUMN)


def _plan_unaware(
    df: DataFrame,
    table: FileStoreTable,
    job: WriteJob,
    result_schema: StructType,
    kind_column: str | None = None,
) -> DataFrame:
    """BUCKET_UNAWARE: no shuffle, every task writes its own files."""
    df = _by_partition_if_hash(df, table)
    return df.mapInArrow(_write_fn(job, kind_column=kind_column), result_schema)


def _by_partition_if_hash(df: DataFrame, table: FileStoreTable) -> DataFrame:
    """``partition.sink-strategy = hash`` (Java's Spark writer, bucket-unaware and postpone
    files): the rows are shuffled by the partition keys, so one task writes each partition."""
    strategy = (table.options.get("partition.sink-strategy") or "none").strip().lower()
    if strategy == "hash" and table.partition_keys:
        return df.repartition(*table.partition_keys)
    return df


def num_assigners(table: FileStoreTable, parallelism: int) -> int:
    """Java's Spark writer: assigner parallelism (``dynamic-bucket.assigner-parallelism`` or
    the job's, at most ``max-buckets``), at most ``dynamic-bucket.initial-buckets``."""
    o = table.options
    n = o.dynamic_bucket_assigner_parallelism or parallelism
    if o.dynamic_bucket_max_buckets != -1:
        n = min(n, o.dynamic_bucket_max_buckets)
    if o.dynamic_bucket_initial_buckets is not None:
        n = min(n, o.dynamic_bucket_initial_buckets)
    return max(1, n)


def _plan_dynamic(
    df: DataFrame,
    table: FileStoreTable,
    job: WriteJob,
    result_schema: StructType,
    kind_column: str | None = None,
) -> DataFrame:
    """Java's HASH_DYNAMIC topology: input -> shuffle by (partition, key assigner) ->
    bucket assigners -> shuffle by (partition, bucket) -> writers.

    Assigner ``i`` of ``n`` gets every key with ``|hash % n| == i`` of a partition and opens only
    buckets with ``bucket % n == i``, so a key has one bucket whichever task sees it.
    """
    n = num_assigners(table, default_parallelism(df.sparkSession))
    ref = job.ref
    overwrite = job.overwrite is not None

    def add_assigner(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keys = KeyHasher(ref.load().store)
        for batch in batches:
            ids = keys.assigners(batch, n)
            yield batch.append_column(pa.field(ASSIGNER_COLUMN, pa.int32(), False), pa.array(ids))

    def add_bucket(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        loaded = ref.load()
        routers: dict[int, HashDynamicRouter] = {}
        for batch in batches:
            ids = batch.column(ASSIGNER_COLUMN).to_numpy()
            data = pa.Table.from_batches([batch.drop_columns([ASSIGNER_COLUMN])])
            buckets = np.empty(batch.num_rows, np.int32)
            for i in np.unique(ids).tolist():
                router = routers.get(i)
                if router is None:
                    router = routers[i] = HashDynamicRouter(loaded.store, overwrite, n, i)
                rows = np.flatnonzero(ids == i)
                buckets[rows] = router.assign(data.take(pa.array(rows)))
            out = data.append_column(pa.field(BUCKET_COLUMN, pa.int32(), False), pa.array(buckets))
            yield from out.to_batches()

    fields = df.schema.fields
    with_id = df.mapInArrow(
        add_assigner, StructType([*fields, StructField(ASSIGNER_COLUMN, IntegerType(), False)])
    )
    routed = with_id.repartition(*table.partition_keys, ASSIGNER_COLUMN)
    with_bucket = routed.mapInArrow(
        add_bucket, StructType([*fields, StructField(BUCKET_COLUMN, IntegerType(), False)])
    )
    shuffled = with_bucket.repartition(*table.partition_keys, BUCKET_COLUMN)
    writer = _write_fn(job, bucket_column=BUCKET_COLUMN, kind_column=kind_column)
    return shuffled.mapInArrow(writer, result_schema)


def _plan_cross_partition(
    df: DataFrame,
    table: FileStoreTable,
    job: WriteJob,
    result_schema: StructType,
    kind_column: str | None = None,
) -> DataFrame:
    """Java's KEY_DYNAMIC topology: bootstrap + input -> shuffle by key hash -> global index
    assigners -> shuffle by (partition, bucket) -> writers.

    The bootstrap reads the live keys of the snapshot the write starts on, one task per split
    (key columns only; the split gives partition and bucket; splits outside
    ``cross-partition-upsert.index-ttl`` are left out), and unions them, tagged with their
    bucket, with the incoming rows, tagged -1 (already aligned to the table, with their row
    kind). Both are routed to ``n`` assigners by ``|key hash % n|``, so each key's old places
    and new rows meet in one task. Assigner ``i`` loads its keys into a GlobalIndexAssigner
    that opens only buckets ``b`` with ``b % n == i`` (so two assigners never fill one bucket),
    then routes its new rows as the core write does: -D records for keys leaving a partition
    (deduplicate), rows sent to the key's old partition (partial-update, aggregation), rows
    dropped (first-row). The routed rows carry their bucket and row kind to the writers.
    Java routes by the hash of the whole primary key; we hash the key the index holds (the
    trimmed primary key), which keeps every row of a key with one assigner all the same.
    An overwrite routes the same way (Java's bootstrap ignores it too): a key moving partition
    leaves its -D in the old partition, which a dynamic overwrite then replaces.
    """
    new_global_assigner(
        table.store
    )  # a merge engine the key index cannot serve fails on the driver
    spark = df.sparkSession
    o = table.options
    n = max(1, o.dynamic_bucket_assigner_parallelism or default_parallelism(spark))
    ref = job.ref
    commit_user = job.commit_user
    keys = table.table_schema.trimmed_primary_keys()
    hasher = KeyHasher(table.store)
    part_keys = table.partition_keys
    located = list(dict.fromkeys([*keys, *part_keys]))  # what a bootstrap row carries
    names = table.arrow_schema.names
    loose = [StructField(f.name, f.dataType, True) for f in spark_schema(table).fields]
    kind = StructField(VALUE_KIND, ByteType(), True)
    routed_schema = StructType(
        [
            *loose,
            kind,
            StructField(BOOTSTRAP_COLUMN, IntegerType(), False),
            StructField(ASSIGNER_COLUMN, IntegerType(), False),
        ]
    )
    assigned_schema = StructType([*loose, kind, StructField(BUCKET_COLUMN, IntegerType(), False)])
    routed_arrow = spark_arrow_schema(routed_schema)
    assigned_arrow = spark_arrow_schema(assigned_schema)
    table_arrow = pa.schema([f.with_nullable(True) for f in table.arrow_schema])
    kind_field = pa.field(VALUE_KIND, pa.int8())

    def routed(data: pa.Table, bootstrap_bucket: int) -> Iterator[pa.RecordBatch]:
        ids = hasher.assigners(data, n)
        tags = np.full(data.num_rows, bootstrap_bucket, np.int32)
        data = data.append_column(BOOTSTRAP_COLUMN, pa.array(tags))
        data = data.append_column(ASSIGNER_COLUMN, pa.array(ids))
        yield from data.cast(routed_arrow).to_batches()

    def tag_new(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with TableWrite(ref.load().store, commit_user) as tw:  # aligns and adds row kinds only
            for batch in batches:
                data = pa.Table.from_batches([batch])
                if kind_column is None:
                    yield from routed(tw.rows_with_kinds(data), -1)
                else:
                    yield from routed(_with_given_kinds(tw, data, kind_column), -1)

    snapshot = table.snapshot_manager.latest()
    incoming = df.mapInArrow(tag_new, routed_schema)
    splits = [] if snapshot is None else bootstrap_splits(table.store, snapshot)
    if splits:
        snapshot_id = str(snapshot.id) if snapshot is not None else ""

        def read_keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            pinned = ref.load().copy({"scan.snapshot-id": snapshot_id}, time_travel=False)
            read = pinned.new_read_builder().with_projection(keys).new_read()
            for batch in batches:
                for blob in batch.column(1).to_pylist():
                    split: DataSplit = decode_split(blob, pinned.partition_types)
                    rows = read.to_arrow([split])
                    m = rows.num_rows
                    values = dict(zip(part_keys, split.partition_values, strict=True))
                    columns = [
                        rows.column(f.name)
                        if f.name in keys
                        else pa.repeat(pa.scalar(values[f.name], f.type), m)
                        if f.name in values
                        else pa.nulls(m, f.type)
                        for f in table_arrow
                    ]
                    data = pa.Table.from_arrays(columns, schema=table_arrow)
                    data = data.append_column(VALUE_KIND, pa.nulls(m, pa.int8()))
                    yield from routed(data, split.bucket)

        payloads = [(i, encode_split(s)) for i, s in enumerate(splits)]
        split_df = task_rows(spark, payloads, _SPLITS, len(payloads))  # one task per split
        incoming = split_df.mapInArrow(read_keys, routed_schema).union(incoming)

    def assign(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        got = list(batches)  # every bootstrap key must be in before a row is routed
        if not got:
            return
        loaded = ref.load()
        rows = pa.Table.from_batches(got)
        ids = rows.column(ASSIGNER_COLUMN).to_numpy()
        tags = rows.column(BOOTSTRAP_COLUMN).to_numpy()
        data = rows.select([*names, VALUE_KIND]).cast(table_arrow.append(kind_field))
        for i in np.unique(ids).tolist():
            assigner = new_global_assigner(loaded.store, n, i)
            live = np.flatnonzero((ids == i) & (tags >= 0))
            if len(live):
                assigner.bootstrap_rows(data.take(live).select(located), tags[live])
            new = np.flatnonzero((ids == i) & (tags < 0))
            if len(new):
                router = KeyDynamicRouter(loaded.store, assigner=assigner)
                out, buckets = router.assign(data.take(new))
                out = out.append_column(BUCKET_COLUMN, pa.array(buckets, pa.int32()))
                yield from out.cast(assigned_arrow).to_batches()

    by_key = incoming.repartition(n, ASSIGNER_COLUMN)
    assigned = by_key.mapInArrow(assign, assigned_schema)
    shuffled = assigned.repartition(*part_keys, BUCKET_COLUMN)
    writer = _write_fn(job, bucket_column=BUCKET_COLUMN, kind_column=VALUE_KIND)
    return shuffled.mapInArrow(writer, result_schema)


def _write_fn(
    job: WriteJob,
    drop_bucket: bool = False,
    bucket_column: str | None = None,
    kind_column: str | None = None,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A write task: its rows through ``job.write_task``, out one record, its TaskResult.
    ``drop_bucket``: the bucket column only shuffled the rows (the writer hashes them again);
    ``bucket_column``/``kind_column``: the buckets and row kinds an assigner stage chose."""

    def write_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        if drop_bucket:
            batches = (b.drop_columns([BUCKET_COLUMN]) for b in batches)
        result = job.write_task(batches, bucket_column=bucket_column, kind_column=kind_column)
        yield pa.RecordBatch.from_arrays(
            [pa.array([result.to_bytes()], pa.binary())],
            schema=pa.schema([pa.field("record", pa.binary(), nullable=False)]),
        )

    return write_task


def _with_given_kinds(write: TableWrite, data: pa.Table, kind_column: str) -> pa.Table:
    """``data`` aligned to the table with ``_VALUE_KIND`` set from ``kind_column``."""
    kinds = data.column(kind_column).cast(pa.int8())
    rows = write.rows_with_kinds(data.drop_columns([kind_column]))
    if rows.num_rows != len(kinds):  # ignore-delete dropped rows by 'rowkind.field'
        raise OptionError(
            f"Table '{write.table.name}': rows with given row kinds cannot be written while "
            "'ignore-delete' drops rows by 'rowkind.field'."
        )
    index = rows.schema.get_field_index(VALUE_KIND)
    return rows.set_column(index, rows.schema.field(index), kinds)


def postpone_bucket_counts(table: FileStoreTable) -> dict[bytes, int] | None:
    """A postpone table's fixed-bucket write: the bucket count of every partition with real
    buckets in the latest snapshot, read once on the driver (PostponeUtils.getKnownNumBuckets).
    None for any other write."""
    if (
        table.bucket_mode != BucketMode.POSTPONE_MODE
        or not table.options.postpone_batch_write_fixed_bucket
    ):
        return None
    return known_num_buckets(table.store, table.snapshot_manager.latest())


def _plan_postpone(
    df: DataFrame,
    table: FileStoreTable,
    job: WriteJob,
    result_schema: StructType,
    kind_column: str | None = None,
) -> DataFrame:
    """Postpone-bucket tables (write/postpone.py). Without ``postpone.batch-write-fixed-bucket``
    every task appends its rows to postpone files, with no shuffle. With it (Java's default),
    as a fixed-bucket table: each row's real bucket is hashed on the executors among its
    partition's bucket count (the driver's ``job.postpone_buckets``, else
    ``postpone.default-bucket-num``), rows are shuffled by (partition, bucket) and each bucket
    is written by one task, with contiguous sequence numbers."""
    counts = job.postpone_buckets
    if counts is None:
        df = _by_partition_if_hash(df, table)
        return df.mapInArrow(_write_fn(job, kind_column=kind_column), result_schema)

    def pinned(store: FileStore) -> Callable[[pa.RecordBatch], npt.NDArray[np.int32]]:
        router = PostponeRouter(store, fixed=True)
        router.pin(counts)
        return router.assign

    shuffled = _shuffled_by_bucket(df, table, job, pinned)
    writer = _write_fn(job, bucket_column=BUCKET_COLUMN, kind_column=kind_column)
    return shuffled.mapInArrow(writer, result_schema)


Planner = Callable[[DataFrame, FileStoreTable, WriteJob, StructType, str | None], DataFrame]

PLANNERS: dict[BucketMode, Planner] = {
    BucketMode.HASH_FIXED: _plan_fixed,
    BucketMode.HASH_DYNAMIC: _plan_dynamic,
    BucketMode.KEY_DYNAMIC: _plan_cross_partition,
    BucketMode.BUCKET_UNAWARE: _plan_unaware,
    BucketMode.POSTPONE_MODE: _plan_postpone,
}
"""Java's write topology of each bucket mode (PaimonSparkWriter), one planner per mode."""
