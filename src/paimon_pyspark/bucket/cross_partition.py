"""Cross-partition upsert (``bucket = -1``, primary key without every partition key).

Mirrors org.apache.paimon.crosspartition.{GlobalIndexAssigner, BucketAssigner,
DeleteExistingProcessor, UseOldExistingProcessor, SkipNewExistingProcessor}: a global index
``primary key -> (partition, bucket)`` is bootstrapped from the table's live keys, then every
incoming row is routed by it:

* a key not in the index gets a bucket in its partition (per partition, buckets below
  ``dynamic-bucket.target-row-num`` keys are filled in ascending order, then a new one opens);
* a key already in the row's partition keeps its bucket;
* a key living in another partition depends on the merge engine: ``deduplicate`` writes a -D
  record of the key into the old (partition, bucket) and inserts the row in the new partition;
  ``partial-update`` and ``aggregation`` write the row into the old partition and bucket (the
  key stays where it is); ``first-row`` drops the row.

Java keeps the index in RocksDB and processes rows one by one; here it is an Arrow table of
keys with numpy arrays of partition ids and buckets, and a batch is processed at once: keys
are matched by dictionary-encoding the index keys together with the batch's keys (FLOAT/DOUBLE
keys as Java's index matches them, ``float_keys.lookup_key``: every NaN one key, -0.0 not
+0.0), and
rows of one key are walked in arrival order with vectorized shifts. Bucket counts follow Java's
BucketAssigner, except that the decrements of a batch are applied before its new placements.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.bucket.dynamic import deal_new_keys
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.spec import float_keys
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.key_value import DELETE, VALUE_KIND
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import DataType

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

DELETE_EXISTING = "deduplicate"
USE_OLD = ("partial-update", "aggregation")
SKIP_NEW = "first-row"


def dense_codes(columns: Sequence[pa.ChunkedArray | pa.Array]) -> I64:
    """One int per row, equal exactly when the rows are equal in every column (nulls equal)."""
    n = len(columns[0])
    code = np.zeros(n, np.int64)
    for col in columns:
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        enc = pc.dictionary_encode(col, null_encoding="encode")
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        code = code * max(len(enc.dictionary), 1) + idx
        code = np.unique(code, return_inverse=True)[1].astype(np.int64).reshape(-1)
    return code


class GlobalIndexAssigner:
    def __init__(
        self,
        key_schema: pa.Schema,
        partition_schema: pa.Schema,
        partition_types: Sequence[DataType],
        merge_engine: str,
        target_row_num: int,
        rowkind_field: str | None = None,
        num_assigners: int = 1,
        assign_id: int = 0,
    ) -> None:
        if merge_engine != DELETE_EXISTING and merge_engine not in (*USE_OLD, SKIP_NEW):
            raise UnsupportedOptionError(f"Unsupported engine for cross partition: {merge_engine}")
        self.key_schema = key_schema
        self.partition_schema = partition_schema
        self.partition_types = list(partition_types)
        self.merge_engine = merge_engine
        self.target = target_row_num
        self.rowkind_field = rowkind_field
        self.num_assigners = num_assigners
        self.assign_id = assign_id
        self._key_chunks: list[pa.Table] = []
        self._keys: pa.Table | None = None
        self._loc_part = np.zeros(0, np.int32)
        self._loc_bucket = np.zeros(0, np.int32)
        self._part_ids: dict[bytes, int] = {}
        self._part_values: list[list[Any]] = []
        self._part_table: pa.Table | None = None
        self._counts: list[dict[int, int]] = []

    # --- partitions ----------------------------------------------------------------------------

    def partition_id(self, partition: bytes, values: Sequence[Any]) -> int:
        pid = self._part_ids.get(partition)
        if pid is None:
            pid = len(self._part_values)
            self._part_ids[partition] = pid
            self._part_values.append(list(values))
            self._counts.append({})
            self._part_table = None
        return pid

    def _partition_values(self, pids: I32) -> list[pa.Array]:
        if self._part_table is None:
            rows = [
                dict(zip(self.partition_schema.names, v, strict=True)) for v in self._part_values
            ]
            self._part_table = pa.Table.from_pylist(rows, schema=self.partition_schema)
        ids = pa.array(pids, pa.int32())
        return [c.combine_chunks().take(ids) for c in self._part_table.columns]

    def partition_ids(self, data: pa.Table) -> I32:
        """The partition id of every row of ``data`` (new partitions registered)."""
        names = self.partition_schema.names
        codes = dense_codes([data.column(k) for k in names])
        uniq, first = np.unique(codes, return_index=True)
        lookup = np.empty(len(uniq), np.int32)
        for i, row in enumerate(first.tolist()):
            values = [data.column(k)[row].as_py() for k in names]
            lookup[i] = self.partition_id(
                serialize_with_arity(values, self.partition_types), values
            )
        return lookup[np.searchsorted(uniq, codes)]

    # --- bootstrap -----------------------------------------------------------------------------

    def bootstrap(
        self, keys: pa.Table, partition: bytes, values: Sequence[Any], bucket: int
    ) -> None:
        """Add the live keys of one (partition, bucket) of the table (IndexBootstrap)."""
        if keys.num_rows == 0:
            return
        pid = self.partition_id(partition, values)
        self._append(keys.select(self.key_schema.names).cast(self.key_schema), pid, bucket)
        counts = self._counts[pid]
        counts[bucket] = counts.get(bucket, 0) + keys.num_rows

    def bootstrap_rows(self, rows: pa.Table, buckets: I32) -> None:
        """Add live keys of many (partition, bucket)s at once: ``rows`` holds the key and
        partition columns (table types), ``buckets`` the bucket of each row."""
        if rows.num_rows == 0:
            return
        pids = self.partition_ids(rows)
        buckets = np.asarray(buckets, np.int32)
        self._append(rows.select(self.key_schema.names).cast(self.key_schema), pids, buckets)
        pairs, sizes = np.unique(
            pids.astype(np.int64) << 32 | buckets.astype(np.int64), return_counts=True
        )
        for pair, size in zip(pairs.tolist(), sizes.tolist(), strict=True):
            counts = self._counts[pair >> 32]
            bucket = int(np.int32(pair & 0xFFFFFFFF))
            counts[bucket] = counts.get(bucket, 0) + size

    def _append(self, keys: pa.Table, part: I32 | int, bucket: I32 | int) -> None:
        n = keys.num_rows
        self._key_chunks.append(keys)
        self._keys = None
        self._loc_part = np.concatenate([self._loc_part, np.broadcast_to(part, n)]).astype(np.int32)
        self._loc_bucket = np.concatenate([self._loc_bucket, np.broadcast_to(bucket, n)]).astype(
            np.int32
        )

    def _index_keys(self) -> pa.Table:
        if self._keys is None:
            if self._key_chunks:
                self._keys = pa.concat_tables(self._key_chunks).combine_chunks()
            else:
                self._keys = self.key_schema.empty_table()
            self._key_chunks = [self._keys]
        return self._keys

    def is_mine(self, bucket: int) -> bool:
        return abs(bucket % self.num_assigners) == self.assign_id

    # --- processing ----------------------------------------------------------------------------

    def process(self, data: pa.Table) -> tuple[pa.Table, I32]:
        """Route a batch (table columns + ``_VALUE_KIND``): the rows to write and their buckets.

        The result may hold -D records for keys that moved partition (deduplicate), rows moved
        back into the key's partition (partial-update, aggregation) or fewer rows (first-row).
        """
        n = data.num_rows
        if n == 0:
            return data, np.zeros(0, np.int32)
        part = self.partition_ids(data)
        index_keys = self._index_keys()
        m = index_keys.num_rows
        batch_keys = data.select(self.key_schema.names).cast(self.key_schema)
        both = pa.concat_tables([index_keys, batch_keys])
        ids = dense_codes([float_keys.lookup_key(c) for c in both.columns])
        pos_of = np.full(int(ids.max()) + 1, -1, np.int64)
        pos_of[ids[:m]] = np.arange(m)
        order = np.argsort(ids[m:], kind="stable")  # by key, then arrival
        k = ids[m:][order]
        p = part[order]
        first = np.ones(n, bool)
        first[1:] = k[1:] != k[:-1]
        ipos = pos_of[k]
        has = ipos >= 0
        safe = np.where(has, ipos, 0)
        idx_part = np.where(has, self._loc_part[safe] if m else -1, -1).astype(np.int32)
        idx_bucket = np.where(has, self._loc_bucket[safe] if m else -1, -1).astype(np.int32)
        group = np.cumsum(first) - 1
        if self.merge_engine == DELETE_EXISTING:
            out, buckets, final_part, final_bucket = self._delete_existing(
                data, order, p, first, idx_part, idx_bucket
            )
        else:
            out, buckets, final_part, final_bucket = self._keep_old(
                data, order, p, first, group, idx_part, idx_bucket
            )
        # the index: existing keys move, new keys are added
        firsts = np.flatnonzero(first)
        known = has[firsts]
        self._loc_part[ipos[firsts][known]] = final_part[known]
        self._loc_bucket[ipos[firsts][known]] = final_bucket[known]
        if (~known).any():
            new_rows = order[firsts[~known]]
            self._append(
                batch_keys.take(pa.array(new_rows)),
                final_part[~known],
                final_bucket[~known],
            )
        return out, buckets

    def _new_buckets(self, parts: I32) -> I32:
        """Buckets for keys placed anew, in order, ``parts`` their partition ids."""
        out = np.empty(len(parts), np.int32)
        for pid in np.unique(parts).tolist():
            sel = parts == pid
            got, _ = deal_new_keys(int(sel.sum()), self._counts[pid], self.target, self.is_mine, -1)
            out[sel] = got
        return out

    def _decrement(self, parts: I32, buckets: I32) -> None:
        for pid, b in zip(parts.tolist(), buckets.tolist(), strict=True):
            counts = self._counts[pid]
            counts[b] = counts.get(b, 0) - 1

    def _delete_existing(
        self,
        data: pa.Table,
        order: I64,
        p: I32,
        first: Bools,
        idx_part: I32,
        idx_bucket: I32,
    ) -> tuple[pa.Table, I32, I32, I32]:
        n = len(p)
        prev_part = np.empty(n, np.int32)
        prev_part[0] = idx_part[0]
        prev_part[1:] = np.where(first[1:], idx_part[1:], p[:-1])
        run_start = first | (prev_part != p)
        reuse = run_start & first & (idx_part == p)
        needs_new = run_start & ~reuse
        moves = run_start & (prev_part >= 0) & (prev_part != p)
        from_index = moves & first
        self._decrement(idx_part[from_index], idx_bucket[from_index])
        bucket = np.full(n, -1, np.int32)
        bucket[reuse] = idx_bucket[reuse]
        new_pos = np.flatnonzero(needs_new)
        by_arrival = new_pos[np.argsort(order[new_pos], kind="stable")]
        bucket[by_arrival] = self._new_buckets(p[by_arrival])
        run = np.cumsum(run_start) - 1
        bucket = bucket[run_start][run]
        prev_bucket = np.empty(n, np.int32)
        prev_bucket[0] = idx_bucket[0]
        prev_bucket[1:] = np.where(first[1:], idx_bucket[1:], bucket[:-1])
        inner = moves & ~first
        self._decrement(prev_part[inner], prev_bucket[inner])
        # rows keep their partition; -D records go just before the row that moved the key
        row_bucket = np.empty(n, np.int32)
        row_bucket[order] = bucket
        mv = np.flatnonzero(moves)
        arrivals = order[mv]
        retract = data.take(pa.array(arrivals))
        retract = self._set_partition(retract, prev_part[mv])
        retract = self._as_delete(retract)
        out = pa.concat_tables([data, retract])
        buckets = np.concatenate([row_bucket, prev_bucket[mv]])
        rank = np.concatenate([2 * np.arange(n) + 1, 2 * arrivals])
        sort = np.argsort(rank, kind="stable")
        last = np.ones(n, bool)
        last[:-1] = first[1:]
        return (
            out.take(pa.array(sort)),
            buckets[sort],
            p[last].astype(np.int32),
            bucket[last].astype(np.int32),
        )

    def _keep_old(
        self,
        data: pa.Table,
        order: I64,
        p: I32,
        first: Bools,
        group: I64,
        idx_part: I32,
        idx_bucket: I32,
    ) -> tuple[pa.Table, I32, I32, I32]:
        firsts = np.flatnonzero(first)
        known = idx_part[firsts] >= 0
        loc_part = np.where(known, idx_part[firsts], p[firsts]).astype(np.int32)
        loc_bucket = idx_bucket[firsts].copy()
        fresh = firsts[~known]
        by_arrival = np.argsort(order[fresh], kind="stable")
        got = np.empty(len(fresh), np.int32)
        got[by_arrival] = self._new_buckets(p[fresh][by_arrival])
        loc_bucket[~known] = got
        n = len(p)
        row_part = np.empty(n, np.int32)
        row_bucket = np.empty(n, np.int32)
        row_part[order] = loc_part[group]
        row_bucket[order] = loc_bucket[group]
        if self.merge_engine == SKIP_NEW:
            own = np.empty(n, np.int32)
            own[order] = p
            keep = own == row_part
            if not keep.all():
                data = data.filter(pa.array(keep))
                row_bucket = row_bucket[keep]
            return data, row_bucket, loc_part, loc_bucket
        return self._set_partition(data, row_part), row_bucket, loc_part, loc_bucket

    def _set_partition(self, data: pa.Table, pids: I32) -> pa.Table:
        for name, values in zip(
            self.partition_schema.names, self._partition_values(pids), strict=True
        ):
            i = data.schema.get_field_index(name)
            data = data.set_column(i, data.schema.field(i), values.cast(data.schema.field(i).type))
        return data

    def _as_delete(self, data: pa.Table) -> pa.Table:
        n = data.num_rows
        i = data.schema.get_field_index(VALUE_KIND)
        kinds = pa.array(np.full(n, DELETE, np.int8))
        data = data.set_column(i, data.schema.field(i), kinds)
        if self.rowkind_field is not None:
            j = data.schema.get_field_index(self.rowkind_field)
            field = data.schema.field(j)
            data = data.set_column(j, field, pa.repeat(pa.scalar("-D", field.type), n))
        return data


KeyIndexBootstrap = Callable[[FileStore, "Snapshot | None"], GlobalIndexAssigner]
"""Builds the key index of a snapshot (Java's IndexBootstrap). Reading the table's keys is a
read, which sits above the writers, so the facade hands it in (read/bootstrap.py)."""


def new_global_assigner(
    store: FileStore, num_assigners: int = 1, assign_id: int = 0
) -> GlobalIndexAssigner:
    """An empty GlobalIndexAssigner for ``store`` (raises for a merge engine it cannot serve)."""
    schema = store.arrow_schema
    keys = store.table_schema.trimmed_primary_keys()
    o = store.options
    return GlobalIndexAssigner(
        pa.schema([schema.field(k) for k in keys]),
        pa.schema([schema.field(k) for k in store.partition_keys]),
        store.partition_types,
        o.merge_engine,
        o.dynamic_bucket_target_row_num,
        o.rowkind_field,
        num_assigners,
        assign_id,
    )
