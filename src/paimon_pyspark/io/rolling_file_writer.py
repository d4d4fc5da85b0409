"""The one rolling data-file writer under the append, key-value and postpone bucket writers.

Mirrors org.apache.paimon.io.RollingFileWriter over its SingleFileWriters: rows go into the open
file in pieces of about ``piece_bytes``, a new file starts once the open one reaches
``target-file-size``, and every closed file becomes a DataFileMeta with its value statistics.
What differs between the kinds of data file (their columns, keys and sequence numbers) is a
``FileKind``: ``AppendFileKind`` here (Java's RowDataFileWriter), ``KeyValueFileKind`` in
``key_value_file`` (KeyValueDataFileWriter) and the postpone kind of ``write/postpone.py``.
Every file of a table with ``file-index.*`` columns gets its indexes here, fed piece by piece
(``io/file_index_writer.py``, Java's DataFileIndexWriter in those writers).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from paimon_pyspark.format.stats import StatsCollector
from paimon_pyspark.format.writers import FormatWriter
from paimon_pyspark.io.data_file import BucketDir, DataFileSettings, local_now_millis
from paimon_pyspark.io.file_index_writer import DataFileIndexWriter, index_path, place_index
from paimon_pyspark.spec.data_file_meta import (
    EMPTY_ROW_BYTES,
    EMPTY_STATS,
    FILE_SOURCE_APPEND,
    DataFileMeta,
    SimpleStats,
)
from paimon_pyspark.types.arrow import one_array
from paimon_pyspark.types.data_types import DataField


@dataclass(frozen=True)
class KeysAndSequences:
    """The part of a file's DataFileMeta that its kind knows: key range, key statistics,
    sequence numbers and retractions."""

    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    delete_row_count: int


class FileKind(ABC):
    """What one kind of data file holds beyond the table's rows, collected as its rows are
    written. One file is open at a time: ``start`` begins the next one."""

    delta_encoding = False
    """Integer columns may be written DELTA_BINARY_PACKED (format/writers.py). Only append
    files: key-value files stay as parquet-mr writes them, because universal compaction picks
    by file size, and Java's picks on the same data must be ours."""

    def __init__(self, schema: pa.Schema, fields: list[DataField]) -> None:
        self.schema = schema
        """The physical Arrow schema of the files."""
        self.fields = fields
        """The physical fields of the files (their ids and Paimon types)."""

    def physical(self, rows: pa.Table) -> pa.Table:
        """``rows`` as the file stores them."""
        return rows

    @abstractmethod
    def start(self, first: pa.Table) -> None:
        """A new file begins with ``first``'s rows."""

    @abstractmethod
    def update(self, rows: pa.Table) -> None:
        """``rows`` went into the open file."""

    @abstractmethod
    def finish(self) -> KeysAndSequences:
        """The open file is complete."""


class AppendFileKind(FileKind):
    """Files of an append table: the table's columns, no keys, sequence numbers running on.

    In Parquet files the partition's string and binary columns go to the writer as a
    one-value dictionary (``one_value_columns``): the file's bytes are the same, without
    gathering and hashing every row's copy of the one value it holds (a tenth of a 4-column
    file's encoding).
    """

    delta_encoding = True

    def __init__(self, settings: DataFileSettings, next_seq: int) -> None:
        schema = settings.arrow_schema
        self.one_value_columns = one_value_columns(settings)
        for i in self.one_value_columns:
            f = schema.field(i)
            schema = schema.set(i, f.with_type(pa.dictionary(pa.int32(), f.type)))
        super().__init__(schema, settings.fields)
        self.next_seq = next_seq
        self._min_seq = next_seq

    def physical(self, rows: pa.Table) -> pa.Table:
        for i in self.one_value_columns:
            column = rows.column(i)
            if not pa.types.is_dictionary(column.type):
                rows = rows.set_column(i, self.schema.field(i), one_value(column, rows.num_rows))
        return rows

    def start(self, first: pa.Table) -> None:
        self._min_seq = self.next_seq

    def update(self, rows: pa.Table) -> None:
        self.next_seq += rows.num_rows

    def finish(self) -> KeysAndSequences:
        return KeysAndSequences(
            EMPTY_ROW_BYTES, EMPTY_ROW_BYTES, EMPTY_STATS, self._min_seq, self.next_seq - 1, 0
        )


def one_value_columns(settings: DataFileSettings) -> list[int]:
    """Positions of the partition columns an append file takes as a one-value dictionary."""
    if settings.file_format != "parquet":
        return []
    schema = settings.arrow_schema
    return [
        i
        for i, f in enumerate(schema)
        if f.name in settings.partition_keys and _one_value_dictionary(f.type)
    ]


