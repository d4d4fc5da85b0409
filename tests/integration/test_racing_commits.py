"""Many writers commit into one table at once, on S3 (moto's server) and on local disk.

Each writer is its own process, as on a cluster. Every commit must land exactly once: N
writers x M commits give N x M APPEND snapshots and every row once, with a compaction loop and
snapshot expiry (keeping 5 to 20 snapshots) running alongside in another process.

On S3 every request goes through tests/fault_s3_proxy.py, which fails about 5% of the requests
of every class in every way (5xx, SlowDown, resets before, during and after the body, hangs
past the timeout, answers lost after the request was applied). There a commit may also fail,
with a typed error, and then nothing of it may be in the table; and a reader process reads
snapshot after snapshot while the race runs: none may show a commit in part or twice. That
race makes 20 commits per writer in make test and 50 in make soak (PAIMON_FAULTY_RACE_COMMITS).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
from collections import Counter
from collections.abc import Mapping
from multiprocessing.context import ForkServerContext
from typing import Any

import pyarrow as pa
import pytest
from tests.fault_s3_proxy import CLASSES, FEW_DELAYS, KINDS, FaultProxy
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import (
    CommitConflictError,
    CommitOutcomeUnknownError,
    CorruptTableError,
    PaimonError,
)
from paimon_pyspark.procedures import compact, expire_snapshots

WRITERS = 8
COMMITS = 50
FAULTY_COMMITS = int(os.environ.get("PAIMON_FAULTY_RACE_COMMITS", "20"))
"""Commits per writer of the race on faulty S3: 20 in make test, the issue's 50 in make soak."""
SCHEMA = pa.schema([("writer", pa.int32()), ("seq", pa.int32()), ("payload", pa.string())])
RACE_OPTIONS = {
    "commit.max-retries": "1000",
    "commit.min-retry-wait": "50 ms",
    "commit.max-retry-wait": "3 s",
}


FAULT_RATE = 0.05


def _writer(
    warehouse: str, options: Mapping[str, str], writer: int, commits: int, results: Any
) -> None:
    """Commits ``commits`` pairs of rows; reports each seq's outcome: ok, or the typed error
    (anything else fails the process)."""
    outcomes: dict[int, str] = {}
    try:
        _commits(warehouse, options, writer, commits, outcomes)
    finally:  # an unexpected error too: the test reads it, then sees the exit code
        results.put((writer, outcomes))


def _commits(
    warehouse: str, options: Mapping[str, str], writer: int, commits: int, outcomes: dict[int, str]
) -> None:
    table = CatalogFactory.create({"warehouse": warehouse, **options}).get_table("db.t")
    for seq in range(commits):
        builder = table.new_batch_write_builder()
        try:
            with builder.new_write() as write:
                write.write_arrow(
                    pa.table(
                        {
                            "writer": [writer, writer],
                            "seq": [seq, -seq - 1],
                            "payload": ["x", "y"],
                        },
                        schema=SCHEMA,
                    )
                )
                builder.new_commit().commit(write.prepare_commit())
            outcomes[seq] = "ok"
        except CommitOutcomeUnknownError:
            outcomes[seq] = "unknown"
        except PaimonError as e:
            outcomes[seq] = f"failed: {type(e).__name__}: {e}"[:300]


def _maintainer(warehouse: str, options: Mapping[str, str], stop: Any, done: Any) -> None:
    """Compacts and expires in a loop while the writers run; counts its COMPACT snapshots
    (and the compactions whose outcome the store left unknown)."""
    catalog = CatalogFactory.create({"warehouse": warehouse, **options})
    compacted = unknown = 0
    while not stop.is_set():
        try:
            if compact(catalog, "db.t", compact_strategy="full") is not None:
                compacted += 1
        except CommitOutcomeUnknownError:
            unknown += 1
        except (CommitConflictError, CorruptTableError):
            pass  # a concurrent expiry removed what this plan read, or a writer raced it: again
        except PaimonError:
            pass  # a store call failed past its retries: nothing committed, the next try
        with contextlib.suppress(PaimonError):  # expiry resumes at the next round
            expire_snapshots(catalog, "db.t", retain_min=5, retain_max=20)
        time.sleep(0.3)
    done.put((compacted, unknown))


