"""A Thrift connection to a Hive Metastore, and its table lock (Java's ``HiveCatalogLock``).

The generated client of pymetastore (the ``hive`` extra: Hive's own ``hive_metastore.thrift``,
which Hive 2.x and 3.x servers answer) over a buffered socket, one connection per catalog,
calls serialized by a lock. A call that finds the connection broken reconnects once and is sent
again when it only reads; a write is never re-sent (its outcome is unknown), it raises
CatalogConnectionError naming the metastore.

The lock is the metastore's: an EXCLUSIVE lock on the table (``lock``), polled with
``check_lock`` while WAITING, sleeping 50 ms doubled up to ``lock-check-max-sleep``, until
``lock-acquire-timeout``; then it is released and CatalogLockError is raised. Java's processes
take the very same lock, so Java's commits and ours on one table are serialized.
"""

from __future__ import annotations

import contextlib
import getpass
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from paimon_pyspark.errors import (
    CatalogConnectionError,
    CatalogLockError,
    OptionError,
    UnsupportedOptionError,
)
from paimon_pyspark.store.snapshot_commit import CommitLock

T = TypeVar("T")

FIRST_SLEEP_MS = 50
"""Java's HiveCatalogLock: the first poll after 2 x 50 ms, doubling to lock-check-max-sleep."""
SOCKET_TIMEOUT_MS = 600_000
"""Java's ``hive.metastore.client.socket.timeout`` default (600 s)."""


class MissingHiveExtraError(UnsupportedOptionError, ImportError):
    """The Hive catalog needs the ``hive`` extra: ``pip install 'paimon-pyspark[hive]'``."""


def thrift_modules() -> tuple[Any, Any, Any, Any]:
    """(ThriftHiveMetastore, ttypes, TSocket/TTransport module pair) of the ``hive`` extra."""
    try:
        from pymetastore.hive_metastore import ThriftHiveMetastore, ttypes
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport
    except ImportError as e:
        raise MissingHiveExtraError(
            f"The Hive catalog (metastore = hive) needs the 'hive' extra ({e.name} is missing): "
            "pip install 'paimon-pyspark[hive]'"
        ) from e
    return ThriftHiveMetastore, ttypes, (TSocket, TTransport), TBinaryProtocol


def parse_uris(uri: str) -> list[tuple[str, int]]:
    """``thrift://host:port[,thrift://host2:port2]`` (Java's ``uri``, Hive's
    ``hive.metastore.uris``) as (host, port) pairs, tried in order."""
    out: list[tuple[str, int]] = []
    for part in uri.split(","):
        parts = urlsplit(part.strip())
        if parts.scheme.lower() != "thrift" or not parts.hostname:
            raise OptionError(
                f"Hive catalog: option 'uri' = '{uri}' is not a metastore address; it is "
                "'thrift://host:port' (several separated by commas)."
            )
        try:
            port = parts.port or 9083
        except ValueError as e:
            raise OptionError(f"Hive catalog: option 'uri' = '{uri}': {e}.") from e
        out.append((parts.hostname, port))
    return out


