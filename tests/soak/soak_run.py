"""Soak run (issues 36 and 44): acknowledged commits stay, replayed ones never double, while
writers are SIGKILLed, a compactor and fast expiry run beside them, orphan files are cleaned,
and (``--s3``) every S3 request class fails now and then.

Two tables of one warehouse: ``db.t`` (append, ``bucket = -1``) and ``db.pk`` (primary key
``k``, 2 buckets). Children (``<state>/<role>.log``: one JSON line per event):

- ``append``: checkpoints n = 1, 2, ... of ``rows`` rows into ``db.t``, commit user ``append``;
- ``upsert``: checkpoint n upserts ``pk_rows`` keys ``u-<i>`` (a ring of 4 x ``pk_rows``, so keys
  are overwritten) with n, into ``db.pk``;
- ``delete``: checkpoint n inserts keys ``d-<n>-<j>`` and deletes the even ``j`` of n - 1;
- ``spark``: one long-lived pyspark ``local[1]`` process that writes a checkpoint of ``rows``
  rows into ``db.t`` with ``paimon_pyspark.spark.write`` every ``spark_every`` seconds;
- ``compactor``: compacts both tables in a loop;
- ``orphans``: ``remove_orphan_files`` on both tables every ``orphan_every`` seconds with its
  default cutoff (one day before now), shortened to ``orphan_safety`` seconds by running it
  under ``store.clock.injected`` with a clock one day minus ``orphan_safety`` ahead;
- ``reader``: a stream read of both tables (a consumer each, so expiry waits for it) that
  checks every snapshot it sees: each checkpoint in it whole, none seen twice.

The snapshot options make every commit expire (``snapshot.num-retained.min = 1``, max 5,
1 s); the primary-key writers are write-only beside the compactor (two compacting writers of
one bucket conflict, in Java too) and call ``expire_snapshots`` after each commit. With
``--s3`` the children go through tests/fault_s3_proxy.py (``--fault-rate`` of the requests of
every class fail, seeded by ``--seed``) and the checks through moto directly. The three
stream writers record n durably once ``commit`` returned and resume at the
recorded n + 1 after a kill (their commit user's identifier makes the replayed checkpoint a
no-op when it had landed), logging each attempt's file names first. The Spark writer records
the n it begins and moves on after a kill: the checkpoint in flight is there whole or not at
all. Every ``kill_every`` seconds (a random span) the driver SIGKILLs one writer or the
compactor (its whole process group: the Spark JVM too) and restarts it.

At the end the driver checks: every acknowledged checkpoint present exactly once (append) or
the primary-key table equal to the model of the acknowledged upserts and deletes, the one in
flight present whole or not at all; no snapshot names a missing file (but the expired ones a
killed expiry left, see ``missing_files``); ``remove_orphan_files`` at rest deletes no file of
an acknowledged commit (only of killed or failed attempts, replays, the compactor's and Spark's
unlogged ones, and metadata), and the tables read the same after it; the stream saw every
checkpoint whole and once; Java Paimon 1.4.2 reads both tables equal.

    python tests/soak/soak_run.py soak --seconds 1200 [--s3] [--kill-min 30 --kill-max 90]
        [--runs N --seed S --retain-min 1 --pause 0 --no-spark --no-java --keep]
    python tests/soak/soak_run.py <role> --catalog JSON --state DIR --config JSON   # a child
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.maintenance.orphan_files import ONE_DAY_MS, OrphanFilesClean
from paimon_pyspark.procedures import compact, expire_snapshots, remove_orphan_files
from paimon_pyspark.store import clock
from paimon_pyspark.store.managers import Consumer

SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parents[2]
TABLE = "db.t"
PK_TABLE = "db.pk"
APPEND, UPSERT, DELETE, SPARK = "append", "upsert", "delete", "spark"
COMPACTOR, ORPHANS, READER = "compactor", "orphans", "reader"
STREAM_WRITERS = (APPEND, UPSERT, DELETE)
KILLABLE = (APPEND, UPSERT, DELETE, SPARK, COMPACTOR)
ROLES = (*KILLABLE, ORPHANS, READER)
TABLE_OF = {APPEND: TABLE, SPARK: TABLE, UPSERT: PK_TABLE, DELETE: PK_TABLE}
SCHEMA = pa.schema(
    [("writer", pa.string()), ("n", pa.int64()), ("j", pa.int64()), ("payload", pa.string())]
)
PK_SCHEMA = pa.schema(
    [
        pa.field("k", pa.string(), nullable=False),
        ("writer", pa.string()),
        ("n", pa.int64()),
        ("payload", pa.string()),
    ]
)
INSERT, DELETE_KIND = 0, 3
"""Row kinds (spec/key_value.py): +I and -D."""
CONSUMER = "soak-reader"
ERROR_EVENTS = {"error": "", "expire_error": " expiry"}
"""Log events of failures, and how the summary names them after the role."""


@dataclass(frozen=True)
class SoakConfig:
    """What a run does; the children get it as JSON."""

    seconds: float = 1200.0
    seed: int = 44
    kill_every: tuple[float, float] = (30.0, 90.0)
    rows: int = 50
    pk_rows: int = 20
    pause: float = 0.0
    """Seconds a stream writer sleeps between checkpoints (make test's version: CPU)."""
    compact_pause: float = 0.5
    spark_every: float = 60.0
    orphan_every: float = 120.0
    orphan_safety: float = 150.0
    """The default cutoff of remove_orphan_files (one day) as the injected clock shortens it."""
    retain_min: int = 1
    retain_max: int = 5
    spark: bool = True
    kill_spark: bool = True
    """Whether the Spark writer is among the victims (make test's version spares its JVM)."""
    java: bool = True

    @staticmethod
    def from_json(text: str) -> SoakConfig:
        raw = json.loads(text)
        raw["kill_every"] = tuple(raw["kill_every"])
        return SoakConfig(**raw)


def table_options(cfg: SoakConfig) -> dict[str, str]:
    """Every commit expires: at most ``retain_max`` snapshots, older than a second go."""
    return {
        "snapshot.num-retained.min": str(cfg.retain_min),
        "snapshot.num-retained.max": str(cfg.retain_max),
        "snapshot.time-retained": "1 s",
    }


def checkpoint_rows(writer: str, n: int, rows: int) -> pa.Table:
    js = range(rows)
    return pa.table(
        {
            "writer": [writer] * rows,
            "n": [n] * rows,
            "j": list(js),
            "payload": [f"{writer}:{n}:{j}:{'x' * 16}" for j in js],
        },
        schema=SCHEMA,
    )


def upsert_keys(n: int, pk_rows: int) -> list[str]:
    """Checkpoint n's keys: the next ``pk_rows`` of a ring of 4 x ``pk_rows``."""
    return [f"u-{(n * pk_rows + j) % (4 * pk_rows)}" for j in range(pk_rows)]


def pk_rows_of(writer: str, n: int, pk_rows: int) -> tuple[pa.Table, list[int]]:
    """Checkpoint n of the upsert or the delete writer, with each row's kind."""
    if writer == UPSERT:
        keys, kinds = upsert_keys(n, pk_rows), [INSERT] * pk_rows
    else:
        keys = [f"d-{n}-{j}" for j in range(pk_rows)]
        gone = [f"d-{n - 1}-{j}" for j in range(0, pk_rows, 2)] if n > 1 else []
        keys, kinds = keys + gone, [INSERT] * pk_rows + [DELETE_KIND] * len(gone)
    table = pa.table(
        {
            "k": keys,
            "writer": [writer] * len(keys),
            "n": [n] * len(keys),
            "payload": [f"{writer}:{n}:{k}" for k in keys],
        },
        schema=PK_SCHEMA,
    )
    return table, kinds


def pk_model(writer: str, last: int, pk_rows: int) -> dict[str, int]:
    """Key -> n after checkpoints 1..last of ``writer`` (the primary-key table's rows)."""
    out: dict[str, int] = {}
    for n in range(1, last + 1):
        table, kinds = pk_rows_of(writer, n, pk_rows)
        for k, kind in zip(table["k"].to_pylist(), kinds, strict=True):
            if kind == INSERT:
                out[k] = n
            else:
                out.pop(k, None)
    return out


def expected_in_snapshot(writer: str, n: int, cfg: SoakConfig) -> int:
    """Rows checkpoint n of ``writer`` adds to a snapshot's delta (the delete writer's first
    has nothing to delete)."""
    if writer in (APPEND, SPARK):
        return cfg.rows
    return cfg.pk_rows + ((cfg.pk_rows + 1) // 2 if writer == DELETE and n > 1 else 0)


# --- state files ---------------------------------------------------------------------------


def record(path: Path, n: int) -> None:
    """Replace ``path``'s number durably: a SIGKILL leaves the old number or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, str(n).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def recorded(path: Path) -> int:
    try:
        return int(path.read_text())
    except FileNotFoundError:
        return 0


class Log:
    """One JSON object per line, each written by one O_APPEND write: a kill loses whole lines."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def line(self, **fields: Any) -> None:
        os.write(self.fd, (json.dumps(fields) + "\n").encode())


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:  # a line cut by the kill of a child writing it
            continue
    return out


def _after(table: Any, ids: list[int]) -> dict[str, Any]:
    """The table right after a commit: for the log, to tell a real snapshot from a ghost."""
    sm = table.snapshot_manager
    owners: dict[str, Any] = {}
    try:
        for sid in ids:
            snapshot = sm.snapshot_if_exists(sid)
            owners[str(sid)] = (
                None if snapshot is None else [snapshot.commit_user, snapshot.commit_identifier]
            )
        return {"earliest": sm.earliest_id(), "latest": sm.latest_id(), "owners": owners}
    except Exception as e:  # an expiry deleting under us: the commit stands, the log says so
        return {"earliest": None, "latest": None, "owners": owners, "after_error": repr(e)}


# --- children ------------------------------------------------------------------------------


def stream_writer_main(
    catalog_options: Mapping[str, str], state: Path, role: str, cfg: SoakConfig
) -> None:
    """Commit checkpoints from the recorded one + 1 on, forever (the driver kills us); each
    attempt's data files are logged before its commit, for the orphan check."""
    catalog = CatalogFactory.create(dict(catalog_options))
    table = catalog.get_table(TABLE_OF[role])
    if role != APPEND:
        # Two writers compacting one bucket conflict (in Java too): the primary-key writers are
        # write-only beside the compactor, and expire after each commit themselves.
        table = table.copy({"write-only": "true"})
    builder = table.new_stream_write_builder(role)
    progress = state / f"{role}.n"
    log = Log(state / f"{role}.log")
    n = recorded(progress) + 1
    log.line(event="start", pid=os.getpid(), n=n, t=time.monotonic())
    write, commit = builder.new_write(), builder.new_commit()
    while True:
        start = time.monotonic()
        try:
            if role == APPEND:
                write.write_arrow(checkpoint_rows(role, n, cfg.rows))
            else:
                rows, kinds = pk_rows_of(role, n, cfg.pk_rows)
                write.write_arrow(rows, row_kinds=kinds)
            messages = write.prepare_commit(n)
            files = [f.file_name for m in messages for f in _written(m)]
            log.line(event="attempt", n=n, files=files)
            ids = commit.commit(messages, n)
        except Exception as e:
            # A failed commit leaves the write's state unknown: a new one, as a restarted job.
            log.line(event="error", n=n, start=start, end=time.monotonic(), error=repr(e)[:400])
            write, commit = builder.new_write(), builder.new_commit()
            time.sleep(0.2)
            continue
        end = time.monotonic()
        log.line(event="commit", n=n, ids=ids, start=start, end=end, **_after(table, ids))
        record(progress, n)
        n += 1
        if role != APPEND:
            try:
                expire_snapshots(catalog, TABLE_OF[role])
            except Exception as e:  # a racing expiry: the next commit's expiry goes on
                log.line(event="expire_error", n=n - 1, error=repr(e)[:400])
        if cfg.pause:
            time.sleep(cfg.pause)


def _written(message: Any) -> list[Any]:
    """The data files a commit message adds: new files and a write's own compaction output."""
    return [*message.data_increment.new_files, *message.compact_increment.compact_after]


def spark_main(catalog_options: Mapping[str, str], state: Path, cfg: SoakConfig) -> None:
    """One Spark session writing checkpoint n with ``spark.write`` every ``spark_every``
    seconds; n is recorded as begun first, so a restart never writes an n twice."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    from pyspark.sql import SparkSession

    from paimon_pyspark.spark import write

    log = Log(state / f"{SPARK}.log")
    begun = state / f"{SPARK}.begun"
    session = (
        SparkSession.builder.master("local[1]")
        .appName("paimon_pyspark-soak")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", "512m")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    options = {k: v for k, v in catalog_options.items() if k != "warehouse"}
    warehouse = catalog_options["warehouse"]
    log.line(event="start", pid=os.getpid(), t=time.monotonic())
    while True:
        n = recorded(begun) + 1
        record(begun, n)
        log.line(event="begin", n=n)
        start = time.monotonic()
        try:
            rows = checkpoint_rows(SPARK, n, cfg.rows)
            df = session.createDataFrame(
                rows.to_pylist(), schema="writer string, n long, j long, payload string"
            )
            ids = write(df, warehouse, TABLE, options=options)
        except Exception as e:
            log.line(event="error", n=n, start=start, end=time.monotonic(), error=repr(e)[:400])
        else:
            log.line(event="commit", n=n, ids=ids, start=start, end=time.monotonic())
        time.sleep(max(0.0, cfg.spark_every - (time.monotonic() - start)))


def compactor_main(catalog_options: Mapping[str, str], state: Path, cfg: SoakConfig) -> None:
    """Compact both tables in turn; counts the COMPACT snapshots it made across restarts."""
    catalog = CatalogFactory.create(dict(catalog_options))
    tables = {name: catalog.get_table(name) for name in (TABLE, PK_TABLE)}
    count = state / "compactions.n"
    log = Log(state / f"{COMPACTOR}.log")
    done = recorded(count)
    log.line(event="start", pid=os.getpid(), t=time.monotonic())
    while True:
        for name, table in tables.items():
            start = time.monotonic()
            try:
                sid = compact(catalog, name)
            except Exception as e:  # a writer or an expiry raced the plan: plan again
                log.line(
                    event="error",
                    table=name,
                    start=start,
                    end=time.monotonic(),
                    error=repr(e)[:400],
                )
                time.sleep(0.2)
                continue
            if sid is not None:
                ids = [sid]
                log.line(
                    event="commit",
                    table=name,
                    ids=ids,
                    start=start,
                    end=time.monotonic(),
                    **_after(table, ids),
                )
                done += 1
                record(count, done)
            time.sleep(cfg.compact_pause)


@contextmanager
def cutoff_ago(seconds: float) -> Iterator[None]:
    """Run the block with a clock one day minus ``seconds`` ahead of the system's, so that
    ``remove_orphan_files``' default cutoff (one day before now) is ``seconds`` ago."""
    shift = ONE_DAY_MS - int(seconds * 1000)
    with clock.injected(lambda: int(time.time() * 1000) + shift):
        yield


def orphans_main(catalog_options: Mapping[str, str], state: Path, cfg: SoakConfig) -> None:
    """``remove_orphan_files`` with its default cutoff every ``orphan_every`` seconds, the
    cutoff shortened by the injected clock; logs every file it deleted."""
    catalog = CatalogFactory.create(dict(catalog_options))
    log = Log(state / f"{ORPHANS}.log")
    log.line(event="start", pid=os.getpid(), t=time.monotonic())
    while True:
        time.sleep(cfg.orphan_every)
        for name in (TABLE, PK_TABLE):
            try:
                with cutoff_ago(cfg.orphan_safety):
                    result = remove_orphan_files(catalog, name)
            except Exception as e:
                log.line(event="error", table=name, error=repr(e)[:400])
                continue
            log.line(event="clean", table=name, files=list(result.deleted_files))


def stream_check(
    table: Any, cfg: SoakConfig, log: Log, seen: set[tuple[str, int]], after: int
) -> int:
    """Read ``table``'s stream (consumer ``soak-reader``) up to its latest snapshot and check
    each snapshot: every checkpoint in it whole and not seen before. Plans of snapshots up to
    ``after`` (logged by a reader killed before its consumer recorded them) are skipped. The
    first plan of a stream without a consumer yet is the whole table: for the primary-key
    table, where later checkpoints overwrote and deleted keys, only its keys' uniqueness is
    checked. Returns the last snapshot checked."""
    rb = table.new_stream_read_builder().with_consumer_id(CONSUMER)
    scan, read = rb.new_scan(), rb.new_read()
    full = table.store.consumer_manager.consumer(CONSUMER) is None
    pk = bool(table.store.primary_keys)
    while True:
        plan = scan.plan()
        splits = plan.splits()
        if not splits:
            return after
        sid = plan.snapshot_id or 0
        if sid <= after:
            full = False
            continue
        rows = read.to_arrow(splits)
        groups = group_counts(rows)
        bad: list[Any] = []
        if full and pk:
            if len(set(rows["k"].to_pylist())) != rows.num_rows:
                bad.append(["pk", sid, rows.num_rows, "a key twice"])
            seen.update(groups)
        else:
            for (writer, n), (count, distinct) in sorted(groups.items()):
                if count != expected_in_snapshot(writer, n, cfg) or distinct != count:
                    bad.append([writer, n, count, "partial or doubled"])
                elif (writer, n) in seen:
                    bad.append([writer, n, count, "seen before"])
                seen.add((writer, n))
        log.line(
            event="snapshot",
            table=table.name,
            sid=sid,
            full=full,
            groups=[[w, n, c] for (w, n), (c, _) in sorted(groups.items())],
            bad=bad,
        )
        full = False
        after = sid


def reader_main(catalog_options: Mapping[str, str], state: Path, cfg: SoakConfig) -> None:
    """Stream both tables in turn; picks up where its log says after a restart."""
    catalog = CatalogFactory.create(dict(catalog_options))
    log = Log(state / f"{READER}.log")
    log.line(event="start", pid=os.getpid(), t=time.monotonic())
    seen, after = reader_progress(read_log(state / f"{READER}.log"))
    tables = {name: catalog.get_table(name) for name in (TABLE, PK_TABLE)}
    while True:
        for name, table in tables.items():
            try:
                after[name] = stream_check(table, cfg, log, seen[name], after.get(name, 0))
            except Exception as e:
                log.line(event="error", table=name, error=repr(e)[:400])
        time.sleep(0.5)


def reader_progress(
    log: list[dict[str, Any]],
) -> tuple[dict[str, set[tuple[str, int]]], dict[str, int]]:
    """Per table, the checkpoints the reader's log says it saw and its last snapshot."""
    seen: dict[str, set[tuple[str, int]]] = defaultdict(set)
    after: dict[str, int] = {}
    for e in log:
        if e["event"] == "snapshot":
            seen[e["table"]].update((w, n) for w, n, _ in e["groups"])
            after[e["table"]] = max(after.get(e["table"], 0), e["sid"] or 0)
    return seen, after


# --- the driver ----------------------------------------------------------------------------


@dataclass
class SoakResult:
    cfg: SoakConfig
    acked: dict[str, int]
    """Per writer: the last checkpoint recorded (stream writers), checkpoints acked (Spark)."""
    kills: dict[str, int]
    crashes: dict[str, int]
    """Children that exited on their own (restarted like killed ones)."""
    compactions: int
    latest_snapshot: dict[str, int]
    snapshot_files: dict[str, int]
    errors: dict[str, int]
    error_samples: dict[str, str] = field(default_factory=dict)
    """Per role, its last error (printed under the summary)."""
    final_rows: dict[str, int] = field(default_factory=dict)
    lost: list[Any] = field(default_factory=list)
    duplicated: list[Any] = field(default_factory=list)
    unexpected: list[Any] = field(default_factory=list)
    pk_mismatch: list[str] = field(default_factory=list)
    missing_files: list[str] = field(default_factory=list)
    half_expired: int = 0
    """Snapshots an expiry killed midway left without some files (allowed: see missing_files)."""
    orphans_during: Counter[str] = field(default_factory=Counter)
    orphans_at_rest: Counter[str] = field(default_factory=Counter)
    orphan_violations: list[str] = field(default_factory=list)
    """Files remove_orphan_files deleted that an acknowledged commit had added."""
    orphan_passes: int = 0
    stream_snapshots: int = 0
    stream_bad: list[Any] = field(default_factory=list)
    stream_missed: list[Any] = field(default_factory=list)
    """Checkpoints in the final table that the stream never saw."""
    java: str = "not run"
    java_mismatch: list[str] = field(default_factory=list)
    faults: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    shared_ids: dict[str, list[str]] = field(default_factory=dict)
    diagnoses: list[str] = field(default_factory=list)
    read_error: str | None = None
    cpu_seconds: float = 0.0
    elapsed: float = 0.0
    work_dir: str = ""

    @property
    def commits(self) -> int:
        return sum(self.acked.values())

    @property
    def expired(self) -> int:
        return sum(self.latest_snapshot[t] - self.snapshot_files[t] for t in self.latest_snapshot)

    @property
    def ok(self) -> bool:
        bad = (
            self.lost
            or self.duplicated
            or self.unexpected
            or self.pk_mismatch
            or self.missing_files
            or self.orphan_violations
            or self.stream_bad
            or self.stream_missed
            or self.java_mismatch
            or self.read_error
        )
        return not bad

    def summary(self) -> str:
        cfg = self.cfg
        acked = ", ".join(f"{w} {self.acked[w]}" for w in self.acked)
        kills = ",".join(f"{k}={v}" for k, v in sorted(self.kills.items()) if v)
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items()))
        errors = ", ".join(f"{k} {v}" for k, v in self.errors.items() if v)
        text = (
            f"{'OK' if self.ok else 'FAIL'} seed={cfg.seed} {cfg.seconds:.0f}s "
            f"(elapsed {self.elapsed:.0f}s, cpu of children but Spark's JVM "
            f"{self.cpu_seconds:.0f}s): "
            f"acknowledged checkpoints {self.commits} ({acked}); "
            f"kills {sum(self.kills.values())} ({kills}); crashes {sum(self.crashes.values())}; "
            f"compactions {self.compactions}; snapshots expired {self.expired} (latest "
            f"{self.latest_snapshot}, half-expired left {self.half_expired}); "
            f"errors {{{errors}}}; "
            f"faults {sum(self.faults.values())} of {self.requests} requests ({faults}); "
            f"orphan passes {self.orphan_passes}, deleted during {dict(self.orphans_during)}, "
            f"at rest {dict(self.orphans_at_rest)}; stream checked {self.stream_snapshots} "
            f"snapshots; final rows {self.final_rows}; java {self.java}; "
            f"lost {self.lost}, duplicated {self.duplicated}"
        )
        for name in (
            "unexpected",
            "pk_mismatch",
            "missing_files",
            "orphan_violations",
            "stream_bad",
            "stream_missed",
            "java_mismatch",
            "read_error",
        ):
            value = getattr(self, name)
            if value:
                text += f", {name.replace('_', ' ')} {value}"
        return text


