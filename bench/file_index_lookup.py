"""Point lookups (``id = k``) on an append table with a bloom-filter file index, against the same
table without one (issue 38, item 5).

Usage: ``.venv/bin/python bench/file_index_lookup.py [--rows N] [--files F] [--keys K]
[--repeat R] [--layout random|sorted|both] [--fpp P] [--tmpdir DIR] [--no-spark]``.
Defaults: N = 20,000,000, F = 200, K = 5, R = 3, both layouts, Java's default fpp (0.1).

One append table (``id`` bigint, ``v`` double; bucket-unaware, parquet zstd 1) of N rows in
exactly F files, written in one commit (one file per ``prepare_commit``), per layout:

- ``random``: the ids 0..N-1 shuffled over the whole table, so every file's min/max covers
  almost the whole id range and stats alone cannot prune: only the index skips files;
- ``sorted``: file i holds ids i*N/F .. (i+1)*N/F-1, shuffled within the file, so min/max
  stats already leave one file (the index has nothing left to do).

The indexed table is a copy of that table's directory with ``file-index.bloom-filter.columns =
id`` (``.items`` = N/F, ``.fpp`` = P if given) added by ALTER and built by
``procedures.rewrite_file_index`` (timed); at 100,000 items per file the filters are separate
``.index`` files. Then K ids, each looked up
R times in each table, through the Python API (plan + ``to_arrow``; the files planned are the
files the read opens) and through ``paimon_pyspark.spark.read(where="id = k")`` (Spark
``local[2]``, ``collect``). Every lookup must return exactly its row. Reported: files planned
per lookup, the median time per lookup, and the ratios of the unindexed to the indexed table
in the same run. The machine is shared: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "src"))

import benchlib  # noqa: E402

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema  # noqa: E402
from paimon_pyspark.catalog import FileSystemCatalog  # noqa: E402
from paimon_pyspark.procedures import rewrite_file_index  # noqa: E402
from paimon_pyspark.read.sql_predicate import parse_predicate  # noqa: E402
from paimon_pyspark.store.schema_change import SchemaChange  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.float64())])
OPTIONS = {"file.compression": "zstd", "file.compression.zstd-level": "1"}


def ids_of(layout: str, rows: int, files: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Each file's ids, in file order."""
    per = rows // files
    if layout == "random":
        every = rng.permutation(rows).astype(np.int64)
        return [every[i * per : (i + 1) * per] for i in range(files)]
    return [
        rng.permutation(np.arange(i * per, (i + 1) * per, dtype=np.int64)) for i in range(files)
    ]


def write_plain(catalog: FileSystemCatalog, chunks: list[np.ndarray], seed: int) -> float:
    catalog.create_table("db.plain", Schema.from_pyarrow_schema(SCHEMA, options=OPTIONS))
    table = catalog.get_table("db.plain")
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    builder = table.new_stream_write_builder()
    write = builder.new_write()
    messages = []
    for i, ids in enumerate(chunks):
        v = rng.random(len(ids))
        write.write_arrow(pa.table({"id": ids, "v": v}, SCHEMA))
        messages.extend(write.prepare_commit(i))
    builder.new_commit().commit(messages, len(chunks))
    write.close()
    return time.perf_counter() - start


def indexed_copy(
    catalog: FileSystemCatalog, warehouse: str, items: int, fpp: str | None
) -> tuple[float, Any]:
    """db.indexed: db.plain's files and schema, then the index option and the rewrite."""
    shutil.copytree(
        os.path.join(warehouse, "db.db", "plain"), os.path.join(warehouse, "db.db", "indexed")
    )
    catalog.alter_table(
        "db.indexed",
        [
            SchemaChange.set_option("file-index.bloom-filter.columns", "id"),
            SchemaChange.set_option("file-index.bloom-filter.id.items", str(items)),
            *([SchemaChange.set_option("file-index.bloom-filter.id.fpp", fpp)] if fpp else []),
        ],
    )
    start = time.perf_counter()
    result = rewrite_file_index(catalog, "db.indexed")
    return time.perf_counter() - start, result


def python_lookup(table: FileStoreTable, key: int) -> tuple[float, int]:
    start = time.perf_counter()
    rb = table.new_read_builder().with_filter(parse_predicate(f"id = {key}", table.fields, "t"))
    splits = rb.new_scan().plan().splits()
    got = rb.new_read().to_arrow(splits)
    took = time.perf_counter() - start
    if got.column("id").to_pylist() != [key]:
        raise SystemExit(f"python lookup of id {key} returned {got.num_rows} rows")
    return took, sum(len(s.files) for s in splits)


