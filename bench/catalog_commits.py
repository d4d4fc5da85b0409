"""Commit latency through each catalog: filesystem, JDBC (SQLite, PostgreSQL), REST (issue 43).

What a catalog adds to a small commit, measured in one run against the filesystem catalog on
the same machine, the same kind of table and the same rows. Every catalog is opened with
``CatalogFactory.create(options)`` and Java's option names:

- ``filesystem``: the warehouse a local directory (commits publish with a conditional write);
- ``fs local://``: the filesystem catalog on ``local:///dir``, a local mount without conditional
  writes, accepted only with ``fs.single-writer = true`` (the baseline of the locked rows);
- ``jdbc sqlite``: ``metastore = jdbc``, ``uri = jdbc:sqlite:<file>`` (Python's sqlite3);
- ``jdbc sqlite lock``: the same with ``lock.enabled = true`` (commits run under the JDBC lock);
- ``jdbc sqlite lock local://``: the lock on ``local:///dir``, the store the lock makes safe;
- ``jdbc pg`` / ``jdbc pg lock local://``: ``uri = jdbc:postgresql://127.0.0.1:<port>/<db>``,
  a real PostgreSQL server (the tests' starter, tests/catalogs/postgres.py) on 127.0.0.1;
- ``jdbc sqlite wal lock local://`` (only when named in ``--catalogs``): the SQLite lock with
  ``jdbc.journal_mode = WAL``, to show what the default rollback journal's syncs cost;
- ``rest``: ``metastore = rest``, our server (``paimon-pyspark rest-server``, the tests' starter
  tests/catalogs/rest_server.py) on 127.0.0.1 with a bearer token; data files are written by
  this process into the warehouse the server names, the commit is made by the server.

Per catalog, two tables: an unpartitioned append table and an unpartitioned primary-key table
(key ``k``, bucket 2, ``write-only = true``: no compaction, so each job is one snapshot), rows
from ``benchlib.pk_rows`` (``k``, ``p``, ``ver``, ``v``, ``s``).
``--commits`` commits of ``--commit-rows`` new rows each (after ``--commit-warmup`` untimed
ones), one commit to each (catalog, table) in turn so that drift and the other load on the
machine hit all alike. Per commit, three clocks: ``load`` = ``catalog.get_table`` (what a job
pays first: a query, a request or a schema-file read), ``commit`` = ``new_commit().commit``
alone (the catalog's share: the lock, the request, the snapshot publish), and ``append`` = the
whole job (``get_table``, builder, ``write_arrow``, ``prepare_commit``, commit). p50/p95/max in
ms, and each catalog over ``filesystem`` (same kind, same run). Each commit must return the next
snapshot id, and each table must read back every row at the end. No figure is asserted.

Run: ``.venv/bin/python bench/catalog_commits.py [--commits C] [--commit-rows K]
[--catalogs a,b,...]``; a quick smoke run: ``--commits 5 --commit-warmup 1``.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from contextlib import ExitStack
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import benchlib
import numpy as np
import pyarrow as pa

import paimon_pyspark

SCRIPT = Path(__file__).resolve()
sys.path.insert(0, str(SCRIPT.parents[1]))  # the repository root: the tests' server starters

KINDS = ("append", "pk")
PK_BUCKETS = 2
# write-only: no compaction in the commit path, so every job is one snapshot and one catalog
# commit, and p95 is the catalog's, not that of the fifth commit's compaction.
PK_OPTIONS = {"bucket": str(PK_BUCKETS), "write-only": "true"}
BASELINE = "filesystem"
LOCAL_BASELINE = "fs local://"
CATALOGS = (
    "filesystem",
    "fs local://",
    "jdbc sqlite",
    "jdbc sqlite lock",
    "jdbc sqlite lock local://",
    "jdbc pg",
    "jdbc pg lock local://",
    "rest",
)
EXTRA_CATALOGS = ("jdbc sqlite wal lock local://",)
"""Not in the default run: the SQLite lock with ``jdbc.journal_mode = WAL`` (sqlite-jdbc's
property, applied as the PRAGMA), which shows what the default rollback journal's syncs cost."""


