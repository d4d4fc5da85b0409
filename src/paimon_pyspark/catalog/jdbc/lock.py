"""Java's JDBC catalog lock: one row per held lock in ``paimon_distributed_locks``.

Mirrors org.apache.paimon.jdbc.JdbcCatalogLock and the SQLite and PostgreSQL
``DistributedLockDialect``s.

A lock is the row ``lock_id = '<catalog-key>.<database>.<table>'`` (Java's
``JdbcCatalogLock``); acquiring it is an INSERT, which the primary key lets one writer win;
releasing it is a DELETE. Before each attempt the row is deleted if it is older than its
``expire_time_seconds`` (``lock-acquire-timeout`` in whole seconds, as Java writes it), so a
lock whose holder died frees itself; the age is measured by the database's own clock
(``acquired_at`` defaults to ``CURRENT_TIMESTAMP``), with Java's SQL for each database. Java's
processes and ours take and free the same rows, so they serialize each other's commits.

An attempt that fails sleeps and tries again, doubling the sleep (from 100 ms, with jitter) up to
``lock-check-max-sleep``, until ``lock-acquire-timeout`` has passed: then CatalogLockError, and
nothing was done.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from paimon_pyspark.catalog.jdbc.connection import DuplicateKeyError, JdbcClient, Session
from paimon_pyspark.errors import CatalogConnectionError, CatalogError, CatalogLockError
from paimon_pyspark.store.snapshot_commit import CommitLock

T = TypeVar("T")

LOCKS_TABLE = "paimon_distributed_locks"
LOCK_ID = "lock_id"
ACQUIRED_AT = "acquired_at"
EXPIRE_TIME = "expire_time_seconds"

CREATE_LOCKS_TABLE = (
    f"CREATE TABLE {LOCKS_TABLE}({LOCK_ID} VARCHAR(%d) NOT NULL,"
    f"{ACQUIRED_AT} TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,"
    f"{EXPIRE_TIME} BIGINT DEFAULT 0 NOT NULL,PRIMARY KEY ({LOCK_ID}))"
)
"""The same DDL for SQLite, PostgreSQL (and Java's MySQL); ``%d`` is ``lock-key-max-length``."""

ACQUIRE_SQL = f"INSERT INTO {LOCKS_TABLE} ({LOCK_ID},{EXPIRE_TIME}) VALUES (?,?)"
RELEASE_SQL = f"DELETE FROM {LOCKS_TABLE} WHERE {LOCK_ID} = ?"
RELEASE_EXPIRED_SQL = {
    "sqlite": (
        f"DELETE FROM {LOCKS_TABLE} WHERE  strftime('%s', 'now') - strftime('%s', "
        f"{ACQUIRED_AT}) > {EXPIRE_TIME} and {LOCK_ID} = ?"
    ),
    "postgresql": (
        f"DELETE FROM {LOCKS_TABLE} WHERE EXTRACT(EPOCH FROM AGE(NOW(), {ACQUIRED_AT})) >"
        f"{EXPIRE_TIME} and {LOCK_ID} = ?"
    ),
}

FIRST_SLEEP_MS = 100
"""The first retry's sleep, Java's (50 ms doubled before the first sleep), doubling up to
``lock-check-max-sleep`` as Java's does. Not lower: writers that retry sooner than Java's win
the row more often, and a Java writer sharing the lock with ours was starved (4 of ours and 2
of Java's: every Java commit after all of ours) when ours began at 10 ms."""


def lock_id(catalog_key: str, database: str, table: str) -> str:
    """Java's lock name for a table: ``<catalog-key>.<database>.<table>`` (a branch's commits
    take their table's lock)."""
    return f"{catalog_key}.{database}.{table}"


def create_if_absent(client: JdbcClient, name: str, ddl: str) -> None:
    """Run Java's ``CREATE TABLE`` DDL unless table ``name`` is there. Processes that open the
    catalog at once may race: ``IF NOT EXISTS`` covers SQLite, and PostgreSQL's duplicate
    catalog entry in that race is ignored once the table is there."""
    try:
        client.execute(ddl.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
    except CatalogConnectionError:
        raise
    except CatalogError:
        if not client.table_exists(name):
            raise


def create_locks_table(client: JdbcClient, max_key_length: int) -> None:
    """Create ``paimon_distributed_locks`` if it is not there (Java's check, then CREATE)."""
    if not client.table_exists(LOCKS_TABLE):
        create_if_absent(client, LOCKS_TABLE, CREATE_LOCKS_TABLE % max_key_length)


class JdbcCatalogLock(CommitLock):
    """The lock of one table, for its commits (``LockedSnapshotCommit``) and its schema
    changes."""

    def __init__(
        self,
        client: JdbcClient,
        catalog_key: str,
        database: str,
        table: str,
        check_max_sleep_ms: int,
        acquire_timeout_ms: int,
    ) -> None:
        self.client = client
        self.table = f"{database}.{table}"
        self.lock_id = lock_id(catalog_key, database, table)
        self.check_max_sleep_ms = max(1, check_max_sleep_ms)
        self.acquire_timeout_ms = acquire_timeout_ms

    def try_acquire(self) -> bool:
        """One attempt (Java's ``JdbcUtils.acquire``): clear the row if expired, then insert it.
        False when another holds it; CatalogConnectionError when the database is gone."""

        def attempt(session: Session) -> bool:
            session.execute(RELEASE_EXPIRED_SQL[self.client.protocol], (self.lock_id,))
            try:
                return (
                    session.execute(ACQUIRE_SQL, (self.lock_id, self.acquire_timeout_ms // 1000))
                    > 0
                )
            except DuplicateKeyError:
                return False
            except CatalogConnectionError:
                raise
            except CatalogError:  # Java: any SQLException of the insert is "not acquired"
                return False

        if self.client.protocol == "sqlite":  # one write transaction (one fsync), not two
            return self.client.transaction(attempt)
        return self.client.run(attempt)

    def acquire(self) -> None:
        """Take the lock, retrying until ``lock-acquire-timeout``; CatalogLockError then."""
        start = time.monotonic()
        sleep_ms = FIRST_SLEEP_MS
        while not self.try_acquire():
            waited_ms = (time.monotonic() - start) * 1000
            if waited_ms > self.acquire_timeout_ms:
                raise CatalogLockError(
                    f"Table '{self.table}': could not acquire the JDBC catalog lock "
                    f"'{self.lock_id}' in {self.client.uri_for_messages} within "
                    f"lock-acquire-timeout = {self.acquire_timeout_ms} ms (waited "
                    f"{waited_ms:.0f} ms); nothing was committed."
                )
            # jittered around Java's sleep, so waiters that failed together do not retry together
            time.sleep(min(sleep_ms, self.check_max_sleep_ms) * random.uniform(0.5, 1.5) / 1000)
            sleep_ms = min(sleep_ms * 2, self.check_max_sleep_ms)

    def release(self) -> None:
        self.client.execute(RELEASE_SQL, (self.lock_id,))

    def run_with_lock(self, action: Callable[[], T]) -> T:
        self.acquire()
        try:
            return action()
        finally:
            self.release()
