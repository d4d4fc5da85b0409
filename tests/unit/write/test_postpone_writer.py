"""Postpone-bucket writing pieces: the file prefix and the write order of files. The routing of
fixed-bucket batch writes is tested with the routers (tests/unit/bucket/test_routers.py)."""

from __future__ import annotations

from dataclasses import replace

from paimon_pyspark.spec.data_file_meta import EMPTY_ROW_BYTES, EMPTY_STATS, DataFileMeta
from paimon_pyspark.store.postpone import order_postpone_files, postpone_file_prefix


def meta(name: str, created: int) -> DataFileMeta:
    return DataFileMeta(
        file_name=name,
        file_size=1,
        row_count=1,
        min_key=EMPTY_ROW_BYTES,
        max_key=EMPTY_ROW_BYTES,
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=-1,
        max_sequence_number=-1,
        schema_id=0,
        level=0,
        creation_time=created,
    )


def test_postpone_file_prefix_is_javas() -> None:
    assert postpone_file_prefix("data-", "u1", 7) == "data--u-u1-s-7-w-"


def test_postpone_files_replay_by_creation_time_then_counter() -> None:
    prefix = "data--u-a-s-1-w-uuid-"
    files = [meta(f"{prefix}10.parquet", 5), meta(f"{prefix}2.parquet", 5), meta("x-0.avro", 1)]
    names = [f.file_name for f in order_postpone_files(files)]
    assert names == ["x-0.avro", f"{prefix}2.parquet", f"{prefix}10.parquet"]
    same = [replace(files[0], file_name="b-0.parquet"), replace(files[1], file_name="a-0.parquet")]
    assert [f.file_name for f in order_postpone_files(same)] == ["b-0.parquet", "a-0.parquet"]
