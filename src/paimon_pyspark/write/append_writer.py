"""The writer of one (partition, bucket) of an append table, and the rewrite of its files.

Mirrors org.apache.paimon.append.AppendOnlyWriter with a RollingFileWriter: rows are buffered in
memory, flushed in pieces into the current data file, and a new file is started once the current
one reaches ``target-file-size``. Sequence numbers run on from the bucket's highest.
``rewrite_append_files`` is BaseAppendFileStoreWrite.compactRewrite: files read in order and
written back, numbered from the first file's lowest sequence number.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_pyspark.io.data_file import BucketDir, DataFileSettings
from paimon_pyspark.io.rolling_file_writer import AppendFileKind, RollingFileWriter, one_value
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_COMPACT, DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.append_dv import live_positions
from paimon_pyspark.write.bucket_writer import BufferedBucketWriter

REWRITE_BATCH_ROWS = 65_536

ExtraColumns = Callable[[DataFileMeta, npt.NDArray[np.int64], pa.Table], pa.Table]
"""Rows of a file (and their positions in it) -> the rows with more columns appended."""


class AppendWriter(BufferedBucketWriter):
    """Flushes every ``piece_bytes`` (at most 64 mb) of buffered rows into the open file.

    ``write_rows`` gathers only the columns that vary: the partition's string and binary
    columns become one-value dictionaries (AppendFileKind), never copied row by row.
    """

    def __init__(
        self,
        settings: DataFileSettings,
        bucket_path: str,
        path_factory: PathFactory,
        next_seq: int,
    ) -> None:
        bucket_dir = BucketDir(settings.file_io, bucket_path, path_factory)
        kind = AppendFileKind(settings, next_seq)
        self._one_value = kind.one_value_columns
        self._schema = kind.schema
        files = RollingFileWriter(settings, bucket_dir, kind)
        super().__init__(files, settings.piece_bytes)

    def write_rows(self, data: pa.Table, indices: npt.NDArray[np.intp] | None) -> None:
        if indices is None or not self._one_value or len(indices) == 0:
            super().write_rows(data, indices)
            return
        gathered = [i for i in range(data.num_columns) if i not in self._one_value]
        taken = data.select(gathered).take(pa.array(indices))
        columns = []
        for i in range(data.num_columns):
            if i in self._one_value:
                first = data.column(i).slice(int(indices[0]), 1)
                columns.append(one_value(first, len(indices)))
            else:
                columns.append(taken.column(gathered.index(i)))
        self.write(pa.Table.from_arrays(columns, schema=self._schema))


def rewrite_append_files(
    settings: DataFileSettings,
    store: FileStore,
    bucket_path: str,
    path_factory: PathFactory,
    files: Sequence[DataFileMeta],
    deletion_vectors: Mapping[str, DeletionVector] | None = None,
    extra_columns: ExtraColumns | None = None,
) -> list[DataFileMeta]:
    """Read ``files`` in the given order (each mapped to the current schema) and write their
    rows into new COMPACT files, without the rows ``deletion_vectors`` (data file name ->
    vector) delete; files are read ``REWRITE_BATCH_ROWS`` rows at a time, so memory
    stays near one batch plus one flush buffer. On any failure the files written so far are
    removed before the error propagates.

    ``extra_columns`` appends the columns ``settings.fields`` holds beyond the table's (a
    row-tracking table's ``_ROW_ID`` and ``_SEQUENCE_NUMBER``, from each row's file and
    position); the new files then name all their columns in ``write_cols``, as Java's
    writer given a wider write type does (BaseAppendFileStoreWrite.withWriteType)."""
    if not files:
        return []
    writer = AppendWriter(settings, bucket_path, path_factory, files[0].min_sequence_number)
    fields = list(store.fields)
    try:
        for f in files:
            dv = (deletion_vectors or {}).get(f.file_name)
            batches = live_positions(store, bucket_path, f, fields, dv, REWRITE_BATCH_ROWS)
            for rows, positions in batches:
                if extra_columns is not None:
                    rows = extra_columns(f, positions, rows)
                writer.write(rows)
                if writer.buffered_bytes >= writer.flush_threshold:
                    writer.flush()
        written = writer.prepare_commit()
    except BaseException:
        writer.abort()
        raise
    cols = tuple(f.name for f in settings.fields) if extra_columns is not None else None
    return [
        dataclasses.replace(f, file_source=FILE_SOURCE_COMPACT, write_cols=cols) for f in written
    ]
