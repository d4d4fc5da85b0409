"""The writer of one (partition, bucket) of an append table, and the rewrite of its files.

Mirrors org.apache.paimon.append.AppendOnlyWriter with a RollingFileWriter: rows are buffered in
memory, flushed in pieces into the current data file, and a new file is started once the current
one reaches ``target-file-size``. Sequence numbers run on from the bucket's highest.
``rewrite_append_files`` is BaseAppendFileStoreWrite.compactRewrite: files read in order and
written back, numbered from the first file's lowest sequence number.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from paimon_pyspark.io.data_file import BucketDir, DataFileSettings
from paimon_pyspark.io.data_file_reader import iter_data_file
from paimon_pyspark.io.rolling_file_writer import AppendFileKind, RollingFileWriter
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.bucket_writer import BufferedBucketWriter

REWRITE_BATCH_ROWS = 65_536


class AppendWriter(BufferedBucketWriter):
    """Flushes every ``piece_bytes`` (at most 64 mb) of buffered rows into the open file."""

    def __init__(
        self,
        settings: DataFileSettings,
        bucket_path: str,
        path_factory: PathFactory,
        next_seq: int,
    ) -> None:
        bucket_dir = BucketDir(settings.file_io, bucket_path, path_factory)
        files = RollingFileWriter(settings, bucket_dir, AppendFileKind(settings, next_seq))
        super().__init__(files, settings.piece_bytes)


def rewrite_append_files(
    settings: DataFileSettings,
    store: FileStore,
    bucket_path: str,
    path_factory: PathFactory,
    files: Sequence[DataFileMeta],
) -> list[DataFileMeta]:
    """Read ``files`` in the given order (each mapped to the current schema) and write their
    rows into new COMPACT files; files are read ``REWRITE_BATCH_ROWS`` rows at a time, so memory
    stays near one batch plus one flush buffer. On any failure the files written so far are
    removed before the error propagates."""
    if not files:
        return []
    writer = AppendWriter(settings, bucket_path, path_factory, files[0].min_sequence_number)
    fields = list(store.fields)
    try:
        for f in files:
            for rows in iter_data_file(store, bucket_path, f, fields, False, REWRITE_BATCH_ROWS):
                writer.write(rows)
                if writer.buffered_bytes >= writer.flush_threshold:
                    writer.flush()
        written = writer.prepare_commit()
    except BaseException:
        writer.abort()
        raise
    return [dataclasses.replace(f, file_source=FILE_SOURCE_COMPACT) for f in written]
