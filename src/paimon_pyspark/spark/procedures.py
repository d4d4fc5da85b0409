"""Java's ``CALL sys.*`` procedures as Spark jobs: the driver plans, executors work, the
driver commits once.

The procedures are the ones of ``paimon_pyspark.procedures`` (procedures/calls.py), bound to
``SparkRunner``: ``compact(spark, warehouse, table, partitions, order_strategy, order_by,
options, where, partition_idle_time, compact_strategy, buckets)`` and ``rescale(spark,
warehouse, table, ...)`` take the in-process procedures' arguments after ``spark`` and
``warehouse``, in the same order (Flink's CompactProcedure's; Spark's Java procedure orders
``compact``'s differently, so names are the portable way). A sort compaction
(``order_strategy``) runs one task per partition.

``SparkRunner`` runs a ProcedurePlan (procedures/pipeline.py) with DataFrame operations only,
so the same job runs on a classic session and through Spark Connect: the plan's inputs travel
to the executors as versioned bytes in local rows, one Spark task each (spark/cluster.py
``task_rows``), mapped with ``mapInArrow``. A one-stage pipeline (compact: one task per bucket)
runs its tasks there. A two-stage one (postpone compaction, rescale) splits there, and its
units travel as versioned bytes (Arrow IPC for the rows) through Spark's shuffle, a repartition
by their key (``cluster.spread``: key ``k`` in task ``k % n``), to up to ``_MAX_TASKS`` tasks
that run them. Every task records the files it wrote in the WriteJob's staging area
(spark/job.py), so a failed job, and every attempt Spark did not keep, leaves no snapshot and
no files behind; the driver commits the kept attempts' messages and the plan's own as one
snapshot.

``remove_orphan_files(spark, warehouse, table, ...)`` is Java's SparkOrphanFilesClean: the
driver lists the snapshot, tag and changelog files and the first-level partition directories;
executors read the snapshots and their manifests into the used file names, list the files of
each partition (or bucket) directory, keep those whose name is unused (a left anti join by
sort-merge on the name: no set of used names is ever held in one process) and older than the
cutoff; the driver reads snapshots that appeared meanwhile, and executors delete what is left,
grouped by directory.
``mode='local'`` runs it on the driver instead, as the in-process procedure does.

``remove_unexisting_files(spark, warehouse, table, dry_run, parallelism)`` looks the data files
up in Spark tasks, a group of partitions each (Java's SparkRemoveUnexistingFiles), and commits
on the driver; ``compact_database(spark, warehouse, ...)`` runs ``compact``'s job per table.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from paimon_pyspark.catalog import Catalog, CatalogFactory
from paimon_pyspark.maintenance.orphan_files import (
    OrphanFile,
    OrphanFilesClean,
    OrphanFilesResult,
)
from paimon_pyspark.procedures import calls, file_calls
from paimon_pyspark.procedures.pipeline import (
    In,
    ProcedurePlan,
    ProcedureRunner,
    Progress,
    TaskPipeline,
    Unit,
    bound,
    committed,
)
from paimon_pyspark.read.store_ref import StoreRef
from paimon_pyspark.spark.cluster import default_parallelism, spread, task_rows
from paimon_pyspark.spark.job import TableRef, TaskResult, WriteJob, driver_result, location_of
from paimon_pyspark.spark.schema import spark_arrow_schema
from paimon_pyspark.spark.write import commit_or_abort
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.table.file_store_table import FileStoreTable

Warehouse = str | Catalog | Mapping[str, str]
"""What a Spark-job procedure's tables come from: a warehouse URI (the filesystem catalog), a
catalog, or the options ``CatalogFactory.create`` takes."""
P = ParamSpec("P")
R = TypeVar("R")

_MAX_TASKS = 1024
"""At most this many tasks run the units of a shuffle."""


@dataclass(frozen=True)
class PipelineRef(TableRef, Generic[In, Unit]):
    """The table as a procedure's tasks see it: ``load()`` is what they write and the driver
    commits (``pipeline.target``), ``source()`` what they read (``pipeline.source``)."""

    pipeline: TaskPipeline[In, Unit] = field(kw_only=True)

    def load(self) -> FileStoreTable:
        return self.pipeline.target(super().load())

    def source(self) -> FileStoreTable:
        return self.pipeline.source(super().load())


class SparkRunner(ProcedureRunner):
    def __init__(self, spark: SparkSession, warehouse: Warehouse) -> None:
        """``warehouse``: its URI, a catalog, or a catalog's options (``CatalogFactory``'s:
        ``metastore``, ``uri``, ``jdbc.*``, ``token``, ``s3.*``, ...). Tasks open the table's
        directory only (spark/job.py TableRef); the driver commits through the catalog."""
        self.spark = spark
        if isinstance(warehouse, Catalog):
            self.catalog = warehouse
        elif isinstance(warehouse, Mapping):
            self.catalog = CatalogFactory.create(warehouse)
        else:
            self.catalog = CatalogFactory.create({"warehouse": warehouse})
        self.options = {k: v for k, v in self.catalog.options.items() if k != "warehouse"}
        self.warehouse = self.catalog.options.get("warehouse", self.catalog.uri)

    def run(self, plan: ProcedurePlan[In, Unit], say: Progress) -> int | None:
        pipeline = plan.pipeline
        table = plan.table
        ref = PipelineRef(
            self.warehouse,
            table.name,
            table.dynamic_options,
            self.options,
            location_of(table),
            pipeline=pipeline,
        )
        job = WriteJob(ref, overwrite=pipeline.overwrite)  # opens the job (its _OPEN marker)
        try:
            payloads = [pipeline.encode_input(item) for item in plan.inputs]
            rows = list(enumerate(payloads))
            inputs = task_rows(self.spark, rows, _INPUTS, max(1, len(payloads)))
            if pipeline.shuffle:
                keyed = inputs.mapInArrow(_split_fn(ref), _UNITS)
                shuffled = spread(keyed, _KEY, max(1, min(plan.keys, _MAX_TASKS)))
                collected = shuffled.mapInArrow(_run_shuffled_fn(job, ref), _RESULTS).collect()
            else:
                collected = inputs.mapInArrow(_run_fn(job, ref), _RESULTS).collect()
            results = [TaskResult.from_bytes(bytes(r[0])) for r in collected]
        except BaseException:
            job.abort()
            raise
        say(f"ran {len(results)} Spark task(s); committing")
        ids = commit_or_abort(job, [*results, driver_result(plan.retired)])
        return committed(ids, table, say)

    def missing_files(
        self, store: FileStore, groups: list[list[str]], parallelism: int | None
    ) -> list[str]:
        """``remove_unexisting_files``' checks (procedures/file_calls.py): the paths of each
        partition looked up by one of ``parallelism`` Spark tasks (Java's)."""
        if not groups:
            return []
        n = parallelism or default_parallelism(self.spark)
        rows = list(enumerate(groups))
        frame = task_rows(self.spark, rows, _PATH_GROUPS, max(1, min(n, len(groups))))
        shipped = cast(FileStore, StoreRef.of(store))  # a task unpickles it as the store
        return [r[0] for r in frame.mapInArrow(_missing_fn(shipped), _PATHS).collect()]

    def clean_orphan_files(
        self, clean: OrphanFilesClean, mode: str | None, say: Progress
    ) -> OrphanFilesResult:
        if mode == "local":
            return clean.run(say)
        store = clean.store
        ref = _OrphanRef(
            self.warehouse,
            store.name,
            store.dynamic_options,
            self.options,
            older_than_ms=clean.older_than_ms,
            dry_run=clean.dry_run,
        )
        spark = self.spark
        n = clean.requested_parallelism or default_parallelism(spark)
        branches = clean.branches()
        paths = clean.snapshot_paths(branches)
        roots = clean.listing_roots()
        say(
            f"{store.name}: {len(paths)} snapshot, tag and changelog file(s), {len(roots)} "
            "directories to list"
        )
        snapshot_rows = task_rows(
            spark, list(enumerate(paths)), _SNAPSHOT_PATHS, max(1, min(n, len(paths)))
        )
        used_meta = snapshot_rows.mapInArrow(_used_metadata_fn(ref), _USED).cache()
        try:
            manifests = used_meta.where(F.col(_MANIFEST)).select(_NAME)
            manifests = manifests.repartition(n, _NAME).dropDuplicates([_NAME])
            data_names = manifests.mapInArrow(_data_names_fn(ref), _NAMES)
            used = used_meta.select(_NAME).unionByName(data_names).repartition(n, _NAME)
            root_rows = [(i, d, levels) for i, (d, levels) in enumerate(roots)]
            listing = task_rows(spark, root_rows, _ROOTS, max(1, min(n, len(roots))))
            listed = listing.mapInArrow(_list_fn(ref), _LISTED).repartition(n, _NAME)
            unused = listed.join(used.hint("merge"), _NAME, "left_anti")
            found = [
                OrphanFile(r[0], r[1])
                for r in unused.mapInArrow(_old_files_fn(ref), _FOUND).collect()
            ]
        finally:
            used_meta.unpersist()
        found = clean.drop_used_since(branches, paths, found)
        orphans = clean.metadata_orphans(branches) + found
        if not clean.dry_run and orphans:
            by_dir: dict[str, list[OrphanFile]] = {}
            for f in orphans:
                by_dir.setdefault(os.path.dirname(f.path), []).append(f)
            groups = [
                (i, [f.path for f in g], [f.size for f in g]) for i, g in enumerate(by_dir.values())
            ]
            deleting = task_rows(spark, groups, _DELETES, max(1, min(n, len(groups))))
            deleting.mapInArrow(_delete_fn(ref), _FOUND).collect()
        verb = "would delete" if clean.dry_run else "deleted"
        result = OrphanFilesResult.of(orphans)
        say(
            f"{store.name}: {verb} {result.deleted_file_count} orphan file(s), "
            f"{result.deleted_file_total_len_in_bytes} bytes"
        )
        return result


_TASK = StructField("task", IntegerType(), False)
"""The first column of every frame of local rows: the row's index (cluster.task_rows)."""
_KEY = "key"
_NAME = "name"
_MANIFEST = "manifest"
_INPUTS = StructType([_TASK, StructField("payload", BinaryType(), False)])
_UNITS = StructType(
    [StructField(_KEY, LongType(), False), StructField("unit", BinaryType(), False)]
)
_RESULTS = StructType([StructField("result", BinaryType(), False)])
_PATH_GROUPS = StructType([_TASK, StructField("paths", ArrayType(StringType(), False), False)])
_PATHS = StructType([StructField("path", StringType(), False)])
_SNAPSHOT_PATHS = StructType([_TASK, StructField("path", StringType(), False)])
_USED = StructType(
    [StructField(_NAME, StringType(), False), StructField(_MANIFEST, BooleanType(), False)]
)
_NAMES = StructType([StructField(_NAME, StringType(), False)])
_ROOTS = StructType(
    [_TASK, StructField("directory", StringType(), False), StructField("levels", IntegerType())]
)
_LISTED = StructType([StructField(_NAME, StringType(), False), StructField("path", StringType())])
_FOUND = StructType([StructField("path", StringType(), False), StructField("size", LongType())])
_DELETES = StructType(
    [
        _TASK,
        StructField("paths", ArrayType(StringType(), False), False),
        StructField("sizes", ArrayType(LongType(), False), False),
    ]
)

Batches = Iterator[pa.RecordBatch]
TaskFn = Callable[[Batches], Batches]


def _batch(schema: StructType, *columns: Sequence[object]) -> pa.RecordBatch:
    """One batch of a task's output rows, in the Arrow form Spark expects of ``schema``."""
    arrow = spark_arrow_schema(schema)
    arrays = [pa.array(c, f.type) for c, f in zip(columns, arrow, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=arrow)


def _pairs(batch: pa.RecordBatch) -> Iterator[tuple[Any, Any]]:
    """Columns 1 and 2 of every row of ``batch`` (column 0 is the row's task index)."""
    return zip(batch.column(1).to_pylist(), batch.column(2).to_pylist(), strict=True)


def _values(batches: Batches, column: int) -> Iterator[object]:
    """Column ``column`` of every row of a task's batches."""
    for batch in batches:
        yield from batch.column(column).to_pylist()


@dataclass(frozen=True)
class _OrphanRef(TableRef):
    """The table and the cutoff as an executor of ``remove_orphan_files`` needs them."""

    older_than_ms: int = field(kw_only=True)
    dry_run: bool = field(kw_only=True)

    def clean(self) -> OrphanFilesClean:
        return OrphanFilesClean(self.load().store, self.older_than_ms, self.dry_run, 1)


def _missing_fn(store: FileStore) -> TaskFn:
    def missing(batches: Batches) -> Batches:
        for batch in batches:
            found = list(file_calls.missing_paths(store, batch.column(1).to_pylist()))
            if found:
                yield _batch(_PATHS, found)

    return missing


def _used_metadata_fn(ref: _OrphanRef) -> TaskFn:
    """Snapshot file paths -> (name, is a manifest) of every metadata file they use."""

    def used(batches: Batches) -> Batches:
        clean = None
        for path in _values(batches, 1):
            clean = clean or ref.clean()
            snapshot = clean.read_snapshot(str(path))
            if snapshot is None:
                continue
            names, manifests = clean.metadata_names(snapshot)
            flags = [False] * len(names) + [True] * len(manifests)
            yield _batch(_USED, [*names, *manifests], flags)

    return used


def _data_names_fn(ref: _OrphanRef) -> TaskFn:
    def names(batches: Batches) -> Batches:
        clean = None
        for manifest in _values(batches, 0):
            clean = clean or ref.clean()
            yield _batch(_NAMES, list(clean.data_file_names(str(manifest))))

    return names


def _list_fn(ref: _OrphanRef) -> TaskFn:
    def listing(batches: Batches) -> Batches:
        clean = None
        for batch in batches:
            clean = clean or ref.clean()
            for directory, levels in zip(
                *(batch.column(i).to_pylist() for i in (1, 2)), strict=True
            ):
                entries = list(clean.list_root(directory, levels))
                if entries:
                    yield _batch(_LISTED, [n for n, _ in entries], [p for _, p in entries])

    return listing


def _old_files_fn(ref: _OrphanRef) -> TaskFn:
    def old(batches: Batches) -> Batches:
        clean = None
        for batch in batches:
            clean = clean or ref.clean()
            files = [f for p in batch.column(1).to_pylist() if (f := clean.old_file(p))]
            if files:
                yield _batch(_FOUND, [f.path for f in files], [f.size for f in files])

    return old


def _delete_fn(ref: _OrphanRef) -> TaskFn:
    def delete(batches: Batches) -> Batches:
        clean = None
        for batch in batches:
            clean = clean or ref.clean()
            for paths, sizes in _pairs(batch):
                clean.delete(OrphanFile(p, s) for p, s in zip(paths, sizes, strict=True))
        yield from ()

    return delete


def _split_fn(ref: PipelineRef[In, Unit]) -> TaskFn:
    """A procedure's inputs -> (key, unit) rows, the units as versioned bytes."""

    def split(batches: Batches) -> Batches:
        pipeline, source = ref.pipeline, None
        for payload in _values(batches, 1):
            source = source or ref.source()
            item = pipeline.decode_input(source, cast(bytes, payload))
            for key, unit in pipeline.split(source, item):
                yield _batch(_UNITS, [key], [pipeline.encode_unit(unit)])

    return split


def _run_shuffled_fn(job: WriteJob, ref: PipelineRef[In, Unit]) -> TaskFn:
    def run(batches: Batches) -> Batches:
        units = _values(batches, 1)
        first = next(units, None)
        if first is None:
            return
        pipeline = ref.pipeline

        def work(target: FileStoreTable) -> Iterator[CommitMessage]:
            found = itertools.chain([first], units)
            decoded = (pipeline.decode_unit(target, cast(bytes, data)) for data in found)
            return pipeline.run(target, job.commit_user, decoded)

        yield _batch(_RESULTS, [job.run_task(work).to_bytes()])

    return run


def _run_fn(job: WriteJob, ref: PipelineRef[In, Unit]) -> TaskFn:
    def run(batches: Batches) -> Batches:
        payloads = _values(batches, 1)
        first = next(payloads, None)
        if first is None:
            return
        pipeline, source = ref.pipeline, ref.source()

        def work(target: FileStoreTable) -> Iterator[CommitMessage]:
            units = (
                unit
                for payload in itertools.chain([first], payloads)
                for _, unit in pipeline.split(
                    source, pipeline.decode_input(source, cast(bytes, payload))
                )
            )
            return pipeline.run(target, job.commit_user, units)

        yield _batch(_RESULTS, [job.run_task(work).to_bytes()])

    return run


def on_spark(
    procedure: Callable[Concatenate[ProcedureRunner, P], R],
) -> Callable[Concatenate[SparkSession, Warehouse, P], R]:
    """``procedure`` run as a Spark job on ``spark`` over the tables of ``warehouse``."""

    def call(spark: SparkSession, warehouse: Warehouse, *args: P.args, **kwargs: P.kwargs) -> R:
        return procedure(SparkRunner(spark, warehouse), *args, **kwargs)

    doc = (
        "Runs as a Spark job on ``spark``; the tables come from ``warehouse`` (a URI, a "
        "catalog, or a catalog's options: ``{'warehouse': ..., 'metastore': 'jdbc', 'uri': "
        "...}``, filesystem options such as ``s3.endpoint`` included)."
    )
    # Concatenate types its leading parameters positional-only; ``call`` takes them by keyword too
    return cast(
        Callable[Concatenate[SparkSession, Warehouse, P], R],
        bound(call, procedure, doc),
    )


compact = on_spark(calls.compact)
rescale = on_spark(calls.rescale)
remove_orphan_files = on_spark(calls.remove_orphan_files)
rewrite_file_index = on_spark(calls.rewrite_file_index)
remove_unexisting_files = on_spark(file_calls.remove_unexisting_files)
compact_database = on_spark(file_calls.compact_database)
