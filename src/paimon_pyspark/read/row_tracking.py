"""``_ROW_ID`` and ``_SEQUENCE_NUMBER`` of the rows of a ``row-tracking.enabled`` table.

Mirrors org.apache.paimon.table.SpecialFields (the two fields, their ids and types) and the
row-tracking part of DataFileRecordReader / ColumnarRowIterator#assignRowTracking: each file is
read as if its schema held both fields (RawFileSplitRead); where the file holds them (a
compaction writes them: its ``write_cols`` name them) their values are taken, and where it does
not, or a value is null, ``_ROW_ID`` is the file's ``first_row_id`` plus the row's position in
the file and ``_SEQUENCE_NUMBER`` is the file's ``max_sequence_number`` (at commit Java gives
every new file the snapshot id as its sequence numbers and the next row ids as its
``first_row_id``: RowTrackingCommitUtils).

A read asks for them by name (``with_projection([..., "_ROW_ID", "_SEQUENCE_NUMBER"])``, Java's
``withReadType(rowTypeWithRowTracking(...))``). The columns are built per file with numpy, after
the file's rows are read and before any filter or deletion vector drops a row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.format.files import read_file
from paimon_pyspark.io.data_file_reader import file_format_of
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import BIGINT, DataField

ROW_ID = DataField(2**31 - 1 - 5, "_ROW_ID", BIGINT().copy(nullable=False))
SEQUENCE_NUMBER = DataField(2**31 - 1 - 1, "_SEQUENCE_NUMBER", BIGINT().copy(nullable=False))
ROW_TRACKING_FIELDS = {ROW_ID.name: ROW_ID, SEQUENCE_NUMBER.name: SEQUENCE_NUMBER}


def tracking_fields(store: FileStore, names: Sequence[str]) -> list[DataField]:
    """The row-tracking fields among ``names``: none unless the table tracks rows."""
    if not store.options.row_tracking_enabled:
        return []
    return [ROW_TRACKING_FIELDS[n] for n in names if n in ROW_TRACKING_FIELDS]


def is_tracking_name(store: FileStore, name: str) -> bool:
    """Whether ``name`` is a row-tracking field a read of ``store`` may ask for."""
    return store.options.row_tracking_enabled and name in ROW_TRACKING_FIELDS


def with_tracking(
    store: FileStore,
    bucket_path: str,
    f: DataFileMeta,
    table: pa.Table,
    wanted: Sequence[DataField],
    first_row: int,
    row_group: int | None = None,
) -> pa.Table:
    """``table`` (rows of file ``f`` from its position ``first_row`` on, in file order) with
    the ``wanted`` row-tracking columns appended."""
    if not wanted:
        return table
    n = table.num_rows
    physical = [w.name for w in wanted if f.write_cols and w.name in f.write_cols]
    stored: dict[str, pa.Array] = {}
    if physical and n:
        path = data_file_path(store.external_paths, bucket_path, f, store.name)
        schema = pa.schema([pa.field(name, pa.int64()) for name in physical])
        data = read_file(store.file_io, path, file_format_of(store, f), physical, schema, row_group)
        offset = 0 if row_group is not None else first_row
        data = data.slice(offset, n)
        stored = {name: data.column(name).combine_chunks() for name in physical}
    for w in wanted:
        if w.name == ROW_ID.name:
            fallback = _row_ids(store, f, first_row, n, stored.get(w.name))
        else:
            fallback = pa.array(np.full(n, f.max_sequence_number, np.int64))
        value = stored.get(w.name)
        if value is not None and value.null_count:
            value = pc.coalesce(value.cast(pa.int64()), fallback)
        column = fallback if value is None else value.cast(pa.int64())
        table = table.append_column(pa.field(w.name, pa.int64(), nullable=False), column)
    return table


def _row_ids(
    store: FileStore, f: DataFileMeta, first_row: int, n: int, stored: pa.Array | None
) -> pa.Array:
    if f.first_row_id is None:
        if stored is not None and stored.null_count == 0:
            return stored.cast(pa.int64())
        raise CorruptTableError(
            f"Table '{store.name}': data file {f.file_name!r} of a row-tracking table has no "
            "first row id and does not hold _ROW_ID; its row ids are unknown."
        )
    return pa.array(np.arange(first_row, first_row + n, dtype=np.int64) + f.first_row_id)
