"""Primary-key data files: their layout and what a key-value file's metadata holds.

Mirrors org.apache.paimon.io.{KeyValueFileWriterFactory, KeyValueDataFileWriterImpl,
KeyValueThinDataFileWriterImpl}. A file holds ``_KEY_<k>`` copies of the trimmed primary key
(left out in thin mode), ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, then every table column.

Records travel as Arrow tables of the table columns plus ``_SEQUENCE_NUMBER`` (int64) and
``_VALUE_KIND`` (int8): the same shape the merge function, the merge-on-read and compaction use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.format.stats import StatsCollector
from paimon_pyspark.io.data_file import DataFileSettings
from paimon_pyspark.io.rolling_file_writer import FileKind, KeysAndSequences
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.key_value import RETRACTS, SEQUENCE_NUMBER, VALUE_KIND, kv_fields
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.arrow import to_arrow_schema
from paimon_pyspark.types.data_types import DataField, DataType

_RETRACT_KINDS = pa.array(RETRACTS, pa.int8())

KEY_STATS_MODE = "truncate(128)"
"""Java 1.4 collects ``_KEY_STATS`` in this mode whatever ``metadata.stats-mode`` says (seen on
files Java wrote: 200-character keys keep 128 characters, with the table mode ``none`` too)."""


@dataclass(frozen=True)
class KvFileSettings:
    """Everything needed to write key-value files of one table (one schema version)."""

    files: DataFileSettings
    trimmed_primary_keys: list[str]
    key_types: list[DataType]
    thin: bool
    write_buffer_size: int

    @property
    def fields(self) -> list[DataField]:
        return self.files.fields

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
    def of(store: FileStore) -> KvFileSettings:
        schema = store.table_schema
        trimmed = schema.trimmed_primary_keys()
        return KvFileSettings(
            files=DataFileSettings.of(store, primary_key=True),
            trimmed_primary_keys=trimmed,
            key_types=[schema.field(k).type for k in trimmed],
            thin=store.options.data_file_thin_mode,
            write_buffer_size=store.options.write_buffer_size,
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


class KeyValueFileKind(FileKind):
    """Key-value files (Java's KeyValueDataFileWriter): each file's min/max key is its first/last
    record's key, so records arrive sorted by key, as Java requires; key statistics in
    ``key_stats_mode``, sequence numbers from ``_SEQUENCE_NUMBER``, retractions counted."""

    def __init__(self, settings: KvFileSettings, key_stats_mode: str = KEY_STATS_MODE) -> None:
        super().__init__(settings.physical_schema, settings.physical_fields)
        self.s = settings
        self.key_stats_mode = key_stats_mode
        self._key_stats = StatsCollector(settings.key_fields, key_stats_mode)
        self._deletes = 0
        self._min_seq = 0
        self._max_seq = 0
        self._min_key: list[Any] = []
        self._max_key: list[Any] = []

    def physical(self, rows: pa.Table) -> pa.Table:
        return to_physical(rows, self.s)

    def start(self, first: pa.Table) -> None:
        self._key_stats = StatsCollector(self.s.key_fields, self.key_stats_mode)
        self._deletes = 0
        self._min_seq = 2**63 - 1
        self._max_seq = -(2**63)
        self._min_key = _key_at(first, self.s.trimmed_primary_keys, 0)

    def update(self, rows: pa.Table) -> None:
        self._key_stats.update(rows)
        self.track_sequence(rows)
        retract = pc.is_in(rows.column(VALUE_KIND).cast(pa.int8()), _RETRACT_KINDS)
        self._deletes += int(pc.sum(retract).as_py() or 0)
        self._max_key = _key_at(rows, self.s.trimmed_primary_keys, rows.num_rows - 1)

    def track_sequence(self, rows: pa.Table) -> None:
        seq = pc.min_max(rows.column(SEQUENCE_NUMBER))
        self._min_seq = min(self._min_seq, seq["min"].as_py())
        self._max_seq = max(self._max_seq, seq["max"].as_py())

    def sequence_range(self) -> tuple[int, int]:
        return self._min_seq, self._max_seq

    def finish(self) -> KeysAndSequences:
        key_types = self.s.key_types
        min_seq, max_seq = self.sequence_range()
        return KeysAndSequences(
            serialize_with_arity(self._min_key, key_types),
            serialize_with_arity(self._max_key, key_types),
            self._key_stats.result(),
            min_seq,
            max_seq,
            self._deletes,
        )


def _key_at(records: pa.Table, keys: Sequence[str], row: int) -> list[Any]:
    return [records.column(k)[row].as_py() for k in keys]
