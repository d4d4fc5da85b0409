"""The JDBC catalog: Java 1.4.2's ``JdbcCatalog``, on SQLite or PostgreSQL.

Mirrors org.apache.paimon.jdbc.JdbcCatalog (and the SQL of its ``JdbcUtils``).

Tables live where the filesystem catalog keeps them (``<warehouse>/<db>.db/<table>``, schema and
snapshot files and all); the database says which exist. Java's three tables, created if absent
with Java's DDL, hold it, every row under the catalog's ``catalog-key``:

- ``paimon_tables (catalog_key, database_name, table_name)``: a table exists when its row does
  (a directory without a row is not a table of this catalog, as in Java);
- ``paimon_database_properties (catalog_key, database_name, property_key, property_value)``: a
  database exists when it has a property row (``exists = true`` at least) or a table;
- ``paimon_table_properties (..., table_name, property_key, property_value)``: with
  ``sync-all-properties`` (Java's default, true), each table's options and keys, rewritten on
  every schema change;

and, with ``lock.enabled``, ``paimon_distributed_locks`` (catalog/jdbc/lock.py). So Java's
``JdbcCatalog`` and this one share a database and a warehouse, in either order.

Creating a table writes ``schema-0`` first (under the table's lock), then its row and
properties in one transaction; if registering fails the directory is deleted again, so a
failed create leaves nothing. Dropping deletes the rows, then the directory; renaming updates
the rows, then renames the directory, and puts the rows back if that fails.

With the lock, each table's commits (``LockedSnapshotCommit``) and schema changes run while its
lock row is held, and the warehouse's FileIO gets ``fs.single-writer = true``: the lock makes
that promise true, so stores without a conditional create (HDFS, a ``local://`` mount) are safe.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.catalog.identifiers import (
    DB_SUFFIX,
    check_database_name,
    parse_system_identifier,
    parse_table_identifier,
)
from paimon_pyspark.catalog.jdbc.connection import (
    DuplicateKeyError,
    JdbcClient,
    Session,
    protocol_of,
    redact,
)
from paimon_pyspark.catalog.jdbc.lock import JdbcCatalogLock, create_if_absent, create_locks_table
from paimon_pyspark.catalog.table_properties import table_properties
from paimon_pyspark.errors import (
    CatalogError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    IdentifierError,
    InvalidArgumentError,
    OptionError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsafeStoreError,
    UnsupportedOperationError,
    describe,
)
from paimon_pyspark.fs.arrow import ArrowFileIO
from paimon_pyspark.fs.object_store import OBJECT_STORE_SCHEMES
from paimon_pyspark.fs.options import SINGLE_WRITER
from paimon_pyspark.options import parse_duration_ms, parse_java_bool, parse_java_int
from paimon_pyspark.read.fallback_read import check_other_branches
from paimon_pyspark.schema import Schema
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.managers import SchemaManager
from paimon_pyspark.store.schema_change import SchemaChange
from paimon_pyspark.store.snapshot_commit import LockedSnapshotCommit, SnapshotCommit
from paimon_pyspark.table.file_store_table import FileStoreTable

# --- options (Java's names and defaults) -------------------------------------------------------

URI = "uri"
CATALOG_KEY = "catalog-key"
DEFAULT_CATALOG_KEY = "jdbc"
LOCK_ENABLED = "lock.enabled"
LOCK_ACQUIRE_TIMEOUT = "lock-acquire-timeout"
LOCK_CHECK_MAX_SLEEP = "lock-check-max-sleep"
LOCK_KEY_MAX_LENGTH = "lock-key-max-length"
CLIENT_POOL_SIZE = "client-pool-size"
SYNC_ALL_PROPERTIES = "sync-all-properties"
DEFAULT_ACQUIRE_TIMEOUT = "8 min"
DEFAULT_CHECK_MAX_SLEEP = "8 s"
_ALIASES = {
    "lock.acquire-timeout": LOCK_ACQUIRE_TIMEOUT,
    "lock.check-max-sleep": LOCK_CHECK_MAX_SLEEP,
}
"""Dotted spellings accepted for Java's hyphenated lock options."""

