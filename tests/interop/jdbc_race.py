"""Our side of the JDBC commit race in tests/interop/test_jdbc_catalog_java.py.

One writer process opens the JDBC catalog from its options (``CatalogFactory.create``, as any
other process would), says it is ready, waits for the start signal, then makes ``commits`` batch
commits of two rows each, ``(writer, seq)`` and ``(writer, -seq - 1)``: the rows Java's
``JdbcRaceWriter`` makes, so the final table must hold every pair exactly once. Each commit has
a fresh commit user (a UUID), as Java's do (theirs prefixed ``java-<writer>_``): a commit user
given to the builder would make every commit scan the table's snapshots for an earlier commit of
that user (a driver's retry), reading all of them, each time.

The start signal is a file: every process (ours and Java's) creates ``ready-<name>`` in the
barrier directory and waits for ``go``, so the race starts after every JVM and interpreter is up;
after its first commit each of ours waits for each Java writer's ``first-java-<n>``.
Run by the test through a forkserver that imported this module once; ``python jdbc_race.py
<options JSON> <db> <table> <writer> <commits> <barrier dir>`` runs one writer by hand.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Mapping

import pyarrow as pa

from paimon_pyspark import CatalogFactory

SCHEMA = pa.schema([("writer", pa.int32()), ("seq", pa.int32()), ("payload", pa.string())])
READY_TIMEOUT_S = 120.0


def wait_for_go(barrier: str, name: str) -> None:
    """Say ``name`` is ready and wait until the test says go."""
    open(os.path.join(barrier, f"ready-{name}"), "w").close()
    go = os.path.join(barrier, "go")
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            raise TimeoutError(f"writer {name}: no start signal in {barrier}")
        time.sleep(0.005)


def writer(
    options: Mapping[str, str], db: str, table_name: str, writer_id: int, commits: int, barrier: str
) -> None:
    catalog = CatalogFactory.create(dict(options))
    table = catalog.get_table(f"{db}.{table_name}")
    batches = [
        pa.table(
            {"writer": [writer_id, writer_id], "seq": [seq, -seq - 1], "payload": ["ours", "ours"]},
            schema=SCHEMA,
        )
        for seq in range(commits)
    ]
    wait_for_go(barrier, f"ours-{writer_id}")
    for i, batch in enumerate(batches):
        builder = table.new_batch_write_builder(f"ours-{writer_id}_{uuid.uuid4()}")
        with builder.new_write() as write:
            write.write_arrow(batch)
            builder.new_commit().commit(write.prepare_commit())
        if i == 0:
            wait_for_java(barrier)


def wait_for_java(barrier: str) -> None:
    """Wait until every Java writer has made its first commit: a JVM's first commit takes
    seconds (class loading, the JIT), ours tens of milliseconds, so without this our writers
    could finish before Java's second commit and the table would see no race at all."""
    names = os.listdir(barrier)
    javas = sum(n.startswith("ready-java-") for n in names)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while sum(n.startswith("first-java-") for n in os.listdir(barrier)) < javas:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no first Java commit in {barrier}")
        time.sleep(0.005)


def main(argv: list[str]) -> None:
    options, db, table, writer_id, commits, barrier = argv
    writer(json.loads(options), db, table, int(writer_id), int(commits), barrier)


if __name__ == "__main__":
    main(sys.argv[1:])
