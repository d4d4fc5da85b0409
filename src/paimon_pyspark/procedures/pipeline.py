"""The one shape of every procedure that rewrites data: plan -> run tasks -> commit or abort.

Java's procedures build a job around the writers (CompactProcedure, the postpone branch of
SparkPostponeCompactProcedure, RescaleProcedure); here each is written once as a
``TaskPipeline`` with a ``ProcedurePlan``, and a ``ProcedureRunner`` runs it:

    driver     plan: the inputs (CompactTasks, postpone partitions, splits) of one snapshot
    stage 1    split(input) -> (key, unit)...       per input
    [shuffle]  units regrouped by key               in memory, or Spark's partitionBy
    stage 2    run(units) -> CommitMessages          writes files
    driver     one commit of every message (and the plan's own); on any failure, abort:
               the files the tasks wrote are deleted and nothing is committed

The in-process runner (procedures/in_process.py) runs the stages in this process, one scope of
inputs at a time; the Spark runner (spark/procedures.py) runs them as Spark tasks, shipping the
inputs and units as versioned bytes, and commits once on the driver through the staging of a
WriteJob (spark/job.py), which also takes care of failed, retried and speculative attempts.
"""

from __future__ import annotations

import functools
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.commit.overwrite import Overwrite
from paimon_pyspark.errors import CompactArgumentError
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean, OrphanFilesResult
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.table.file_store_table import FileStoreTable

In = TypeVar("In")
Unit = TypeVar("Unit")
Call = TypeVar("Call", bound=Callable[..., object])

Progress = Callable[[str], None]

LOG = logging.getLogger("paimon_pyspark.procedures")


class TaskPipeline(ABC, Generic[In, Unit]):
    """What the tasks of one procedure do between the driver's plan and its one commit.

    ``split`` turns one planned input into keyed units. With ``shuffle`` the units of every
    input are regrouped by key before ``run``, so that each key is run by one task; without
    it each input's units run where they were split and keys mean nothing. ``run`` writes and
    yields messages; when it fails it deletes what it wrote for the unit it is in, and the
    runner deletes the files of the messages already yielded.

    A pipeline holds no plan data, so a runner may hand it to its workers as it is; inputs and
    units cross processes as versioned bytes (``encode_*`` / ``decode_*``), never pickled.
    """

    shuffle: ClassVar[bool] = False

    @property
    def overwrite(self) -> Overwrite | None:
        """The overwrite the commit is (its writers then ignore the table's files), or None."""
        return None

    def source(self, table: FileStoreTable) -> FileStoreTable:
        """What ``split`` reads, from the table as the procedure loaded it."""
        return table

    def target(self, table: FileStoreTable) -> FileStoreTable:
        """What ``run`` writes and the driver commits to, from the table as loaded."""
        return table

    @abstractmethod
    def encode_input(self, item: In) -> bytes: ...

    @abstractmethod
    def decode_input(self, source: FileStoreTable, data: bytes) -> In: ...

    @abstractmethod
    def split(self, source: FileStoreTable, item: In) -> Iterator[tuple[int, Unit]]: ...

    @abstractmethod
    def encode_unit(self, unit: Unit) -> bytes: ...

    @abstractmethod
    def decode_unit(self, target: FileStoreTable, data: bytes) -> Unit: ...

    @abstractmethod
    def run(
        self, target: FileStoreTable, commit_user: str, units: Iterable[Unit]
    ) -> Iterator[CommitMessage]: ...


@dataclass(frozen=True)
class ProcedurePlan(Generic[In, Unit]):
    """One planned run of a pipeline.

    ``scopes``: the inputs, grouped so that no key is shared between groups; the in-process
    runner finishes one group before it splits the next, so it holds one group's units at a
    time. ``keys``: how many keys ``split`` yields in all (a shuffle's parallelism).
    ``retired``: messages the driver adds to the commit itself. ``scope_name`` names a group
    in progress lines.
    """

    table: FileStoreTable
    pipeline: TaskPipeline[In, Unit]
    scopes: tuple[tuple[In, ...], ...]
    keys: int
    retired: tuple[CommitMessage, ...] = ()
    scope_name: str = "task"

    @property
    def inputs(self) -> list[In]:
        return [item for scope in self.scopes for item in scope]


class ProcedureRunner(ABC):
    """Runs a ProcedurePlan and commits its result, and the orphan-file clean of a table;
    ``catalog`` is where procedures load the tables they are called on."""

    catalog: Catalog

    @abstractmethod
    def run(self, plan: ProcedurePlan[In, Unit], say: Progress) -> int | None:
        """The id of the snapshot committed, or None if there was nothing to commit."""

    def clean_orphan_files(
        self, clean: OrphanFilesClean, mode: str | None, say: Progress
    ) -> OrphanFilesResult:
        """Remove the orphan files of one table (``remove_orphan_files``); here in this process
        on a thread pool (Java's ``mode => 'local'``), a distributed runner may spread it."""
        if mode == "distributed":
            raise CompactArgumentError(
                f"Table '{clean.store.name}': mode 'distributed' needs Spark; use "
                "paimon_pyspark.spark.procedures.remove_orphan_files."
            )
        return clean.run(say)


def reporter(progress: Progress | None) -> Progress:
    """Each progress line goes to the procedures' logger and, if given, to ``progress``."""

    def say(message: str) -> None:
        LOG.info(message)
        if progress is not None:
            progress(message)

    return say


def committed(ids: Sequence[int], table: FileStoreTable, say: Progress) -> int | None:
    """The last of a commit's snapshot ids, reported."""
    last = ids[-1] if ids else None
    say(f"committed snapshot {last} of {table.name}")
    return last


def bound(call: Call, procedure: Callable[..., object], doc: str) -> Call:
    """``call`` presented as ``procedure`` bound to a runner: its name, ``doc`` then the
    procedure's docstring, and a signature whose runner parameter is replaced by ``call``'s
    own leading parameters, so ``help`` and ``inspect.signature`` show the public arguments."""
    own = inspect.signature(call).parameters.values()
    leading = [p for p in own if p.kind == p.POSITIONAL_OR_KEYWORD]
    target = inspect.signature(procedure)
    rest = list(target.parameters.values())[1:]
    functools.update_wrapper(call, procedure, assigned=("__name__", "__qualname__"), updated=())
    call.__doc__ = f"{doc}\n\n{inspect.getdoc(procedure)}"
    vars(call)["__signature__"] = target.replace(parameters=[*leading, *rest])
    return call
