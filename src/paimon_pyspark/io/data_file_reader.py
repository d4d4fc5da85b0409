"""Reading the data files of one bucket, as the current schema sees them.

Mirrors org.apache.paimon.utils.FormatReaderMapping (columns of the schema a file was written
with, matched to the current schema by field id) and org.apache.paimon.io.KeyValueFileReaderFactory:
key-value files are read with their ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``, and key fields are
taken from the value columns, never from the ``_KEY_`` columns, as Java readers do since 1.0, so
thin and full files read the same way. Compaction and the merge-on-read both read through here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.format.files import read_file
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.key_value import (
    SEQUENCE_NUMBER,
    SEQUENCE_NUMBER_ID,
    VALUE_KIND,
    VALUE_KIND_ID,
)
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.arrow import to_arrow_schema, to_arrow_type
from paimon_pyspark.types.data_types import AtomicType, CharType, DataField

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
) -> pa.Table:
    """``fields`` (current schema) of one data file, plus the KV system columns if ``system``.

    Columns are found by field id in the schema the file was written with; a field added
    later reads as nulls, a renamed one by its old name, a widened one is cast.
    """
    file_schema = store.schema_manager.schema(f.schema_id)
    file_by_id = {fd.id: fd for fd in file_schema.fields}
    columns: list[tuple[DataField, DataField | None]] = [
        (cur, file_by_id.get(cur.id)) for cur in fields
    ]
    if system:
        columns += [(sf, sf) for sf in SYSTEM_FIELDS]
    physical = [old for _, old in columns if old is not None]
    fmt = file_format_of(store, f)
    data = read_file(
        store.file_io,
        f"{bucket_path}/{f.file_name}",
        fmt,
        [p.name for p in physical],
        to_arrow_schema(physical),
    )
    arrays = []
    for cur, old in columns:
        target = to_arrow_type(cur.type)
        if old is None:
            arrays.append(pa.nulls(data.num_rows, target))
            continue
        column = data.column(old.name)
        if fmt == "orc" and isinstance(old.type, CharType) and not old.type.variable:
            # Java's ORC writer pads CHAR(n) values and its reader strips the padding.
            column = pc.utf8_rtrim(column, characters=" ")
        arrays.append(column if column.type == target else column.cast(target))
    schema = pa.schema(
        [pa.field(c.name, to_arrow_type(c.type), c.type.nullable) for c, _ in columns]
    )
    return pa.Table.from_arrays(arrays, schema=schema)


def read_kv_records(store: FileStore, bucket_path: str, files: Sequence[DataFileMeta]) -> pa.Table:
    """All table columns + ``_SEQUENCE_NUMBER`` + ``_VALUE_KIND`` of ``files``, unmerged.

    The entry point for compaction and for the merge-on-read.
    """
    fields = list(store.fields)
    parts = [read_data_file(store, bucket_path, f, fields, system=True) for f in files]
    if not parts:
        return to_arrow_schema([*fields, *SYSTEM_FIELDS]).empty_table()
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


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
