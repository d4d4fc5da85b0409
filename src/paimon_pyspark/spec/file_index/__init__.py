"""File indexes: per-data-file indexes Java writes (``file-index.<type>.columns``), pure codecs.

Mirrors org.apache.paimon.fileindex. Each index type lives in its own module and offers two
functions, picked here by the type's name as Java's ``FileIndexerFactory`` identifiers spell it:

- ``create_writer(data_type, options) -> FileIndexWriter``: fed a column's values as Arrow arrays
  (nulls included, in row order), ``serialize()`` gives Java's bytes for that one column.
- ``create_reader(data_type, data) -> FileIndexReader``: answers whether a file *may* hold a row
  matching a predicate on that column (``True``: keep the file; ``False``: Java's SKIP).

Literals are Python values as ``pa.array([...], to_arrow_type(data_type)).to_pylist()`` gives
them. Also here: the ``file-index.*`` options as Java's FileIndexOptions reads them
(``parse_options``) and the checks Java's DataFileIndexWriter makes when a file starts
(``check_columns``). The names of index types come from disk (a file's index header); only
the ones in ``INDEX_TYPES`` are ever looked up, each mapped to its module in ``_CODECS``, never to
anything read from the file. The operations and protocols live in ``api.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.spec.file_index import bitmap, bloom_filter, bsi, range_bitmap
from paimon_pyspark.spec.file_index.api import (
    BETWEEN as BETWEEN,
)
from paimon_pyspark.spec.file_index.api import (
    EQUAL as EQUAL,
)
from paimon_pyspark.spec.file_index.api import (
    GREATER_OR_EQUAL as GREATER_OR_EQUAL,
)
from paimon_pyspark.spec.file_index.api import (
    GREATER_THAN as GREATER_THAN,
)
from paimon_pyspark.spec.file_index.api import (
    IN as IN,
)
from paimon_pyspark.spec.file_index.api import (
    IS_NOT_NULL as IS_NOT_NULL,
)
from paimon_pyspark.spec.file_index.api import (
    IS_NULL as IS_NULL,
)
from paimon_pyspark.spec.file_index.api import (
    LESS_OR_EQUAL as LESS_OR_EQUAL,
)
from paimon_pyspark.spec.file_index.api import (
    LESS_THAN as LESS_THAN,
)
from paimon_pyspark.spec.file_index.api import (
    NOT_EQUAL as NOT_EQUAL,
)
from paimon_pyspark.spec.file_index.api import (
    NOT_IN as NOT_IN,
)
from paimon_pyspark.spec.file_index.api import (
    OPERATIONS as OPERATIONS,
)
from paimon_pyspark.spec.file_index.api import (
    FileIndexReader as FileIndexReader,
)
from paimon_pyspark.spec.file_index.api import (
    FileIndexWriter as FileIndexWriter,
)
from paimon_pyspark.spec.java_hash import string_hash
from paimon_pyspark.spec.java_hashmap import JavaHashMap
from paimon_pyspark.types.data_types import DataField, DataType, MapType

BLOOM_FILTER = "bloom-filter"
BITMAP = "bitmap"
BSI = "bsi"
RANGE_BITMAP = "range-bitmap"
INDEX_TYPES = (BLOOM_FILTER, BITMAP, BSI, RANGE_BITMAP)

_CODECS = {
    BLOOM_FILTER: bloom_filter,
    BITMAP: bitmap,
    BSI: bsi,
    RANGE_BITMAP: range_bitmap,
}


def create_writer(
    index_type: str, data_type: DataType, options: Mapping[str, str]
) -> FileIndexWriter:
    """A writer of ``index_type`` for a column of ``data_type``; ``options`` are the type's own
    (``file-index.bloom-filter.<col>.fpp`` given as ``fpp``, ...)."""
    codec = _CODECS.get(index_type)
    if codec is None:
        raise UnsupportedOptionError(f"file index type '{index_type}' is not supported")
    writer: FileIndexWriter = codec.create_writer(data_type, options)
    return writer


def create_reader(index_type: str, data_type: DataType, data: bytes) -> FileIndexReader | None:
    """A reader over one column's serialized index, or None for a type we do not know (Java's
    FileIndexFormat also skips unknown types: such a file is kept)."""
    codec = _CODECS.get(index_type)
    if codec is None:
        return None
    reader: FileIndexReader = codec.create_reader(data_type, data)
    return reader


FILE_INDEX_PREFIX = "file-index."
COLUMNS_SUFFIX = ".columns"
IN_MANIFEST_THRESHOLD = "file-index.in-manifest-threshold"
READ_ENABLED = "file-index.read.enabled"
TYPE_OPTIONS: dict[str, tuple[str, ...]] = {
    BLOOM_FILTER: ("items", "fpp"),
    BITMAP: ("version", "index-block-size"),
    BSI: (),
    RANGE_BITMAP: ("chunk-size",),
}
"""The per-column options each index type reads (Java's indexers read no others)."""


@dataclass(frozen=True)
class FileIndexOptions:
    """Java's FileIndexOptions: which columns get which index types, with their options.

    ``columns`` maps a column as the options name it (``c``, or ``m[k]`` for the values of key
    ``k`` of map column ``m``) to index type to that index's own options, both in the order
    Java's HashMaps iterate them (the order Java's writers build and list them in).
    """

    columns: Mapping[str, Mapping[str, Mapping[str, str]]]

    def __bool__(self) -> bool:
        return bool(self.columns)


def nested_position(column: str) -> int | None:
    """Where ``m[k]`` opens its bracket (FileIndexOptions.topLevelIndexOfNested), else None."""
    start = column.find("[")
    return start if start != -1 and column.endswith("]") else None


def top_level(column: str) -> str:
    pos = nested_position(column)
    return column if pos is None else column[:pos]


def parse_options(options: Mapping[str, str], table: str) -> FileIndexOptions:
    """The ``file-index.*`` keys read as Java's FileIndexOptions reads them.

    ``file-index.<type>.columns`` lists columns (an empty name is an error, as in Java);
    ``file-index.<type>.<column>.<option>`` sets an option of a listed column (for ``m[k]``,
    ``<column>`` may be ``m``: an option of every key of the map). Java ignores other keys of
    that prefix; here an unknown type, option or key is refused, since it would do nothing.
    """
    columns: dict[str, dict[str, dict[str, str]]] = {}
    maps: dict[str, dict[str, dict[str, str]]] = {}
    rest = []
    for key, value in options.items():
        if not key.startswith(FILE_INDEX_PREFIX) or key in (IN_MANIFEST_THRESHOLD, READ_ENABLED):
            continue
        if not key.endswith(COLUMNS_SUFFIX):
            rest.append((key, value))
            continue
        index_type = key[len(FILE_INDEX_PREFIX) : -len(COLUMNS_SUFFIX)]
        _check_type(index_type, key, table)
        for name in value.split(","):
            if not name.strip():
                raise OptionError(
                    f"Table '{table}': option '{key}' = '{value}' has an empty column name."
                )
            column = name.strip()
            columns.setdefault(column, {}).setdefault(index_type, {})
            if nested_position(column) is not None:
                maps.setdefault(top_level(column), {}).setdefault(index_type, {})
    for key, value in rest:
        parts = key[len(FILE_INDEX_PREFIX) :].split(".")
        if len(parts) != 3:
            raise UnsupportedOptionError(
                f"Table '{table}': option '{key}' is not a file index option paimon_pyspark "
                f"knows (file-index.<type>.columns, file-index.<type>.<column>.<option>, "
                f"{IN_MANIFEST_THRESHOLD}, {READ_ENABLED})."
            )
        index_type, column, option = parts
        _check_type(index_type, key, table)
        if option not in TYPE_OPTIONS[index_type]:
            known = ", ".join(TYPE_OPTIONS[index_type]) or "none"
            raise UnsupportedOptionError(
                f"Table '{table}': option '{key}': the {index_type} file index has no option "
                f"'{option}' (its options: {known})."
            )
        target = columns.get(column, {}).get(index_type)
        if target is None:
            target = maps.get(column, {}).get(index_type)
        if target is None:
            raise OptionError(
                f"Table '{table}': option '{key}' names column '{column}', which is not in "
                f"'{FILE_INDEX_PREFIX}{index_type}{COLUMNS_SUFFIX}'."
            )
        target[option] = value
    for column, by_type in columns.items():
        if nested_position(column) is not None:
            for index_type, opts in by_type.items():
                # the map's own options first, the key's over them (Java's new Options(a, b))
                by_type[index_type] = {**maps[top_level(column)][index_type], **opts}
    return FileIndexOptions(_in_java_order(options, columns))


# CoreOptions.setDefaultValues: any of these without ``scan.mode`` makes Java add ``scan.mode``.
_SETS_SCAN_MODE = (
    "scan.timestamp-millis",
    "scan.timestamp",
    "scan.file-creation-time-millis",
    "scan.snapshot-id",
    "incremental-between-timestamp",
    "incremental-between",
    "incremental-to-auto-tag",
)


def _in_java_order(
    options: Mapping[str, str], columns: Mapping[str, dict[str, dict[str, str]]]
) -> dict[str, dict[str, dict[str, str]]]:
    """``columns`` in the iteration order of FileIndexOptions' HashMap (Column -> index type
    -> options), which decides the order of the index header Java writes.

    Java visits ``file-index.<type>.columns`` keys in the order of the table's Options, a
    HashMap ``put`` with the table's options plus ``path`` (AbstractFileStoreTable.copy sets
    it, and CoreOptions.setDefaultValues may add ``scan.mode``), then ``computeIfAbsent``s
    each listed column, then its type. A ``computeIfAbsent`` links a new key at the head of its
    bin, so columns sharing a bin come out in reverse of that order."""
    keys = set(options) | {"path"}
    if "scan.mode" not in keys and any(k in keys for k in _SETS_SCAN_MODE):
        keys.add("scan.mode")
    table_options = JavaHashMap()
    for key in sorted(keys):  # no two .columns keys share a bin at any size: order is moot
        table_options.put(key, string_hash(key), None)
    by_column = JavaHashMap()
    for item, _ in table_options.items():
        key = str(item)
        if not (key.startswith(FILE_INDEX_PREFIX) and key.endswith(COLUMNS_SUFFIX)):
            continue
        index_type = key[len(FILE_INDEX_PREFIX) : -len(COLUMNS_SUFFIX)]
        if index_type not in INDEX_TYPES:
            continue
        for name in options[key].split(","):
            column = _Column.of(name.strip())
            types = by_column.compute_if_absent(column, column.hash_code(), JavaHashMap)
            types.compute_if_absent(index_type, string_hash(index_type), lambda: None)
    out: dict[str, dict[str, dict[str, str]]] = {}
    for col, types in by_column.items():
        assert isinstance(col, _Column)
        out[col.text] = {str(t): columns[col.text][str(t)] for t, _ in types.items()}
    return out


@dataclass(frozen=True)
class _Column:
    """FileIndexOptions.Column: its hash code is Arrays.hashCode(name, nested name, nested?);
    not Comparable in Java, so not ordered here either."""

    text: str
    name: str
    nested: str | None

    @staticmethod
    def of(text: str) -> _Column:
        pos = nested_position(text)
        if pos is None:
            return _Column(text, text, None)
        return _Column(text, text[:pos], text[pos + 1 : -1])

    def hash_code(self) -> int:
        h = 31 + string_hash(self.name)
        h = 31 * h + (0 if self.nested is None else string_hash(self.nested))
        h = 31 * h + (1237 if self.nested is None else 1231)  # Boolean.hashCode
        return ((h + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _check_type(index_type: str, key: str, table: str) -> None:
    if index_type not in INDEX_TYPES:
        raise UnsupportedOptionError(
            f"Table '{table}': option '{key}' names file index type '{index_type}'; the types "
            f"are {', '.join(INDEX_TYPES)}."
        )


def column_type(fields: Sequence[DataField], column: str) -> DataType | None:
    """The type an index of ``column`` covers (a map's value type for ``m[k]``), or None when
    the column is missing (FileIndexCommon.getFieldType)."""
    by_name = {f.name: f for f in fields}
    field = by_name.get(top_level(column))
    if field is None:
        return None
    if nested_position(column) is None:
        return field.type
    value_type = getattr(field.type, "value", None)
    return value_type if field.type.root == "MAP" and value_type is not None else None


def check_columns(index: FileIndexOptions, fields: Sequence[DataField], table: str) -> None:
    """Refuse what Java's DataFileIndexWriter refuses when it starts a file: a column the table
    lacks, ``m[k]`` on a column that is no map of string keys, a type an index cannot hash or
    options it cannot read (each writer is built once, so its own checks run)."""
    for column, by_type in index.columns.items():
        data_type = column_type(fields, column)
        if data_type is None:
            field = next((f for f in fields if f.name == top_level(column)), None)
            what = "is not a column" if field is None else "is not a map column"
            raise OptionError(
                f"Table '{table}': file index column '{column}' {what} "
                f"(file-index.{'/'.join(by_type)}.columns)."
            )
        if nested_position(column) is not None:
            map_type = next(f for f in fields if f.name == top_level(column)).type
            if not isinstance(map_type, MapType) or map_type.key.root not in ("CHAR", "VARCHAR"):
                raise OptionError(
                    f"Table '{table}': file index column '{column}': only maps with string "
                    "keys can be indexed by key."
                )
        for index_type, opts in by_type.items():
            try:
                create_writer(index_type, data_type, opts)
            except (OptionError, ValueError) as e:
                raise type(e)(
                    f"Table '{table}': file index {index_type} on column '{column}' "
                    f"({data_type.sql()}): {e}"
                ) from e