# --- Java's catalog tables (JdbcUtils) ---------------------------------------------------------

TABLES = "paimon_tables"
DATABASE_PROPERTIES = "paimon_database_properties"
TABLE_PROPERTIES = "paimon_table_properties"
EXISTS_PROPERTY = "exists"
LOCATION_PROPERTY = "location"

CREATE_TABLES = (
    f"CREATE TABLE {TABLES}(catalog_key VARCHAR(255) NOT NULL,database_name VARCHAR(255) NOT "
    "NULL,table_name VARCHAR(255) NOT NULL, PRIMARY KEY (catalog_key, database_name, "
    "table_name))"
)
CREATE_DATABASE_PROPERTIES = (
    f"CREATE TABLE {DATABASE_PROPERTIES}(catalog_key VARCHAR(255) NOT NULL,database_name "
    "VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),PRIMARY KEY "
    "(catalog_key, database_name, property_key))"
)
CREATE_TABLE_PROPERTIES = (
    f"CREATE TABLE {TABLE_PROPERTIES}(catalog_key VARCHAR(255) NOT NULL,database_name "
    "VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,property_key VARCHAR(255) NOT NULL,"
    "property_value VARCHAR(1000),PRIMARY KEY (catalog_key, database_name, table_name, "
    "property_key))"
)

_KEY_DB = "catalog_key = ? AND database_name = ?"
_KEY_TABLE = _KEY_DB + " AND table_name = ?"
GET_TABLE = f"SELECT * FROM {TABLES} WHERE {_KEY_TABLE}"
LIST_TABLES = f"SELECT table_name FROM {TABLES} WHERE {_KEY_DB}"
INSERT_TABLE = f"INSERT INTO {TABLES} (catalog_key, database_name, table_name)  VALUES (?,?,?)"
DELETE_TABLE = f"DELETE FROM {TABLES} WHERE {_KEY_TABLE}"
DELETE_TABLES = f"DELETE FROM  {TABLES} WHERE {_KEY_DB}"
RENAME_TABLE = f"UPDATE {TABLES} SET database_name = ? , table_name = ?  WHERE {_KEY_TABLE}"
LIST_TABLE_DATABASES = f"SELECT DISTINCT database_name FROM {TABLES} WHERE catalog_key = ?"
GET_DATABASE = f"SELECT database_name FROM {TABLES} WHERE {_KEY_DB} LIMIT 1"
GET_DATABASE_PROPERTIES = (
    f"SELECT property_key, property_value FROM {DATABASE_PROPERTIES} WHERE {_KEY_DB}"
)
INSERT_DATABASE_PROPERTIES = (
    f"INSERT INTO {DATABASE_PROPERTIES} (catalog_key, database_name, property_key, "
    "property_value) VALUES "
)
DELETE_DATABASE_PROPERTIES = f"DELETE FROM {DATABASE_PROPERTIES} WHERE {_KEY_DB}"
LIST_PROPERTY_DATABASES = (
    f"SELECT DISTINCT database_name FROM {DATABASE_PROPERTIES} WHERE catalog_key = ?"
)
INSERT_TABLE_PROPERTIES = (
    f"INSERT INTO {TABLE_PROPERTIES} (catalog_key, database_name, table_name, property_key, "
    "property_value) VALUES "
)
DELETE_TABLE_PROPERTIES = f"DELETE FROM {TABLE_PROPERTIES} WHERE {_KEY_TABLE}"
DELETE_DATABASE_TABLE_PROPERTIES = f"DELETE FROM {TABLE_PROPERTIES} WHERE {_KEY_DB}"
RENAME_TABLE_PROPERTIES = (
    f"UPDATE {TABLE_PROPERTIES} SET database_name = ? , table_name = ?  WHERE {_KEY_TABLE}"
)


def _insert_rows(session: Session, prefix: str, rows: Sequence[tuple[str, ...]]) -> None:
    """One multi-row INSERT, as Java's ``insertProperties``."""
    if rows:
        width = len(rows[0])
        values = ", ".join(["(" + ",".join("?" * width) + ")"] * len(rows))
        session.execute(prefix + values, [v for row in rows for v in row])


