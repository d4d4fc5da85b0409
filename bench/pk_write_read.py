"""Primary-key table throughput: ours (core API) against pypaimon and the Java Spark connector.

One data set, defined in bench/benchlib.py (``pk_arrow`` / ``pk_exprs``): ``--rows`` keys ``k``
(bigint) in four partitions ``p`` (``p0``..``p3``), with ``ver``, ``v`` and ``s`` columns. The
table: primary key (``p``, ``k``), partitioned by ``p``, bucket 4, parquet zstd level 1 (the
defaults of ours and pypaimon; the Java connector's table says so explicitly). Each run, in a
fresh warehouse, times three steps:

- write: the first commit, all N keys;
- upsert: a second commit rewriting 10% of the keys (spread over every partition and bucket);
- merge-read: a full read, merging the two commits, plus a checksum over every column (row
  count, key sums, version-weighted key sum, sum of v, string lengths) compared with what the
  generator says the merged table holds, so no engine can skip work or return stale rows.

Engines:

- ours: ``paimon_pyspark``'s core API in this process (``new_batch_write_builder`` ..
  ``write_arrow`` .. ``prepare_commit`` .. ``new_commit().commit``; ``new_read_builder`` ..
  ``to_arrow``), on Arrow tables built before the timing;
- pypaimon: bench/pypaimon_bench_driver.py ``--pk-rows`` in ``.venv-pypaimon``, the same calls;
- java: bench/java_connector_driver.py's ``pk`` op in ``.venv-spark35`` (pyspark 3.5 with
  ``paimon-spark-3.5`` 0.9.0: Maven Central here has no Paimon connector for Spark 4):
  ``df.writeTo(t).append()`` of cached DataFrames, then the checksum as one Spark aggregate.

The Python engines generate their Arrow rows outside the timing; Java's come from cached
DataFrames. CPU seconds: this process (ours), the driver process (pypaimon), the driver plus
its JVM (java). An engine that fails prints "not available (<error>)".

Run: ``.venv/bin/python bench/pk_write_read.py [--rows N] [--repeat R] [--warmup W]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import benchlib
import pyarrow as pa

import paimon_pyspark

BENCH = Path(__file__).resolve().parent
PROJECT = BENCH.parent
STEPS = ("write", "upsert", "merge-read")


@dataclass
class Engine:
    """Per step: wall-clock and CPU seconds of the timed runs; or why there are none."""

    wall_s: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STEPS})
    cpu_s: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STEPS})
    versions: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return not self.note and all(self.wall_s[s] for s in STEPS)


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    gc.collect()
    cpu = time.process_time()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, time.process_time() - cpu, out


# --- ours ---------------------------------------------------------------------------------------


def ours_once(data: pa.Table, upsert: pa.Table, tmp_root: str | None) -> dict[str, Any]:
    warehouse = tempfile.mkdtemp(prefix="ours-pk-bench-", dir=tmp_root)
    try:
        catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("db", ignore_if_exists=True)
        schema = paimon_pyspark.Schema.from_pyarrow_schema(
            data.schema,
            partition_keys=benchlib.PK_PARTITION_KEYS,
            primary_keys=benchlib.PK_PRIMARY_KEYS,
            options={"bucket": str(benchlib.PK_BUCKETS)},
        )
        catalog.create_table("db.pk", schema)
        table = catalog.get_table("db.pk")

        def merge_read() -> dict[str, float]:
            fresh = catalog.get_table("db.pk")
            builder = fresh.new_read_builder()
            splits = builder.new_scan().plan().splits()
            return benchlib.pk_totals(builder.new_read().to_arrow(splits))

        out: dict[str, Any] = {
            "write": timed(lambda: benchlib.write_commit(table, data)),
            "upsert": timed(lambda: benchlib.write_commit(table, upsert)),
        }
        out["merge-read"] = timed(merge_read)
        return out
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def run_ours(
    rows: int, repeat: int, warmup: int, expected: dict[str, float], tmp_root: str | None
) -> Engine:
    engine = Engine(versions=f"paimon_pyspark, pyarrow {pa.__version__}")
    data, upsert = benchlib.pk_arrow(rows, 1), benchlib.pk_arrow(rows, 2)
    try:
        for i in range(warmup + repeat):
            print(f"  ours run {i + 1}/{warmup + repeat} ...", file=sys.stderr)
            got = ours_once(data, upsert, tmp_root)
            bad = benchlib.totals_mismatch(expected, got["merge-read"][2])
            if bad:
                return Engine(note=f"not available (merge-read returned {bad})")
            if i >= warmup:
                for step in STEPS:
                    engine.wall_s[step].append(got[step][0])
                    engine.cpu_s[step].append(got[step][1])
    except Exception as exc:  # the PK write path may not exist yet: say why, go on
        return Engine(note=f"not available ({type(exc).__name__}: {exc})")
    return engine


# --- the other engines, in their own venvs ------------------------------------------------------


def subprocess_json(command: list[str]) -> tuple[dict[str, Any] | None, str]:
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return None, f"failed: {tail[0]}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), ""


def check_totals(engine: Engine, expected: dict[str, float], got: dict[str, float]) -> Engine:
    bad = benchlib.totals_mismatch(expected, got)
    return Engine(note=f"wrong merge-read: {bad}") if bad else engine


def run_pypaimon(
    rows: int, repeat: int, warmup: int, expected: dict[str, float], tmp_root: str | None
) -> Engine:
    python = os.environ.get("PYPAIMON_PYTHON") or str(PROJECT / ".venv-pypaimon" / "bin" / "python")
    if not os.path.exists(python):
        return Engine(note=f"skipped: no pypaimon python at {python} (run make bench)")
    command = [python, str(BENCH / "pypaimon_bench_driver.py"), "--pk-rows", str(rows)]
    command += ["--repeat", str(repeat), "--warmup", str(warmup)]
    if tmp_root:
        command += ["--tmpdir", tmp_root]
    result, note = subprocess_json(command)
    if result is None:
        return Engine(note=note)
    engine = Engine(versions=f"pypaimon {result['pypaimon']}, pyarrow {result['pyarrow']}")
    for step, key in zip(STEPS, ("write", "upsert", "read"), strict=True):
        engine.wall_s[step] = list(result[f"{key}_s"])
        engine.cpu_s[step] = list(result[f"{key}_cpu_s"])
    return check_totals(engine, expected, result["totals"])


def run_java(
    rows: int, repeat: int, warmup: int, expected: dict[str, float], tmp_root: str | None
) -> Engine:
    python = os.environ.get("JAVA_CONNECTOR_PYTHON") or str(
        PROJECT / ".venv-spark35" / "bin" / "python"
    )
    jar = os.environ.get("PAIMON_SPARK_JAR") or str(
        PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"
    )
    if not os.path.exists(python) or not os.path.exists(jar):
        return Engine(note="Java connector baseline not built: run make bench")
    command: dict[str, Any] = {"op": "pk", "rows": rows, "repeat": repeat, "warmup": warmup}
    if tmp_root:
        command["tmpdir"] = tmp_root
    result, note = subprocess_json(
        [python, str(BENCH / "java_connector_driver.py"), json.dumps(command)]
    )
    if result is None:
        return Engine(note=note)
    engine = Engine(
        versions=f"spark {result['spark']}, java {result['java']}, {result['connector']}"
    )
    for step in STEPS:
        got = result["results"][f"java pk {step}"]
        engine.wall_s[step] = list(got["wall_s"])
        engine.cpu_s[step] = list(got["cpu_s"])
    return check_totals(engine, expected, result["totals"])


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
    return [
        ("cpu", cpu),
        ("cores", f"{os.cpu_count()} logical, {usable} usable by this process"),
        ("python", f"{platform.python_version()} ({platform.platform()})"),
    ]


def fmt_ratio(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}x"


def report(
    rows: int, repeat: int, warmup: int, engines: dict[str, Engine], loads: tuple[str, str]
) -> None:
    step_rows = {"write": rows, "upsert": benchlib.pk_upsert_rows(rows), "merge-read": rows}
    print()
    print(
        f"Primary-key table: {rows:,} keys in {len(benchlib.PK_PARTITIONS)} partitions, "
        f"bucket {benchlib.PK_BUCKETS}, upsert {step_rows['upsert']:,} keys; "
        f"median of {repeat} (after {warmup} warm-up)"
    )
    for key, value in machine_facts():
        print(f"  {key:<14} {value}")
    for name, engine in engines.items():
        if engine.versions:
            print(f"  {name:<14} {engine.versions}")
    print(f"  {'load average':<14} {loads[0]} before, {loads[1]} after (1, 5, 15 min)")
    print()
    header = f"{'':<22}{'median s':>9}{'cpu s':>8}{'rows/s':>11}   runs (s)"
    print(header)
    print("-" * len(header))
    for step in STEPS:
        for name, engine in engines.items():
            label = f"{name} {step}"
            if not engine.ok:
                print(f"{label:<22}{'-':>9}{'-':>8}{'n/a':>11}   {name}: {engine.note}")
                continue
            wall = statistics.median(engine.wall_s[step])
            cpu = statistics.median(engine.cpu_s[step])
            print(
                f"{label:<22}{wall:>9.3f}{cpu:>8.2f}{step_rows[step] / wall / 1e6:>9.2f} M   "
                + " ".join(f"{s:.3f}" for s in engine.wall_s[step])
            )
    print("  java: Spark 3.5 in its own process (no Paimon connector for Spark 4 on Maven Central")
    print("  here); its cpu s include its JVM; its write includes Spark's shuffle by bucket")
    print()
    print(f"{'ratio (rows/s)':<26}" + "".join(f"{s:>12}" for s in STEPS))
    ours = engines["ours"]
    for other in ("pypaimon", "java"):
        theirs = engines[other]
        for clock, times in (("wall", "wall_s"), ("cpu", "cpu_s")):
            cells = []
            for step in STEPS:
                if ours.ok and theirs.ok:
                    mine = statistics.median(getattr(ours, times)[step])
                    cells.append(fmt_ratio(statistics.median(getattr(theirs, times)[step]) / mine))
                else:
                    cells.append("n/a")
            print(f"{f'ours / {other} ({clock})':<26}" + "".join(f"{c:>12}" for c in cells))
    print("  (cpu: the same ratio from CPU seconds, steadier when the machine is shared)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--tmpdir", default=None, help="where the warehouses go (default: TMP)")
    parser.add_argument("--no-pypaimon", action="store_true", help="skip pypaimon")
    parser.add_argument("--no-java", action="store_true", help="skip the Java connector")
    args = parser.parse_args()
    if args.rows < 40 or args.repeat < 1 or args.warmup < 0:
        parser.error("need --rows >= 40, --repeat >= 1 and --warmup >= 0")

    load_before = benchlib.load_average()
    print(f"generating {args.rows:,} rows and the expected checksum ...", file=sys.stderr)
    expected = benchlib.pk_expected(args.rows)
    engines: dict[str, Engine] = {}
    print("ours ...", file=sys.stderr)
    engines["ours"] = run_ours(args.rows, args.repeat, args.warmup, expected, args.tmpdir)
    if args.no_pypaimon:
        engines["pypaimon"] = Engine(note="skipped (--no-pypaimon)")
    else:
        print("pypaimon ...", file=sys.stderr)
        engines["pypaimon"] = run_pypaimon(
            args.rows, args.repeat, args.warmup, expected, args.tmpdir
        )
    if args.no_java:
        engines["java"] = Engine(note="skipped (--no-java)")
    else:
        print("java connector (spark 3.5, own process) ...", file=sys.stderr)
        engines["java"] = run_java(args.rows, args.repeat, args.warmup, expected, args.tmpdir)
    report(args.rows, args.repeat, args.warmup, engines, (load_before, benchlib.load_average()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