# --- the catalogs -------------------------------------------------------------------------------


@dataclass
class Target:
    """One catalog under test: its options, its open catalog and tables, or why it has none."""

    name: str
    options: dict[str, str] = field(default_factory=dict)
    catalog: Any = None
    server_pid: int | None = None
    commit_via: str = ""
    """The tables' SnapshotCommit class: how a commit publishes its snapshot."""
    note: str = ""

    @property
    def baselines(self) -> list[str]:
        """What this catalog's ratios are against: ``filesystem``, and for a ``local://``
        warehouse also ``fs local://`` (the same store, so the ratio is the catalog's alone)."""
        if self.name == BASELINE:
            return []
        if self.name.endswith("local://") and self.name != LOCAL_BASELINE:
            return [BASELINE, LOCAL_BASELINE]
        return [BASELINE]


class Services:
    """The servers the catalogs need, started once for the run and stopped at its end."""

    def __init__(self, stack: ExitStack, root: str) -> None:
        self.stack, self.root = stack, root
        self._pg: dict[str, str] | str | None = None
        self._rest: tuple[dict[str, str], int | None] | str | None = None

    def postgres(self) -> dict[str, str]:
        """The JDBC options of a database on a PostgreSQL server of our own (``uri``,
        ``jdbc.user``, ``jdbc.password``), from the tests' starter."""
        if self._pg is None:
            try:
                self._pg = start_postgres(self.stack)
            except Exception as exc:
                self._pg = f"no PostgreSQL ({type(exc).__name__}: {exc})"
        if isinstance(self._pg, str):
            raise RuntimeError(self._pg)
        return dict(self._pg)

    def rest(self) -> tuple[dict[str, str], int | None]:
        """The REST catalog options of our server on 127.0.0.1, and the server's pid."""
        if self._rest is None:
            try:
                self._rest = start_rest_server(self.stack, self.root)
            except Exception as exc:
                self._rest = f"no REST server ({type(exc).__name__}: {exc})"
        if isinstance(self._rest, str):
            raise RuntimeError(self._rest)
        options, pid = self._rest
        return dict(options), pid


def start_postgres(stack: ExitStack) -> dict[str, str]:
    """A PostgreSQL server of our own (tests/catalogs/postgres.py), stopped with the stack."""
    from tests.catalogs.postgres import postgres

    return stack.enter_context(postgres()).jdbc_options()


def start_rest_server(stack: ExitStack, root: str) -> tuple[dict[str, str], int | None]:
    """Our REST server (tests/catalogs/rest_server.py), stopped with the stack; its options
    and its pid (found among our children by its log file's path, for its CPU time)."""
    from tests.catalogs.rest_server import running_rest_server

    server = stack.enter_context(running_rest_server(os.path.join(root, "rest")))
    return server.catalog_options(), child_pid_with(server.log_path)


def child_pid_with(text: str) -> int | None:
    """The pid of our child process whose command line contains ``text``, or None."""
    try:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmdline = f.read().decode(errors="replace")
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == os.getpid() and text in cmdline:
                return int(entry)
    except OSError:
        pass
    return None