class JdbcCatalog(FileSystemCatalog):
    """``CatalogFactory.create({"metastore": "jdbc", "warehouse": W, "uri": "jdbc:sqlite:/f.db"})``
    (or ``jdbc:postgresql://host:port/db`` with ``jdbc.user``, ``jdbc.password``)."""

    def __init__(self, warehouse: str, options: Mapping[str, str]) -> None:
        given = {str(k): str(v) for k, v in options.items() if v is not None}
        given.setdefault("metastore", "jdbc")
        for alias, key in _ALIASES.items():
            if alias in given:
                given.setdefault(key, given[alias])
        uri = given.get(URI, "").strip()
        if not uri:
            raise OptionError(
                "JDBC catalog: option 'uri' is required, e.g. 'jdbc:sqlite:/path/catalog.db' or "
                "'jdbc:postgresql://host:5432/database'."
            )
        protocol_of(uri)  # a bad uri fails before the warehouse is opened
        self.catalog_key = given.get(CATALOG_KEY, DEFAULT_CATALOG_KEY)
        scheme = warehouse.split("://", 1)[0].lower() if "://" in warehouse else "file"
        raw_lock = given.get(LOCK_ENABLED)
        self.lock_enabled = (
            parse_java_bool(raw_lock, LOCK_ENABLED)
            if raw_lock is not None
            else scheme in OBJECT_STORE_SCHEMES  # Java: fileIO.isObjectStore()
        )
        self.acquire_timeout_ms = parse_duration_ms(
            given.get(LOCK_ACQUIRE_TIMEOUT, DEFAULT_ACQUIRE_TIMEOUT), LOCK_ACQUIRE_TIMEOUT
        )
        self.check_max_sleep_ms = parse_duration_ms(
            given.get(LOCK_CHECK_MAX_SLEEP, DEFAULT_CHECK_MAX_SLEEP), LOCK_CHECK_MAX_SLEEP
        )
        self.sync_properties = parse_java_bool(
            given.get(SYNC_ALL_PROPERTIES, "true"), SYNC_ALL_PROPERTIES
        )
        pool_size = parse_java_int(given.get(CLIENT_POOL_SIZE, "2"), CLIENT_POOL_SIZE)
        key_length = parse_java_int(given.get(LOCK_KEY_MAX_LENGTH, "255"), LOCK_KEY_MAX_LENGTH)
        fs_given = {**given, SINGLE_WRITER: "true"} if self.lock_enabled else given
        try:
            super().__init__(warehouse, fs_given)
        except UnsafeStoreError as e:
            raise UnsafeStoreError(
                f"{e} A JDBC catalog serializes commits with its lock: set 'lock.enabled' = 'true'."
            ) from e
        self.options = {**given, "warehouse": warehouse}
        self.client = JdbcClient(uri, given, pool_size)
        try:
            self._create_catalog_tables(key_length)
        except BaseException:
            self.client.close()
            raise

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickles as its options; the copy opens its own connections."""
        return JdbcCatalog, (self.uri, self.options)

    def _create_catalog_tables(self, key_length: int) -> None:
        """Java's ``initializeCatalogTablesIfNeed``: each table created when it is missing."""
        for name, ddl in (
            (TABLES, CREATE_TABLES),
            (DATABASE_PROPERTIES, CREATE_DATABASE_PROPERTIES),
            (TABLE_PROPERTIES, CREATE_TABLE_PROPERTIES),
        ):
            if not self.client.table_exists(name):
                create_if_absent(self.client, name, ddl)
        if self.lock_enabled:
            create_locks_table(self.client, key_length)

    def close(self) -> None:
        self.client.close()

    def describe_uri(self) -> str:
        """The database's ``uri``, without any password, for messages."""
        return redact(self.client.uri)

    # --- the lock ----------------------------------------------------------------------------

    def lock(self, database: str, table: str) -> JdbcCatalogLock:
        """The lock of ``database.table`` (the same row Java's catalog takes for it)."""
        return JdbcCatalogLock(
            self.client,
            self.catalog_key,
            database,
            table,
            self.check_max_sleep_ms,
            self.acquire_timeout_ms,
        )

    def _with_lock(self, database: str, table: str, action: Any) -> Any:
        if not self.lock_enabled:
            return action()
        return self.lock(database, table).run_with_lock(action)

    # --- databases ---------------------------------------------------------------------------

    def _database_exists(self, name: str) -> bool:
        """Java's ``databaseExists``: a table row or a property row under the name."""
        args = (self.catalog_key, name)
        return bool(
            self.client.query(GET_DATABASE, args)
            or self.client.query(GET_DATABASE_PROPERTIES + " LIMIT 1", args)
        )

    def _require_database(self, name: str) -> None:
        check_database_name(name)
        if not self._database_exists(name):
            raise DatabaseNotExistError(name)

    def list_databases(self) -> list[str]:
        key = (self.catalog_key,)
        rows = self.client.query(LIST_TABLE_DATABASES, key)
        rows += self.client.query(LIST_PROPERTY_DATABASES, key)
        return sorted({r[0] for r in rows})

    def create_database(
        self, name: str, ignore_if_exists: bool = False, properties: Mapping[str, str] | None = None
    ) -> None:
        """Register ``name`` with ``properties`` (plus Java's ``exists = true`` and a
        ``location``), and make its directory."""
        path = self.database_path(name)
        if properties is not None and not isinstance(properties, Mapping):
            raise InvalidArgumentError(
                f"create_database('{name}'): properties must be a mapping, got "
                f"{describe(properties)}."
            )
        if self._database_exists(name):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistError(name)
        props = {EXISTS_PROPERTY: "true", **{str(k): str(v) for k, v in (properties or {}).items()}}
        props.setdefault(LOCATION_PROPERTY, f"{self.uri.rstrip('/')}/{name}{DB_SUFFIX}")
        rows = [(self.catalog_key, name, k, v) for k, v in props.items()]
        try:
            self.client.run(lambda s: _insert_rows(s, INSERT_DATABASE_PROPERTIES, rows))
        except DuplicateKeyError:
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistError(name) from None
        try:
            self.file_io.create_directory(path)
        except BaseException:
            self.client.execute(DELETE_DATABASE_PROPERTIES, (self.catalog_key, name))
            raise

    def get_database(self, name: str) -> dict[str, Any]:
        """``name``, ``location`` and ``options`` (the database's properties but ``exists``)."""
        path = self.database_path(name)
        if not self._database_exists(name):
            raise DatabaseNotExistError(name)
        props = dict(self.client.query(GET_DATABASE_PROPERTIES, (self.catalog_key, name)))
        props.pop(EXISTS_PROPERTY, None)
        return {"name": name, "location": props.get(LOCATION_PROPERTY, path), "options": props}

    def drop_database(
        self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False
    ) -> None:
        """Delete the database's rows (its tables' with ``cascade``), then the registered tables'
        directories and the database's directory if nothing else is left in it (Java deletes
        rows only)."""
        path = self.database_path(name)
        if not self._database_exists(name):
            if ignore_if_not_exists:
                return
            raise DatabaseNotExistError(name)
        tables = self.list_tables(name)
        if tables and not cascade:
            raise CatalogError(f"Database '{name}' is not empty; drop it with cascade=True.")
        args = (self.catalog_key, name)

        def delete(s: Session) -> None:
            s.execute(DELETE_TABLES, args)
            s.execute(DELETE_DATABASE_PROPERTIES, args)
            s.execute(DELETE_DATABASE_TABLE_PROPERTIES, args)

        self.client.transaction(delete)
        for table in tables:
            self.file_io.delete_dir(os.path.join(path, table))
        with contextlib.suppress(OSError):
            if not [n for n in self.file_io.list_names(path) if not n.startswith(".")]:
                self.file_io.delete_dir(path)

    # --- tables ------------------------------------------------------------------------------

    def _registered(self, database: str, table: str) -> bool:
        return bool(self.client.query(GET_TABLE, (self.catalog_key, database, table)))

    def _not_found(self, database: str, table: str) -> CatalogError:
        if not self._database_exists(database):
            return DatabaseNotExistError(database)
        return TableNotExistError(f"{database}.{table}")

    def list_tables(self, database_name: str) -> list[str]:
        self._require_database(database_name)
        rows = self.client.query(LIST_TABLES, (self.catalog_key, database_name))
        return sorted(r[0] for r in rows)

    def create_table(
        self, identifier: str | tuple[str, str], schema: Schema, ignore_if_exists: bool = False
    ) -> None:
        """Write ``schema-0`` under the table's lock, then register the table (row and
        properties in one transaction); the directory is deleted again if registering fails."""
        db, name, path = self._locate(identifier)
        full = f"{db}.{name}"
        if not isinstance(schema, Schema):
            raise InvalidArgumentError(
                f"create_table('{full}'): schema must be a paimon_pyspark Schema (see "
                f"Schema.from_pyarrow_schema), got {describe(schema)}."
            )
        if "path" in schema.options:
            raise CatalogError(f"Table '{full}': the 'path' option cannot be set by the user.")
        self._require_database(db)
        if self._registered(db, name):
            if ignore_if_exists:
                return
            raise TableAlreadyExistError(full)
        manager = SchemaManager(self.file_io, path)
        table_schema = schema.to_table_schema(0, int(time.time() * 1000), full)
        check_other_branches(self.file_io, path, table_schema.options, full)

        def write() -> bool:
            return not manager.list_ids() and manager.commit_new(table_schema)

        if not self._with_lock(db, name, write):
            if ignore_if_exists:
                return
            if self._registered(db, name):
                raise TableAlreadyExistError(full)
            raise CatalogError(
                f"Table '{full}': its directory {self.file_io.describe(path)} already holds a "
                f"table that catalog-key '{self.catalog_key}' of {self.describe_uri()} has not "
                "registered (left by a failed create, or registered under another catalog-key); "
                "delete the directory to create the table here."
            )
        props = table_properties(table_schema) if self.sync_properties else {}

        def register(s: Session) -> None:
            s.execute(INSERT_TABLE, (self.catalog_key, db, name))
            rows = [(self.catalog_key, db, name, k, v) for k, v in props.items()]
            _insert_rows(s, INSERT_TABLE_PROPERTIES, rows)

        try:
            self.client.transaction(register)
        except BaseException as e:
            with contextlib.suppress(Exception):
                self.file_io.delete_dir(path)
            if isinstance(e, DuplicateKeyError):
                if ignore_if_exists:
                    return
                raise TableAlreadyExistError(full) from e
            raise

    def get_table(self, identifier: str | tuple[str, str]) -> FileStoreTable:
        """The table if this catalog registered it (its directory alone is not enough); with the
        lock, its commits publish while holding the table's lock row."""
        db, name, _branch, system = parse_table_identifier(identifier)
        if system is not None:
            return cast(FileStoreTable, self.get_system_table(identifier))
        if not self._registered(db, name):
            raise self._not_found(db, name)
        try:
            table = super().get_table(identifier)
        except TableNotExistError as e:
            raise TableNotExistError(
                f"{db}.{name}",
                f"It is registered in {self.describe_uri()}, but its directory "
                f"{self.file_io.describe(self.table_path((db, name)))} holds no schema.",
            ) from e
        return table

    def snapshot_commit(self, database: str, table: str) -> SnapshotCommit | None:
        """With the lock, a commit publishes while holding the table's lock row."""
        return LockedSnapshotCommit(self.lock(database, table)) if self.lock_enabled else None

    def alter_table(
        self,
        identifier: str | tuple[str, str],
        changes: Sequence[SchemaChange],
        ignore_if_not_exists: bool = False,
    ) -> None:
        """The filesystem catalog's schema change, under the table's lock; then the table's
        properties are rewritten (Java's ``alterTableImpl``)."""
        db, name, branch, system = parse_table_identifier(identifier)
        if system is None and not self._registered(db, name):
            if ignore_if_not_exists:
                return
            raise self._not_found(db, name)
        self._with_lock(db, name, lambda: super(JdbcCatalog, self).alter_table(identifier, changes))
        if self.sync_properties and branch is None:
            latest = SchemaManager(self.file_io, self.table_path((db, name))).latest()
            if latest is not None:
                self._sync_properties(db, name, latest)

    def _sync_properties(self, db: str, name: str, schema: TableSchema) -> None:
        args = (self.catalog_key, db, name)
        rows = [(*args, k, v) for k, v in table_properties(schema).items()]

        def rewrite(s: Session) -> None:
            s.execute(DELETE_TABLE_PROPERTIES, args)
            _insert_rows(s, INSERT_TABLE_PROPERTIES, rows)

        self.client.transaction(rewrite)

    def drop_table(
        self, identifier: str | tuple[str, str], ignore_if_not_exists: bool = False
    ) -> None:
        """Delete the table's rows, then its directory (Java's order)."""
        db, name, system = parse_system_identifier(identifier)
        if system is not None:
            raise IdentifierError(
                f"Cannot 'dropTable' for system table '{db}.{name}${system}', please use data "
                "table."
            )
        db, name, path = self._locate(identifier)
        args = (self.catalog_key, db, name)

        def delete(s: Session) -> int:
            deleted = s.execute(DELETE_TABLE, args)
            s.execute(DELETE_TABLE_PROPERTIES, args)
            return deleted

        if not self.client.transaction(delete):
            if ignore_if_not_exists:
                return
            raise self._not_found(db, name)
        self.file_io.delete_dir(path)

    def rename_table(
        self,
        source_identifier: str | tuple[str, str],
        target_identifier: str | tuple[str, str],
        ignore_if_not_exists: bool = False,
    ) -> None:
        """Update the table's rows, then rename its directory; if the rename fails the rows
        are put back. The target's database must exist; directories are renamed on local
        filesystems and HDFS (an object store would copy every file)."""
        for ident in (source_identifier, target_identifier):
            db, name, system = parse_system_identifier(ident)
            if system is not None:
                raise IdentifierError(
                    f"Cannot 'renameTable' for system table '{db}.{name}${system}', please use "
                    "data table."
                )
        from_db, from_name, from_path = self._locate(source_identifier)
        to_db, to_name, to_path = self._locate(target_identifier)
        if not self._registered(from_db, from_name):
            if ignore_if_not_exists:
                return
            raise self._not_found(from_db, from_name)
        if self._registered(to_db, to_name) or self.file_io.exists(to_path):
            raise TableAlreadyExistError(f"{to_db}.{to_name}")
        self._require_database(to_db)
        move = self._directory_mover(f"{from_db}.{from_name}", f"{to_db}.{to_name}")
        key = self.catalog_key

        def update(frm: tuple[str, str], to: tuple[str, str]) -> None:
            def run(s: Session) -> None:
                s.execute(RENAME_TABLE, (*to, key, *frm))
                s.execute(RENAME_TABLE_PROPERTIES, (*to, key, *frm))

            try:
                self.client.transaction(run)
            except DuplicateKeyError as e:
                raise TableAlreadyExistError(f"{to[0]}.{to[1]}") from e

        update((from_db, from_name), (to_db, to_name))
        try:
            if SchemaManager(self.file_io, from_path).list_ids():
                move(from_path, to_path)
        except BaseException as e:
            update((to_db, to_name), (from_db, from_name))
            raise CatalogError(
                f"Failed to rename table {from_db}.{from_name} to table {to_db}.{to_name}: {e}"
            ) from e

    def _directory_mover(self, source: str, target: str) -> Any:
        """A rename of one table directory on this store, or UnsupportedOperationError."""
        if self.file_io.is_local:

            def local(a: str, b: str) -> None:
                os.makedirs(os.path.dirname(b), exist_ok=True)
                os.rename(a, b)

            return local
        if isinstance(self.file_io, ArrowFileIO):  # HDFS, local://: a rename of the directory
            arrow_fs = self.file_io.fs

            def arrow(a: str, b: str) -> None:
                arrow_fs.create_dir(os.path.dirname(b), recursive=True)
                arrow_fs.move(a, b)

            return arrow
        raise UnsupportedOperationError(
            f"rename_table('{source}', '{target}'): renaming a table directory on an object "
            "store copies every file and is not atomic; paimon_pyspark renames tables on local "
            "filesystems and HDFS only."
        )
