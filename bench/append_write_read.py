"""Append-table write and read throughput: paimon_pyspark vs raw Parquet vs pypaimon 2.1.

One run, one data set (``--rows`` rows: id bigint 0..N-1, v double, s 16-char hex string,
dt string with 4 values spread evenly and interleaved), three ways of writing and reading it:

- ours: a fresh append table partitioned by dt (bucket -1, parquet, zstd level 1 by default)
  through paimon_pyspark's batch write builder, commit, scan and read;
- raw: ``pyarrow.parquet.write_table`` of the same rows to one file, zstd level 1 (Paimon's
  default codec and level), and ``pyarrow.parquet.read_table`` of it;
- pypaimon 2.1 doing the same as ours, in its own venv (it pins pyarrow<20), through
  bench/pypaimon_bench_driver.py; the rows travel in an Arrow IPC file and the driver times its
  own write and read, so its interpreter start-up and the IPC loading are not counted.

Every measurement warms up once, then takes the median of ``--repeat`` runs, each into a fresh
directory. Run: ``PYTHONPATH=src python bench/append_write_read.py [--rows N] [--repeat R]``.
The pypaimon python is ``<project>/.venv-pypaimon/bin/python`` unless PYPAIMON_PYTHON says
otherwise; without it the pypaimon columns are skipped.
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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc
import pyarrow.parquet as pq

import paimon_pyspark

PROJECT = Path(__file__).resolve().parents[1]
DRIVER = PROJECT / "bench" / "pypaimon_bench_driver.py"
PARTITIONS = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"]
SCHEMA = pa.schema(
    [("id", pa.int64()), ("v", pa.float64()), ("s", pa.string()), ("dt", pa.string())]
)
ZSTD_LEVEL = 1  # Paimon's default file.compression.zstd-level

# Targets from the issue.
TARGET_WRITE_VS_RAW = 0.8
TARGET_READ_VS_RAW = 0.8
PYPAIMON_WRITE_VS_RAW_REFERENCE = 0.35


# --- data ---------------------------------------------------------------------------------------


def generate(rows: int, seed: int = 42) -> pa.Table:
    """The benchmark rows; partition values cycle row by row, so each gets rows // 4 of them."""
    rng = np.random.default_rng(seed)
    ids = pa.array(np.arange(rows, dtype=np.int64))
    values = pa.array(rng.random(rows))
    hex_digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    chars = hex_digits[rng.integers(0, 16, size=(rows, 16), dtype=np.uint8)]
    offsets = np.arange(0, 16 * (rows + 1), 16, dtype=np.int32)
    strings = pa.Array.from_buffers(
        pa.string(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes())]
    )
    indices = pa.array(np.arange(rows, dtype=np.int32) % len(PARTITIONS))
    dts = pc.take(pa.array(PARTITIONS, pa.string()), indices)
    return pa.Table.from_arrays([ids, values, strings, dts], schema=SCHEMA)


def check(result: pa.Table, rows: int, who: str) -> None:
    if result.num_rows != rows:
        raise AssertionError(f"{who} read {result.num_rows} rows, expected {rows}")
    total = pc.sum(result.column("id")).as_py() or 0
    if total != rows * (rows - 1) // 2:
        raise AssertionError(f"{who} read ids summing to {total}, expected all of 0..{rows - 1}")


def parquet_bytes(root: str) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".parquet"):
                total += os.path.getsize(os.path.join(folder, name))
    return total


# --- the engines --------------------------------------------------------------------------------


@dataclass
class Timings:
    write_s: list[float] = field(default_factory=list)
    read_s: list[float] = field(default_factory=list)
    write_cpu_s: list[float] = field(default_factory=list)
    read_cpu_s: list[float] = field(default_factory=list)
    data_bytes: int = 0
    note: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.write_s and self.read_s)


@dataclass
class Run:
    write_s: float
    read_s: float
    write_cpu_s: float
    read_cpu_s: float
    data_bytes: int


def timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    """Wall-clock and process CPU seconds (all threads) of one call, after a collection."""
    gc.collect()
    cpu = time.process_time()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, time.process_time() - cpu, out


