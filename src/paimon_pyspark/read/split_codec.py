"""Versioned bytes of a DataSplit, for handing a split to another process (a Spark task).

Plays the part of Java's ``DataSplit.serialize`` / ``deserialize`` for our own processes: the
record (spec/versioned_record.py) holds the snapshot id, the partition row, the bucket, its
path and the files as DataFileMetaSerializer bytes; version 2 adds the partition key names
(``split.partition.to_dict()`` in a task) and the row ranges of a ``with_slice`` split, which
a version-1 record cannot carry; version 3 adds where each file's deletion vector is
(``DataSplit.deletion_files``), without which a task would read deleted rows. Versions 1 and
2 still decode. The partition values are read back from the partition row with the table's
partition types, as a scan computes them. A diff split's ``before_files`` (and their vectors)
are not carried: TableRead plans them again.
"""

from __future__ import annotations

from collections.abc import Sequence

from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.spec.versioned_record import RecordReader, RecordWriter
from paimon_pyspark.store.deletion_vectors import DeletionFile
from paimon_pyspark.types.data_types import DataType

_MAGIC = b"PPds"
_VERSION = 3
_VERSIONS = {1, 2, 3}
_LIST_MAGIC = b"PPdl"
_LIST_VERSION = 2


def encode_split(split: DataSplit) -> bytes:
    w = RecordWriter(_MAGIC, _VERSION).write_long(split.snapshot_id).write_bytes(split.partition)
    w.write_int(split.bucket).write_str(split.bucket_path)
    w.write_files(split.files)
    w.write_int(len(split.partition_keys))
    for key in split.partition_keys:
        w.write_str(key)
    w.write_int(len(split.file_ranges))
    for name, start, end in split.file_ranges:
        w.write_str(name).write_long(start).write_long(end)
    w.write_int(len(split.deletion_files))
    for deletion in split.deletion_files:
        w.write_bool(deletion is not None)
        if deletion is not None:
            w.write_str(deletion.path).write_long(deletion.offset).write_long(deletion.length)
            w.write_bool(deletion.cardinality is not None)
            if deletion.cardinality is not None:
                w.write_long(deletion.cardinality)
    return w.to_bytes()


def decode_split(data: bytes, partition_types: Sequence[DataType]) -> DataSplit:
    r = RecordReader(data, _MAGIC, _VERSIONS, "data split")
    snapshot_id = r.read_long()
    partition, values = r.read_partition(partition_types)
    bucket, bucket_path, files = r.read_int(), r.read_str(), r.read_files()
    keys: tuple[str, ...] = ()
    ranges: tuple[tuple[str, int, int], ...] = ()
    if r.version >= 2:
        keys = tuple(r.read_str() for _ in range(r.read_int()))
        if keys and len(keys) != len(values):
            raise r.error(f"{len(keys)} partition keys for {len(values)} partition values")
        ranges = tuple((r.read_str(), r.read_long(), r.read_long()) for _ in range(r.read_int()))
        names = {f.file_name for f in files}
        for name, start, end in ranges:
            if name not in names or not 0 <= start <= end:
                raise r.error(f"row range {start}..{end} of file '{name}' does not fit the split")
    deletions = _read_deletion_files(r, len(files)) if r.version >= 3 else ()
    r.finish()
    return DataSplit(
        snapshot_id,
        partition,
        values,
        bucket,
        bucket_path,
        files,
        partition_keys=keys,
        file_ranges=ranges,
        deletion_files=deletions,
    )


def _read_deletion_files(r: RecordReader, file_count: int) -> tuple[DeletionFile | None, ...]:
    count = r.read_int()
    if count not in (0, file_count):
        raise r.error(f"{count} deletion files for {file_count} data files")
    out: list[DeletionFile | None] = []
    for _ in range(count):
        if not r.read_bool():
            out.append(None)
            continue
        path, offset, length = r.read_str(), r.read_long(), r.read_long()
        cardinality = r.read_long() if r.read_bool() else None
        if not path or offset < 1 or length < 0 or (cardinality is not None and cardinality < 0):
            raise r.error(
                f"deletion file '{path}' at offset {offset}, length {length}, cardinality "
                f"{cardinality} is no place of a vector"
            )
        out.append(DeletionFile(path, offset, length, cardinality))
    return tuple(out)


def encode_splits(splits: Sequence[DataSplit]) -> bytes:
    """Several splits as one record (a Spark input partition that reads them in turn)."""
    w = RecordWriter(_LIST_MAGIC, _LIST_VERSION).write_int(len(splits))
    for split in splits:
        w.write_bytes(encode_split(split))
    return w.to_bytes()


def decode_splits(data: bytes, partition_types: Sequence[DataType]) -> list[DataSplit]:
    r = RecordReader(data, _LIST_MAGIC, {_LIST_VERSION}, "data splits")
    splits = [decode_split(r.read_bytes(), partition_types) for _ in range(r.read_int())]
    r.finish()
    return splits
