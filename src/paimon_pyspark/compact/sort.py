"""Sort compaction of bucket-unaware append tables: ``order``, ``zorder`` and ``hilbert``.

Mirrors the sort branch of Spark's CompactProcedure (``sortCompactUnAwareBucketTable``) with its
TableSorters (OrderSorter, ZorderSorter, HilbertSorter; SparkZOrderUDF and SparkHilbertUDF with
paimon-common's ZOrderByteUtils and HilbertIndexer): every live file of a kept partition is
read, the rows are range-partitioned and sorted by the order columns (``order``) or by a key
computed from them (``zorder``: the columns' order-preserving bytes with their bits
interleaved; ``hilbert``: the position on a Hilbert curve through the columns' 64-bit
coordinates), and written back rolling at ``target-file-size``, so each new file covers one
narrow range of the sort and value-stats pruning can skip the others. Java writes the result
as a dynamic-partition OVERWRITE; here the partition's files are replaced by the sorted ones
in one COMPACT snapshot, whose conflict check also fails if a concurrent writer removed an
input. Nulls sort first, as Spark's ascending sort puts them.

Memory: one task per partition reads the files one at a time. While the rows read stay within
``write-buffer-size`` Arrow bytes they are sorted in memory. Beyond that they spill to local
disk (mergetree/spill.py, compressed with ``spill-compression``), a sample of the keys gives
range bounds, each row goes to its range's file, and the ranges, each about half the budget,
are sorted and written in turn. Either way the peak is about twice the budget (rows and their
sorted copy) plus the data file being read (TableRead reads a whole file at once), whatever the
partition's size. Rows with one key are never split, so a partition dominated by one key can
make one range larger than the budget.

The z-order bytes are Java's (ZOrderByteUtils, with Java's quirk for floating point, 8 bytes a
column, ``zorder.var-length-contribution`` for strings and binaries), with two differences: a
string is cut at a byte where Java's encoder stops before a character that does not fit, and
a DATE counts days where Spark's cast to long gives null. The Hilbert curve is the
same curve, computed with Skilling's transform over order-preserving 64-bit coordinates (signed
values with the sign bit flipped, nulls last); Java feeds signed longs to a 63-bit curve, so
its keys differ bit for bit while the locality the sort is for is the same.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.compact.plan import (
    APPEND,
    CompactPlan,
    CompactTask,
    PartitionFilter,
    kept_entries,
)
from paimon_pyspark.errors import CompactArgumentError, UnsupportedOptionError
from paimon_pyspark.io.data_file import DataFileSettings
from paimon_pyspark.mergetree.spill import SpillSettings, SpillWriter
from paimon_pyspark.options import parse_java_int
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.bucket_mode import BucketMode
from paimon_pyspark.store.latest_plan import plan_latest
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.arrow import one_array
from paimon_pyspark.types.data_types import (
    AtomicType,
    BinaryType,
    CharType,
    DataType,
    DecimalType,
    TimestampType,
)
from paimon_pyspark.write.append_writer import AppendWriter

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

ORDER = "order"
ZORDER = "zorder"
HILBERT = "hilbert"
NONE = "none"
STRATEGIES = (ORDER, ZORDER, HILBERT)

ZORDER_VAR_LENGTH_CONTRIBUTION = "zorder.var-length-contribution"
"""Bytes a CHAR/VARCHAR/BINARY/VARBINARY column gives the z-order key (Java's default 8)."""

SORT_KEY = "_SORT_KEY"
_TAG = "_SORT_RANGE_TAG"
_SAMPLE_ROWS = 20_000
"""Keys sampled from a spilled partition to choose its range bounds."""
_KEY_CHUNK_ROWS = 65_536
"""Rows whose z-order or Hilbert key is computed at once (the bit matrix is 8 bytes a bit)."""
_SIGN = np.uint64(1 << 63)
_ALL_ONES = np.uint64(2**64 - 1)
_JAVA_NAN_BITS = np.int64(0x7FF8000000000000)

_INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_FLOATS = ("FLOAT", "DOUBLE")


@dataclass(frozen=True)
class SortOrder:
    """``order_strategy`` and ``order_by`` of ``CALL sys.compact``: how and by what to sort."""

    strategy: str
    columns: tuple[str, ...]


def parse_sort_order(strategy: str, columns: Sequence[str]) -> SortOrder:
    """Java's OrderType.of (any case) and TableSorter.checkNotEmpty."""
    s = strategy.strip().lower()
    if s not in STRATEGIES:
        raise CompactArgumentError(f"cannot match type: {strategy} for ordering")
    cols = tuple(c.strip() for c in columns)
    if not cols or any(not c for c in cols):
        raise CompactArgumentError("order column could not be empty")
    return SortOrder(s, cols)


def check_sortable(table: FileStore, order: SortOrder) -> None:
    """Java's refusals, in its order: partition columns in ``order_by`` (CompactProcedure),
    a table that is not a bucket-unaware append table, an unknown column (TableSorter), a
    column type the z-order or Hilbert UDF cannot map."""
    keys = table.partition_keys
    if any(c in keys for c in order.columns):
        raise CompactArgumentError(
            f"Table '{table.name}': order_by should not contain partition cols, because it is "
            f"meaningless, your order_by cols are {_java_list(order.columns)}, and partition "
            f"cols are {_java_list(keys)}"
        )
    if table.primary_keys or table.bucket_mode != BucketMode.BUCKET_UNAWARE:
        raise CompactArgumentError(
            f"Table '{table.name}': Spark compact with sort_type {order.strategy} only support "
            "unaware-bucket append-only table yet."
        )
    types = {f.name: f.type for f in table.fields}
    for c in order.columns:
        if c not in types:
            raise CompactArgumentError(
                f"Table '{table.name}': Can't find column {c} in table columns. Possible "
                f"columns are [{','.join(types)}]"
            )
        if not _sortable(types[c], order.strategy):
            curve = "ZOrdering" if order.strategy == ZORDER else "Hilbert"
            if order.strategy == ORDER:
                curve = "an order sort"
            raise CompactArgumentError(
                f"Table '{table.name}': Cannot use column {c} of type {types[c]} in {curve}, "
                "the type is unsupported"
            )
    var_length_contribution(table)


def _java_list(items: Sequence[str]) -> str:
    return f"[{', '.join(items)}]"


def _sortable(t: DataType, strategy: str) -> bool:
    if isinstance(t, CharType | BinaryType | TimestampType):
        return True
    if isinstance(t, DecimalType):
        return strategy != ZORDER  # SparkZOrderUDF has no decimal; the Hilbert UDF casts it
    if isinstance(t, AtomicType):
        return t.name in (*_INTEGERS, *_FLOATS, "BOOLEAN", "DATE")
    return strategy == ORDER and t.root == "TIME"


def var_length_contribution(table: FileStore) -> int:
    raw = table.options.get(ZORDER_VAR_LENGTH_CONTRIBUTION)
    if raw is None:
        return 8
    n = parse_java_int(raw, ZORDER_VAR_LENGTH_CONTRIBUTION, table.name)
    if n < 1:
        raise CompactArgumentError(
            f"Table '{table.name}': option '{ZORDER_VAR_LENGTH_CONTRIBUTION}' = '{raw}' must be "
            "at least 1."
        )
    return n


# --- planning -------------------------------------------------------------------------------


def plan_sort(table: FileStore, keep_partition: PartitionFilter | None) -> CompactPlan:
    """One task per kept partition holding every live file of it, as Java's ``packForSort``
    makes each partition one sort group; sorting never skips a partition for being sorted.
    Planned on the latest snapshot, again on the newest if it expires meanwhile. Tables with
    deletion vectors are refused: the sort would neither apply nor drop them."""
    if table.options.deletion_vectors_enabled:
        raise UnsupportedOptionError(
            f"Table '{table.name}': sort compaction of a table with 'deletion-vectors.enabled' "
            "= 'true' is not supported by paimon_pyspark yet; compact it without "
            "order_strategy."
        )
    return plan_latest(table, lambda s: _plan_sort(table, s, keep_partition))


def _plan_sort(
    table: FileStore, snapshot: Snapshot | None, keep_partition: PartitionFilter | None
) -> CompactPlan:
    if snapshot is None:
        return CompactPlan(None, (), 0)
    groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    totals: dict[tuple[bytes, int], int] = {}
    values_of: dict[bytes, tuple[Any, ...]] = {}
    for e, values in kept_entries(table, snapshot, keep_partition):
        if e.bucket < 0:
            continue
        values_of[e.partition] = values
        groups.setdefault((e.partition, e.bucket), []).append(e.file)
        totals[(e.partition, e.bucket)] = e.total_buckets
    tasks = tuple(
        CompactTask(
            APPEND,
            partition,
            values_of[partition],
            bucket,
            totals[(partition, bucket)],
            tuple(sorted(files, key=lambda f: (f.min_sequence_number, f.file_name))),
            True,
        )
        for (partition, bucket), files in sorted(groups.items())
    )
    return CompactPlan(snapshot.id, tasks, len(groups))


# --- sort keys ------------------------------------------------------------------------------


class SortKeys:
    """The columns rows are sorted by: the order columns (``order``), or ``_SORT_KEY``, a
    binary key computed from them and appended to the rows until they are written."""

    def __init__(self, types: Mapping[str, DataType], order: SortOrder, var_size: int = 8) -> None:
        self.order = order
        self.types = dict(types)
        self.var_size = var_size
        names = order.columns if order.strategy == ORDER else (SORT_KEY,)
        self.names = list(names)
        self.sort_keys = [(n, "ascending", "at_start") for n in names]

    @staticmethod
    def of(table: FileStore, order: SortOrder) -> SortKeys:
        types = {f.name: f.type for f in table.fields}
        return SortKeys(types, order, var_length_contribution(table))

    def with_key(self, rows: pa.Table) -> pa.Table:
        if self.order.strategy == ORDER:
            return rows
        pieces = [
            self._key(rows.slice(start, _KEY_CHUNK_ROWS))
            for start in range(0, rows.num_rows, _KEY_CHUNK_ROWS)
        ]
        key = pa.chunked_array(pieces, type=pa.large_binary())
        return rows.append_column(SORT_KEY, key)

    def _key(self, rows: pa.Table) -> pa.Array:
        columns = [one_array(rows.column(c)) for c in self.order.columns]
        types = [self.types[c] for c in self.order.columns]
        if self.order.strategy == ZORDER:
            parts = [zorder_bytes(a, t, self.var_size) for a, t in zip(columns, types, strict=True)]
            return _binary_column(interleave_bits(parts))
        coords = [hilbert_coordinate(a, t) for a, t in zip(columns, types, strict=True)]
        return _binary_column(hilbert_index(coords))

    def strip(self, rows: pa.Table) -> pa.Table:
        return rows.drop_columns([SORT_KEY]) if SORT_KEY in rows.column_names else rows

    def keys_of(self, rows: pa.Table) -> pa.Table:
        return rows.select(self.names)

    def sort(self, rows: pa.Table) -> pa.Table:
        idx = pc.sort_indices(rows, sort_keys=self.sort_keys)
        return rows.take(idx)

    def ranges(self, keys: pa.Table, bounds: pa.Table) -> np.ndarray:
        """Each row's range: how many bounds sort at or before it. The bounds and the rows are
        sorted together, so a range is exactly what ``sort`` puts between two bounds."""
        b = bounds.num_rows
        tagged = pa.concat_tables(
            [
                bounds.append_column(_TAG, pa.array(np.zeros(b, np.int8))),
                keys.append_column(_TAG, pa.array(np.ones(keys.num_rows, np.int8))),
            ]
        )
        sort_keys = [*self.sort_keys, (_TAG, "ascending", "at_start")]
        order = pc.sort_indices(tagged, sort_keys=sort_keys).to_numpy()
        is_bound = order < b
        seen = np.cumsum(is_bound)
        out = np.empty(keys.num_rows, np.int64)
        rows_at = ~is_bound
        out[order[rows_at] - b] = seen[rows_at]
        return out


def _binary_column(matrix: np.ndarray) -> pa.Array:
    n, width = matrix.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int64)
    data = np.ascontiguousarray(matrix, dtype=np.uint8)
    return pa.Array.from_buffers(
        pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def _valid(a: pa.Array) -> np.ndarray:
    if a.null_count == 0:
        return np.ones(len(a), dtype=bool)
    return np.asarray(a.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _int64(a: pa.Array, t: DataType) -> np.ndarray:
    """Integers, days (DATE), seconds (TIMESTAMP, as Spark casts it) or the integral part of
    a decimal, as int64 with nulls as 0."""
    if isinstance(t, TimestampType):
        unit = a.type.unit
        per_second = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
        raw = a.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        return np.asarray(raw, np.int64) // per_second
    if isinstance(t, DecimalType):
        a = pc.cast(a, pa.int64(), safe=False)
    elif t.root == "DATE":
        a = a.cast(pa.int32())
    return np.asarray(a.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), np.int64)


def _double_bits(a: pa.Array) -> np.ndarray:
    """Java's Double.doubleToLongBits of each value widened to double (one NaN), nulls 0."""
    d = np.asarray(a.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False), np.float64)
    bits = d.view(np.int64).copy()
    bits[np.isnan(d)] = _JAVA_NAN_BITS
    return bits


