"""Incremental data-file writers: chunks go in as Arrow tables, a file comes out.

Parquet and ORC stream each chunk to the file (one row group / stripe per chunk), so a writer
can roll at ``target-file-size`` by the bytes really written, as Java's RollingFileWriter does.
Avro data files are encoded at close (row by row through fastavro: it is not a hot path).
"""

from __future__ import annotations

import contextlib
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
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
SINK_BUFFER = 4 << 20
_DICTIONARY_SAMPLE = 20_000
"""parquet-mr (Java's and Spark's writer) decides at its first page, at most 20,000 rows."""


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
        delta_encoding: bool = False,
    ) -> None:
        self.file_io = file_io
        self.path = path
        self.fmt = fmt
        self.fields = fields
        self.compression = compression
        self.zstd_level = zstd_level
        self.delta_encoding = delta_encoding
        self._out: BinaryIO | None = None
        self._sink: pa.NativeFile | None = None
        self._writer: Any = None
        self._pending: list[pa.Table] = []
        self.footer: pq.FileMetaData | None = None
        """A closed Parquet file's footer: the statistics its writer computed."""
        self._int96 = fmt == "parquet" and _has_nanosecond_timestamp(schema)
        if fmt == "parquet":
            codec = "none" if compression in ("none", "uncompressed") else compression
            if codec not in _PARQUET_CODECS:
                raise UnsupportedOptionError(f"file.compression '{compression}' for parquet")
            self._codec = codec
            self._schema = schema
            self._out = file_io.open_output(path)
            # Arrow's writer hands the sink every page header and page: buffered natively, the
            # file's stream (Python) is called once per SINK_BUFFER bytes, not ~200 times per
            # file, each taking the GIL from the other writer threads
            self._raw = _Discardable(self._out)
            self._sink = pa.BufferedOutputStream(pa.PythonFile(self._raw, mode="w"), SINK_BUFFER)
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
            if self._writer is None:
                self._open_parquet(table)
            self._writer.write_table(table, row_group_size=1024 * 1024)
        elif self.fmt == "orc":
            # pyarrow's ORC writer misplaces struct children of sliced arrays: write copies.
            self._writer.write(to_orc_table(table.take(pa.array(np.arange(table.num_rows)))))
        else:
            self._pending.append(table)

    def _open_parquet(self, first: pa.Table | None) -> None:
        """Opened at the first chunk, which decides each column's encoding (``_encodings``)."""
        dictionary: bool | list[str] = True
        delta: dict[str, str] = {}
        if first is not None:
            dictionary, delta = _encodings(first, self._int96)
        if not self.delta_encoding:
            delta = {}
        self._writer = pq.ParquetWriter(
            self._sink,
            self._schema,
            compression=self._codec,
            compression_level=self.zstd_level if self._codec == "zstd" else None,
            use_dictionary=True if first is None else dictionary,
            column_encoding=delta or None,
            store_decimal_as_integer=True,
            # no ARROW:schema footer entry (about 1 KB, read by nobody: Java does not write it,
            # and every reader maps files to the table's schema), as parquet-mr writes none
            store_schema=False,
            # Java stores TIMESTAMP(7..9) as INT96 and reads precision > 6 only from it;
            # pyarrow can only switch INT96 on for every timestamp column of the file.
            use_deprecated_int96_timestamps=self._int96,
        )

    @property
    def bytes_written(self) -> int:
        if self._sink is not None:
            return int(self._sink.tell())
        if self._out is not None:
            return int(self._out.tell())
        return int(sum(t.nbytes for t in self._pending)) // 4

    def close(self) -> int:
        """Finish the file; returns its size in bytes."""
        if self.fmt == "avro":
            table = pa.concat_tables(self._pending) if self._pending else None
            assert table is not None
            return write_avro_file(self.file_io, self.path, table, self.fields, self.compression)
        if self._writer is None:
            self._open_parquet(None)
        self._writer.close()
        if self.fmt == "parquet":
            self.footer = self._writer.writer.metadata
        assert self._out is not None
        if self._sink is not None:
            self._sink.flush()
        size = int(self._out.tell())  # the footer is in: what the stream took is the file
        self._out.close()
        return size

    def abort(self) -> None:
        """Discard the file: an object store's upload is aborted before the writer flushes."""
        try:
            if self._sink is not None:
                self._raw.discarded = True
            if self._out is not None:
                abort_output(self._out)
            if self._writer is not None:
                with contextlib.suppress(Exception):
                    self._writer.close()
        finally:
            self.file_io.delete_quietly(self.path)