def catalog_options(name: str, root: str, services: Services) -> tuple[dict[str, str], int | None]:
    """The options of catalog ``name``, each in its own warehouse under ``root``."""
    folder = os.path.join(root, name.replace(" ", "-").replace(":", "").replace("/", ""))
    os.makedirs(folder, exist_ok=True)
    warehouse = os.path.join(folder, "warehouse")
    local = "local://" + os.path.abspath(warehouse)
    lock = {"lock.enabled": "true"}
    sqlite = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{os.path.join(folder, 'catalog.db')}"}
    key = {"catalog-key": name.replace(" ", "_").replace(":", "").replace("/", "")}
    if name == "filesystem":
        return {"warehouse": warehouse}, None
    if name == "fs local://":
        return {"warehouse": local, "fs.single-writer": "true"}, None
    if name == "jdbc sqlite":
        return sqlite | {"warehouse": warehouse}, None
    if name == "jdbc sqlite lock":
        return sqlite | lock | {"warehouse": warehouse}, None
    if name == "jdbc sqlite lock local://":
        return sqlite | lock | {"warehouse": local}, None
    if name == "jdbc sqlite wal lock local://":
        return sqlite | {"jdbc.journal_mode": "WAL"} | lock | {"warehouse": local}, None
    if name == "jdbc pg":
        return {"metastore": "jdbc"} | services.postgres() | key | {"warehouse": warehouse}, None
    if name == "jdbc pg lock local://":
        return {"metastore": "jdbc"} | services.postgres() | key | lock | {"warehouse": local}, None
    if name == "rest":
        return services.rest()
    raise ValueError(f"unknown catalog {name!r}; known: {', '.join(CATALOGS + EXTRA_CATALOGS)}")


def open_target(name: str, root: str, services: Services) -> Target:
    """Open catalog ``name`` and create its two tables; a failure becomes the target's note."""
    target = Target(name)
    try:
        target.options, target.server_pid = catalog_options(name, root, services)
        catalog = paimon_pyspark.CatalogFactory.create(target.options)
        target.catalog = catalog
        catalog.create_database("db", ignore_if_exists=True)
        schema = benchlib.pk_rows(np.arange(1, dtype=np.int64), 1).schema
        for kind in KINDS:
            keys, options = (None, {}) if kind == "append" else (["k"], PK_OPTIONS)
            catalog.create_table(
                f"db.{kind}",
                paimon_pyspark.Schema.from_pyarrow_schema(
                    schema, primary_keys=keys, options=options
                ),
            )
        via = catalog.get_table("db.append").store.snapshot_commit
        if via is not None:
            target.commit_via = type(via).__name__
        elif target.options.get("fs.single-writer") == "true":
            target.commit_via = "none: a plain write (fs.single-writer)"
        else:
            target.commit_via = "none: the store's conditional write"
    except Exception as exc:
        target.note = failure(exc)
    return target


def failure(exc: BaseException) -> str:
    """One line for the report; the traceback goes to stderr."""
    traceback.print_exception(exc, file=sys.stderr)
    text = str(exc).strip().splitlines()
    return f"failed ({type(exc).__name__}: {text[0] if text else ''})"[:160]


# --- the commits --------------------------------------------------------------------------------


@dataclass
class Latency:
    load_ms: list[float] = field(default_factory=list)
    commit_ms: list[float] = field(default_factory=list)
    append_ms: list[float] = field(default_factory=list)
    server_cpu_ms: list[float] = field(default_factory=list)


