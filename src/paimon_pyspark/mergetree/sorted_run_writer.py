"""Writing one sorted run of a primary-key bucket: records sorted by key, one per key.

Mirrors KeyValueFileWriterFactory.createRollingMergeTreeFileWriter as Java's MergeTreeWriter
(flushes at level 0) and MergeTreeCompactRewriter (compaction output) use it: a rolling
key-value file writer at one level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa

from paimon_pyspark.io.data_file import BucketDir
from paimon_pyspark.io.key_value_file import KeyValueFileKind, KvFileSettings
from paimon_pyspark.io.rolling_file_writer import RollingFileWriter
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_APPEND, DataFileMeta
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory


class SortedRunWriter(RollingFileWriter):
    """Writes sorted runs (records sorted by key, one per key) into rolling files at ``level``.

    Each file's min/max key is its first/last record's key, so the input must be sorted, as
    Java's KeyValueDataFileWriter requires; ``roll`` ends a run.

    A merge that streams (compaction, a spilled write buffer) hands its output slice by slice
    to ``add``, which gathers them into pieces of about ``piece_bytes`` so that a file gets
    row groups of the usual size, not one per slice; ``end_run`` writes what is gathered and
    rolls.
    """

    def __init__(
        self, settings: KvFileSettings, bucket_dir: BucketDir, level: int, file_source: int
    ) -> None:
        super().__init__(settings.files, bucket_dir, KeyValueFileKind(settings), level, file_source)
        self._gathered: list[pa.Table] = []
        self._gathered_bytes = 0

    def add(self, rows: pa.Table) -> None:
        """Write ``rows`` (sorted, after every row written before) once a piece is gathered."""
        if not rows.num_rows:
            return
        self._gathered.append(rows)
        self._gathered_bytes += rows.nbytes
        if self._gathered_bytes >= self.s.piece_bytes:
            self._write_gathered()

    def end_run(self) -> None:
        """Write what ``add`` gathered and close the open file: the sorted run is complete."""
        self._write_gathered()
        self.roll()

    def close(self) -> list[DataFileMeta]:
        self._write_gathered()
        return super().close()

    def abort(self) -> None:
        self._gathered, self._gathered_bytes = [], 0
        super().abort()

    def _write_gathered(self) -> None:
        rows, self._gathered, self._gathered_bytes = self._gathered, [], 0
        if rows:
            self.write(pa.concat_tables(rows) if len(rows) > 1 else rows[0])


def open_sorted_run(
    store: FileStore,
    partition_values: Sequence[Any],
    bucket: int,
    level: int,
    file_source: int,
) -> SortedRunWriter:
    """A writer of one sorted run of KV records at ``level`` in the bucket's directory."""
    return SortedRunWriter(
        KvFileSettings.of(store), _bucket_dir(store, partition_values, bucket), level, file_source
    )


def open_changelog_writer(
    store: FileStore,
    partition_values: Sequence[Any],
    bucket: int,
    level: int = 0,
) -> SortedRunWriter:
    """A writer of changelog files in the bucket's directory (Java's
    KeyValueFileWriterFactory.createRollingChangelogFileWriter(level)): KV records named
    ``<changelog-file.prefix><uuid>-<n>.<ext>``, in ``changelog-file.format``, ``.compression``
    and ``.stats-mode`` (each falling back to the table's), rolling at ``target-file-size``,
    with the table's file indexes, as Java's changelog writer shares the data writer's. The
    input producer writes at level 0; a compaction's changelog at its output level. Java writes
    every changelog file as FileSource.APPEND, a compaction's too. Records may repeat a key
    (each change of it, in sequence order), so they go in with ``write``, never as one run per
    key."""
    bucket_dir = _bucket_dir(store, partition_values, bucket)
    return SortedRunWriter(changelog_settings(store), bucket_dir, level, FILE_SOURCE_APPEND)


def changelog_settings(store: FileStore) -> KvFileSettings:
    """The KV file settings of ``store``'s changelog files (see ``open_changelog_writer``)."""
    settings = KvFileSettings.of(store)
    o = store.options
    files = replace(
        settings.files,
        file_prefix=o.changelog_file_prefix,
        file_format=o.changelog_file_format,
        compression=o.changelog_file_compression,
        stats_mode=o.changelog_file_stats_mode,
    )
    return replace(settings, files=files)


def _bucket_dir(store: FileStore, partition_values: Sequence[Any], bucket: int) -> BucketDir:
    path_factory = PathFactory(store.path)
    bucket_path = path_factory.bucket_path(store.partition_rel_path(list(partition_values)), bucket)
    return BucketDir(store.file_io, bucket_path, path_factory)


def write_sorted_run(
    store: FileStore,
    partition_values: Sequence[Any],
    bucket: int,
    records: pa.Table,
    level: int,
    file_source: int,
) -> list[DataFileMeta]:
    """Write merged, key-sorted KV records (their sequence numbers kept) as files at ``level``.

    The entry point for compaction: ``records`` hold the table columns plus
    ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``, at most one record per key, sorted by key.
    """
    writer = open_sorted_run(store, partition_values, bucket, level, file_source)
    try:
        writer.write(records)
        return writer.close()
    except BaseException:
        writer.abort()
        raise


def write_changelog(
    store: FileStore,
    partition_values: Sequence[Any],
    bucket: int,
    records: pa.Table,
    level: int = 0,
) -> list[DataFileMeta]:
    """Write KV records sorted by key (a key may repeat, in sequence order) as changelog
    files at ``level`` (see ``open_changelog_writer``); none when ``records`` is empty."""
    if records.num_rows == 0:
        return []
    writer = open_changelog_writer(store, partition_values, bucket, level=level)
    try:
        writer.write(records)
        return writer.close()
    except BaseException:
        writer.abort()
        raise
