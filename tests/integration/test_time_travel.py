"""Reads at a tag (``scan.tag-name``) or a time (``scan.timestamp-millis``, ``scan.timestamp``),
as Java's batch scans choose their snapshot."""

from __future__ import annotations

import datetime
import time

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CorruptTableError, InvalidArgumentError, OptionError

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])


def commit(table: FileStoreTable, keys: list[int]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(pa.table({"k": keys, "v": [f"v{k}" for k in keys]}, schema=SCHEMA))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def keys(table: FileStoreTable) -> list[int]:
    rb = table.new_read_builder()
    return sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("k").to_pylist())


@pytest.fixture
def table(catalog: FileSystemCatalog) -> FileStoreTable:
    options = {"bucket": "1", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options=options)
    )
    return catalog.get_table("db.t")


def test_a_tag_reads_its_snapshot_even_after_expiry(table: FileStoreTable) -> None:
    commit(table, [1, 2])
    table.create_tag("first")
    commit(table, [3])
    commit(table, [4])  # snapshot 1 expires: the tag keeps its files
    assert table.snapshot_manager.earliest_id() == 3
    assert keys(table.copy({"scan.tag-name": "first"})) == [1, 2]
    assert keys(table) == [1, 2, 3, 4]
    with pytest.raises(CorruptTableError, match="tag 'nope'"):
        keys(table.copy({"scan.tag-name": "nope"}))


def test_a_time_reads_the_snapshot_at_or_before_it(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.tt", Schema.from_pyarrow_schema(SCHEMA))
    table = catalog.get_table("db.tt")
    times = []
    for k in range(3):
        commit(table, [k])
        latest = table.snapshot_manager.latest()
        assert latest is not None
        times.append(latest.time_millis)
        time.sleep(0.01)
    assert keys(table.copy({"scan.timestamp-millis": str(times[1])})) == [0, 1]
    assert keys(table.copy({"scan.timestamp-millis": str(times[2] + 10_000)})) == [0, 1, 2]
    local = datetime.datetime.fromtimestamp(times[0] / 1000).isoformat(sep=" ")
    assert keys(table.copy({"scan.timestamp": local})) == [0]
    with pytest.raises(InvalidArgumentError, match="no snapshot earlier than or equal"):
        keys(table.copy({"scan.timestamp-millis": str(times[0] - 1)}))
    with pytest.raises(OptionError, match="scan.timestamp"):
        keys(table.copy({"scan.timestamp": "yesterday"}))


def test_one_way_to_choose_the_snapshot(table: FileStoreTable) -> None:
    commit(table, [1])
    table.create_tag("t1")
    with pytest.raises(OptionError, match="set only one"):
        keys(table.copy({"scan.tag-name": "t1", "scan.snapshot-id": "1"}))
    commit(table, [2])
    # a later copy's choice (an internal pin) replaces an earlier copy's
    at_tag = table.copy({"scan.tag-name": "t1"})
    assert keys(at_tag) == [1]
    assert keys(at_tag.copy({"scan.snapshot-id": "2"})) == [1, 2]
