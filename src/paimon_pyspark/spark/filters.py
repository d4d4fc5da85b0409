"""Spark's pushed filters as paimon_pyspark predicates, where the meaning is the same."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import datasource as ds

from paimon_pyspark.errors import PredicateError
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.table.file_store_table import FileStoreTable

_COMPARISONS = {
    ds.EqualTo: "equal",
    ds.GreaterThan: "greater_than",
    ds.GreaterThanOrEqual: "greater_or_equal",
    ds.LessThan: "less_than",
    ds.LessThanOrEqual: "less_or_equal",
    ds.StringStartsWith: "startswith",
    ds.StringEndsWith: "endswith",
    ds.StringContains: "contains",
}


def _field(f: Any, table: FileStoreTable) -> str | None:
    """The top-level column a filter tests, if we may evaluate it for Spark."""
    attribute = getattr(f, "attribute", None)
    if not attribute or len(attribute) != 1 or attribute[0] not in table.field_names:
        return None
    arrow_type = table.arrow_schema.field(attribute[0]).type
    # Spark's NaN and timestamp-zone semantics differ from Arrow's: let Spark evaluate those.
    if pa.types.is_floating(arrow_type) or pa.types.is_timestamp(arrow_type):
        return None
    return str(attribute[0])


def to_predicate(f: Any, pb: PredicateBuilder, table: FileStoreTable) -> Predicate | None:
    """The predicate for Spark filter ``f``, or None when Spark must apply it itself."""
    try:
        return _convert(f, pb, table)
    except PredicateError:
        return None


def _convert(f: Any, pb: PredicateBuilder, table: FileStoreTable) -> Predicate | None:
    if isinstance(f, ds.Not):
        child = f.child
        name = _field(child, table)
        if name is None:
            return None
        if isinstance(child, ds.EqualTo):
            return pb.not_equal(name, child.value)
        if isinstance(child, ds.In):
            return pb.is_not_in(name, list(child.value))
        return None
    name = _field(f, table)
    if name is None:
        return None
    for cls, method in _COMPARISONS.items():
        if type(f) is cls:
            result: Predicate = getattr(pb, method)(name, getattr(f, "value"))  # noqa: B009
            return result
    if isinstance(f, ds.EqualNullSafe):
        return pb.is_null(name) if f.value is None else pb.equal(name, f.value)
    if isinstance(f, ds.In):
        return pb.is_in(name, list(f.value))
    if isinstance(f, ds.IsNull):
        return pb.is_null(name)
    if isinstance(f, ds.IsNotNull):
        return pb.is_not_null(name)
    return None
