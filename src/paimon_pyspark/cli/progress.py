"""The progress bar of long work (load, compact, rescale): tasks, rows, files, elapsed time.

On a classic session Spark runs the command's jobs under one job group; a thread polls Spark's
StatusTracker for the group's stages (tasks done of all) and the driver's status store for the
rows the stages have read. A Spark Connect client has neither: the server reports the stages of
each operation to a progress handler (pyspark >= 4.0), which counts the tasks; rows read are
not reported there, so they show once the commit is. Files are known once the commit is: the
command reports them with ``done``, from the snapshots it committed (``committed``).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from pyspark.sql import SparkSession
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from paimon_pyspark.spark.cluster import is_connect
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.table.file_store_table import FileStoreTable

_GROUP = "spark.jobGroup.id"
_DESCRIPTION = "spark.job.description"
_INTERRUPT = "spark.job.interruptOnCancel"


@dataclass(frozen=True)
class JobCounts:
    """Tasks done, tasks in all, rows read so far by the group's stages."""

    tasks_done: int = 0
    tasks: int = 0
    rows: int = 0


class SparkJobCounts:
    """The counts of the jobs of job group ``group`` on a classic session, which the jobs run
    under while the counts are open (``open``/``close``)."""

    def __init__(self, spark: SparkSession, group: str, label: str) -> None:
        self.context = spark.sparkContext
        self.group = group
        self.label = label
        self._saved: dict[str, str | None] = {}
        self._store: Any = None
        try:
            self._store = self.context._jsc.sc().statusStore()
        except Exception:  # a Spark without a status store: rows stay unknown
            self._store = None

    def open(self) -> None:
        sc = self.context
        self._saved = {k: sc.getLocalProperty(k) for k in (_GROUP, _DESCRIPTION, _INTERRUPT)}
        sc.setJobGroup(self.group, self.label, interruptOnCancel=False)

    def close(self) -> None:
        for key, value in self._saved.items():
            self.context.setLocalProperty(key, value)  # type: ignore[arg-type]  # None removes

    def read(self) -> JobCounts:
        tracker = self.context.statusTracker()
        done = total = rows = 0
        for job in tracker.getJobIdsForGroup(self.group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info is not None else ():
                stage_info = tracker.getStageInfo(stage)
                if stage_info is not None:
                    done += stage_info.numCompletedTasks
                    total += stage_info.numTasks
                rows = max(rows, self._input_records(stage))
        return JobCounts(done, total, rows)

    def _input_records(self, stage: int) -> int:
        if self._store is None:
            return 0
        try:
            return int(self._store.lastStageAttempt(stage).inputRecords())
        except Exception:  # the stage is not in the store (yet, or any more)
            return 0


class ConnectJobCounts:
    """The counts of the operations a Spark Connect session runs while the counts are open:
    the stages the server reports to a progress handler, per operation (tasks only)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self._stages: dict[tuple[str, int], tuple[int, int]] = {}
        self._lock = threading.Lock()
        self._handler: Any = None

    def open(self) -> None:
        register = getattr(self.spark, "registerProgressHandler", None)
        if register is None:  # pyspark < 4.0: no progress from the server
            return

        def handler(
            stages: Iterable[Any] | None,
            inflight_tasks: int,
            operation_id: str | None,
            done: bool,
        ) -> None:  # pyspark calls it with these keywords
            with self._lock:
                for stage in stages or ():
                    key = (operation_id or "", stage.stage_id)
                    self._stages[key] = (stage.num_completed_tasks, stage.num_tasks)

        self._handler = handler
        register(handler)

    def close(self) -> None:
        if self._handler is not None:
            self.spark.removeProgressHandler(self._handler)
            self._handler = None

    def read(self) -> JobCounts:
        with self._lock:
            counts = list(self._stages.values())
        return JobCounts(sum(d for d, _ in counts), sum(t for _, t in counts), 0)


@dataclass(frozen=True)
class Committed:
    """What the snapshots a command committed wrote: the rows and data files their delta
    manifests add (a compaction's or overwrite's rewritten rows too), and the files they
    remove."""

    snapshot_ids: tuple[int, ...] = ()
    rows: int = 0
    files: int = 0
    removed_files: int = 0


def committed(table: FileStoreTable, after: int | None) -> Committed:
    """The snapshots of ``table`` after snapshot ``after`` (None: all of them)."""
    manager = table.store.snapshot_manager
    latest = manager.latest_id()
    if latest is None:
        return Committed()
    ids = tuple(range((after or 0) + 1, latest + 1))
    rows = files = removed = 0
    mio = table.store.manifest_io
    for sid in ids:
        snapshot = manager.snapshot_if_exists(sid)
        if snapshot is None:
            continue
        for e in mio.read_entries(mio.read_manifest_list(snapshot.delta_manifest_list)):
            if e.kind == mf.KIND_ADD:
                files += 1
                rows += e.file.row_count
            else:
                removed += 1
    return Committed(ids, rows, files, removed)


class _TasksColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        total = "?" if task.total is None else f"{task.total:.0f}"
        return Text(f"{task.completed:.0f}/{total} tasks")


class JobProgress:
    """A progress bar on stderr over the Spark jobs run inside ``with``; ``say`` sets its
    text. Nothing is drawn unless ``show`` (a terminal, no --json); the counts are open
    either way (a classic session's job group is set, and put back at exit)."""

    def __init__(self, spark: SparkSession, label: str, show: bool, console: Console) -> None:
        self.spark = spark
        self.label = label
        self.group = f"paimon-pyspark-{uuid.uuid4().hex}"
        self.counts: SparkJobCounts | ConnectJobCounts = (
            ConnectJobCounts(spark)
            if is_connect(spark)
            else SparkJobCounts(spark, self.group, label)
        )
        self.show = show
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            _TasksColumn(),
            TextColumn("{task.fields[rows]:,} rows"),
            TextColumn("{task.fields[files]} files"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
            disable=not show,
        )
        self._task = self._progress.add_task(label, total=None, rows=0, files="?")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> JobProgress:
        self.counts.open()
        if self.show:
            self._progress.start()
            self._thread = threading.Thread(target=self._poll, daemon=True, name=self.group)
            self._thread.start()
        return self

    def say(self, message: str) -> None:
        short = message if len(message) <= 40 else message[:39] + "…"
        self._progress.update(self._task, description=f"{self.label}: {short}")

    def done(self, result: Committed) -> None:
        """The committed counts replace the live ones."""
        counts = self.counts.read() if self.show else JobCounts()
        self._progress.update(
            self._task,
            description=self.label,
            total=max(counts.tasks, 1),
            completed=max(counts.tasks, 1),
            rows=result.rows,
            files=result.files,
        )

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            try:
                c = self.counts.read()
            except Exception:  # the session is going away
                return
            self._progress.update(
                self._task, total=c.tasks or None, completed=c.tasks_done, rows=c.rows
            )

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._progress.stop()
        self.counts.close()
