"""Object stores (S3 and S3-compatible servers, GCS, Azure Blob) through obstore.

obstore is the Python binding of Rust's ``object_store``: one client per bucket, requests made
without the GIL, multipart uploads for streams, and, what the commit protocol needs, a
conditional create: ``put(mode="create")`` sends ``If-None-Match: *`` on S3 (a generation
precondition on GCS, ``If-None-Match`` on Azure), so of two writers publishing snapshot N exactly
one wins and the other is told so.

A server may accept the request and ignore the condition (older S3-compatible servers do). The
first atomic publish of a process into a bucket therefore probes it: create a probe object
twice; if the second create succeeds, the store is refused with UnsafeStoreError naming it
(unless ``fs.single-writer``), before any snapshot is published.

Directories are key prefixes: ``mkdirs`` does nothing, and a database directory, which must
exist while empty, holds a hidden zero-byte object.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import threading
import uuid
from collections.abc import Callable
from typing import Any, BinaryIO, TypeVar, cast

from paimon_pyspark.errors import (
    CorruptTableError,
    FileMissingError,
    OptionError,
    StoreError,
    UnsafeStoreError,
    UnsupportedOptionError,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.fs.options import (
    S3_ACCESS_KEY,
    S3_ENDPOINT,
    S3_REGION,
    S3_SECRET_KEY,
    S3_SESSION_TOKEN,
    SINGLE_WRITER,
    FsOptions,
)

S3_SCHEMES = ("s3", "s3a")
OBJECT_STORE_SCHEMES = (*S3_SCHEMES, "gs", "az", "abfs", "abfss")
DIRECTORY_MARKER = ".paimon-directory"
"""The zero-byte object that keeps an empty database directory on an object store."""
_ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT")
"""Where obstore looks for the endpoint when ``s3.endpoint`` is not set, in its order."""
_READ_BUFFER = 4 * 1024 * 1024
_WRITE_BUFFER = 10 * 1024 * 1024
_DELETE_BATCH = 1000
_PROBED: dict[tuple[str, ...], bool] = {}
_PROBE_LOCK = threading.Lock()

T = TypeVar("T")


def _obstore() -> Any:
    try:
        import obstore
    except ImportError as e:  # the s3 extra is not installed
        raise UnsupportedOptionError(
            "Object-store warehouses need obstore: pip install 'paimon-pyspark[s3]'."
        ) from e
    return obstore


def _translate(path: str, call: Callable[[], T], keep: tuple[type[Exception], ...] = ()) -> T:
    """Run ``call``; a missing object becomes FileNotFoundError, a refused permission or
    credential a StoreError (EACCES), any other store error (but those in ``keep``) an OSError,
    so callers see the same errors as on a filesystem."""
    from obstore.exceptions import (
        BaseError,
        NotFoundError,
        PermissionDeniedError,
        UnauthenticatedError,
    )

    try:
        return call()
    except keep:
        raise
    except NotFoundError as e:
        raise FileNotFoundError(f"'{path}' does not exist") from e
    except (PermissionDeniedError, UnauthenticatedError) as e:
        why = f"permission denied by the store: {e}".split("\n", 1)[0]
        raise StoreError(errno.EACCES, why, path) from e
    except BaseError as e:
        raise OSError(f"'{path}': {e}".split("\n", 1)[0]) from e


class ObjectStoreFileIO(FileIO):
    is_object_store = True

    def __init__(self, scheme: str, options: FsOptions) -> None:
        super().__init__(options)
        self.scheme = scheme
        self._obs = _obstore()
        self._stores: dict[str, Any] = {}
        self._lock = threading.Lock()
        if scheme in S3_SCHEMES:
            unknown = options.unknown_s3_keys()
            if unknown:
                raise UnsupportedOptionError(
                    f"Option '{unknown[0]}' is not supported by paimon_pyspark (supported: "
                    f"{S3_ENDPOINT}, s3.access-key, s3.secret-key, s3.session-token, "
                    "s3.path.style.access, s3.endpoint.region)."
                )

    def _reconfigure(self, options: FsOptions) -> FileIO:
        return ObjectStoreFileIO(self.scheme, options)

    def describe(self, path: str) -> str:
        return f"{self.scheme}://{path}"

    # --- stores ----------------------------------------------------------------------------

    def _store(self, bucket: str) -> Any:
        with self._lock:
            store = self._stores.get(bucket)
            if store is None:
                store = _translate(self.describe(bucket), lambda: self._new_store(bucket))
                self._stores[bucket] = store
            return store

    def _new_store(self, bucket: str) -> Any:
        from obstore.store import S3Store, from_url

        if self.scheme not in S3_SCHEMES:
            return from_url(f"{self.scheme}://{bucket}")
        o = self.options
        config: dict[str, Any] = {}
        endpoint = o.get(S3_ENDPOINT)
        if endpoint:
            config["endpoint"] = endpoint if "://" in endpoint else f"https://{endpoint}"
        for keys, name in (
            (S3_ACCESS_KEY, "access_key_id"),
            (S3_SECRET_KEY, "secret_access_key"),
            (S3_SESSION_TOKEN, "session_token"),
            (S3_REGION, "region"),
        ):
            value = o.first(keys)
            if value is not None:
                config[name] = value
        if o.s3_path_style:
            config["virtual_hosted_style_request"] = False
        client: dict[str, Any] = {}
        env_endpoint = next((os.environ[k] for k in _ENDPOINT_VARIABLES if k in os.environ), "")
        if str(config.get("endpoint", env_endpoint)).startswith("http://"):
            client["allow_http"] = True
        provider = None
        if "access_key_id" not in config and not os.environ.get("AWS_ACCESS_KEY_ID"):
            provider = _profile_credentials()
        # S3Store reads the standard AWS_* environment variables for whatever is not set here
        return S3Store(
            bucket,
            config=cast(Any, config),
            client_options=cast(Any, client),
            credential_provider=provider,
        )

    def _loc(self, path: str) -> tuple[Any, str]:
        bucket, _, key = path.strip("/").partition("/")
        return self._store(bucket), key

    # --- reads -----------------------------------------------------------------------------

    def _head(self, path: str) -> dict[str, Any] | None:
        store, key = self._loc(path)
        try:
            return cast(dict[str, Any], _translate(path, lambda: self._obs.head(store, key)))
        except FileNotFoundError:
            return None

    def _has_children(self, path: str) -> bool:
        store, key = self._loc(path)
        prefix = key.rstrip("/") + "/" if key else ""

        def first() -> bool:
            return any(len(chunk) for chunk in self._obs.list(store, prefix, chunk_size=1))

        return _translate(path, first)

    def exists(self, path: str) -> bool:
        return self._head(path) is not None or self._has_children(path)

    def is_file(self, path: str) -> bool:
        return self._head(path) is not None

    def is_dir(self, path: str) -> bool:
        return self._has_children(path)

    def _list(self, path: str) -> tuple[list[str], list[str]]:
        """(object names, directory names) directly under ``path``."""
        store, key = self._loc(path)
        prefix = key.rstrip("/")
        result = _translate(path, lambda: self._obs.list_with_delimiter(store, prefix or None))
        files = [os.path.basename(o["path"]) for o in result["objects"]]
        dirs = [os.path.basename(p.rstrip("/")) for p in result["common_prefixes"]]
        return [f for f in files if f != DIRECTORY_MARKER], dirs

    def list_names(self, path: str) -> list[str]:
        files, dirs = self._list(path)
        return files + dirs

    def list_dirs(self, path: str) -> list[str]:
        return self._list(path)[1]

    def mtime(self, path: str) -> float:
        head = self._head(path)
        if head is None:
            raise FileNotFoundError(f"'{self.describe(path)}' does not exist")
        return float(head["last_modified"].timestamp())

    def file_size(self, path: str) -> int:
        head = self._head(path)
        if head is None:
            raise FileNotFoundError(f"'{self.describe(path)}' does not exist")
        return int(head["size"])

    def read_bytes(self, path: str) -> bytes:
        store, key = self._loc(path)
        try:
            return _translate(path, lambda: bytes(self._obs.get(store, key).bytes()))
        except FileNotFoundError as e:
            raise FileMissingError(f"File '{self.describe(path)}' is missing.", path) from e

    def open_input(self, path: str) -> BinaryIO:
        store, key = self._loc(path)
        reader = _translate(
            path, lambda: self._obs.open_reader(store, key, buffer_size=_READ_BUFFER)
        )
        return cast(BinaryIO, _Reader(path, reader))

    # --- writes ----------------------------------------------------------------------------

    def mkdirs(self, path: str) -> None:
        """Nothing: a prefix exists once an object is under it."""

    def create_directory(self, path: str) -> None:
        self.write_bytes(os.path.join(path, DIRECTORY_MARKER), b"")

    def open_output(self, path: str) -> BinaryIO:
        store, key = self._loc(path)
        writer = self._obs.open_writer(store, key, buffer_size=_WRITE_BUFFER)
        return cast(BinaryIO, _Writer(path, writer))

    def write_bytes(self, path: str, data: bytes) -> None:
        store, key = self._loc(path)
        _translate(path, lambda: self._obs.put(store, key, data))

    def overwrite_hint(self, path: str, text: str) -> None:
        """One PUT: an object is replaced whole, so readers see the old or the new hint."""
        self.write_bytes(path, text.encode("utf-8"))

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        """A conditional create. The client retries a request whose answer was lost; if the
        lost one had gone through, the retry is refused as taken: so a refusal is checked
        against the object's bytes, and our own bytes mean it was our publish."""
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        store, key = self._loc(path)
        self.check_atomic_publish(os.path.dirname(path))
        try:
            _translate(
                path,
                lambda: self._obs.put(store, key, data, mode="create"),
                keep=(AlreadyExistsError, PreconditionError),
            )
        except (AlreadyExistsError, PreconditionError):
            try:
                return self.read_bytes(path) == data
            except CorruptTableError:
                return False  # taken, then removed (expired) meanwhile: not ours
        return True

    def check_atomic_publish(self, directory: str) -> None:
        """Probe the bucket once per process: a second conditional create must be refused."""
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        bucket = directory.strip("/").split("/", 1)[0]
        probe_key = (self.scheme, bucket, self.options.get(S3_ENDPOINT) or "")
        with _PROBE_LOCK:
            if probe_key in _PROBED:
                return
        if self.options.single_writer:
            return  # accepted as it is; not remembered, so another FileIO still probes
        probe = os.path.join(directory, f".paimon-probe-{uuid.uuid4()}")
        store, key = self._loc(probe)
        try:
            _translate(probe, lambda: self._obs.put(store, key, b"1", mode="create"))
            try:
                self._obs.put(store, key, b"2", mode="create")
                honoured = False
            except (AlreadyExistsError, PreconditionError):
                honoured = True
            except Exception as e:
                raise self._unsafe(f"it refused a conditional create ({e!s:.200})") from e
        finally:
            self.delete_quietly(probe)
        if not honoured:
            raise self._unsafe("it accepted a second create of the same object")
        with _PROBE_LOCK:
            _PROBED[probe_key] = True

    def _unsafe(self, what: str) -> UnsafeStoreError:
        endpoint = self.options.get(S3_ENDPOINT) or f"the default {self.scheme} endpoint"
        return UnsafeStoreError(
            f"Store {endpoint} cannot publish a file atomically: {what}. Concurrent commits "
            "there could overwrite each other's snapshots. Use a store with conditional writes "
            f"(If-None-Match), or set '{SINGLE_WRITER}' = 'true' if only one writer at a time "
            "commits to each table."
        )

    def delete_quietly(self, path: str) -> None:
        store, key = self._loc(path)
        with contextlib.suppress(Exception):
            self._obs.delete(store, key)

    def delete_dir(self, path: str) -> None:
        store, key = self._loc(path)
        prefix = key.rstrip("/") + "/"

        def delete_all() -> None:
            for chunk in self._obs.list(store, prefix, chunk_size=_DELETE_BATCH):
                paths = [o["path"] for o in chunk]
                if paths:
                    self._obs.delete(store, paths)

        _translate(path, delete_all)


