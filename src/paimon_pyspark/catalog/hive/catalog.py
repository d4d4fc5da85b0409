"""The Hive Metastore catalog: Java 1.4.2's ``HiveCatalog`` (paimon-hive-catalog).

Tables live in the warehouse's directories, schema and snapshot files and all, as the
filesystem catalog keeps them; the metastore says which exist. Each database is a metastore
database whose ``locationUri`` is ``<warehouse>/<db>.db``; each table a ``MANAGED_TABLE`` whose
record is the one Java writes, so Hive, Spark and Trino see it as Paimon's and Java's
HiveCatalog opens it:

- parameters: the table's options, plus ``primary-key``, ``partition`` and ``bucket-key``
  (``sync-all-properties``, Java's default), ``table_type = PAIMON``, ``storage_handler =
  org.apache.paimon.hive.PaimonStorageHandler`` and the table's ``comment``;
- storage: ``sd.location`` the table's directory (under its database's ``locationUri``),
  Paimon's input and output formats and serde, every column with its Hive type
  (Java's ``HiveTypeUtils``: ``int``, ``decimal(10,2)``, ``struct<a:int>``, ...).

A table is listed and opened only when its record names Paimon's input and output formats, as
Java filters (Hive's own tables are left out). Creating one writes ``schema-0`` first (under the
table's lock), then the record; if the record fails the directory is deleted, so a failed create
leaves nothing. ALTER writes the next schema, then rewrites the record; if that fails the new
schema file is deleted again (Java's order). Dropping deletes the record, then the directory.

With ``lock.enabled`` (default: on object stores, as Java), each table's commits
(``LockedSnapshotCommit``) and schema changes run under the metastore's EXCLUSIVE table lock,
the one Java's ``HiveCatalogLock`` takes, and the warehouse's FileIO gets
``fs.single-writer = true`` (the lock makes that promise true).

Not supported (each refused with a typed error naming it): ``location-in-properties``,
``table.type = external`` and a table ``path`` (external tables), ``metastore.partitioned-table``
and ``metastore.tag-to-partition`` (partitions registered in the metastore), format tables,
views, and names with upper-case letters (the metastore lower-cases them).
"""

from __future__ import annotations

import contextlib
import getpass
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.catalog.hive.client import HiveCatalogLock, HmsClient
from paimon_pyspark.catalog.identifiers import (
    DB_SUFFIX,
    check_database_name,
    parse_identifier,
    parse_system_identifier,
    parse_table_identifier,
)
from paimon_pyspark.catalog.table_properties import table_properties
from paimon_pyspark.errors import (
    CatalogError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    IdentifierError,
    InvalidArgumentError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsafeStoreError,
    UnsupportedOperationError,
    UnsupportedOptionError,
    UnsupportedTypeError,
    describe,
)
from paimon_pyspark.fs.object_store import OBJECT_STORE_SCHEMES
from paimon_pyspark.fs.options import SINGLE_WRITER
from paimon_pyspark.options import parse_duration_ms, parse_java_bool
from paimon_pyspark.read.fallback_read import check_other_branches
from paimon_pyspark.schema import Schema
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.managers import SchemaManager
from paimon_pyspark.store.schema_change import RemoveOption, SchemaChange
from paimon_pyspark.store.snapshot_commit import LockedSnapshotCommit, SnapshotCommit
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.types.data_types import (
    ArrayType,
    AtomicType,
    BinaryType,
    CharType,
    DataType,
    DecimalType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
)

# --- options (Java's names and defaults) -------------------------------------------------------

URI = "uri"
LOCK_ENABLED = "lock.enabled"
LOCK_ACQUIRE_TIMEOUT = "lock-acquire-timeout"
LOCK_CHECK_MAX_SLEEP = "lock-check-max-sleep"
SYNC_ALL_PROPERTIES = "sync-all-properties"
LOCATION_IN_PROPERTIES = "location-in-properties"
TABLE_TYPE = "table.type"
_ALIASES = {
    "lock.acquire-timeout": LOCK_ACQUIRE_TIMEOUT,
    "lock.check-max-sleep": LOCK_CHECK_MAX_SLEEP,
}

# --- Java's HiveCatalog record ----------------------------------------------------------------

