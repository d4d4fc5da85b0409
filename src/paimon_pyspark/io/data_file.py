"""The data files of one bucket: how a table writes them, and the one place that names a new
file, opens it in the table's format and removes files a writer gives up on.

Mirrors org.apache.paimon.io.DataFilePathFactory (``<prefix><uuid>-<n>.<ext>`` in the bucket
directory) with the writer options of org.apache.paimon.CoreOptions.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from paimon_pyspark.format.files import EXTENSIONS
from paimon_pyspark.format.writers import FormatWriter
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataField

PIECE_BYTES = 64 * 1024 * 1024
"""Largest chunk handed to the format writer at once: rolling is checked between chunks."""

_EPOCH = dt.datetime(1970, 1, 1)


def local_now_millis() -> int:
    """Java's LocalDateTime.now() as a TIMESTAMP(3): local wall-clock encoded as if UTC."""
    return int((dt.datetime.now() - _EPOCH).total_seconds() * 1000)


@dataclass(frozen=True)
class DataFileSettings:
    """How one table (one schema version) writes data files: format, rolling, stats, names."""

    file_io: FileIO
    schema_id: int
    fields: list[DataField]
    arrow_schema: pa.Schema
    file_format: str
    compression: str
    zstd_level: int
    target_file_size: int
    stats_mode: str
    file_prefix: str
    piece_bytes: int
    """Rows go to the file in pieces of about this many Arrow bytes (at most ``PIECE_BYTES``,
    at most ``target_file_size``); append and postpone writers also flush at this size."""
    partition_keys: tuple[str, ...] = ()
    """Columns that hold one value in every file (a file lives in one partition)."""

    @staticmethod
    def of(store: FileStore, primary_key: bool) -> DataFileSettings:
        """The settings of ``store``'s data files; ``primary_key`` picks the default
        ``target-file-size`` (128 mb for key-value files, 256 mb for append files)."""
        o = store.options
        target = o.target_file_size(primary_key=primary_key)
        return DataFileSettings(
            file_io=store.file_io,
            schema_id=store.table_schema.id,
            fields=list(store.fields),
            arrow_schema=store.arrow_schema,
            file_format=o.file_format,
            compression=o.file_compression,
            zstd_level=o.zstd_level,
            target_file_size=target,
            stats_mode=o.stats_mode,
            file_prefix=o.data_file_prefix,
            piece_bytes=min(PIECE_BYTES, target),
            partition_keys=tuple(store.partition_keys),
        )


class BucketDir:
    """The directory of one bucket, made on the first file a writer opens in it."""

    def __init__(self, file_io: FileIO, bucket_path: str, path_factory: PathFactory) -> None:
        self.file_io = file_io
        self.path = bucket_path
        self.path_factory = path_factory
        self._made = False

    def open_file(
        self,
        settings: DataFileSettings,
        schema: pa.Schema,
        fields: Sequence[DataField],
        delta_encoding: bool = False,
    ) -> tuple[str, FormatWriter]:
        """A new data file named as Java names it (``<prefix><uuid>-<n>.<ext>``), opened."""
        if not self._made:
            self.file_io.mkdirs(self.path)
            self._made = True
        s = settings
        name = self.path_factory.new_data_file(s.file_prefix, EXTENSIONS[s.file_format])
        writer = FormatWriter(
            self.file_io,
            os.path.join(self.path, name),
            schema,
            s.file_format,
            s.compression,
            s.zstd_level,
            list(fields),
            delta_encoding,
        )
        return name, writer

    def delete(self, files: Iterable[DataFileMeta]) -> None:
        for f in files:
            self.file_io.delete_quietly(os.path.join(self.path, f.file_name))
