"""Versioned bytes for the records paimon_pyspark hands between its own processes and keeps in a
distributed job's staging folder: task inputs, task results, staging records.

A record is a header, ``[4-byte magic][uint16 BE version]``, then its fields in Java
``DataOutput`` order: big-endian ints and longs, one-byte booleans, length-prefixed bytes and
UTF-8 strings. Paimon's own values keep Paimon's encodings: CommitMessages are
CommitMessageSerializer bytes and DataFileMetas DataFileMetaSerializer bytes (Java-compatible,
with their version beside them), partitions the arity-prefixed BinaryRow of manifests, Arrow
tables an Arrow IPC stream. Java has no such class: its engines ship Paimon objects with their
own versioned serializers (Flink's SimpleVersionedSerializer), which is what this is.

Why not pickle: a pickle names module paths, so moving a class makes old records unreadable, and
unpickling runs whatever a planted file asks for. These bytes name no code, and every way a
record can fail to decode (another magic, an unknown version, truncation, trailing bytes, a
field that does not decode) raises CorruptRecordError before anything of it is used.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

import pyarrow as pa

from paimon_pyspark.errors import CorruptRecordError, PaimonError
from paimon_pyspark.spec.binary_row import Buffer, deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.commit_message_serde import (
    CommitMessageSerializer,
    DataFileMetaSerializer,
)
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.types.data_types import DataType

T = TypeVar("T")

_HEADER = struct.Struct(">4sH")
_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")
_MESSAGE_VERSION = CommitMessageSerializer.LATEST_VERSION
"""Our records write the newest layout: it holds every field, and only we read it back."""


class RecordWriter:
    """Builds one record: ``RecordWriter(MAGIC, 1).write_int(3).write_files(fs).to_bytes()``."""

    def __init__(self, magic: bytes, version: int) -> None:
        if len(magic) != 4:
            raise PaimonError(f"a record magic has 4 bytes, got {magic!r}")
        self._buf = bytearray(_HEADER.pack(magic, version))

    def to_bytes(self) -> bytes:
        return bytes(self._buf)

    def write_int(self, value: int) -> RecordWriter:
        self._buf += _INT.pack(value)
        return self

    def write_long(self, value: int) -> RecordWriter:
        self._buf += _LONG.pack(value)
        return self

    def write_bool(self, value: bool) -> RecordWriter:
        self._buf.append(1 if value else 0)
        return self

    def write_bytes(self, data: Buffer) -> RecordWriter:
        self.write_int(len(data))
        self._buf += data
        return self

    def write_str(self, text: str) -> RecordWriter:
        return self.write_bytes(text.encode("utf-8"))

    def write_files(self, files: Sequence[DataFileMeta]) -> RecordWriter:
        self.write_int(_MESSAGE_VERSION)
        return self.write_bytes(DataFileMetaSerializer().serialize_list(files, _MESSAGE_VERSION))

    def write_messages(self, messages: Sequence[CommitMessage]) -> RecordWriter:
        self.write_int(_MESSAGE_VERSION)
        data = CommitMessageSerializer().serialize_list(messages, _MESSAGE_VERSION)
        return self.write_bytes(data)

    def write_arrow(self, table: pa.Table) -> RecordWriter:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return self.write_bytes(sink.getvalue().to_pybytes())


class RecordReader:
    """Reads one record back, field by field in the order it was written; ``finish()`` checks
    that nothing is left. ``what`` names the record in every error."""

    def __init__(self, data: Buffer, magic: bytes, versions: Collection[int], what: str) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self.what = what
        if len(self._data) < _HEADER.size:
            raise self.error(f"{len(self._data)} bytes are too short for a record header")
        found, version = _HEADER.unpack_from(self._data, 0)
        if found != magic:
            raise self.error(f"it starts with {bytes(found)!r}, not the magic {magic!r}")
        if version not in versions:
            raise self.error(f"version {version} is not one of {sorted(versions)}")
        self.version: int = version
        self._pos = _HEADER.size

    def error(self, reason: str) -> CorruptRecordError:
        return CorruptRecordError(f"{self.what} does not decode: {reason}")

    def _take(self, n: int) -> memoryview:
        end = self._pos + n
        if n < 0 or end > len(self._data):
            raise self.error(
                f"truncated: {n} bytes needed at offset {self._pos}, "
                f"{len(self._data) - self._pos} left"
            )
        out = self._data[self._pos : end]
        self._pos = end
        return out

    def read_int(self) -> int:
        return int(_INT.unpack(self._take(4))[0])

    def read_long(self) -> int:
        return int(_LONG.unpack(self._take(8))[0])

    def read_bool(self) -> bool:
        flag = self._take(1)[0]
        if flag > 1:
            raise self.error(f"{flag} at offset {self._pos - 1} is not a boolean")
        return flag == 1

    def read_bytes(self) -> bytes:
        return bytes(self._take(self.read_int()))

    def read_str(self) -> str:
        data = self.read_bytes()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.error(f"a string is not UTF-8: {e}") from e

    def read_files(self) -> tuple[DataFileMeta, ...]:
        return self._versioned(DataFileMetaSerializer().deserialize_list, "its files")

    def read_messages(self) -> tuple[CommitMessage, ...]:
        return self._versioned(CommitMessageSerializer().deserialize_list, "its messages")

    def _versioned(self, decode: Callable[[int, bytes], list[T]], what: str) -> tuple[T, ...]:
        """A value of Paimon's own versioned serializers: its version, then its bytes."""
        version, data = self.read_int(), self.read_bytes()
        try:
            return tuple(decode(version, data))
        except PaimonError as e:
            raise self.error(f"{what}: {e}") from e

    def read_partition(self, types: Sequence[DataType]) -> tuple[bytes, tuple[Any, ...]]:
        """A partition's BinaryRow bytes (arity-prefixed) and its values under ``types``."""
        data = self.read_bytes()
        try:
            return data, tuple(deserialize_with_arity(data, types))
        except (PaimonError, struct.error, IndexError, ValueError, UnicodeDecodeError) as e:
            raise self.error(f"its partition row: {e}") from e

    def read_arrow(self) -> pa.Table:
        data = self.read_bytes()
        try:
            return pa.ipc.open_stream(data).read_all()
        except (pa.ArrowException, ValueError) as e:
            raise self.error(f"its Arrow IPC stream: {e}") from e

    def finish(self) -> None:
        if self._pos != len(self._data):
            raise self.error(f"{len(self._data) - self._pos} trailing bytes at {self._pos}")