def _prefix_bytes(a: pa.Array, width: int) -> np.ndarray:
    """The first ``width`` bytes of each string or binary, zero-filled (ZOrderByteUtils'
    byteTruncateOrFill; nulls all zero)."""
    n = len(a)
    out = np.zeros((n, width), np.uint8)
    if n == 0:
        return out
    valid = _valid(a)
    if pa.types.is_fixed_size_binary(a.type):
        size = a.type.byte_width
        data = np.frombuffer(a.buffers()[1], np.uint8)[a.offset * size : (a.offset + n) * size]
        keep = min(size, width)
        out[:, :keep] = data.reshape(n, size)[:, :keep]
        out[~valid] = 0
        return out
    large = pa.types.is_large_string(a.type) or pa.types.is_large_binary(a.type)
    b = a.cast(pa.large_binary() if large else pa.binary())
    buffers = b.buffers()
    raw = np.frombuffer(buffers[1], np.int64 if large else np.int32)
    offsets: np.ndarray[Any, np.dtype[np.int64]] = raw[b.offset : b.offset + n + 1].astype(np.int64)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1]
    lengths: np.ndarray[Any, np.dtype[np.int64]] = np.where(
        valid, np.minimum(offsets[1:] - starts, width), 0
    ).astype(np.int64)
    total = int(lengths.sum())
    rows = np.repeat(np.arange(n), lengths)
    cols = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[rows, cols] = data[np.repeat(starts, lengths) + cols]
    return out


