"""ReadBuilder: projection, filter and limit, then a scan and a read; pypaimon's names.

Mirrors org.apache.paimon.table.source.ReadBuilderImpl.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_pyspark.errors import PredicateError
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.read.scan import TableScan
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.types.data_types import RowType

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


class ReadBuilder:
    def __init__(self, store: FileStore) -> None:
        self.store = store
        self._projection: list[str] | None = None
        self._predicate: Predicate | None = None
        self._limit: int | None = None

    def with_projection(self, projection: list[str]) -> ReadBuilder:
        unknown = [n for n in projection if n not in self.store.field_names]
        if unknown:
            raise PredicateError(
                f"Table '{self.store.name}': projected fields {unknown} do not exist "
                f"(fields: {self.store.field_names})."
            )
        self._projection = list(projection)
        return self

    def with_filter(self, predicate: Predicate | None) -> ReadBuilder:
        self._predicate = predicate
        return self

    def with_limit(self, limit: int) -> ReadBuilder:
        self._limit = limit
        return self

    def new_predicate_builder(self) -> PredicateBuilder:
        return PredicateBuilder(RowType(self.store.fields), self.store.name)

    def read_type(self) -> RowType:
        names = self._projection or self.store.field_names
        by_name = {f.name: f for f in self.store.fields}
        return RowType(tuple(by_name[n] for n in names))

    def new_scan(self) -> TableScan:
        return TableScan(self.store, self._predicate, self._limit)

    def new_read(self) -> TableRead:
        return TableRead(self.store, self._projection, self._predicate, self._limit)
