"""Local disk (and anything mounted as one).

The atomic publish writes a temp file in the target's directory and hard-links it to the
target: ``link`` fails atomically when the target exists, which is create-if-absent.

Durability: every file this FileIO writes is fsynced when it is closed, before anything can
reference it, and a published name (the link of a snapshot, schema or tag file, the rename of a
hint) is followed by an fsync of its directory; a directory it creates is made durable in its
parent. So after a crash or a power loss a snapshot name holds the whole file it was published
with, and every file that snapshot references is whole too. (The name of a data file or a
manifest is made durable by its own fsync, as ext4, xfs and btrfs log a new name with the inode:
directories are synced explicitly only where a name alone changes.)

The store's limits (a name too long, no space, no permission, too many open files) are raised
as :class:`~paimon_pyspark.errors.StoreError` naming the path; a missing or existing file keeps
its FileNotFoundError / FileExistsError, which callers rely on.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
from typing import Any, BinaryIO, cast

import pyarrow.fs as pafs

from paimon_pyspark.errors import FileMissingError
from paimon_pyspark.fs.file_io import FileIO, store_errors, temp_beside
from paimon_pyspark.fs.options import FsOptions

_BUFFER = 1 << 20
_WRITEBACK_STEP = 1 << 20
"""A data file's bytes are handed to the disk each time this many more have been written."""


class LocalFileIO(FileIO):
    is_local = True

    def __init__(self, options: FsOptions | None = None) -> None:
        super().__init__(options or FsOptions({}))
        self.fs = pafs.LocalFileSystem()

    def _reconfigure(self, options: FsOptions) -> FileIO:
        return LocalFileIO(options)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def mkdirs(self, path: str) -> None:
        """Create ``path`` and its missing parents, each made durable in its parent."""
        if os.path.isdir(path):
            return
        missing = []
        parent = path
        while parent and not os.path.isdir(parent):
            missing.append(parent)
            up = os.path.dirname(parent)
            if up == parent:
                break
            parent = up
        with store_errors(path):
            os.makedirs(path, exist_ok=True)
            for created in reversed(missing):
                sync_dir(os.path.dirname(created))

    def create_directory(self, path: str) -> None:
        self.mkdirs(path)

    def list_names(self, path: str) -> list[str]:
        try:
            with store_errors(path):
                return os.listdir(path)
        except (FileNotFoundError, NotADirectoryError):
            return []

    def list_dirs(self, path: str) -> list[str]:
        try:
            with store_errors(path), os.scandir(path) as it:
                return [e.name for e in it if e.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def mtime(self, path: str) -> float:
        with store_errors(path):
            return os.stat(path).st_mtime

    def file_size(self, path: str) -> int:
        with store_errors(path):
            return os.stat(path).st_size

    def read_bytes(self, path: str) -> bytes:
        try:
            with store_errors(path), open(path, "rb") as f:
                return f.read()
        except FileNotFoundError as e:
            raise FileMissingError(f"File '{path}' is missing.", path) from e

    def open_input(self, path: str) -> BinaryIO:
        with store_errors(path):
            return cast(BinaryIO, self.fs.open_input_file(path))

    def open_output(self, path: str) -> BinaryIO:
        with store_errors(path):
            return cast(BinaryIO, _DurableOutput(_SyncOnClose(path), path))

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write (or overwrite) ``path``, durable when this returns."""
        with store_errors(path), open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    def overwrite_hint(self, path: str, text: str) -> None:
        """Through a temp file and a rename, so a reader never sees a half-written hint. Not
        fsynced: a hint is checked against the snapshot directory on every read, and an empty
        or stale one left by a crash is ignored, so two fsyncs per commit buy nothing."""
        tmp = temp_beside(path)
        with store_errors(tmp), open(tmp, "wb") as f:
            f.write(text.encode("utf-8"))
        try:
            with store_errors(path):
                os.replace(tmp, path)
        except BaseException:
            self.delete_quietly(tmp)
            raise

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        """The bytes are durable in a temp file before the link makes them visible, and the
        link is durable (its directory fsynced) before this returns True. A failure of that
        last fsync raises: the file is visible but the publish is not known to be durable,
        which callers treat as an uncertain outcome."""
        tmp = temp_beside(path)
        self.write_bytes(tmp, data)
        try:
            with store_errors(path):
                os.link(tmp, path)
        except FileExistsError:
            return False
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        with store_errors(path):
            sync_dir(os.path.dirname(path))
        return True

    def delete_quietly(self, path: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(path)

    def delete_dir(self, path: str) -> None:
        with store_errors(path):
            if os.path.isdir(path):
                self.fs.delete_dir(path)


def sync_dir(path: str) -> None:
    """fsync a directory: the names created, linked or renamed in it survive a crash."""
    fd = os.open(path or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _writeback_starter() -> Any:
    """Linux's ``sync_file_range``, or None where libc has none."""
    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (AttributeError, OSError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    call.restype = ctypes.c_int
    return call


_START_WRITEBACK = _writeback_starter()
_SYNC_FILE_RANGE_WRITE = 2


class _SyncOnClose(io.FileIO):
    """A file opened for writing whose close fsyncs it first (unless discarded).

    Where the kernel offers it (``sync_file_range``), writeback of what was written so far
    starts every ``_WRITEBACK_STEP`` bytes without waiting for it, as RocksDB's
    ``bytes_per_sync`` does: the disk works while the encoder goes on, and the fsync at close
    waits for the last step only (it took half as long on a 2M-row write's 8 MB files). A
    failed start is ignored; the fsync still decides durability."""

    def __init__(self, path: str) -> None:
        super().__init__(path, "wb")
        self.discard = False
        self._written = 0
        self._handed = 0

    def write(self, data: Any) -> int:
        n = super().write(data) or 0
        self._written += n
        if _START_WRITEBACK is not None and self._written - self._handed >= _WRITEBACK_STEP:
            _START_WRITEBACK(
                self.fileno(), self._handed, self._written - self._handed, _SYNC_FILE_RANGE_WRITE
            )
            self._handed = self._written
        return n

    def close(self) -> None:
        if not self.closed and not self.discard:
            try:
                os.fsync(self.fileno())
            except BaseException:
                super().close()
                raise
        super().close()


class _DurableOutput(io.BufferedWriter):
    """The output stream of a data file: buffered, durable once closed; ``abort`` closes it
    without the fsync (its caller deletes the file). The store's limits met while writing are
    raised as StoreError naming the file."""

    def __init__(self, raw: _SyncOnClose, path: str) -> None:
        super().__init__(raw, _BUFFER)
        self._path = path

    def write(self, data: Any) -> int:
        with store_errors(self._path):
            return super().write(data)

    def close(self) -> None:
        with store_errors(self._path):
            super().close()

    def abort(self) -> None:
        cast(_SyncOnClose, self.raw).discard = True
        with contextlib.suppress(OSError):
            super().close()
