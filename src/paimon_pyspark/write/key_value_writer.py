"""The writer of one (partition, bucket) of a primary-key table.

Mirrors org.apache.paimon.mergetree.MergeTreeWriter: a write buffer, merged per key and flushed
as a level-0 sorted run (``mergetree/sorted_run_writer.py``) once it holds ``write-buffer-size``
Arrow bytes. Records travel as Arrow tables of the table columns plus ``_SEQUENCE_NUMBER``
(int64) and ``_VALUE_KIND`` (int8), see ``io/key_value_file.py``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paimon_pyspark.io.data_file import BucketDir
from paimon_pyspark.io.key_value_file import KvFileSettings
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.mergetree.sorted_run_writer import SortedRunWriter
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_APPEND
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.bucket_writer import BufferedBucketWriter


class KeyValueWriter(BufferedBucketWriter):
    """The writer of one (partition, bucket) of a primary-key table.

    Rows arrive with their ``_VALUE_KIND``; each gets the next sequence number of this writer
    (``base + k * stride + index`` for its k-th row, see ``sequence_slot`` on TableWrite). Once
    the buffer holds ``write-buffer-size`` Arrow bytes it is merged (one record per key, deletes
    kept) and written as a new level-0 sorted run, as Java's MergeTreeWriter flushes (here per
    bucket writer rather than shared by all writers of the task).
    """

    def __init__(
        self,
        settings: KvFileSettings,
        merge_settings: MergeSettings,
        bucket_path: str,
        path_factory: PathFactory,
        next_seq: int,
        sequence_slot: tuple[int, int] = (0, 1),
    ) -> None:
        bucket_dir = BucketDir(settings.files.file_io, bucket_path, path_factory)
        runs = SortedRunWriter(settings, bucket_dir, 0, FILE_SOURCE_APPEND)
        super().__init__(runs, settings.write_buffer_size)
        self.s = settings
        self.merge_settings = merge_settings
        self.base_seq = next_seq
        self.slot_index, self.slot_stride = sequence_slot
        self.count = 0

    def write(self, rows: pa.Table) -> None:
        """Buffer ``rows`` (table columns + ``_VALUE_KIND``), numbering them in arrival order."""
        n = rows.num_rows
        if n == 0:
            return
        k = np.arange(self.count, self.count + n, dtype=np.int64)
        seq = self.base_seq + k * self.slot_stride + self.slot_index
        self.count += n
        super().write(rows.append_column(SEQUENCE_NUMBER, pa.array(seq, pa.int64())))

    def flush(self) -> None:
        """Merge the buffer and write it as one level-0 sorted run (one or more files)."""
        records = self.take_buffer()
        if records is None:
            return
        keys = self.s.trimmed_primary_keys
        merged = merge(records, keys, self.merge_settings, drop_delete=False, buffer=True)
        self.files.write(merged)
        self.files.roll()
