"""The writer of one (partition, bucket) of an append table.

Mirrors org.apache.paimon.append.AppendOnlyWriter with a RollingFileWriter: rows are buffered in
memory, flushed in pieces into the current data file, and a new file is started once the current
one reaches ``target-file-size``. Sequence numbers run on from the bucket's highest.
"""

from __future__ import annotations

from paimon_pyspark.io.data_file import BucketDir, DataFileSettings
from paimon_pyspark.io.rolling_file_writer import AppendFileKind, RollingFileWriter
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.bucket_writer import BufferedBucketWriter


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
