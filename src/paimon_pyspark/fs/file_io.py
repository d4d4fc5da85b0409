"""FileIO: moves bytes between paimon_pyspark and a filesystem or an object store.

Mirrors org.apache.paimon.fs.FileIO. It writes no formats (format/ does); its one piece of
policy is :meth:`FileIO.try_write_atomic`, the create-if-absent publish the commit protocol
relies on: a snapshot, schema or tag file appears whole or not at all, and never replaces one
another writer published. Each kind of store keeps that promise its own way (fs/local.py,
fs/object_store.py); a store that cannot keep it is refused (fs/arrow.py) unless the user
accepts a single writer (``fs.single-writer``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import BinaryIO

from paimon_pyspark.errors import CorruptTableError, StoreError
from paimon_pyspark.fs.options import FsOptions, fs_options


class FileIO(ABC):
    """File operations on one filesystem; paths are plain strings without scheme
    (``/abs/path`` locally, ``bucket/key`` on an object store)."""

    is_local: bool = False
    """Whether paths are local paths (``os`` calls work on them)."""

    is_object_store: bool = False
    """Whether directories are only key prefixes: they exist while something is under them."""

    def __init__(self, options: FsOptions) -> None:
        self.options = options

    @staticmethod
    def for_uri(uri: str, options: Mapping[str, str] | None = None) -> tuple[FileIO, str]:
        """A FileIO and the scheme-less path for a local path or a ``scheme://`` URI.

        ``options``: catalog or table options; the filesystem keys among them (``s3.*``,
        ``fs.single-writer``) configure the store, the rest are ignored here.
        """
        from paimon_pyspark.fs.arrow import ArrowFileIO
        from paimon_pyspark.fs.local import LocalFileIO
        from paimon_pyspark.fs.object_store import OBJECT_STORE_SCHEMES, ObjectStoreFileIO

        fs_opts = FsOptions(fs_options(options or {}))
        if uri.startswith("file:"):
            # file:///x and file:/x (as Spark and Hadoop qualify local paths) are both /x
            return LocalFileIO(fs_opts), "/" + uri[len("file:") :].lstrip("/")
        if "://" not in uri:
            return LocalFileIO(fs_opts), os.path.abspath(uri)
        scheme, rest = uri.split("://", 1)
        scheme = scheme.lower()
        if scheme in OBJECT_STORE_SCHEMES:
            return ObjectStoreFileIO(scheme, fs_opts), rest.rstrip("/")
        return ArrowFileIO.open(uri, fs_opts)

    def with_options(self, options: Mapping[str, str]) -> FileIO:
        """This FileIO, or a new one of the same kind if ``options`` change a filesystem key."""
        changed = {k: v for k, v in fs_options(options).items() if self.options.get(k) != v}
        if not changed:
            return self
        return self._reconfigure(FsOptions({**self.options.raw, **changed}))

    @abstractmethod
    def _reconfigure(self, options: FsOptions) -> FileIO: ...

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def is_file(self, path: str) -> bool:
        """Whether a file is at ``path``: one HEAD on an object store, where :meth:`exists`
        must also list the prefix to find a directory."""

    @abstractmethod
    def is_dir(self, path: str) -> bool: ...

    @abstractmethod
    def mkdirs(self, path: str) -> None:
        """Make ``path`` a directory; on an object store nothing (directories are prefixes)."""

    @abstractmethod
    def create_directory(self, path: str) -> None:
        """A directory that exists while empty (a database); on an object store a hidden
        zero-byte object inside it keeps the prefix."""

    @abstractmethod
    def list_names(self, path: str) -> list[str]:
        """Names directly under ``path``; empty when it does not exist."""

    @abstractmethod
    def list_dirs(self, path: str) -> list[str]: ...

    @abstractmethod
    def mtime(self, path: str) -> float:
        """Modification time in seconds since the epoch (0 when the filesystem has none)."""

    @abstractmethod
    def file_size(self, path: str) -> int: ...

    @abstractmethod
    def read_bytes(self, path: str) -> bytes:
        """The whole file; CorruptTableError naming it when it is missing."""

    def read_text(self, path: str) -> str:
        data = self.read_bytes(path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptTableError(f"File {path} is not UTF-8 text: {e}") from e

    @abstractmethod
    def open_input(self, path: str) -> BinaryIO:
        """A seekable input stream (data files are read through it by pyarrow)."""

    @abstractmethod
    def open_output(self, path: str) -> BinaryIO:
        """A streaming output (no whole-file buffering), durable once closed (a snapshot may
        reference the file next); :func:`abort_output` discards it."""

    @abstractmethod
    def write_bytes(self, path: str, data: bytes) -> None:
        """Write (or overwrite) a file, durable when this returns. Not atomic: use for files
        nobody reads by name yet."""

    @abstractmethod
    def overwrite_hint(self, path: str, text: str) -> None:
        """Replace a small hint file (LATEST, EARLIEST); readers see the old or the new one, and
        so does a reader after a crash."""

    @abstractmethod
    def try_write_atomic(self, path: str, data: bytes) -> bool:
        """Publish ``data`` at ``path`` only if nothing is there yet; False if it was taken.

        Raises OSError when the outcome is unknown (the request may have gone through, or went
        through but is not known to be durable): callers look for what they published before
        deciding.
        """

    def check_atomic_publish(self, directory: str) -> None:
        """Raise UnsafeStoreError if :meth:`try_write_atomic` cannot be trusted in
        ``directory``; a commit asks before it writes anything. Local disk and the refused-
        unless-accepted filesystems (fs/arrow.py) have nothing to probe."""
        return None

    @abstractmethod
    def delete_quietly(self, path: str) -> None: ...

    @abstractmethod
    def delete_dir(self, path: str) -> None:
        """Remove ``path`` and everything under it."""

    def describe(self, path: str) -> str:
        """``path`` as the user would name it (with its scheme), for messages."""
        return path


def abort_output(out: BinaryIO) -> None:
    """Discard an output stream of :meth:`FileIO.open_output` without publishing it: an object
    store's upload is aborted; a local file is closed (its caller deletes it)."""
    abort = getattr(out, "abort", None)
    if abort is not None:
        abort()
    else:
        out.close()


def temp_beside(path: str) -> str:
    """A hidden, unique name in ``path``'s directory, for a file renamed onto ``path``."""
    parent, name = os.path.split(path)
    return os.path.join(parent, f".{name}.{uuid.uuid4()}.tmp")


STORE_LIMITS = {
    errno.ENAMETOOLONG: "a file name or path longer than the filesystem allows (names of 255 "
    "bytes on most)",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EFBIG: "the file is larger than the filesystem allows",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the filesystem is read-only",
    errno.EMFILE: "this process has too many open files",
    errno.ENFILE: "the system has too many open files",
}
"""The errors of the store's limits that become :class:`StoreError`, with what each means."""


def store_error(e: OSError, path: str) -> OSError:
    """``e`` as a StoreError naming the path (``e``'s own, else ``path``) when it is one of the
    store's limits; any other error as it is (FileNotFoundError, FileExistsError, ...)."""
    if isinstance(e, StoreError) or e.errno not in STORE_LIMITS:
        return e
    where = e.filename if isinstance(e.filename, str) else path
    return StoreError(e.errno, STORE_LIMITS[e.errno], where)


@contextlib.contextmanager
def store_errors(path: str) -> Iterator[None]:
    """Raise the store's limits met inside as :func:`store_error`."""
    try:
        yield
    except OSError as e:
        translated = store_error(e, path)
        if translated is e:
            raise
        raise translated from e
