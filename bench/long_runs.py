"""Long runs: a stream write of 1,000 checkpoints and readers planning 1,000 times (issue 44).

Usage: ``.venv/bin/python bench/long_runs.py [--checkpoints C] [--rows R] [--tmpdir DIR]
[--trace]``. Defaults: C = 1,000, R = 100 rows per checkpoint.

Every scenario runs in a fresh child process on local disk. One ``StreamTableWrite`` (a fixed
commit user) writes R rows per checkpoint and its ``StreamTableCommit`` commits each; after
every commit two readers that live for the whole run plan once each: a batch scan of the latest
snapshot (``new_read_builder().new_scan().plan()`` on a table handle opened at the start) and a
stream scan (``new_stream_read_builder().new_scan()``, each ``plan()`` the next snapshot); the
batch plan is timed as the fastest of 3 (the machine's load left out). The tables keep a
bounded live state, so a plan has the same work at checkpoint 10 as at 1,000:

- **append**: ``bucket = 1`` (``bucket-key = id``), compacted at commit, as Java's bucketed
  append writer does;
- **pk**: primary key ``id``, ``bucket = 1``, the keys of checkpoint i are
  ``(i % 50) * R ..`` (5,000 keys upserted over and over), compacted at commit.

Each runs with the defaults (nothing expires within the run: ``snapshot.time-retained`` 1 h)
and with expiry at every commit (``snapshot.num-retained.min`` 5, ``.max`` 10), as a stream
running for days keeps its snapshots.

Reported per scenario, after checkpoints 10, C/2 and C: the RSS (``VmRSS`` of
``/proc/self/status``) and the blocks Python has allocated (``sys.getallocatedblocks``, after a
``gc.collect``); and the median time of 30 plans of each reader and of 30 checkpoints (write +
prepare_commit + commit): those right after checkpoint 10 and the last 30 before C/2 and C.
Manifests are merged every ``manifest.merge-min-count`` = 30 commits, so a plan's work cycles
with a period of about 30 and a window of 30 holds a whole cycle. The ratios are after C /
after 10 and after C / after C/2 (the caches full by then). Flat is about 1.0x; nothing is asserted
(tests/integration/test_long_runs_bounded.py checks the bounds structurally). ``--trace``
also prints tracemalloc's largest growths between the two points (slower: run it with fewer
checkpoints).
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow as pa

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "src"))

from paimon_pyspark import CatalogFactory, Schema  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])
KINDS = {
    "append": ({"bucket": "1", "bucket-key": "id"}, None),
    "pk": ({"bucket": "1"}, ["id"]),
}
EXPIRY = {"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "10"}
EARLY = 10
WINDOW = 30


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _point() -> dict[str, float]:
    gc.collect()
    return {"rss_mb": rss_mb(), "blocks": float(sys.getallocatedblocks())}


def _fastest_plan(reader: Any) -> float:
    """The fastest of 3 plans of the latest snapshot: the plan's own cost, not the machine's
    load (the first plans the new snapshot, the next two repeat it from the caches)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        reader.new_read_builder().new_scan().plan()
        best = min(best, time.perf_counter() - start)
    return best


