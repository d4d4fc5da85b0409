"""Tables on S3 against tables on local disk: commit latency, write and read throughput.

The S3 side is moto's S3 server (``python -m moto.server``), started by this script on
127.0.0.1 with a free port and reached through paimon_pyspark's obstore FileIO, configured with
Java Paimon's option names (``s3.endpoint``, ``s3.access-key``, ``s3.secret-key``,
``s3.path.style.access``, ``s3.endpoint.region``). moto is one Python process that keeps every
object in its memory, so the S3 numbers mostly measure moto (its request handling in Python, on
the same cores as the writer), not S3's latency or bandwidth nor obstore's; the ``moto cpu s``
column says how much of each step moto spent. What the run shows is the shape of the cost: how
many requests a commit makes and what the object-store path costs against the local one.

Two measurements, both on the public API (``CatalogFactory.create({"warehouse": ...})``,
``new_batch_write_builder`` .. ``new_write`` .. ``write_arrow`` .. ``prepare_commit`` ..
``new_commit().commit``; ``new_read_builder`` .. ``to_arrow``), rows from
``benchlib.pk_rows`` (``k`` bigint, ``p`` one of ``p0``..``p3``, ``ver``, ``v``, ``s``):

- commit latency: ``--commits`` commits of ``--commit-rows`` new rows each (after
  ``--commit-warmup`` untimed ones) into four tables at once, one commit to each in turn so that
  drift hits all alike: an unpartitioned append table and an unpartitioned primary-key table
  (key ``k``, bucket 2), each on S3 and on local disk. Per commit, two clocks: the commit call
  alone (``new_commit().commit``) and the whole append (builder to commit). p50/p95/max in ms,
  and S3/local. Each commit must return the next snapshot id, and each table must read back
  every row.
- throughput: ``--rows`` rows written as one commit, then read back in full, into an append
  table partitioned by ``p`` and a primary-key table (``p``, ``k``) partitioned by ``p``, bucket
  4 (``benchlib``'s table), on S3 and on local disk. Every run is a fresh process (so its peak
  RSS, from ``resource.getrusage``, is that run's), which first writes and reads a 1,000-row
  table in the same store to load its code paths and the S3 client, then times the write, then
  the read, whose checksum over every column (``benchlib.pk_totals``) must equal the data's.
  ``--warmup`` rounds, then ``--repeat`` rounds, each round every case once (local and S3
  alternating); medians of the timed rounds.

Run: ``.venv/bin/python bench/s3_commit_write.py [--rows N] [--commits C] [--repeat R]``; a quick
smoke run: ``--rows 20000 --commits 5 --commit-warmup 1 --repeat 1 --warmup 0``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import benchlib
import numpy as np
import pyarrow as pa

import paimon_pyspark

SCRIPT = Path(__file__).resolve()
sys.path.insert(0, str(SCRIPT.parents[1]))  # the repository root: the tests' S3 server starter
from tests.s3_server import S3Server  # noqa: E402

STORES = ("local", "s3")
KINDS = ("append", "pk")
COMMIT_PK_BUCKETS = 2
WARM_ROWS = 1_000


# --- moto ---------------------------------------------------------------------------------------


class Moto(S3Server):
    """moto's S3 server in its own process (the tests' starter), with what the bench adds:
    bucket sizes, dropping a run's bucket, and the server's peak memory."""

    @staticmethod
    def start() -> Moto:
        server = S3Server.start()
        return Moto(server.endpoint, server.process)

    def parquet_bytes(self, bucket: str, prefix: str) -> int:
        pages = (
            self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        )
        return sum(
            o["Size"]
            for page in pages
            for o in page.get("Contents", [])
            if o["Key"].endswith(".parquet")
        )

    def drop_bucket(self, bucket: str) -> None:
        """Delete the bucket and its objects, so moto's memory holds one run at a time."""
        client = self.client()
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                client.delete_objects(Bucket=bucket, Delete={"Objects": keys})
        client.delete_bucket(Bucket=bucket)

    def peak_rss_mb(self) -> float:
        return proc_status_mb(self.process.pid, "VmHWM")


