"""The file indexes of one data file, built as its rows are written, kept where Java keeps them.

Mirrors org.apache.paimon.io.DataFileIndexWriter (and its use in RowDataFileWriter and
KeyValueDataFileWriter): each column of ``file-index.<type>.columns`` gets one index writer per
type, fed every row of the file (a key-value file's value columns, which are the table's
columns; retractions included, as Java feeds ``kv.value()``); ``m[k]`` indexes the values of
key ``k`` of map column ``m`` (null where a row lacks the key). At the file's end the indexes
go into one FileIndexFormat blob: up to ``file-index.in-manifest-threshold`` bytes it is the
DataFileMeta's ``embedded_index``, above it the file ``<data file name>.index`` beside the data
file, named in ``extra_files``.

``compact/file_index_rewrite.py`` (``rewrite_file_index``) builds on ``DataFileIndexWriter``,
``place_index`` and ``new_index_file_name`` for files that exist already.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec import file_index as fi
from paimon_pyspark.spec.file_index.format import java_index_map, write_java_index_map
from paimon_pyspark.spec.java_hash import string_hash
from paimon_pyspark.spec.java_hashmap import JavaHashMap
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import DataField

INDEX_PATH_SUFFIX = ".index"
"""DataFilePathFactory.INDEX_PATH_SUFFIX: a data file's separate index is ``<name>.index``."""


@dataclass(frozen=True)
class FileIndexSettings:
    """What one table (one schema version) indexes and where small indexes go."""

    options: fi.FileIndexOptions
    fields: tuple[DataField, ...]
    in_manifest_threshold: int
    table: str

    @staticmethod
    def of(store: FileStore) -> FileIndexSettings | None:
        """The table's index settings, None when it indexes nothing. Columns are checked as
        Java checks them when a writer starts (a missing column, a type an index cannot take)."""
        index = fi.parse_options(store.options.options, store.name)
        if not index:
            return None
        fields = tuple(store.fields)
        fi.check_columns(index, fields, store.name)
        return FileIndexSettings(
            index, fields, store.options.file_index_in_manifest_threshold, store.name
        )


def index_path(data_file_path: str) -> str:
    """DataFilePathFactory.dataFileToFileIndexPath: the separate index beside its data file."""
    return data_file_path + INDEX_PATH_SUFFIX


class DataFileIndexWriter:
    """The indexes of one data file: ``write`` every piece of its rows, then ``finish``."""

    def __init__(self, settings: FileIndexSettings) -> None:
        self.settings = settings
        # Java's indexMaintainers, built in the options' order: index type (computeIfAbsent) ->
        # top-level column (put) -> its maintainer, here indexed name -> writer (one name, or
        # a map column's keys, put into MapFileIndexMaintainer's indexWritersMap)
        self._maintainers = JavaHashMap()
        self._feeds: list[tuple[str, str, fi.FileIndexWriter]] = []
        for column, by_type in settings.options.columns.items():
            data_type = fi.column_type(settings.fields, column)
            assert data_type is not None  # FileIndexSettings.of checked the columns
            top = fi.top_level(column)
            pos = fi.nested_position(column)
            for index_type, opts in by_type.items():
                by_column = self._maintainers.compute_if_absent(
                    index_type, string_hash(index_type), JavaHashMap
                )
                maintainer = by_column.get(top)
                if maintainer is None:
                    maintainer = _Maintainer(pos is not None)
                    by_column.put(top, string_hash(top), maintainer)
                elif pos is None:
                    continue
                writer = fi.create_writer(index_type, data_type, opts)
                key = column if pos is None else column[pos + 1 : -1]
                maintainer.writers.put(key, string_hash(key), (column, writer))
                self._feeds.append((top, column, writer))

    def write(self, rows: pa.Table) -> None:
        """Feed ``rows`` (with the table's columns by name) to every index."""
        for top, name, writer in self._feeds:
            column = rows.column(top)
            pos = fi.nested_position(name)
            values = column if pos is None else map_values(column, name[pos + 1 : -1])
            writer.write(_one_array(values))

    def serialized(self) -> JavaHashMap:
        """Java's serializeMaintainers: per index type, per column, each indexed name with its
        bytes, in a ``java_index_map``."""
        indexes = JavaHashMap()
        for index_type, by_column in self._maintainers.items():
            assert isinstance(index_type, str)
            for _, maintainer in by_column.items():
                java_index_map(
                    ((name, [(index_type, data)]) for name, data in maintainer.serialized()),
                    indexes,
                )
        return indexes

    def finish(self) -> bytes:
        """The FileIndexFormat blob, columns and types in Java's orders."""
        return write_java_index_map(self.serialized())


