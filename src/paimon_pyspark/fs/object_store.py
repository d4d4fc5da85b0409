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

Transient failures (5xx, SlowDown, resets, timeouts) are retried in two layers, as Hadoop's S3A
does (the ``s3.*`` options, fs/options.py ``S3Retries``): obstore's client retries what it
deems safe; a call it stopped short on is then tried again whole, as a repeat cannot change
the answer: reads, listings and deletes are idempotent, a plain PUT writes the same bytes, a
conditional create refused on a repeat is checked against our bytes (``try_write_atomic``), a
read cut mid-body reopens at its offset, and a write whose completion was lost is accepted only
if the object is there with every byte written. Exhausted -> StoreRetriesExhaustedError.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import io
import os
import random
import re
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, BinaryIO, TypeVar, cast

from paimon_pyspark.errors import (
    CorruptTableError,
    FileMissingError,
    OptionError,
    StoreError,
    StoreRetriesExhaustedError,
    UnsafeStoreError,
    UnsupportedOptionError,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.fs.options import (
    S3_ACCESS_KEY,
    S3_ATTEMPTS_MAXIMUM,
    S3_ENDPOINT,
    S3_REGION,
    S3_RETRY_LIMIT,
    S3_SECRET_KEY,
    S3_SESSION_TOKEN,
    SINGLE_WRITER,
    FsOptions,
    S3Retries,
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
_MAX_BACKOFF = 15.0
_TRANSIENT_MARKS = ("HTTP error", "non-2xx status code: 5", "error response", "timed out")
"""How obstore's GenericError says a request failed in transit or with a 5xx."""
_CLIENT_RETRIES = re.compile(r"after (\d+) retries, max_retries: (\d+)")
"""How obstore's error says its client retried the request (object_store's RetryError)."""

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
        message = f"'{path}': {e}".split("\n", 1)[0]
        if any(mark in str(e) for mark in _TRANSIENT_MARKS):
            raise _TransientError(message) from e
        raise OSError(message) from e


class _TransientError(OSError):
    """A failure a later try may not see: 5xx, a reset, a timeout."""


def _retrying(
    path: str, retries: S3Retries, call: Callable[[], T], keep: tuple[type[Exception], ...] = ()
) -> T:
    """``_translate(path, call)``, tried again up to ``s3.retry.limit`` times (backoff from
    ``s3.retry.interval``) when it failed the transient way and the client stopped short of
    its ``s3.attempts.maximum`` retries (a reset or timeout of a request it does not count as
    idempotent, a body cut mid-way); a request the client retried to its maximum is final.
    Only for calls whose repeat gives the same answer (module docstring)."""
    calls = requests = 0
    while True:
        calls += 1
        try:
            return _translate(path, call, keep)
        except _TransientError as e:
            client = _CLIENT_RETRIES.search(str(e.__cause__))
            requests += 1 + (int(client[1]) if client else 0)
            if (client and int(client[1]) >= int(client[2])) or calls > retries.limit:
                raise StoreRetriesExhaustedError(
                    errno.EIO,
                    f"the store kept failing after {requests} attempts ({S3_ATTEMPTS_MAXIMUM} "
                    f"= {retries.attempts}, {S3_RETRY_LIMIT} = {retries.limit}); last: {e}",
                    path,
                ) from e
            pause = min(_MAX_BACKOFF, retries.interval * 2 ** (calls - 1))
            time.sleep(random.uniform(pause / 2, pause))


class ObjectStoreFileIO(FileIO):
    is_object_store = True

    def __init__(self, scheme: str, options: FsOptions) -> None:
        super().__init__(options)
        self.scheme = scheme
        self._retries = options.s3_retries
        self._obs = _obstore()
        self._stores: dict[str, Any] = {}
        self._lock = threading.Lock()
        if scheme in S3_SCHEMES:
            unknown = options.unknown_s3_keys()
            if unknown:
                raise UnsupportedOptionError(
                    f"Option '{unknown[0]}' is not supported by paimon_pyspark (supported: "
                    f"{S3_ENDPOINT}, s3.access-key, s3.secret-key, s3.session-token, "
                    "s3.path.style.access, s3.endpoint.region, s3.connection.timeout, "
                    "s3.connection.establish.timeout, s3.attempts.maximum, s3.retry.limit, "
                    "s3.retry.interval)."
                )

    def _call(self, path: str, call: Callable[[], T], keep: tuple[type[Exception], ...] = ()) -> T:
        return _retrying(self.describe(path), self._retries, call, keep)

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
        r = o.s3_retries
        client: dict[str, Any] = {
            "timeout": datetime.timedelta(seconds=r.request_timeout),
            "connect_timeout": datetime.timedelta(seconds=r.connect_timeout),
        }
        # the client's backoff keeps obstore's defaults (100 ms doubling to 15 s, as the AWS
        # SDK has its own); s3.retry.interval paces the retries made here
        retry = {"max_retries": r.attempts, "retry_timeout": datetime.timedelta(minutes=3)}
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
            retry_config=cast(Any, retry),
            credential_provider=provider,
        )

    def _loc(self, path: str) -> tuple[Any, str]:
        bucket, _, key = path.strip("/").partition("/")
        return self._store(bucket), key

    # --- reads -----------------------------------------------------------------------------

    def _head(self, path: str) -> dict[str, Any] | None:
        store, key = self._loc(path)
        try:
            return cast(dict[str, Any], self._call(path, lambda: self._obs.head(store, key)))
        except FileNotFoundError:
            return None

    def _has_children(self, path: str) -> bool:
        store, key = self._loc(path)
        prefix = key.rstrip("/") + "/" if key else ""

        def first() -> bool:
            return any(len(chunk) for chunk in self._obs.list(store, prefix, chunk_size=1))

        return self._call(path, first)

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
        result = self._call(path, lambda: self._obs.list_with_delimiter(store, prefix or None))
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
            return self._call(path, lambda: bytes(self._obs.get(store, key).bytes()))
        except FileNotFoundError as e:
            raise FileMissingError(f"File '{self.describe(path)}' is missing.", path) from e

    def open_input(self, path: str) -> BinaryIO:
        store, key = self._loc(path)

        def reopen() -> Any:
            return self._call(
                path, lambda: self._obs.open_reader(store, key, buffer_size=_READ_BUFFER)
            )

        return cast(BinaryIO, _Reader(self.describe(path), reopen, self._retries))

    # --- writes ----------------------------------------------------------------------------

    def mkdirs(self, path: str) -> None:
        """Nothing: a prefix exists once an object is under it."""

    def create_directory(self, path: str) -> None:
        self.write_bytes(os.path.join(path, DIRECTORY_MARKER), b"")

    def open_output(self, path: str) -> BinaryIO:
        store, key = self._loc(path)
        return cast(BinaryIO, _Writer(path, self, store, key))

    def write_bytes(self, path: str, data: bytes) -> None:
        store, key = self._loc(path)
        self._call(path, lambda: self._obs.put(store, key, data))

    def overwrite_hint(self, path: str, text: str) -> None:
        """One PUT: an object is replaced whole, so readers see the old or the new hint."""
        self.write_bytes(path, text.encode("utf-8"))

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        self.check_atomic_publish(os.path.dirname(path))
        return self.try_create(path, data)

    def try_create(self, path: str, data: bytes) -> bool:
        """A conditional create. A request whose answer was lost is sent again; if the lost
        one had gone through, the repeat is refused as taken: so a refusal is checked against
        the object's bytes, and our own bytes mean it was our create."""
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        store, key = self._loc(path)
        try:
            self._call(
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
            # a create retried after a lost answer may be refused by the first: so is it ours?
            if not self.try_create(probe, probe.encode()):
                raise self._unsafe("it refused the first create of a new object")
            try:
                self._call(
                    probe,
                    lambda: self._obs.put(store, key, b"2", mode="create"),
                    keep=(AlreadyExistsError, PreconditionError),
                )
                honoured = False
            except (AlreadyExistsError, PreconditionError):
                honoured = True
            except StoreRetriesExhaustedError:
                raise
            except OSError as e:
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
            self._call(path, lambda: self._obs.delete(store, key))

    def delete_dir(self, path: str) -> None:
        store, key = self._loc(path)
        prefix = key.rstrip("/") + "/"

        def delete_all() -> None:
            for chunk in self._obs.list(store, prefix, chunk_size=_DELETE_BATCH):
                paths = [o["path"] for o in chunk]
                if paths:
                    self._obs.delete(store, paths)

        self._call(path, delete_all)


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
    """obstore's buffered reader as the file object pyarrow expects (seekable, readinto). A
    read cut by a transient failure is made again by a new reader at the same offset, never
    by the one that failed, whose position is then unknown."""

    def __init__(self, path: str, reopen: Callable[[], Any], retries: S3Retries) -> None:
        self._path = path
        self._reopen = reopen
        self._retries = retries
        self._r = reopen()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def _read(self, n: int | None) -> Any:
        offset = int(self._r.tell())
        first = True

        def attempt() -> Any:
            nonlocal first
            if not first:
                self._r = self._reopen()
                self._r.seek(offset)
            first = False
            return self._r.read(n)

        return _retrying(self._path, self._retries, attempt)

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._read(len(view))
        n = len(data)
        view[:n] = memoryview(data)
        return n

    def read(self, size: int = -1) -> bytes:
        n = None if size is None or size < 0 else size
        return bytes(self._read(n))

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
    """A file object writing one object: up to the buffer's size, kept and sent with one PUT
    at close (retried whole like any call); past it, obstore's writer, a multipart upload whose
    steps its client retries. A multipart failure is not repeated (the bytes are gone): it is a
    StoreRetriesExhaustedError, and the upload is aborted, so a failed write leaves no object
    and no open upload (``abort`` does the same)."""

    def __init__(
        self,
        path: str,
        fio: ObjectStoreFileIO,
        store: Any,
        key: str,
    ) -> None:
        self._raw_path = path
        self._path = fio.describe(path)
        self._fio = fio
        self._store = store
        self._key = key
        self._buffer: bytearray | None = bytearray()
        self._w: Any = None
        self._opened = time.time()
        self._pos = 0
        self._aborted = False

    def writable(self) -> bool:
        return True

    def _multipart(self, call: Callable[[], T]) -> T:
        try:
            return _translate(self._path, call)
        except Exception as e:
            self._abort_upload()
            self._aborted = True  # the writer is spent: a close after this sends nothing
            if not isinstance(e, _TransientError):
                raise
            raise StoreRetriesExhaustedError(
                errno.EIO, f"a multipart upload failed and is not repeated: {e}", self._path
            ) from e

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        if self._aborted:
            return len(view)
        if self._buffer is not None:
            if len(self._buffer) + len(view) <= _WRITE_BUFFER:
                self._buffer += view
                self._pos += len(view)
                return len(view)
            pending, self._buffer = self._buffer, None
            obs = self._fio._obs
            self._w = obs.open_writer(self._store, self._key, buffer_size=_WRITE_BUFFER)
            self._multipart(lambda: self._w.write(bytes(pending)))
        self._multipart(lambda: self._w.write(view))
        self._pos += len(view)
        return len(view)

    def tell(self) -> int:
        return self._pos

    def flush(self) -> None:
        """Parts are uploaded as the buffer fills; nothing to force before close."""

    def close(self) -> None:
        if self.closed:
            return
        try:
            if self._aborted:
                pass
            elif self._buffer is not None:
                data = bytes(self._buffer)
                self._fio._call(
                    self._raw_path, lambda: self._fio._obs.put(self._store, self._key, data)
                )
            else:
                try:
                    self._multipart(self._w.close)
                except Exception as e:
                    # the completion may have gone through and its answer been lost (a
                    # repeated completion finds no upload): accept the object only if it is
                    # there, new, with every byte written
                    lost = isinstance(e, FileNotFoundError | StoreRetriesExhaustedError)
                    if not (lost and self._landed()):
                        self._abort_upload()
                        raise
        finally:
            self._buffer = None
            super().close()

    def _landed(self) -> bool:
        head = self._fio._head(self._raw_path)
        return (
            head is not None
            and int(head["size"]) == self._pos
            and head["last_modified"].timestamp() >= self._opened - 60
        )

    def _abort_upload(self) -> None:
        if self._w is not None:
            with contextlib.suppress(Exception):
                self._w.__exit__(RuntimeError, RuntimeError("aborted"), None)

    def abort(self) -> None:
        if self._aborted or self.closed:
            return
        self._aborted = True
        self._abort_upload()
        self._buffer = None
        super().close()