def ours_once(data: pa.Table, tmp_root: str | None) -> Run:
    """Create a table in a fresh warehouse (not timed), then time the write and the read."""
    warehouse = tempfile.mkdtemp(prefix="ours-bench-", dir=tmp_root)
    try:
        catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("db", False)
        catalog.create_table(
            "db.t", paimon_pyspark.Schema.from_pyarrow_schema(data.schema, partition_keys=["dt"])
        )
        table = catalog.get_table("db.t")

        def write() -> None:
            builder = table.new_batch_write_builder()
            writer = builder.new_write()
            writer.write_arrow(data)
            messages = writer.prepare_commit()
            builder.new_commit().commit(messages)
            writer.close()

        write_s, write_cpu, _ = timed(write)
        table = catalog.get_table("db.t")

        def read() -> pa.Table:
            builder = table.new_read_builder()
            splits = builder.new_scan().plan().splits()
            return builder.new_read().to_arrow(splits)

        read_s, read_cpu, result = timed(read)
        assert isinstance(result, pa.Table)
        check(result, data.num_rows, "paimon_pyspark")
        size = parquet_bytes(os.path.join(warehouse, "db.db", "t"))
        return Run(write_s, read_s, write_cpu, read_cpu, size)
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def raw_once(data: pa.Table, tmp_root: str | None) -> Run:
    folder = tempfile.mkdtemp(prefix="raw-bench-", dir=tmp_root)
    path = os.path.join(folder, "data.parquet")
    try:
        write_s, write_cpu, _ = timed(
            lambda: pq.write_table(data, path, compression="zstd", compression_level=ZSTD_LEVEL)
        )
        read_s, read_cpu, result = timed(lambda: pq.read_table(path))
        assert isinstance(result, pa.Table)
        check(result, data.num_rows, "pyarrow.parquet")
        return Run(write_s, read_s, write_cpu, read_cpu, os.path.getsize(path))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_in_process(data: pa.Table, repeat: int, tmp_root: str | None) -> dict[str, Timings]:
    """Ours and raw, one warm-up each, then alternating so that drift hits both alike."""
    engines = {"ours": ours_once, "raw": raw_once}
    out = {name: Timings() for name in engines}
    for name, once in engines.items():
        print(f"  warm-up {name} ...", file=sys.stderr)
        once(data, tmp_root)
    for i in range(repeat):
        for name, once in engines.items():
            print(f"  run {i + 1}/{repeat} {name} ...", file=sys.stderr)
            run = once(data, tmp_root)
            t = out[name]
            t.write_s.append(run.write_s)
            t.read_s.append(run.read_s)
            t.write_cpu_s.append(run.write_cpu_s)
            t.read_cpu_s.append(run.read_cpu_s)
            t.data_bytes = run.data_bytes
    return out


def pypaimon_python() -> str:
    return os.environ.get("PYPAIMON_PYTHON") or str(PROJECT / ".venv-pypaimon" / "bin" / "python")


def run_pypaimon(data: pa.Table, repeat: int, tmp_root: str | None) -> tuple[Timings, str]:
    """Timings from the driver in the pypaimon venv, and its versions (or why it was skipped)."""
    python = pypaimon_python()
    if not os.path.exists(python):
        return Timings(note=f"skipped: no pypaimon python at {python}"), ""
    folder = tempfile.mkdtemp(prefix="pypaimon-ipc-", dir=tmp_root)
    try:
        ipc_path = os.path.join(folder, "rows.arrow")
        with pa.OSFile(ipc_path, "wb") as sink, pyarrow.ipc.new_file(sink, data.schema) as w:
            w.write_table(data)
        command = [python, str(DRIVER), "--data", ipc_path, "--repeat", str(repeat)]
        if tmp_root:
            command += ["--tmpdir", tmp_root]
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return Timings(note=f"failed: {tail[0]}"), ""
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["rows"] != data.num_rows:
        return Timings(note=f"failed: driver saw {result['rows']} rows"), ""
    versions = f"pypaimon {result['pypaimon']}, pyarrow {result['pyarrow']}"
    timings = Timings(
        result["write_s"],
        result["read_s"],
        result["write_cpu_s"],
        result["read_cpu_s"],
        result["data_bytes"],
    )
    return timings, versions


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
        ("arrow threads", f"cpu {pa.cpu_count()}, io {pa.io_thread_count()}"),
        ("python", f"{platform.python_version()} ({platform.platform()})"),
        ("pyarrow", pa.__version__),
        ("numpy", np.__version__),
    ]


def rate(rows: int, seconds: list[float]) -> float:
    return rows / statistics.median(seconds) if seconds else float("nan")


