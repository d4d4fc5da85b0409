"""Reading data files of one bucket, and the merge-on-read of primary-key splits.

Mirrors org.apache.paimon.utils.FormatReaderMapping (columns of the schema a file was written
with, matched to the current schema by field id) and, for primary-key tables,
org.apache.paimon.operation.MergeFileSplitRead: every file of a bucket is read with its
``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``, the records are merged per key by the table's merge
engine, and retractions are dropped. Key fields are taken from the value columns, never from the
``_KEY_`` columns, as Java readers do since 1.0, so thin and full files read the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.format.files import read_file
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.key_value import (
    RETRACTS,
    SEQUENCE_NUMBER,
    SEQUENCE_NUMBER_ID,
    VALUE_KIND,
    VALUE_KIND_ID,
)
from paimon_pyspark.types.arrow import to_arrow_schema, to_arrow_type
from paimon_pyspark.types.data_types import AtomicType, CharType, DataField

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

SYSTEM_FIELDS = (
    DataField(SEQUENCE_NUMBER_ID, SEQUENCE_NUMBER, AtomicType(name="BIGINT", nullable=False)),
    DataField(VALUE_KIND_ID, VALUE_KIND, AtomicType(name="TINYINT", nullable=False)),
)
_RETRACT_KINDS = pa.array(RETRACTS, pa.int8())


def file_format_of(table: FileStore, f: DataFileMeta) -> str:
    fmt = f.file_name.rsplit(".", 1)[-1].lower()
    return fmt if fmt in ("parquet", "orc", "avro") else table.options.file_format


def read_data_file(
    table: FileStore,
    bucket_path: str,
    f: DataFileMeta,
    fields: Sequence[DataField],
    system: bool = False,
) -> pa.Table:
    """``fields`` (current schema) of one data file, plus the KV system columns if ``system``.

    Columns are found by field id in the schema the file was written with; a field added
    later reads as nulls, a renamed one by its old name, a widened one is cast.
    """
    file_schema = table.schema_manager.schema(f.schema_id)
    file_by_id = {fd.id: fd for fd in file_schema.fields}
    columns: list[tuple[DataField, DataField | None]] = [
        (cur, file_by_id.get(cur.id)) for cur in fields
    ]
    if system:
        columns += [(sf, sf) for sf in SYSTEM_FIELDS]
    physical = [old for _, old in columns if old is not None]
    fmt = file_format_of(table, f)
    data = read_file(
        table.file_io,
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


def read_kv_records(table: FileStore, bucket_path: str, files: Sequence[DataFileMeta]) -> pa.Table:
    """All table columns + ``_SEQUENCE_NUMBER`` + ``_VALUE_KIND`` of ``files``, unmerged.

    The entry point for compaction and for the merge-on-read below.
    """
    fields = list(table.fields)
    parts = [read_data_file(table, bucket_path, f, fields, system=True) for f in files]
    if not parts:
        return to_arrow_schema([*fields, *SYSTEM_FIELDS]).empty_table()
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def read_postpone_records(
    table: FileStore, bucket_path: str, files: Sequence[DataFileMeta]
) -> pa.Table:
    """The records of postpone files (given in write order) numbered 0, 1, ... as written.

    Postpone records all carry sequence number -1; their order in the files is their order.
    """
    records = read_kv_records(table, bucket_path, files)
    index = records.schema.get_field_index(SEQUENCE_NUMBER)
    order = pa.array(np.arange(records.num_rows, dtype=np.int64))
    return records.set_column(index, records.schema.field(index), order)


def raw_convertible(files: Sequence[DataFileMeta], settings: MergeSettings) -> bool:
    """True when the files of a bucket already hold one record per key and no retraction.

    That is the case for one sorted run at a level above 0 (compaction output: merged, key
    ranges disjoint) without deletes, as Java's rawConvertible splits; and, for deduplicate,
    for a single flushed file without deletes (a flush leaves one record per key).
    """
    if not files or any(f.delete_row_count is None or f.delete_row_count > 0 for f in files):
        return False
    levels = {f.level for f in files}
    if len(levels) == 1 and next(iter(levels)) > 0:
        return True
    return len(files) == 1 and settings.engine == "deduplicate"


def merge_read(
    table: FileStore,
    bucket_path: str,
    files: Sequence[DataFileMeta],
    settings: MergeSettings,
    postpone: bool = False,
) -> pa.Table:
    """The merged rows of one bucket: table columns, one row per live key, sorted by key.

    ``postpone``: the files are one partition's postpone files in write order, merged as
    their compaction into an empty bucket would merge them.
    """
    fields = list(table.fields)
    if postpone:
        records = read_postpone_records(table, bucket_path, files)
    elif raw_convertible(files, settings):
        parts = [read_data_file(table, bucket_path, f, fields) for f in files]
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    else:
        records = read_kv_records(table, bucket_path, files)
    keys = table.table_schema.trimmed_primary_keys()
    merged = merge(records, keys, settings, drop_delete=True)
    return merged.select([f.name for f in fields])