def spark_lookup(spark: Any, warehouse: str, name: str, key: int) -> float:
    from paimon_pyspark.spark import read

    start = time.perf_counter()
    got = read(spark, warehouse, name, where=f"id = {key}").collect()
    took = time.perf_counter() - start
    if [r["id"] for r in got] != [key]:
        raise SystemExit(f"spark lookup of id {key} returned {len(got)} rows")
    return took


def run_layout(layout: str, args: argparse.Namespace, tmp: str, spark: Any) -> dict[str, Any]:
    rng = np.random.default_rng(38)
    chunks = ids_of(layout, args.rows, args.files, rng)
    keys = [
        int(x) for x in rng.choice(args.rows // args.files * args.files, args.keys, replace=False)
    ]
    warehouse = tempfile.mkdtemp(dir=tmp)
    try:
        catalog = CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("db", ignore_if_exists=True)
        out: dict[str, Any] = {"layout": layout, "keys": keys}
        out["write_s"] = round(write_plain(catalog, chunks, 1), 2)
        del chunks
        took, result = indexed_copy(catalog, warehouse, args.rows // args.files, args.fpp)
        out["rewrite_file_index_s"] = round(took, 2)
        out["rewrite_result"] = list(result)
        index_files = list(Path(warehouse, "db.db", "indexed").rglob("*.index"))
        out["index_files"] = len(index_files)
        out["index_bytes"] = sum(p.stat().st_size for p in index_files)
        for name in ("plain", "indexed"):
            table = catalog.get_table(f"db.{name}")
            times, planned = [], []
            python_lookup(table, keys[0])  # warm-up
            for key in keys:
                for _ in range(args.repeat):
                    took, files = python_lookup(table, key)
                    times.append(took)
                    planned.append(files)
            out[f"{name}_files_planned"] = statistics.median(planned)
            out[f"{name}_python_s"] = round(statistics.median(times), 4)
            if spark is not None:
                spark_lookup(spark, warehouse, f"db.{name}", keys[0])  # warm-up
                spark_times = [
                    spark_lookup(spark, warehouse, f"db.{name}", key)
                    for key in keys
                    for _ in range(args.repeat)
                ]
                out[f"{name}_spark_s"] = round(statistics.median(spark_times), 4)
        out["files_ratio"] = round(out["plain_files_planned"] / out["indexed_files_planned"], 1)
        out["python_speedup"] = round(out["plain_python_s"] / out["indexed_python_s"], 2)
        if spark is not None:
            out["spark_speedup"] = round(out["plain_spark_s"] / out["indexed_spark_s"], 2)
        return out
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--keys", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--layout", choices=["random", "sorted", "both"], default="both")
    parser.add_argument("--tmpdir", default=None)
    parser.add_argument("--fpp", default=None, help="the filter's fpp (default Java's, 0.1)")
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="paimon-file-index-bench-", dir=args.tmpdir)
    spark = None
    if not args.no_spark:
        from spark_write_read import start_spark

        spark = start_spark(None)
    layouts = ["random", "sorted"] if args.layout == "both" else [args.layout]
    results = []
    try:
        for layout in layouts:
            results.append(run_layout(layout, args, tmp, spark))
    finally:
        if spark is not None:
            spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    load = benchlib.load_average()
    fpp = args.fpp or "0.1 (Java's default)"
    print(
        f"file index point lookups: {args.rows:,} rows in {args.files} files, bloom fpp {fpp}, "
        f"load {load}"
    )
    rows = [
        ("write s (no index)", "write_s"),
        ("rewrite_file_index s", "rewrite_file_index_s"),
        ("index files / bytes", None),
        ("files planned, no index", "plain_files_planned"),
        ("files planned, bloom", "indexed_files_planned"),
        ("python lookup s, no index", "plain_python_s"),
        ("python lookup s, bloom", "indexed_python_s"),
        ("python speedup", "python_speedup"),
        ("spark lookup s, no index", "plain_spark_s"),
        ("spark lookup s, bloom", "indexed_spark_s"),
        ("spark speedup", "spark_speedup"),
    ]
    print(f"{'':28}" + "".join(f"{r['layout']:>20}" for r in results))
    for label, key in rows:
        cells = []
        for r in results:
            if key is None:
                cells.append(f"{r['index_files']} / {r['index_bytes']:,}")
            else:
                cells.append(str(r.get(key, "-")))
        print(f"{label:28}" + "".join(f"{c:>20}" for c in cells))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