def _profile_credentials() -> Any:
    """Credentials of the AWS profile (``AWS_PROFILE`` or default) when boto3 is installed and
    a profile is configured; None lets obstore use the instance or container credentials (so
    boto3 is never the one to ask the instance metadata service)."""
    configured = os.environ.get("AWS_PROFILE") or any(
        os.path.exists(os.path.expanduser(f"~/.aws/{name}")) for name in ("credentials", "config")
    )
    if not configured:
        return None
    try:
        import boto3
        from obstore.auth.boto3 import Boto3CredentialProvider
    except ImportError:
        return None
    try:
        session = boto3.Session()
        credentials = session.get_credentials()
    except Exception as e:  # botocore's ProfileNotFound, a profile file that does not parse
        profile = os.environ.get("AWS_PROFILE", "default")
        raise OptionError(f"AWS profile '{profile}' cannot be used for S3: {e}") from e
    return None if credentials is None else Boto3CredentialProvider(session)


class _Reader(io.RawIOBase):
    """obstore's buffered reader as the file object pyarrow expects (seekable, readinto)."""

    def __init__(self, path: str, reader: Any) -> None:
        self._path = path
        self._r = reader

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = _translate(self._path, lambda: self._r.read(len(view)))
        n = len(data)
        view[:n] = memoryview(data)
        return n

    def read(self, size: int = -1) -> bytes:
        n = None if size is None or size < 0 else size
        return bytes(_translate(self._path, lambda: self._r.read(n)))

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return int(self._r.seek(offset, whence))

    def tell(self) -> int:
        return int(self._r.tell())

    def size(self) -> int:
        return int(self._r.size)

    def close(self) -> None:
        if not self.closed:
            self._r.close()
        super().close()


class _Writer(io.RawIOBase):
    """obstore's writer (a multipart upload once past its buffer) as a file object; ``abort``
    discards the upload, so a failed write leaves no object and no open upload."""

    def __init__(self, path: str, writer: Any) -> None:
        self._path = path
        self._w = writer
        self._pos = 0
        self._aborted = False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self._aborted:
            return len(memoryview(data))
        n = len(memoryview(data).cast("B"))
        _translate(self._path, lambda: self._w.write(data))
        self._pos += n
        return n

    def tell(self) -> int:
        return self._pos

    def flush(self) -> None:
        """Parts are uploaded as the buffer fills; nothing to force before close."""

    def close(self) -> None:
        if self.closed:
            return
        try:
            if not self._aborted:
                _translate(self._path, self._w.close)
        finally:
            super().close()

    def abort(self) -> None:
        if self._aborted or self.closed:
            return
        self._aborted = True
        with contextlib.suppress(Exception):
            self._w.__exit__(RuntimeError, RuntimeError("aborted"), None)
        super().close()