TABLE_TYPE_PROP = "table_type"
PAIMON_TABLE_IDENTIFIER = "PAIMON"
STORAGE_HANDLER_PROP = "storage_handler"  # hive_metastoreConstants.META_TABLE_STORAGE
INPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonInputFormat"
OUTPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonOutputFormat"
SERDE = "org.apache.paimon.hive.PaimonSerDe"
STORAGE_HANDLER = "org.apache.paimon.hive.PaimonStorageHandler"
MANAGED_TABLE = "MANAGED_TABLE"
COMMENT_PROP = "comment"
OWNER_PROP = "owner"
LOCATION_PROP = "location"
BATCH_GET_TABLES = 300  # hive.metastore.batch.retrieve.max's default
HIVE_CHAR_MAX = 255
HIVE_VARCHAR_MAX = 65535
INT_MAX = 2147483647

_HIVE_ATOMIC = {
    "BOOLEAN": "boolean",
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "INT": "int",
    "BIGINT": "bigint",
    "FLOAT": "float",
    "DOUBLE": "double",
    "DATE": "date",
    "BLOB": "binary",
    "VARIANT": "struct<value:binary,metadata:binary>",
}


def hive_type(t: DataType, where: str = "") -> str:
    """The Hive type name Java's ``HiveTypeUtils.toTypeInfo(t).getTypeName()`` gives, for a
    Hive 2.3 client (TIMESTAMP WITH LOCAL TIME ZONE is ``timestamp`` there)."""
    if isinstance(t, AtomicType) and t.name in _HIVE_ATOMIC:
        return _HIVE_ATOMIC[t.name]
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, CharType):
        if t.variable:
            return "string" if t.length > HIVE_VARCHAR_MAX else f"varchar({t.length})"
        return "string" if t.length > HIVE_CHAR_MAX else f"char({t.length})"
    if isinstance(t, BinaryType):
        return "binary"
    if isinstance(t, TimeType):
        return "string"
    if isinstance(t, TimestampType):
        return "timestamp"
    if isinstance(t, ArrayType):
        return f"array<{hive_type(t.element, where)}>"
    if isinstance(t, MultisetType):
        return f"map<{hive_type(t.element, where)},int>"
    if isinstance(t, MapType):
        return f"map<{hive_type(t.key, where)},{hive_type(t.value, where)}>"
    if isinstance(t, RowType):
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.type, where)}" for f in t.fields) + ">"
    raise UnsupportedTypeError(
        f"{where}: type {t} has no Hive type; Java's HiveCatalog refuses it too."
    )


def java_path(uri: str) -> str:
    """``uri`` as Java's ``Path.toString`` writes it: ``file:///x/`` is ``file:/x``, a
    trailing ``/`` goes."""
    if uri.startswith("file:"):
        return "file:/" + uri[len("file:") :].lstrip("/").rstrip("/")
    return uri.rstrip("/") or "/"


def _lower_case_only(kind: str, name: str) -> None:
    if name != name.lower():
        raise IdentifierError(
            f"{kind} name '{name}' has upper-case letters; the Hive Metastore lower-cases names, "
            "so the Hive catalog takes lower-case names only."
        )


