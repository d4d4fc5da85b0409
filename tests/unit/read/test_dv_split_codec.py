"""A split's deletion files in its versioned bytes (read/split_codec.py, version 3): a Spark or
Ray task must get every file's vector, and version 1 and 2 records still decode."""

from __future__ import annotations

import dataclasses

import pytest

from paimon_pyspark.errors import CorruptRecordError, InvalidArgumentError
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.split_codec import decode_split, decode_splits, encode_split, encode_splits
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import EMPTY_ROW_BYTES, EMPTY_STATS, DataFileMeta
from paimon_pyspark.spec.versioned_record import RecordWriter
from paimon_pyspark.store.deletion_vectors import DeletionFile
from paimon_pyspark.types.data_types import BIGINT, STRING

TYPES = [STRING(), BIGINT()]
INDEX = "/wh/db.db/t/index/index-5c1e-0"


def files(n: int) -> tuple[DataFileMeta, ...]:
    return tuple(
        DataFileMeta(
            file_name=f"data-{i}.parquet",
            file_size=100 + i,
            row_count=10 + i,
            min_key=EMPTY_ROW_BYTES,
            max_key=EMPTY_ROW_BYTES,
            key_stats=EMPTY_STATS,
            value_stats=EMPTY_STATS,
            min_sequence_number=i,
            max_sequence_number=i,
            schema_id=0,
            level=1,
        )
        for i in range(n)
    )


def split(deletions: tuple[DeletionFile | None, ...] = ()) -> DataSplit:
    values = ("x", 7)
    partition = serialize_with_arity(list(values), TYPES)
    return DataSplit(
        3,
        partition,
        values,
        1,
        "/wh/db.db/t/p=x/bucket-1",
        files(3),
        partition_keys=("p", "q"),
        deletion_files=deletions,
    )


DELETIONS = (DeletionFile(INDEX, 1, 26, 3), None, DeletionFile(INDEX, 39, 30, None))


def test_deletion_files_round_trip_with_their_gaps_and_unknown_cardinality() -> None:
    original = split(DELETIONS)
    back = decode_split(encode_split(original), TYPES)
    assert back == original
    assert back.deletion_files == DELETIONS
    assert back.data_deletion_files == list(DELETIONS)
    assert decode_splits(encode_splits([original, split()]), TYPES) == [original, split()]


def test_a_split_without_deletion_files_stays_without() -> None:
    back = decode_split(encode_split(split()), TYPES)
    assert back.deletion_files == ()
    assert back.data_deletion_files is None
    assert back.live_row_count == back.row_count == 10 + 11 + 12


def test_live_row_count_subtracts_known_cardinalities() -> None:
    assert split((DeletionFile(INDEX, 1, 26, 3), None, None)).live_row_count == 33 - 3
    assert split(DELETIONS).live_row_count is None  # the third's cardinality is unknown


def test_version_2_records_still_decode() -> None:
    s = split()
    w = RecordWriter(b"PPds", 2).write_long(s.snapshot_id).write_bytes(s.partition)
    w.write_int(s.bucket).write_str(s.bucket_path).write_files(s.files)
    w.write_int(2).write_str("p").write_str("q")
    w.write_int(1).write_str("data-1.parquet").write_long(2).write_long(5)
    back = decode_split(w.to_bytes(), TYPES)
    assert back.files == s.files
    assert back.file_ranges == (("data-1.parquet", 2, 5),)
    assert back.deletion_files == ()


def _v3(count: int, entries: list[tuple[str, int, int, int | None] | None]) -> bytes:
    s = split()
    w = RecordWriter(b"PPds", 3).write_long(s.snapshot_id).write_bytes(s.partition)
    w.write_int(s.bucket).write_str(s.bucket_path).write_files(s.files)
    w.write_int(0).write_int(0).write_int(count)
    for e in entries:
        w.write_bool(e is not None)
        if e is not None:
            w.write_str(e[0]).write_long(e[1]).write_long(e[2]).write_bool(e[3] is not None)
            if e[3] is not None:
                w.write_long(e[3])
    return w.to_bytes()


def test_deletion_files_that_do_not_fit_the_split_are_refused() -> None:
    assert decode_split(_v3(3, [None, None, None]), TYPES).deletion_files == (None,) * 3
    with pytest.raises(CorruptRecordError, match="2 deletion files for 3 data files"):
        decode_split(_v3(2, [None, None]), TYPES)
    with pytest.raises(CorruptRecordError, match="offset 0"):
        decode_split(_v3(3, [(INDEX, 0, 26, 1), None, None]), TYPES)
    with pytest.raises(CorruptRecordError, match="cardinality -1"):
        decode_split(_v3(3, [(INDEX, 1, 26, -1), None, None]), TYPES)


def test_files_and_deletion_files_go_in_pairs() -> None:
    whole = split(DELETIONS)
    with pytest.raises(InvalidArgumentError, match="3 files and 2 deletion files"):
        dataclasses.replace(whole, deletion_files=DELETIONS[:2])
    last = whole.with_files(whole.files[2:])
    assert last.deletion_files == (DELETIONS[2],)
    assert whole.filter_file(lambda f: f.file_name != "data-0.parquet") == dataclasses.replace(
        whole, files=whole.files[1:], deletion_files=DELETIONS[1:]
    )
    assert whole.deletion_file_of(whole.files[0]) == DELETIONS[0]
    assert whole.deletion_file_of(whole.files[1]) is None
