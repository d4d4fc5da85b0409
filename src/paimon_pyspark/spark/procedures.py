"""Java's ``CALL sys.*`` procedures as Spark jobs: the driver plans, executors work, the
driver commits once.

The procedures are the ones of ``paimon_pyspark.procedures`` (procedures/calls.py), bound to
``SparkRunner``: ``compact(spark, warehouse, table, partitions, order_strategy, order_by,
options, where, partition_idle_time, compact_strategy, buckets)`` and ``rescale(spark,
warehouse, table, ...)`` take the in-process procedures' arguments after ``spark`` and
``warehouse``, in the same order (Flink's CompactProcedure's; Spark's Java procedure orders
``compact``'s differently, so names are the portable way). A sort compaction
(``order_strategy``) runs one task per partition.

``SparkRunner`` runs a ProcedurePlan (procedures/pipeline.py): the plan's inputs travel to the
executors as versioned bytes, one Spark task each. A one-stage pipeline (compact: one task per
bucket) runs its tasks there. A two-stage one (postpone compaction, rescale) splits there, and
its units travel as versioned bytes (Arrow IPC for the rows) through Spark's shuffle, keyed by
their key (``partitionBy``), to up to ``_MAX_TASKS`` tasks that run them. Every task records
the files it wrote in the WriteJob's staging area (spark/job.py), so a failed job, and every
attempt Spark did not keep, leaves no snapshot and no files behind; the driver commits the kept
attempts' messages and the plan's own as one snapshot.

``remove_orphan_files(spark, warehouse, table, ...)`` is Java's SparkOrphanFilesClean: the
driver lists the snapshot, tag and changelog files and the first-level partition directories;
executors read the snapshots and their manifests into the used file names, list the files of
each partition (or bucket) directory, keep those whose name is unused (a ``subtractByKey``: no
set of used names is ever held in one process) and older than the cutoff; the driver reads
snapshots that appeared meanwhile, and executors delete what is left, grouped by directory.
``mode='local'`` runs it on the driver instead, as the in-process procedure does.

``remove_unexisting_files(spark, warehouse, table, dry_run, parallelism)`` looks the data files
up in Spark tasks, a group of partitions each (Java's SparkRemoveUnexistingFiles), and commits
on the driver; ``compact_database(spark, warehouse, ...)`` runs ``compact``'s job per table.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Concatenate, Generic, ParamSpec, TypeVar, cast

from pyspark.sql import SparkSession

from paimon_pyspark.catalog.filesystem_catalog import CatalogFactory, FileSystemCatalog
from paimon_pyspark.fs.options import fs_options
from paimon_pyspark.maintenance.orphan_files import (
    ListingRoot,
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
from paimon_pyspark.spark.job import TableRef, TaskResult, WriteJob, driver_result
from paimon_pyspark.spark.write import commit_or_abort
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.table.file_store_table import FileStoreTable

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
    def __init__(self, spark: SparkSession, warehouse: str | FileSystemCatalog) -> None:
        """``warehouse``: its URI, or a catalog (which carries the filesystem options)."""
        self.spark = spark
        if isinstance(warehouse, FileSystemCatalog):
            self.catalog = warehouse
        else:
            self.catalog = CatalogFactory.create({"warehouse": warehouse})
        self.warehouse = self.catalog.uri

    def run(self, plan: ProcedurePlan[In, Unit], say: Progress) -> int | None:
        pipeline = plan.pipeline
        table = plan.table
        ref = PipelineRef(
            self.warehouse,
            table.name,
            table.dynamic_options,
            fs_options(self.catalog.options),
            pipeline=pipeline,
        )
        job = WriteJob(ref, overwrite=pipeline.overwrite)  # opens the job (its _OPEN marker)
        try:
            payloads = [pipeline.encode_input(item) for item in plan.inputs]
            inputs = self.spark.sparkContext.parallelize(payloads, len(payloads))
            if pipeline.shuffle:
                keyed = inputs.mapPartitions(_split_fn(ref))
                shuffled = keyed.partitionBy(min(plan.keys, _MAX_TASKS), _identity)
                collected = shuffled.mapPartitions(_run_shuffled_fn(job, ref)).collect()
            else:
                collected = inputs.mapPartitions(_run_fn(job, ref)).collect()
            results = [TaskResult.from_bytes(b) for b in collected]
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
        n = parallelism or max(1, self.spark.sparkContext.defaultParallelism)
        rdd = self.spark.sparkContext.parallelize(groups, max(1, min(n, len(groups))))
        shipped = cast(FileStore, StoreRef.of(store))  # a task unpickles it as the store
        check = functools.partial(file_calls.missing_paths, shipped)
        return rdd.mapPartitions(check).collect()

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
            fs_options(self.catalog.options),
            older_than_ms=clean.older_than_ms,
            dry_run=clean.dry_run,
        )
        sc = self.spark.sparkContext
        n = clean.requested_parallelism or max(1, sc.defaultParallelism)
        branches = clean.branches()
        paths = clean.snapshot_paths(branches)
        roots = clean.listing_roots()
        say(
            f"{store.name}: {len(paths)} snapshot, tag and changelog file(s), {len(roots)} "
            "directories to list"
        )
        used_meta = sc.parallelize(paths, max(1, min(n, len(paths)))).mapPartitions(
            _used_metadata_fn(ref)
        )
        used_meta.cache()
        try:
            manifests = used_meta.filter(_is_manifest).map(_name).distinct(n)
            used = used_meta.map(_name).union(manifests.mapPartitions(_data_names_fn(ref)))
            listed = sc.parallelize(roots, max(1, min(n, len(roots)))).mapPartitions(_list_fn(ref))
            unused = listed.subtractByKey(used.map(_keyed), n)
            found = [
                OrphanFile(p, size)
                for p, size in unused.mapPartitions(_old_files_fn(ref)).collect()
            ]
        finally:
            used_meta.unpersist()
        found = clean.drop_used_since(branches, paths, found)
        orphans = clean.metadata_orphans(branches) + found
        if not clean.dry_run and orphans:
            by_dir: dict[str, list[tuple[str, int]]] = {}
            for f in orphans:
                by_dir.setdefault(os.path.dirname(f.path), []).append((f.path, f.size))
            groups = list(by_dir.values())
            sc.parallelize(groups, max(1, min(n, len(groups)))).foreach(_delete_fn(ref))
        verb = "would delete" if clean.dry_run else "deleted"
        result = OrphanFilesResult.of(orphans)
        say(
            f"{store.name}: {verb} {result.deleted_file_count} orphan file(s), "
            f"{result.deleted_file_total_len_in_bytes} bytes"
        )
        return result


@dataclass(frozen=True)
class _OrphanRef(TableRef):
    """The table and the cutoff as an executor of ``remove_orphan_files`` needs them."""

    older_than_ms: int = field(kw_only=True)
    dry_run: bool = field(kw_only=True)

    def clean(self) -> OrphanFilesClean:
        return OrphanFilesClean(self.load().store, self.older_than_ms, self.dry_run, 1)


def _is_manifest(item: tuple[str, bool]) -> bool:
    return item[1]


def _name(item: tuple[str, bool]) -> str:
    return item[0]


def _keyed(name: str) -> tuple[str, None]:
    return name, None


def _used_metadata_fn(
    ref: _OrphanRef,
) -> Callable[[Iterable[str]], Iterator[tuple[str, bool]]]:
    """Snapshot file paths -> (name, is a manifest) of every metadata file they use."""

    def used(paths: Iterable[str]) -> Iterator[tuple[str, bool]]:
        clean = ref.clean()
        for path in paths:
            snapshot = clean.read_snapshot(path)
            if snapshot is None:
                continue
            names, manifests = clean.metadata_names(snapshot)
            yield from ((name, False) for name in names)
            yield from ((name, True) for name in manifests)

    return used


def _data_names_fn(ref: _OrphanRef) -> Callable[[Iterable[str]], Iterator[str]]:
    def names(manifests: Iterable[str]) -> Iterator[str]:
        clean = ref.clean()
        for manifest in manifests:
            yield from clean.data_file_names(manifest)

    return names


def _list_fn(
    ref: _OrphanRef,
) -> Callable[[Iterable[ListingRoot]], Iterator[tuple[str, str]]]:
    def listing(roots: Iterable[ListingRoot]) -> Iterator[tuple[str, str]]:
        clean = ref.clean()
        for directory, levels in roots:
            yield from clean.list_root(directory, levels)

    return listing


def _old_files_fn(
    ref: _OrphanRef,
) -> Callable[[Iterable[tuple[str, object]]], Iterator[tuple[str, int]]]:
    def old(unused: Iterable[tuple[str, object]]) -> Iterator[tuple[str, int]]:
        clean = ref.clean()
        for _, path in unused:
            f = clean.old_file(str(path))
            if f is not None:
                yield f.path, f.size

    return old


def _delete_fn(ref: _OrphanRef) -> Callable[[list[tuple[str, int]]], None]:
    def delete(files: list[tuple[str, int]]) -> None:
        ref.clean().delete(OrphanFile(p, size) for p, size in files)

    return delete


def _identity(key: int) -> int:
    return key


def _split_fn(
    ref: PipelineRef[In, Unit],
) -> Callable[[Iterable[bytes]], Iterator[tuple[int, bytes]]]:
    def split(payloads: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
        pipeline, source = ref.pipeline, ref.source()
        for payload in payloads:
            for key, unit in pipeline.split(source, pipeline.decode_input(source, payload)):
                yield key, pipeline.encode_unit(unit)

    return split


def _run_shuffled_fn(
    job: WriteJob, ref: PipelineRef[In, Unit]
) -> Callable[[Iterable[tuple[int, bytes]]], Iterator[bytes]]:
    def run(partition: Iterable[tuple[int, bytes]]) -> Iterator[bytes]:
        items = iter(partition)
        first = next(items, None)
        if first is None:
            return
        pipeline = ref.pipeline

        def work(target: FileStoreTable) -> Iterator[CommitMessage]:
            units = (
                pipeline.decode_unit(target, data) for _, data in itertools.chain([first], items)
            )
            return pipeline.run(target, job.commit_user, units)

        yield job.run_task(work).to_bytes()

    return run


def _run_fn(
    job: WriteJob, ref: PipelineRef[In, Unit]
) -> Callable[[Iterable[bytes]], Iterator[bytes]]:
    def run(payloads: Iterable[bytes]) -> Iterator[bytes]:
        pipeline, source = ref.pipeline, ref.source()

        def work(target: FileStoreTable) -> Iterator[CommitMessage]:
            units = (
                unit
                for payload in payloads
                for _, unit in pipeline.split(source, pipeline.decode_input(source, payload))
            )
            return pipeline.run(target, job.commit_user, units)

        yield job.run_task(work).to_bytes()

    return run


def on_spark(
    procedure: Callable[Concatenate[ProcedureRunner, P], R],
) -> Callable[Concatenate[SparkSession, str | FileSystemCatalog, P], R]:
    """``procedure`` run as a Spark job on ``spark`` over the tables of ``warehouse``."""

    def call(
        spark: SparkSession, warehouse: str | FileSystemCatalog, *args: P.args, **kwargs: P.kwargs
    ) -> R:
        return procedure(SparkRunner(spark, warehouse), *args, **kwargs)

    doc = (
        "Runs as a Spark job on ``spark``; the tables come from ``warehouse`` (a URI, or a "
        "catalog carrying filesystem options such as ``s3.endpoint``)."
    )
    # Concatenate types its leading parameters positional-only; ``call`` takes them by keyword too
    return cast(
        Callable[Concatenate[SparkSession, str | FileSystemCatalog, P], R],
        bound(call, procedure, doc),
    )


compact = on_spark(calls.compact)
rescale = on_spark(calls.rescale)
remove_orphan_files = on_spark(calls.remove_orphan_files)
rewrite_file_index = on_spark(calls.rewrite_file_index)
remove_unexisting_files = on_spark(file_calls.remove_unexisting_files)
compact_database = on_spark(file_calls.compact_database)
