"""Small helpers for tests: write one commit, read a whole table."""

from __future__ import annotations

import pyarrow as pa

from paimon_pyspark import FileStoreTable


def write_commit(table: FileStoreTable, data: pa.Table) -> list[int]:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        messages = write.prepare_commit()
    return builder.new_commit().commit(messages)


def read_all(table: FileStoreTable) -> pa.Table:
    rb = table.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def sort_rows(t: pa.Table) -> list[dict[str, object]]:
    rows = t.to_pylist()
    return sorted(rows, key=lambda r: [repr(r[k]) for k in sorted(r)])
