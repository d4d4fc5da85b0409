"""The writer of one (partition, bucket), as TableWrite sees it, and the buffer they share.

Mirrors org.apache.paimon.utils.RecordWriter (write, flush, prepareCommit, close) that Java's
AppendOnlyWriter, MergeTreeWriter and PostponeBucketWriter implement. ``BufferedBucketWriter``
holds rows in memory until TableWrite flushes them into a RollingFileWriter; the append and
postpone writers are exactly that. The key-value writer keeps a sort buffer that draws on the
write's shared ``write-buffer-size`` and spills instead (write/key_value_writer.py): its
``flush_threshold`` is never reached.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_pyspark.io.rolling_file_writer import RollingFileWriter
from paimon_pyspark.spec.data_file_meta import DataFileMeta


class BucketWriter(Protocol):
    """TableWrite buffers rows in a bucket writer and flushes it once ``buffered_bytes``
    reaches ``flush_threshold``; ``prepare_commit`` hands out the new files."""

    @property
    def flush_threshold(self) -> int: ...

    @property
    def buffered_bytes(self) -> int: ...

    def write(self, rows: pa.Table) -> None: ...

    def write_rows(self, data: pa.Table, indices: npt.NDArray[np.intp] | None) -> None:
        """Write the rows of ``data`` at ``indices`` (all of them when None), in that order."""
        ...

    def flush(self) -> None: ...

    def prepare_commit(self) -> list[DataFileMeta]:
        """Flush, close the open file and hand out every file written since the last call."""
        ...

    def abort(self) -> None:
        """Drop the buffer and remove every file written and not yet handed out."""
        ...


def gathered(data: pa.Table, indices: npt.NDArray[np.intp] | None) -> pa.Table:
    """The rows of ``data`` at ``indices`` (all of them when None)."""
    return data if indices is None else data.take(pa.array(indices))


class BufferedBucketWriter:
    """Rows buffered in memory, then written in arrival order to ``files`` at each flush."""

    def __init__(self, files: RollingFileWriter, flush_threshold: int) -> None:
        self.files = files
        self._flush_threshold = flush_threshold
        self._buffer: list[pa.Table] = []
        self._buffered_bytes = 0

    @property
    def flush_threshold(self) -> int:
        return self._flush_threshold

    @property
    def buffered_bytes(self) -> int:
        return self._buffered_bytes

    def write(self, rows: pa.Table) -> None:
        if rows.num_rows:
            self._buffer.append(rows)
            self._buffered_bytes += rows.nbytes

    def write_rows(self, data: pa.Table, indices: npt.NDArray[np.intp] | None) -> None:
        self.write(gathered(data, indices))

    def take_buffer(self) -> pa.Table | None:
        """The buffered rows as one table (None when empty); the buffer starts over."""
        if not self._buffer:
            return None
        rows = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        self._buffer = []
        self._buffered_bytes = 0
        return rows

    def flush(self) -> None:
        rows = self.take_buffer()
        if rows is not None:
            self.files.write(rows)

    def prepare_commit(self) -> list[DataFileMeta]:
        self.flush()
        return self.files.close()

    def abort(self) -> None:
        self._buffer = []
        self._buffered_bytes = 0
        self.files.abort()