class HiveCatalog(FileSystemCatalog):
    """``CatalogFactory.create({"metastore": "hive", "uri": "thrift://host:9083",
    "warehouse": W})``."""

    def __init__(self, warehouse: str, options: Mapping[str, str]) -> None:
        given = {str(k): str(v) for k, v in options.items() if v is not None}
        given.setdefault("metastore", "hive")
        for alias, key in _ALIASES.items():
            if alias in given:
                given.setdefault(key, given[alias])
        uri = given.get(URI, "").strip()
        if not uri:
            raise UnsupportedOptionError(
                "Hive catalog: option 'uri' (the metastore, 'thrift://host:9083') is required; "
                "paimon_pyspark has no embedded metastore."
            )
        if parse_java_bool(given.get(LOCATION_IN_PROPERTIES, "false"), LOCATION_IN_PROPERTIES):
            raise UnsupportedOptionError(
                f"Hive catalog: option '{LOCATION_IN_PROPERTIES}' = true is not supported; "
                "table locations are the storage descriptor's."
            )
        if given.get(TABLE_TYPE, "managed").strip().lower() != "managed":
            raise UnsupportedOptionError(
                f"Hive catalog: option '{TABLE_TYPE}' = '{given[TABLE_TYPE]}' is not supported; "
                "paimon_pyspark registers managed tables only."
            )
        scheme = warehouse.split("://", 1)[0].lower() if "://" in warehouse else "file"
        raw_lock = given.get(LOCK_ENABLED)
        self.lock_enabled = (
            parse_java_bool(raw_lock, LOCK_ENABLED)
            if raw_lock is not None
            else scheme in OBJECT_STORE_SCHEMES  # Java: fileIO.isObjectStore()
        )
        self.acquire_timeout_ms = parse_duration_ms(
            given.get(LOCK_ACQUIRE_TIMEOUT, "8 min"), LOCK_ACQUIRE_TIMEOUT
        )
        self.check_max_sleep_ms = parse_duration_ms(
            given.get(LOCK_CHECK_MAX_SLEEP, "8 s"), LOCK_CHECK_MAX_SLEEP
        )
        self.sync_properties = parse_java_bool(
            given.get(SYNC_ALL_PROPERTIES, "true"), SYNC_ALL_PROPERTIES
        )
        if not self.sync_properties:
            raise UnsupportedOptionError(
                f"Hive catalog: option '{SYNC_ALL_PROPERTIES}' = false is not supported."
            )
        fs_given = {**given, SINGLE_WRITER: "true"} if self.lock_enabled else given
        try:
            super().__init__(warehouse, fs_given)
        except UnsafeStoreError as e:
            raise UnsafeStoreError(
                f"{e} A Hive catalog serializes commits with the metastore's lock: set "
                "'lock.enabled' = 'true'."
            ) from e
        self.options = {**given, "warehouse": warehouse}
        if scheme == "local":  # a plain local mount: Java reaches it as file:
            self.warehouse_location = java_path("file:" + self.warehouse)
        elif "://" in warehouse or warehouse.startswith("file:"):
            self.warehouse_location = java_path(warehouse)
        else:
            self.warehouse_location = java_path(self.warehouse)
        """The warehouse as Java writes it in locations (``file:/x``, ``s3://b/x``, ``/x``);
        a ``local://`` mount is Java's ``file:``."""
        self.client = HmsClient(uri)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickles as its options; the copy opens its own connection."""
        return HiveCatalog, (self.uri, self.options)

    def close(self) -> None:
        self.client.close()

    # --- metastore records -------------------------------------------------------------------

    def _call(self, method: str, *args: Any, reads: bool = True) -> Any:
        return self.client.call(method, *args, reads=reads)

    def _hms_database(self, name: str) -> Any:
        try:
            return self._call("get_database", name)
        except self.client.ttypes.NoSuchObjectException:
            raise DatabaseNotExistError(name) from None

    def _hms_table(self, db: str, name: str) -> Any | None:
        """The table's record, or None."""
        try:
            return self._call("get_table", db, name)
        except self.client.ttypes.NoSuchObjectException:
            return None

    def _paimon_table(self, db: str, name: str) -> Any:
        """The record of a Paimon table; DatabaseNotExistError / TableNotExistError else."""
        table = self._hms_table(db, name)
        if table is None:
            self._hms_database(db)
            raise TableNotExistError(f"{db}.{name}")
        if not is_paimon_table(table):
            raise TableNotExistError(
                f"{db}.{name}",
                f"The metastore's table '{db}.{name}' is not a Paimon table (input format "
                f"{table.sd.inputFormat if table.sd else None}).",
            )
        return table

    def _to_path(self, location: str, what: str) -> str:
        """The warehouse FileIO's path of a metastore location."""
        root = self.warehouse_location
        if location == root or location.startswith(root.rstrip("/") + "/"):
            return self.warehouse.rstrip("/") + location[len(root.rstrip("/")) :]
        if self.file_io.is_local and (location.startswith("file:") or location.startswith("/")):
            return (
                "/" + location[len("file:") :].lstrip("/")
                if location.startswith("file:")
                else location
            )
        raise UnsupportedOperationError(
            f"{what}: its location '{location}' is outside the warehouse '{self.uri}' on another "
            "store; paimon_pyspark opens tables of the warehouse's store only."
        )

    def _database_location(self, name: str) -> str:
        """The database's ``locationUri`` (Java: the new table's directory is under it)."""
        database = self._hms_database(name)
        return str(database.locationUri or f"{self.warehouse_location}/{name}{DB_SUFFIX}")

    def database_path(self, database: str) -> str:
        check_database_name(database)
        try:
            location = self._database_location(database)
        except DatabaseNotExistError:
            return super().database_path(database)
        return self._to_path(location, f"Database '{database}'")

    def _locate(self, identifier: str | tuple[str, str]) -> tuple[str, str, str]:
        """(database, table, directory): the record's location, else the one a new table gets
        (its database's location + name), as Java's ``getTableLocation``."""
        db, name = parse_identifier(identifier)
        table = self._hms_table(db, name)
        if table is not None and table.sd is not None and table.sd.location:
            return db, name, self._to_path(table.sd.location, f"Table '{db}.{name}'")
        return db, name, self._to_path(self._new_table_location(db, name), f"Table '{db}.{name}'")

    def _new_table_location(self, db: str, name: str) -> str:
        try:
            return f"{self._database_location(db).rstrip('/')}/{name}"
        except DatabaseNotExistError:
            return f"{self.warehouse_location}/{db}{DB_SUFFIX}/{name}"

    def lock(self, database: str, table: str) -> HiveCatalogLock:
        """The metastore's lock of ``database.table`` (the one Java's catalog takes)."""
        return HiveCatalogLock(
            self.client, database, table, self.check_max_sleep_ms, self.acquire_timeout_ms
        )

    def _with_lock(self, database: str, table: str, action: Any) -> Any:
        if not self.lock_enabled:
            return action()
        return self.lock(database, table).run_with_lock(action)

    def _record(self, db: str, name: str, schema: TableSchema, location: str) -> Any:
        """The table record Java's ``createHiveTable`` builds."""
        t = self.client.ttypes
        now = int(time.time())
        params = table_properties(schema)
        params[TABLE_TYPE_PROP] = PAIMON_TABLE_IDENTIFIER
        params[STORAGE_HANDLER_PROP] = STORAGE_HANDLER
        table = t.Table(
            tableName=name,
            dbName=db,
            owner=getpass.getuser(),
            createTime=now,
            lastAccessTime=now,
            retention=INT_MAX,
            partitionKeys=[],
            parameters=params,
            tableType=MANAGED_TABLE,
        )
        self._fill_storage(table, f"{db}.{name}", schema, location)
        return table

    def _fill_storage(self, table: Any, full: str, schema: TableSchema, location: str) -> None:
        """Java's ``updateHmsTable``: formats, serde, columns, comment and location."""
        t = self.client.ttypes
        sd = table.sd if table.sd is not None else t.StorageDescriptor()
        sd.inputFormat = INPUT_FORMAT
        sd.outputFormat = OUTPUT_FORMAT
        serde = sd.serdeInfo if sd.serdeInfo is not None else t.SerDeInfo()
        serde.parameters = {}
        serde.serializationLib = SERDE
        sd.serdeInfo = serde
        sd.cols = [
            t.FieldSchema(name=f.name, type=hive_type(f.type, full), comment=f.description)
            for f in schema.fields
        ]
        sd.location = location
        table.sd = sd
        if schema.comment is not None:
            table.parameters[COMMENT_PROP] = schema.comment

    # --- databases ---------------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        """Every database of the metastore (``default`` included), as Java lists them."""
        return sorted(self._call("get_all_databases"))

    def create_database(
        self, name: str, ignore_if_exists: bool = False, properties: Mapping[str, str] | None = None
    ) -> None:
        """A metastore database at ``<warehouse>/<name>.db`` (or ``properties['location']``);
        ``comment`` and ``owner`` become its description and owner, the rest its parameters."""
        check_database_name(name)
        _lower_case_only("Database", name)
        if properties is not None and not isinstance(properties, Mapping):
            raise InvalidArgumentError(
                f"create_database('{name}'): properties must be a mapping, got "
                f"{describe(properties)}."
            )
        props = {str(k): str(v) for k, v in (properties or {}).items()}
        t = self.client.ttypes
        database = t.Database(
            name=name,
            description=props.pop(COMMENT_PROP, None),
            ownerName=props.pop(OWNER_PROP, None),
            locationUri=props.pop(LOCATION_PROP, None)
            or f"{self.warehouse_location}/{name}{DB_SUFFIX}",
            parameters=props,
        )
        try:
            self._call("create_database", database, reads=False)
        except t.AlreadyExistsException:
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistError(name) from None

    def get_database(self, name: str) -> dict[str, Any]:
        """``name``, ``location`` and ``options`` (parameters, with ``comment``, ``owner`` and
        ``location`` as Java's ``getDatabase`` adds them)."""
        check_database_name(name)
        database = self._hms_database(name)
        options = dict(database.parameters or {})
        if database.description is not None:
            options[COMMENT_PROP] = database.description
        if database.ownerName is not None:
            options[OWNER_PROP] = database.ownerName
        if database.locationUri is not None:
            options[LOCATION_PROP] = database.locationUri
        return {"name": name, "location": database.locationUri, "options": options}

    def drop_database(
        self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False
    ) -> None:
        """Java's order: refuse a database with tables unless ``cascade``; then the metastore
        drops it with its tables and their data (``deleteData``, ``cascade``)."""
        check_database_name(name)
        try:
            self._hms_database(name)
        except DatabaseNotExistError:
            if ignore_if_not_exists:
                return
            raise
        if not cascade and self.list_tables(name):
            raise CatalogError(f"Database '{name}' is not empty; drop it with cascade=True.")
        try:
            self._call("drop_database", name, True, True, reads=False)
        except self.client.ttypes.NoSuchObjectException:
            if not ignore_if_not_exists:
                raise DatabaseNotExistError(name) from None

    # --- tables ------------------------------------------------------------------------------

    def list_tables(self, database_name: str) -> list[str]:
        """The database's Paimon tables: records naming Paimon's input and output formats."""
        check_database_name(database_name)
        self._hms_database(database_name)
        names = list(self._call("get_all_tables", database_name))
        out: list[str] = []
        for i in range(0, len(names), BATCH_GET_TABLES):
            batch = names[i : i + BATCH_GET_TABLES]
            for table in self._call("get_table_objects_by_name", database_name, batch):
                if is_paimon_table(table):
                    out.append(table.tableName)
        return sorted(out)

    def create_table(
        self, identifier: str | tuple[str, str], schema: Schema, ignore_if_exists: bool = False
    ) -> None:
        """``schema-0`` in ``<database location>/<name>`` (under the table's lock), then the
        record; a failed record deletes the directory again."""
        db, name = parse_identifier(identifier)
        full = f"{db}.{name}"
        _lower_case_only("Table", name)
        if not isinstance(schema, Schema):
            raise InvalidArgumentError(
                f"create_table('{full}'): schema must be a paimon_pyspark Schema (see "
                f"Schema.from_pyarrow_schema), got {describe(schema)}."
            )
        if "path" in schema.options:
            raise UnsupportedOptionError(
                f"Table '{full}': option 'path' (an external table) is not supported by the "
                "Hive catalog here."
            )
        for key in ("metastore.partitioned-table", "metastore.tag-to-partition"):
            if key in schema.options and schema.options[key].strip().lower() not in ("", "false"):
                raise UnsupportedOptionError(
                    f"Table '{full}': option '{key}' (partitions registered in the metastore) "
                    "is not supported by paimon_pyspark's Hive catalog."
                )
        if schema.options.get("type", "table").strip().lower() != "table":
            raise UnsupportedOptionError(
                f"Table '{full}': option 'type' = '{schema.options['type']}' is not supported "
                "by paimon_pyspark's Hive catalog (Paimon tables only)."
            )
        location = self._new_table_location(db, name)
        self._hms_database(db)
        existing = self._hms_table(db, name)
        if existing is not None:
            if not is_paimon_table(existing):
                raise CatalogError(
                    f"Table {full} already exists, but this table is not a paimon table."
                )
            if ignore_if_exists:
                return
            raise TableAlreadyExistError(full)
        path = self._to_path(location, f"Table '{full}'")
        manager = SchemaManager(self.file_io, path)
        table_schema = schema.to_table_schema(0, int(time.time() * 1000), full)
        for f in table_schema.fields:
            hive_type(f.type, f"Table '{full}' column '{f.name}'")
        check_other_branches(self.file_io, path, table_schema.options, full)
        record = self._record(db, name, table_schema, location)

        def write() -> bool:
            return not manager.list_ids() and manager.commit_new(table_schema)

        if not self._with_lock(db, name, write):
            if ignore_if_exists and self._hms_table(db, name) is not None:
                return
            raise CatalogError(
                f"Table '{full}': its directory {self.file_io.describe(path)} already holds a "
                "schema the metastore has no record of (left by a failed create or dropped from "
                "the metastore alone); delete the directory to create the table here."
            )
        try:
            self._call("create_table", record, reads=False)
        except BaseException as e:
            with contextlib.suppress(Exception):
                self.file_io.delete_dir(path)
            if isinstance(e, self.client.ttypes.AlreadyExistsException):
                raise TableAlreadyExistError(full) from e
            if isinstance(e, CatalogError):
                raise
            if isinstance(e, Exception):
                raise CatalogError(f"Failed to create table {full}: {_message(e)}") from e
            raise

    def get_table(self, identifier: str | tuple[str, str]) -> FileStoreTable:
        """The table if the metastore has its Paimon record; with the lock, its commits publish
        while holding the metastore's table lock."""
        db, name, _branch, system = parse_table_identifier(identifier)
        if system is not None:
            return cast(FileStoreTable, self.get_system_table(identifier))
        self._paimon_table(db, name)
        return super().get_table(identifier)

    def snapshot_commit(self, database: str, table: str) -> SnapshotCommit | None:
        """With the lock, a commit publishes while holding the metastore's table lock."""
        return LockedSnapshotCommit(self.lock(database, table)) if self.lock_enabled else None

    def alter_table(
        self,
        identifier: str | tuple[str, str],
        changes: Sequence[SchemaChange],
        ignore_if_not_exists: bool = False,
    ) -> None:
        """The next schema file (under the table's lock), then the record rewritten from it
        (options, keys, columns; removed options removed); if that fails the schema file is
        deleted again. A branch's ALTER leaves the record alone, as Java."""
        db, name, branch, system = parse_table_identifier(identifier)
        if system is not None:
            raise IdentifierError(
                f"Cannot 'alterTable' for system table '{db}.{name}${system}', please use data "
                "table."
            )
        try:
            record = self._paimon_table(db, name)
        except (TableNotExistError, DatabaseNotExistError):
            if ignore_if_not_exists:
                return
            raise
        self._with_lock(db, name, lambda: super(HiveCatalog, self).alter_table(identifier, changes))
        if branch is not None:
            return
        location = record.sd.location
        manager = SchemaManager(self.file_io, self._to_path(location, f"Table '{db}.{name}'"))
        latest = manager.latest()
        if latest is None:
            return
        removed = {c.key for c in changes if isinstance(c, RemoveOption)}
        params = dict(record.parameters or {})
        params.update(table_properties(latest))
        for key in removed:
            params.pop(key, None)
        record.parameters = params
        self._fill_storage(record, f"{db}.{name}", latest, location)
        env = self.client.ttypes.EnvironmentContext(
            properties={
                "CASCADE": "true",
                "DO_NOT_UPDATE_STATS": str(
                    params.get("DO_NOT_UPDATE_STATS", "false").lower() == "true"
                ).lower(),
            }
        )
        try:
            self._call("alter_table_with_environment_context", db, name, record, env, reads=False)
        except Exception as e:
            self.file_io.delete_quietly(manager.schema_path(latest.id))
            raise CatalogError(
                f"Failed to alter table {db}.{name} in the metastore: {_message(e)}; its new "
                f"schema {latest.id} was deleted again."
            ) from e

    def drop_table(
        self, identifier: str | tuple[str, str], ignore_if_not_exists: bool = False
    ) -> None:
        """Delete the record (the metastore deletes a managed table's data too), then the
        directory if it is still there (Java's order)."""
        db, name, system = parse_system_identifier(identifier)
        if system is not None:
            raise IdentifierError(
                f"Cannot 'dropTable' for system table '{db}.{name}${system}', please use data "
                "table."
            )
        try:
            record = self._paimon_table(db, name)
        except (TableNotExistError, DatabaseNotExistError):
            if ignore_if_not_exists:
                return
            raise
        path = self._to_path(record.sd.location, f"Table '{db}.{name}'")
        env = self.client.ttypes.EnvironmentContext(properties={"ifPurge": "TRUE"})
        try:
            self._call("drop_table_with_environment_context", db, name, True, env, reads=False)
        except self.client.ttypes.NoSuchObjectException:
            if not ignore_if_not_exists:
                raise TableNotExistError(f"{db}.{name}") from None
            return
        with contextlib.suppress(Exception):
            if self.file_io.exists(path):
                self.file_io.delete_dir(path)

    def rename_table(
        self,
        source_identifier: str | tuple[str, str],
        target_identifier: str | tuple[str, str],
        ignore_if_not_exists: bool = False,
    ) -> None:
        """Java's ``renameTableImpl``: rename the record; then, if the table's directory would
        move (its location is under the old database), rename the directory and point the
        record at it. Local and HDFS warehouses only."""
        for ident in (source_identifier, target_identifier):
            db, name, system = parse_system_identifier(ident)
            if system is not None:
                raise IdentifierError(
                    f"Cannot 'renameTable' for system table '{db}.{name}${system}', please use "
                    "data table."
                )
        from_db, from_name = parse_identifier(source_identifier)
        to_db, to_name = parse_identifier(target_identifier)
        _lower_case_only("Table", to_name)
        try:
            record = self._paimon_table(from_db, from_name)
        except (TableNotExistError, DatabaseNotExistError):
            if ignore_if_not_exists:
                return
            raise
        if self._hms_table(to_db, to_name) is not None:
            raise TableAlreadyExistError(f"{to_db}.{to_name}")
        to_location = self._new_table_location(to_db, to_name)
        self._hms_database(to_db)
        from_location = record.sd.location
        from_path = self._to_path(from_location, f"Table '{from_db}.{from_name}'")
        to_path = self._to_path(to_location, f"Table '{to_db}.{to_name}'")
        if from_path != to_path and self.file_io.exists(to_path):
            raise TableAlreadyExistError(f"{to_db}.{to_name}")
        move = self._directory_mover(f"{from_db}.{from_name}", f"{to_db}.{to_name}")
        record.dbName, record.tableName = to_db, to_name
        self._call("alter_table", from_db, from_name, record, reads=False)
        moved = self._hms_table(to_db, to_name)
        current = moved.sd.location if moved is not None and moved.sd else from_location
        if current == from_location and from_path != to_path:
            try:
                move(from_path, to_path)
            except Exception as e:
                record.dbName, record.tableName = from_db, from_name
                with contextlib.suppress(Exception):
                    self._call("alter_table", to_db, to_name, record, reads=False)
                raise CatalogError(
                    f"Failed to rename table {from_db}.{from_name} to table {to_db}.{to_name}: {e}"
                ) from e
            record = moved if moved is not None else record
            record.sd.location = to_location
            self._call("alter_table", to_db, to_name, record, reads=False)

    def _directory_mover(self, source: str, target: str) -> Any:
        """A rename of one table directory on this store, or UnsupportedOperationError."""
        import os

        if self.file_io.is_local:

            def local(a: str, b: str) -> None:
                os.makedirs(os.path.dirname(b), exist_ok=True)
                os.rename(a, b)

            return local
        raise UnsupportedOperationError(
            f"rename_table('{source}', '{target}'): paimon_pyspark's Hive catalog renames "
            "table directories on local filesystems only."
        )


def is_paimon_table(table: Any) -> bool:
    """Java's ``isPaimonTable``: the record names Paimon's input and output formats."""
    sd = table.sd
    return sd is not None and sd.inputFormat == INPUT_FORMAT and sd.outputFormat == OUTPUT_FORMAT


def _message(e: BaseException) -> str:
    return str(getattr(e, "message", None) or e)
