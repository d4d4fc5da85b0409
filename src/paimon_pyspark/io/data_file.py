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
from paimon_pyspark.io.file_index_writer import FileIndexSettings
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store import clock
from paimon_pyspark.store.external_paths import (
    ExternalPathProvider,
    ExternalPaths,
    extra_file_paths,
    io_path,
    uri_of,
)
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataField

PIECE_BYTES = 64 * 1024 * 1024
"""Largest chunk handed to the format writer at once: rolling is checked between chunks."""

_EPOCH = dt.datetime(1970, 1, 1)


def local_now_millis() -> int:
    """Java's LocalDateTime.now() as a TIMESTAMP(3): local wall-clock encoded as if UTC."""
    return int((clock.now_local() - _EPOCH).total_seconds() * 1000)


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
    file_index: FileIndexSettings | None = None
    """The file indexes every data file gets (``file-index.*``), None for none."""
    external_paths: ExternalPaths | None = None
    """``data-file.external-paths``: new files go under these roots (store/external_paths.py)."""

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
            file_index=FileIndexSettings.of(store),
            external_paths=store.external_paths,
        )


class BucketDir:
    """The directory of one bucket, made on the first file a writer opens in it."""

    def __init__(self, file_io: FileIO, bucket_path: str, path_factory: PathFactory) -> None:
        self.file_io = file_io
        self.path = bucket_path
        self.path_factory = path_factory
        self._made = False
        self._external: ExternalPathProvider | None = None
        self.external_paths: dict[str, str] = {}
        """The manifest's external path of each file opened outside the bucket directory."""

    def open_file(
        self,
        settings: DataFileSettings,
        schema: pa.Schema,
        fields: Sequence[DataField],
        delta_encoding: bool = False,
    ) -> tuple[str, FormatWriter]:
        """A new data file named as Java names it (``<prefix><uuid>-<n>.<ext>``), opened."""
        s = settings
        if self._external is None and s.external_paths is not None:
            self._external = s.external_paths.provider(self.path)
        name = self.path_factory.new_data_file(s.file_prefix, EXTENSIONS[s.file_format])
        if self._external is not None:  # Java's ExternalPathProvider: the next root's bucket dir
            directory = self._external.next_dir(name)
            self.file_io.mkdirs(directory)
            path = os.path.join(directory, name)
            self.external_paths[name] = uri_of(self.file_io, path)
        else:
            if not self._made:
                self.file_io.mkdirs(self.path)
                self._made = True
            path = os.path.join(self.path, name)
        writer = FormatWriter(
            self.file_io,
            path,
            schema,
            s.file_format,
            s.compression,
            s.zstd_level,
            list(fields),
            delta_encoding,
        )
        return name, writer

    def delete(self, files: Iterable[DataFileMeta]) -> None:
        """Delete ``files`` and the extra files (separate indexes) beside them."""
        for f in files:
            external = self.external_paths.get(f.file_name)
            path = os.path.join(self.path, f.file_name)
            if external is not None:
                path = io_path(self.file_io, external) or path
            self.file_io.delete_quietly(path)
            for extra in extra_file_paths(path, f):
                self.file_io.delete_quietly(extra)
