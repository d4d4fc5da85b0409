"""Small-file compaction of append tables: which files to merge, and the rewrite itself.

Mirrors org.apache.paimon.append.BucketedAppendCompactManager (fixed-bucket tables: a full
compaction rewrites a bucket's small files in sequence order; a minor one takes the oldest
window of ``compaction.min.file-num`` small files), org.apache.paimon.append.
AppendCompactCoordinator (bucket-unaware tables: small files of a partition are packed into
groups worth rewriting) and BaseAppendFileStoreWrite.compactRewrite (read the files in order,
write them back rolling at ``target-file-size``, sequence numbers running on from the first).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from paimon_pyspark.io.data_file import DataFileSettings
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.append_writer import AppendWriter

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

FULL_COMPACT_MIN_FILE = 3
"""A full compaction of a fixed bucket needs at least this many files (Java's constant)."""


def _by_sequence(files: Sequence[DataFileMeta]) -> list[DataFileMeta]:
    return sorted(files, key=lambda f: (f.min_sequence_number, f.file_name))


def pick_bucketed_full(files: Sequence[DataFileMeta], s: CompactSettings) -> list[DataFileMeta]:
    """The files a full compaction of one fixed bucket rewrites (FullCompactTask).

    Leading big files (oldest first) stay as they are; the rest is rewritten when small files
    outnumber the big ones among them and there are at least three. Sorting by sequence keeps
    the bucket's row order, which a later compaction relies on.
    """
    if not s.force_rewrite_all_files and len(files) < FULL_COMPACT_MIN_FILE:
        return []
    ordered = _by_sequence(files)
    if s.force_rewrite_all_files:
        return ordered
    start = 0
    while start < len(ordered) and ordered[start].file_size >= s.compaction_file_size:
        start += 1
    rest = ordered[start:]
    small = sum(1 for f in rest if f.file_size < s.compaction_file_size)
    if small > len(rest) - small and len(rest) >= FULL_COMPACT_MIN_FILE:
        return rest
    return []


def pick_bucketed_minor(files: Sequence[DataFileMeta], s: CompactSettings) -> list[DataFileMeta]:
    """The oldest window of ``min_file_num`` files worth merging (pickCompactBefore).

    Walks files in sequence order; a window that has grown to twice the target size before
    reaching enough files slides forward by dropping its oldest file.
    """
    window: list[DataFileMeta] = []
    size = 0
    for f in _by_sequence(files):
        window.append(f)
        size += f.file_size
        if len(window) >= s.min_file_num:
            return window
        if size >= s.target_file_size * 2:
            size -= window.pop(0).file_size
    return []


def pack_unaware(files: Sequence[DataFileMeta], s: CompactSettings) -> list[list[DataFileMeta]]:
    """Groups of small files of one partition to rewrite together (AppendCompactCoordinator).

    Only files below ``compaction_file_size`` take part. Sorted by size, they fill a bin until
    it holds more than one file and twice the target size (counting an open cost per file);
    the last bin is kept only with at least ``compaction.min.file-num`` files.
    """
    small = sorted(
        (f for f in files if f.file_size < s.compaction_file_size),
        key=lambda f: (f.file_size, f.min_sequence_number, f.file_name),
    )
    groups: list[list[DataFileMeta]] = []
    bin_: list[DataFileMeta] = []
    weight = 0
    for f in small:
        bin_.append(f)
        weight += f.file_size + s.open_file_cost
        if len(bin_) > 1 and weight >= s.target_file_size * 2:
            groups.append(bin_)
            bin_, weight = [], 0
    if len(bin_) >= s.min_file_num:
        groups.append(bin_)
    return groups


def rewrite_append_files(
    table: FileStore,
    partition: bytes,
    partition_values: Sequence[Any],
    bucket: int,
    files: Sequence[DataFileMeta],
) -> list[DataFileMeta]:
    """Read ``files`` in the given order and write their rows into new COMPACT files.

    Files are streamed one at a time, so memory stays near one file plus one flush buffer.
    The new files carry the current schema; on any failure the files written so far are
    removed before the error propagates.
    """
    if not files:
        return []
    rel = table.partition_rel_path(list(partition_values))
    path_factory = PathFactory(table.path)
    bucket_path = path_factory.bucket_path(rel, bucket)
    settings = DataFileSettings.of(table, primary_key=False)
    writer = AppendWriter(settings, bucket_path, path_factory, files[0].min_sequence_number)
    split = DataSplit(0, partition, tuple(partition_values), bucket, bucket_path, tuple(files))
    read = TableRead(table, None, None, None)
    try:
        for batch in read.to_arrow_batch_reader([split]):
            writer.write(pa.Table.from_batches([batch]))
            if writer.buffered_bytes >= writer.flush_threshold:
                writer.flush()
        written = writer.prepare_commit()
    except BaseException:
        writer.abort()
        raise
    return [dataclasses.replace(f, file_source=FILE_SOURCE_COMPACT) for f in written]
