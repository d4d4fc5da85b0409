"""CompactTask and PostponePartition as versioned bytes: what a Spark task receives decodes to
the planned value, with the partition values read back from the partition row; anything else
is a CorruptRecordError."""

from __future__ import annotations

import datetime as dt
import pickle

import pytest

from paimon_pyspark.compact.plan import APPEND, KV, CompactTask
from paimon_pyspark.compact.postpone import PostponePartition
from paimon_pyspark.errors import CorruptRecordError
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import EMPTY_ROW_BYTES, EMPTY_STATS, DataFileMeta
from paimon_pyspark.spec.manifest import DeletionVectorRange, IndexFileMeta
from paimon_pyspark.spec.versioned_record import RecordWriter
from paimon_pyspark.store.index_io import DELETION_VECTORS_INDEX
from paimon_pyspark.types.data_types import DATE, INT, STRING

TYPES = [STRING(), INT(), DATE()]
VALUES = ("2026-11-01", None, dt.date(2024, 10, 4))
PARTITION = serialize_with_arity(list(VALUES), TYPES)


def f(name: str, level: int = 0) -> DataFileMeta:
    return DataFileMeta(
        file_name=name,
        file_size=100,
        row_count=3,
        min_key=EMPTY_ROW_BYTES,
        max_key=EMPTY_ROW_BYTES,
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=0,
        max_sequence_number=2,
        schema_id=0,
        level=level,
        creation_time=1786060800000,
    )


@pytest.mark.parametrize("kind", [KV, APPEND])
@pytest.mark.parametrize("full", [True, False])
def test_compact_task_round_trips(kind: str, full: bool) -> None:
    task = CompactTask(kind, PARTITION, VALUES, 3, 4, (f("a"), f("b", 5)), full)
    assert CompactTask.from_bytes(task.to_bytes(), TYPES) == task


def test_postpone_partition_round_trips_with_its_bucket_files() -> None:
    part = PostponePartition(PARTITION, VALUES, 4, (f("p1"), f("p2")), {0: (f("b0", 5),), 3: ()})
    back = PostponePartition.from_bytes(part.to_bytes(), TYPES)
    assert back == part
    assert back.bucket_task(0, True) == CompactTask(
        KV, PARTITION, VALUES, 0, 4, (f("b0", 5),), True
    )
    assert back.bucket_task(1, False).files == ()


def dv_file(name: str, *data_files: str) -> IndexFileMeta:
    ranges = tuple(DeletionVectorRange(d, 1 + 20 * i, 20, 2) for i, d in enumerate(data_files))
    return IndexFileMeta(DELETION_VECTORS_INDEX, name, 1 + 20 * len(ranges), len(ranges), ranges)


def test_tasks_carry_their_buckets_deletion_vector_index_files() -> None:
    """A primary-key bucket's task carries its index file of the planned snapshot; version 1
    records (no index files) still decode."""
    task = CompactTask(KV, PARTITION, VALUES, 3, 4, (f("a", 5),), True, (dv_file("i", "a"),))
    assert CompactTask.from_bytes(task.to_bytes(), TYPES) == task
    part = PostponePartition(
        PARTITION, VALUES, 4, (f("p1"),), {0: (f("b0", 5),)}, {0: dv_file("i0", "b0")}
    )
    back = PostponePartition.from_bytes(part.to_bytes(), TYPES)
    assert back == part and back.bucket_task(0, False).dv_index == (dv_file("i0", "b0"),)
    assert back.bucket_task(1, False).dv_index == ()
    plain = CompactTask(KV, PARTITION, VALUES, 3, 4, (f("a"),), False)
    w = RecordWriter(CompactTask.MAGIC, 1).write_str(KV).write_bytes(PARTITION)
    old = w.write_int(3).write_int(4).write_files(plain.files).write_bool(False).to_bytes()
    assert CompactTask.from_bytes(old, TYPES) == plain


def test_what_does_not_decode_is_a_typed_error() -> None:
    task = CompactTask(KV, PARTITION, VALUES, 0, 1, (f("a"),), True)
    data = task.to_bytes()
    with pytest.raises(CorruptRecordError, match="compaction task does not decode.*magic"):
        CompactTask.from_bytes(pickle.dumps(task), TYPES)
    with pytest.raises(CorruptRecordError, match="compaction task does not decode.*truncated"):
        CompactTask.from_bytes(data[:-1], TYPES)
    with pytest.raises(CorruptRecordError, match="version 3"):
        CompactTask.from_bytes(data[:4] + b"\x00\x03" + data[6:], TYPES)
    with pytest.raises(CorruptRecordError, match="partition row"):
        CompactTask.from_bytes(data, [STRING()])
    with pytest.raises(CorruptRecordError, match="unknown kind 'oops'"):
        CompactTask.from_bytes(
            CompactTask("oops", *list(task.__dict__.values())[1:]).to_bytes(), TYPES
        )
    with pytest.raises(CorruptRecordError, match="postpone partition does not decode"):
        PostponePartition.from_bytes(data, TYPES)
