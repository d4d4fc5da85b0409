"""The writer of one (partition, bucket) of a primary-key table.

Mirrors org.apache.paimon.mergetree.MergeTreeWriter: a write buffer (``mergetree/write_buffer.py``,
Java's SortBufferWriteBuffer) drawing on the write's shared ``write-buffer-size``, spilling to
local disk when the budget is used up, and merged per key into a level-0 sorted run
(``mergetree/sorted_run_writer.py``) at ``prepare_commit``, or when it may not spill. Records
travel as Arrow tables of the table columns plus ``_SEQUENCE_NUMBER`` (int64) and
``_VALUE_KIND`` (int8), see ``io/key_value_file.py``.

With ``changelog-producer = input`` every flush also writes the buffer's records as they came,
sorted by key and sequence but not merged, as changelog files (Java's MergeTreeWriter hands its
changelog writer each record the write buffer's merge iterator reads).
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_pyspark.io.data_file import BucketDir
from paimon_pyspark.io.key_value_file import KvFileSettings
from paimon_pyspark.merge.merge_function import MergeSettings, merge, sort_records
from paimon_pyspark.mergetree.sorted_run_writer import SortedRunWriter
from paimon_pyspark.mergetree.spill import SpillSettings
from paimon_pyspark.mergetree.write_buffer import SortBuffer, WriteBufferPool
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_APPEND, DataFileMeta
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.bucket_writer import gathered

NEVER = 2**63 - 1


class KeyValueWriter:
    """The writer of one (partition, bucket) of a primary-key table.

    Rows arrive with their ``_VALUE_KIND``; each gets the next sequence number of this writer
    (``base + k * stride + index`` for its k-th row, see ``sequence_slot`` on TableWrite) and
    goes into the buffer, whose bytes are reserved in ``pool`` (the TableWrite's
    ``write-buffer-size``; a pool of its own when none is given). When the pool is full, a
    buffer spills (``spill``) or, when it may not, is merged (one record per key, deletes
    kept) and written as a new level-0 sorted run, as Java's MergeTreeWriter flushes.
    """

    def __init__(
        self,
        settings: KvFileSettings,
        merge_settings: MergeSettings,
        bucket_path: str,
        path_factory: PathFactory,
        next_seq: int,
        sequence_slot: tuple[int, int] = (0, 1),
        pool: WriteBufferPool | None = None,
        spill: SpillSettings | None = None,
        changelog: KvFileSettings | None = None,
    ) -> None:
        bucket_dir = BucketDir(settings.files.file_io, bucket_path, path_factory)
        self.files = SortedRunWriter(settings, bucket_dir, 0, FILE_SOURCE_APPEND)
        self.changelog = (
            None
            if changelog is None
            else SortedRunWriter(changelog, bucket_dir, 0, FILE_SOURCE_APPEND)
        )
        """The input producer's changelog files (``changelog``: their settings), else None."""
        self.s = settings
        self.merge_settings = merge_settings
        self.base_seq = next_seq
        self.slot_index, self.slot_stride = sequence_slot
        self.count = 0
        self.buffer = SortBuffer(
            settings.trimmed_primary_keys, merge_settings, spill or SpillSettings(spillable=False)
        )
        self.pool = pool if pool is not None else WriteBufferPool(settings.write_buffer_size)
        self.pool.register(self)
        self._lock = threading.Lock()

    @property
    def flush_threshold(self) -> int:
        """Never reached: the pool decides when a buffer gives its memory back."""
        return NEVER

    @property
    def buffered_bytes(self) -> int:
        return self.buffer.memory_bytes

    @property
    def memory_occupancy(self) -> int:
        return self.buffer.memory_bytes

    def write_rows(self, data: pa.Table, indices: npt.NDArray[np.intp] | None) -> None:
        self.write(gathered(data, indices))

    def write(self, rows: pa.Table) -> None:
        """Buffer ``rows`` (table columns + ``_VALUE_KIND``), numbering them in arrival order."""
        n = rows.num_rows
        if n == 0:
            return
        k = np.arange(self.count, self.count + n, dtype=np.int64)
        seq = self.base_seq + k * self.slot_stride + self.slot_index
        self.count += n
        rows = rows.append_column(SEQUENCE_NUMBER, pa.array(seq, pa.int64()))
        with self._lock:
            self.buffer.put(rows)
        self.pool.reserve(self, rows.nbytes)

    def flush_memory(self) -> bool:
        """Give the buffer's memory back: spill it, or flush it as a level-0 sorted run when
        it may not spill (Java's flushMemory); False when the writer is busy."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            held = self.buffer.memory_bytes
            if self.buffer.spill():
                self.pool.release(held)
            else:
                self._flush()
        finally:
            self._lock.release()
        return True

    def flush(self) -> None:
        """Merge the buffer and write it as one level-0 sorted run (one or more files)."""
        with self._lock:
            self._flush()

    def prepare_commit(self) -> list[DataFileMeta]:
        self.flush()
        self.pool.unregister(self)
        return self.files.close()

    def take_changelog(self) -> list[DataFileMeta]:
        """The changelog files flushed since the last call (after ``prepare_commit``: all)."""
        return [] if self.changelog is None else self.changelog.close()

    def abort(self) -> None:
        with self._lock:
            self.pool.release(self.buffer.memory_bytes)
            self.buffer.clear()
            self.pool.unregister(self)
            self.files.abort()
            if self.changelog is not None:
                self.changelog.abort()

    def _flush(self) -> None:
        if self.buffer.empty:
            return
        keys = self.s.trimmed_primary_keys
        try:
            for records in self.buffer.sorted_slices():
                if self.changelog is not None:
                    records = sort_records(records, keys, self.merge_settings)
                    self.changelog.write(records)
                merged = merge(records, keys, self.merge_settings, drop_delete=False, buffer=True)
                self.files.add(merged)
            self.files.end_run()
            if self.changelog is not None:
                self.changelog.roll()
        finally:
            self.pool.release(self.buffer.memory_bytes)
            self.buffer.clear()
