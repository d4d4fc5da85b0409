"""Writing a postpone-bucket table (``bucket = -2``): the postpone writer and the routing.

Mirrors org.apache.paimon.postpone.{PostponeBucketFileStoreWrite, PostponeBucketWriter} and,
for ``postpone.batch-write-fixed-bucket``, org.apache.paimon.table.PostponeUtils with the batch
writers built on it (Flink's PostponeBatchWriteOperator, Spark's PostponeFixBucketProcessor).

Postpone files: a primary-key table's rows are written in arrival order, unsorted and unmerged,
in the key-value layout (``_KEY_<k>``, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, the columns) into
``<partition>/bucket-postpone/``, named ``<data-file.prefix>-u-<commit user>-s-<write id>-w-``
+ uuid + counter, so that one writer's files sort together. As in Java every record carries
sequence number -1 (``KeyValue.UNKNOWN_SEQUENCE``: the postpone writer never numbers records),
the file's min/max key are its first and last record's keys, and no value or key statistics
are kept. Batch scans skip these files; compaction (``compact/postpone.py``) replays them in
order into real buckets, where they get real sequence numbers.

One difference from Java: Java forces Avro for postpone files, since its Avro writer is its
cheapest row writer. Ours encodes Avro row by row in Python, so postpone files keep the table's
``file.format`` (Parquet by default), written straight from Arrow. Java reads a data file in the
format its extension names, so both engines read and compact either.

``postpone.batch-write-fixed-bucket`` (Java's default ``true``): a batch write puts rows straight
into real buckets, hashed as a fixed-bucket table would: a partition that has real buckets keeps
their count, a partition that has none gets ``postpone.default-bucket-num``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.bucket.cross_partition import dense_codes
from paimon_pyspark.bucket.fixed import FixedBucketAssigner, buckets_of
from paimon_pyspark.errors import OptionError
from paimon_pyspark.format.writers import FormatWriter
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import EMPTY_STATS, FILE_SOURCE_APPEND, DataFileMeta
from paimon_pyspark.spec.key_value import RETRACTS, SEQUENCE_NUMBER
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.store.postpone import known_num_buckets, postpone_file_prefix
from paimon_pyspark.write.append_writer import local_now_millis
from paimon_pyspark.write.data_file import BucketDir
from paimon_pyspark.write.key_value_writer import KvFileSettings, to_physical

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

UNKNOWN_SEQUENCE = -1
"""Java's KeyValue.UNKNOWN_SEQUENCE, the sequence number of every postpone record."""

_RETRACT_KINDS = pa.array(RETRACTS, pa.int8())

Indices = npt.NDArray[np.intp]
Route = tuple[bytes, list[Any], int, Indices | None]


class PostponeRouting:
    """Sends the rows of each partition to the postpone bucket, or (fixed-bucket batch writes)
    to the real bucket their key hashes to, with the partition's bucket count."""

    def __init__(self, table: FileStore, fixed: bool) -> None:
        self.table = table
        self.fixed = fixed
        self.default_buckets = table.options.postpone_default_bucket_num
        self._known: dict[bytes, int] | None = None
        self.hasher: FixedBucketAssigner | None = None
        if fixed:
            key_types = [table.table_schema.field(k).type for k in table.bucket_keys]
            self.hasher = FixedBucketAssigner(key_types, 1)

    def pin(self, known: Mapping[bytes, int]) -> None:
        """Use these partitions' bucket counts (read once by a job's driver with
        ``known_num_buckets``) instead of reading the latest snapshot's."""
        self._known = dict(known)

    def num_buckets(self, partition: bytes) -> int:
        """The real bucket count a fixed-bucket write uses in ``partition``."""
        if self._known is None:
            self._known = known_num_buckets(self.table, self.table.snapshot_manager.latest())
        return self._known.setdefault(partition, self.default_buckets)

    def total_buckets(self, partition: bytes, bucket: int) -> int:
        return POSTPONE_BUCKET if bucket == POSTPONE_BUCKET else self.num_buckets(partition)

    def assign(self, data: pa.Table | pa.RecordBatch) -> npt.NDArray[np.int32]:
        """The real bucket of every row of a fixed-bucket write, hashed among the bucket count
        of the row's partition: what ``split`` routes each row to."""
        assert self.hasher is not None
        hashes = self.hasher.hashes([data.column(k) for k in self.table.bucket_keys])
        keys = self.table.partition_keys
        types = self.table.partition_types
        if not keys:
            return buckets_of(hashes, self.num_buckets(serialize_with_arity([], [])))
        schema = self.table.arrow_schema
        columns = [pc.cast(data.column(k), schema.field(k).type) for k in keys]
        _, firsts, inverse = np.unique(dense_codes(columns), return_index=True, return_inverse=True)
        counts = np.array(
            [
                self.num_buckets(serialize_with_arity([c[i].as_py() for c in columns], types))
                for i in firsts.tolist()
            ],
            np.int64,
        )
        per_row = counts[inverse.reshape(-1)]
        return np.abs(np.fmod(hashes.astype(np.int64), per_row)).astype(np.int32)

    def checked(self, routes: Iterator[Route]) -> Iterator[Route]:
        """Groups whose bucket a job's bucket stage chose (``assign``), checked to be real
        buckets of their partition."""
        for route in routes:
            partition, values, bucket, _ = route
            if not 0 <= bucket < self.num_buckets(partition):
                raise OptionError(
                    f"Table '{self.table.name}': bucket {bucket} given for partition {values}, "
                    f"which has {self.num_buckets(partition)} bucket(s)."
                )
            yield route

    def split(self, data: pa.Table, by_partition: Iterator[Route]) -> Iterator[Route]:
        """Refine per-partition row groups into (partition, bucket) groups, order kept."""
        if not self.fixed:
            for partition, values, _, indices in by_partition:
                yield partition, values, POSTPONE_BUCKET, indices
            return
        assert self.hasher is not None
        hashes = self.hasher.hashes([data.column(k) for k in self.table.bucket_keys])
        for partition, values, _, indices in by_partition:
            rows = np.arange(data.num_rows) if indices is None else indices
            buckets = buckets_of(hashes[rows], self.num_buckets(partition))
            order = np.argsort(buckets, kind="stable")
            sorted_buckets = buckets[order]
            starts = [0, *(np.flatnonzero(np.diff(sorted_buckets)) + 1).tolist(), len(rows)]
            for lo, hi in itertools.pairwise(starts):
                if hi > lo:
                    yield partition, values, int(sorted_buckets[lo]), rows[order[lo:hi]]