def _reader(warehouse: str, options: Mapping[str, str], stop: Any, done: Any) -> None:
    """Reads the newest snapshot again and again while the race runs: every commit's two rows
    together, none twice, as many rows as the snapshot says, never fewer than an older
    snapshot held."""
    table = CatalogFactory.create({"warehouse": warehouse, **options}).get_table("db.t")
    sm = table.snapshot_manager
    seen, checked, skipped, last_count = 0, 0, 0, 0
    problems: list[str] = []
    while not stop.is_set() and not problems:
        try:
            latest = sm.latest()
            if latest is None or latest.id == seen:
                time.sleep(0.2)
                continue
            seen = latest.id
            rb = table.copy({"scan.snapshot-id": str(seen)}).new_read_builder()
            rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        except PaimonError:
            skipped += 1  # expired under the read, or a store call failed past its retries
            continue
        pairs = Counter(zip(rows["writer"].to_pylist(), rows["seq"].to_pylist(), strict=True))
        commits = Counter((w, s if s >= 0 else -s - 1) for (w, s) in pairs)
        if any(n != 1 for n in pairs.values()) or any(n != 2 for n in commits.values()):
            problems.append(f"snapshot {seen}: a commit in part or twice: {sorted(pairs)}")
        if rows.num_rows != latest.total_record_count or rows.num_rows < last_count:
            problems.append(
                f"snapshot {seen}: {rows.num_rows} rows, the snapshot says "
                f"{latest.total_record_count}, an older one had {last_count}"
            )
        last_count = rows.num_rows
        checked += 1
        time.sleep(1.0)  # each read is a few hundred requests: a sample, not every snapshot
    done.put((checked, skipped, problems))


def _context() -> ForkServerContext:
    """Fresh processes, forked from a server that imported this module once per run.

    Spawned, each of the nine processes imported pyarrow and paimon_pyspark itself: on two
    shared cores they began writing about 20 s after the start, in every test; forked from the
    server, about 2 s. The server is single-threaded, so forking it is safe.
    """
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _race(
    warehouse: str,
    options: Mapping[str, str],
    table_options: Mapping[str, str],
    maintain: bool,
    faults: FaultProxy | None = None,
    commits: int = COMMITS,
) -> int:
    """Runs the race (with the proxy's faults on once the table exists, and a reader);
    returns the number of COMPACT snapshots."""
    catalog = CatalogFactory.create({"warehouse": warehouse, **options})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, options={**RACE_OPTIONS, **table_options})
    catalog.create_table("db.t", schema)
    where = "" if faults is None else f" [{faults.describe()}]"
    ctx = _context()
    stop, done, read_done, results = ctx.Event(), ctx.Queue(), ctx.Queue(), ctx.Queue()
    maintainer = reader = None
    if faults is not None:
        faults.kinds = FEW_DELAYS
        faults.rate = FAULT_RATE
        # every kind at least once on every class, whatever the seeded schedule gives a short race
        for cls in (c for c in CLASSES if c != "multipart"):
            for i, kind in enumerate(KINDS):
                faults.force(cls, kind, skip=20 * i + 10)
        reader = ctx.Process(target=_reader, args=(warehouse, options, stop, read_done))
        reader.start()
    if maintain:
        maintainer = ctx.Process(target=_maintainer, args=(warehouse, options, stop, done))
        maintainer.start()
    writers = [
        ctx.Process(target=_writer, args=(warehouse, options, w, commits, results))
        for w in range(WRITERS)
    ]
    for p in writers:
        p.start()
    outcomes = dict(results.get(timeout=900) for _ in writers)
    for p in writers:
        p.join(60)
    stop.set()
    compacted = unknown_compactions = 0
    if maintainer is not None:
        compacted, unknown_compactions = done.get(timeout=300)
        maintainer.join(60)
        assert maintainer.exitcode == 0
    if reader is not None:
        checked, skipped, problems = read_done.get(timeout=300)
        reader.join(60)
        assert not problems, f"{problems[:3]}{where}"
        assert checked >= 5, f"the reader checked {checked} snapshots, skipped {skipped}{where}"
        print(f"reader: {checked} snapshots checked, {skipped} skipped")
    if faults is not None:
        faults.rate = 0.0
        where = f" [{faults.describe()}]"
    assert [p.exitcode for p in writers] == [0] * WRITERS, where
    _check(
        catalog.get_table("db.t"),
        outcomes,
        compacted,
        unknown_compactions,
        maintain,
        where,
        commits,
    )
    return compacted


