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

With ``--pk-rows N`` instead of ``--data`` (bench/pk_write_read.py), it times the primary-key
bench: the rows come from bench/benchlib.py's generator (built before any timing), and each run
creates a fresh table (primary key ``p, k``, partitioned by ``p``, bucket 4), then times the first
commit (N rows), the upsert commit (N/10 rows) and the merge-read (``to_arrow`` of every split
plus benchlib.pk_totals, the checksum). The JSON has ``write_s``, ``upsert_s``, ``read_s``, their
``*_cpu_s``, ``rows``, ``upsert_rows``, ``totals`` (of the last run) and the versions.
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
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc
from pypaimon import CatalogFactory, Schema

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib


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


def pk_run(data: pa.Table, upsert: pa.Table, tmp_root: str | None) -> dict[str, Any]:
    """A fresh primary-key table: time the first commit, the upsert, then the merge-read."""
    warehouse = tempfile.mkdtemp(prefix="pypaimon-pk-bench-", dir=tmp_root)
    try:
        catalog = CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("db", False)
        schema = Schema.from_pyarrow_schema(
            data.schema,
            partition_keys=benchlib.PK_PARTITION_KEYS,
            primary_keys=benchlib.PK_PRIMARY_KEYS,
            options={"bucket": str(benchlib.PK_BUCKETS)},
        )
        catalog.create_table("db.pk", schema, False)
        table = catalog.get_table("db.pk")
        probe = table.new_batch_write_builder().new_write()
        rows = [conform(d, probe.table_pyarrow_schema) for d in (data, upsert)]
        probe.close()
        out: dict[str, Any] = {}
        for name, batch in zip(("write", "upsert"), rows, strict=True):
            gc.collect()
            cpu = time.process_time()
            start = time.perf_counter()
            builder = table.new_batch_write_builder()
            write = builder.new_write()
            commit = builder.new_commit()
            write.write_arrow(batch)
            commit.commit(write.prepare_commit())
            write.close()
            commit.close()
            out[f"{name}_s"] = time.perf_counter() - start
            out[f"{name}_cpu_s"] = time.process_time() - cpu

        table = catalog.get_table("db.pk")
        gc.collect()
        cpu = time.process_time()
        start = time.perf_counter()
        read_builder = table.new_read_builder()
        splits = read_builder.new_scan().plan().splits()
        out["totals"] = benchlib.pk_totals(read_builder.new_read().to_arrow(splits))
        out["read_s"] = time.perf_counter() - start
        out["read_cpu_s"] = time.process_time() - cpu
        return out
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def pk_main(rows: int, repeat: int, warmup: int, tmp_root: str | None) -> dict[str, Any]:
    data, upsert = benchlib.pk_arrow(rows, 1), benchlib.pk_arrow(rows, 2)
    for _ in range(warmup):
        pk_run(data, upsert, tmp_root)
    runs = [pk_run(data, upsert, tmp_root) for _ in range(repeat)]
    keys = ("write_s", "upsert_s", "read_s", "write_cpu_s", "upsert_cpu_s", "read_cpu_s")
    return {
        **{key: [r[key] for r in runs] for key in keys},
        "rows": rows,
        "upsert_rows": upsert.num_rows,
        "totals": runs[-1]["totals"] if runs else {},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="Arrow IPC file with the rows")
    parser.add_argument("--pk-rows", type=int, help="run the primary-key bench with N rows")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--partition-key", action="append", default=None)
    parser.add_argument("--tmpdir", default=None, help="where the warehouses go")
    args = parser.parse_args()
    if (args.data is None) == (args.pk_rows is None):
        parser.error("give exactly one of --data and --pk-rows")
    if args.pk_rows is not None:
        try:
            result = pk_main(args.pk_rows, args.repeat, args.warmup, args.tmpdir)
        except BaseException:
            import traceback

            traceback.print_exc()
            return 1
        versions = {"pyarrow": pa.__version__, "pypaimon": metadata.version("pypaimon")}
        print(json.dumps({**result, **versions}))
        return 0
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
