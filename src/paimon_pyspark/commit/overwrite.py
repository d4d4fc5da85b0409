"""Insert overwrite: which partitions a commit replaces, and the rules around replacing them.

Mirrors the overwrite path of org.apache.paimon.operation.FileStoreCommitImpl
(``overwritePartition``, ``tryUpgrade``) and of CommitScanner.readOverwriteChanges (Java 1.4;
OverwriteChangesProvider on master): on every commit attempt the files to delete are the live
files of the replaced partitions *in the latest snapshot*, so a retry after losing the race for a
snapshot id deletes what is there by then.

Which partitions (``FileStoreCommit.overwrite``):

- a static partition spec (``overwrite({"dt": "2026-06-26"})``, possibly naming only some
  partition keys) replaces every partition it matches, even when the new data is empty; every new
  file must lie inside it. This is what Paimon's Spark writer asks for (it sets
  ``dynamic-partition-overwrite = false`` for a static overwrite); Java's own
  ``BatchWriteBuilder.withOverwrite(spec)`` ignores the spec while that option is true.
- no spec, a partitioned table and ``dynamic-partition-overwrite = true`` (the default): the
  partitions of the new files are replaced, and nothing at all when there are none.
- otherwise the whole table is replaced.

One rule is ours, not Java's. Java replaces whatever the replaced partitions hold when the
overwrite commits, so rows another writer appended there after the overwrite was planned vanish
without an error. Here an overwrite remembers the snapshot it was planned against, and fails with
CommitConflictError, committing nothing, when a commit of another writer changed data in the
replaced partitions since (``concurrent_changes``). Commits elsewhere in the table, and
compactions (which change no rows), do not conflict.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paimon_pyspark.errors import PaimonError, PartitionSpecError
from paimon_pyspark.mergetree.universal import KeyOrder
from paimon_pyspark.spec.binary_row import deserialize_row, deserialize_with_arity, serialize_row
from paimon_pyspark.spec.manifest import ManifestEntry
from paimon_pyspark.types.data_types import (
    AtomicType,
    BinaryType,
    CharType,
    DataType,
    DecimalType,
    TimestampType,
    TimeType,
)

_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "INT": 32, "BIGINT": 64}
_FLOAT_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class Overwrite:
    """What a batch commit replaces, as the write builder recorded it.

    ``static_partition``: partition key -> value (Python values or strings), checked and
    converted to the partition types when the builder is told to overwrite; empty for a dynamic
    or whole-table overwrite. ``base_snapshot_id``: the latest snapshot when the overwrite was
    planned (0 for an empty table), the start of the concurrent-change check; None skips it.
    """

    static_partition: Mapping[str, Any]
    base_snapshot_id: int | None


class PartitionFilter:
    """Which partitions an overwrite replaces: a set of partitions, or a (partial) spec.

    ``spec`` maps the index of a partition field to its canonical value (as BinaryRow decoding
    returns it; None for the null partition). Partitions are compared by their decoded values,
    not their bytes, so files another engine wrote match too; decodings are cached by bytes.
    """

    def __init__(
        self,
        types: Sequence[DataType],
        spec: Mapping[int, Any] | None = None,
        partitions: Iterable[bytes] | None = None,
        description: str = "",
    ) -> None:
        self.types = [t.copy(nullable=True) for t in types]
        self.spec = dict(spec) if spec is not None else None
        self.partitions = (
            frozenset(self._values(p) for p in partitions) if partitions is not None else None
        )
        self.description = description
        self._cache: dict[bytes, bool] = {}

    def _values(self, partition: bytes) -> tuple[Any, ...]:
        return tuple(deserialize_with_arity(partition, self.types))

    def __call__(self, partition: bytes) -> bool:
        hit = self._cache.get(partition)
        if hit is None:
            values = self._values(partition)
            if self.partitions is not None:
                hit = values in self.partitions
            else:
                assert self.spec is not None
                hit = all(values[i] == v for i, v in self.spec.items())
            self._cache[partition] = hit
        return hit


def partition_spec(
    table: str,
    keys: Sequence[str],
    types: Sequence[DataType],
    spec: Mapping[str, Any],
    default_name: str,
) -> dict[int, Any]:
    """``spec`` as (partition field index -> canonical value), or PartitionSpecError.

    A value may be of the partition type's Python kind (int, float, Decimal, str, bytes, date,
    datetime, time, bool) or a string in its SQL text form (``"42"``, ``"2026-06-26"``,
    ``"2026-06-26 10:00:00"``), as Java's partition specs are strings. None, or the
    ``partition.default-name`` string, is the null partition.
    """
    out: dict[int, Any] = {}
    for key, value in spec.items():
        if key not in keys:
            raise PartitionSpecError(
                f"Table '{table}': static partition key '{key}' (value {value!r}) is not a "
                f"partition key; the partition keys are {list(keys)}."
            )
        index = list(keys).index(key)
        t = types[index].copy(nullable=True)
        if value is None or (isinstance(value, str) and value == default_name):
            out[index] = None
            continue
        try:
            converted = _to_python(value, t)
            out[index] = deserialize_row(serialize_row([converted], [t]), [t])[0]
        except (ValueError, TypeError, OverflowError, decimal.InvalidOperation, PaimonError) as e:
            raise PartitionSpecError(
                f"Table '{table}': static partition value {value!r} for key '{key}' does not "
                f"fit the partition type {types[index]}: {e}"
            ) from e
    return out


def _to_python(value: Any, t: DataType) -> Any:
    """``value`` as the Python value BinaryRow encodes for ``t``; raises ValueError/TypeError."""
    text = value.strip() if isinstance(value, str) else None
    if isinstance(t, AtomicType) and t.name in _INT_BITS:
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer | str):
            raise TypeError(f"an integer is needed, got {type(value).__name__}")
        number = int(text) if text is not None else int(value)
        bound = 1 << (_INT_BITS[t.name] - 1)
        if not -bound <= number < bound:
            raise ValueError(f"{number} is out of range [{-bound}, {bound - 1}]")
        return number
    if isinstance(t, AtomicType) and t.name in ("FLOAT", "DOUBLE"):
        if isinstance(value, bool | np.bool_) or not isinstance(
            value, int | float | np.integer | np.floating | str
        ):
            raise TypeError(f"a number is needed, got {type(value).__name__}")
        real = float(text) if text is not None else float(value)
        if t.name == "FLOAT" and math.isfinite(real) and abs(real) > _FLOAT_MAX:
            raise ValueError(f"{real} is out of the range of FLOAT")
        return real
    if isinstance(t, AtomicType) and t.name == "BOOLEAN":
        if isinstance(value, bool | np.bool_):
            return bool(value)
        if text is not None and text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise TypeError("a bool (or 'true' / 'false') is needed")
    if isinstance(t, AtomicType) and t.name == "DATE":
        if isinstance(value, dt.datetime):
            raise TypeError("a date is needed, got a datetime")
        if isinstance(value, dt.date):
            return value
        if text is not None:
            return dt.date.fromisoformat(text)
        raise TypeError(f"a date (or 'YYYY-MM-DD') is needed, got {type(value).__name__}")
    if isinstance(t, DecimalType):
        if isinstance(value, bool | np.bool_):
            raise TypeError("a decimal is needed, got a bool")
        if isinstance(value, float):
            return decimal.Decimal(repr(value))
        if isinstance(value, int | decimal.Decimal):
            return value
        if text is not None:
            return decimal.Decimal(text)
        raise TypeError(f"a decimal is needed, got {type(value).__name__}")
    if isinstance(t, CharType):
        if not isinstance(value, str):
            raise TypeError(f"a str is needed, got {type(value).__name__}")
        if len(value) > t.length:
            raise ValueError(f"{len(value)} characters do not fit length {t.length}")
        return value
    if isinstance(t, BinaryType):
        data = value.encode("utf-8") if isinstance(value, str) else value
        if not isinstance(data, bytes):
            raise TypeError(f"bytes are needed, got {type(value).__name__}")
        if len(data) > t.length:
            raise ValueError(f"{len(data)} bytes do not fit length {t.length}")
        return data
    if isinstance(t, TimestampType):
        if isinstance(value, dt.datetime):
            return value
        if text is not None:
            return dt.datetime.fromisoformat(text)
        raise TypeError(f"a datetime is needed, got {type(value).__name__}")
    if isinstance(t, TimeType):
        if isinstance(value, dt.time):
            return value
        if text is not None:
            return dt.time.fromisoformat(text)
        raise TypeError(f"a time is needed, got {type(value).__name__}")
    raise TypeError(f"type {t} cannot hold a partition value")


def describe_spec(keys: Sequence[str], spec: Mapping[int, Any]) -> str:
    return ", ".join(f"{keys[i]}={v!r}" for i, v in sorted(spec.items()))


def upgrade_for_overwrite(
    entries: list[ManifestEntry], key_types: Sequence[DataType], max_level: int
) -> list[ManifestEntry]:
    """Java's ``tryUpgrade`` (``overwrite-upgrade``): level-0 files of an overwritten bucket go
    straight to the top level when their key ranges do not overlap.

    All of a bucket's old files are deleted by the overwrite, so those files are a valid sorted
    run at ``max_level`` and a reader merges nothing. Any file above level 0, or in a bucket
    below 0 (postpone), leaves every file as it is; a bucket whose ranges overlap stays at 0.
    Ranges compare as Java's key comparator compares them (a NaN bound overlaps its neighbour),
    and the upgraded files keep Java's order.
    """
    if any(e.file.level > 0 or e.bucket < 0 for e in entries):
        return entries
    order = KeyOrder(key_types)
    buckets: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        buckets.setdefault((e.partition, e.bucket), []).append(e)
    out: list[ManifestEntry] = []
    for group in buckets.values():
        ranked, overlap = order.sorted_run_check(
            group, lambda e: e.file.min_key, lambda e: e.file.max_key
        )
        if overlap is not None:
            out += group
        else:
            out += [
                ManifestEntry(
                    e.kind, e.partition, e.bucket, e.total_buckets, e.file.with_level(max_level)
                )
                for e in ranked
            ]
    return out
