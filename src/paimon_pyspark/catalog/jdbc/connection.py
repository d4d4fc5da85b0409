"""The JDBC catalog's database: Java's JDBC URL, spoken through a Python DB-API driver.

Mirrors org.apache.paimon.jdbc.JdbcClientPool.

Java's ``JdbcClientPool`` opens ``DriverManager.getConnection(uri, jdbc.* options)``; here the
same ``uri`` picks the driver: ``jdbc:sqlite:<file>`` Python's own :mod:`sqlite3` (no server),
``jdbc:postgresql://host[:port]/db[?k=v]`` psycopg 3 (the ``postgres`` extra, imported only
then). The catalog's SQL is Java's text with ``?`` placeholders; this adapter is all that
differs between the two drivers (psycopg takes ``%s``), so no SQLAlchemy: it would add a
dependency to translate three statements' placeholders.

Every statement runs in autocommit, as Java's (its connections are in autocommit), except
:meth:`JdbcClient.transaction`, which groups a table's row and its properties. Connections are
pooled (Java's ``client-pool-size`` idle ones are kept) and abandoned, not shared, after a fork.
Errors: a database that cannot be reached, or that breaks off, is CatalogConnectionError naming
the ``uri`` (never the password); a duplicate key is :class:`DuplicateKeyError`; any other SQL
failure is CatalogError naming the statement.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from paimon_pyspark.errors import (
    CatalogConnectionError,
    CatalogError,
    OptionError,
    UnsupportedOptionError,
)

T = TypeVar("T")

PROPERTY_PREFIX = "jdbc."
"""Java's ``JdbcCatalog.PROPERTY_PREFIX``: options under it are the driver's properties."""

SQLITE_BUSY_TIMEOUT_S = 60.0
"""How long a statement waits for another connection's write lock on the SQLite file."""

_PG_PROPERTIES = {
    # PgJDBC property (jdbc.<name> or ?name= in the URL) -> libpq keyword
    "user": "user",
    "password": "password",
    "sslmode": "sslmode",
    "sslrootcert": "sslrootcert",
    "sslcert": "sslcert",
    "sslkey": "sslkey",
    "connectTimeout": "connect_timeout",
    "ApplicationName": "application_name",
    "options": "options",
}


_SQLITE_PRAGMAS = ("journal_mode", "synchronous", "busy_timeout")
"""sqlite-jdbc properties (``jdbc.journal_mode = WAL``, ...) applied as the same PRAGMAs."""


class DuplicateKeyError(CatalogError):
    """An INSERT or UPDATE hit a primary key already there (a row another writer made)."""


def redact(uri: str) -> str:
    """``uri`` with the value of any ``password`` parameter replaced, for messages."""
    return re.sub(r"(?i)(password=)[^&;]*", r"\1***", uri)


def jdbc_properties(options: Mapping[str, str]) -> dict[str, str]:
    """Java's ``extractJdbcConfiguration``: the ``jdbc.*`` options without the prefix."""
    return {
        k[len(PROPERTY_PREFIX) :]: v for k, v in options.items() if k.startswith(PROPERTY_PREFIX)
    }


def protocol_of(uri: str) -> str:
    """``sqlite`` or ``postgresql`` (Java's ``jdbc:([^:]+):(.*)``); OptionError otherwise."""
    m = re.fullmatch(r"jdbc:([^:]+):(.*)", uri or "", re.DOTALL)
    if not m:
        raise OptionError(
            f"JDBC catalog: 'uri' = '{redact(uri)}' is not a JDBC URL; use "
            "'jdbc:sqlite:/path/catalog.db' or 'jdbc:postgresql://host:port/database'."
        )
    protocol = m.group(1).lower()
    if protocol not in ("sqlite", "postgresql"):
        raise UnsupportedOptionError(
            f"JDBC catalog: 'uri' = '{redact(uri)}': the '{protocol}' database is not "
            "supported; paimon_pyspark speaks SQLite (jdbc:sqlite:) and PostgreSQL "
            "(jdbc:postgresql:)."
        )
    return protocol


