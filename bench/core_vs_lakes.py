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

- ours pk, beside them (no peer runs it): the same rows into a primary-key table (key id, dt;
  ``bucket`` 4), then a quarter of them upserted (not timed), and the read merging the two sorted
  runs of every bucket.

The engines take turns: each warms up once (a peer in its own process, which then stays up,
``lakes_bench_driver.py --serve``), then ``--repeat`` rounds each run ours, raw, deltalake,
pyiceberg and ours pk once, each round starting one engine further and every turn after an
``os.sync()``, so a drift of the machine's speed over the minute, and the page cache one engine
leaves dirty, hit every engine alike (this machine's speed wanders by a fifth between runs a few
seconds apart). The report
gives the medians of the rounds: wall and CPU seconds, rows/s and each engine against raw, and
issue 21's targets: ours >= 1.2x deltalake on the write and on the read.

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
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc
from append_write_read import (
    Run,
    Timings,
    check,
    generate,
    machine_facts,
    ours_once,
    parquet_bytes,
    raw_once,
    timed,
)
from benchlib import write_commit

import paimon_pyspark

PROJECT = Path(__file__).resolve().parents[1]
DRIVER = PROJECT / "bench" / "lakes_bench_driver.py"
ENGINES = ("deltalake", "pyiceberg")
TARGET_VS_DELTALAKE = 1.2


def lakes_python() -> str:
    return os.environ.get("LAKES_PYTHON") or str(PROJECT / ".venv-lakes" / "bin" / "python")


class Peer:
    """A peer's driver in ``--serve`` mode: warmed up once, then one write and read per turn."""

    def __init__(self, engine: str, ipc_path: str, tmp_root: str | None) -> None:
        self.engine = engine
        self.version = ""
        self.note = ""
        self.proc: subprocess.Popen[str] | None = None
        python = lakes_python()
        if not os.path.exists(python):
            self.note = f"skipped: no peers' python at {python} (make bench builds it)"
            return
        command = [python, str(DRIVER), "--engine", engine, "--data", ipc_path, "--serve"]
        if tmp_root:
            command += ["--tmpdir", tmp_root]
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        ready = self._answer()
        if ready is not None:
            self.version = f"{engine} {ready['version']}, pyarrow {ready['pyarrow']}"

    def _answer(self) -> dict[str, Any] | None:
        assert self.proc is not None and self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.note = f"failed: the {self.engine} driver stopped (exit {self.proc.wait()})"
            self.proc = None
            return None
        got: dict[str, Any] = json.loads(line)
        return got

    def turn(self) -> Timings:
        if self.proc is None or self.proc.stdin is None:
            return Timings(note=self.note)
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        got = self._answer()
        if got is None:
            return Timings(note=self.note)
        return Timings(
            got["write_s"], got["read_s"], got["write_cpu_s"], got["read_cpu_s"], got["data_bytes"]
        )

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.wait()


def ours_pk_once(data: pa.Table, tmp_root: str | None) -> Run:
    """A primary-key table: the write of every row timed, a quarter upserted, the merge timed."""
    warehouse = tempfile.mkdtemp(prefix="ours-pk-bench-", dir=tmp_root)
    try:
        catalog = paimon_pyspark.CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("db", False)
        keyed = pa.schema([data.schema.field(i).with_nullable(i != 0 and i != 3) for i in range(4)])
        rows = data.cast(keyed)
        schema = paimon_pyspark.Schema.from_pyarrow_schema(
            keyed, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "4"}
        )
        catalog.create_table("db.t", schema)
        table = catalog.get_table("db.t")

        write_s, write_cpu, _ = timed(lambda: write_commit(table, rows))
        update = rows.slice(0, rows.num_rows // 4)
        write_commit(table, update.set_column(1, "v", pc.negate(update.column("v"))))
        table = catalog.get_table("db.t")

        def read() -> pa.Table:
            builder = table.new_read_builder()
            return builder.new_read().to_arrow(builder.new_scan().plan().splits())

        read_s, read_cpu, result = timed(read)
        assert isinstance(result, pa.Table)
        check(result, data.num_rows, "paimon_pyspark pk")
        if pc.sum(pc.less(result.column("v"), 0)).as_py() != update.num_rows:
            raise AssertionError("the merge-read did not return the upserted values")
        size = parquet_bytes(os.path.join(warehouse, "db.db", "t"))
        return Run(write_s, read_s, write_cpu, read_cpu, size)
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def add(into: Timings, run: Run) -> None:
    into.write_s.append(run.write_s)
    into.read_s.append(run.read_s)
    into.write_cpu_s.append(run.write_cpu_s)
    into.read_cpu_s.append(run.read_cpu_s)
    into.data_bytes = run.data_bytes


def merge(into: Timings, got: Timings) -> None:
    """A peer's round: its timings appended, or its note kept (no further rounds run it)."""
    if not got.ok:
        into.note = got.note or "failed"
        return
    into.write_s += got.write_s
    into.read_s += got.read_s
    into.write_cpu_s += got.write_cpu_s
    into.read_cpu_s += got.read_cpu_s
    into.data_bytes = got.data_bytes


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
    local = {"ours": ours_once, "raw": raw_once, "ours pk": ours_pk_once}
    results = {name: Timings() for name in ("ours", "raw", *ENGINES, "ours pk")}
    versions: dict[str, str] = {}
    peers: dict[str, Peer] = {}
    folder = tempfile.mkdtemp(prefix="lakes-ipc-", dir=args.tmpdir)
    try:
        ipc_path = os.path.join(folder, "rows.arrow")
        with pa.OSFile(ipc_path, "wb") as sink, pyarrow.ipc.new_file(sink, data.schema) as w:
            w.write_table(data)
        for name, once in local.items():
            print(f"  warm-up {name} ...", file=sys.stderr)
            once(data, args.tmpdir)
        for engine in ENGINES:
            print(f"  warm-up {engine} ...", file=sys.stderr)
            peers[engine] = Peer(engine, ipc_path, args.tmpdir)
            versions[engine] = peers[engine].version
        names = list(results)
        for i in range(args.repeat):
            print(f"round {i + 1}/{args.repeat}, {args.rows:,} rows ...", file=sys.stderr)
            for name in names[i % len(names) :] + names[: i % len(names)]:
                os.sync()  # no engine's turn starts behind another's writeback
                if name in local:
                    add(results[name], local[name](data, args.tmpdir))
                else:
                    merge(results[name], peers[name].turn())
    finally:
        for peer in peers.values():
            peer.close()
        shutil.rmtree(folder, ignore_errors=True)

    print(f"\nAppend write and full read, {args.rows:,} rows, median of {args.repeat} rounds")
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