def _check(
    table: Any,
    outcomes: dict[int, dict[int, str]],
    compacted: int,
    unknown_compactions: int,
    expiring: bool,
    where: str,
    commits: int,
) -> None:
    """Every acknowledged commit's rows once; a failed commit's none; an unknown one's both
    or none; snapshot ids account for every commit."""
    sm = table.snapshot_manager
    latest = sm.latest()
    assert latest is not None
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    got = Counter(zip(rows["writer"].to_pylist(), rows["seq"].to_pylist(), strict=True))
    assert all(n == 1 for n in got.values()), f"rows twice: {got.most_common(3)}{where}"
    landed = 0
    for w, by_seq in outcomes.items():
        for seq, outcome in by_seq.items():
            present = [(w, s) in got for s in (seq, -seq - 1)]
            if outcome == "ok":
                assert all(present), f"acknowledged commit {w}/{seq} missing{where}"
            elif outcome == "unknown":
                assert present[0] == present[1], f"commit {w}/{seq} in part{where}"
            else:
                assert not any(present), f"commit {w}/{seq} failed ({outcome}), yet{where}"
            landed += all(present)
    assert len(got) == 2 * landed, where
    assert latest.total_record_count == len(got), where
    failed = [o for by_seq in outcomes.values() for o in by_seq.values() if o != "ok"]
    assert len(failed) <= WRITERS * commits // 20, f"{len(failed)} failed: {failed[:3]}{where}"
    ids = latest.id - landed - compacted
    assert 0 <= ids <= unknown_compactions, (latest.id, landed, compacted, where)
    if not expiring:
        kinds = [sm.snapshot(i).commit_kind for i in sm.list_ids()]
        assert kinds == ["APPEND"] * landed, where
    if failed:
        print(f"{len(failed)} commits failed with typed errors: {Counter(failed)}")


@pytest.mark.slow
@pytest.mark.own_job
def test_racing_writers_with_compaction_and_expiry_on_faulty_s3(
    s3_server: S3Server, s3_bucket: str, s3_faults: FaultProxy
) -> None:
    """The one S3 race: through the fault proxy, every class of request failed every way."""
    options = s3_faults.options(s3_server.options())
    compacted = _race(
        f"s3://{s3_bucket}/wh", options, {}, maintain=True, faults=s3_faults, commits=FAULTY_COMMITS
    )
    assert compacted > 0, s3_faults.describe()
    fired = s3_faults.fired()
    print(s3_faults.describe())
    # every kind on every class a table's commits send (multipart: test_s3_faults.py)
    for cls in (c for c in CLASSES if c != "multipart"):
        assert set(fired.get(cls, {})) == set(KINDS), (cls, s3_faults.describe())


@pytest.mark.slow
def test_racing_writers_on_local_disk(tmp_path: Any) -> None:
    _race(str(tmp_path / "wh"), {}, {}, maintain=False)


@pytest.mark.slow
def test_racing_writers_with_compaction_and_expiry_on_local_disk(tmp_path: Any) -> None:
    assert _race(str(tmp_path / "wh"), {}, {}, maintain=True) > 0
