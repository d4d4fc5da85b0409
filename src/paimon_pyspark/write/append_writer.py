"""The writer of one (partition, bucket) of an append table.

Mirrors org.apache.paimon.append.AppendOnlyWriter with a RollingFileWriter: rows are buffered in
memory, flushed as chunks into the current data file, and a new file is started once the
current one reaches ``target-file-size``. Sequence numbers run on from the bucket's highest.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow as pa

from paimon_pyspark.format.stats import StatsCollector
from paimon_pyspark.format.writers import FormatWriter
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.data_file_meta import (
    EMPTY_ROW_BYTES,
    EMPTY_STATS,
    FILE_SOURCE_APPEND,
    DataFileMeta,
)
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataField
from paimon_pyspark.write.data_file import BucketDir

_EPOCH = dt.datetime(1970, 1, 1)


def local_now_millis() -> int:
    """Java's LocalDateTime.now() as a TIMESTAMP(3): local wall-clock encoded as if UTC."""
    return int((dt.datetime.now() - _EPOCH).total_seconds() * 1000)


@dataclass(frozen=True)
class WriterSettings:
    file_io: FileIO
    arrow_schema: pa.Schema
    fields: list[DataField]
    schema_id: int
    file_format: str
    compression: str
    zstd_level: int
    target_file_size: int
    stats_mode: str
    file_prefix: str
    flush_bytes: int


class AppendWriter:
    def __init__(
        self, settings: WriterSettings, bucket_path: str, path_factory: PathFactory, next_seq: int
    ) -> None:
        self.s = settings
        self.bucket_path = bucket_path
        self.path_factory = path_factory
        self.next_seq = next_seq
        self._buffer: list[pa.Table] = []
        self._buffered_bytes = 0
        self._file: FormatWriter | None = None
        self._file_name = ""
        self._file_rows = 0
        self._file_min_seq = 0
        self._stats: StatsCollector | None = None
        self.new_files: list[DataFileMeta] = []
        self._dir = BucketDir(settings.file_io, bucket_path, path_factory)

    @property
    def buffered_bytes(self) -> int:
        return self._buffered_bytes

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            self._buffer.append(table)
            self._buffered_bytes += table.nbytes

    def flush(self) -> None:
        """Write the buffered rows into the current file in pieces of about ``flush_bytes``,
        rolling to a new file whenever the current one reaches ``target-file-size``."""
        if not self._buffer:
            return
        chunk = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        self._buffer = []
        self._buffered_bytes = 0
        pieces = max(1, -(-chunk.nbytes // self.s.flush_bytes))
        step = -(-chunk.num_rows // pieces)
        for start in range(0, chunk.num_rows, step):
            self._write_piece(chunk.slice(start, step))

    def _write_piece(self, piece: pa.Table) -> None:
        if self._file is None:
            self._open()
        assert self._file is not None and self._stats is not None
        self._file.write(piece)
        self._stats.update(piece)
        self._file_rows += piece.num_rows
        self.next_seq += piece.num_rows
        if self._file.bytes_written >= self.s.target_file_size:
            self._close_file()

    def prepare_commit(self) -> list[DataFileMeta]:
        self.flush()
        if self._file is not None:
            self._close_file()
        files, self.new_files = self.new_files, []
        return files

    def abort(self) -> None:
        """Remove every file this writer produced and not yet handed out."""
        self._buffer = []
        if self._file is not None:
            self._file.abort()
            self._file = None
        self._dir.delete(self.new_files)
        self.new_files = []

    def _open(self) -> None:
        s = self.s
        self._file_name, self._file = self._dir.open_file(
            s.file_prefix, s.file_format, s.compression, s.zstd_level, s.arrow_schema, s.fields
        )
        self._stats = StatsCollector(self.s.fields, self.s.stats_mode)
        self._file_rows = 0
        self._file_min_seq = self.next_seq

    def _close_file(self) -> None:
        assert self._file is not None and self._stats is not None
        size = self._file.close()
        self._file = None
        self.new_files.append(
            DataFileMeta(
                file_name=self._file_name,
                file_size=size,
                row_count=self._file_rows,
                min_key=EMPTY_ROW_BYTES,
                max_key=EMPTY_ROW_BYTES,
                key_stats=EMPTY_STATS,
                value_stats=self._stats.result(),
                min_sequence_number=self._file_min_seq,
                max_sequence_number=self.next_seq - 1,
                schema_id=self.s.schema_id,
                level=0,
                creation_time=local_now_millis(),
                delete_row_count=0,
                file_source=FILE_SOURCE_APPEND,
                value_stats_cols=None if self.s.stats_mode != "none" else (),
            )
        )
