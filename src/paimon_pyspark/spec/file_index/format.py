"""The container of a data file's indexes: one blob, embedded in the manifest or a ``.index`` file.

Mirrors org.apache.paimon.fileindex.FileIndexFormat (version 1), big-endian as Java's
DataOutputStream writes it::

    magic (8) | version (4) | head length (4) | column count (4)
    per column: name (writeUTF) | index count (4)
        per index: type (writeUTF) | start (4) | length (4)     start -1: an empty index
    redundant length (4, always 0) | body: the indexes' bytes, back to back

Starts count from the beginning of the blob. Java fills its header from nested HashMaps, so
the order of columns and of index types is a HashMap's iteration order; ``java_index_map``
builds such a map as Java does, which makes our blobs Java's bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec.java_hash import string_hash
from paimon_pyspark.spec.java_hashmap import JavaHashMap

MAGIC = 1493475289347502
VERSION_1 = 1
EMPTY_INDEX_FLAG = -1
"""A start of -1: the column's index holds nothing (Java's EmptyFileIndexReader: no row)."""

_FIXED = struct.Struct(">qii")


def write_utf(s: str) -> bytes:
    """Java's DataOutput.writeUTF: a 2-byte length, then modified UTF-8 of the UTF-16 units."""
    out = bytearray()
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        c = (units[i] << 8) | units[i + 1]
        if 0x0001 <= c <= 0x007F:
            out.append(c)
        elif c <= 0x07FF:
            out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
        else:
            out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
    if len(out) > 0xFFFF:
        raise ValueError(f"name too long for a file index header: {s[:40]!r}...")
    return struct.pack(">H", len(out)) + bytes(out)


