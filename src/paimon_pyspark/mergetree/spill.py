"""Sorted runs on local disk: the spill files of write buffers and of wide merges.

Mirrors the spill channels of org.apache.paimon.disk.IOManager as BinaryExternalSortBuffer and
MergeSorter use them: a sorted run written once to a temp file under the OS temp directory
(Arrow IPC here, compressed with ``spill-compression``), read back batch by batch, deleted by
its owner. Sort compaction (compact/sort.py) spills its unsorted rows and their ranges the same
way. Never shared with Java: only this process reads them.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from paimon_pyspark.errors import StoreError
from paimon_pyspark.options import CoreOptions


@dataclass(frozen=True)
class SpillSettings:
    """Java's writeBufferSpillable, writeBufferSpillDiskSize, spillCompressOptions and
    localSortMaxNumFileHandles."""

    spillable: bool = True
    max_disk_size: int = 2**63 - 1
    compression: str = "zstd"
    zstd_level: int = 1
    max_fan_in: int = 128

    @staticmethod
    def of(options: CoreOptions) -> SpillSettings:
        return SpillSettings(
            spillable=options.write_buffer_spillable,
            max_disk_size=options.write_buffer_spill_max_disk_size,
            compression=options.spill_compression,
            zstd_level=options.spill_compression_zstd_level,
            max_fan_in=options.local_sort_max_num_file_handles,
        )

    def ipc_options(self) -> pa.ipc.IpcWriteOptions:
        if self.compression == "none":
            return pa.ipc.IpcWriteOptions()
        codec = (
            pa.Codec("zstd", compression_level=self.zstd_level)
            if self.compression == "zstd"
            else pa.Codec("lz4")
        )
        return pa.ipc.IpcWriteOptions(compression=codec)


class SpillWriter:
    """A spill file being written table by table (an Arrow IPC file under ``directory``, the OS
    temp directory by default); ``finish`` closes it into the SpillFile that reads it back.
    On failure its owner calls ``delete``."""

    def __init__(self, settings: SpillSettings, directory: str | None = None) -> None:
        fd, self.path = tempfile.mkstemp(prefix="paimon-spill-", suffix=".arrow", dir=directory)
        os.close(fd)
        self.settings = settings
        self.rows = 0
        self.nbytes = 0
        """Arrow bytes written (in memory, before compression)."""
        self._sink: pa.NativeFile | None = None
        self._writer: pa.ipc.RecordBatchFileWriter | None = None

    def write(self, rows: pa.Table) -> None:
        try:
            if self._writer is None:
                self._sink = pa.OSFile(self.path, "wb")
                options = self.settings.ipc_options()
                self._writer = pa.ipc.new_file(self._sink, rows.schema, options=options)
            self._writer.write_table(rows)
        except OSError as e:
            self.delete()
            raise StoreError(f"Spill file '{self.path}' cannot be written: {e}") from e
        self.rows += rows.num_rows
        self.nbytes += rows.nbytes

    def finish(self) -> SpillFile:
        try:
            self._close()
            return SpillFile(self.path, os.path.getsize(self.path))
        except OSError as e:
            self.delete()
            raise StoreError(f"Spill file '{self.path}' cannot be written: {e}") from e

    def delete(self) -> None:
        with contextlib.suppress(OSError):
            self._close()
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)

    def _close(self) -> None:
        writer, sink = self._writer, self._sink
        self._writer = self._sink = None
        try:
            if writer is not None:
                writer.close()
        finally:
            if sink is not None:
                sink.close()


class SpillFile:
    """One finished spill file, read back batch by batch (a sorted run, or any rows)."""

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size

    @staticmethod
    def write(batches: Iterable[pa.Table], settings: SpillSettings) -> SpillFile:
        """``batches`` written to a new spill file; nothing is left on failure."""
        writer = SpillWriter(settings)
        try:
            for batch in batches:
                writer.write(batch)
        except BaseException:
            writer.delete()
            raise
        return writer.finish()

    def batches(self) -> Iterator[pa.Table]:
        if self.size == 0:
            return
        with pa.OSFile(self.path, "rb") as source:
            reader = pa.ipc.open_file(source)
            for i in range(reader.num_record_batches):
                yield pa.Table.from_batches([reader.get_batch(i)])

    def delete(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)


def delete_all(files: list[SpillFile]) -> None:
    for f in files:
        f.delete()
    files.clear()