def postpone_settings(table: FileStore, commit_user: str) -> KvFileSettings:
    """The table's KV file settings with the postpone prefix and no statistics."""
    s = KvFileSettings.from_table(table)
    write_id = random.randrange(2**31 - 1)
    prefix = postpone_file_prefix(s.file_prefix, commit_user, write_id)
    return replace(s, file_prefix=prefix, stats_mode="none")


class PostponeBucketWriter:
    """The writer of one partition's postpone bucket: rows go to the open file as they come.

    Rows arrive with their ``_VALUE_KIND``; they are buffered up to ``flush_bytes`` and then
    appended to the current file, which rolls at ``target-file-size``. Nothing is sorted,
    merged or numbered.
    """

    def __init__(
        self,
        settings: KvFileSettings,
        bucket_path: str,
        path_factory: PathFactory,
        flush_bytes: int,
    ) -> None:
        self.s = settings
        self.bucket_path = bucket_path
        self.path_factory = path_factory
        self.flush_threshold = flush_bytes
        self._buffer: list[pa.Table] = []
        self._buffered_bytes = 0
        self._file: FormatWriter | None = None
        self._file_name = ""
        self._rows = 0
        self._deletes = 0
        self._min_key: list[Any] = []
        self._max_key: list[Any] = []
        self._dir = BucketDir(settings.file_io, bucket_path, path_factory)
        self.new_files: list[DataFileMeta] = []

    @property
    def buffered_bytes(self) -> int:
        return self._buffered_bytes

    def write(self, rows: pa.Table) -> None:
        if rows.num_rows:
            self._buffer.append(rows)
            self._buffered_bytes += rows.nbytes

    def flush(self) -> None:
        if not self._buffer:
            return
        chunk = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        self._buffer = []
        self._buffered_bytes = 0
        pieces = max(1, -(-chunk.nbytes // self.s.piece_bytes))
        step = -(-chunk.num_rows // pieces)
        for start in range(0, chunk.num_rows, step):
            self._write_piece(chunk.slice(start, step))

    def prepare_commit(self) -> list[DataFileMeta]:
        self.flush()
        if self._file is not None:
            self._close_file()
        files, self.new_files = self.new_files, []
        return files

    def abort(self) -> None:
        self._buffer = []
        self._buffered_bytes = 0
        if self._file is not None:
            self._file.abort()
            self._file = None
        self._dir.delete(self.new_files)
        self.new_files = []

    def _write_piece(self, piece: pa.Table) -> None:
        if self._file is None:
            self._open(piece)
        assert self._file is not None
        n = piece.num_rows
        seq = pa.array(np.full(n, UNKNOWN_SEQUENCE, np.int64))
        self._file.write(to_physical(piece.append_column(SEQUENCE_NUMBER, seq), self.s))
        self._rows += n
        kinds = piece.column("_VALUE_KIND").cast(pa.int8())
        self._deletes += int(pc.sum(pc.is_in(kinds, _RETRACT_KINDS)).as_py() or 0)
        self._max_key = [piece.column(k)[n - 1].as_py() for k in self.s.trimmed_primary_keys]
        if self._file.bytes_written >= self.s.target_file_size:
            self._close_file()

    def _open(self, first: pa.Table) -> None:
        s = self.s
        self._file_name, self._file = self._dir.open_file(
            s.file_prefix,
            s.file_format,
            s.compression,
            s.zstd_level,
            s.physical_schema,
            s.physical_fields,
        )
        self._rows = 0
        self._deletes = 0
        self._min_key = [first.column(k)[0].as_py() for k in self.s.trimmed_primary_keys]

    def _close_file(self) -> None:
        assert self._file is not None
        size = self._file.close()
        self._file = None
        key_types = self.s.key_types
        self.new_files.append(
            DataFileMeta(
                file_name=self._file_name,
                file_size=size,
                row_count=self._rows,
                min_key=serialize_with_arity(self._min_key, key_types),
                max_key=serialize_with_arity(self._max_key, key_types),
                key_stats=EMPTY_STATS,
                value_stats=EMPTY_STATS,
                min_sequence_number=UNKNOWN_SEQUENCE,
                max_sequence_number=UNKNOWN_SEQUENCE,
                schema_id=self.s.schema_id,
                level=0,
                creation_time=local_now_millis(),
                delete_row_count=self._deletes,
                file_source=FILE_SOURCE_APPEND,
                value_stats_cols=(),
            )
        )
