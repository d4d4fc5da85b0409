"""CommitMessage and ManifestCommittable bytes exactly as Java Paimon writes and reads them.

Mirrors org.apache.paimon.table.sink.CommitMessageSerializer (and CommitMessageLegacyV2Serializer,
its fallback for the "version 2" bytes of Paimon 0.7), the DataFileMeta row serializers it
picks by version (org.apache.paimon.io.DataFileMeta08Serializer, DataFileMeta09Serializer,
DataFileMeta10LegacySerializer, DataFileMeta12LegacySerializer,
DataFileMetaFirstRowIdLegacySerializer, DataFileMetaWriteColsLegacySerializer,
DataFileMetaSerializer), the IndexFileMeta ones (org.apache.paimon.index.IndexFileMetaV1..V4
Deserializer, IndexFileMetaSerializer) and org.apache.paimon.manifest.ManifestCommittableSerializer
(spec sections 8.1-8.6).

Every version Java reads (1..13) is read here, and every version from 2 on can be written, so
bytes can be handed to any Java release: 11 for Paimon 1.4, 12 for 2.0 (our default), 13 for
master. Writing an old version refuses a message that version cannot hold (a column sequence
list before 13, a total bucket count before 7, ...) instead of dropping the field, and reading
refuses unknown versions, truncated input and trailing bytes. Pure codec: bytes in, bytes out.

Why rows: Java stores every file and index entry as a schema-bound BinaryRow
(``[int32 BE size][row]``) whose field list grows with the version; only the prefix that a
version knows is written. The partition is the arity-prefixed row
(``[int32 BE length][int32 BE arity][row]``), and everything around the rows is Java
``DataOutput``: big-endian ints and longs, one-byte booleans, modified UTF-8 strings.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from paimon_pyspark.errors import CommitMessageSerdeError, PaimonError
from paimon_pyspark.spec.binary_row import (
    Buffer,
    deserialize_row,
    fixed_part_size,
    header_width,
    serialize_row,
)
from paimon_pyspark.spec.commit_message import (
    CommitMessage,
    CompactIncrement,
    DataIncrement,
    ManifestCommittable,
)
from paimon_pyspark.spec.data_file_meta import DataFileMeta, SimpleStats
from paimon_pyspark.spec.manifest import DeletionVectorRange, GlobalIndexMeta, IndexFileMeta
from paimon_pyspark.types.data_types import (
    BIGINT,
    BYTES,
    INT,
    STRING,
    TINYINT,
    ArrayType,
    DataField,
    DataType,
    RowType,
)

T = TypeVar("T")

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")
_UINT16 = struct.Struct(">H")
_SLOT = struct.Struct("<Q")
_DECODE_ERRORS = (struct.error, IndexError, ValueError, UnicodeDecodeError, OverflowError)
_LEGACY_V2 = -2
"""Internal version number of the Paimon 0.7 layout that Java reads as a fallback for 2."""


def _row(*types: DataType) -> RowType:
    return RowType(fields=tuple(DataField(i, f"f{i}", t) for i, t in enumerate(types)))


# --- row schemas -----------------------------------------------------------------------------
# Binary-equivalent types: _CREATION_TIME is a TIMESTAMP(3), stored as a compact epoch-millis
# long, so BIGINT reads and writes the same 8 bytes without a datetime round trip.

_STATS = _row(BYTES(), BYTES(), ArrayType(element=BIGINT()))
_STRINGS = ArrayType(element=STRING())

_DATA_FILE_TYPES: tuple[DataType, ...] = (
    STRING(),  # 0 _FILE_NAME
    BIGINT(),  # 1 _FILE_SIZE
    BIGINT(),  # 2 _ROW_COUNT
    BYTES(),  # 3 _MIN_KEY
    BYTES(),  # 4 _MAX_KEY
    _STATS,  # 5 _KEY_STATS
    _STATS,  # 6 _VALUE_STATS
    BIGINT(),  # 7 _MIN_SEQUENCE_NUMBER
    BIGINT(),  # 8 _MAX_SEQUENCE_NUMBER
    BIGINT(),  # 9 _SCHEMA_ID
    INT(),  # 10 _LEVEL
    _STRINGS,  # 11 _EXTRA_FILES
    BIGINT(),  # 12 _CREATION_TIME (TIMESTAMP(3))
    BIGINT(),  # 13 _DELETE_ROW_COUNT
    BYTES(),  # 14 _EMBEDDED_FILE_INDEX
    TINYINT(),  # 15 _FILE_SOURCE
    _STRINGS,  # 16 _VALUE_STATS_COLS
    STRING(),  # 17 _EXTERNAL_PATH
    BIGINT(),  # 18 _FIRST_ROW_ID
    _STRINGS,  # 19 _WRITE_COLS
    ArrayType(element=BIGINT()),  # 20 _WRITE_COLS_SEQUENCES
)
_DATA_FILE_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(DataFileMeta))


def _data_file_arity(version: int) -> int:
    """DataFileMeta fields per CommitMessage version (spec 8.3)."""
    if version == _LEGACY_V2:
        return 13
    if version <= 2:
        return 15
    if version == 3:
        return 16
    if version <= 5:
        return 17
    if version <= 7:
        return 18
    if version == 8:
        return 19
    if version <= 12:
        return 20
    return 21


def _index_file_types(version: int) -> tuple[DataType, ...]:
    """IndexFileMeta row per CommitMessage version (spec 8.4)."""
    head: tuple[DataType, ...] = (STRING(), STRING(), BIGINT(), BIGINT())
    if version == _LEGACY_V2:
        return head
    if version <= 4:
        return (*head, ArrayType(element=_row(STRING(), INT(), INT())))
    dv = ArrayType(element=_row(STRING(), INT(), INT(), BIGINT()))
    if version <= 8:
        return (*head, dv)
    if version <= 10:
        return (*head, dv, STRING())
    global_index: tuple[DataType, ...] = (BIGINT(), BIGINT(), INT(), ArrayType(element=INT()))
    global_index += (BYTES(),) if version == 11 else (BYTES(), BYTES())
    return (*head, dv, STRING(), _row(*global_index))


# --- DataOutput / DataInput ------------------------------------------------------------------


def _modified_utf8(text: str) -> bytes:
    """Java's ``writeUTF`` body: NUL as C0 80, supplementary characters as surrogate pairs."""
    if text.isascii() and "\x00" not in text:
        return text.encode("ascii")
    out = bytearray()
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        c = (units[i] << 8) | units[i + 1]
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
        else:
            out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
    return bytes(out)