# --- process facts ------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """This process's peak resident set so far (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def proc_status_mb(pid: int, key: str) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def proc_cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of another process (moto), NaN without /proc."""
    if pid is None:
        return float("nan")
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return float("nan")
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(fn: Callable[[], Any], server_pid: int | None = None) -> tuple[float, float, float, Any]:
    """Wall-clock, process CPU and server CPU seconds of one call, after a collection."""
    gc.collect()
    server = proc_cpu_seconds(server_pid)
    cpu = time.process_time()
    start = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - start
    return wall, time.process_time() - cpu, proc_cpu_seconds(server_pid) - server, out


# --- tables -------------------------------------------------------------------------------------


def catalog_for(warehouse: str, s3_options: dict[str, str]) -> paimon_pyspark.FileSystemCatalog:
    options = {"warehouse": warehouse}
    if warehouse.startswith("s3://"):
        options |= s3_options
    catalog = paimon_pyspark.CatalogFactory.create(options)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog


def create_table(
    catalog: paimon_pyspark.FileSystemCatalog,
    name: str,
    kind: str,
    schema: pa.Schema,
    partitioned: bool,
    buckets: int,
) -> paimon_pyspark.FileStoreTable:
    if kind == "append":
        keys, options = None, {}
    else:
        keys = benchlib.PK_PRIMARY_KEYS if partitioned else ["k"]
        options = {"bucket": str(buckets)}
    catalog.create_table(
        f"db.{name}",
        paimon_pyspark.Schema.from_pyarrow_schema(
            schema,
            partition_keys=benchlib.PK_PARTITION_KEYS if partitioned else None,
            primary_keys=keys,
            options=options,
        ),
    )
    return catalog.get_table(f"db.{name}")


def write_once(table: paimon_pyspark.FileStoreTable, rows: pa.Table) -> tuple[list[int], float]:
    """One batch commit of ``rows``; the new snapshot ids and the seconds of the commit call."""
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(rows)
        messages = write.prepare_commit()
    start = time.perf_counter()
    ids = builder.new_commit().commit(messages)
    return ids, time.perf_counter() - start


def read_all(table: paimon_pyspark.FileStoreTable) -> pa.Table:
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


# --- throughput: one run per process ------------------------------------------------------------


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """The child's work: warm up on a small table, then time one write and one full read."""
    data = benchlib.pk_arrow(case["rows"], 1)
    expected = benchlib.pk_totals(data)
    base, pid, kind = case["warehouse_base"], case.get("server_pid"), case["kind"]
    s3_options = case.get("s3_options", {})

    warm = benchlib.pk_arrow(WARM_ROWS, 1)
    warm_table = create_table(
        catalog_for(f"{base}/warm", s3_options), "t", kind, warm.schema, True, benchlib.PK_BUCKETS
    )
    write_once(warm_table, warm)
    if read_all(warm_table).num_rows != WARM_ROWS:
        raise AssertionError("warm-up table read back the wrong number of rows")
    del warm, warm_table
    gc.collect()
    rss_base = peak_rss_mb()

    catalog = catalog_for(f"{base}/wh", s3_options)
    table = create_table(catalog, "t", kind, data.schema, True, benchlib.PK_BUCKETS)
    write_s, write_cpu, write_server, _ = timed(lambda: write_once(table, data), pid)
    rss_write = peak_rss_mb()
    read_s, read_cpu, read_server, result = timed(lambda: read_all(catalog.get_table("db.t")), pid)
    got = benchlib.pk_totals(result)
    bad = benchlib.totals_mismatch(expected, got)
    if bad:
        raise AssertionError(f"read back {bad}")
    return {
        "write_s": write_s,
        "write_cpu_s": write_cpu,
        "write_server_cpu_s": write_server,
        "read_s": read_s,
        "read_cpu_s": read_cpu,
        "read_server_cpu_s": read_server,
        "rss_base_mb": rss_base,
        "rss_write_mb": rss_write,
        "rss_peak_mb": peak_rss_mb(),
    }


