"""Consumers between Java Paimon 1.4.2 and us: a stream with ``consumer-id`` on either side
resumes where the other one's stream stopped (the same ``consumer/consumer-<id>`` file), and
snapshot expiry on our side keeps what Java's consumer still needs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from consumer_oracle import consume
from java_oracle import JavaOracle

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.store.managers import ConsumerManager

pytestmark = pytest.mark.java

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _write(table: FileStoreTable, ids: list[int], tag: str) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"id": ids, "v": [f"{tag}{i}" for i in ids]}, SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def test_java_and_python_streams_resume_from_each_others_consumer(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    warehouse = str(tmp_path)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            primary_keys=["id"],
            options={
                "bucket": "1",
                "snapshot.num-retained.min": "1",
                "snapshot.time-retained": "1 ms",
            },
        ),
    )
    table = catalog.get_table("db.t")
    for s in range(3):
        _write(table, [s * 10, s * 10 + 1], f"s{s}-")
    manager = ConsumerManager(table.store.file_io, table.path)

    # Java's stream (default start: the latest snapshot whole) records it at the checkpoint
    first = consume(java_oracle, warehouse, "db", "t", "job")
    assert first.snapshots == [3] and first.checkpoint == 4
    assert manager.consumers() == {"job": 4}

    # ours resumes at Java's position and records its own
    _write(table, [40], "s3-")
    _write(table, [50], "s4-")
    scan = table.new_stream_read_builder().with_consumer_id("job").new_scan()
    assert scan.plan().snapshot_id == 4
    scan.plan()
    scan.plan()  # asking again records that snapshot 5 is processed
    assert manager.consumers() == {"job": 6}

    # expiry after our commits keeps snapshot 6 on, for the consumer
    for s in range(5, 8):
        _write(table, [s * 10], f"s{s}-")
    assert table.snapshot_manager.earliest_id() == 6

    # Java's stream resumes at ours
    sm = table.store.snapshot_manager
    latest = sm.latest_id()
    assert latest is not None
    appends = [s for s in range(6, latest + 1) if sm.snapshot_if_exists(s).commit_kind == "APPEND"]
    again = consume(java_oracle, warehouse, "db", "t", "job")
    assert again.snapshots == appends and again.checkpoint == latest + 1
    assert Path(table.path, "consumer", "consumer-job").read_text() == (
        '{\n  "nextSnapshot" : ' + str(latest + 1) + "\n}"
    )