def read_utf(data: bytes, pos: int) -> tuple[str, int]:
    """Java's DataInput.readUTF at ``pos``: the string and the position after it."""
    (n,) = struct.unpack_from(">H", data, pos)
    raw = data[pos + 2 : pos + 2 + n]
    if len(raw) != n:
        raise ValueError("truncated string")
    units = bytearray()
    i = 0
    while i < n:
        b = raw[i]
        if b < 0x80:
            c, i = b, i + 1
        elif b >> 5 == 0b110:
            c, i = ((b & 0x1F) << 6) | (raw[i + 1] & 0x3F), i + 2
        elif b >> 4 == 0b1110:
            c = ((b & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F)
            i += 3
        else:
            raise ValueError("malformed modified UTF-8")
        units += struct.pack(">H", c)
    return units.decode("utf-16-be", errors="surrogatepass"), pos + 2 + n


def java_index_map(
    columns: Iterable[tuple[str, Iterable[tuple[str, bytes | None]]]],
    into: JavaHashMap | None = None,
) -> JavaHashMap:
    """A ``HashMap<String, HashMap<String, byte[]>>`` (column -> index type -> bytes) filled as
    Java fills every such map (DataFileIndexWriter.serializeMaintainers, FileIndexFormat's
    Reader and readAll, FileIndexProcessor): ``computeIfAbsent`` each column, in this order,
    then ``put`` its types. A ``computeIfAbsent`` links a new key at the head of its bin, so
    the order differs from ``put``'s wherever names share a bin."""
    out = JavaHashMap() if into is None else into
    for column, by_type in columns:
        types = out.compute_if_absent(column, string_hash(column), JavaHashMap)
        for index_type, data in by_type:
            types.put(index_type, string_hash(index_type), data)
    return out


def java_index_items(
    indexes: JavaHashMap,
) -> Iterator[tuple[str, Iterator[tuple[str, bytes | None]]]]:
    """A ``java_index_map`` in Java's iteration order, as ``java_index_map`` takes it."""
    for column, types in indexes.items():
        yield str(column), ((str(t), data) for t, data in types.items())


def write_java_index_map(indexes: JavaHashMap) -> bytes:
    """``write_index_file`` of a ``java_index_map``, in its iteration orders."""
    return write_index_file({c: dict(by_type) for c, by_type in java_index_items(indexes)})


def write_index_file(indexes: Mapping[str, Mapping[str, bytes | None]]) -> bytes:
    """Java's ``FileIndexFormat.Writer.writeColumnIndexes``: column -> index type -> bytes
    (``None``: an empty index), in the mappings' order."""
    body = bytearray()
    info: list[tuple[str, list[tuple[str, int, int]]]] = []
    for column, by_type in indexes.items():
        entries = []
        for index_type, data in by_type.items():
            if data is None:
                entries.append((index_type, EMPTY_INDEX_FLAG, 0))
            else:
                entries.append((index_type, len(body), len(data)))
                body += data
        info.append((column, entries))
    names = b"".join(
        write_utf(c) + b"".join(write_utf(t) for t, _, _ in entries) for c, entries in info
    )
    n_indexes = sum(len(entries) for _, entries in info)
    head_length = 8 + 4 + 4 + 4 + n_indexes * 8 + len(info) * 4 + 4 + len(names)
    head = bytearray(_FIXED.pack(MAGIC, VERSION_1, head_length))
    head += struct.pack(">i", len(info))
    for column, entries in info:
        head += write_utf(column) + struct.pack(">i", len(entries))
        for index_type, start, length in entries:
            offset = EMPTY_INDEX_FLAG if start == EMPTY_INDEX_FLAG else start + head_length
            head += write_utf(index_type) + struct.pack(">ii", offset, length)
    head += struct.pack(">i", 0)
    return bytes(head) + bytes(body)


@dataclass(frozen=True)
class IndexFile:
    """A parsed file index blob: the header, and each index's bytes on demand."""

    data: bytes
    header: Mapping[str, Mapping[str, tuple[int, int]]]
    """Column name -> index type -> (start, length) within ``data``."""

    def column(self, name: str) -> dict[str, bytes | None]:
        """The indexes of column ``name`` by type (``None``: an empty index); {} if none."""
        out: dict[str, bytes | None] = {}
        for index_type, (start, length) in self.header.get(name, {}).items():
            if start == EMPTY_INDEX_FLAG:
                out[index_type] = None
                continue
            if start < 0 or length < 0 or start + length > len(self.data):
                raise ValueError(f"index {index_type!r} of column {name!r} lies outside the blob")
            out[index_type] = self.data[start : start + length]
        return out

    def read_all(self) -> dict[str, dict[str, bytes | None]]:
        return {c: self.column(c) for c in self.header}


def read_index_file(data: bytes, where: str = "file index") -> IndexFile:
    """Parse a blob Java's ``FileIndexFormat.Writer`` (or ``write_index_file``) wrote; a wrong
    magic, version or a malformed header raises CorruptTableError naming ``where``."""
    try:
        magic, version, head_length = _FIXED.unpack_from(data, 0)
        if magic != MAGIC:
            raise ValueError("not a file index (wrong magic)")
        if version != VERSION_1:
            raise ValueError(f"file index version {version}, only {VERSION_1} is supported")
        if head_length < 16 or head_length > len(data):
            raise ValueError(f"head length {head_length} outside the blob")
        pos = 16
        (columns,) = struct.unpack_from(">i", data, pos)
        pos += 4
        header: dict[str, dict[str, tuple[int, int]]] = {}
        for _ in range(columns):
            name, pos = read_utf(data, pos)
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            by_type = header.setdefault(name, {})
            for _ in range(count):
                index_type, pos = read_utf(data, pos)
                start, length = struct.unpack_from(">ii", data, pos)
                pos += 8
                by_type[index_type] = (start, length)
            if pos > head_length:
                raise ValueError("header runs past its length")
    except (ValueError, struct.error) as e:
        raise CorruptTableError(f"{where} cannot be read: {e}") from e
    return IndexFile(bytes(data), header)