@dataclass
class Case:
    """The timed runs of one (kind, store) throughput case; or why there are none."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    data_bytes: int = 0
    note: str = ""

    @property
    def ok(self) -> bool:
        return not self.note and bool(self.runs)

    def median(self, key: str) -> float:
        return statistics.median(r[key] for r in self.runs)

    def max(self, key: str) -> float:
        return max(r[key] for r in self.runs)


def local_parquet_bytes(root: str) -> int:
    return sum(
        os.path.getsize(os.path.join(folder, name))
        for folder, _dirs, files in os.walk(root)
        for name in files
        if name.endswith(".parquet")
    )


def spawn_case(
    kind: str, store: str, rows: int, moto: Moto, tmp_root: str | None
) -> tuple[dict[str, Any], int]:
    """Run one throughput case in a fresh interpreter; its result and the Parquet bytes."""
    case: dict[str, Any] = {"kind": kind, "rows": rows}
    bucket = folder = None
    if store == "s3":
        bucket = moto.new_bucket()
        case |= {
            "warehouse_base": f"s3://{bucket}/{kind}",
            "s3_options": moto.options(),
            "server_pid": moto.process.pid,
        }
    else:
        folder = tempfile.mkdtemp(prefix="s3-bench-local-", dir=tmp_root)
        case["warehouse_base"] = folder
    try:
        proc = subprocess.run(
            [sys.executable, str(SCRIPT), "--case", json.dumps(case)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
            raise RuntimeError(tail[0])
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        if bucket is not None:
            size = moto.parquet_bytes(bucket, f"{kind}/wh/")
        else:
            size = local_parquet_bytes(os.path.join(folder or "", "wh"))
        return result, size
    finally:
        if bucket is not None:
            moto.drop_bucket(bucket)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def throughput(
    moto: Moto, rows: int, repeat: int, warmup: int, tmp_root: str | None
) -> dict[tuple[str, str], Case]:
    cases = {(kind, store): Case() for kind in KINDS for store in STORES}
    for i in range(warmup + repeat):
        label = "warm-up" if i < warmup else f"run {i - warmup + 1}/{repeat}"
        for (kind, store), case in cases.items():
            if case.note:
                continue
            print(f"  throughput {label}: {kind} {store} ...", file=sys.stderr)
            try:
                result, size = spawn_case(kind, store, rows, moto, tmp_root)
            except Exception as exc:
                case.note = f"failed ({type(exc).__name__}: {exc})"
                continue
            if i >= warmup:
                case.runs.append(result)
                case.data_bytes = size
    return cases


# --- commit latency -----------------------------------------------------------------------------


@dataclass
class Latency:
    commit_ms: list[float] = field(default_factory=list)
    append_ms: list[float] = field(default_factory=list)
    server_cpu_ms: list[float] = field(default_factory=list)


@contextmanager
def commit_tables(
    moto: Moto, tmp_root: str | None
) -> Iterator[dict[tuple[str, str], paimon_pyspark.FileStoreTable]]:
    schema = benchlib.pk_rows(np.arange(1, dtype=np.int64), 1).schema
    bucket = moto.new_bucket()
    folder = tempfile.mkdtemp(prefix="s3-bench-commits-", dir=tmp_root)
    try:
        catalogs = {
            "local": catalog_for(folder, {}),
            "s3": catalog_for(f"s3://{bucket}/wh", moto.options()),
        }
        yield {
            (kind, store): create_table(
                catalogs[store], kind, kind, schema, False, COMMIT_PK_BUCKETS
            )
            for kind in KINDS
            for store in STORES
        }
    finally:
        moto.drop_bucket(bucket)
        shutil.rmtree(folder, ignore_errors=True)


def commit_latency(
    moto: Moto, commits: int, rows: int, warmup: int, tmp_root: str | None
) -> dict[tuple[str, str], Latency]:
    out = {(kind, store): Latency() for kind in KINDS for store in STORES}
    with commit_tables(moto, tmp_root) as tables:
        for i in range(warmup + commits):
            if i % 10 == 0:
                print(f"  commit {i + 1}/{warmup + commits} ...", file=sys.stderr)
            batch = benchlib.pk_rows(np.arange(i * rows, (i + 1) * rows, dtype=np.int64), 1)
            for key, table in tables.items():
                pid = moto.process.pid if key[1] == "s3" else None
                gc.collect()
                server = proc_cpu_seconds(pid)
                start = time.perf_counter()
                ids, commit_s = write_once(table, batch)
                append_s = time.perf_counter() - start
                server = proc_cpu_seconds(pid) - server
                if ids != [i + 1]:
                    raise AssertionError(f"{key}: commit {i + 1} made snapshots {ids}")
                if i >= warmup:
                    out[key].commit_ms.append(commit_s * 1000)
                    out[key].append_ms.append(append_s * 1000)
                    out[key].server_cpu_ms.append(server * 1000)
        for key, table in tables.items():
            got = read_all(table).num_rows
            if got != (warmup + commits) * rows:
                raise AssertionError(
                    f"{key}: read {got} rows, expected {(warmup + commits) * rows}"
                )
    return out


# --- report -------------------------------------------------------------------------------------


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
    versions = ", ".join(f"{name} {version(name)}" for name in ("pyarrow", "obstore", "moto"))
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


def report_commits(
    commits: int, rows: int, warmup: int, latency: dict[tuple[str, str], Latency] | str
) -> None:
    print()
    print(
        f"Commit latency: {commits} commits of {rows:,} rows per table (after {warmup} warm-up), "
        f"one commit to each table in turn; append unpartitioned, pk key k bucket "
        f"{COMMIT_PK_BUCKETS}"
    )
    if isinstance(latency, str):
        print(f"  not available ({latency})")
        return
    header = (
        f"{'':<14}{'commit p50':>11}{'p95':>8}{'max':>8}"
        f"{'append p50':>12}{'p95':>8}{'max':>8}{'moto cpu':>10}{'trend':>7}   (ms)"
    )
    print(header)
    print("-" * len(header))
    pct: dict[tuple[str, str, str], tuple[float, float]] = {}
    for (kind, store), lat in latency.items():
        cells = ""
        for clock, values in (("commit", lat.commit_ms), ("append", lat.append_ms)):
            p50, p95 = (float(x) for x in np.percentile(values, [50, 95]))
            pct[(kind, store, clock)] = (p50, p95)
            width = 11 if clock == "commit" else 12
            cells += f"{p50:>{width}.1f}{p95:>8.1f}{max(values):>8.1f}"
        server = statistics.fmean(lat.server_cpu_ms)
        cells += f"{'-' if server != server else f'{server:.1f}':>10}"
        cells += f"{fmt_ratio(trend(lat.commit_ms)):>7}"
        print(f"{kind + ' ' + store:<14}{cells}")
    print()
    print(f"{'s3 / local (ms)':<14}{'commit p50':>11}{'p95':>8}{'':>8}{'append p50':>12}{'p95':>8}")
    for kind in KINDS:
        cells = ""
        for clock, width in (("commit", 11), ("append", 12)):
            s3, local = pct[(kind, "s3", clock)], pct[(kind, "local", clock)]
            cells += f"{fmt_ratio(s3[0] / local[0]):>{width}}{fmt_ratio(s3[1] / local[1]):>8}"
            if clock == "commit":
                cells += f"{'':>8}"
        print(f"{kind:<14}{cells}")
    print("  commit: new_commit().commit alone; append: builder, write_arrow, prepare_commit and")
    print("  commit; moto cpu: the mean CPU time moto spent per append (1/CLK_TCK resolution);")
    print("  trend: median commit of the last 10% of commits / of the first 10% (history cost)")


def report_throughput(
    rows: int, repeat: int, warmup: int, cases: dict[tuple[str, str], Case]
) -> None:
    print()
    print(
        f"Throughput: {rows:,} rows in one commit, then a full read; append partitioned by p, "
        f"pk (p, k) bucket {benchlib.PK_BUCKETS}; median of {repeat} (after {warmup} warm-up), "
        f"each run a fresh process"
    )
    header = (
        f"{'':<20}{'median s':>9}{'cpu s':>7}{'moto cpu s':>11}{'rows/s':>10}"
        f"{'MB':>7}{'peak RSS MB':>12}   runs (s)"
    )
    print(header)
    print("-" * len(header))
    for step in ("write", "read"):
        for (kind, store), case in cases.items():
            label = f"{kind} {store} {step}"
            if not case.ok:
                print(f"{label:<20}{'-':>9}{'-':>7}{'-':>11}{'n/a':>10}   {case.note}")
                continue
            wall = case.median(f"{step}_s")
            server = case.median(f"{step}_server_cpu_s") if store == "s3" else float("nan")
            size = f"{case.data_bytes / 1e6:.1f}" if step == "write" else ""
            rss = case.max("rss_write_mb" if step == "write" else "rss_peak_mb")
            print(
                f"{label:<20}{wall:>9.3f}{case.median(f'{step}_cpu_s'):>7.2f}"
                f"{'-' if server != server else f'{server:.2f}':>11}"
                f"{rows / wall / 1e6:>8.2f} M{size:>7}{rss:>12.0f}   "
                + " ".join(f"{r[f'{step}_s']:.3f}" for r in case.runs)
            )
    bases = [c.max("rss_base_mb") for c in cases.values() if c.ok]
    if bases:
        print(
            "  peak RSS: the run's process after its write (write rows) and after write + read\n"
            f"  (read rows), max over runs; before the write (data generated, warm-up done) it "
            f"was {min(bases):.0f}-{max(bases):.0f} MB"
        )
    print()
    print(f"{'s3 / local':<20}{'write rows/s':>14}{'read rows/s':>13}{'peak RSS':>10}")
    for kind in KINDS:
        s3, local = cases[(kind, "s3")], cases[(kind, "local")]
        if not (s3.ok and local.ok):
            print(f"{kind:<20}{'n/a':>14}{'n/a':>13}{'n/a':>10}")
            continue
        write = local.median("write_s") / s3.median("write_s")
        read = local.median("read_s") / s3.median("read_s")
        rss = s3.max("rss_peak_mb") / local.max("rss_peak_mb")
        print(f"{kind:<20}{fmt_ratio(write):>14}{fmt_ratio(read):>13}{fmt_ratio(rss):>10}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows per throughput run")
    parser.add_argument("--commits", type=int, default=100, help="timed commits per table")
    parser.add_argument("--commit-rows", type=int, default=1_000, help="rows per small commit")
    parser.add_argument("--commit-warmup", type=int, default=5, help="untimed commits first")
    parser.add_argument("--repeat", type=int, default=3, help="timed throughput rounds")
    parser.add_argument("--warmup", type=int, default=1, help="untimed throughput rounds")
    parser.add_argument("--tmpdir", default=None, help="where local warehouses go (default: TMP)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return 0
    if args.rows < 40 or args.commits < 1 or args.commit_rows < 1 or args.repeat < 1:
        parser.error("need --rows >= 40, --commits >= 1, --commit-rows >= 1 and --repeat >= 1")
    if args.warmup < 0 or args.commit_warmup < 0:
        parser.error("need --warmup >= 0 and --commit-warmup >= 0")

    load_before = benchlib.load_average()
    print("starting moto ...", file=sys.stderr)
    moto = Moto.start()
    try:
        print("commit latency ...", file=sys.stderr)
        latency: dict[tuple[str, str], Latency] | str
        try:
            latency = commit_latency(
                moto, args.commits, args.commit_rows, args.commit_warmup, args.tmpdir
            )
        except Exception as exc:
            latency = f"{type(exc).__name__}: {exc}"
        print("throughput ...", file=sys.stderr)
        cases = throughput(moto, args.rows, args.repeat, args.warmup, args.tmpdir)
        moto_peak = moto.peak_rss_mb()
    finally:
        moto.stop()

    print()
    print("Tables on S3 (moto) against local disk")
    for key, value in machine_facts():
        print(f"  {key:<14} {value}")
    print(f"  {'s3 server':<14} moto {moto.endpoint}, peak RSS {moto_peak:.0f} MB")
    print(f"  {'load average':<14} {load_before} before, {benchlib.load_average()} after")
    print("  NOTE: moto is one Python process (objects in memory, requests handled in Python on")
    print("  the same cores), so the S3 numbers mostly measure moto, not S3 nor obstore.")
    report_commits(args.commits, args.commit_rows, args.commit_warmup, latency)
    report_throughput(args.rows, args.repeat, args.warmup, cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
