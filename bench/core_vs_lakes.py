"""The core engine against deltalake (delta-rs) and pyiceberg: append write and full read to Arrow.

Issue 21's comparison, in one run on one data set: bench/append_write_read.py's rows (``--rows``,
default 2,000,000: id bigint, v double, s 16-char string, dt with 4 values), Parquet with zstd
level 1 everywhere, each engine writing a fresh table partitioned by ``dt`` and reading it all
back into an Arrow table:

- raw: ``pyarrow.parquet.write_table`` / ``read_table`` of one file, the floor of any table;
- ours: ``new_batch_write_builder`` .. ``write_arrow`` .. ``commit``, then ``to_arrow`` of every
  split (bench/append_write_read.py's ``ours_once``);
- deltalake 1.6.6 and pyiceberg 0.12.0: bench/lakes_bench_driver.py in their own venv
  (``.venv-lakes``, bench/lakes-requirements.txt, built by ``make bench``), fed the same rows
  through an Arrow IPC file; each times its own write and read, so no interpreter start-up or
  IPC loading is counted.

Every engine warms up once, then takes the median of ``--repeat`` runs. The report gives wall and
CPU seconds, rows/s and each engine against raw, and issue 21's targets: ours >= 1.2x deltalake
on the write and on the read.

Run: ``.venv/bin/python bench/core_vs_lakes.py [--rows N] [--repeat R] [--tmpdir DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc
from append_write_read import Timings, generate, machine_facts, run_in_process

PROJECT = Path(__file__).resolve().parents[1]
DRIVER = PROJECT / "bench" / "lakes_bench_driver.py"
ENGINES = ("deltalake", "pyiceberg")
TARGET_VS_DELTALAKE = 1.2


def lakes_python() -> str:
    return os.environ.get("LAKES_PYTHON") or str(PROJECT / ".venv-lakes" / "bin" / "python")


def run_peer(engine: str, ipc_path: str, repeat: int, tmp_root: str | None) -> tuple[Timings, str]:
    python = lakes_python()
    if not os.path.exists(python):
        return Timings(note=f"skipped: no peers' python at {python} (make bench builds it)"), ""
    command = [python, str(DRIVER), "--engine", engine, "--data", ipc_path]
    command += ["--repeat", str(repeat)]
    if tmp_root:
        command += ["--tmpdir", tmp_root]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return Timings(note=f"failed: {tail[0]}"), ""
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    timings = Timings(
        got["write_s"], got["read_s"], got["write_cpu_s"], got["read_cpu_s"], got["data_bytes"]
    )
    return timings, f"{engine} {got['version']}, pyarrow {got['pyarrow']}"


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tmpdir", default=None)
    args = parser.parse_args()
    if args.rows < 4 or args.repeat < 1:
        parser.error("need --rows >= 4 and --repeat >= 1")
    data = generate(args.rows)
    print(f"ours and raw, {args.rows:,} rows ...", file=sys.stderr)
    results = run_in_process(data, args.repeat, args.tmpdir)
    versions = {}
    folder = tempfile.mkdtemp(prefix="lakes-ipc-", dir=args.tmpdir)
    try:
        ipc_path = os.path.join(folder, "rows.arrow")
        with pa.OSFile(ipc_path, "wb") as sink, pyarrow.ipc.new_file(sink, data.schema) as w:
            w.write_table(data)
        for engine in ENGINES:
            print(f"{engine} ...", file=sys.stderr)
            results[engine], versions[engine] = run_peer(engine, ipc_path, args.repeat, args.tmpdir)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print(
        f"\nAppend write and full read, {args.rows:,} rows, median of {args.repeat} after a warm-up"
    )
    for key, value in machine_facts():
        print(f"  {key:<14} {value}")
    for engine, text in versions.items():
        if text:
            print(f"  {engine:<14} {text} (.venv-lakes)")
    header = f"{'engine':<12}{'write s':>9}{'cpu':>7}{'rows/s':>10}{'vs raw':>8}"
    header += f"{'read s':>9}{'cpu':>7}{'rows/s':>10}{'vs raw':>8}{'MB':>8}"
    print(header)
    raw = results["raw"]
    for name, t in results.items():
        if not t.ok:
            print(f"{name:<12}{t.note}")
            continue
        w, r = median(t.write_s), median(t.read_s)
        print(
            f"{name:<12}{w:>9.3f}{median(t.write_cpu_s):>7.2f}{args.rows / w / 1e6:>8.2f} M"
            f"{median(raw.write_s) / w:>7.2f}x{r:>9.3f}{median(t.read_cpu_s):>7.2f}"
            f"{args.rows / r / 1e6:>8.2f} M{median(raw.read_s) / r:>7.2f}x"
            f"{t.data_bytes / 1e6:>8.1f}"
        )
    delta = results.get("deltalake")
    out: dict[str, object] = {"bench": "core_vs_lakes", "rows": args.rows, "repeat": args.repeat}
    if delta is not None and delta.ok:
        ours = results["ours"]
        write_x = median(delta.write_s) / median(ours.write_s)
        read_x = median(delta.read_s) / median(ours.read_s)
        print("\ntargets (issue 21)")
        for label, value in (("write", write_x), ("read", read_x)):
            verdict = "MET" if value >= TARGET_VS_DELTALAKE else "NOT MET"
            print(f"  {label} >= {TARGET_VS_DELTALAKE}x deltalake {value:>10.2f}x  {verdict}")
        out.update({"write_vs_deltalake": write_x, "read_vs_deltalake": read_x})
    out["engines"] = {
        name: {"write_s": t.write_s, "read_s": t.read_s, "data_bytes": t.data_bytes, "note": t.note}
        for name, t in results.items()
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
