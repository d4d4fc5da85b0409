"""Small-file compaction of append tables: which files to merge, and the rewrite itself.

Mirrors org.apache.paimon.append.BucketedAppendCompactManager (fixed-bucket tables: a full
compaction rewrites a bucket's small files in sequence order; a minor one takes the oldest
window of ``compaction.min.file-num`` small files), org.apache.paimon.append.
AppendCompactCoordinator (bucket-unaware tables: small files of a partition are packed into
groups worth rewriting) and BaseAppendFileStoreWrite.compactRewrite (read the files in order,
write them back rolling at ``target-file-size``, sequence numbers running on from the first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paimon_pyspark.io.data_file import DataFileSettings
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.append_writer import rewrite_append_files as rewrite_files
from paimon_pyspark.write.compact_manager import FULL_COMPACT_MIN_FILE, full_rewrite, minor_window

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


def _by_sequence(files: Sequence[DataFileMeta]) -> list[DataFileMeta]:
    return sorted(files, key=lambda f: (f.min_sequence_number, f.file_name))


def pick_bucketed_full(files: Sequence[DataFileMeta], s: CompactSettings) -> list[DataFileMeta]:
    """The files a full compaction of one fixed bucket rewrites: a writer's full pick
    (write/compact_manager.py) over the bucket's files in sequence order, which keeps the
    bucket's row order for later compactions."""
    if not s.force_rewrite_all_files and len(files) < FULL_COMPACT_MIN_FILE:
        return []
    return full_rewrite(_by_sequence(files), s)


def pick_bucketed_minor(files: Sequence[DataFileMeta], s: CompactSettings) -> list[DataFileMeta]:
    """The oldest window of ``min_file_num`` files worth merging (a writer's minor pick)."""
    return minor_window(_by_sequence(files), s)[0]


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
    """Read ``files`` in the given order and write their rows into new COMPACT files
    (write/append_writer.py: streamed, nothing left on failure)."""
    rel = table.partition_rel_path(list(partition_values))
    path_factory = PathFactory(table.path)
    bucket_path = path_factory.bucket_path(rel, bucket)
    settings = DataFileSettings.of(table, primary_key=False)
    return rewrite_files(settings, table, bucket_path, path_factory, files)
