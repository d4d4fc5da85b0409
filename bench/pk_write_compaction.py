"""Compaction while writing: 100 small upsert commits into a 2,000,000-row primary-key table.

Usage: ``.venv/bin/python bench/pk_write_compaction.py [--rows N] [--commits C] [--upserts U]
[--tmpdir DIR]``. Defaults: N = 2,000,000, C = 100, U = 20,000 (issue 15, item 3).

The table: primary key (``p``, ``k``), partitioned by ``p`` (4 partitions), no ``bucket`` option
(dynamic bucket, Java's default mode), parquet zstd level 1; its first commit holds keys
0..N-1 (``benchlib.pk_arrow(N, 1)``). Then C commits of U upserts each (random existing keys,
seeded, over every partition; commit c writes version c + 2). Two runs, one after the other,
each into a fresh table: with compaction while writing (Java's defaults) and with
``write-only = true``. Reported per run:

- the whole run's wall-clock and CPU time (the C commits, not the first load nor the
  file counting between them);
- the most files any bucket held after any commit, against ``num-sorted-run.stop-trigger``;
- the live file count after the C commits;
- the merge-read of the whole table after the C commits (median of 3), then after a full
  compaction (``procedures.compact``, compact_strategy ``full``), and their ratio (target of
  the compacting run: within 1.5x); every read's checksum must match the model's.

- the decode alone: every live file of every bucket read with its system columns and no
  merge, as the merge-read reads them (the part of the read the file layout decides).

A third run is the Java connector (``java_connector_driver.py``'s ``pk_commits`` op: Spark 3.5,
Paimon 0.9.0, its defaults, the same keys per commit read from Parquet files this script
writes), if ``make bench`` built it: its commits' time, most files per bucket, live files,
snapshot kinds and merge-read, its checksum checked against the model.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parent
PROJECT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "src"))

import benchlib  # noqa: E402

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema  # noqa: E402
from paimon_pyspark.errors import UnsupportedOptionError  # noqa: E402
from paimon_pyspark.io.data_file_reader import read_kv_records  # noqa: E402
from paimon_pyspark.procedures import compact  # noqa: E402
from paimon_pyspark.write.compact_manager import compact_written_buckets  # noqa: E402

OPTIONS = {"file.format": "parquet", "file.compression": "zstd", "file.compression.zstd-level": "1"}
READ_TARGET = 1.5


def create(warehouse: str, write_only: bool) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    options = {**OPTIONS, "write-only": "true" if write_only else "false"}
    schema = Schema.from_pyarrow_schema(
        benchlib.pk_arrow(1, 1).schema,
        partition_keys=benchlib.PK_PARTITION_KEYS,
        primary_keys=benchlib.PK_PRIMARY_KEYS,
        options=options,
    )
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def commit(table: FileStoreTable, data: pa.Table) -> int:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        return len(builder.new_commit().commit(write.prepare_commit()))


def files_per_bucket(table: FileStoreTable) -> Counter[tuple[bytes, int]]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return Counter((e.partition, e.bucket) for e in table.manifest_io.live_entries(snapshot))


def merge_read(table: FileStoreTable, expected: dict[str, float]) -> float:
    """Median wall seconds of 3 whole-table merge-reads, each checked against the model."""
    times = []
    for _ in range(3):
        gc.collect()
        start = time.perf_counter()
        rb = table.new_read_builder()
        data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        times.append(time.perf_counter() - start)
        problem = benchlib.totals_mismatch(expected, benchlib.pk_totals(data))
        if problem is not None:
            raise SystemExit(f"merge-read checksum mismatch: {problem}")
    return statistics.median(times)


def decode_only(table: FileStoreTable) -> float:
    """Median wall seconds of 3 reads of every live file with its system columns, unmerged,
    bucket by bucket on the merge-read's threads: what the layout costs before any merge."""
    splits = table.new_read_builder().new_scan().plan().splits()

    def one(split: Any) -> int:
        return int(read_kv_records(table.store, split.bucket_path, split.files).num_rows)

    times = []
    for _ in range(3):
        gc.collect()
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=8) as pool:
            sum(pool.map(one, splits))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def full_compaction(warehouse: str) -> None:
    """``procedures.compact`` full; where it cannot compact this bucket mode yet, every bucket
    is compacted fully as a writer with ``full-compaction.delta-commits`` would."""
    catalog = CatalogFactory.create({"warehouse": warehouse})
    try:
        compact(catalog, "db.t", compact_strategy="full")
    except UnsupportedOptionError:
        table = catalog.get_table("db.t").copy(
            {"full-compaction.delta-commits": "0", "write-only": "false"}
        )
        buckets = set(files_per_bucket(table))
        messages = compact_written_buckets(table.store, buckets)
        table.new_batch_write_builder().new_commit().commit(messages)


