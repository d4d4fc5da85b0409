"""Serialized commit messages cross between Java Paimon and paimon_pyspark in both directions.

(a) We write data files, serialize our messages at Java's CommitMessageSerializer version, and
Java deserializes and commits them with its BatchTableCommit. (b) Java writes
(``BatchTableWrite.prepareCommit``) and serializes its messages; we deserialize and commit them
with our TableCommit. Afterwards Java and we read the same rows, which are the rows written; and
Java's bytes re-encode, through our serializer, to exactly the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, CommitMessageSerializer, FileStoreTable, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
LAYOUTS = {
    "unaware": {},
    "fixed": {"bucket": "3", "bucket-key": "id"},
}


def rows(lo: int, hi: int) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"name-{i}-{'x' * (i % 13)}" for i in ids],
            "dt": [f"2026-08-0{i % 3 + 1}" for i in ids],
        },
        schema=SCHEMA,
    )


def create(warehouse: Path, name: str, options: dict[str, str]) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"], options=options)
    catalog.create_table(f"{DB}.{name}", schema)
    return catalog.get_table(f"{DB}.{name}")


def read_ours(table: FileStoreTable) -> list[list[object]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def test_java_serializer_version_is_1_4s(java_oracle: JavaOracle) -> None:
    assert java_oracle.commit_message_version() == 11


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_java_commits_our_serialized_messages(
    java_oracle: JavaOracle, tmp_path: Path, layout: str
) -> None:
    name = f"ours_{layout}"
    table = create(tmp_path, name, LAYOUTS[layout])
    expected = sorted_rows(canonical_rows(rows(0, 300)))
    version = java_oracle.commit_message_version()
    serializer = CommitMessageSerializer(version)
    payloads = []
    for lo, hi in ((0, 120), (120, 300)):  # two writers, as two workers would
        write = table.new_batch_write_builder().new_write()
        write.write_arrow(rows(lo, hi))
        payloads.append(write.prepare_commit())
        write.close()
    messages = [m for p in payloads for m in p]
    data = serializer.serialize_list(messages)

    snapshot = java_oracle.commit_serialized_messages(tmp_path, DB, name, version, data)

    assert snapshot == 1
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected
    assert read_ours(table) == expected
    committed = table.snapshot_manager.latest()
    assert committed is not None and committed.total_record_count == 300


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_we_commit_javas_serialized_messages(
    java_oracle: JavaOracle, tmp_path: Path, layout: str
) -> None:
    name = f"java_{layout}"
    table = create(tmp_path, name, LAYOUTS[layout])
    expected = sorted_rows(canonical_rows(rows(0, 300)))
    version = java_oracle.commit_message_version()
    data = java_oracle.write_rows_and_serialize(tmp_path, DB, name, rows(0, 300))

    messages = CommitMessageSerializer().deserialize_list(version, data)
    # our encoder reproduces Java's bytes exactly
    assert CommitMessageSerializer(version).serialize_list(messages) == data
    assert all(m.data_increment.new_files and m.compact_increment.is_empty() for m in messages)
    assert sum(f.row_count for m in messages for f in m.new_files) == 300

    builder = table.new_batch_write_builder()
    assert builder.new_commit().commit(messages, commit_identifier=1) == [1]
    # the same identifier again, as a retrying driver would: no second snapshot
    assert builder.new_commit().commit(messages, commit_identifier=1) == []

    assert java_oracle.latest_snapshot_id(tmp_path, DB, name) == 1
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected
    assert read_ours(table) == expected
