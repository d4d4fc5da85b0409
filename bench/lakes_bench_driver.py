"""Times deltalake's or pyiceberg's append write and full read; run by bench/core_vs_lakes.py.

This script runs in the peers' venv (``.venv-lakes``, built by ``make bench`` from
bench/lakes-requirements.txt) and imports only the standard library, pyarrow and the engine it
times. The rows arrive as an Arrow IPC file, loaded before any timing starts. Each timed run
writes a fresh table partitioned by ``--partition-key``, Parquet with zstd at ``--zstd-level``:

- deltalake: ``write_deltalake(path, rows, partition_by=[key], writer_properties=...)``, then
  ``DeltaTable(path).to_pyarrow_table()``;
- pyiceberg: a SQL catalog on SQLite in the run's directory, a table of the rows' Arrow schema
  with ``write.parquet.compression-*`` properties and an identity partition on the key, made
  beforehand (not timed), then ``table.append(rows)`` and ``table.scan().to_arrow()``.

Usage: ``python lakes_bench_driver.py --engine deltalake|pyiceberg --data rows.arrow
[--repeat 3] [--warmup 1] [--partition-key dt] [--zstd-level 1] [--tmpdir DIR]``. Prints one
JSON object on the last stdout line: ``{"engine", "version", "pyarrow", "write_s", "read_s",
"write_cpu_s", "read_cpu_s", "rows", "data_bytes"}`` (timed runs only, warm-up excluded). Exits
with status 1 and a traceback on stderr when the rows read back differ in count. With
``--serve``, after the warm-ups it prints that object with ``"ready": true``, then runs once per
``run`` line on stdin, printing the object of that run, until stdin ends: the caller takes turns
with other engines while this one stays warm.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

import pyarrow as pa
import pyarrow.ipc


def load_rows(path: str) -> pa.Table:
    with pa.OSFile(path, "rb") as source:
        return pyarrow.ipc.open_file(source).read_all()


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def parquet_bytes(root: str) -> int:
    return sum(
        os.path.getsize(os.path.join(d, n))
        for d, _, names in os.walk(root)
        for n in names
        if n.endswith(".parquet")
    )


class Delta:
    def __init__(self, key: str, level: int) -> None:
        import deltalake

        self.lib = deltalake
        self.key = key
        self.props = deltalake.WriterProperties(compression="ZSTD", compression_level=level)

    def prepare(self, root: str) -> str:
        return os.path.join(root, "delta")

    def write(self, path: str, rows: pa.Table) -> None:
        self.lib.write_deltalake(path, rows, partition_by=[self.key], writer_properties=self.props)

    def read(self, path: str) -> pa.Table:
        return self.lib.DeltaTable(path).to_pyarrow_table()


class Iceberg:
    def __init__(self, key: str, level: int, schema: pa.Schema) -> None:
        self.key = key
        self.level = level
        self.schema = schema

    def prepare(self, root: str) -> Any:
        from pyiceberg.catalog.sql import SqlCatalog

        catalog = SqlCatalog(
            "bench", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/warehouse"
        )
        catalog.create_namespace("db")
        properties = {
            "write.parquet.compression-codec": "zstd",
            "write.parquet.compression-level": str(self.level),
        }
        table = catalog.create_table("db.t", schema=self.schema, properties=properties)
        with table.update_spec() as spec:
            spec.add_identity(self.key)
        return table

    def write(self, table: Any, rows: pa.Table) -> None:
        table.append(rows)

    def read(self, table: Any) -> pa.Table:
        return table.refresh().scan().to_arrow()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("deltalake", "pyiceberg"), required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--partition-key", default="dt")
    parser.add_argument("--zstd-level", type=int, default=1)
    parser.add_argument("--tmpdir", default=None)
    parser.add_argument(
        "--serve",
        action="store_true",
        help="after the warm-ups, run once per 'run' line on stdin, one JSON line each",
    )
    args = parser.parse_args()
    rows = load_rows(args.data)
    engine: Any
    if args.engine == "deltalake":
        engine = Delta(args.partition_key, args.zstd_level)
    else:
        engine = Iceberg(args.partition_key, args.zstd_level, rows.schema)
    out: dict[str, Any] = {
        "engine": args.engine,
        "version": metadata.version(args.engine),
        "pyarrow": pa.__version__,
        "rows": rows.num_rows,
    }
    for key in ("write_s", "read_s", "write_cpu_s", "read_cpu_s"):
        out[key] = []

    def once(record: bool) -> None:
        root = tempfile.mkdtemp(prefix=f"{args.engine}-", dir=args.tmpdir)
        try:
            target = engine.prepare(root)
            write_wall, write_cpu, _ = timed(lambda t=target: engine.write(t, rows))
            read_wall, read_cpu, got = timed(lambda t=target: engine.read(t))
            if got.num_rows != rows.num_rows:
                raise RuntimeError(f"{args.engine} read {got.num_rows} rows of {rows.num_rows}")
            out["data_bytes"] = parquet_bytes(root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        if record:
            out["write_s"].append(write_wall)
            out["read_s"].append(read_wall)
            out["write_cpu_s"].append(write_cpu)
            out["read_cpu_s"].append(read_cpu)

    for _ in range(args.warmup):
        once(False)
    if args.serve:
        print(json.dumps({**out, "ready": True}), flush=True)
        for line in sys.stdin:
            if line.strip() != "run":
                break
            for key in ("write_s", "read_s", "write_cpu_s", "read_cpu_s"):
                out[key] = []
            once(True)
            print(json.dumps(out), flush=True)
        return 0
    for _ in range(args.repeat):
        once(True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