def fmt_rate(value: float) -> str:
    return "n/a" if value != value else f"{value / 1e6:,.2f} M"


def fmt_ratio(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}x"


def report(rows: int, repeat: int, results: dict[str, Timings], pyp_versions: str) -> None:
    print()
    print(f"Append table write/read: {rows:,} rows, median of {repeat} (after 1 warm-up)")
    for key, value in machine_facts():
        print(f"  {key:<14} {value}")
    if pyp_versions:
        print(f"  {'pypaimon venv':<14} {pyp_versions}")
    print()
    header = f"{'':<16}{'median s':>10}{'cpu s':>8}{'rows/s':>12}{'parquet MB':>12}   runs (s)"
    print(header)
    print("-" * len(header))
    for op in ("write", "read"):
        for name, t in results.items():
            label = f"{name} {op}"
            if not t.ok:
                print(f"{label:<16}{'-':>10}{'-':>8}{'n/a':>12}{'-':>12}   {t.note}")
                continue
            runs = t.write_s if op == "write" else t.read_s
            cpu = statistics.median(t.write_cpu_s if op == "write" else t.read_cpu_s)
            size = f"{t.data_bytes / 1e6:.1f}" if op == "write" else ""
            print(
                f"{label:<16}{statistics.median(runs):>10.3f}{cpu:>8.3f}"
                f"{fmt_rate(rate(rows, runs)):>12}{size:>12}   "
                + " ".join(f"{s:.3f}" for s in runs)
            )
    ours, raw, pyp = results["ours"], results["raw"], results["pypaimon"]
    pairs = {("ours", "raw"): (ours, raw), ("ours", "pypaimon"): (ours, pyp)}
    pairs[("pypaimon", "raw")] = (pyp, raw)
    ratio = {
        (a, b, op): rate(rows, getattr(x, f"{op}_s")) / rate(rows, getattr(y, f"{op}_s"))
        for (a, b), (x, y) in pairs.items()
        for op in ("write", "read")
        if x.ok and y.ok
    }
    nan = float("nan")
    print()
    print(f"{'ratio (rows/s)':<22}{'write':>8}{'read':>8}")
    for a, b in (("ours", "raw"), ("ours", "pypaimon"), ("pypaimon", "raw")):
        w = fmt_ratio(ratio.get((a, b, "write"), nan))
        r = fmt_ratio(ratio.get((a, b, "read"), nan))
        print(f"{a + ' / ' + b:<22}{w:>8}{r:>8}")

    def verdict(met: bool | None) -> str:
        return "n/a" if met is None else ("MET" if met else "NOT MET")

    ow = ratio.get(("ours", "raw", "write"))
    orr = ratio.get(("ours", "raw", "read"))
    pw = ratio.get(("pypaimon", "raw", "write"))
    print()
    print("targets (from the issue)")
    print(
        f"  our write >= {TARGET_WRITE_VS_RAW:.1f}x raw write:   {fmt_ratio(ow or nan):>7}  "
        + verdict(None if ow is None else ow >= TARGET_WRITE_VS_RAW)
    )
    print(
        f"  our read  >= {TARGET_READ_VS_RAW:.1f}x raw read:    {fmt_ratio(orr or nan):>7}  "
        + verdict(None if orr is None else orr >= TARGET_READ_VS_RAW)
    )
    print(
        f"  (reference: the issue measured pypaimon's write at about "
        f"{PYPAIMON_WRITE_VS_RAW_REFERENCE:.2f}x raw; this run: {fmt_ratio(pw or nan)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tmpdir", default=None, help="where tables and files go (default: TMP)")
    parser.add_argument("--no-pypaimon", action="store_true", help="skip the pypaimon runs")
    args = parser.parse_args()
    if args.rows < len(PARTITIONS) or args.repeat < 1:
        parser.error("need --rows >= 4 and --repeat >= 1")

    print(f"generating {args.rows:,} rows ...", file=sys.stderr)
    data = generate(args.rows)
    print("paimon_pyspark and raw parquet ...", file=sys.stderr)
    results = run_in_process(data, args.repeat, args.tmpdir)
    pyp_versions = ""
    if args.no_pypaimon:
        results["pypaimon"] = Timings(note="skipped (--no-pypaimon)")
    else:
        print("pypaimon ...", file=sys.stderr)
        results["pypaimon"], pyp_versions = run_pypaimon(data, args.repeat, args.tmpdir)
    report(args.rows, args.repeat, results, pyp_versions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
