"""Reading the data files of one bucket, as the current schema sees them.

Mirrors org.apache.paimon.utils.FormatReaderMapping (columns of the schema a file was written
with, matched to the current schema by field id) and org.apache.paimon.io.KeyValueFileReaderFactory:
key-value files are read with their ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``, and key fields are
taken from the value columns, never from the ``_KEY_`` columns, as Java readers do since 1.0, so
thin and full files read the same way. Compaction and the merge-on-read both read through here.

A file's deletion vector (spec/deletion_vector.py) names rows by their position in the whole
file, so a reader drops them with :func:`drop_deleted` given the file position of the first row
it holds: 0 for a whole file, the rows of the row groups before it for one row group
(:func:`row_group_rows` reads them from the footer), the slice's start for a slice. Nothing is
pruned inside a file before that, so positions are never lost.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as porc
import pyarrow.parquet as pq

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.format.files import from_orc_table, read_file
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.spec.key_value import (
    SEQUENCE_NUMBER,
    SEQUENCE_NUMBER_ID,
    VALUE_KIND,
    VALUE_KIND_ID,
)
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.arrow import to_arrow_field_for_element, to_arrow_schema, to_arrow_type
from paimon_pyspark.types.data_types import (
    ArrayType,
    AtomicType,
    CharType,
    DataField,
    DataType,
    MapType,
    RowType,
)

PARQUET_READ_BUFFER = 1024 * 1024
"""Bytes a batch reader reads of a Parquet column chunk at a time. pyarrow's default for a
native file pre-buffers whole row groups (a million rows here), ~3x the memory per open run."""

SYSTEM_FIELDS = (
    DataField(SEQUENCE_NUMBER_ID, SEQUENCE_NUMBER, AtomicType(name="BIGINT", nullable=False)),
    DataField(VALUE_KIND_ID, VALUE_KIND, AtomicType(name="TINYINT", nullable=False)),
)


def file_format_of(store: FileStore, f: DataFileMeta) -> str:
    fmt = f.file_name.rsplit(".", 1)[-1].lower()
    return fmt if fmt in ("parquet", "orc", "avro") else store.options.file_format


def read_data_file(
    store: FileStore,
    bucket_path: str,
    f: DataFileMeta,
    fields: Sequence[DataField],
    system: bool = False,
    row_group: int | None = None,
) -> pa.Table:
    """``fields`` (current schema) of one data file, plus the KV system columns if ``system``;
    of a Parquet file, only ``row_group`` when one is given (see :func:`row_groups`).

    Columns are found by field id in the schema the file was written with; a field added
    later reads as nulls, a renamed one by its old name, a widened one is cast.
    """
    mapping = _ColumnMapping(store, f, fields, system)
    data = read_file(
        store.file_io,
        data_file_path(store.external_paths, bucket_path, f, store.name),
        mapping.fmt,
        mapping.physical_names,
        mapping.physical_schema,
        row_group,
    )
    return mapping.current(data)


def row_group_rows(store: FileStore, bucket_path: str, f: DataFileMeta) -> list[int] | None:
    """The row count of each row group of a Parquet data file (its footer is read); None for
    ORC and Avro files, which are read whole."""
    if file_format_of(store, f) != "parquet":
        return None
    path = data_file_path(store.external_paths, bucket_path, f, store.name)
    try:
        with store.file_io.open_input(path) as stream:
            footer = pq.ParquetFile(stream).metadata
            return [footer.row_group(g).num_rows for g in range(footer.num_row_groups)]
    except (OSError, pa.ArrowInvalid) as e:
        raise CorruptTableError(f"Data file '{path}' cannot be read: {e}") from e


def kept_rows(
    deleted: DeletionVector | None, row_count: int, first_row: int = 0
) -> npt.NDArray[np.bool_] | None:
    """Which of the ``row_count`` rows from file position ``first_row`` on the deletion vector
    ``deleted`` keeps, or None when it deletes none of them."""
    if deleted is None or row_count == 0:
        return None
    keep = deleted.keep_mask(row_count, first_row)
    return None if keep.all() else keep


def drop_deleted(table: pa.Table, deleted: DeletionVector | None, first_row: int = 0) -> pa.Table:
    """``table`` (rows ``first_row ..`` of one data file, in file order) without the rows its
    deletion vector ``deleted`` marks; as it is when none falls in its range."""
    keep = kept_rows(deleted, table.num_rows, first_row)
    return table if keep is None else table.filter(pa.array(keep))


def iter_live_rows(
    store: FileStore,
    bucket_path: str,
    f: DataFileMeta,
    fields: Sequence[DataField],
    system: bool,
    batch_rows: int,
    deleted: DeletionVector | None,
) -> Iterator[tuple[pa.Table, npt.NDArray[np.int64]]]:
    """:func:`iter_data_file` without the rows ``deleted`` marks, each batch with its rows'
    positions in the file (Java's ApplyDeletionVectorReader with the returned positions;
    Spark's ``_metadata.row_index``): what a DELETE marks and a lookup compaction deletes."""
    start = 0
    for rows in iter_data_file(store, bucket_path, f, fields, system, batch_rows):
        n = rows.num_rows
        positions = np.arange(start, start + n, dtype=np.int64)
        keep = kept_rows(deleted, n, start)
        if keep is not None:
            rows = rows.filter(pa.array(keep))
            positions = positions[keep]
        start += n
        yield rows, positions


def iter_data_file(
    store: FileStore,
    bucket_path: str,
    f: DataFileMeta,
    fields: Sequence[DataField],
    system: bool,
    batch_rows: int,
) -> Iterator[pa.Table]:
    """:func:`read_data_file` in batches of at most ``batch_rows`` rows, in file order.

    Parquet files are decoded batch by batch and ORC files stripe by stripe, so only one
    batch (and the row group or stripe it comes from) is in memory at a time; Avro files are
    decoded whole and handed out in slices.
    """
    mapping = _ColumnMapping(store, f, fields, system)
    path = data_file_path(store.external_paths, bucket_path, f, store.name)
    if mapping.fmt == "avro":
        data = read_file(
            store.file_io, path, "avro", mapping.physical_names, mapping.physical_schema
        )
        for start in range(0, data.num_rows, batch_rows):
            yield mapping.current(data.slice(start, batch_rows))
        return
    try:
        with store.file_io.open_input(path) as stream:
            if mapping.fmt == "parquet":
                reader = pq.ParquetFile(stream, pre_buffer=False, buffer_size=PARQUET_READ_BUFFER)
                for batch in reader.iter_batches(
                    batch_size=batch_rows, columns=mapping.physical_names, use_threads=False
                ):
                    yield mapping.current(pa.Table.from_batches([batch]))
            else:
                orc = porc.ORCFile(stream)
                for i in range(orc.nstripes):
                    stripe = pa.Table.from_batches(
                        [orc.read_stripe(i, columns=mapping.physical_names)]
                    )
                    stripe = from_orc_table(stripe, mapping.physical_schema)
                    for start in range(0, stripe.num_rows, batch_rows):
                        yield mapping.current(stripe.slice(start, batch_rows))
    except (OSError, pa.ArrowInvalid) as e:
        raise CorruptTableError(f"Data file '{path}' cannot be read: {e}") from e


class _ColumnMapping:
    """The current schema's ``fields`` found by field id in the schema ``f`` was written with."""

    def __init__(
        self, store: FileStore, f: DataFileMeta, fields: Sequence[DataField], system: bool
    ) -> None:
        file_schema = store.schema_manager.schema(f.schema_id)
        file_by_id = {fd.id: fd for fd in file_schema.fields}
        self.columns: list[tuple[DataField, DataField | None]] = [
            (cur, file_by_id.get(cur.id)) for cur in fields
        ]
        if system:
            self.columns += [(sf, sf) for sf in SYSTEM_FIELDS]
        physical = [old for _, old in self.columns if old is not None]
        self.physical_names = [p.name for p in physical]
        self.physical_schema = to_arrow_schema(physical)
        self.fmt = file_format_of(store, f)
        self.schema = pa.schema(
            [pa.field(c.name, to_arrow_type(c.type), c.type.nullable) for c, _ in self.columns]
        )

    def current(self, data: pa.Table) -> pa.Table:
        """Physical columns read from the file as the current schema's columns."""
        arrays = []
        for cur, old in self.columns:
            target = to_arrow_type(cur.type)
            if old is None:
                arrays.append(pa.nulls(data.num_rows, target))
                continue
            column = data.column(old.name)
            if self.fmt == "orc" and isinstance(old.type, CharType) and not old.type.variable:
                # Java's ORC writer pads CHAR(n) values and its reader strips the padding.
                column = pc.utf8_rtrim(column, characters=" ")
            if column.type == target:
                arrays.append(column)
            elif isinstance(old.type, RowType | ArrayType | MapType):
                chunks = [_evolve(c, old.type, cur.type) for c in column.chunks]
                arrays.append(pa.chunked_array(chunks, type=target))
            else:
                arrays.append(_cast(column, target))
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _evolve(array: pa.Array, old: DataType, new: DataType) -> pa.Array:
    """A nested value written under ``old`` as ``new``: row fields matched by field id (added
    ones null, renamed ones found, dropped ones left out), through arrays and map values, as
    Java's nested schema evolution reads them; leaves are cast as :func:`_cast`."""
    target = to_arrow_type(new)
    if array.type == target:
        return array
    mask = array.is_null() if array.null_count else None
    if isinstance(old, RowType) and isinstance(new, RowType):
        by_id = {f.id: (i, f) for i, f in enumerate(old.fields)}
        struct = cast(pa.StructArray, array)
        children = []
        for f in new.fields:
            found = by_id.get(f.id)
            if found is None:
                children.append(pa.nulls(len(array), to_arrow_type(f.type)))
            else:
                children.append(_evolve(struct.field(found[0]), found[1].type, f.type))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if isinstance(old, ArrayType) and isinstance(new, ArrayType):
        lists = cast(pa.ListArray, array)
        values = _evolve(lists.values, old.element, new.element)
        return pa.ListArray.from_arrays(lists.offsets, values, type=target, mask=mask)
    if isinstance(old, MapType) and isinstance(new, MapType):
        maps = cast(pa.MapArray, array)
        items = _evolve(maps.items, old.value, new.value)
        keys = _evolve(maps.keys, old.key, new.key)
        return pa.MapArray.from_arrays(maps.offsets, keys, items, type=target, mask=mask)
    return _cast(pa.chunked_array([array]), target).combine_chunks()


def _cast(column: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    """A column written before an ``ALTER COLUMN ... TYPE``, as the new type.

    Java's CastExecutors narrow integers by dropping the high bits (Java's ``(int)`` cast) and
    timestamps by truncating to the new precision; Arrow's unchecked cast does both the same
    way. Every other cast is checked, so a value Java would turn into something else (a
    string that is no number) fails the read instead of reading differently.
    """
    source = column.type
    unchecked = (pa.types.is_integer(source) and pa.types.is_integer(target)) or (
        pa.types.is_timestamp(source) and pa.types.is_timestamp(target)
    )
    return column.cast(target, safe=not unchecked)


def with_constants(
    table: pa.Table,
    fields: Sequence[DataField],
    constants: Mapping[str, pa.Scalar],
    rows: int | None = None,
) -> pa.Table:
    """``table`` (the ``fields`` not in ``constants``) with the ``constants`` added as columns
    whose every row holds the value, in the order of ``fields``: a split's partition columns
    are its partition values, not decoded from its files (Java's PartitionInfo). ``rows``:
    the row count when ``table`` has no column to tell it."""
    if not constants:
        return table
    n = table.num_rows if rows is None else rows
    columns = []
    out = []
    for f in fields:
        if f.name in constants:
            columns.append(pa.repeat(constants[f.name], n))
            out.append(to_arrow_field_for_element(f.name, f.type))
        else:
            columns.append(table.column(f.name))
            out.append(table.schema.field(f.name))
    return pa.Table.from_arrays(columns, schema=pa.schema(out))


def read_kv_records(
    store: FileStore,
    bucket_path: str,
    files: Sequence[DataFileMeta],
    fields: Sequence[DataField] | None = None,
    vectors: Mapping[str, DeletionVector] | None = None,
) -> pa.Table:
    """All table columns (or ``fields``) + ``_SEQUENCE_NUMBER`` + ``_VALUE_KIND`` of ``files``,
    unmerged, without the rows their deletion ``vectors`` (by file name) mark.

    The entry point for the merge-on-read and for postpone files.
    """
    cols = list(store.fields) if fields is None else list(fields)
    found = vectors or {}
    parts = [
        drop_deleted(
            read_data_file(store, bucket_path, f, cols, system=True), found.get(f.file_name)
        )
        for f in files
    ]
    if not parts:
        return to_arrow_schema([*cols, *SYSTEM_FIELDS]).empty_table()
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def iter_kv_records(
    store: FileStore,
    bucket_path: str,
    files: Sequence[DataFileMeta],
    batch_rows: int,
    fields: Sequence[DataField] | None = None,
) -> Iterator[pa.Table]:
    """:func:`read_kv_records` of ``files`` in batches of at most ``batch_rows`` rows, file
    after file; ``fields`` (default: every table column) narrows the columns. The entry point
    for compaction, which reads each sorted run this way (Java's KeyValueFileReaderFactory
    under a SortMergeReader)."""
    cols = list(store.fields) if fields is None else list(fields)
    for f in files:
        yield from iter_data_file(store, bucket_path, f, cols, True, batch_rows)


def read_postpone_records(
    store: FileStore, bucket_path: str, files: Sequence[DataFileMeta]
) -> pa.Table:
    """The records of postpone files (given in write order) numbered 0, 1, ... as written.

    Postpone records all carry sequence number -1; their order in the files is their order.
    """
    records = read_kv_records(store, bucket_path, files)
    index = records.schema.get_field_index(SEQUENCE_NUMBER)
    order = pa.array(np.arange(records.num_rows, dtype=np.int64))
    return records.set_column(index, records.schema.field(index), order)