@dataclass
class _Child:
    role: str
    args: list[str]
    stderr: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.stderr.open("ab") as err:
            # env: this process's, PYTHONPATH included, so children import the same package;
            # a session of its own, so a kill takes its whole group (the Spark JVM too)
            self.process = subprocess.Popen(
                [sys.executable, str(SCRIPT), *self.args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=dict(os.environ),
                start_new_session=True,
            )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait()
            with contextlib.suppress(ProcessLookupError):  # a JVM that outlived its driver
                os.killpg(self.process.pid, signal.SIGKILL)


def _children(catalog_options: Mapping[str, str], state: Path, cfg: SoakConfig) -> list[_Child]:
    common = [
        "--catalog",
        json.dumps(dict(catalog_options)),
        "--state",
        str(state),
        "--config",
        json.dumps(dataclasses.asdict(cfg)),
    ]
    roles = [r for r in ROLES if cfg.spark or r != SPARK]
    return [_Child(role, [role, *common], state / f"{role}.err") for role in roles]


def _wait_for_kill(children: list[_Child], until: float, crashes: dict[str, int]) -> None:
    """Sleep until ``until``, restarting a child that died on its own (counted apart)."""
    while (left := until - time.monotonic()) > 0:
        time.sleep(min(0.2, left))
        for child in children:
            if child.process is not None and child.process.poll() is not None:
                crashes[child.role] += 1
                child.start()


def create_tables(catalog: Any, cfg: SoakConfig) -> None:
    catalog.create_database("db", ignore_if_exists=True)
    options = table_options(cfg)
    catalog.create_table(
        TABLE, Schema.from_pyarrow_schema(SCHEMA, options={"bucket": "-1", **options})
    )
    catalog.create_table(
        PK_TABLE,
        Schema.from_pyarrow_schema(
            PK_SCHEMA, primary_keys=["k"], options={"bucket": "2", **options}
        ),
    )
    for name in (TABLE, PK_TABLE):
        # the reader's consumer from the first snapshot on: expiry keeps what it has not read
        catalog.get_table(name).store.consumer_manager.reset_consumer(CONSUMER, Consumer(1))


def run_soak(
    catalog_options: Mapping[str, str] | str,
    cfg: SoakConfig,
    state_dir: str | Path | None = None,
    child_options: Mapping[str, str] | None = None,
    proxy: Any = None,
) -> SoakResult:
    """One soak run on fresh tables of the warehouse in ``catalog_options`` (a path or the
    catalog's options; the children use ``child_options`` when given: the fault proxy's).
    State and logs go to ``state_dir`` (a new temporary directory when None, kept)."""
    options = (
        {"warehouse": catalog_options} if isinstance(catalog_options, str) else catalog_options
    )
    state = Path(state_dir) if state_dir is not None else Path(tempfile.mkdtemp(prefix="soak-"))
    state.mkdir(parents=True, exist_ok=True)
    catalog = CatalogFactory.create(dict(options))
    create_tables(catalog, cfg)
    rng = random.Random(cfg.seed)
    children = _children(child_options or options, state, cfg)
    victims = [c for c in children if c.role in KILLABLE and (cfg.kill_spark or c.role != SPARK)]
    kills: dict[str, int] = defaultdict(int)
    crashes: dict[str, int] = defaultdict(int)
    began = time.monotonic()
    try:
        for child in children:
            child.start()
        deadline = time.monotonic() + cfg.seconds
        while True:
            at = time.monotonic() + rng.uniform(*cfg.kill_every)
            if at >= deadline:
                _wait_for_kill(children, deadline, crashes)
                break
            _wait_for_kill(children, at, crashes)
            victim = rng.choice(victims)
            victim.kill()
            kills[victim.role] += 1
            victim.start()
    finally:
        for child in children:
            child.kill()
    if proxy is not None:
        proxy.rate = 0.0  # the checks read through moto directly; the count stops here
    result = _verify(catalog, options, state, cfg, kills, crashes)
    if proxy is not None:
        result.faults = dict(proxy.by_kind())
        result.requests = sum(proxy.requests.values())
    result.elapsed = time.monotonic() - began
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result.cpu_seconds = usage.ru_utime + usage.ru_stime
    return result


def _verify(
    catalog: Any,
    options: Mapping[str, str],
    state: Path,
    cfg: SoakConfig,
    kills: dict[str, int],
    crashes: dict[str, int],
) -> SoakResult:
    logs = {role: read_log(state / f"{role}.log") for role in ROLES}
    tables = {name: catalog.get_table(name) for name in (TABLE, PK_TABLE)}
    spark_acked = {e["n"] for e in logs[SPARK] if e["event"] == "commit"}
    result = SoakResult(
        cfg=cfg,
        acked={
            **{w: recorded(state / f"{w}.n") for w in STREAM_WRITERS},
            SPARK: len(spark_acked),
        },
        kills={r: kills[r] for r in KILLABLE},
        crashes=dict(crashes),
        compactions=recorded(state / "compactions.n"),
        latest_snapshot={n: t.snapshot_manager.latest_id() or 0 for n, t in tables.items()},
        snapshot_files={n: len(t.snapshot_manager.list_ids()) for n, t in tables.items()},
        errors={
            f"{r}{label}": sum(1 for e in logs[r] if e["event"] == event)
            for r in ROLES
            for event, label in ERROR_EVENTS.items()
        },
        error_samples={
            f"{r}{ERROR_EVENTS[e['event']]}": e["error"][:300]
            for r in ROLES
            for e in logs[r]
            if e["event"] in ERROR_EVENTS
        },
        shared_ids=_shared_ids(logs),
        work_dir=str(state),
        orphan_passes=sum(1 for e in logs[ORPHANS] if e["event"] == "clean") // 2,
    )
    try:
        before = {name: _read_all(t) for name, t in tables.items()}
    except Exception as e:
        result.read_error = repr(e)[:400]
        return result
    result.final_rows = {name: rows.num_rows for name, rows in before.items()}
    _check_append(result, before[TABLE], logs, state)
    _check_pk(result, before[PK_TABLE])
    _check_stream(result, catalog, state, logs, before)
    for table in tables.values():
        bad, half = missing_files(table)
        result.missing_files += bad
        result.half_expired += half
    owners = _attempt_files(logs)
    for entry in logs[ORPHANS]:
        if entry["event"] == "clean":
            _classify(entry["files"], owners, result.orphans_during, result.orphan_violations)
    for name in tables:
        with cutoff_ago(-1.0):  # everything older than a second from now
            deleted = remove_orphan_files(catalog, name).deleted_files
        _classify(deleted, owners, result.orphans_at_rest, result.orphan_violations)
    for name, table in tables.items():
        result.missing_files += [f"after the clean: {m}" for m in missing_files(table)[0]]
        after = _read_all(catalog.get_table(name))
        if _sorted(after) != _sorted(before[name]):
            result.read_error = f"{name}: the rows changed when orphans were removed at rest"
    if cfg.java:
        _check_java(result, options, before)
    return result


def _read_all(table: Any) -> pa.Table:
    rb = table.new_read_builder()
    rows: pa.Table = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return rows


def _sorted(rows: pa.Table) -> pa.Table:
    keys = [(name, "ascending") for name in rows.column_names]
    return rows.sort_by(keys)


def _check_append(
    result: SoakResult, rows: pa.Table, logs: Mapping[str, list[dict[str, Any]]], state: Path
) -> None:
    """Append writer: checkpoints 1..recorded once each, recorded + 1 whole or absent. Spark:
    each acknowledged n once, each begun and unacknowledged n whole or absent."""
    counts = group_counts(rows)
    rows_per = result.cfg.rows
    last = result.acked[APPEND]
    spark_acked = {e["n"] for e in logs[SPARK] if e["event"] == "commit"}
    spark_begun = {e["n"] for e in logs[SPARK] if e["event"] == "begin"}
    spark_begun |= set(range(1, recorded(state / f"{SPARK}.begun") + 1))
    sure = [(APPEND, n) for n in range(1, last + 1)] + [(SPARK, n) for n in spark_acked]
    maybe = [(APPEND, last + 1)] + [(SPARK, n) for n in spark_begun - spark_acked]
    for key in sure:
        found, distinct = counts.pop(key, (0, 0))
        if found > rows_per or distinct < found:
            result.duplicated.append((*key, found))
        elif found < rows_per:
            result.lost.append((*key, found))
    for key in maybe:
        found, distinct = counts.pop(key, (0, 0))
        if found > rows_per or distinct < found:
            result.duplicated.append((*key, found))
        elif found not in (0, rows_per):
            result.unexpected.append((*key, found))
    result.unexpected += [(w, n, found) for (w, n), (found, _) in sorted(counts.items())]
    result.diagnoses = [_diagnose("lost", n, logs) for w, n, _ in result.lost if w == APPEND] + [
        _diagnose("duplicated", n, logs) for w, n, _ in result.duplicated if w == APPEND
    ]


def _check_pk(result: SoakResult, rows: pa.Table) -> None:
    """The primary-key table equals the model of each writer's acknowledged checkpoints, with
    the one in flight applied or not."""
    keys = rows["k"].to_pylist()
    if len(set(keys)) != len(keys):
        dups = [k for k, c in Counter(keys).items() if c > 1]
        result.duplicated.append(("pk keys", dups[:10]))
    actual = dict(zip(keys, rows["n"].to_pylist(), strict=True))
    for writer, prefix in ((UPSERT, "u-"), (DELETE, "d-")):
        mine = {k: n for k, n in actual.items() if k.startswith(prefix)}
        last = result.acked[writer]
        models = [pk_model(writer, m, result.cfg.pk_rows) for m in (last, last + 1)]
        if mine not in models:
            want = models[0]
            diff = sorted(set(mine.items()) ^ set(want.items()))[:10]
            result.pk_mismatch.append(
                f"{writer} (acknowledged {last}): {len(mine)} keys, model {len(want)}; "
                f"differing (key, n) {diff}"
            )


def _check_stream(
    result: SoakResult,
    catalog: Any,
    state: Path,
    logs: Mapping[str, list[dict[str, Any]]],
    final: Mapping[str, pa.Table],
) -> None:
    """Drain the reader's consumer, then: no snapshot it saw was partial or doubled, and every
    checkpoint of the final tables went through the stream (the PK table's deleted keys are
    no loss: their checkpoint's insert was seen)."""
    log = Log(state / f"{READER}.log")
    seen, after = reader_progress(logs[READER])
    for name in (TABLE, PK_TABLE):
        try:
            stream_check(catalog.get_table(name), result.cfg, log, seen[name], after.get(name, 0))
        except Exception as e:
            result.stream_bad.append(f"{name}: drain failed: {e!r}"[:400])
    entries = read_log(state / f"{READER}.log")
    result.stream_snapshots = sum(1 for e in entries if e["event"] == "snapshot")
    result.stream_bad += [b for e in entries if e["event"] == "snapshot" for b in e["bad"]]
    for name in (TABLE, PK_TABLE):
        present = set(group_counts(final[name]))
        result.stream_missed += sorted(present - seen[name])[:20]


def missing_files(table: Any) -> tuple[list[str], int]:
    """The files a snapshot of ``table`` names (manifest lists, manifests, live data files)
    that are not in the table's directories, as (violations, half-expired snapshots).

    An expiry killed between deleting files and deleting snapshot files leaves its expired
    snapshots behind without some of their files (expire.py's crash-safe order); a later
    expiry removes them. Those are allowed: a run of the oldest snapshots, missing only files
    that the first complete snapshot after them no longer uses. Anything else, or an incomplete
    latest snapshot, is a violation."""
    store = table.store
    clean = OrphanFilesClean(store, 0, dry_run=True, parallelism=2)
    listed = {name for root in clean.listing_roots() for name, _ in clean.list_root(*root)}
    sm, manifests = store.snapshot_manager, store.manifest_io
    lacking: dict[int, list[str]] = {}
    live: dict[int, set[str]] = {}
    for sid in sm.list_ids():
        snapshot = sm.snapshot_if_exists(sid)
        if snapshot is None:
            continue
        try:
            metas = manifests.data_manifests(snapshot)
            files = {e.file.file_name for e in manifests.live_entries(snapshot)}
        except Exception as e:  # its manifests are gone: expired, or worse
            lacking[sid] = [f"unreadable: {e!r}"[:300]]
            continue
        names = [snapshot.base_manifest_list, snapshot.delta_manifest_list]
        names += [m.file_name for m in metas] + sorted(files)
        lacking[sid] = [n for n in names if n not in listed]
        live[sid] = files
    ids = sorted(lacking)
    complete = len(ids)
    while complete > 0 and not lacking[ids[complete - 1]]:
        complete -= 1
    if complete == len(ids):
        return [
            f"{table.name}: latest snapshot {ids[-1]} lacks {lacking[ids[-1]]}"
        ] if ids else [], 0
    first = live[ids[complete]]
    bad = [
        f"{table.name} snapshot {sid} (before the complete {ids[complete]}): {name}"
        for sid in ids[:complete]
        for name in lacking[sid]
        if name in first
    ]
    return bad, sum(1 for sid in ids[:complete] if lacking[sid])


def _attempt_files(logs: Mapping[str, list[dict[str, Any]]]) -> dict[str, str]:
    """Data file name -> how its attempt ended: ``acked`` (its commit made a snapshot),
    ``replayed`` (its commit found the checkpoint committed by a killed attempt), ``failed``
    (an error) or ``killed`` (no line after it)."""
    out: dict[str, str] = {}
    for role in STREAM_WRITERS:
        pending: list[str] | None = None
        for e in logs[role]:
            if e["event"] == "attempt":
                if pending is not None:
                    out.update(dict.fromkeys(pending, "killed"))
                pending = e["files"]
            elif pending is not None and e["event"] in ("commit", "error", "start"):
                if e["event"] == "commit":
                    how = "acked" if e["ids"] else "replayed"
                else:
                    how = "failed" if e["event"] == "error" else "killed"
                out.update(dict.fromkeys(pending, how))
                pending = None
        if pending is not None:
            out.update(dict.fromkeys(pending, "killed"))
    return out


def _classify(
    deleted: Any, owners: Mapping[str, str], counts: Counter[str], violations: list[str]
) -> None:
    """Count deleted files by how the attempt that wrote them ended; one an acknowledged
    commit added is a violation. Files no writer logged are metadata (manifests, snapshots'
    temp files) or data files of the compactor, the Spark job or an attempt killed before it
    logged."""
    for path in deleted:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        how = owners.get(name)
        if how is None:
            how = "data, unlogged" if "/bucket-" in path else "metadata"
        counts[how] += 1
        if how == "acked":
            violations.append(path)


def _check_java(
    result: SoakResult, options: Mapping[str, str], final: Mapping[str, pa.Table]
) -> None:
    """Java Paimon 1.4.2 (tests/interop/java_oracle.py, one JVM) reads both tables equal."""
    sys.path.insert(0, str(ROOT / "tests" / "interop"))
    from java_oracle import JavaOracle, canonical_rows, sorted_rows

    java_dir = ROOT / ".cache" / "java"
    oracle = JavaOracle(java_dir / "paimon-bundle-1.4.2.jar", java_dir / "classes")
    try:
        warehouse = options["warehouse"]
        if warehouse.startswith("s3://"):
            oracle.set_catalog_options(
                warehouse, {k: v for k, v in options.items() if k != "warehouse"}
            )
        counts = []
        for name, rows in final.items():
            db, table = name.split(".")
            java = oracle.read_table(warehouse, db, table)
            ours = sorted_rows(canonical_rows(rows))
            if sorted_rows(java.rows) != ours:
                result.java_mismatch.append(
                    f"{name}: java read {len(java.rows)} rows, ours {len(ours)}"
                )
            counts.append(f"{name} {len(java.rows)} rows")
        verdict = "equal" if not result.java_mismatch else "DIFFERENT"
        result.java = f"{verdict} ({', '.join(counts)})"
    finally:
        oracle.close()


def group_counts(rows: pa.Table) -> dict[tuple[str, int], tuple[int, int]]:
    """(writer, n) -> (rows, distinct values of ``j`` or ``k``)."""
    part = "j" if "j" in rows.column_names else "k"
    keyed = pa.table({"w": rows["writer"], "n": rows["n"], "x": rows[part]})
    grouped = keyed.group_by(["w", "n"]).aggregate([("x", "count"), ("x", "count_distinct")])
    return {
        (w, n): (c, d)
        for w, n, c, d in zip(
            grouped["w"].to_pylist(),
            grouped["n"].to_pylist(),
            grouped["x_count"].to_pylist(),
            grouped["x_count_distinct"].to_pylist(),
            strict=True,
        )
    }


def _shared_ids(logs: Mapping[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Snapshot ids returned to more than one commit (role:n each): one of them was a ghost."""
    claims: dict[str, list[str]] = defaultdict(list)
    for role, log in logs.items():
        for e in log:
            if e["event"] == "commit" and "ids" in e:
                table = e.get("table") or TABLE_OF.get(role, "?")
                for sid in e["ids"]:
                    claims[f"{table}:{sid}"].append(f"{role}:{e.get('n', '-')}")
    return {sid: who for sid, who in sorted(claims.items()) if len(who) > 1}


def _diagnose(kind: str, n: int, logs: Mapping[str, list[dict[str, Any]]]) -> str:
    """What the append writer's log says about checkpoint n, found ``kind``."""
    parts = []
    for e in logs[APPEND]:
        if e.get("n") != n:
            continue
        if e["event"] == "start":
            parts.append(f"restarted at it (t={e['t']:.2f})")
        elif e["event"] == "error":
            parts.append(f"error {e['error']}")
        elif e["event"] == "commit":
            parts.append(
                f"committed t={e['start']:.2f}..{e['end']:.2f}, ids {e['ids']}; right after: "
                f"earliest {e['earliest']}, latest {e['latest']}, owners {e['owners']}"
            )
    return f"{kind} {APPEND} n={n}: {' | '.join(parts) or 'no log line'}"


# --- the command line ----------------------------------------------------------------------


@contextmanager
def _warehouse(
    s3: bool, seed: int, fault_rate: float, state: Path
) -> Iterator[tuple[dict[str, str], dict[str, str], Any]]:
    """(the driver's catalog options, the children's, the fault proxy or None); a local
    warehouse lies in the state directory, kept with it."""
    if not s3:
        options = {"warehouse": str(state / "wh")}
        yield options, options, None
        return
    sys.path.insert(0, str(ROOT))  # the repository root, for tests.s3_server
    from tests import fault_s3_proxy
    from tests.s3_server import S3Server

    server = S3Server.start()
    try:
        # a delayed answer is held 8 s: past the 6 s request timeout proxy.options sets, which
        # leaves room for moto's own answers on a loaded machine
        _, proxy = fault_s3_proxy.start(server.endpoint, seed=seed, rate=fault_rate, delay=8.0)
        try:
            direct = {"warehouse": f"s3://{server.new_bucket()}/wh", **server.options()}
            yield direct, proxy.options(direct), proxy
        finally:
            proxy.stop()
    finally:
        server.stop()


def soak(
    cfg: SoakConfig, s3: bool = False, fault_rate: float = 0.05, keep: bool = False
) -> SoakResult:
    """One run on a new warehouse (local, or moto's S3 behind the fault proxy)."""
    state = Path(tempfile.mkdtemp(prefix="soak-state-"))
    with _warehouse(s3, cfg.seed, fault_rate, state) as (direct, children, proxy):
        result = run_soak(direct, cfg, state, children, proxy)
    if result.ok and not keep:
        shutil.rmtree(state, ignore_errors=True)
    return result


def _soak(args: argparse.Namespace) -> int:
    """``--runs`` runs, seeds ``--seed`` + i; one summary line each, then a total."""
    base = args.seed if args.seed is not None else random.randrange(1 << 30)
    failed = 0
    for i in range(args.runs):
        cfg = SoakConfig(
            seconds=args.seconds,
            seed=base + i,
            kill_every=(args.kill_min, args.kill_max),
            rows=args.rows,
            pause=args.pause,
            spark_every=args.spark_every,
            orphan_every=args.orphan_every,
            orphan_safety=args.orphan_safety,
            retain_min=args.retain_min,
            spark=not args.no_spark,
            java=not args.no_java,
        )
        where = "s3 through the fault proxy" if args.s3 else "local disk"
        print(f"run {i + 1}/{args.runs} on {where}: {cfg}", flush=True)
        result = soak(cfg, args.s3, args.fault_rate, args.keep)
        print(result.summary(), flush=True)
        for role, error in result.error_samples.items():
            print(f"  last error of {role}: {error}", flush=True)
        for d in result.diagnoses:
            print(f"  {d}", flush=True)
        for sid, who in result.shared_ids.items():
            print(f"  snapshot id {sid} returned to {', '.join(who)}", flush=True)
        if not result.ok or args.keep:
            print(f"  state: {result.work_dir}", flush=True)
        failed += not result.ok
    print(f"total: {args.runs} runs, {failed} failed", flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("soak", help="one soak run; prints its summary line")
    run.add_argument("--seconds", type=float, default=1200)
    run.add_argument("--seed", type=int, default=None, help="of the first run (then +1 each)")
    run.add_argument("--runs", type=int, default=1)
    run.add_argument("--retain-min", type=int, default=1, help="snapshot.num-retained.min")
    run.add_argument("--kill-min", type=float, default=30.0, help="seconds between kills, from")
    run.add_argument("--kill-max", type=float, default=90.0, help="seconds between kills, to")
    run.add_argument("--rows", type=int, default=50, help="rows per append checkpoint")
    run.add_argument("--pause", type=float, default=0.0, help="seconds between checkpoints")
    run.add_argument("--spark-every", type=float, default=60.0)
    run.add_argument("--orphan-every", type=float, default=120.0)
    run.add_argument(
        "--orphan-safety",
        type=float,
        default=150.0,
        help="seconds: longer than any attempt (a loaded machine's first Spark write takes 45 s)",
    )
    run.add_argument("--s3", action="store_true", help="moto's S3 behind the fault proxy")
    run.add_argument("--fault-rate", type=float, default=0.05, help="per request, every class")
    run.add_argument("--no-spark", action="store_true")
    run.add_argument("--no-java", action="store_true")
    run.add_argument("--keep", action="store_true", help="keep the state directory")
    for role in ROLES:
        child = sub.add_parser(role)
        child.add_argument("--catalog", required=True, help="the catalog options as JSON")
        child.add_argument("--state", required=True)
        child.add_argument("--config", required=True, help="the SoakConfig as JSON")
    args = parser.parse_args(argv)
    if args.command == "soak":
        return _soak(args)
    options = json.loads(args.catalog)
    state, cfg = Path(args.state), SoakConfig.from_json(args.config)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("paimon_pyspark.commit.file_store_commit").setLevel(logging.INFO)
    mains: dict[str, Callable[[], None]] = {
        SPARK: lambda: spark_main(options, state, cfg),
        COMPACTOR: lambda: compactor_main(options, state, cfg),
        ORPHANS: lambda: orphans_main(options, state, cfg),
        READER: lambda: reader_main(options, state, cfg),
    }
    mains.get(args.command, lambda: stream_writer_main(options, state, args.command, cfg))()
    return 0


if __name__ == "__main__":
    sys.exit(main())
