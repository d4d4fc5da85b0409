"""Sorted runs on local disk: the spill files of write buffers and of wide merges.

Mirrors the spill channels of org.apache.paimon.disk.IOManager as BinaryExternalSortBuffer and
MergeSorter use them: a sorted run written once to a temp file under the OS temp directory
(Arrow IPC here, compressed with ``spill-compression``), read back batch by batch, deleted by
its owner. Never shared with Java: only this process reads them.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
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


class SpillFile:
    """One sorted run on local disk: an Arrow IPC file of batches, read back batch by batch."""

    def __init__(self, batches: Iterator[pa.Table], settings: SpillSettings) -> None:
        fd, self.path = tempfile.mkstemp(prefix="paimon-spill-", suffix=".arrow")
        os.close(fd)
        try:
            writer: pa.ipc.RecordBatchFileWriter | None = None
            with pa.OSFile(self.path, "wb") as sink:
                for batch in batches:
                    if writer is None:
                        writer = pa.ipc.new_file(sink, batch.schema, options=settings.ipc_options())
                    writer.write_table(batch)
                if writer is not None:
                    writer.close()
            self.size = os.path.getsize(self.path)
        except OSError as e:
            self.delete()
            raise StoreError(f"Spill file '{self.path}' cannot be written: {e}") from e
        except BaseException:
            self.delete()
            raise

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
