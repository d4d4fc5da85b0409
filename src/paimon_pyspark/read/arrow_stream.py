"""A table read as an Arrow C stream source that can be scanned more than once.

DuckDB scans a registered object once per query. A RecordBatchReader can be read only once, so
a second query over it fails; this source hands out a new reader of the same splits each time
it is asked for a stream, and rows are read only while a query pulls them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from paimon_pyspark.read.scan import DataSplit

if TYPE_CHECKING:
    from paimon_pyspark.read.table_read import TableRead


class SplitStream:
    def __init__(self, read: TableRead, splits: Sequence[DataSplit]) -> None:
        self.read = read
        self.splits = list(splits)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        reader = self.read.to_arrow_batch_reader(self.splits)
        return reader.__arrow_c_stream__(requested_schema)
