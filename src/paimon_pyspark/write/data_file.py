"""A bucket directory of one writer: the one place that names a new data file, opens it in the
table's format, and removes files a writer gives up on."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import pyarrow as pa

from paimon_pyspark.format.files import EXTENSIONS
from paimon_pyspark.format.writers import FormatWriter
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataField


class BucketDir:
    def __init__(self, file_io: FileIO, bucket_path: str, path_factory: PathFactory) -> None:
        self.file_io = file_io
        self.path = bucket_path
        self.path_factory = path_factory
        self._made = False

    def open_file(
        self,
        prefix: str,
        file_format: str,
        compression: str,
        zstd_level: int,
        schema: pa.Schema,
        fields: Sequence[DataField],
    ) -> tuple[str, FormatWriter]:
        """A new data file named as Java names it (``<prefix><uuid>-<n>.<ext>``), opened."""
        if not self._made:
            self.file_io.mkdirs(self.path)
            self._made = True
        name = self.path_factory.new_data_file(prefix, EXTENSIONS[file_format])
        writer = FormatWriter(
            self.file_io,
            os.path.join(self.path, name),
            schema,
            file_format,
            compression,
            zstd_level,
            list(fields),
        )
        return name, writer

    def delete(self, files: Iterable[DataFileMeta]) -> None:
        for f in files:
            self.file_io.delete_quietly(os.path.join(self.path, f.file_name))