def _from_modified_utf8(data: bytes) -> str:
    units = bytearray()
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            c, i = b, i + 1
        elif b >> 5 == 0b110 and i + 1 < n:
            c, i = ((b & 0x1F) << 6) | (data[i + 1] & 0x3F), i + 2
        elif b >> 4 == 0b1110 and i + 2 < n:
            c = ((b & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F)
            i += 3
        else:
            raise CommitMessageSerdeError(f"malformed modified UTF-8 at byte {i}")
        units += c.to_bytes(2, "big")
    return bytes(units).decode("utf-16-be", "surrogatepass")


def _pack(fmt: struct.Struct, value: int, what: str) -> bytes:
    try:
        return fmt.pack(value)
    except struct.error as e:
        raise CommitMessageSerdeError(f"{value!r} does not fit {what}: {e}") from e


class _Output:
    def __init__(self) -> None:
        self.buf = bytearray()

    def write_int(self, value: int) -> None:
        self.buf += _pack(_INT, value, "an int")

    def write_long(self, value: int) -> None:
        self.buf += _pack(_LONG, value, "a long")

    def write_bool(self, value: bool) -> None:
        self.buf.append(1 if value else 0)

    def write_utf(self, text: str) -> None:
        data = _modified_utf8(text)
        if len(data) > 0xFFFF:
            raise CommitMessageSerdeError(f"string of {len(data)} bytes is too long for writeUTF")
        self.buf += _UINT16.pack(len(data)) + data

    def sized(self, data: bytes) -> None:
        self.write_int(len(data))
        self.buf += data


class _Input:
    def __init__(self, data: Buffer) -> None:
        self.data = bytes(data)
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise CommitMessageSerdeError(
                f"truncated input: needed {n} bytes at offset {self.pos}, "
                f"only {len(self.data) - self.pos} left"
            )
        out = self.data[self.pos : end]
        self.pos = end
        return out

    def read_int(self) -> int:
        return int(_INT.unpack(self.take(4))[0])

    def read_long(self) -> int:
        return int(_LONG.unpack(self.take(8))[0])

    def read_bool(self) -> bool:
        return self.take(1)[0] != 0

    def read_utf(self) -> str:
        return _from_modified_utf8(self.take(_UINT16.unpack(self.take(2))[0]))

    def count(self, min_item_size: int) -> int:
        n = self.read_int()
        if n < 0 or n * min_item_size > len(self.data) - self.pos:
            raise CommitMessageSerdeError(f"invalid list size {n} at offset {self.pos - 4}")
        return n

    def expect_end(self) -> None:
        if self.pos != len(self.data):
            raise CommitMessageSerdeError(
                f"{len(self.data) - self.pos} trailing bytes after offset {self.pos}"
            )


def _read_row(
    inp: _Input, types: Sequence[DataType], what: str, var_fields: Sequence[int] = ()
) -> list[Any]:
    """A schema-bound row; ``var_fields`` are NOT NULL fields stored in the variable part
    unless inline, the first of which must start right after the fixed part, as Java's writer
    puts it. That tells a row of another arity apart (the version 2 fallback relies on it)."""
    size = inp.read_int()
    data = inp.take(size)
    fixed = fixed_part_size(len(types))
    if size < fixed:
        raise CommitMessageSerdeError(
            f"{what} row of {size} bytes is shorter than the fixed part of its {len(types)} fields"
        )
    offsets = []
    for pos in var_fields:
        slot = _SLOT.unpack_from(data, header_width(len(types)) + 8 * pos)[0]
        if not slot >> 63:  # not inline
            offsets.append(slot >> 32)
    if offsets and min(offsets) != fixed:
        raise CommitMessageSerdeError(
            f"{what} row is not a row of {len(types)} fields: its variable part starts at "
            f"{min(offsets)}, not at {fixed}"
        )
    try:
        return deserialize_row(data, types)
    except _DECODE_ERRORS as e:
        raise CommitMessageSerdeError(f"corrupt {what} row: {e}") from e


# --- DataFileMeta ----------------------------------------------------------------------------


def _stats_values(s: SimpleStats) -> tuple[bytes, bytes, list[int | None] | None]:
    return (s.min_values, s.max_values, None if s.null_counts is None else list(s.null_counts))


def _stats_from(value: dict[str, Any]) -> SimpleStats:
    nc = value["f2"]
    return SimpleStats(value["f0"], value["f1"], None if nc is None else tuple(nc))


def _opt_list(values: tuple[Any, ...] | None) -> list[Any] | None:
    return None if values is None else list(values)


def _opt_tuple(values: list[Any] | None) -> tuple[Any, ...] | None:
    return None if values is None else tuple(values)


def _write_data_file(out: _Output, f: DataFileMeta, version: int) -> None:
    values: list[Any] = [
        f.file_name,
        f.file_size,
        f.row_count,
        f.min_key,
        f.max_key,
        _stats_values(f.key_stats),
        _stats_values(f.value_stats),
        f.min_sequence_number,
        f.max_sequence_number,
        f.schema_id,
        f.level,
        list(f.extra_files),
        f.creation_time,
        f.delete_row_count,
        f.embedded_index,
        f.file_source,
        _opt_list(f.value_stats_cols),
        f.external_path,
        f.first_row_id,
        _opt_list(f.write_cols),
        _opt_list(f.write_cols_sequences),
    ]
    arity = _data_file_arity(version)
    for name, value in zip(_DATA_FILE_FIELD_NAMES[arity:], values[arity:], strict=True):
        if value is not None:
            raise CommitMessageSerdeError(
                f"CommitMessage version {_version_name(version)} cannot hold DataFileMeta."
                f"{name}={value!r} of file {f.file_name}; serialize with a newer version"
            )
    out.sized(_serialize(values[:arity], _DATA_FILE_TYPES[:arity], "DataFileMeta"))


def _read_data_file(inp: _Input, version: int) -> DataFileMeta:
    arity = _data_file_arity(version)
    # _FILE_NAME and _MIN_KEY (an arity-prefixed row, never inline) lead the variable part
    v = _read_row(inp, _DATA_FILE_TYPES[:arity], "DataFileMeta", (0, 3))
    v += [None] * (len(_DATA_FILE_TYPES) - arity)
    if v[5] is None or v[6] is None or v[11] is None:
        raise CommitMessageSerdeError(f"corrupt DataFileMeta row: a NOT NULL field is null: {v}")
    return DataFileMeta(
        file_name=v[0],
        file_size=v[1],
        row_count=v[2],
        min_key=v[3],
        max_key=v[4],
        key_stats=_stats_from(v[5]),
        value_stats=_stats_from(v[6]),
        min_sequence_number=v[7],
        max_sequence_number=v[8],
        schema_id=v[9],
        level=v[10],
        extra_files=tuple(v[11]),
        creation_time=v[12],
        delete_row_count=v[13],
        embedded_index=v[14],
        file_source=v[15],
        value_stats_cols=_opt_tuple(v[16]),
        external_path=v[17],
        first_row_id=v[18],
        write_cols=_opt_tuple(v[19]),
        write_cols_sequences=_opt_tuple(v[20]),
    )


# --- IndexFileMeta ---------------------------------------------------------------------------


def _write_index_file(out: _Output, f: IndexFileMeta, version: int) -> None:
    types = _index_file_types(version)

    def refuse(what: str) -> CommitMessageSerdeError:
        return CommitMessageSerdeError(
            f"CommitMessage version {_version_name(version)} cannot hold the {what} of index "
            f"file {f.file_name}; serialize with a newer version"
        )

    values: list[Any] = [f.index_type, f.file_name, f.file_size, f.row_count]
    if len(types) == 4:
        if f.dv_ranges is not None:
            raise refuse("deletion vector ranges")
    else:
        dv = None
        if f.dv_ranges is not None:
            with_cardinality = version >= 5
            dv = []
            for r in f.dv_ranges:
                if not with_cardinality and r.cardinality is not None:
                    raise refuse("deletion vector cardinality")
                row = (r.data_file_name, r.offset, r.length)
                dv.append((*row, r.cardinality) if with_cardinality else row)
        values.append(dv)
    if len(types) > 5:
        values.append(f.external_path)
    elif f.external_path is not None:
        raise refuse("external path")
    g = f.global_index
    if len(types) > 6:
        gi: tuple[Any, ...] | None = None
        if g is not None:
            gi = (g.row_range_start, g.row_range_end, g.index_field_id)
            gi += (_opt_list(g.extra_field_ids), g.index_meta)
            if version >= 12:
                gi += (g.source_meta,)
            elif g.source_meta is not None:
                raise refuse("global index source meta")
        values.append(gi)
    elif g is not None:
        raise refuse("global index")
    out.sized(_serialize(values, types, "IndexFileMeta"))


def _read_index_file(inp: _Input, version: int) -> IndexFileMeta:
    types = _index_file_types(version)
    v = _read_row(inp, types, "IndexFileMeta")
    v += [None] * (7 - len(v))
    dv = None
    if v[4] is not None:
        if any(r is None for r in v[4]):
            raise CommitMessageSerdeError("corrupt IndexFileMeta row: a null deletion vector")
        dv = tuple(DeletionVectorRange(r["f0"], r["f1"], r["f2"], r.get("f3")) for r in v[4])
    gi = None
    if v[6] is not None:
        g = v[6]
        gi = GlobalIndexMeta(g["f0"], g["f1"], g["f2"], _opt_tuple(g["f3"]), g["f4"], g.get("f5"))
    return IndexFileMeta(v[0], v[1], v[2], v[3], dv, v[5], gi)


def _serialize(values: list[Any], types: Sequence[DataType], what: str) -> bytes:
    try:
        return serialize_row(values, types)
    except (PaimonError, struct.error, TypeError, ValueError, OverflowError) as e:
        raise CommitMessageSerdeError(f"cannot serialize {what}: {e}") from e


# --- CommitMessage ---------------------------------------------------------------------------


def _version_name(version: int) -> str:
    return "2 (Paimon 0.7 layout)" if version == _LEGACY_V2 else str(version)


def _write_message(out: _Output, m: CommitMessage, version: int) -> None:
    """One message in the layout of ``version`` (spec 8.2 and 8.5)."""
    d, c = m.data_increment, m.compact_increment
    out.sized(m.partition)
    out.write_int(m.bucket)
    if version >= 7:
        out.write_bool(m.total_buckets is not None)
        if m.total_buckets is not None:
            out.write_int(m.total_buckets)
    elif m.total_buckets is not None:
        raise CommitMessageSerdeError(
            f"CommitMessage version {_version_name(version)} cannot hold total_buckets="
            f"{m.total_buckets}; serialize with version 7 or newer"
        )

    def files(fs: tuple[DataFileMeta, ...]) -> None:
        out.write_int(len(fs))
        for f in fs:
            _write_data_file(out, f, version)

    def indexes(fs: tuple[IndexFileMeta, ...]) -> None:
        out.write_int(len(fs))
        for f in fs:
            _write_index_file(out, f, version)

    if version >= 10:
        for fs in (d.new_files, d.deleted_files, d.changelog_files):
            files(fs)
        indexes(d.new_index_files)
        indexes(d.deleted_index_files)
        for fs in (c.compact_before, c.compact_after, c.changelog_files):
            files(fs)
        indexes(c.new_index_files)
        indexes(c.deleted_index_files)
        return
    # Before 10 a message had one pair of index lists; the reader attaches them to the compact
    # increment when it has files, else to the data increment. Refuse what would move.
    compact_has_files = bool(c.compact_before or c.compact_after or c.changelog_files)
    owner, other = (c, d) if compact_has_files else (d, c)
    if other.new_index_files or other.deleted_index_files:
        raise CommitMessageSerdeError(
            f"CommitMessage version {_version_name(version)} has one list of index files; "
            "this message has index files in both increments (or in an increment that the "
            "reader would not attach them to); serialize with version 10 or newer"
        )
    legacy = version == _LEGACY_V2
    if legacy and d.deleted_files:
        raise CommitMessageSerdeError("the Paimon 0.7 layout cannot hold deleted files")
    lists = [d.new_files, *([] if legacy else [d.deleted_files]), d.changelog_files]
    for fs in (*lists, c.compact_before, c.compact_after, c.changelog_files):
        files(fs)
    indexes(owner.new_index_files)
    if version > 2:
        indexes(owner.deleted_index_files)
    elif owner.deleted_index_files:
        raise CommitMessageSerdeError(
            "CommitMessage version 2 cannot hold deleted index files; serialize with 3 or newer"
        )


def _read_message(inp: _Input, version: int) -> CommitMessage:
    part_len = inp.read_int()
    if part_len < 4:
        raise CommitMessageSerdeError(f"invalid partition length {part_len}")
    partition = inp.take(part_len)
    bucket = inp.read_int()

    def files() -> tuple[DataFileMeta, ...]:
        return tuple(_read_data_file(inp, version) for _ in range(inp.count(4)))

    def indexes() -> tuple[IndexFileMeta, ...]:
        return tuple(_read_index_file(inp, version) for _ in range(inp.count(4)))

    if version >= 10:
        total = inp.read_int() if inp.read_bool() else None
        data = DataIncrement(files(), files(), files(), indexes(), indexes())
        compact = CompactIncrement(files(), files(), files(), indexes(), indexes())
        return CommitMessage(partition, bucket, total, data, compact)
    total = inp.read_int() if version >= 7 and inp.read_bool() else None
    new = files()
    deleted = files() if version != _LEGACY_V2 else ()
    changelog = files()
    before, after, compact_changelog = files(), files(), files()
    new_index = indexes()
    deleted_index = indexes() if version > 2 else ()
    data = DataIncrement(new, deleted, changelog)
    compact = CompactIncrement(before, after, compact_changelog)
    if compact.is_empty():
        data = DataIncrement(new, deleted, changelog, new_index, deleted_index)
    else:
        compact = CompactIncrement(before, after, compact_changelog, new_index, deleted_index)
    return CommitMessage(partition, bucket, total, data, compact)


def _read_with_fallback(data: Buffer, version: int, read: Callable[[_Input, int], T]) -> T:
    """``read`` all of ``data``; version 2 falls back to the Paimon 0.7 layout.

    As in Java, only ManifestCommittable bytes get the fallback: a 0.7 job wrote its pending
    committables to checkpoints, never bare messages. CommitMessageSerializer does not.
    """
    try:
        return _read_all(data, version, read)
    except CommitMessageSerdeError as error:
        if version != 2:
            raise
        try:
            return _read_all(data, _LEGACY_V2, read)
        except CommitMessageSerdeError:
            raise error from None


def _read_all(data: Buffer, version: int, read: Callable[[_Input, int], T]) -> T:
    inp = _Input(data)
    result = read(inp, version)
    inp.expect_end()
    return result


def _read_message_list(inp: _Input, version: int) -> list[CommitMessage]:
    return [_read_message(inp, version) for _ in range(inp.count(4))]


class CommitMessageSerializer:
    """Java's CommitMessageSerializer: the bytes a worker hands to the committing driver.

    The version travels beside the bytes, as in Java's ``VersionedSerializer``: write with
    ``serialize(msg)`` (``VERSION``, Paimon 2.0.0's) or ``serialize(msg, version=11)`` for Paimon
    1.4, and read with ``deserialize(version, data)``.
    """

    VERSION: ClassVar[int] = 12
    """What Java 2.0.0 writes (CURRENT_VERSION); 1.4 writes 11, master 13."""
    LATEST_VERSION: ClassVar[int] = 13
    READ_VERSIONS: ClassVar[range] = range(1, 14)
    WRITE_VERSIONS: ClassVar[range] = range(2, 14)

    def __init__(self, version: int = VERSION) -> None:
        self.version = _check_version(version, self.WRITE_VERSIONS)

    def get_version(self) -> int:
        return self.version

    def serialize(self, message: CommitMessage, version: int | None = None) -> bytes:
        out = _Output()
        _write_message(out, message, self._write_version(version))
        return bytes(out.buf)

    def deserialize(self, version: int, data: Buffer) -> CommitMessage:
        return _read_all(data, self._read_version(version), _read_message)

    def serialize_list(
        self, messages: Sequence[CommitMessage], version: int | None = None
    ) -> bytes:
        """``int32 n`` then the messages, as Java's ``serializeList`` writes into a stream."""
        out = _Output()
        _write_list(out, messages, self._write_version(version))
        return bytes(out.buf)

    def deserialize_list(self, version: int, data: Buffer) -> list[CommitMessage]:
        return _read_all(data, self._read_version(version), _read_message_list)

    # --- shared with ManifestCommittableSerializer -------------------------------------------

    def _write_version(self, version: int | None) -> int:
        return _check_version(self.version if version is None else version, self.WRITE_VERSIONS)

    def _read_version(self, version: int) -> int:
        return _check_version(version, self.READ_VERSIONS)


def _check_version(version: int, supported: range, what: str = "CommitMessage") -> int:
    if version not in supported:
        raise CommitMessageSerdeError(
            f"unsupported {what} version {version}; versions "
            f"{supported.start}..{supported.stop - 1} are supported here"
        )
    return version


def _write_list(out: _Output, messages: Sequence[CommitMessage], version: int) -> None:
    out.write_int(len(messages))
    for m in messages:
        if not isinstance(m, CommitMessage):
            raise CommitMessageSerdeError(f"expected CommitMessage objects, got {type(m).__name__}")
        _write_message(out, m, version)


class ManifestCommittableSerializer:
    """Java's ManifestCommittableSerializer (version 5); it embeds the message version.

    Layout: identifier, watermark (a boolean that is true for *no* watermark), up to version 4
    the legacy log offsets, from version 4 the properties, then the CommitMessage version and
    the list of messages in that version.
    """

    VERSION: ClassVar[int] = 5
    READ_VERSIONS: ClassVar[range] = range(1, 6)
    WRITE_VERSIONS: ClassVar[range] = range(2, 6)

    def __init__(self, message_version: int = CommitMessageSerializer.VERSION) -> None:
        self.message_version = _check_version(
            message_version, CommitMessageSerializer.WRITE_VERSIONS
        )

    def get_version(self) -> int:
        return self.VERSION

    def serialize(
        self,
        committable: ManifestCommittable,
        version: int | None = None,
        message_version: int | None = None,
    ) -> bytes:
        v = _check_version(
            self.VERSION if version is None else version, self.WRITE_VERSIONS, "ManifestCommittable"
        )
        mv = _check_version(
            self.message_version if message_version is None else message_version,
            CommitMessageSerializer.WRITE_VERSIONS,
        )
        out = _Output()
        out.write_long(committable.identifier)
        out.write_bool(committable.watermark is None)
        if committable.watermark is not None:
            out.write_long(committable.watermark)
        if v <= 4:
            out.write_int(len(committable.legacy_log_offsets))
            for bucket, offset in committable.legacy_log_offsets:
                out.write_int(bucket)
                out.write_long(offset)
        elif committable.legacy_log_offsets:
            raise CommitMessageSerdeError("ManifestCommittable version 5 has no log offsets")
        if v >= 4:
            out.write_int(len(committable.properties))
            for key, value in committable.properties.items():
                out.write_utf(key)
                out.write_utf(value)
        elif committable.properties:
            raise CommitMessageSerdeError(
                f"ManifestCommittable version {v} cannot hold properties; use 4 or newer"
            )
        out.write_int(mv)
        _write_list(out, committable.file_committables, mv)
        return bytes(out.buf)

    def deserialize(self, version: int, data: Buffer) -> ManifestCommittable:
        _check_version(version, self.READ_VERSIONS, "ManifestCommittable")
        inp = _Input(data)
        identifier = inp.read_long()
        watermark = None if inp.read_bool() else inp.read_long()
        offsets: list[tuple[int, int]] = []
        if version <= 4:
            for _ in range(inp.count(12)):
                offsets.append((inp.read_int(), inp.read_long()))
        properties: dict[str, str] = {}
        if version >= 4:
            for _ in range(inp.count(4)):
                key = inp.read_utf()
                properties[key] = inp.read_utf()
        message_version = _check_version(inp.read_int(), CommitMessageSerializer.READ_VERSIONS)
        messages = _read_with_fallback(inp.data[inp.pos :], message_version, _read_message_list)
        return ManifestCommittable(
            identifier, watermark, tuple(messages), properties, tuple(offsets)
        )


def _read_data_file_list(inp: _Input, version: int) -> list[DataFileMeta]:
    return [_read_data_file(inp, version) for _ in range(inp.count(4))]


class DataFileMetaSerializer:
    """Java's DataFileMetaSerializer over a list: ``int32 n`` then the DataFileMeta rows in the
    layout of a CommitMessage version, as a message's file lists hold them.

    The version travels beside the bytes as for CommitMessageSerializer; the default is the
    latest layout, which holds every field of a DataFileMeta.
    """

    VERSION: ClassVar[int] = CommitMessageSerializer.LATEST_VERSION

    def serialize_list(self, files: Sequence[DataFileMeta], version: int = VERSION) -> bytes:
        v = _check_version(version, CommitMessageSerializer.WRITE_VERSIONS, "DataFileMeta")
        out = _Output()
        out.write_int(len(files))
        for f in files:
            _write_data_file(out, f, v)
        return bytes(out.buf)

    def deserialize_list(self, version: int, data: Buffer) -> list[DataFileMeta]:
        v = _check_version(version, CommitMessageSerializer.READ_VERSIONS, "DataFileMeta")
        return _read_all(data, v, _read_data_file_list)
