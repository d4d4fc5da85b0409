"""``paimon_pyspark.spark.write``: a DataFrame into a Paimon table, with Java's write topology.

Mirrors the shape of Paimon's Spark writer (PaimonSparkWriter): for fixed-bucket tables the
bucket is computed vectorized on the executors, rows are repartitioned by (partition, bucket) so
that one task writes each bucket, tasks write with mapInArrow and return commit messages, and the
driver commits once. Bucket-unaware tables need no shuffle: every task writes its own files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

from paimon_pyspark.bucket.dynamic import key_assigner
from paimon_pyspark.bucket.fixed import FixedBucketAssigner
from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.spark.job import TableRef, TaskResult, WriteJob
from paimon_pyspark.spark.tables import OVERWRITE_PARTITION, ensure_table, plan_overwrite
from paimon_pyspark.table.file_store_table import (
    CROSS_PARTITION,
    HASH_DYNAMIC,
    HASH_FIXED,
    FileStoreTable,
)
from paimon_pyspark.write.dynamic import DynamicBucketWrite

BUCKET_COLUMN = "_paimon_bucket"
ASSIGNER_COLUMN = "_paimon_assigner"
MAX_BYTES_PER_BATCH = "spark.sql.execution.arrow.maxBytesPerBatch"


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
    opts = {k: str(v) for k, v in raw.items()}
    ref, loaded = ensure_table(warehouse, table, df.schema, opts)
    plan = plan_overwrite(loaded, spec) if mode == "overwrite" else None
    job = WriteJob(ref, overwrite=plan)
    written = _plan(df, loaded, job)
    conf = df.sparkSession.conf
    # Spark's per-row Arrow size check halves the write's speed; batches stay bounded by
    # maxRecordsPerBatch. A value the user set on purpose is kept.
    lift = conf.get(MAX_BYTES_PER_BATCH, None) is None
    if lift:
        conf.set(MAX_BYTES_PER_BATCH, str(2**31 - 1))
    try:
        rows = written.collect()
    except BaseException:
        job.abort()
        raise
    finally:
        if lift:
            conf.unset(MAX_BYTES_PER_BATCH)
    results = [TaskResult.from_bytes(bytes(r[0])) for r in rows]
    return commit_or_abort(job, results)


def commit_or_abort(job: WriteJob, results: list[TaskResult]) -> list[int]:
    """Commit; if that fails before any snapshot of this job exists, remove all its files."""
    try:
        return job.commit(results)
    except BaseException:
        table = job.ref.load()
        sm = table.snapshot_manager
        ours = any(sm.snapshot(i).commit_user == job.commit_user for i in sm.list_ids()[-20:])
        if not ours:
            job.abort()
        raise


def _plan(df: DataFrame, table: FileStoreTable, job: WriteJob) -> DataFrame:
    result_schema = StructType([StructField("record", BinaryType(), False)])
    if table.bucket_mode == HASH_FIXED:
        with_bucket = df.mapInArrow(
            _bucket_fn(job.ref, table.bucket_keys),
            StructType([*df.schema.fields, StructField(BUCKET_COLUMN, IntegerType(), False)]),
        )
        shuffled = with_bucket.repartition(*table.partition_keys, BUCKET_COLUMN)
        return shuffled.mapInArrow(_write_fn(job, drop_bucket=True), result_schema)
    if table.bucket_mode == HASH_DYNAMIC:
        return _plan_dynamic(df, table, job, result_schema)
    if table.bucket_mode == CROSS_PARTITION:
        raise UnsupportedOptionError(
            f"Table '{table.name}': cross-partition upsert (bucket = -1, primary key without "
            "every partition key) is written by the Python API (TableWrite) only, not yet "
            "from Spark."
        )
    if table.bucket_mode != "BUCKET_UNAWARE":
        raise UnsupportedOptionError(
            f"Table '{table.name}': bucket mode {table.bucket_mode} is not supported yet."
        )
    return df.mapInArrow(_write_fn(job, drop_bucket=False), result_schema)


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
    df: DataFrame, table: FileStoreTable, job: WriteJob, result_schema: StructType
) -> DataFrame:
    """Java's HASH_DYNAMIC topology: input -> shuffle by (partition, key assigner) ->
    bucket assigners -> shuffle by (partition, bucket) -> writers.

    Assigner ``i`` of ``n`` gets every key with ``|hash % n| == i`` of a partition and opens only
    buckets with ``bucket % n == i``, so a key has one bucket whichever task sees it.
    """
    n = num_assigners(table, df.sparkSession.sparkContext.defaultParallelism)
    ref = job.ref
    overwrite = job.overwrite is not None

    def add_assigner(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        dw = DynamicBucketWrite(ref.load(), overwrite)
        for batch in batches:
            ids = key_assigner(dw.key_hashes(batch), n)
            yield batch.append_column(pa.field(ASSIGNER_COLUMN, pa.int32(), False), pa.array(ids))

    def add_bucket(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        loaded = ref.load()
        assigners: dict[int, DynamicBucketWrite] = {}
        for batch in batches:
            ids = batch.column(ASSIGNER_COLUMN).to_numpy()
            data = pa.Table.from_batches([batch.drop_columns([ASSIGNER_COLUMN])])
            buckets = np.empty(batch.num_rows, np.int32)
            for i in np.unique(ids).tolist():
                dw = assigners.get(i)
                if dw is None:
                    dw = assigners[i] = DynamicBucketWrite(loaded, overwrite, n, i)
                rows = np.flatnonzero(ids == i)
                buckets[rows] = dw.assign(data.take(pa.array(rows)))
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

    def write_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        result = job.write_task(batches, bucket_column=BUCKET_COLUMN)
        yield pa.RecordBatch.from_arrays(
            [pa.array([result.to_bytes()], pa.binary())],
            schema=pa.schema([pa.field("record", pa.binary(), nullable=False)]),
        )

    return shuffled.mapInArrow(write_task, result_schema)


def _bucket_fn(ref: TableRef, bucket_keys: list[str]) -> Any:
    def add_bucket(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = ref.load()
        fields = [table.table_schema.field(k) for k in bucket_keys]
        assigner = FixedBucketAssigner(fields, table.options.bucket)
        for batch in batches:
            buckets = assigner.assign([batch.column(k) for k in bucket_keys])
            yield batch.append_column(
                pa.field(BUCKET_COLUMN, pa.int32(), nullable=False), pa.array(buckets)
            )

    return add_bucket


def _write_fn(job: WriteJob, drop_bucket: bool) -> Any:
    def write_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        if drop_bucket:
            batches = (b.drop_columns([BUCKET_COLUMN]) for b in batches)
        result = job.write_task(batches)
        yield pa.RecordBatch.from_arrays(
            [pa.array([result.to_bytes()], pa.binary())],
            schema=pa.schema([pa.field("record", pa.binary(), nullable=False)]),
        )

    return write_task
