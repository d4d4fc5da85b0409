"""A streaming job for tests/integration/test_stream_write.py: run in a child process.

``python stream_write_job.py <warehouse> <table> <commit user> <checkpoints> <pause seconds>``
writes checkpoint k = 1..checkpoints (``checkpoint_rows``) with one long-lived StreamTableWrite
and commits it under identifier k, pausing between checkpoints; a restart replays from k = 1,
as a job replays from its source's beginning. Prints each committed identifier.
"""

from __future__ import annotations

import sys
import time

import pyarrow as pa

from paimon_pyspark import CatalogFactory

ROWS_PER_CHECKPOINT = 10
KEY_SPACE = 50


def checkpoint_rows(k: int, primary_key: bool) -> pa.Table:
    """Append tables: 10 new ids. Primary-key tables: 10 distinct keys of 0..49, overlapping
    earlier checkpoints' keys (upserts)."""
    js = range(ROWS_PER_CHECKPOINT)
    ids = [(k * 7 + j) % KEY_SPACE if primary_key else k * 100 + j for j in js]
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "v": pa.array([f"{k}-{j}" for j in js], pa.string())}
    )


def main(warehouse: str, name: str, user: str, checkpoints: int, pause: float) -> None:
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    builder = table.new_stream_write_builder().with_commit_user(user)
    primary_key = bool(table.primary_keys)
    with builder.new_write() as write, builder.new_commit() as commit:
        for k in range(1, checkpoints + 1):
            write.write_arrow(checkpoint_rows(k, primary_key))
            commit.commit(write.prepare_commit(k), k)
            print(k, flush=True)
            time.sleep(pause)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