class _Maintainer:
    """DataFileIndexWriter's FileIndexMaintainer (one writer) or MapFileIndexMaintainer (a
    HashMap of a map column's keys to writers)."""

    def __init__(self, is_map: bool) -> None:
        self.is_map = is_map
        self.writers = JavaHashMap()

    def serialized(self) -> list[tuple[str, bytes]]:
        """(indexed name, bytes): a map's in the order of the HashMap Java puts them into."""
        out = [(name, writer.serialize()) for _, (name, writer) in self.writers.items()]
        if not self.is_map:
            return out
        result = JavaHashMap()
        for name, data in out:
            result.put(name, string_hash(name), data)
        return [(str(k), v) for k, v in result.items()]


def _one_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return values


def map_values(column: pa.Array | pa.ChunkedArray, key: str) -> pa.Array:
    """Per row, the value of ``key`` in the map ``column`` (null where the row lacks it or the
    map is null), as Java's MapFileIndexMaintainer feeds the index of ``m[key]``."""
    arr = _one_array(column)
    assert isinstance(arr, pa.MapArray)
    offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), np.int64)
    lengths = np.diff(offsets)
    if arr.null_count:  # a null map may still span entries: they are not its values
        lengths = np.where(np.asarray(arr.is_null().to_numpy(zero_copy_only=False)), 0, lengths)
    first, end = (int(offsets[0]), int(offsets[-1])) if len(arr) else (0, 0)
    keys = arr.keys.slice(first, end - first).cast(pa.string())
    # .keys and .items span the whole child arrays; this slice's entries start at ``first``
    positions = np.arange(first, end, dtype=np.int64)
    owner = np.repeat(np.arange(len(arr), dtype=np.int64), np.diff(offsets))
    hit = np.asarray(pc.fill_null(pc.equal(keys, key), False).to_numpy(zero_copy_only=False))
    hit &= np.repeat(lengths > 0, np.diff(offsets))
    take = np.full(len(arr), -1, np.int64)
    take[owner[hit]] = positions[hit]
    indices = pa.array(take, mask=take < 0)
    return arr.items.take(indices)


def new_index_file_name(old: str) -> str:
    """DataFilePathFactory.createNewFileIndexFilePath: the name of an index that replaces the
    separate index ``old`` (``<name>-<n+1>.index`` after ``<name>-<n>.index``, else
    ``<old without its extension>-1.index``)."""
    dot = old.rfind(".")
    dash = old.rfind("-")
    if dash != -1:
        number = old[dash + 1 : dot] if dot > dash else ""
        if number.isdigit() or (number[:1] in "+-" and number[1:].isdigit() and number[1:]):
            return f"{old[: dash + 1]}{int(number) + 1}{INDEX_PATH_SUFFIX}"
    return f"{old[:dot]}-1{INDEX_PATH_SUFFIX}"


def place_index(
    file_io: FileIO, path: str, blob: bytes, threshold: int
) -> tuple[bytes | None, tuple[str, ...]]:
    """Java's DataFileIndexWriter.close: (embedded_index, extra_files) for a blob; a blob over
    ``threshold`` bytes is written to ``path`` (the separate index file) first."""
    if len(blob) > threshold:
        file_io.write_bytes(path, blob)
        return None, (os.path.basename(path),)
    return blob, ()
