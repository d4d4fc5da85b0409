"""ReadBuilder: projection, filter and limit, then a scan and a read; pypaimon's names.

Mirrors org.apache.paimon.table.source.ReadBuilderImpl.
"""

from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING

from paimon_pyspark.errors import InvalidArgumentError, PredicateError, describe
from paimon_pyspark.read.explain import ExplainResult, explain
from paimon_pyspark.read.fallback_read import new_table_read, new_table_scan
from paimon_pyspark.read.nested_projection import (
    NestedTableRead,
    is_nested,
    resolve_projection,
)
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder, check_fields
from paimon_pyspark.read.row_tracking import tracking_fields
from paimon_pyspark.read.scan import TableScan
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.types.data_types import DataField, RowType

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


class ReadBuilder:
    def __init__(self, store: FileStore, two_branches: bool = False) -> None:
        """``two_branches``: a user's batch read, which ``scan.fallback-branch`` or
        ``scan.primary-branch`` spreads over two branches (read/fallback_read.py); the
        package's own scans (DML, compaction, streams) read the handle's branch alone, as
        Java's do."""
        self.store = store
        self._two_branches = two_branches
        self._projection: list[str] | None = None
        self._predicate: Predicate | None = None
        self._partition_filter: Predicate | None = None
        self._limit: int | None = None

    def with_projection(self, projection: list[str]) -> ReadBuilder:
        """Read only these fields, in this order (a list of field names).

        A dotted name that is not a column is a ROW subfield (``"info.name"``), read as the
        column ``info_name``, as in pypaimon (read/nested_projection.py).
        """
        if isinstance(projection, str | bytes) or not isinstance(projection, list | tuple):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': ReadBuilder.with_projection(projection) takes a "
                f"list of field names, got {describe(projection)}."
            )
        bad = [n for n in projection if not isinstance(n, str)]
        if bad:
            raise InvalidArgumentError(
                f"Table '{self.store.name}': ReadBuilder.with_projection(projection) takes "
                f"field names, got {describe(bad[0])}."
            )
        fields = self._fields(projection)
        known = {f.name for f in fields}
        unknown = [n for n in projection if n not in known and "." not in n]
        if unknown:
            raise PredicateError(
                f"Table '{self.store.name}': projected fields {unknown} do not exist "
                f"(fields: {self.store.field_names})."
            )
        if is_nested(projection, fields):
            resolve_projection(fields, projection, self.store.name)
        self._projection = list(projection)
        return self

    def with_filter(self, predicate: Predicate | None) -> ReadBuilder:
        if predicate is not None and not isinstance(predicate, Predicate):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': ReadBuilder.with_filter(predicate) takes a "
                f"Predicate from new_predicate_builder(), or None, got {describe(predicate)}."
            )
        if predicate is not None:
            check_fields(predicate, self.store.fields, self.store.name)
        self._predicate = predicate
        return self

    def with_partition_filter(self, partition_filter: Predicate | None) -> ReadBuilder:
        """Read only the partitions ``partition_filter`` accepts (pypaimon 2's name).

        A predicate over partition keys only, from ``new_predicate_builder()``; it is ANDed
        with ``with_filter``'s, whichever was given first, and prunes whole partitions before
        any manifest entry is read, as a partition conjunct of ``with_filter`` does. A field
        that is not a partition key raises PredicateError.
        """
        name = self.store.name
        if partition_filter is not None and not isinstance(partition_filter, Predicate):
            raise InvalidArgumentError(
                f"Table '{name}': ReadBuilder.with_partition_filter(partition_filter) takes a "
                f"Predicate from new_predicate_builder(), or None, got "
                f"{describe(partition_filter)}."
            )
        if partition_filter is not None:
            check_fields(partition_filter, self.store.fields, name)
            others = sorted(partition_filter.fields() - set(self.store.partition_keys))
            if others:
                raise PredicateError(
                    f"Table '{name}': ReadBuilder.with_partition_filter(partition_filter) names "
                    f"{others}, which are not partition keys (partition keys: "
                    f"{self.store.partition_keys})."
                )
        self._partition_filter = partition_filter
        return self

    def with_limit(self, limit: int | None) -> ReadBuilder:
        """Read at most ``limit`` rows (None: all)."""
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, Integral) or limit < 0
        ):
            raise InvalidArgumentError(
                f"Table '{self.store.name}': ReadBuilder.with_limit(limit) takes an int >= 0, "
                f"or None, got {describe(limit)}."
            )
        self._limit = None if limit is None else int(limit)
        return self

    def new_predicate_builder(self) -> PredicateBuilder:
        return PredicateBuilder(RowType(self.store.fields), self.store.name)

    def read_type(self) -> RowType:
        """The fields of the rows read (a projected ROW subfield named as its column)."""
        names = self._projection or self.store.field_names
        columns = resolve_projection(self._fields(names), names, self.store.name)
        return RowType(tuple(c.field for c in columns))

    def new_scan(self) -> TableScan:
        self.store.options.check_batch_scan_mode()
        if self._two_branches:
            return new_table_scan(self.store, self._filter(), self._limit)
        return TableScan(self.store, self._filter(), self._limit)

    def new_read(self) -> TableRead:
        projection = self._projection
        nested = projection is not None and is_nested(projection, self._fields(projection))
        if self._two_branches:
            return new_table_read(self.store, projection, self._filter(), self._limit, nested)
        if nested:
            assert projection is not None
            return NestedTableRead(self.store, projection, self._filter(), self._limit)
        return TableRead(self.store, projection, self._filter(), self._limit)

    def explain(self, verbose: bool = False) -> ExplainResult:
        """What the scan of this builder would read (pypaimon's): snapshot, filter,
        projection, limit, the pruning funnel and the splits' shape, from manifests only;
        ``verbose`` lists every split. ``str()`` of the result renders it."""
        return explain(self.store, self._filter(), self._projection, self._limit, verbose)

    def _fields(self, names: list[str]) -> list[DataField]:
        """The table's fields and the row-tracking fields (``_ROW_ID``, ``_SEQUENCE_NUMBER``)
        among ``names`` that a row-tracking table offers (read/row_tracking.py)."""
        return [*self.store.fields, *tracking_fields(self.store, names)]

    def _filter(self) -> Predicate | None:
        given = [p for p in (self._partition_filter, self._predicate) if p is not None]
        return PredicateBuilder.and_predicates(given)
