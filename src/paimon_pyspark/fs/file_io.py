"""FileIO: moves bytes between paimon_pyspark and a filesystem, through pyarrow.fs.

Mirrors org.apache.paimon.fs.FileIO. It writes no formats (format/ does); its one piece of policy
is :meth:`FileIO.try_write_atomic`, the create-if-absent publish that the commit protocol relies on:
a snapshot file appears whole or not at all, and never replaces one another writer published.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from typing import BinaryIO, cast

import pyarrow.fs as pafs

from paimon_pyspark.errors import CorruptTableError


class FileIO:
    """File operations on one filesystem; paths are plain strings without scheme."""

    def __init__(self, fs: pafs.FileSystem) -> None:
        self.fs = fs
        self.is_local = isinstance(fs, pafs.LocalFileSystem)

    @staticmethod
    def for_uri(uri: str) -> tuple[FileIO, str]:
        """A FileIO and the scheme-less path for a local path or a ``scheme://`` URI."""
        if uri.startswith("file:"):
            # file:///x and file:/x (as Spark and Hadoop qualify local paths) are both /x
            return FileIO(pafs.LocalFileSystem()), "/" + uri[len("file:") :].lstrip("/")
        if "://" not in uri:
            return FileIO(pafs.LocalFileSystem()), os.path.abspath(uri)
        fs, path = pafs.FileSystem.from_uri(uri)
        return FileIO(fs), path

    def exists(self, path: str) -> bool:
        return bool(self.fs.get_file_info(path).type != pafs.FileType.NotFound)

    def is_dir(self, path: str) -> bool:
        return bool(self.fs.get_file_info(path).type == pafs.FileType.Directory)

    def mkdirs(self, path: str) -> None:
        self.fs.create_dir(path, recursive=True)

    def list_names(self, path: str) -> list[str]:
        """Names directly under ``path``; empty when it does not exist."""
        if not self.exists(path):
            return []
        infos = self.fs.get_file_info(pafs.FileSelector(path, recursive=False))
        return [info.base_name for info in infos]

    def list_dirs(self, path: str) -> list[str]:
        if not self.exists(path):
            return []
        infos = self.fs.get_file_info(pafs.FileSelector(path, recursive=False))
        return [i.base_name for i in infos if i.type == pafs.FileType.Directory]

    def mtime(self, path: str) -> float:
        """Modification time in seconds since the epoch (0 when the filesystem has none)."""
        info = self.fs.get_file_info(path)
        return info.mtime.timestamp() if info.mtime is not None else 0.0

    def file_size(self, path: str) -> int:
        return int(self.fs.get_file_info(path).size)

    def read_bytes(self, path: str) -> bytes:
        try:
            with self.fs.open_input_stream(path) as f:
                return cast(bytes, f.read())
        except FileNotFoundError as e:
            raise CorruptTableError(f"File '{path}' is missing.") from e

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8")

    def open_input(self, path: str) -> BinaryIO:
        return cast(BinaryIO, self.fs.open_input_file(path))

    def open_output(self, path: str) -> BinaryIO:
        return cast(BinaryIO, self.fs.open_output_stream(path))

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write (or overwrite) a file. Not atomic: use for files nobody reads by name yet."""
        with self.fs.open_output_stream(path) as f:
            f.write(data)

    def overwrite_hint(self, path: str, text: str) -> None:
        """Replace a small hint file (LATEST, EARLIEST) through a temp file and a rename."""
        parent, name = os.path.split(path)
        tmp = os.path.join(parent, f".{name}.{uuid.uuid4()}.tmp")
        self.write_bytes(tmp, text.encode("utf-8"))
        self.fs.move(tmp, path)

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        """Publish ``data`` at ``path`` only if nothing is there yet; False if it was taken.

        The content goes to a temp file in the same directory first. On a local disk the
        temp file is hard-linked to the target, which fails atomically if the target exists.
        Object stores have no create-if-absent rename in pyarrow.fs: there a check precedes the
        move, which is safe for one writer at a time (concurrent writers need a catalog lock).
        """
        parent, name = os.path.split(path)
        tmp = os.path.join(parent, f".{name}.{uuid.uuid4()}.tmp")
        self.write_bytes(tmp, data)
        try:
            if self.is_local:
                try:
                    os.link(tmp, path)
                except FileExistsError:
                    return False
                return True
            if self.exists(path):
                return False
            self.fs.move(tmp, path)
            return True
        finally:
            if self.exists(tmp):
                self.fs.delete_file(tmp)

    def delete_quietly(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError, OSError):
            self.fs.delete_file(path)

    def delete_dir(self, path: str) -> None:
        if self.exists(path):
            self.fs.delete_dir(path)
