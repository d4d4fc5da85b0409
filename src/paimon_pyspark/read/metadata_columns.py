"""The hidden columns Java's Spark connector gives every data table (PaimonMetadataColumn):
``__paimon_file_path`` (STRING), ``__paimon_row_index`` (BIGINT, the row's position in its
file), ``__paimon_partition`` (a STRUCT of the partition's values, empty when unpartitioned) and
``__paimon_bucket`` (INT). A read asks for them by name; they come after its columns.

Partition and bucket are the split's. File path and row index exist only where rows are read
from their file as they are: append tables, and the primary-key splits that need no merge
(``kv_read.raw_convertible``: deletion vectors, a full compaction, one file); Java reads every
other split through its merge reader and fails on them, as :func:`refuse_merged` does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from paimon_pyspark.errors import UnsupportedOperationError
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import DataField

FILE_PATH = "__paimon_file_path"
ROW_INDEX = "__paimon_row_index"
PARTITION = "__paimon_partition"
BUCKET = "__paimon_bucket"
NAMES = (FILE_PATH, ROW_INDEX, PARTITION, BUCKET)
"""In Java's order of ``SparkTable.metadataColumns``."""
PER_FILE = frozenset({FILE_PATH, ROW_INDEX})
OPTION = "metadata-columns"
"""Reader option of the Spark relations: the metadata columns they add after their columns,
comma-separated (the SQL door sets it when a query names them)."""


def partition_type(partition_fields: Sequence[DataField]) -> pa.StructType:
    return pa.struct(
        [pa.field(f.name, to_arrow_type(f.type), f.type.nullable) for f in partition_fields]
    )


def arrow_fields(names: Sequence[str], partition_fields: Sequence[DataField]) -> list[pa.Field]:
    """The Arrow fields of the metadata columns ``names``, in that order."""
    types = {
        FILE_PATH: pa.string(),
        ROW_INDEX: pa.int64(),
        PARTITION: partition_type(partition_fields),
        BUCKET: pa.int32(),
    }
    return [pa.field(n, types[n]) for n in names]


def parse_names(text: str | None, identifier: str) -> list[str]:
    """The metadata columns a reader option lists (comma-separated), each known, in Java's
    order; an unknown one is refused, named."""
    if text is None or not text.strip():
        return []
    wanted = {w.strip().lower() for w in text.split(",") if w.strip()}
    unknown = sorted(wanted - set(NAMES))
    if unknown:
        raise UnsupportedOperationError(
            f"Table '{identifier}': {', '.join(unknown)} is not a metadata column (there are "
            f"{', '.join(NAMES)})."
        )
    return [n for n in NAMES if n in wanted]


def refuse_merged(identifier: str, names: Sequence[str]) -> None:
    """File path and row index of a split that must be merged: refused, as Java refuses."""
    per_file = [n for n in names if n in PER_FILE]
    if per_file:
        raise UnsupportedOperationError(
            f"Table '{identifier}': {', '.join(per_file)} needs rows read from their file as "
            "they are, and a bucket of this primary-key table needs a merge; only append "
            "tables, deletion-vector tables and fully compacted primary-key buckets have them, "
            "as in Java's connector."
        )


def append_columns(
    table: pa.Table,
    names: Sequence[str],
    partition_row: pa.Table | None,
    partition_fields: Sequence[DataField],
    bucket: int,
    file_path: str | None = None,
    first_row: int = 0,
) -> pa.Table:
    """``table`` with the metadata columns ``names`` appended: ``file_path`` and positions from
    ``first_row`` on for rows still in file order (before any row is dropped)."""
    n = table.num_rows
    for field in arrow_fields(names, partition_fields):
        column: pa.Array
        if field.name == FILE_PATH:
            column = pa.repeat(pa.scalar(file_path, pa.string()), n)
        elif field.name == ROW_INDEX:
            column = pa.array(np.arange(first_row, first_row + n, dtype=np.int64))
        elif field.name == BUCKET:
            column = pa.repeat(pa.scalar(bucket, pa.int32()), n)
        else:
            column = _partition_column(field.type, partition_row, n)
        table = table.append_column(field, column)
    return table


def _partition_column(kind: pa.StructType, row: pa.Table | None, n: int) -> pa.Array:
    if kind.num_fields == 0:
        return pa.StructArray.from_buffers(kind, n, [None])
    if row is None:  # values that do not convert to Arrow: unknown, as null
        return pa.nulls(n, kind)
    children = [pa.repeat(row.column(i)[0], n) for i in range(kind.num_fields)]
    return pa.StructArray.from_arrays(children, fields=list(kind))
