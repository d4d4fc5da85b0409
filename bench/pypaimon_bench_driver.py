"""Times pypaimon's append write and full read; run by bench/append_write_read.py.

pypaimon 2.1 pins pyarrow<20, so it cannot share a process with paimon_pyspark: this script runs
inside the pypaimon venv and imports only the standard library, pyarrow and pypaimon. The rows
arrive as an Arrow IPC file, loaded before any timing starts. Each timed run uses a fresh
warehouse and does what bench/append_write_read.py does with our API:

- write: ``new_batch_write_builder()`` .. ``write_arrow`` .. ``prepare_commit`` .. ``commit``
  (and closing the write and commit), on a table created beforehand (not timed);
- read: ``new_read_builder()`` .. ``new_scan().plan().splits()`` .. ``new_read().to_arrow``.

Usage: ``python pypaimon_bench_driver.py --data rows.arrow --repeat 3 [--warmup 1]
[--partition-key dt] [--tmpdir DIR]``. Prints one JSON object on the last stdout line:
``{"write_s": [...], "read_s": [...], "write_cpu_s": [...], "read_cpu_s": [...], "rows": n,
"data_bytes": n, "pyarrow": v, "pypaimon": v}`` (wall-clock and process CPU seconds of the timed
runs, warm-up excluded). Exits with status 1 and a traceback on stderr on failure.
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
from importlib import metadata
from typing import Any

import pyarrow as pa
import pyarrow.ipc
from pypaimon import CatalogFactory, Schema


def load_rows(path: str) -> pa.Table:
    """Read the IPC file fully into memory (not memory-mapped, so timing sees no page faults)."""
    with pa.OSFile(path, "rb") as source:
        return pyarrow.ipc.open_file(source).read_all()


def conform(data: pa.Table, target: pa.Schema) -> pa.Table:
    """Cast the rows to the table's Arrow schema once, outside the timing, if they differ."""
    data = data.select(target.names)
    if data.schema.equals(target, check_metadata=False):
        return data
    return data.cast(target, safe=True)


def data_bytes(root: str) -> int:
    """Total size of the Parquet data files under a table directory."""
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".parquet"):
                total += os.path.getsize(os.path.join(folder, name))
    return total


def one_run(data: pa.Table, partition_keys: list[str], tmp_root: str | None) -> dict[str, Any]:
    """Create a table in a fresh warehouse, then time one write+commit and one full read."""
    warehouse = tempfile.mkdtemp(prefix="pypaimon-bench-", dir=tmp_root)
    try:
        catalog = CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("db", False)
        catalog.create_table(
            "db.t", Schema.from_pyarrow_schema(data.schema, partition_keys=partition_keys), False
        )
        table = catalog.get_table("db.t")
        builder0 = table.new_batch_write_builder()
        probe = builder0.new_write()
        rows = conform(data, probe.table_pyarrow_schema)
        probe.close()

        gc.collect()
        cpu = time.process_time()
        start = time.perf_counter()
        builder = table.new_batch_write_builder()
        write = builder.new_write()
        commit = builder.new_commit()
        write.write_arrow(rows)
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()
        write_s = time.perf_counter() - start
        write_cpu_s = time.process_time() - cpu

        table = catalog.get_table("db.t")
        gc.collect()
        cpu = time.process_time()
        start = time.perf_counter()
        read_builder = table.new_read_builder()
        splits = read_builder.new_scan().plan().splits()
        result = read_builder.new_read().to_arrow(splits)
        read_s = time.perf_counter() - start
        read_cpu_s = time.process_time() - cpu

        if result.num_rows != data.num_rows:
            raise AssertionError(f"pypaimon read {result.num_rows} rows, wrote {data.num_rows}")
        size = data_bytes(os.path.join(warehouse, "db.db", "t"))
        return {
            "write_s": write_s,
            "read_s": read_s,
            "write_cpu_s": write_cpu_s,
            "read_cpu_s": read_cpu_s,
            "data_bytes": size,
        }
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="Arrow IPC file with the rows")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--partition-key", action="append", default=None)
    parser.add_argument("--tmpdir", default=None, help="where the warehouses go")
    args = parser.parse_args()
    try:
        data = load_rows(args.data)
        keys = args.partition_key if args.partition_key is not None else ["dt"]
        for _ in range(args.warmup):
            one_run(data, keys, args.tmpdir)
        runs = [one_run(data, keys, args.tmpdir) for _ in range(args.repeat)]
    except BaseException:  # the caller reads the traceback from stderr
        import traceback

        traceback.print_exc()
        return 1
    print(
        json.dumps(
            {
                "write_s": [r["write_s"] for r in runs],
                "read_s": [r["read_s"] for r in runs],
                "write_cpu_s": [r["write_cpu_s"] for r in runs],
                "read_cpu_s": [r["read_cpu_s"] for r in runs],
                "rows": data.num_rows,
                "data_bytes": runs[-1]["data_bytes"] if runs else 0,
                "pyarrow": pa.__version__,
                "pypaimon": metadata.version("pypaimon"),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
