"""Distributed write: N worker processes write data files, one driver commits them once.

Each worker opens the table itself, writes its slice of the input with its own TableWrite and
returns its commit messages, either as CommitMessageSerializer bytes (the same bytes Java
Paimon's CommitMessageSerializer reads and writes) or pickled. The driver decodes the messages of
every worker and commits them in one snapshot, under its own commit user and a commit
identifier, so that a driver retrying after a crash cannot commit the same files twice.

Run from the repository root (after ``make demo`` or ``pip install -e .``):

    python examples/distributed_write.py [WAREHOUSE_DIR]

The same is done with multiprocessing (spawn), and with Ray when it is installed.
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import tempfile
import uuid
from collections.abc import Sequence

import pyarrow as pa

from paimon_pyspark import CatalogFactory, CommitMessage, CommitMessageSerializer, Schema

N_WORKERS = 4
ROWS_PER_RUN = 40_000
TABLE = "demo.events"


def make_rows(lo: int, hi: int) -> pa.Table:
    """Rows ``lo..hi`` of a deterministic input, so every worker can build its own slice."""
    ids = pa.array(range(lo, hi), pa.int64())
    return pa.table(
        {
            "event_id": ids,
            "user": [f"user-{i % 997}" for i in range(lo, hi)],
            "amount": pa.array([i * 0.25 for i in range(lo, hi)], pa.float64()),
            "day": [f"2026-08-{i % 7 + 1:02d}" for i in range(lo, hi)],
        }
    )


def write_slice(warehouse: str, lo: int, hi: int, encoding: str) -> bytes:
    """Runs in a worker: write rows ``lo..hi`` and return the commit messages as bytes."""
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(TABLE)
    with table.new_batch_write_builder().new_write() as write:
        write.write_arrow(make_rows(lo, hi))
        messages = write.prepare_commit()
    if encoding == "serialized":
        return CommitMessageSerializer().serialize_list(messages)
    return pickle.dumps(messages)


def decode(payloads: Sequence[bytes], encoding: str) -> list[CommitMessage]:
    """On the driver: every worker's messages, in one list."""
    messages: list[CommitMessage] = []
    serializer = CommitMessageSerializer()
    for payload in payloads:
        if encoding == "serialized":
            messages += serializer.deserialize_list(serializer.get_version(), payload)
        else:
            messages += pickle.loads(payload)
    return messages


def slices(run: int) -> list[tuple[int, int]]:
    start = run * ROWS_PER_RUN
    step = ROWS_PER_RUN // N_WORKERS
    return [(start + i * step, start + (i + 1) * step) for i in range(N_WORKERS)]


def commit_once(
    warehouse: str, commit_user: str, identifier: int, messages: list[CommitMessage]
) -> None:
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(TABLE)
    builder = table.new_batch_write_builder(commit_user=commit_user)
    snapshots = builder.new_commit().commit(messages, commit_identifier=identifier)
    # A driver that crashed after committing and retries, with the same commit user and
    # identifier, is a no-op: the identifier is already committed.
    retried = builder.new_commit().commit(messages, commit_identifier=identifier)
    files = sum(len(m.new_files) for m in messages)
    print(
        f"  commit {identifier}: {len(messages)} messages, {files} files -> snapshots "
        f"{snapshots}; retried -> {retried}"
    )


def run_multiprocessing(warehouse: str, commit_user: str, run: int, encoding: str) -> None:
    print(f"multiprocessing, {N_WORKERS} workers, {encoding} messages")
    context = multiprocessing.get_context("spawn")
    with context.Pool(N_WORKERS) as pool:
        payloads = pool.starmap(
            write_slice, [(warehouse, lo, hi, encoding) for lo, hi in slices(run)]
        )
    commit_once(warehouse, commit_user, run + 1, decode(payloads, encoding))


def run_ray(warehouse: str, commit_user: str, run: int) -> bool:
    try:
        import ray
    except ImportError:
        print("Ray is not installed; skipping the Ray variant (pip install ray)")
        return False
    print(f"Ray, {N_WORKERS} tasks, serialized messages")
    ray.init(num_cpus=N_WORKERS, include_dashboard=False, log_to_driver=False)
    try:
        task = ray.remote(write_slice)
        payloads = ray.get([task.remote(warehouse, lo, hi, "serialized") for lo, hi in slices(run)])
    finally:
        ray.shutdown()
    commit_once(warehouse, commit_user, run + 1, decode(payloads, "serialized"))
    return True


def main(argv: list[str]) -> None:
    warehouse = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="paimon-distributed-")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("demo", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(make_rows(0, 1).schema, partition_keys=["day"])
    catalog.create_table(TABLE, schema, ignore_if_exists=True)
    table = catalog.get_table(TABLE)
    if table.snapshot_manager.latest_id() is not None:
        raise SystemExit(f"{TABLE} in {warehouse} already has data; use an empty warehouse")
    print(f"warehouse: {warehouse}")

    commit_user = f"driver-{uuid.uuid4()}"  # the driver's, kept across its retries
    run_multiprocessing(warehouse, commit_user, 0, "serialized")
    run_multiprocessing(warehouse, commit_user, 1, "pickled")
    runs = 3 if run_ray(warehouse, commit_user, 2) else 2

    rb = table.new_read_builder()
    ids = rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("event_id").to_pylist()
    assert sorted(ids) == list(range(runs * ROWS_PER_RUN)), "every row exactly once"
    print(f"read back {len(ids)} rows in {table.snapshot_manager.latest_id()} snapshots: ok")


if __name__ == "__main__":
    main(sys.argv)
