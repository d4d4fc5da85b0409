"""Any other filesystem pyarrow opens (HDFS through libhdfs, ...): usable, but not safe for
concurrent writers.

pyarrow's filesystems have no create-if-absent rename (``move`` may replace an existing
target), so two writers could both publish snapshot N and one commit would be lost. Such a
store is refused with UnsafeStoreError unless the user sets ``fs.single-writer = true``,
promising that one writer at a time commits to each table; the publish then checks and moves.
"""

from __future__ import annotations

import contextlib
from typing import BinaryIO, cast

import pyarrow.fs as pafs

from paimon_pyspark.errors import FileMissingError, UnsafeStoreError
from paimon_pyspark.fs.file_io import FileIO, temp_beside
from paimon_pyspark.fs.options import SINGLE_WRITER, FsOptions


class ArrowFileIO(FileIO):
    def __init__(self, fs: pafs.FileSystem, scheme: str, options: FsOptions) -> None:
        super().__init__(options)
        self.fs = fs
        self.scheme = scheme

    @staticmethod
    def open(uri: str, options: FsOptions) -> tuple[FileIO, str]:
        scheme = uri.split("://", 1)[0].lower()
        if not options.single_writer:
            raise UnsafeStoreError(
                f"Warehouse '{uri}': the '{scheme}' filesystem has no atomic create-if-absent, "
                "so concurrent commits could overwrite each other's snapshots. Use local disk "
                "or an object store (s3://, gs://, az://), or set "
                f"'{SINGLE_WRITER}' = 'true' if only one writer at a time commits to each table."
            )
        try:
            fs, path = pafs.FileSystem.from_uri(uri)
        except (ValueError, OSError) as e:
            raise UnsafeStoreError(f"Warehouse '{uri}': cannot open '{scheme}': {e}") from e
        return ArrowFileIO(fs, scheme, options), path

    def _reconfigure(self, options: FsOptions) -> FileIO:
        return ArrowFileIO(self.fs, self.scheme, options)

    def describe(self, path: str) -> str:
        return f"{self.scheme}://{path}"

    def _info(self, path: str) -> pafs.FileInfo:
        return self.fs.get_file_info(path)

    def exists(self, path: str) -> bool:
        return bool(self._info(path).type != pafs.FileType.NotFound)

    def is_file(self, path: str) -> bool:
        return bool(self._info(path).type == pafs.FileType.File)

    def is_dir(self, path: str) -> bool:
        return bool(self._info(path).type == pafs.FileType.Directory)

    def mkdirs(self, path: str) -> None:
        self.fs.create_dir(path, recursive=True)

    def create_directory(self, path: str) -> None:
        self.fs.create_dir(path, recursive=True)

    def list_names(self, path: str) -> list[str]:
        if not self.exists(path):
            return []
        return [i.base_name for i in self.fs.get_file_info(pafs.FileSelector(path))]

    def list_dirs(self, path: str) -> list[str]:
        if not self.exists(path):
            return []
        infos = self.fs.get_file_info(pafs.FileSelector(path))
        return [i.base_name for i in infos if i.type == pafs.FileType.Directory]

    def mtime(self, path: str) -> float:
        info = self._info(path)
        return info.mtime.timestamp() if info.mtime is not None else 0.0

    def file_size(self, path: str) -> int:
        return int(self._info(path).size)

    def read_bytes(self, path: str) -> bytes:
        try:
            with self.fs.open_input_stream(path) as f:
                return cast(bytes, f.read())
        except FileNotFoundError as e:
            raise FileMissingError(f"File '{self.describe(path)}' is missing.", path) from e

    def open_input(self, path: str) -> BinaryIO:
        return cast(BinaryIO, self.fs.open_input_file(path))

    def open_output(self, path: str) -> BinaryIO:
        return cast(BinaryIO, self.fs.open_output_stream(path))

    def write_bytes(self, path: str, data: bytes) -> None:
        with self.fs.open_output_stream(path) as f:
            f.write(data)

    def overwrite_hint(self, path: str, text: str) -> None:
        tmp = temp_beside(path)
        self.write_bytes(tmp, text.encode("utf-8"))
        self.fs.move(tmp, path)

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        """Check, then move: correct only under the single writer the user promised."""
        tmp = temp_beside(path)
        self.write_bytes(tmp, data)
        try:
            if self.exists(path):
                return False
            self.fs.move(tmp, path)
            return True
        finally:
            self.delete_quietly(tmp)

    def delete_quietly(self, path: str) -> None:
        with contextlib.suppress(OSError):
            self.fs.delete_file(path)

    def delete_dir(self, path: str) -> None:
        if self.exists(path):
            self.fs.delete_dir(path)
