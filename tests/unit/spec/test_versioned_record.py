"""Versioned records (spec/versioned_record.py) and DataFileMetaSerializer: every field round
trips, and every way bytes can fail to be our record is a CorruptRecordError naming it."""

from __future__ import annotations

import datetime as dt
import os
import pickle
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_pyspark.errors import CommitMessageSerdeError, CorruptRecordError, CorruptTableError
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement, DataIncrement
from paimon_pyspark.spec.commit_message_serde import DataFileMetaSerializer
from paimon_pyspark.spec.data_file_meta import EMPTY_STATS, DataFileMeta, SimpleStats
from paimon_pyspark.spec.versioned_record import RecordReader, RecordWriter
from paimon_pyspark.types.data_types import INT, STRING

MAGIC = b"TEST"
PARTITION_TYPES = [STRING(), INT()]


def data_file(name: str, **changes: object) -> DataFileMeta:
    row = serialize_with_arity([name], [STRING()])
    f = DataFileMeta(
        file_name=name,
        file_size=1234,
        row_count=10,
        min_key=row,
        max_key=row,
        key_stats=SimpleStats(row, row, (0,)),
        value_stats=EMPTY_STATS,
        min_sequence_number=3,
        max_sequence_number=12,
        schema_id=0,
        level=1,
        extra_files=("x.index",),
        creation_time=1786060800000,
        delete_row_count=2,
        embedded_index=b"\x01\x02",
        file_source=1,
        value_stats_cols=("a", "b"),
        external_path="file:/elsewhere/" + name,
        first_row_id=7,
        write_cols=("a",),
        write_cols_sequences=(5,),
    )
    return DataFileMeta(**{**f.__dict__, **changes})


def message() -> CommitMessage:
    files = (data_file("data-1.parquet"), data_file("data-2.parquet", level=0))
    part = serialize_with_arity(["2026-11-01", 3], PARTITION_TYPES)
    return CommitMessage(part, 1, 4, DataIncrement(files), CompactIncrement(files[:1], files[1:]))


def full_record() -> bytes:
    w = RecordWriter(MAGIC, 2).write_int(-5).write_long(2**40).write_bool(True)
    w.write_str("héllo").write_bytes(serialize_with_arity(["2026-11-01", 3], PARTITION_TYPES))
    w.write_files([data_file("data-1.parquet")]).write_messages([message()])
    return w.write_arrow(pa.table({"id": [1, 2], "t": [dt.date(2026, 1, 1), None]})).to_bytes()


def test_every_field_round_trips() -> None:
    r = RecordReader(full_record(), MAGIC, {1, 2}, "test record")
    assert r.version == 2
    assert (r.read_int(), r.read_long(), r.read_bool(), r.read_str()) == (-5, 2**40, True, "héllo")
    partition, values = r.read_partition(PARTITION_TYPES)
    assert values == ("2026-11-01", 3)
    assert partition == serialize_with_arity(["2026-11-01", 3], PARTITION_TYPES)
    assert r.read_files() == (data_file("data-1.parquet"),)
    assert r.read_messages() == (message(),)
    assert r.read_arrow().to_pylist() == [
        {"id": 1, "t": dt.date(2026, 1, 1)},
        {"id": 2, "t": None},
    ]
    r.finish()


def test_data_file_meta_serializer_round_trips_every_field() -> None:
    files = [data_file("a"), data_file("b", creation_time=None, external_path=None)]
    data = DataFileMetaSerializer().serialize_list(files)
    assert DataFileMetaSerializer().deserialize_list(DataFileMetaSerializer.VERSION, data) == files
    with pytest.raises(CommitMessageSerdeError, match="trailing"):
        DataFileMetaSerializer().deserialize_list(DataFileMetaSerializer.VERSION, data + b"\0")
    with pytest.raises(CommitMessageSerdeError, match="cannot hold"):
        DataFileMetaSerializer().serialize_list(files, 12)  # no write_cols_sequences before 13


class RunsCode:
    """Unpickling it would call os.system: what a planted file could do to a pickle reader."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_is_refused_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    data = pickle.dumps([RunsCode(marker)])
    with pytest.raises(CorruptRecordError, match="test record does not decode.*magic"):
        RecordReader(data, MAGIC, {1}, "test record")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "too short"),
        (b"TES", "too short"),
        (b"NOPE\x00\x01", "not the magic"),
        (b"TEST\x00\x07", "version 7 is not one of"),
    ],
)
def test_bad_headers_are_typed_errors(data: bytes, reason: str) -> None:
    with pytest.raises(CorruptRecordError, match=reason):
        RecordReader(data, MAGIC, {1, 2}, "test record")


def read_all(data: bytes) -> None:
    r = RecordReader(data, MAGIC, {2}, "test record")
    r.read_int(), r.read_long(), r.read_bool(), r.read_str()
    r.read_partition(PARTITION_TYPES)
    r.read_files(), r.read_messages(), r.read_arrow()
    r.finish()


def test_every_truncation_and_trailing_bytes_are_typed_errors() -> None:
    data = full_record()
    read_all(data)
    for end in range(len(data)):
        with pytest.raises(CorruptRecordError, match="test record does not decode"):
            read_all(data[:end])
    with pytest.raises(CorruptRecordError, match="1 trailing bytes"):
        read_all(data + b"\x00")


def test_corrupt_fields_are_typed_errors() -> None:
    def reader(w: RecordWriter) -> RecordReader:
        return RecordReader(w.to_bytes(), MAGIC, {1}, "test record")

    with pytest.raises(CorruptRecordError, match="not a boolean"):
        reader(RecordWriter(MAGIC, 1).write_int(2 << 24)).read_bool()
    with pytest.raises(CorruptRecordError, match="not UTF-8"):
        reader(RecordWriter(MAGIC, 1).write_bytes(b"\xff\xfe")).read_str()
    with pytest.raises(CorruptRecordError, match="partition row"):
        reader(RecordWriter(MAGIC, 1).write_bytes(b"\x00\x00\x00\x05")).read_partition([INT()])
    with pytest.raises(CorruptRecordError, match="Arrow IPC"):
        reader(RecordWriter(MAGIC, 1).write_bytes(b"not arrow")).read_arrow()
    unknown = RecordWriter(MAGIC, 1).write_int(99).write_bytes(b"\x00\x00\x00\x00")
    with pytest.raises(CorruptRecordError, match="its messages: unsupported CommitMessage version"):
        reader(unknown).read_messages()
    assert issubclass(CorruptRecordError, CorruptTableError)
