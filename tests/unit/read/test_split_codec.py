"""A DataSplit as versioned bytes (read/split_codec.py), as the cross-partition bootstrap and
rescale hand splits to Spark tasks."""

from __future__ import annotations

import pickle

import pytest

from paimon_pyspark.errors import CorruptRecordError
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.split_codec import decode_split, encode_split
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import EMPTY_ROW_BYTES, EMPTY_STATS, DataFileMeta
from paimon_pyspark.types.data_types import BIGINT, STRING

TYPES = [STRING(), BIGINT()]


def split() -> DataSplit:
    files = tuple(
        DataFileMeta(
            file_name=f"data-{i}.orc",
            file_size=10 + i,
            row_count=1,
            min_key=EMPTY_ROW_BYTES,
            max_key=EMPTY_ROW_BYTES,
            key_stats=EMPTY_STATS,
            value_stats=EMPTY_STATS,
            min_sequence_number=i,
            max_sequence_number=i,
            schema_id=1,
            level=i,
        )
        for i in range(3)
    )
    values = ("dt=ü", -(2**40))
    partition = serialize_with_arity(list(values), TYPES)
    return DataSplit(7, partition, values, 2, "/wh/db.db/t/p=x/bucket-2", files)


def test_a_split_round_trips() -> None:
    assert decode_split(encode_split(split()), TYPES) == split()


def test_a_pickled_or_cut_split_is_refused() -> None:
    with pytest.raises(CorruptRecordError, match="data split does not decode.*magic"):
        decode_split(pickle.dumps(split()), TYPES)
    with pytest.raises(CorruptRecordError, match="data split does not decode.*trailing"):
        decode_split(encode_split(split()) + b"!", TYPES)


def test_partition_keys_and_slices_round_trip() -> None:
    whole = split()
    keyed = DataSplit(
        whole.snapshot_id,
        whole.partition,
        whole.partition_values,
        whole.bucket,
        whole.bucket_path,
        whole.files,
        partition_keys=("dt", "n"),
        file_ranges=(("data-1.orc", 3, 9),),
    )
    back = decode_split(encode_split(keyed), TYPES)
    assert back.partition_keys == ("dt", "n")
    assert back.file_ranges == (("data-1.orc", 3, 9),)
    assert back.partition.to_dict() == {"dt": "dt=ü", "n": -(2**40)}  # type: ignore[attr-defined]


def test_a_slice_of_a_file_the_split_lacks_is_refused() -> None:
    whole = split()
    bad = DataSplit(
        whole.snapshot_id,
        whole.partition,
        whole.partition_values,
        whole.bucket,
        whole.bucket_path,
        whole.files,
        file_ranges=(("data-9.orc", 0, 1),),
    )
    with pytest.raises(CorruptRecordError, match="data-9.orc"):
        decode_split(encode_split(bad), TYPES)
