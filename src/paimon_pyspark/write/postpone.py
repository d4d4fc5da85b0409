"""Writing a postpone-bucket table (``bucket = -2``): the postpone writer.

Mirrors org.apache.paimon.postpone.{PostponeBucketFileStoreWrite, PostponeBucketWriter}. Which
rows go to the postpone bucket, and which (``postpone.batch-write-fixed-bucket``) to real
buckets, is the table's router's choice (bucket/postpone.py).

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
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pyarrow as pa

from paimon_pyspark.io.data_file import BucketDir
from paimon_pyspark.io.key_value_file import KeyValueFileKind, KvFileSettings
from paimon_pyspark.io.rolling_file_writer import RollingFileWriter
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.store.postpone import postpone_file_prefix
from paimon_pyspark.write.bucket_writer import BufferedBucketWriter

UNKNOWN_SEQUENCE = -1
"""Java's KeyValue.UNKNOWN_SEQUENCE, the sequence number of every postpone record."""


def postpone_settings(store: FileStore, commit_user: str) -> KvFileSettings:
    """The table's KV file settings with the postpone prefix and no statistics."""
    s = KvFileSettings.of(store)
    write_id = random.randrange(2**31 - 1)
    prefix = postpone_file_prefix(s.files.file_prefix, commit_user, write_id)
    return replace(s, files=replace(s.files, file_prefix=prefix, stats_mode="none"))


class PostponeFileKind(KeyValueFileKind):
    """Postpone files: the key-value layout with every record at ``UNKNOWN_SEQUENCE``, records
    in arrival order (min/max key of the first and last), and no key statistics."""

    def __init__(self, settings: KvFileSettings) -> None:
        super().__init__(settings, key_stats_mode="none")

    def physical(self, rows: pa.Table) -> pa.Table:
        seq = pa.array(np.full(rows.num_rows, UNKNOWN_SEQUENCE, np.int64))
        return super().physical(rows.append_column(SEQUENCE_NUMBER, seq))

    def track_sequence(self, rows: pa.Table) -> None:
        return

    def sequence_range(self) -> tuple[int, int]:
        return UNKNOWN_SEQUENCE, UNKNOWN_SEQUENCE


class PostponeBucketWriter(BufferedBucketWriter):
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
        bucket_dir = BucketDir(settings.files.file_io, bucket_path, path_factory)
        files = RollingFileWriter(settings.files, bucket_dir, PostponeFileKind(settings))
        super().__init__(files, flush_bytes)