class Session:
    """One connection, with the two calls the catalog makes: ``?`` placeholders, string and
    integer arguments."""

    def __init__(self, client: JdbcClient, conn: Any) -> None:
        self._client = client
        self._conn = conn

    def _run(self, sql: str, args: Sequence[object]) -> Any:
        client = self._client
        if client.protocol == "postgresql":
            sql = sql.replace("?", "%s")
        try:
            return self._conn.execute(sql, tuple(args))
        except Exception as e:
            raise client.translate(e, sql) from e

    def execute(self, sql: str, args: Sequence[object] = ()) -> int:
        """Run an update; the number of rows it changed."""
        return int(self._run(sql, args).rowcount)

    def query(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self._run(sql, args).fetchall()]


class JdbcClient:
    """A pool of connections to the database a JDBC ``uri`` names (Java's ``JdbcClientPool``)."""

    def __init__(self, uri: str, options: Mapping[str, str], pool_size: int = 2) -> None:
        self.uri = uri
        self.protocol = protocol_of(uri)
        self._props = jdbc_properties(options)
        self._pool_size = max(1, pool_size)
        self._idle: list[Any] = []
        self._guard = threading.Lock()
        self._pid = os.getpid()
        self._closed = False
        if self.protocol == "postgresql":
            self._psycopg = _import_psycopg(uri)
            self._connect: Callable[[], Any] = self._connect_postgres
            self._pg_kwargs = self._postgres_kwargs()
        else:
            self._connect = self._connect_sqlite
            self._sqlite_path = self._sqlite_target()

    # --- connecting --------------------------------------------------------------------------

    def _sqlite_target(self) -> str:
        target = self.uri[len("jdbc:sqlite:") :].split("?", 1)[0]
        if not target:
            raise OptionError(f"JDBC catalog: 'uri' = '{self.uri}' names no SQLite file.")
        return target

    def _connect_sqlite(self) -> Any:
        target = self._sqlite_path
        try:
            conn = sqlite3.connect(
                target,
                timeout=SQLITE_BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
                uri=target.startswith("file:"),
            )
            for pragma in _SQLITE_PRAGMAS:
                value = self._props.get(pragma)
                if value is not None:
                    if not re.fullmatch(r"[A-Za-z0-9_]+", value):
                        raise OptionError(
                            f"JDBC catalog '{self.uri}': option 'jdbc.{pragma}' = '{value}' is "
                            "not a SQLite pragma value."
                        )
                    conn.execute(f"PRAGMA {pragma} = {value}")
            conn.execute("SELECT 1")
        except sqlite3.Error as e:
            raise CatalogConnectionError(
                f"JDBC catalog '{self.uri}': cannot open the SQLite database: {e}"
            ) from e
        return conn

    def _postgres_kwargs(self) -> dict[str, Any]:
        rest = self.uri[len("jdbc:postgresql:") :]
        if not rest.startswith("//"):  # jdbc:postgresql:database
            rest = "//localhost/" + rest
        parsed = urllib.parse.urlsplit("postgresql:" + rest)
        kwargs: dict[str, Any] = {
            "host": parsed.hostname or "localhost",
            "port": parsed.port or 5432,
            "dbname": urllib.parse.unquote(parsed.path.lstrip("/")) or None,
            "connect_timeout": 10,
            "autocommit": True,
        }
        props = dict(urllib.parse.parse_qsl(parsed.query))
        props.update(self._props)
        for name, value in props.items():
            if name in _PG_PROPERTIES:
                kwargs[_PG_PROPERTIES[name]] = value
            elif name == "currentSchema":
                kwargs["options"] = f"-c search_path={value}"
        return kwargs

    def _connect_postgres(self) -> Any:
        try:
            return self._psycopg.connect(**self._pg_kwargs)
        except self._psycopg.Error as e:
            raise CatalogConnectionError(
                f"JDBC catalog '{redact(self.uri)}': cannot connect to PostgreSQL: {_first_line(e)}"
            ) from e

    # --- running -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        if self._closed:
            raise CatalogError(f"JDBC catalog '{redact(self.uri)}' is closed.")
        with self._guard:
            if os.getpid() != self._pid:  # forked: the parent's connections are not ours
                self._idle, self._pid = [], os.getpid()
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        broken = False
        try:
            yield conn
        except CatalogConnectionError:
            broken = True
            raise
        finally:
            if broken or self._is_broken(conn):
                _close_quietly(conn)
            else:
                with self._guard:
                    keep = len(self._idle) < self._pool_size and not self._closed
                    if keep:
                        self._idle.append(conn)
                if not keep:
                    _close_quietly(conn)

    def _is_broken(self, conn: Any) -> bool:
        return self.protocol == "postgresql" and bool(conn.closed or conn.broken)

    def run(self, action: Callable[[Session], T]) -> T:
        """``action`` on a pooled connection, every statement committed as it runs."""
        with self._connection() as conn:
            return action(Session(self, conn))

    def transaction(self, action: Callable[[Session], T]) -> T:
        """``action``'s statements as one transaction: all of them or none."""
        with self._connection() as conn:
            if self.protocol == "postgresql":
                try:
                    with conn.transaction():
                        return action(Session(self, conn))
                except self._psycopg.Error as e:
                    raise self.translate(e, "COMMIT") from e
            session = Session(self, conn)
            session.execute("BEGIN IMMEDIATE")
            try:
                result = action(session)
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            session.execute("COMMIT")
            return result

    def execute(self, sql: str, args: Sequence[object] = ()) -> int:
        return self.run(lambda s: s.execute(sql, args))

    def query(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self.run(lambda s: s.query(sql, args))

    def table_exists(self, name: str) -> bool:
        """Whether the catalog table ``name`` is there (Java asks ``DatabaseMetaData.getTables``;
        on PostgreSQL this looks where an unqualified name resolves, the search path)."""
        if self.protocol == "postgresql":
            rows = self.query("SELECT to_regclass(?) IS NOT NULL", (name,))
            return bool(rows[0][0])
        rows = self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        return bool(rows)

    def translate(self, error: Exception, sql: str) -> Exception:
        """A driver's error as ours (see the module's docstring)."""
        if isinstance(error, CatalogError):
            return error
        where = redact(self.uri)
        if self.protocol == "postgresql":
            pg = self._psycopg
            if isinstance(error, pg.errors.UniqueViolation):
                return DuplicateKeyError(f"JDBC catalog '{where}': duplicate key: {sql}")
            if isinstance(error, pg.OperationalError | pg.InterfaceError):
                return CatalogConnectionError(
                    f"JDBC catalog '{where}': the connection to PostgreSQL failed: "
                    f"{_first_line(error)}"
                )
        elif isinstance(error, sqlite3.IntegrityError) and getattr(
            error, "sqlite_errorname", ""
        ) in ("SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_UNIQUE"):
            return DuplicateKeyError(f"JDBC catalog '{where}': duplicate key: {sql}")
        elif isinstance(error, sqlite3.OperationalError) and "unable to open" in str(error):
            return CatalogConnectionError(f"JDBC catalog '{where}': {error}")
        return CatalogError(f"JDBC catalog '{where}': {sql} failed: {_first_line(error)}")

    @property
    def uri_for_messages(self) -> str:
        """The ``uri`` without any password."""
        return redact(self.uri)

    def close(self) -> None:
        with self._guard:
            idle, self._idle, self._closed = self._idle, [], True
            same_process = os.getpid() == self._pid
        if same_process:
            for conn in idle:
                _close_quietly(conn)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _close_quietly(conn: Any) -> None:
    with contextlib.suppress(Exception):
        conn.close()


def _import_psycopg(uri: str) -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise UnsupportedOptionError(
            f"JDBC catalog '{redact(uri)}': PostgreSQL needs psycopg 3, the 'postgres' extra: "
            "pip install 'paimon-pyspark[postgres]'."
        ) from e
    return psycopg


__all__ = [
    "PROPERTY_PREFIX",
    "DuplicateKeyError",
    "JdbcClient",
    "Session",
    "jdbc_properties",
    "protocol_of",
    "redact",
]