def proc_cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of another process (the REST server), NaN without /proc."""
    if pid is None:
        return float("nan")
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return float("nan")
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_commit(catalog: Any, name: str, rows: pa.Table) -> tuple[list[int], float, float, float]:
    """A whole small job: load the table, write ``rows``, commit. The new snapshot ids and the
    seconds of the load, of the commit call and of the whole."""
    start = time.perf_counter()
    table = catalog.get_table(name)
    loaded = time.perf_counter()
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(rows)
        messages = write.prepare_commit()
    before = time.perf_counter()
    ids = builder.new_commit().commit(messages)
    end = time.perf_counter()
    return list(ids), loaded - start, end - before, end - start


def run_commits(
    targets: list[Target], commits: int, rows: int, warmup: int
) -> dict[tuple[str, str], Latency]:
    live = [t for t in targets if not t.note]
    out = {(t.name, kind): Latency() for t in live for kind in KINDS}
    for i in range(warmup + commits):
        if i % 20 == 0:
            print(f"  commit {i + 1}/{warmup + commits} ...", file=sys.stderr)
        batch = benchlib.pk_rows(np.arange(i * rows, (i + 1) * rows, dtype=np.int64), 1)
        for target in live:
            if target.note:
                continue
            for kind in KINDS:
                gc.collect()
                server = proc_cpu_seconds(target.server_pid)
                try:
                    ids, load_s, commit_s, append_s = one_commit(
                        target.catalog, f"db.{kind}", batch
                    )
                    if ids != [i + 1]:
                        raise AssertionError(f"{kind}: commit {i + 1} made snapshots {ids}")
                except Exception as exc:
                    target.note = f"commit {i + 1} {failure(exc)}"
                    break
                server = proc_cpu_seconds(target.server_pid) - server
                if i >= warmup:
                    lat = out[(target.name, kind)]
                    lat.load_ms.append(load_s * 1000)
                    lat.commit_ms.append(commit_s * 1000)
                    lat.append_ms.append(append_s * 1000)
                    lat.server_cpu_ms.append(server * 1000)
    for target in live:
        if target.note:
            continue
        for kind in KINDS:
            try:
                table = target.catalog.get_table(f"db.{kind}")
                builder = table.new_read_builder()
                got = builder.new_read().to_arrow(builder.new_scan().plan().splits()).num_rows
                if got != (warmup + commits) * rows:
                    raise AssertionError(
                        f"{kind}: read {got} rows, expected {(warmup + commits) * rows}"
                    )
            except Exception as exc:
                target.note = f"read-back {failure(exc)}"
    return {key: lat for key, lat in out.items() if not target_by(targets, key[0]).note}


def target_by(targets: list[Target], name: str) -> Target:
    return next(t for t in targets if t.name == name)


# --- report -------------------------------------------------------------------------------------


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "-"


def machine_facts() -> list[tuple[str, str]]:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    import sqlite3

    versions = ", ".join(
        [f"sqlite {sqlite3.sqlite_version}"]
        + [f"{n} {package_version(n)}" for n in ("pyarrow", "psycopg", "fastapi", "uvicorn")]
    )
    return [
        ("cpu", cpu),
        ("cores", f"{os.cpu_count()} logical, {usable} usable by this process"),
        ("python", f"{platform.python_version()} ({platform.platform()})"),
        ("versions", versions),
    ]


def fmt_ratio(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}x"


def trend(values: list[float]) -> float:
    """Median of the last tenth over median of the first: > 1 when commits slow down as the
    table's history grows."""
    tenth = max(1, len(values) // 10)
    return statistics.median(values[-tenth:]) / statistics.median(values[:tenth])


def p50_p95(values: list[float]) -> tuple[float, float]:
    p50, p95 = (float(x) for x in np.percentile(values, [50, 95]))
    return p50, p95


def report(
    commits: int,
    rows: int,
    warmup: int,
    targets: list[Target],
    latency: dict[tuple[str, str], Latency],
) -> None:
    print()
    print(
        f"Commit latency: {commits} commits of {rows:,} rows per table (after {warmup} warm-up), "
        f"one commit to each table in turn; append unpartitioned, pk key k bucket {PK_BUCKETS} "
        "write-only"
    )
    header = (
        f"{'':<38}{'load p50':>9}{'p95':>7}{'commit p50':>12}{'p95':>7}{'max':>8}"
        f"{'append p50':>12}{'p95':>7}{'srv cpu':>9}{'trend':>7}   (ms)"
    )
    print(header)
    print("-" * len(header))
    for target in targets:
        for kind in KINDS:
            label = f"{target.name} {kind}"
            lat = latency.get((target.name, kind))
            if lat is None:
                print(f"{label:<38}{'-':>9}   {target.note or 'not run'}")
                continue
            load, commit, append = (
                p50_p95(lat.load_ms),
                p50_p95(lat.commit_ms),
                p50_p95(lat.append_ms),
            )
            server = statistics.fmean(lat.server_cpu_ms)
            print(
                f"{label:<38}{load[0]:>9.1f}{load[1]:>7.1f}{commit[0]:>12.1f}{commit[1]:>7.1f}"
                f"{max(lat.commit_ms):>8.1f}{append[0]:>12.1f}{append[1]:>7.1f}"
                f"{'-' if server != server else f'{server:.1f}':>9}"
                f"{fmt_ratio(trend(lat.commit_ms)):>7}"
            )
    print()
    print(
        f"{'ratio':<38}{'over':<12}{'load p50':>7}{'p95':>7}{'commit p50':>12}{'p95':>7}"
        f"{'':>8}{'append p50':>12}{'p95':>7}"
    )
    for target, baseline, kind in (
        (t, b, k) for b in (BASELINE, LOCAL_BASELINE) for t in targets for k in KINDS
    ):
        if baseline not in target.baselines:
            continue
        lat, base = latency.get((target.name, kind)), latency.get((baseline, kind))
        if lat is not None and base is not None:
            cells = ""
            for ours, theirs, width, pad in (
                (lat.load_ms, base.load_ms, 7, 0),
                (lat.commit_ms, base.commit_ms, 12, 8),
                (lat.append_ms, base.append_ms, 12, 0),
            ):
                a, b = p50_p95(ours), p50_p95(theirs)
                cells += f"{fmt_ratio(a[0] / b[0]):>{width}}{fmt_ratio(a[1] / b[1]):>7}"
                cells += " " * pad
            print(f"{target.name + ' ' + kind:<38}{baseline:<12}{cells}")
    print("  load: catalog.get_table; commit: new_commit().commit alone; append: the whole job")
    print("  (get_table, builder, write_arrow, prepare_commit, commit); srv cpu: the mean CPU")
    print("  time the REST server spent per job (1/CLK_TCK resolution); trend: median commit of")
    print("  the last 10% of commits / of the first 10% (what a growing history costs)")
    print()
    print("How each catalog's commit publishes the snapshot (the tables' SnapshotCommit):")
    for target in targets:
        print(f"  {target.name:<30}{target.commit_via or '-'}")
    print("  the filesystem warehouse's FileIO fsyncs every file it writes (data, manifests,")
    print("  snapshot); local:// (pyarrow) does not, so compare a local:// row with fs local://.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=200, help="timed commits per table")
    parser.add_argument("--commit-rows", type=int, default=10, help="rows per commit")
    parser.add_argument("--commit-warmup", type=int, default=5, help="untimed commits first")
    parser.add_argument(
        "--catalogs",
        default=",".join(CATALOGS),
        help=f"comma-separated, of: {', '.join(CATALOGS + EXTRA_CATALOGS)}",
    )
    parser.add_argument("--tmpdir", default=None, help="where the warehouses go (default: TMP)")
    args = parser.parse_args()
    names = [n.strip() for n in args.catalogs.split(",") if n.strip()]
    unknown = [n for n in names if n not in CATALOGS + EXTRA_CATALOGS]
    if unknown:
        parser.error(f"unknown catalogs {unknown}; known: {', '.join(CATALOGS + EXTRA_CATALOGS)}")
    if BASELINE not in names:
        names.insert(0, BASELINE)
    if args.commits < 1 or args.commit_rows < 1 or args.commit_warmup < 0:
        parser.error("need --commits >= 1, --commit-rows >= 1 and --commit-warmup >= 0")

    load_before = benchlib.load_average()
    root = tempfile.mkdtemp(prefix="catalog-commits-", dir=args.tmpdir)
    try:
        with ExitStack() as stack:
            services = Services(stack, root)
            targets: list[Target] = []
            for name in names:
                print(f"opening {name} ...", file=sys.stderr)
                targets.append(open_target(name, root, services))
            print("commits ...", file=sys.stderr)
            latency = run_commits(targets, args.commits, args.commit_rows, args.commit_warmup)
            for target in targets:
                if target.catalog is not None:
                    target.catalog.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print()
    print("Commits through each catalog against the filesystem catalog")
    for key, value in machine_facts():
        print(f"  {key:<14} {value}")
    print(f"  {'load average':<14} {load_before} before, {benchlib.load_average()} after")
    print("  NOTE: every server (PostgreSQL, the REST server) runs on the same cores as this")
    print("  process; other load on the machine shows in p95 first.")
    report(args.commits, args.commit_rows, args.commit_warmup, targets, latency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