def child(
    warehouse: str, kind: str, expiry: bool, checkpoints: int, rows: int, trace: bool
) -> dict[str, Any]:
    options, keys = KINDS[kind]
    options = {**options, **(EXPIRY if expiry else {}), "file.compression.zstd-level": "1"}
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys, options=options)
    )
    table = catalog.get_table("db.t")
    batch_reader = catalog.get_table("db.t")
    stream_scan = catalog.get_table("db.t").new_stream_read_builder().new_scan()
    builder = table.new_stream_write_builder("long-run")
    write, commit = builder.new_write(), builder.new_commit()
    times: dict[str, list[float]] = {"checkpoint_s": [], "batch_plan_s": [], "stream_plan_s": []}
    points: dict[str, dict[str, float]] = {}
    snaps = []
    if trace:
        tracemalloc.start(12)
    for i in range(1, checkpoints + 1):
        base = (i % 50) * rows if kind == "pk" else i * rows
        data = pa.table(
            {
                "id": pa.array(range(base, base + rows), pa.int64()),
                "v": pa.array([float(i)] * rows),
            },
            schema=SCHEMA,
        )
        start = time.perf_counter()
        write.write_arrow(data)
        commit.commit(write.prepare_commit(i), i)
        times["checkpoint_s"].append(time.perf_counter() - start)
        times["batch_plan_s"].append(_fastest_plan(batch_reader))
        start = time.perf_counter()
        stream_scan.plan()
        times["stream_plan_s"].append(time.perf_counter() - start)
        if i in (EARLY, checkpoints // 2, checkpoints):
            points[str(i)] = _point()
            if trace:
                snaps.append(tracemalloc.take_snapshot())
    write.close()
    commit.close()
    # times over a whole cycle of manifest merges: right after checkpoint 10, and the last ones
    for name, values in times.items():
        points[str(EARLY)][name] = statistics.median(values[EARLY : EARLY + WINDOW])
        mid = checkpoints // 2
        points[str(mid)][name] = statistics.median(values[mid - WINDOW : mid])
        points[str(checkpoints)][name] = statistics.median(values[-WINDOW:])
    result: dict[str, Any] = {"points": points}
    if trace and len(snaps) == 2:
        growth = snaps[1].compare_to(snaps[0], "traceback")[:8]
        result["trace"] = [
            f"{g.size_diff / 1024:+.0f} KiB, {g.count_diff:+d} blocks\n      "
            + "\n      ".join(g.traceback.format()[-10:])
            for g in growth
        ]
    return result


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoints", type=int, default=1000)
    p.add_argument("--rows", type=int, default=100)
    p.add_argument("--tmpdir", default=None)
    p.add_argument("--trace", action="store_true")
    p.add_argument("--only", default=None, help="one scenario, e.g. pk-expiry")
    p.add_argument("--child", nargs=3, default=None)
    a = p.parse_args()
    if a.child is not None:
        warehouse, kind, expiry = a.child
        print(json.dumps(child(warehouse, kind, expiry == "1", a.checkpoints, a.rows, a.trace)))
        return

    base = Path(tempfile.mkdtemp(prefix="paimon-long-runs-", dir=a.tmpdir))
    n = a.checkpoints
    cols = ["rss_mb", "blocks", "checkpoint_s", "batch_plan_s", "stream_plan_s"]
    mid = n // 2
    print(
        f"{n:,} checkpoints of {a.rows} rows; each value after checkpoint {EARLY}, {mid:,} and "
        f"{n:,} (ratios {n:,}/{EARLY} and {n:,}/{mid:,}); times are medians of {WINDOW} in ms: "
        f"checkpoints {EARLY + 1}-{EARLY + WINDOW}, {mid - WINDOW + 1}-{mid}, {n - WINDOW + 1}-{n}",
        flush=True,
    )
    try:
        for kind in KINDS:
            for expiry in (False, True):
                name = f"{kind}-{'expiry' if expiry else 'defaults'}"
                if a.only and a.only != name:
                    continue
                wh = base / name
                args = [sys.executable, __file__, "--checkpoints", str(n), "--rows", str(a.rows)]
                args += ["--trace"] if a.trace else []
                out = subprocess.run(
                    [*args, "--child", str(wh), kind, "1" if expiry else "0"],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                r = json.loads(out.stdout.strip().splitlines()[-1])
                print(name, flush=True)
                early, middle, late = (r["points"][str(k)] for k in (EARLY, mid, n))
                for c in cols:
                    scale = 1000 if c.endswith("_s") else 1
                    x, m, y = early[c] * scale, middle[c] * scale, late[c] * scale
                    fmt = ".0f" if c == "blocks" else ".1f" if c == "rss_mb" else ".2f"
                    print(
                        f"  {c:<14} {x:>10{fmt}} {m:>10{fmt}} {y:>10{fmt}}  "
                        f"{y / x:5.2f}x {y / m:5.2f}x",
                        flush=True,
                    )
                for t in r.get("trace", []):
                    print("    " + t, flush=True)
                shutil.rmtree(wh, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
