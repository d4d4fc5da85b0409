"""Writers of primary-key data files: a sorted-run writer and the bucket writer over it.

Mirrors org.apache.paimon.mergetree.MergeTreeWriter (write buffer, flush as a level-0 sorted
run) with org.apache.paimon.io.{KeyValueFileWriterFactory, KeyValueDataFileWriterImpl,
KeyValueThinDataFileWriterImpl} and RollingFileWriter. A file holds ``_KEY_<k>`` copies of the
trimmed primary key (left out in thin mode), ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, then every
table column, sorted by key with at most one record per key.

Records travel as Arrow tables of the table columns plus ``_SEQUENCE_NUMBER`` (int64) and
``_VALUE_KIND`` (int8): the same shape the merge function, the merge-on-read and compaction use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.format.stats import StatsCollector
from paimon_pyspark.format.writers import FormatWriter
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_APPEND, DataFileMeta
from paimon_pyspark.spec.key_value import (
    RETRACTS,
    SEQUENCE_NUMBER,
    VALUE_KIND,
    kv_fields,
)
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.arrow import to_arrow_schema
from paimon_pyspark.types.data_types import DataField, DataType
from paimon_pyspark.write.append_writer import local_now_millis
from paimon_pyspark.write.data_file import BucketDir

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

_PIECE_BYTES = 64 * 1024 * 1024
"""Largest chunk handed to the format writer at once: rolling is checked between chunks."""

_RETRACT_KINDS = pa.array(RETRACTS, pa.int8())

KEY_STATS_MODE = "truncate(128)"
"""Java 1.4 collects ``_KEY_STATS`` in this mode whatever ``metadata.stats-mode`` says (seen on
files Java wrote: 200-character keys keep 128 characters, with the table mode ``none`` too)."""


@dataclass(frozen=True)
class KvFileSettings:
    """Everything needed to write key-value files of one table (one schema version)."""

    file_io: FileIO
    schema_id: int
    fields: list[DataField]
    trimmed_primary_keys: list[str]
    key_types: list[DataType]
    thin: bool
    file_format: str
    compression: str
    zstd_level: int
    target_file_size: int
    stats_mode: str
    file_prefix: str
    write_buffer_size: int
    piece_bytes: int

    @property
    def key_fields(self) -> list[DataField]:
        by_name = {f.name: f for f in self.fields}
        return [by_name[k] for k in self.trimmed_primary_keys]

    @property
    def physical_fields(self) -> list[DataField]:
        return kv_fields(self.fields, self.trimmed_primary_keys, self.thin)

    @property
    def physical_schema(self) -> pa.Schema:
        return to_arrow_schema(self.physical_fields)

    @staticmethod
    def from_table(table: FileStore) -> KvFileSettings:
        o = table.options
        schema = table.table_schema
        trimmed = schema.trimmed_primary_keys()
        target = o.target_file_size(primary_key=True)
        return KvFileSettings(
            file_io=table.file_io,
            schema_id=schema.id,
            fields=list(table.fields),
            trimmed_primary_keys=trimmed,
            key_types=[schema.field(k).type for k in trimmed],
            thin=o.data_file_thin_mode,
            file_format=o.file_format,
            compression=o.file_compression,
            zstd_level=o.zstd_level,
            target_file_size=target,
            stats_mode=o.stats_mode,
            file_prefix=o.data_file_prefix,
            write_buffer_size=o.write_buffer_size,
            piece_bytes=min(_PIECE_BYTES, target),
        )


def to_physical(records: pa.Table, s: KvFileSettings) -> pa.Table:
    """KV records (any column order) in the physical column order and types of a data file."""
    columns: list[pa.ChunkedArray | pa.Array] = []
    if not s.thin:
        columns += [records.column(k) for k in s.trimmed_primary_keys]
    columns.append(records.column(SEQUENCE_NUMBER).cast(pa.int64()))
    columns.append(records.column(VALUE_KIND).cast(pa.int8()))
    columns += [records.column(f.name) for f in s.fields]
    return pa.Table.from_arrays(columns, schema=s.physical_schema)


class SortedRunWriter:
    """Writes one sorted run (records sorted by key, one per key) into rolling files.

    Each file's min/max key is its first/last record's key, so the input must be sorted, as
    Java's KeyValueDataFileWriter requires.
    """

    def __init__(
        self,
        settings: KvFileSettings,
        bucket_path: str,
        path_factory: PathFactory,
        level: int,
        file_source: int,
    ) -> None:
        self.s = settings
        self.bucket_path = bucket_path
        self.path_factory = path_factory
        self.level = level
        self.file_source = file_source
        self._file: FormatWriter | None = None
        self._file_name = ""
        self._stats: StatsCollector | None = None
        self._key_stats: StatsCollector | None = None
        self._rows = 0
        self._deletes = 0
        self._min_seq = 0
        self._max_seq = 0
        self._min_key: list[Any] = []
        self._max_key: list[Any] = []
        self.files: list[DataFileMeta] = []
        self._dir = BucketDir(settings.file_io, bucket_path, path_factory)

    def write(self, records: pa.Table) -> None:
        """Append sorted records (continuing the run); rolls at ``target-file-size``."""
        if records.num_rows == 0:
            return
        pieces = max(1, -(-records.nbytes // self.s.piece_bytes))
        step = -(-records.num_rows // pieces)
        for start in range(0, records.num_rows, step):
            self._write_piece(records.slice(start, step))

    def close(self) -> list[DataFileMeta]:
        if self._file is not None:
            self._close_file()
        return list(self.files)

    def abort(self) -> None:
        if self._file is not None:
            self._file.abort()
            self._file = None
        for f in self.files:
            self.s.file_io.delete_quietly(os.path.join(self.bucket_path, f.file_name))
        self.files = []

    def _write_piece(self, piece: pa.Table) -> None:
        if self._file is None:
            self._open(piece)
        assert self._file is not None and self._stats is not None
        physical = to_physical(piece, self.s)
        self._file.write(physical)
        self._stats.update(piece)
        assert self._key_stats is not None
        self._key_stats.update(piece)
        n = piece.num_rows
        self._rows += n
        seq = pc.min_max(piece.column(SEQUENCE_NUMBER))
        self._min_seq = min(self._min_seq, seq["min"].as_py())
        self._max_seq = max(self._max_seq, seq["max"].as_py())
        retract = pc.is_in(piece.column(VALUE_KIND).cast(pa.int8()), _RETRACT_KINDS)
        self._deletes += int(pc.sum(retract).as_py() or 0)
        self._max_key = _key_at(piece, self.s.trimmed_primary_keys, n - 1)
        if self._file.bytes_written >= self.s.target_file_size:
            self._close_file()

    def _open(self, first: pa.Table) -> None:
        s = self.s
        self._file_name, self._file = self._dir.open_file(
            s.file_prefix,
            s.file_format,
            s.compression,
            s.zstd_level,
            s.physical_schema,
            s.physical_fields,
        )
        self._stats = StatsCollector(self.s.fields, self.s.stats_mode)
        self._key_stats = StatsCollector(self.s.key_fields, KEY_STATS_MODE)
        self._rows = 0
        self._deletes = 0
        self._min_seq = 2**63 - 1
        self._max_seq = -(2**63)
        self._min_key = _key_at(first, self.s.trimmed_primary_keys, 0)

    def _close_file(self) -> None:
        assert self._file is not None and self._stats is not None
        assert self._key_stats is not None
        size = self._file.close()
        self._file = None
        key_types = self.s.key_types
        self.files.append(
            DataFileMeta(
                file_name=self._file_name,
                file_size=size,
                row_count=self._rows,
                min_key=serialize_with_arity(self._min_key, key_types),
                max_key=serialize_with_arity(self._max_key, key_types),
                key_stats=self._key_stats.result(),
                value_stats=self._stats.result(),
                min_sequence_number=self._min_seq,
                max_sequence_number=self._max_seq,
                schema_id=self.s.schema_id,
                level=self.level,
                creation_time=local_now_millis(),
                delete_row_count=self._deletes,
                file_source=self.file_source,
                value_stats_cols=None if self.s.stats_mode != "none" else (),
            )
        )


def _key_at(records: pa.Table, keys: Sequence[str], row: int) -> list[Any]:
    return [records.column(k)[row].as_py() for k in keys]


def write_sorted_run(
    table: FileStore,
    partition_values: list[Any],
    bucket: int,
    records: pa.Table,
    level: int,
    file_source: int,
) -> list[DataFileMeta]:
    """Write merged, key-sorted KV records (their sequence numbers kept) as files at ``level``.

    The entry point for compaction: ``records`` hold the table columns plus
    ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``, at most one record per key, sorted by key.
    """
    settings = KvFileSettings.from_table(table)
    path_factory = PathFactory(table.path)
    bucket_path = path_factory.bucket_path(table.partition_rel_path(list(partition_values)), bucket)
    writer = SortedRunWriter(settings, bucket_path, path_factory, level, file_source)
    try:
        writer.write(records)
        return writer.close()
    except BaseException:
        writer.abort()
        raise


class KeyValueWriter:
    """The writer of one (partition, bucket) of a primary-key table.

    Rows arrive with their ``_VALUE_KIND``; each gets the next sequence number of this writer
    (``base + k * stride + index`` for its k-th row, see ``sequence_slot`` on TableWrite). Once
    the buffer holds ``write-buffer-size`` Arrow bytes it is merged (one record per key, deletes
    kept) and written as a new level-0 sorted run, as Java's MergeTreeWriter flushes.
    """

    def __init__(
        self,
        settings: KvFileSettings,
        merge_settings: MergeSettings,
        bucket_path: str,
        path_factory: PathFactory,
        next_seq: int,
        sequence_slot: tuple[int, int] = (0, 1),
    ) -> None:
        self.s = settings
        self.merge_settings = merge_settings
        self.bucket_path = bucket_path
        self.path_factory = path_factory
        self.base_seq = next_seq
        self.slot_index, self.slot_stride = sequence_slot
        self.count = 0
        self._buffer: list[pa.Table] = []
        self._buffered_bytes = 0
        self._runs: list[SortedRunWriter] = []
        self.new_files: list[DataFileMeta] = []

    @property
    def buffered_bytes(self) -> int:
        return self._buffered_bytes

    @property
    def flush_threshold(self) -> int:
        return self.s.write_buffer_size

    def write(self, rows: pa.Table) -> None:
        """Buffer ``rows`` (table columns + ``_VALUE_KIND``), numbering them in arrival order."""
        n = rows.num_rows
        if n == 0:
            return
        k = np.arange(self.count, self.count + n, dtype=np.int64)
        seq = self.base_seq + k * self.slot_stride + self.slot_index
        self.count += n
        table = rows.append_column(SEQUENCE_NUMBER, pa.array(seq, pa.int64()))
        self._buffer.append(table)
        self._buffered_bytes += table.nbytes

    def flush(self) -> None:
        """Merge the buffer and write it as one level-0 sorted run (one or more files)."""
        if not self._buffer:
            return
        records = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        self._buffer = []
        self._buffered_bytes = 0
        merged = merge(records, self.s.trimmed_primary_keys, self.merge_settings, drop_delete=False)
        run = SortedRunWriter(self.s, self.bucket_path, self.path_factory, 0, FILE_SOURCE_APPEND)
        self._runs.append(run)
        run.write(merged)
        self.new_files.extend(run.close())

    def prepare_commit(self) -> list[DataFileMeta]:
        self.flush()
        files, self.new_files = self.new_files, []
        self._runs = []
        return files

    def abort(self) -> None:
        """Remove every file this writer produced and not yet handed out."""
        self._buffer = []
        self._buffered_bytes = 0
        for run in self._runs:
            run.abort()
        self._runs = []
        self.new_files = []
