"""DataFileMeta and SimpleStats: what a manifest says about one data file.

Mirrors org.apache.paimon.io.DataFileMeta (21 fields on master, 20 in 2.0.0) and
org.apache.paimon.stats.SimpleStats. Min/max rows are kept as serialized BinaryRow bytes
(arity-prefixed), exactly as they travel in manifests and commit messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

EMPTY_ROW_BYTES = b"\x00\x00\x00\x00" + b"\x00" * 8

FILE_SOURCE_APPEND = 0
FILE_SOURCE_COMPACT = 1


@dataclass(frozen=True)
class SimpleStats:
    min_values: bytes
    max_values: bytes
    null_counts: tuple[int | None, ...] | None

    def to_avro(self) -> dict[str, Any]:
        return {
            "_MIN_VALUES": self.min_values,
            "_MAX_VALUES": self.max_values,
            "_NULL_COUNTS": None if self.null_counts is None else list(self.null_counts),
        }

    @staticmethod
    def from_avro(rec: dict[str, Any]) -> SimpleStats:
        nc = rec.get("_NULL_COUNTS")
        return SimpleStats(
            bytes(rec["_MIN_VALUES"]), bytes(rec["_MAX_VALUES"]), None if nc is None else tuple(nc)
        )


EMPTY_STATS = SimpleStats(EMPTY_ROW_BYTES, EMPTY_ROW_BYTES, ())


@dataclass(frozen=True)
class DataFileMeta:
    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...] = ()
    creation_time: int | None = None
    """Epoch millis of the local wall-clock time, encoded as if UTC (Java's LocalDateTime)."""
    delete_row_count: int | None = 0
    embedded_index: bytes | None = None
    file_source: int | None = FILE_SOURCE_APPEND
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None
    write_cols_sequences: tuple[int, ...] | None = field(default=None)

    def with_level(self, level: int) -> DataFileMeta:
        return replace(self, level=level)

    def identifier(self) -> tuple[Any, ...]:
        """The part of a file that names it in manifest merging (Java's FileEntry.Identifier)."""
        return (
            self.level,
            self.file_name,
            self.extra_files,
            self.embedded_index,
            self.external_path,
        )

    def to_avro(self) -> dict[str, Any]:
        return {
            "_FILE_NAME": self.file_name,
            "_FILE_SIZE": self.file_size,
            "_ROW_COUNT": self.row_count,
            "_MIN_KEY": self.min_key,
            "_MAX_KEY": self.max_key,
            "_KEY_STATS": self.key_stats.to_avro(),
            "_VALUE_STATS": self.value_stats.to_avro(),
            "_MIN_SEQUENCE_NUMBER": self.min_sequence_number,
            "_MAX_SEQUENCE_NUMBER": self.max_sequence_number,
            "_SCHEMA_ID": self.schema_id,
            "_LEVEL": self.level,
            "_EXTRA_FILES": list(self.extra_files),
            "_CREATION_TIME": self.creation_time,
            "_DELETE_ROW_COUNT": self.delete_row_count,
            "_EMBEDDED_FILE_INDEX": self.embedded_index,
            "_FILE_SOURCE": self.file_source,
            "_VALUE_STATS_COLS": _opt_list(self.value_stats_cols),
            "_EXTERNAL_PATH": self.external_path,
            "_FIRST_ROW_ID": self.first_row_id,
            "_WRITE_COLS": _opt_list(self.write_cols),
        }

    @staticmethod
    def from_avro(rec: dict[str, Any]) -> DataFileMeta:
        ct = rec.get("_CREATION_TIME")
        if ct is not None and not isinstance(ct, int):
            # fastavro hands timestamp-millis back as an aware datetime
            ct = int(ct.timestamp() * 1000)
        return DataFileMeta(
            file_name=rec["_FILE_NAME"],
            file_size=rec["_FILE_SIZE"],
            row_count=rec["_ROW_COUNT"],
            min_key=bytes(rec["_MIN_KEY"]),
            max_key=bytes(rec["_MAX_KEY"]),
            key_stats=SimpleStats.from_avro(rec["_KEY_STATS"]),
            value_stats=SimpleStats.from_avro(rec["_VALUE_STATS"]),
            min_sequence_number=rec["_MIN_SEQUENCE_NUMBER"],
            max_sequence_number=rec["_MAX_SEQUENCE_NUMBER"],
            schema_id=rec["_SCHEMA_ID"],
            level=rec["_LEVEL"],
            extra_files=tuple(rec.get("_EXTRA_FILES") or ()),
            creation_time=ct,
            delete_row_count=rec.get("_DELETE_ROW_COUNT"),
            embedded_index=_opt_bytes(rec.get("_EMBEDDED_FILE_INDEX")),
            file_source=rec.get("_FILE_SOURCE"),
            value_stats_cols=_opt_tuple(rec.get("_VALUE_STATS_COLS")),
            external_path=rec.get("_EXTERNAL_PATH"),
            first_row_id=rec.get("_FIRST_ROW_ID"),
            write_cols=_opt_tuple(rec.get("_WRITE_COLS")),
            write_cols_sequences=_opt_tuple(rec.get("_WRITE_COLS_SEQUENCES")),
        )


def _opt_list(values: tuple[Any, ...] | None) -> list[Any] | None:
    return None if values is None else list(values)


def _opt_tuple(values: list[Any] | None) -> tuple[Any, ...] | None:
    return None if values is None else tuple(values)


def _opt_bytes(value: bytes | None) -> bytes | None:
    return None if value is None else bytes(value)
