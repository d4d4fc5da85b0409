"""Local disk (and anything mounted as one) through pyarrow's LocalFileSystem.

The atomic publish writes a temp file in the target's directory and hard-links it to the
target: ``link`` fails atomically when the target exists, which is create-if-absent.
"""

from __future__ import annotations

import contextlib
import os
from typing import BinaryIO, cast

import pyarrow.fs as pafs

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.fs.file_io import FileIO, temp_beside
from paimon_pyspark.fs.options import FsOptions


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
        os.makedirs(path, exist_ok=True)

    def create_directory(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def list_names(self, path: str) -> list[str]:
        try:
            return os.listdir(path)
        except (FileNotFoundError, NotADirectoryError):
            return []

    def list_dirs(self, path: str) -> list[str]:
        try:
            with os.scandir(path) as it:
                return [e.name for e in it if e.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def mtime(self, path: str) -> float:
        return os.stat(path).st_mtime

    def file_size(self, path: str) -> int:
        return os.stat(path).st_size

    def read_bytes(self, path: str) -> bytes:
        try:
            with open(path, "rb") as f:
                return f.read()
        except FileNotFoundError as e:
            raise CorruptTableError(f"File '{path}' is missing.") from e

    def open_input(self, path: str) -> BinaryIO:
        return cast(BinaryIO, self.fs.open_input_file(path))

    def open_output(self, path: str) -> BinaryIO:
        return cast(BinaryIO, self.fs.open_output_stream(path))

    def write_bytes(self, path: str, data: bytes) -> None:
        with open(path, "wb") as f:
            f.write(data)

    def overwrite_hint(self, path: str, text: str) -> None:
        """Through a temp file and a rename, so a reader never sees a half-written hint."""
        tmp = temp_beside(path)
        self.write_bytes(tmp, text.encode("utf-8"))
        os.replace(tmp, path)

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        tmp = temp_beside(path)
        self.write_bytes(tmp, data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return True

    def delete_quietly(self, path: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(path)

    def delete_dir(self, path: str) -> None:
        if os.path.isdir(path):
            self.fs.delete_dir(path)
