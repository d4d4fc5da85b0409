"""Incremental data-file writers: chunks go in as Arrow tables, a file comes out.

Parquet and ORC stream each chunk to the file (one row group / stripe per chunk), so a writer
can roll at ``target-file-size`` by the bytes really written, as Java's RollingFileWriter does.
Avro data files are encoded at close (row by row through fastavro: it is not a hot path).
"""

from __future__ import annotations

import contextlib
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.orc as porc
import pyarrow.parquet as pq

from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.format.files import (
    check_nanosecond_timestamps,
    to_orc_table,
    write_avro_file,
)
from paimon_pyspark.fs.file_io import FileIO, abort_output
from paimon_pyspark.types.data_types import DataField

_PARQUET_CODECS = {"zstd", "snappy", "gzip", "lz4", "brotli", "none", "uncompressed"}


class FormatWriter:
    """Writes one data file in chunks; ``bytes_written`` drives rolling."""

    def __init__(
        self,
        file_io: FileIO,
        path: str,
        schema: pa.Schema,
        fmt: str,
        compression: str,
        zstd_level: int,
        fields: list[DataField],
    ) -> None:
        self.file_io = file_io
        self.path = path
        self.fmt = fmt
        self.fields = fields
        self.compression = compression
        self.zstd_level = zstd_level
        self._out: BinaryIO | None = None
        self._writer: Any = None
        self._pending: list[pa.Table] = []
        self._int96 = fmt == "parquet" and _has_nanosecond_timestamp(schema)
        if fmt == "parquet":
            codec = "none" if compression in ("none", "uncompressed") else compression
            if codec not in _PARQUET_CODECS:
                raise UnsupportedOptionError(f"file.compression '{compression}' for parquet")
            self._out = file_io.open_output(path)
            self._writer = pq.ParquetWriter(
                self._out,
                schema,
                compression=codec,
                compression_level=zstd_level if codec == "zstd" else None,
                store_decimal_as_integer=True,
                # Java stores TIMESTAMP(7..9) as INT96 and reads precision > 6 only from it;
                # pyarrow can only switch INT96 on for every timestamp column of the file.
                use_deprecated_int96_timestamps=self._int96,
            )
        elif fmt == "orc":
            codec = "uncompressed" if compression == "none" else compression
            self._out = file_io.open_output(path)
            self._writer = porc.ORCWriter(self._out, compression=codec)
        elif fmt != "avro":
            raise UnsupportedOptionError(f"file.format '{fmt}' is not supported.")

    def write(self, table: pa.Table) -> None:
        if self.fmt == "parquet":
            if self._int96:
                check_nanosecond_timestamps(
                    table,
                    "timestamps of a Parquet file with a TIMESTAMP(7..9) column (INT96, as Java "
                    "writes them)",
                )
            self._writer.write_table(table, row_group_size=1024 * 1024)
        elif self.fmt == "orc":
            # pyarrow's ORC writer misplaces struct children of sliced arrays: write copies.
            self._writer.write(to_orc_table(table.take(pa.array(np.arange(table.num_rows)))))
        else:
            self._pending.append(table)

    @property
    def bytes_written(self) -> int:
        if self._out is not None:
            return int(self._out.tell())
        return int(sum(t.nbytes for t in self._pending)) // 4

    def close(self) -> int:
        """Finish the file; returns its size in bytes."""
        if self.fmt == "avro":
            table = pa.concat_tables(self._pending) if self._pending else None
            assert table is not None
            return write_avro_file(self.file_io, self.path, table, self.fields, self.compression)
        self._writer.close()
        assert self._out is not None
        size = int(self._out.tell())  # the footer is in: what the stream took is the file
        self._out.close()
        return size

    def abort(self) -> None:
        """Discard the file: an object store's upload is aborted before the writer flushes."""
        try:
            if self._out is not None:
                abort_output(self._out)
            if self._writer is not None:
                with contextlib.suppress(Exception):
                    self._writer.close()
        finally:
            self.file_io.delete_quietly(self.path)


def _has_nanosecond_timestamp(schema: pa.Schema) -> bool:
    return any(pa.types.is_timestamp(f.type) and f.type.unit == "ns" for f in schema)