def _be_bytes(words: np.ndarray) -> np.ndarray:
    """uint64 words as big-endian bytes, one row of 8 per word."""
    return words.astype(">u8").view(np.uint8).reshape(len(words), 8)


def zorder_bytes(a: pa.Array, t: DataType, var_size: int) -> np.ndarray:
    """One column's z-order bytes, as SparkZOrderUDF maps it: 8 bytes for numbers, booleans,
    dates and timestamps, ``var_size`` for strings and binaries; a null is all zero."""
    if isinstance(t, CharType | BinaryType):
        return _prefix_bytes(a, var_size)
    valid = _valid(a)
    if t.root == "BOOLEAN":
        out = np.zeros((len(a), 8), np.uint8)
        values = np.asarray(a.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
        out[:, 0] = np.where(values & valid, 0x81, 0)
        return out
    if isinstance(t, AtomicType) and t.name in _FLOATS:
        bits = _double_bits(a)
        # ZOrderByteUtils.doubleToOrderedBytes: lval ^= ((lval >> (Integer.SIZE - 1)) | MIN)
        words = (bits ^ ((bits >> 31) | np.int64(-(2**63)))).view(np.uint64)
    else:
        words = _int64(a, t).view(np.uint64) ^ _SIGN
    words = np.where(valid, words, np.uint64(0))
    return _be_bytes(words)


def interleave_bits(columns: Sequence[np.ndarray]) -> np.ndarray:
    """ZOrderByteUtils.interleaveBits for every row at once: one bit of each column in turn,
    most significant first, a column leaving the round once its bytes are used up."""
    lengths = [c.shape[1] for c in columns]
    n = len(columns)
    if n <= 8 and len(set(lengths)) == 1:
        # equal widths: byte k of the output's k-th group of n bytes interleaves byte k of
        # every column; spread each column's bytes n bits apart through a table, and OR them
        spread = _spread_table(n)
        acc = np.zeros(columns[0].shape, np.uint64)
        for c, col in enumerate(columns):
            acc |= spread[col] << np.uint64(n - 1 - c)
        grouped = acc.astype(">u8").view(np.uint8).reshape(len(acc), lengths[0], 8)
        return np.ascontiguousarray(grouped[:, :, 8 - n :]).reshape(len(acc), lengths[0] * n)
    bits = np.unpackbits(np.concatenate(columns, axis=1), axis=1)
    starts = np.cumsum([0, *lengths[:-1]]) * 8
    order = [
        int(starts[c]) + j
        for j in range(8 * max(lengths))
        for c in range(len(columns))
        if j < 8 * lengths[c]
    ]
    return np.packbits(bits[:, order], axis=1)


@functools.cache
def _spread_table(n: int) -> np.ndarray:
    """Each byte value with its bit i moved to bit ``i * n``."""
    values = np.arange(256, dtype=np.uint64)
    out = np.zeros(256, np.uint64)
    for i in range(8):
        out |= ((values >> np.uint64(i)) & np.uint64(1)) << np.uint64(i * n)
    return out


def hilbert_coordinate(a: pa.Array, t: DataType) -> np.ndarray:
    """One column's coordinate on the curve: an order-preserving uint64, nulls last (Java's
    SparkHilbertUDF maps nulls to Long.MAX_VALUE)."""
    valid = _valid(a)
    if isinstance(t, CharType | BinaryType):
        words = _prefix_bytes(a, 8).view(">u8").reshape(len(a)).astype(np.uint64)
    elif isinstance(t, AtomicType) and t.name in _FLOATS:
        bits = _double_bits(a)
        # IEEE order: flip every bit of a negative value, only the sign bit of a positive one
        words = np.where(bits < 0, ~bits.view(np.uint64), bits.view(np.uint64) ^ _SIGN)
    elif t.root == "BOOLEAN":
        values = np.asarray(a.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
        words = np.where(values, _ALL_ONES, np.uint64(0))
    else:
        words = _int64(a, t).view(np.uint64) ^ _SIGN
    return np.where(valid, words, _ALL_ONES)


def hilbert_index(coords: Sequence[np.ndarray]) -> np.ndarray:
    """Each row's position on the Hilbert curve through ``coords`` (64 bits each), as big-endian
    bytes: Skilling's AxesToTranspose, then the transposed bits interleaved."""
    x = [c.astype(np.uint64, copy=True) for c in coords]
    if len(x) > 1:
        n = len(x)
        zero = np.uint64(0)
        q = np.uint64(1 << 63)
        while q > 1:
            p = q - np.uint64(1)
            for i in range(n):
                hit = (x[i] & q) != 0
                t = np.where(hit, zero, (x[0] ^ x[i]) & p)
                x[0] = x[0] ^ np.where(hit, p, t)
                if i:
                    x[i] = x[i] ^ t
            q >>= np.uint64(1)
        for i in range(1, n):
            x[i] = x[i] ^ x[i - 1]
        t = np.zeros_like(x[0])
        q = np.uint64(1 << 63)
        while q > 1:
            t = np.where((x[n - 1] & q) != 0, t ^ (q - np.uint64(1)), t)
            q >>= np.uint64(1)
        x = [xi ^ t for xi in x]
    return interleave_bits([_be_bytes(xi) for xi in x])


# --- running --------------------------------------------------------------------------------


def sort_partition(
    table: FileStore, task: CompactTask, order: SortOrder, budget: int | None = None
) -> CommitMessage | None:
    """Sort one partition's files into new ones; the message replaces them (compact_before)
    by the sorted files (compact_after). ``budget``: Arrow bytes sorted in memory at once
    (``write-buffer-size`` by default)."""
    if not task.files:
        return None
    limit = table.options.write_buffer_size if budget is None else budget
    keys = SortKeys.of(table, order)
    rel = table.partition_rel_path(list(task.partition_values))
    path_factory = PathFactory(table.path)
    bucket_path = path_factory.bucket_path(rel, task.bucket)
    settings = DataFileSettings.of(table, primary_key=False)
    split = DataSplit(
        0, task.partition, tuple(task.partition_values), task.bucket, bucket_path, task.files
    )
    read = TableRead(table, None, None, None)
    writer = AppendWriter(settings, bucket_path, path_factory, task.files[0].min_sequence_number)
    try:
        with tempfile.TemporaryDirectory(prefix="paimon-sort-") as spill_dir:
            spill = SpillSettings.of(table.options)
            for sorted_rows in _sorted_ranges(read, split, keys, limit, spill, spill_dir):
                for batch in keys.strip(sorted_rows).to_batches():
                    writer.write(pa.Table.from_batches([batch]))
                    if writer.buffered_bytes >= writer.flush_threshold:
                        writer.flush()
        written = writer.prepare_commit()
    except BaseException:
        writer.abort()
        raise
    after = [dataclasses.replace(f, file_source=FILE_SOURCE_COMPACT) for f in written]
    return task.message(task.files, after)


def _sorted_ranges(
    read: TableRead,
    split: DataSplit,
    keys: SortKeys,
    limit: int,
    settings: SpillSettings,
    spill_dir: str,
) -> Iterator[pa.Table]:
    """The partition's rows, with their keys, in sorted pieces that follow each other."""
    held: list[pa.Table] = []
    held_bytes = 0
    total_rows = max(1, split.row_count)
    rate = min(1.0, _SAMPLE_ROWS / total_rows)
    rng = np.random.default_rng(0)
    sample: list[pa.Table] = []
    spill: SpillWriter | None = None
    for batch in read.to_arrow_batch_reader([split]):
        rows = keys.with_key(pa.Table.from_batches([batch]))
        if rows.num_rows == 0:
            continue
        picked = rng.random(rows.num_rows) < rate
        sample.append(keys.keys_of(rows).filter(pa.array(picked)))
        if spill is None:
            held.append(rows)
            held_bytes += rows.nbytes
            if held_bytes > limit:
                spill = SpillWriter(settings, spill_dir)
                for t in held:
                    spill.write(t)
                held = []
        else:
            spill.write(rows)
    if spill is None:
        if held:
            yield keys.sort(pa.concat_tables(held))
        return
    unsorted = spill.finish()
    ranges = max(2, math.ceil(2 * spill.nbytes / limit))
    bounds = _bounds(keys, pa.concat_tables(sample), ranges)
    parts = [SpillWriter(settings, spill_dir) for _ in range(len(bounds) + 1)]
    for rows in unsorted.batches():
        which = keys.ranges(keys.keys_of(rows), bounds)
        order = np.argsort(which, kind="stable")
        counts = np.bincount(which, minlength=len(parts))
        grouped = rows.take(pa.array(order))
        start = 0
        for part, count in zip(parts, counts, strict=True):
            if count:
                part.write(grouped.slice(start, int(count)))
            start += int(count)
    unsorted.delete()
    for part in parts:
        done = part.finish()
        if part.rows:
            yield keys.sort(pa.concat_tables(list(done.batches())))
        done.delete()


def _bounds(keys: SortKeys, sample: pa.Table, ranges: int) -> pa.Table:
    """``ranges - 1`` keys that cut the sorted sample into equal parts (fewer for a small
    sample: a range is never empty of sample keys)."""
    ordered = keys.sort(sample)
    n = ordered.num_rows
    cuts = sorted({n * i // ranges for i in range(1, ranges)} - {0, n})
    return ordered.take(pa.array(cuts, pa.int64())) if cuts else ordered.slice(0, 0)
