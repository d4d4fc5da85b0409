"""Runs of equal keys in sorted records, and per-run reductions over row masks.

The engines express "the last record of the key that ...", "the first record that ..." as one
numpy ``reduceat`` over row indexes, so no Python code runs per row or per key.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pyarrow as pa

from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER, VALUE_KIND


class Groups:
    """Groups of consecutive rows, given the first row of each: ``starts`` (ascending)."""

    def __init__(self, starts: np.ndarray, num_rows: int) -> None:
        self.starts = starts.astype(np.int64, copy=False)
        self.num_rows = num_rows
        self.ends = np.append(self.starts[1:], num_rows)  # exclusive
        self.lasts = self.ends - 1

    @property
    def count(self) -> int:
        return len(self.starts)

    @cached_property
    def sizes(self) -> np.ndarray:
        return self.ends - self.starts

    @cached_property
    def single(self) -> np.ndarray:
        """Per group: it has exactly one record (Java passes such a record through untouched)."""
        return np.asarray(self.sizes == 1, dtype=bool)

    @cached_property
    def row_group(self) -> np.ndarray:
        """Per row: the index of its group."""
        return np.repeat(np.arange(self.count, dtype=np.int64), self.sizes)

    @cached_property
    def row_multi(self) -> np.ndarray:
        """Per row: its group has more than one record (the merge function runs on it)."""
        return np.asarray(~self.single[self.row_group], dtype=bool)

    @cached_property
    def arange(self) -> np.ndarray:
        return np.arange(self.num_rows, dtype=np.int64)

    def last_where(self, mask: np.ndarray) -> np.ndarray:
        """Per group: the last row where ``mask`` holds, or -1."""
        return np.maximum.reduceat(np.where(mask, self.arange, -1), self.starts)

    def first_where(self, mask: np.ndarray) -> np.ndarray:
        """Per group: the first row where ``mask`` holds, or -1."""
        first = np.minimum.reduceat(np.where(mask, self.arange, self.num_rows), self.starts)
        return np.where(first == self.num_rows, -1, first)

    def any(self, mask: np.ndarray) -> np.ndarray:
        """Per group: ``mask`` holds for some row."""
        return np.logical_or.reduceat(mask, self.starts)

    def broadcast(self, per_group: np.ndarray) -> np.ndarray:
        """Per row: the value of its group."""
        return np.asarray(per_group[self.row_group])


class SortedRecords:
    """``records`` seen in merge order without copying them: row ``i`` of the view is row
    ``order[i]`` of ``records``. Values are taken from ``records`` only once, for the result."""

    def __init__(self, records: pa.Table, order: np.ndarray) -> None:
        self.records = records
        self.order = order

    @property
    def schema(self) -> pa.Schema:
        return self.records.schema

    @property
    def column_names(self) -> list[str]:
        return list(self.records.column_names)

    @cached_property
    def kinds(self) -> np.ndarray:
        return np.asarray(self.records.column(VALUE_KIND).to_numpy()[self.order])

    @cached_property
    def sequence_numbers(self) -> np.ndarray:
        return np.asarray(self.records.column(SEQUENCE_NUMBER).to_numpy()[self.order])

    def valid(self, name: str) -> np.ndarray:
        """Per row (merge order): the column's value is not null."""
        col = self.records.column(name)
        if col.null_count == 0:
            return np.ones(self.records.num_rows, dtype=bool)
        return np.asarray(col.is_valid().to_numpy(zero_copy_only=False)[self.order], dtype=bool)

    def column(self, name: str) -> pa.Array:
        """The column, reordered (for aggregates that compute on the values)."""
        return self.records.column(name).combine_chunks().take(pa.array(self.order))

    def original(self, rows: np.ndarray) -> np.ndarray:
        """Rows of ``records`` for rows of the view (-1 stays -1)."""
        return np.where(rows >= 0, self.order[np.maximum(rows, 0)], -1)

    def take(self, rows: np.ndarray) -> pa.Table:
        """Whole records at view rows ``rows`` (all >= 0)."""
        return self.records.take(pa.array(self.order[rows]))

    def take_column(self, name: str, rows: np.ndarray) -> pa.Array:
        """One column at view rows ``rows``; -1 gives null."""
        orig = self.original(rows)
        return self.records.column(name).take(pa.array(orig, mask=orig < 0))
