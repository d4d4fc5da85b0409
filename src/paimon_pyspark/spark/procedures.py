"""Java's ``CALL sys.*`` procedures as Spark jobs: the driver plans, executors work, the
driver commits once.

The procedures are the ones of ``paimon_pyspark.procedures`` (procedures/calls.py), bound to
``SparkRunner``: ``compact(spark, warehouse, table, ...)`` and ``rescale(spark, warehouse,
table, ...)`` take the in-process procedures' arguments after ``spark`` and ``warehouse``.

``SparkRunner`` runs a ProcedurePlan (procedures/pipeline.py): the plan's inputs travel to the
executors as versioned bytes, one Spark task each. A one-stage pipeline (compact: one task per
bucket) runs its tasks there. A two-stage one (postpone compaction, rescale) splits there, and
its units travel as versioned bytes (Arrow IPC for the rows) through Spark's shuffle, keyed by
their key (``partitionBy``), to up to ``_MAX_TASKS`` tasks that run them. Every task records
the files it wrote in the WriteJob's staging area (spark/job.py), so a failed job, and every
attempt Spark did not keep, leaves no snapshot and no files behind; the driver commits the kept
attempts' messages and the plan's own as one snapshot.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Concatenate, Generic, ParamSpec, TypeVar, cast

from pyspark.sql import SparkSession

from paimon_pyspark.catalog.filesystem_catalog import CatalogFactory, FileSystemCatalog
from paimon_pyspark.fs.options import fs_options
from paimon_pyspark.procedures import calls
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
from paimon_pyspark.spark.job import TableRef, TaskResult, WriteJob, driver_result
from paimon_pyspark.spark.write import commit_or_abort
from paimon_pyspark.spec.commit_message import CommitMessage
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
