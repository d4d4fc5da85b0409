"""Soak run for issue 36: acknowledged commits must stay, replayed ones must not double, while
snapshots expire within a second under concurrent writers, a compactor and random SIGKILLs.

Three writer processes commit checkpoints n = 1, 2, ... of 50 rows each to one unpartitioned
append table (``bucket = -1``) as commit users ``writer-<w>``, and record n (fsynced) once
``commit`` returned; a fourth compacts in a loop. The driver SIGKILLs one of the four every few
seconds and restarts it: a writer resumes at its recorded n + 1, so the checkpoint that was in
flight is either in the table already (the commit user's identifier makes the replay a no-op)
or committed now. At the end the whole table is read: every recorded checkpoint must be there
exactly once, and nothing past recorded + 1.

Every commit is logged (``<state>/<role>.log``, one JSON line: n, the returned snapshot ids,
monotonic start/end, the earliest and latest snapshot right after, and who owns each returned
id then), so a loss can be traced to the snapshot that acknowledged it.

    python tests/soak/soak_run.py soak --seconds 120 --runs 10 --retain-min 5 [--s3]
    python tests/soak/soak_run.py writer --catalog JSON --state DIR --writer W   # a child
    python tests/soak/soak_run.py compactor --catalog JSON --state DIR           # a child
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.procedures import compact

SCRIPT = Path(__file__).resolve()
TABLE = "db.t"
WRITERS = 3
ROWS = 50
COMPACTOR = "compactor"
SCHEMA = pa.schema(
    [("writer", pa.string()), ("n", pa.int64()), ("j", pa.int64()), ("payload", pa.string())]
)


def table_options(retain_min: int) -> dict[str, str]:
    """Snapshots expire after a second, so a slow commit attempt can outlive its base."""
    return {
        "bucket": "-1",
        "snapshot.num-retained.min": str(retain_min),
        "snapshot.num-retained.max": "20",
        "snapshot.time-retained": "1 s",
    }


def checkpoint_rows(w: int, n: int) -> pa.Table:
    js = range(ROWS)
    return pa.table(
        {
            "writer": [f"writer-{w}"] * ROWS,
            "n": [n] * ROWS,
            "j": list(js),
            "payload": [f"{w}:{n}:{j}:{'x' * 16}" for j in js],
        },
        schema=SCHEMA,
    )


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
    lines = path.read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


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


def writer_main(catalog_options: Mapping[str, str], state: Path, w: int) -> None:
    """Commit checkpoints from the recorded one + 1 on, forever (the driver kills us)."""
    table = CatalogFactory.create(dict(catalog_options)).get_table(TABLE)
    builder = table.new_stream_write_builder(f"writer-{w}")
    progress = state / f"writer-{w}.n"
    log = Log(state / f"writer-{w}.log")
    n = recorded(progress) + 1
    log.line(event="start", pid=os.getpid(), n=n, t=time.monotonic())
    write, commit = builder.new_write(), builder.new_commit()
    while True:
        start = time.monotonic()
        try:
            write.write_arrow(checkpoint_rows(w, n))
            ids = commit.commit(write.prepare_commit(n), n)
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


def compactor_main(catalog_options: Mapping[str, str], state: Path) -> None:
    """Compact the table in a loop; counts the COMPACT snapshots it made across restarts."""
    catalog = CatalogFactory.create(dict(catalog_options))
    table = catalog.get_table(TABLE)
    count = state / "compactions.n"
    log = Log(state / f"{COMPACTOR}.log")
    done = recorded(count)
    log.line(event="start", pid=os.getpid(), t=time.monotonic())
    while True:
        start = time.monotonic()
        try:
            sid = compact(catalog, TABLE)
        except Exception as e:  # a writer or an expiry raced the plan: plan again
            log.line(event="error", start=start, end=time.monotonic(), error=repr(e)[:400])
            time.sleep(0.2)
            continue
        if sid is not None:
            ids = [sid]
            log.line(
                event="commit", ids=ids, start=start, end=time.monotonic(), **_after(table, ids)
            )
            done += 1
            record(count, done)
        time.sleep(0.1)


# --- the driver ----------------------------------------------------------------------------


@dataclass
class SoakResult:
    seed: int
    seconds: float
    retain_min: int
    recorded: dict[int, int]
    """Per writer, the last checkpoint it recorded as committed."""
    kills: dict[str, int]
    crashes: dict[str, int]
    """Children that exited on their own (restarted like killed ones)."""
    compactions: int
    latest_snapshot: int
    snapshot_files: int
    earliest_snapshot: int
    writer_errors: int
    compactor_errors: int
    lost: list[tuple[int, int, int]] = field(default_factory=list)
    """(writer, n, rows found) of recorded checkpoints with fewer than 50 rows."""
    duplicated: list[tuple[int, int, int]] = field(default_factory=list)
    """(writer, n, rows found) of checkpoints with more than 50 rows or a row twice."""
    unexpected: list[tuple[int, int, int]] = field(default_factory=list)
    """(writer, n, rows found) past recorded + 1, or recorded + 1 with neither 0 nor 50 rows."""
    shared_ids: dict[int, list[str]] = field(default_factory=dict)
    """Snapshot ids returned to more than one commit (role:n each): one of them was a ghost."""
    strays: list[str] = field(default_factory=list)
    """Snapshot files off the chain ending at the latest (id:user:identifier): ghosts."""
    diagnoses: list[str] = field(default_factory=list)
    withdrawn: int = 0
    """Commits that found their snapshot published at an expired id and committed again."""
    base_expired: int = 0
    """Commit attempts that saw their base snapshot expire before publishing."""
    read_error: str | None = None
    work_dir: str = ""

    @property
    def total(self) -> int:
        return sum(self.recorded.values())

    @property
    def expired(self) -> int:
        return self.latest_snapshot - self.snapshot_files

    @property
    def ok(self) -> bool:
        bad = self.lost or self.duplicated or self.unexpected or self.read_error
        return not bad

    def summary(self) -> str:
        per = "/".join(str(self.recorded[w]) for w in sorted(self.recorded))
        kills = ",".join(f"{k}={v}" for k, v in sorted(self.kills.items()) if v)
        crashes = sum(self.crashes.values())
        verdict = "OK" if self.ok else "FAIL"
        text = (
            f"{verdict} seed={self.seed} retain-min={self.retain_min} {self.seconds:.0f}s: "
            f"checkpoints {per} = {self.total}, kills {sum(self.kills.values())} ({kills}), "
            f"crashes {crashes}, compactions {self.compactions}, snapshots expired "
            f"{self.expired} (latest {self.latest_snapshot}, earliest {self.earliest_snapshot}, "
            f"{self.snapshot_files} files), errors writers {self.writer_errors} compactor "
            f"{self.compactor_errors}, shared ids {len(self.shared_ids)}, stray snapshots "
            f"{self.strays}, withdrawn {self.withdrawn}, base expired {self.base_expired}, "
            f"lost {self.lost}, duplicated {self.duplicated}"
        )
        if self.unexpected:
            text += f", unexpected {self.unexpected}"
        if self.read_error:
            text += f", read error {self.read_error}"
        return text


@dataclass
class _Child:
    role: str
    args: list[str]
    stderr: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.stderr.open("ab") as err:
            # env: this process's, PYTHONPATH included, so children import the same package
            self.process = subprocess.Popen(
                [sys.executable, str(SCRIPT), *self.args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=dict(os.environ),
            )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()


def _children(catalog_options: Mapping[str, str], state: Path) -> list[_Child]:
    common = ["--catalog", json.dumps(dict(catalog_options)), "--state", str(state)]
    writers = [
        _Child(f"writer-{w}", ["writer", *common, "--writer", str(w)], state / f"writer-{w}.err")
        for w in range(WRITERS)
    ]
    return [*writers, _Child(COMPACTOR, [COMPACTOR, *common], state / f"{COMPACTOR}.err")]


def _wait_for_kill(children: list[_Child], until: float, crashes: dict[str, int]) -> None:
    """Sleep until ``until``, restarting a child that died on its own (counted apart)."""
    while (left := until - time.monotonic()) > 0:
        time.sleep(min(0.2, left))
        for child in children:
            if child.process is not None and child.process.poll() is not None:
                crashes[child.role] += 1
                child.start()


def run_soak(
    catalog_options: Mapping[str, str] | str,
    seconds: float,
    retain_min: int,
    seed: int,
    kill_every: tuple[float, float] = (3.0, 8.0),
    state_dir: str | Path | None = None,
) -> SoakResult:
    """One soak run on a fresh table ``db.t`` of the warehouse in ``catalog_options`` (a path
    or the catalog's options); the writers' state and logs go to ``state_dir`` (a new
    temporary directory when None, kept for the logs). Every child is killed on return."""
    options = (
        {"warehouse": catalog_options} if isinstance(catalog_options, str) else catalog_options
    )
    state = Path(state_dir) if state_dir is not None else Path(tempfile.mkdtemp(prefix="soak-"))
    state.mkdir(parents=True, exist_ok=True)
    catalog = CatalogFactory.create(dict(options))
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        TABLE, Schema.from_pyarrow_schema(SCHEMA, options=table_options(retain_min))
    )
    rng = random.Random(seed)
    children = _children(options, state)
    kills: dict[str, int] = defaultdict(int)
    crashes: dict[str, int] = defaultdict(int)
    try:
        for child in children:
            child.start()
        deadline = time.monotonic() + seconds
        while True:
            at = time.monotonic() + rng.uniform(*kill_every)
            if at >= deadline:
                _wait_for_kill(children, deadline, crashes)
                break
            _wait_for_kill(children, at, crashes)
            victim = rng.choice(children)
            victim.kill()
            kills[victim.role] += 1
            victim.start()
    finally:
        for child in children:
            child.kill()
    return _verify(catalog.get_table(TABLE), state, seed, seconds, retain_min, kills, crashes)


def _verify(
    table: Any,
    state: Path,
    seed: int,
    seconds: float,
    retain_min: int,
    kills: dict[str, int],
    crashes: dict[str, int],
) -> SoakResult:
    sm = table.snapshot_manager
    ids = sm.list_ids()
    logs = {c: read_log(state / f"{c}.log") for c in [*_writer_roles(), COMPACTOR]}
    result = SoakResult(
        seed=seed,
        seconds=seconds,
        retain_min=retain_min,
        recorded={w: recorded(state / f"writer-{w}.n") for w in range(WRITERS)},
        kills={c: kills[c] for c in [*_writer_roles(), COMPACTOR]},
        crashes=dict(crashes),
        compactions=recorded(state / "compactions.n"),
        latest_snapshot=sm.latest_id() or 0,
        snapshot_files=len(ids),
        earliest_snapshot=sm.earliest_id() or 0,
        writer_errors=sum(_errors(logs[r]) for r in _writer_roles()),
        compactor_errors=_errors(logs[COMPACTOR]),
        shared_ids=_shared_ids(logs),
        strays=_strays(sm, ids),
        work_dir=str(state),
        withdrawn=_log_lines(state, WITHDRAWN),
        base_expired=_log_lines(state, BASE_EXPIRED),
    )
    try:
        rb = table.new_read_builder()
        rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    except Exception as e:
        result.read_error = repr(e)[:400]
        return result
    counts = _counts(rows)
    for w in range(WRITERS):
        last = result.recorded[w]
        for n in range(1, last + 1):
            found, distinct = counts.pop((w, n), (0, 0))
            if found > ROWS or distinct < found:
                result.duplicated.append((w, n, found))
            elif found < ROWS:
                result.lost.append((w, n, found))
        found, distinct = counts.pop((w, last + 1), (0, 0))
        if found > ROWS or distinct < found:
            result.duplicated.append((w, last + 1, found))
        elif found not in (0, ROWS):
            result.unexpected.append((w, last + 1, found))
    result.unexpected += [(w, n, found) for (w, n), (found, _) in sorted(counts.items())]
    result.diagnoses = [_diagnose("lost", w, n, logs, sm) for w, n, _ in result.lost] + [
        _diagnose("duplicated", w, n, logs, sm) for w, n, _ in result.duplicated
    ]
    return result


WITHDRAWN = "withdrawn, committing again on the newest"
BASE_EXPIRED = "expired while the commit ran"
"""What the commit logs (commit/file_store_commit.py) when it meets each case of issue 36."""


def _log_lines(state: Path, text: str) -> int:
    """Lines of the children's stderr (their logging) that contain ``text``."""
    return sum(
        line.count(text) for err in state.glob("*.err") for line in err.read_text().splitlines()
    )


def _writer_roles() -> list[str]:
    return [f"writer-{w}" for w in range(WRITERS)]


def _errors(log: list[dict[str, Any]]) -> int:
    return sum(1 for e in log if e["event"] == "error")


def _counts(rows: pa.Table) -> dict[tuple[int, int], tuple[int, int]]:
    """(writer, n) -> (rows, distinct j)."""
    ws = pc.cast(pc.utf8_slice_codeunits(rows["writer"], len("writer-")), pa.int64())
    keyed = pa.table({"w": ws, "n": rows["n"], "j": rows["j"]})
    grouped = keyed.group_by(["w", "n"]).aggregate([("j", "count"), ("j", "count_distinct")])
    return {
        (w, n): (c, d)
        for w, n, c, d in zip(
            grouped["w"].to_pylist(),
            grouped["n"].to_pylist(),
            grouped["j_count"].to_pylist(),
            grouped["j_count_distinct"].to_pylist(),
            strict=True,
        )
    }


def _strays(sm: Any, ids: list[int]) -> list[str]:
    """The snapshot files below the gap before the contiguous run that ends at the latest id:
    expiry deletes from the earliest up, so a file there was published after its id expired."""
    start = max(len(ids) - 1, 0)
    while start > 0 and ids[start - 1] == ids[start] - 1:
        start -= 1
    out = []
    for sid in ids[:start]:
        snapshot = sm.snapshot_if_exists(sid)
        if snapshot is not None:
            out.append(f"{sid}:{snapshot.commit_user}:{snapshot.commit_identifier}")
    return out


def _shared_ids(logs: Mapping[str, list[dict[str, Any]]]) -> dict[int, list[str]]:
    claims: dict[int, list[str]] = defaultdict(list)
    for role, log in logs.items():
        for e in log:
            if e["event"] == "commit":
                for sid in e["ids"]:
                    claims[sid].append(f"{role}:{e.get('n', '-')}")
    return {sid: who for sid, who in sorted(claims.items()) if len(who) > 1}


def _diagnose(kind: str, w: int, n: int, logs: Mapping[str, list[dict[str, Any]]], sm: Any) -> str:
    """What the logs say about checkpoint (w, n), found ``kind`` (lost or duplicated): each
    commit of it (the ids it returned, the table right after, the snapshot file with that id
    today, who else was handed that id), and each restart that resumed at it."""
    role = f"writer-{w}"
    earliest_now = sm.earliest_id() or 0
    parts = []
    for e in logs[role]:
        if e.get("n") != n:
            continue
        if e["event"] == "start":
            parts.append(f"restarted at it (t={e['t']:.2f})")
        elif e["event"] == "error":
            parts.append(f"error {e['error']}")
        else:
            parts.append(_commit_story(role, e, logs, sm, earliest_now))
    if kind == "duplicated":
        before = [e for e in logs[role] if e["event"] == "commit" and e["n"] == n - 1]
        parts += [f"n-1 returned {e['ids']} at t={e['end']:.2f}" for e in before]
    story = " | ".join(parts) or "no log line"
    return f"{kind} {role} n={n} (earliest snapshot now {earliest_now}): {story}"


def _commit_story(
    role: str, e: dict[str, Any], logs: Mapping[str, list[dict[str, Any]]], sm: Any, earliest: int
) -> str:
    text = (
        f"committed t={e['start']:.2f}..{e['end']:.2f} ({e['end'] - e['start']:.2f}s), ids "
        f"{e['ids']}; right after: earliest {e['earliest']}, latest {e['latest']}, owners "
        f"{e['owners']}"
    )
    for sid in e["ids"]:
        now = sm.snapshot_if_exists(sid)
        owner = "absent" if now is None else f"{now.commit_user}:{now.commit_identifier}"
        others = [
            f"{r}:{x.get('n', '-')}@{x['end']:.2f}"
            for r, log in logs.items()
            for x in log
            if x["event"] == "commit" and sid in x["ids"] and x is not e
        ]
        where = "below" if sid < earliest else "not below"
        text += f"; id {sid}: {where} earliest now, file now {owner}, also returned to {others}"
    return text


# --- the command line ----------------------------------------------------------------------


@contextmanager
def _s3_warehouses() -> Iterator[Any]:
    """moto's S3 server on 127.0.0.1 for the run (the tests' starter); yields a function that
    makes a new bucket's catalog options."""
    sys.path.insert(0, str(SCRIPT.parents[2]))  # the repository root, for tests.s3_server
    from tests.s3_server import S3Server

    server = S3Server.start()
    try:
        yield lambda: {"warehouse": f"s3://{server.new_bucket()}/wh", **server.options()}
    finally:
        server.stop()


def _soak(args: argparse.Namespace) -> int:
    base = args.seed if args.seed is not None else random.randrange(1 << 30)
    results: list[SoakResult] = []
    with _s3_warehouses() if args.s3 else _local_warehouses() as new_options:
        for i in range(args.runs):
            state = Path(tempfile.mkdtemp(prefix="soak-state-"))
            options = new_options()
            result = run_soak(
                options,
                args.seconds,
                args.retain_min,
                base + i,
                (args.kill_min, args.kill_max),
                state,
            )
            results.append(result)
            print(f"run {i + 1}/{args.runs}: {result.summary()}", flush=True)
            for d in result.diagnoses:
                print(f"  {d}", flush=True)
            for sid, who in result.shared_ids.items():
                print(f"  snapshot id {sid} returned to {', '.join(who)}", flush=True)
            if result.ok and not args.keep:
                shutil.rmtree(state, ignore_errors=True)
                if not args.s3:
                    shutil.rmtree(Path(options["warehouse"]).parent, ignore_errors=True)
            else:
                print(f"  state: {state}, warehouse: {options['warehouse']}", flush=True)
    failed = [r for r in results if not r.ok]
    print(
        f"total: {len(results)} runs, {len(failed)} failed; checkpoints "
        f"{sum(r.total for r in results)}, kills {sum(sum(r.kills.values()) for r in results)}, "
        f"compactions {sum(r.compactions for r in results)}, snapshots expired "
        f"{sum(r.expired for r in results)}, lost {sum(len(r.lost) for r in results)}, "
        f"duplicated {sum(len(r.duplicated) for r in results)}, unexpected "
        f"{sum(len(r.unexpected) for r in results)}, shared snapshot ids "
        f"{sum(len(r.shared_ids) for r in results)}, withdrawn "
        f"{sum(r.withdrawn for r in results)}, base expired "
        f"{sum(r.base_expired for r in results)}",
        flush=True,
    )
    return 1 if failed else 0


@contextmanager
def _local_warehouses() -> Iterator[Any]:
    yield lambda: {"warehouse": str(Path(tempfile.mkdtemp(prefix="soak-wh-")) / "wh")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    soak = sub.add_parser("soak", help="run the soak runs and print one line per run")
    soak.add_argument("--seconds", type=float, default=120)
    soak.add_argument("--runs", type=int, default=1)
    soak.add_argument("--retain-min", type=int, default=5)
    soak.add_argument("--seed", type=int, default=None, help="of the first run (then +1 each)")
    soak.add_argument("--kill-min", type=float, default=3.0, help="seconds between kills, from")
    soak.add_argument("--kill-max", type=float, default=8.0, help="seconds between kills, to")
    soak.add_argument("--s3", action="store_true", help="on moto's S3 server on 127.0.0.1")
    soak.add_argument("--keep", action="store_true", help="keep every run's files")
    for role in ("writer", COMPACTOR):
        child = sub.add_parser(role)
        child.add_argument("--catalog", required=True, help="the catalog options as JSON")
        child.add_argument("--state", required=True)
        if role == "writer":
            child.add_argument("--writer", type=int, required=True)
    args = parser.parse_args(argv)
    if args.command == "soak":
        return _soak(args)
    options = json.loads(args.catalog)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("paimon_pyspark.commit.file_store_commit").setLevel(logging.INFO)
    if args.command == "writer":
        writer_main(options, Path(args.state), args.writer)
    else:
        compactor_main(options, Path(args.state))
    return 0


if __name__ == "__main__":
    sys.exit(main())