def one_value(column: pa.ChunkedArray | pa.Array, rows: int) -> pa.DictionaryArray:
    """``rows`` copies of ``column``'s first value (which all its rows hold), as a dictionary."""
    value = one_array(column.slice(0, 1))
    if value.null_count:
        return pa.DictionaryArray.from_arrays(pa.nulls(rows, pa.int32()), value.drop_null())
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int32)), value)


def _one_value_dictionary(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_binary(kind))


class RollingFileWriter:
    """Writes rows into data files of one bucket, rolling at ``target-file-size``.

    ``write`` continues the open file; ``roll`` closes it, so the next rows start a new file (a
    sorted run ends). Files are kept until ``close`` hands them out; ``abort`` deletes them.
    """

    def __init__(
        self,
        settings: DataFileSettings,
        bucket_dir: BucketDir,
        kind: FileKind,
        level: int = 0,
        file_source: int = FILE_SOURCE_APPEND,
    ) -> None:
        self.s = settings
        self.dir = bucket_dir
        self.kind = kind
        self.level = level
        self.file_source = file_source
        self._file: FormatWriter | None = None
        self._file_name = ""
        self._rows = 0
        self._stats = self._new_stats()
        self._index: DataFileIndexWriter | None = None
        self.files: list[DataFileMeta] = []

    def write(self, rows: pa.Table) -> None:
        """Write ``rows`` in pieces of about ``piece_bytes``; rolling is checked between pieces."""
        if rows.num_rows == 0:
            return
        pieces = max(1, -(-rows.nbytes // self.s.piece_bytes))
        step = -(-rows.num_rows // pieces)
        for start in range(0, rows.num_rows, step):
            self._write_piece(rows.slice(start, step))

    def roll(self) -> None:
        """Close the open file, if any: the rows written next go to a new file."""
        if self._file is None:
            return
        size = self._file.close()
        if self._file.footer is not None:
            self._stats.add_footer(self._file.footer)
        embedded: bytes | None = None
        extra_files: tuple[str, ...] = ()
        if self._index is not None:
            index_settings = self.s.file_index
            assert index_settings is not None
            embedded, extra_files = place_index(
                self.s.file_io,
                index_path(self._file.path),
                self._index.finish(),
                index_settings.in_manifest_threshold,
            )
            self._index = None
        self._file = None
        k = self.kind.finish()
        self.files.append(
            DataFileMeta(
                file_name=self._file_name,
                file_size=size,
                row_count=self._rows,
                min_key=k.min_key,
                max_key=k.max_key,
                key_stats=k.key_stats,
                value_stats=self._stats.result(),
                min_sequence_number=k.min_sequence_number,
                max_sequence_number=k.max_sequence_number,
                schema_id=self.s.schema_id,
                level=self.level,
                creation_time=local_now_millis(),
                delete_row_count=k.delete_row_count,
                file_source=self.file_source,
                value_stats_cols=None if self.s.stats_mode != "none" else (),
                extra_files=extra_files,
                embedded_index=embedded,
                external_path=self.dir.external_paths.get(self._file_name),
            )
        )

    def close(self) -> list[DataFileMeta]:
        """Close the open file and hand out every file written; they are the caller's now."""
        self.roll()
        files, self.files = self.files, []
        return files

    def abort(self) -> None:
        """Delete the open file and every file not yet handed out."""
        if self._file is not None:
            self._file.abort()
            self._file = None
            self._index = None
        self.dir.delete(self.files)
        self.files = []

    def _new_stats(self) -> StatsCollector:
        parquet = self.s.file_format == "parquet"
        return StatsCollector(self.s.fields, self.s.stats_mode, parquet_footer=parquet)

    def _write_piece(self, piece: pa.Table) -> None:
        if self._file is None:
            self._file_name, self._file = self.dir.open_file(
                self.s, self.kind.schema, self.kind.fields, self.kind.delta_encoding
            )
            self._stats = self._new_stats()
            self._rows = 0
            if self.s.file_index is not None:
                self._index = DataFileIndexWriter(self.s.file_index)
            self.kind.start(piece)
        self._file.write(self.kind.physical(piece))
        self._stats.update(piece)
        if self._index is not None:
            self._index.write(piece)
        self.kind.update(piece)
        self._rows += piece.num_rows
        if self._file.bytes_written >= self.s.target_file_size:
            self.roll()
