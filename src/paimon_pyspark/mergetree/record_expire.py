"""Record-level expiry of primary-key tables: compactions drop records whose time field is
older than ``record-level.expire-time``.

Mirrors org.apache.paimon.io.RecordLevelExpire as Java 1.4.2 uses it, in compaction only (batch
reads return expired records until a compaction has rewritten their file):

- the records a compaction reads from its unit's files are filtered before they are merged
  (``wrap`` of the compaction reader factory): a record is kept while ``now <= time + expire``
  (seconds; a NULL time keeps it), so an older, unexpired record of the same key may win;
- a file whose smallest time (its value stats) is expired is rewritten instead of upgraded to
  a new level (MergeTreeCompactTask.upgrade), and a full compaction of a bucket that is one
  top-level run already rewrites such files (CompactStrategy.pickFullCompaction);
- the time field is an INT (seconds), a BIGINT (seconds, or milliseconds from 10^12 on) or a
  TIMESTAMP / TIMESTAMP WITH LOCAL TIME ZONE (its epoch milliseconds / 1000); its checks run
  when a write or compaction of the table starts, as Java's KeyValueFileStoreWrite makes it.

Not implemented: with deletion vectors (Java's lookup rewriter also reads the levels above
through the filter), refused with UnsupportedOptionError.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.options import RECORD_LEVEL_EXPIRE_TIME, RECORD_LEVEL_TIME_FIELD
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import DataField, TimestampType

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLIS_FROM = 1_000_000_000_000
"""BIGINT values from here on are milliseconds (Java's heuristic)."""


@dataclass(frozen=True)
class RecordLevelExpire:
    store: FileStore
    expire_seconds: int
    field: DataField

    @staticmethod
    def create(store: FileStore) -> RecordLevelExpire | None:
        """The table's expiry, or None without ``record-level.expire-time``; Java's checks."""
        o = store.options
        seconds = o.record_level_expire_seconds
        if seconds is None:
            return None
        name = o.record_level_time_field
        where = f"Table '{store.name}': "
        if name is None:
            raise OptionError(
                f"{where}you should set '{RECORD_LEVEL_TIME_FIELD}' for "
                f"'{RECORD_LEVEL_EXPIRE_TIME}'."
            )
        by_name = {f.name: f for f in store.fields}
        if name not in by_name:
            raise OptionError(
                f"{where}can not find time field '{name}' ('{RECORD_LEVEL_TIME_FIELD}') for "
                "record level expire."
            )
        field = by_name[name]
        if field.type.root not in ("INT", "BIGINT") and not isinstance(field.type, TimestampType):
            raise OptionError(
                f"{where}the record level time field type should be one of INT, BIGINT, or "
                f"TIMESTAMP, but field '{name}' is {field.type}."
            )
        if o.deletion_vectors_enabled:
            raise UnsupportedOptionError(
                f"{where}'{RECORD_LEVEL_EXPIRE_TIME}' with deletion vectors is not supported by "
                f"paimon_pyspark yet; unset one of them, or compact this table with Java Paimon."
            )
        return RecordLevelExpire(store, seconds, field)

    def keep(self, records: pa.Table) -> pa.Table:
        """``records`` without the expired ones (RecordLevelExpire.wrap's filter)."""
        if records.num_rows == 0:
            return records
        now = int(time.time())
        seconds = _seconds(records.column(self.field.name), self.field)
        values = np.asarray(pc.fill_null(seconds, 0).to_numpy(zero_copy_only=False), np.int64)
        live = now <= values + self.expire_seconds
        live |= np.asarray(seconds.is_null().to_numpy(zero_copy_only=False), bool)
        return records if live.all() else records.filter(pa.array(live))

    def is_expire_file(self, f: DataFileMeta) -> bool:
        """Whether the smallest time in ``f`` (its value stats) has expired."""
        low = self._min_value(f)
        if low is None:
            return False
        return int(time.time()) - self.expire_seconds > _scalar_seconds(low, self.field)

    def _min_value(self, f: DataFileMeta) -> Any:
        current = self.store.table_schema
        schema = (
            current if f.schema_id == current.id else self.store.schema_manager.schema(f.schema_id)
        )
        fields = list(schema.fields)
        if f.value_stats_cols is not None:
            by_name = {fd.name: fd for fd in fields}
            fields = [by_name[c] for c in f.value_stats_cols if c in by_name]
        index = next((i for i, fd in enumerate(fields) if fd.id == self.field.id), None)
        if index is None or fields[index].type.root != self.field.type.root:
            return None
        try:
            mins = deserialize_with_arity(
                f.value_stats.min_values, [fd.type.copy(nullable=True) for fd in fields]
            )
        except Exception:
            return None
        return mins[index]


def _seconds(column: pa.ChunkedArray, field: DataField) -> pa.Array:
    """The time field as epoch seconds, as Java's field getter converts it."""
    col = column.combine_chunks()
    t = field.type
    if t.root == "INT":
        return col.cast(pa.int64())
    if t.root == "BIGINT":
        is_millis = pc.greater_equal(col, pa.scalar(_MILLIS_FROM, pa.int64()))
        return pc.if_else(is_millis, pc.divide(col, pa.scalar(1000, pa.int64())), col)
    unit = col.type.unit if pa.types.is_timestamp(col.type) else "us"
    raw = np.asarray(pc.fill_null(col.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), np.int64)
    millis = _to_millis(raw, unit)
    secs = np.where(millis < 0, -((-millis) // 1000), millis // 1000)
    return pa.array(
        secs, pa.int64(), mask=np.asarray(col.is_null().to_numpy(zero_copy_only=False), bool)
    )


def _to_millis(raw: npt.NDArray[np.int64], unit: str) -> npt.NDArray[np.int64]:
    """Epoch milliseconds (Java's Timestamp.getMillisecond: the floor)."""
    if unit == "s":
        return raw * 1000
    if unit == "ms":
        return raw
    return raw // (1000 if unit == "us" else 1_000_000)


def _scalar_seconds(value: Any, field: DataField) -> int:
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        millis = (aware - _EPOCH) // timedelta(milliseconds=1)
        return -((-millis) // 1000) if millis < 0 else millis // 1000
    v = int(value)
    if field.type.root == "BIGINT" and v >= _MILLIS_FROM:
        return v // 1000
    return v
