"""TableRead: splits in, Arrow out.

Mirrors org.apache.paimon.table.source.TableRead for append tables (raw-convertible splits):
each data file is read with only the columns needed, mapped from the schema it was written with
to the current one by field id, filtered exactly, then projected. Files are read concurrently.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.format.files import read_file
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.types.arrow import to_arrow_schema, to_arrow_type
from paimon_pyspark.types.data_types import CharType, DataField

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable

_READ_THREADS = 4


class TableRead:
    def __init__(
        self,
        table: FileStoreTable,
        projection: Sequence[str] | None,
        predicate: Predicate | None,
        limit: int | None,
    ) -> None:
        table.check_append_only("reading")
        self.table = table
        self.projection = list(projection) if projection is not None else table.field_names
        self.predicate = predicate
        self.limit = limit
        by_name = {f.name: f for f in table.fields}
        self.output_fields = [by_name[n] for n in self.projection]
        needed = set(self.projection) | (predicate.fields() if predicate else set())
        self.read_fields = [f for f in table.fields if f.name in needed]
        self.output_schema = pa.schema(
            [pa.field(f.name, to_arrow_type(f.type), f.type.nullable) for f in self.output_fields]
        )
        self._filter = predicate.to_arrow_expression() if predicate else None

    def to_arrow(self, splits: Sequence[DataSplit]) -> pa.Table:
        tasks = [(s, f) for s in splits for f in s.files]
        if not tasks:
            return self.output_schema.empty_table()
        if len(tasks) == 1:
            parts = [self._read_one(*tasks[0])]
        else:
            with ThreadPoolExecutor(max_workers=min(_READ_THREADS, len(tasks))) as pool:
                parts = list(pool.map(lambda t: self._read_one(*t), tasks))
        result = pa.concat_tables(parts)
        if self.limit is not None and result.num_rows > self.limit:
            result = result.slice(0, self.limit)
        return result

    def to_arrow_batch_reader(self, splits: Sequence[DataSplit]) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(self.output_schema, self._batches(splits))

    def to_pandas(self, splits: Sequence[DataSplit]) -> pd.DataFrame:
        return self.to_arrow(splits).to_pandas()

    def _batches(self, splits: Sequence[DataSplit]) -> Iterator[pa.RecordBatch]:
        remaining = self.limit
        for split in splits:
            for f in split.files:
                table = self._read_one(split, f)
                if remaining is not None:
                    table = table.slice(0, remaining)
                    remaining -= table.num_rows
                yield from table.to_batches()
                if remaining is not None and remaining <= 0:
                    return

    def _read_one(self, split: DataSplit, f: DataFileMeta) -> pa.Table:
        file_schema = self.table.schema_manager.schema(f.schema_id)
        file_by_id = {fd.id: fd for fd in file_schema.fields}
        columns: list[tuple[DataField, DataField | None]] = [
            (cur, file_by_id.get(cur.id)) for cur in self.read_fields
        ]
        present = [old.name for _, old in columns if old is not None]
        fmt = f.file_name.rsplit(".", 1)[-1].lower()
        if fmt not in ("parquet", "orc", "avro"):
            fmt = self.table.options.file_format
        data = read_file(
            self.table.file_io,
            f"{split.bucket_path}/{f.file_name}",
            fmt,
            present,
            to_arrow_schema(file_schema.fields),
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
        table = pa.Table.from_arrays(arrays, schema=schema)
        if self._filter is not None:
            table = table.filter(self._filter)
        return table.select(self.projection)
