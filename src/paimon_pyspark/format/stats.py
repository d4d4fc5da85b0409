"""Value statistics of a data file, as Java writes them by default.

Mirrors org.apache.paimon.statistics (``metadata.stats-mode``: none, counts, full, truncate(n);
default truncate(16)) and SimpleStatsConverter's dense store. Stats only ever prune files, so
every value here must bound the real data: a string max is truncated *upwards*, and a column
whose bounds we cannot state exactly (NaN, nested types, nanosecond timestamps) gets nulls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import EMPTY_STATS, SimpleStats
from paimon_pyspark.types.data_types import (
    ArrayType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
)

_TRUNCATE_RE = re.compile(r"^truncate\((\d+)\)$")
_MAX_CODE_POINT = 0x10FFFF


def truncate_min(s: str, length: int) -> str:
    return s[:length]


def truncate_max(s: str, length: int) -> str | None:
    """A string >= every string with ``s[:length]`` as a prefix, or None if none exists."""
    if len(s) <= length:
        return s
    prefix = list(s[:length])
    for i in range(len(prefix) - 1, -1, -1):
        cp = ord(prefix[i]) + 1
        if 0xD800 <= cp <= 0xDFFF:
            cp = 0xE000
        if cp <= _MAX_CODE_POINT:
            return "".join(prefix[:i]) + chr(cp)
    return None


def _orderable(t: DataType) -> bool:
    if isinstance(t, ArrayType | MapType | MultisetType | RowType):
        return False
    return not (isinstance(t, TimestampType | TimeType) and t.precision > 6)


def column_min_max(column: pa.ChunkedArray | pa.Array, t: DataType) -> tuple[Any, Any]:
    if not _orderable(t) or len(column) == column.null_count:
        return None, None
    if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
        return None, None
    mm = pc.min_max(column)
    return mm["min"].as_py(), mm["max"].as_py()


class StatsCollector:
    """Accumulates min, max and null counts over the chunks written to one file."""

    def __init__(self, fields: Sequence[DataField], mode: str) -> None:
        self.fields = list(fields)
        self.types = [f.type.copy(nullable=True) for f in fields]
        self.mode = mode.strip().lower()
        m = _TRUNCATE_RE.match(self.mode)
        self.truncate = int(m.group(1)) if m else None
        n = len(self.fields)
        self.mins: list[Any] = [None] * n
        self.maxs: list[Any] = [None] * n
        self.nulls = [0] * n
        self.unknown = [False] * n

    def update(self, table: pa.Table) -> None:
        if self.mode == "none" or table.num_rows == 0:
            return
        for i, (f, t) in enumerate(zip(self.fields, self.types, strict=False)):
            column = table.column(f.name)
            nulls = column.null_count
            self.nulls[i] += nulls
            if self.mode == "counts" or self.unknown[i] or nulls == len(column):
                continue
            lo, hi = column_min_max(column, t)
            if lo is None:
                self.unknown[i] = True
                self.mins[i] = self.maxs[i] = None
                continue
            if self.mins[i] is None or lo < self.mins[i]:
                self.mins[i] = lo
            if self.maxs[i] is None or hi > self.maxs[i]:
                self.maxs[i] = hi

    def result(self) -> SimpleStats:
        if self.mode == "none":
            return EMPTY_STATS
        mins = list(self.mins)
        maxs = list(self.maxs)
        if self.truncate is not None:
            for i, (lo, hi) in enumerate(zip(mins, maxs, strict=False)):
                if isinstance(lo, str) and isinstance(hi, str):
                    mins[i] = truncate_min(lo, self.truncate)
                    maxs[i] = truncate_max(hi, self.truncate)
                    if maxs[i] is None:
                        mins[i] = None
        return SimpleStats(
            serialize_with_arity(mins, self.types),
            serialize_with_arity(maxs, self.types),
            tuple(self.nulls),
        )


def collect_stats(table: pa.Table, fields: Sequence[DataField], mode: str) -> SimpleStats:
    """SimpleStats of one table over ``fields`` (dense store, every column)."""
    collector = StatsCollector(fields, mode)
    collector.update(table)
    return collector.result()
