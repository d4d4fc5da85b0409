"""A FileIO that fails one chosen call of a real FileIO: fault injection, not a mock.

Every call still reaches the real store (S3 through moto, or local disk) except the one chosen
to fail: ``before`` fails it without sending it (the request never left), ``after`` sends it
and then fails (the request went through, its answer was lost).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, TypeVar

from paimon_pyspark.fs.file_io import FileIO

T = TypeVar("T")


class InjectedFault(OSError):
    pass


class FaultyFileIO(FileIO):
    def __init__(self, inner: FileIO) -> None:
        super().__init__(inner.options)
        self.inner = inner
        self.is_local = inner.is_local
        self.is_object_store = inner.is_object_store
        self.calls: list[str] = []
        self.fail_at: int | None = None
        self.mode = "before"
        self.recording = False

    def arm(self, fail_at: int | None, mode: str = "before") -> None:
        self.calls, self.fail_at, self.mode, self.recording = [], fail_at, mode, True

    def _call(self, name: str, call: Callable[[], T]) -> T:
        if not self.recording:
            return call()
        self.calls.append(name)
        if len(self.calls) != self.fail_at:
            return call()
        if self.mode == "before":
            raise InjectedFault(f"injected failure before call {self.fail_at} ({name})")
        call()
        raise InjectedFault(f"injected failure after call {self.fail_at} ({name})")

    def with_options(self, options: Mapping[str, str]) -> FileIO:
        return self

    def _reconfigure(self, options: Any) -> FileIO:
        return self

    def exists(self, path: str) -> bool:
        return self._call("exists", lambda: self.inner.exists(path))

    def is_file(self, path: str) -> bool:
        return self._call("is_file", lambda: self.inner.is_file(path))

    def is_dir(self, path: str) -> bool:
        return self._call("is_dir", lambda: self.inner.is_dir(path))

    def mkdirs(self, path: str) -> None:
        self._call("mkdirs", lambda: self.inner.mkdirs(path))

    def create_directory(self, path: str) -> None:
        self._call("create_directory", lambda: self.inner.create_directory(path))

    def list_names(self, path: str) -> list[str]:
        return self._call("list_names", lambda: self.inner.list_names(path))

    def list_dirs(self, path: str) -> list[str]:
        return self._call("list_dirs", lambda: self.inner.list_dirs(path))

    def mtime(self, path: str) -> float:
        return self._call("mtime", lambda: self.inner.mtime(path))

    def file_size(self, path: str) -> int:
        return self._call("file_size", lambda: self.inner.file_size(path))

    def read_bytes(self, path: str) -> bytes:
        return self._call("read_bytes", lambda: self.inner.read_bytes(path))

    def open_input(self, path: str) -> BinaryIO:
        return self._call("open_input", lambda: self.inner.open_input(path))

    def open_output(self, path: str) -> BinaryIO:
        return self._call("open_output", lambda: self.inner.open_output(path))

    def write_bytes(self, path: str, data: bytes) -> None:
        self._call("write_bytes", lambda: self.inner.write_bytes(path, data))

    def overwrite_hint(self, path: str, text: str) -> None:
        self._call("overwrite_hint", lambda: self.inner.overwrite_hint(path, text))

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        return self._call("try_write_atomic", lambda: self.inner.try_write_atomic(path, data))

    def check_atomic_publish(self, directory: str) -> None:
        self.inner.check_atomic_publish(directory)  # probed once per process: not counted

    def delete_quietly(self, path: str) -> None:
        self._call("delete_quietly", lambda: self.inner.delete_quietly(path))

    def delete_dir(self, path: str) -> None:
        self._call("delete_dir", lambda: self.inner.delete_dir(path))