class HmsClient:
    """One metastore connection, opened on first use; thread-safe, one call at a time."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.addresses = parse_uris(uri)
        self._service, self.ttypes, (self._tsocket, self._ttransport), self._protocol = (
            thrift_modules()
        )
        self._lock = threading.RLock()
        self._transport: Any = None
        self._client: Any = None

    def _connect(self) -> Any:
        errors = []
        for host, port in self.addresses:
            sock = self._tsocket.TSocket(host, port)
            sock.setTimeout(SOCKET_TIMEOUT_MS)
            transport = self._ttransport.TBufferedTransport(sock)
            try:
                transport.open()
            except Exception as e:  # TTransportException, OSError: try the next address
                errors.append(f"{host}:{port}: {e}")
                continue
            self._transport = transport
            self._client = self._service.Client(self._protocol.TBinaryProtocol(transport))
            return self._client
        raise CatalogConnectionError(
            f"Hive Metastore '{self.uri}' cannot be reached: {'; '.join(errors)}."
        )

    def _drop(self) -> None:
        transport, self._transport, self._client = self._transport, None, None
        if transport is not None:
            with contextlib.suppress(Exception):  # closing a broken socket
                transport.close()

    def call(self, method: str, *args: Any, reads: bool = True) -> Any:
        """``client.<method>(*args)``; the metastore's own exceptions (NoSuchObjectException,
        AlreadyExistsException, MetaException, ...) pass through; a broken connection is
        reopened, and a read sent again once."""
        with self._lock:
            for attempt in (1, 2):
                client = self._client or self._connect()
                try:
                    return getattr(client, method)(*args)
                except self.ttypes.TException as e:
                    if not _is_transport(e):
                        raise
                    self._drop()
                    if attempt == 2 or not reads:
                        raise CatalogConnectionError(
                            f"Hive Metastore '{self.uri}' broke off during {method}: {e}."
                        ) from e
                except OSError as e:
                    self._drop()
                    if attempt == 2 or not reads:
                        raise CatalogConnectionError(
                            f"Hive Metastore '{self.uri}' broke off during {method}: {e}."
                        ) from e
            raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            self._drop()


def _is_transport(e: BaseException) -> bool:
    from thrift.Thrift import TApplicationException
    from thrift.transport.TTransport import TTransportException

    return isinstance(e, TTransportException) and not isinstance(e, TApplicationException)


class HiveCatalogLock(CommitLock):
    """The metastore's EXCLUSIVE lock on one table, for its commits and schema changes."""

    def __init__(
        self,
        client: HmsClient,
        database: str,
        table: str,
        check_max_sleep_ms: int,
        acquire_timeout_ms: int,
    ) -> None:
        self.client = client
        self.database = database
        self.table = table
        self.check_max_sleep_ms = max(1, check_max_sleep_ms)
        self.acquire_timeout_ms = acquire_timeout_ms

    def acquire(self) -> int:
        """The lock's id once ACQUIRED; CatalogLockError (the request released) otherwise."""
        t = self.client.ttypes
        component = t.LockComponent(
            type=t.LockType.EXCLUSIVE,
            level=t.LockLevel.TABLE,
            dbname=self.database,
            tablename=self.table,
        )
        request = t.LockRequest(
            component=[component], user=getpass.getuser(), hostname=socket.gethostname()
        )
        start = time.monotonic()
        response = self.client.call("lock", request, reads=False)
        lock_id = int(response.lockid)
        sleep_ms = FIRST_SLEEP_MS
        try:
            while response.state == t.LockState.WAITING:
                if (time.monotonic() - start) * 1000 >= self.acquire_timeout_ms:
                    break
                sleep_ms = min(sleep_ms * 2, self.check_max_sleep_ms)
                time.sleep(sleep_ms / 1000)
                response = self.client.call("check_lock", t.CheckLockRequest(lockid=lock_id))
        finally:
            if response.state != t.LockState.ACQUIRED:
                self.release(lock_id)
        if response.state != t.LockState.ACQUIRED:
            state = t.LockState._VALUES_TO_NAMES.get(response.state, response.state)
            raise CatalogLockError(
                f"Table '{self.database}.{self.table}': could not acquire the Hive Metastore "
                f"lock (lockId={lock_id}) of '{self.client.uri}' within lock-acquire-timeout = "
                f"{self.acquire_timeout_ms} ms (final state {state}); nothing was committed."
            )
        return lock_id

    def release(self, lock_id: int) -> None:
        if lock_id > 0:
            # Java logs a failed unlock and goes on: the metastore times the lock out
            with contextlib.suppress(Exception):
                self.client.call("unlock", self.client.ttypes.UnlockRequest(lockid=lock_id))

    def run_with_lock(self, action: Callable[[], T]) -> T:
        lock_id = self.acquire()
        try:
            return action()
        finally:
            self.release(lock_id)