def upsert_ids(rows: int, commits: int, per_commit: int) -> list[np.ndarray]:
    rng = np.random.default_rng(15)
    return [rng.choice(rows, per_commit, replace=False).astype(np.int64) for _ in range(commits)]


def upserts(ids: list[np.ndarray]) -> list[pa.Table]:
    return [benchlib.pk_rows(keys, c + 2) for c, keys in enumerate(ids)]


def run_java(
    rows: int,
    ids: list[np.ndarray],
    expected: dict[str, float],
    tmp: str,
    options: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The same commits through the Java connector (``options``: more table properties);
    {"note": why} when it cannot run."""
    python = os.environ.get("JAVA_CONNECTOR_PYTHON") or str(PROJECT / ".venv-spark35/bin/python")
    jar = os.environ.get("PAIMON_SPARK_JAR") or str(
        PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"
    )
    if not os.path.exists(python) or not os.path.exists(jar):
        return {"note": "Java connector baseline not built: run make bench"}
    ids_dir = tempfile.mkdtemp(dir=tmp, prefix="ids-")
    for c, keys in enumerate(ids):
        pq.write_table(pa.table({"id": keys}), os.path.join(ids_dir, f"c{c:04d}.parquet"))
    command = {"op": "pk_commits", "rows": rows, "commits": len(ids), "ids_dir": ids_dir}
    command["tmpdir"] = tmp
    if options:
        command["options"] = options
    proc = subprocess.run(
        [python, str(BENCH / "java_connector_driver.py"), json.dumps(command)],
        capture_output=True,
        text=True,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"note": f"failed: {proc.stderr.strip().splitlines()[-1:]}"}
    result: dict[str, Any] = json.loads(lines[-1])
    bad = benchlib.totals_mismatch(expected, result["totals"])
    if bad:
        return {"note": f"wrong result: {bad}"}
    return result


def model(rows: int, batches: list[pa.Table]) -> dict[str, float]:
    """PK_TOTALS of the table after every commit, from the generator alone."""
    version = np.ones(rows, dtype=np.int64)
    for c, b in enumerate(batches):
        version[b.column("k").to_numpy()] = c + 2
    parts = [
        benchlib.pk_rows(np.flatnonzero(version == v).astype(np.int64), int(v))
        for v in np.unique(version)
    ]
    return benchlib.pk_totals(pa.concat_tables(parts))


def run(tmp: str, rows: int, batches: list[pa.Table], write_only: bool) -> dict[str, Any]:
    warehouse = tempfile.mkdtemp(dir=tmp)
    try:
        table = create(warehouse, write_only)
        commit(table, benchlib.pk_arrow(rows, 1))
        stop = table.options.num_sorted_run_stop_trigger
        most, compactions, wall, cpu = 0, 0, 0.0, 0.0
        for data in batches:
            gc.collect()
            cpu0, start = time.process_time(), time.perf_counter()
            compactions += commit(table, data) - 1
            wall, cpu = wall + time.perf_counter() - start, cpu + time.process_time() - cpu0
            most = max(most, max(files_per_bucket(table).values()))  # not timed
        expected = model(rows, batches)
        live = sum(files_per_bucket(table).values())
        read_before = merge_read(table, expected)
        decode = decode_only(table)
        full_compaction(warehouse)
        table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
        read_after = merge_read(table, expected)
        return {
            "write_only": write_only,
            "commits_s": round(wall, 2),
            "commits_cpu_s": round(cpu, 2),
            "compact_snapshots": compactions,
            "max_files_per_bucket": most,
            "stop_trigger": stop,
            "live_files": live,
            "merge_read_s": round(read_before, 3),
            "decode_only_s": round(decode, 3),
            "read_after_full_compaction_s": round(read_after, 3),
            "read_ratio": round(read_before / read_after, 2),
        }
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--upserts", type=int, default=20_000)
    parser.add_argument("--tmpdir", default=None)
    parser.add_argument("--no-java", action="store_true", help="skip the Java connector run")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(dir=args.tmpdir, prefix="pk-write-compaction-")
    try:
        ids = upsert_ids(args.rows, args.commits, args.upserts)
        batches = upserts(ids)
        results = [run(tmp, args.rows, batches, w) for w in (False, True)]
        java = {"note": "skipped (--no-java)"}
        if not args.no_java:
            java = run_java(args.rows, ids, model(args.rows, batches), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    on, off = results
    print(
        f"{args.commits} commits of {args.upserts:,} upserts into {args.rows:,} rows, 4 partitions"
    )
    print(f"load average: {benchlib.load_average()}")
    header = ("", "compaction on write", "write-only")
    lines = [
        ("commits, wall s", on["commits_s"], off["commits_s"]),
        ("commits, CPU s", on["commits_cpu_s"], off["commits_cpu_s"]),
        ("COMPACT snapshots", on["compact_snapshots"], off["compact_snapshots"]),
        ("most files in a bucket", on["max_files_per_bucket"], off["max_files_per_bucket"]),
        ("live files after", on["live_files"], off["live_files"]),
        ("merge-read s", on["merge_read_s"], off["merge_read_s"]),
        ("decode alone (no merge) s", on["decode_only_s"], off["decode_only_s"]),
        (
            "read after full compaction s",
            on["read_after_full_compaction_s"],
            off["read_after_full_compaction_s"],
        ),
        ("merge-read / compacted read", on["read_ratio"], off["read_ratio"]),
    ]
    for row in (header, *lines):
        print(f"{row[0]:<32}{row[1]!s:>22}{row[2]!s:>14}")
    ok_files = on["max_files_per_bucket"] <= on["stop_trigger"]
    ok_read = on["read_ratio"] <= READ_TARGET
    stop = on["stop_trigger"]
    print(f"files per bucket <= stop-trigger ({stop}): {'met' if ok_files else 'MISSED'}")
    print(f"merge-read within {READ_TARGET}x of compacted: {'met' if ok_read else 'MISSED'}")
    print(f"run time vs write-only: {on['commits_s'] / off['commits_s']:.2f}x")
    if "note" in java:
        print(f"java connector: {java['note']}")
    else:
        print(f"java connector ({java['connector']} on spark {java['spark']}, its defaults):")
        print(f"  commits, wall s {java['commits_s']:.2f}, CPU s {java['commits_cpu_s']:.2f}")
        print(f"  snapshots {java['snapshot_kinds']}")
        print(f"  most files in a bucket {java['max_files_per_bucket']}")
        print(f"  live files after {java['live_files']}")
        print(f"  merge-read s {java['merge_read_s']:.3f}")
        if "read_after_full_compaction_s" in java:
            after = java["read_after_full_compaction_s"]
            print(f"  read after full compaction s {after:.3f}")
            print(f"  merge-read / compacted read {java['merge_read_s'] / after:.2f}")
        else:
            print(f"  full compaction: {java.get('full_compaction')}")
        print(f"  ours vs java, commits wall: {on['commits_s'] / java['commits_s']:.2f}x")
    print(json.dumps({"compaction_on_write": on, "write_only": off, "java": java}))


if __name__ == "__main__":
    main()