class _Discardable:
    """The file's stream as Arrow's buffered sink sees it: once an aborted file's stream is
    gone, what the sink still holds (or the writer adds while it closes) is dropped."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.discarded = False
        self.closed = False

    def write(self, data: Any) -> int:
        return len(data) if self.discarded else self.out.write(data)

    def tell(self) -> int:
        return 0 if self.discarded else self.out.tell()

    def flush(self) -> None:
        if not self.discarded:
            self.out.flush()

    def close(self) -> None:
        """The file's stream is closed (or aborted) by FormatWriter, never by Arrow."""

    def writable(self) -> bool:
        return True


def _has_nanosecond_timestamp(schema: pa.Schema) -> bool:
    return any(pa.types.is_timestamp(f.type) and f.type.unit == "ns" for f in schema)


def _encodings(table: pa.Table, int96: bool = False) -> tuple[bool | list[str], dict[str, str]]:
    """The columns that keep a dictionary, and the integer columns written DELTA_BINARY_PACKED,
    decided on ``table``'s first rows.

    Dictionaries follow parquet-mr's rule: dictionary plus indices smaller than the plain
    values. pyarrow keeps a dictionary until it passes 1 MB, so in files of a few MB a column of
    distinct ids or measures was stored twice (about a fifth more bytes than Java's and Spark's
    files, read that much slower). Nested columns keep pyarrow's default, so a table with any
    keeps it everywhere.

    An integer, date or timestamp column without a dictionary is delta-encoded (as parquet-mr's
    v2 writer does) in the files that allow it (``FileKind.delta_encoding``: append files)
    where its first rows' steps need at most half the plain width: ids and sorted times shrink
    to a few bits, and zstd then has next to nothing to do (a sequential id column encoded 5x
    faster and read 3x faster). Random values stay plain: there delta is bigger and slower.
    Java 1.4.2 reads such pages (tests/interop/test_delta_encoding_java.py); it misreads
    pyarrow's delta-encoded strings, so strings stay plain."""
    if any(pa.types.is_nested(f.type) for f in table.schema):
        return True, {}
    keep = []
    delta = {}
    sample = table.slice(0, _DICTIONARY_SAMPLE)
    for name, column in zip(sample.column_names, sample.columns, strict=True):
        if _dictionary_pays(column):
            keep.append(name)
        elif _delta_pays(column, int96):
            delta[name] = "DELTA_BINARY_PACKED"
    return keep, delta


def _delta_pays(column: pa.ChunkedArray, int96: bool) -> bool:
    kind = column.type
    if pa.types.is_timestamp(kind):
        if int96:  # every timestamp of the file is an INT96, which has no delta encoding
            return False
    elif not (pa.types.is_integer(kind) or pa.types.is_date32(kind)):
        return False
    values = column.drop_null()
    if len(values) < 3:
        return False
    numbers = np.asarray(values.combine_chunks().to_numpy(zero_copy_only=False)).astype(np.int64)
    steps: npt.NDArray[np.int64] = numbers[1:] - numbers[:-1]  # wraps, as the encoding's do
    physical = 64 if pa.types.is_timestamp(kind) or kind.byte_width == 8 else 32
    return _step_width(steps) <= physical // 2


def _step_width(steps: npt.NDArray[np.int64]) -> int:
    """Bits DELTA_BINARY_PACKED spends per step: the steps minus their minimum (unsigned)."""
    spread = steps.view(np.uint64) - steps.min().view(np.uint64)
    return int(spread.max()).bit_length()


def _dictionary_pays(column: pa.ChunkedArray) -> bool:
    kind = column.type
    values = column.length() - column.null_count
    variable = pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
    variable = variable or pa.types.is_string(kind) or pa.types.is_large_string(kind)
    width = _fixed_width(kind)
    if values == 0 or not (width or variable):
        return True
    unique = pc.unique(column.drop_null())
    index_bytes = values * max(1, (len(unique) - 1).bit_length()) / 8
    if width:
        return bool(len(unique) * width + index_bytes < values * width)
    plain = pc.sum(pc.binary_length(column)).as_py() + 4 * values
    dictionary = pc.sum(pc.binary_length(unique)).as_py() + 4 * len(unique)
    return bool(dictionary + index_bytes < plain)


def _fixed_width(kind: pa.DataType) -> int:
    """Bytes per plain-encoded value, or 0 (booleans are never dictionary-encoded)."""
    if pa.types.is_boolean(kind) or pa.types.is_dictionary(kind):
        return 0
    try:
        return max(0, int(kind.byte_width))
    except ValueError:
        return 0
