"""The filesystem catalog: databases are ``<name>.db`` directories, tables live inside them.

Mirrors org.apache.paimon.catalog.FileSystemCatalog. A table exists when its ``schema/``
directory holds a schema file; creating one publishes ``schema-0`` with create-if-absent, so two
concurrent creators cannot both win.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from paimon_pyspark.errors import (
    CatalogError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    TableAlreadyExistError,
    TableNotExistError,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.schema import Schema
from paimon_pyspark.store.managers import SchemaManager
from paimon_pyspark.table.file_store_table import FileStoreTable

DB_SUFFIX = ".db"
SYSTEM_DATABASE = "sys"


def parse_identifier(identifier: str | tuple[str, str]) -> tuple[str, str]:
    if isinstance(identifier, tuple):
        return identifier
    parts = identifier.split(".")
    if len(parts) != 2 or not all(parts):
        raise CatalogError(
            f"Table identifier '{identifier}' must be '<database>.<table>', e.g. 'default.orders'."
        )
    return parts[0], parts[1]


class FileSystemCatalog:
    def __init__(self, warehouse: str, options: Mapping[str, str] | None = None) -> None:
        self.uri = warehouse
        """The warehouse as given (with its scheme), for processes that open it again."""
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.file_io, self.warehouse = FileIO.for_uri(warehouse, self.options)

    def database_path(self, database: str) -> str:
        return os.path.join(self.warehouse, database + DB_SUFFIX)

    def table_path(self, identifier: str | tuple[str, str]) -> str:
        db, name = parse_identifier(identifier)
        return os.path.join(self.database_path(db), name)

    # --- databases ---------------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        return sorted(
            d[: -len(DB_SUFFIX)]
            for d in self.file_io.list_dirs(self.warehouse)
            if d.endswith(DB_SUFFIX)
        )

    def create_database(
        self, name: str, ignore_if_exists: bool = False, properties: Mapping[str, str] | None = None
    ) -> None:
        if name == SYSTEM_DATABASE:
            raise CatalogError(f"Database name '{name}' is reserved for system tables.")
        path = self.database_path(name)
        if self.file_io.exists(path):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistError(name)
        self.file_io.create_directory(path)

    def get_database(self, name: str) -> dict[str, Any]:
        if not self.file_io.exists(self.database_path(name)):
            raise DatabaseNotExistError(name)
        return {"name": name, "location": self.database_path(name)}

    def drop_database(
        self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False
    ) -> None:
        path = self.database_path(name)
        if not self.file_io.exists(path):
            if ignore_if_not_exists:
                return
            raise DatabaseNotExistError(name)
        if self.list_tables(name) and not cascade:
            raise CatalogError(f"Database '{name}' is not empty; drop it with cascade=True.")
        self.file_io.delete_dir(path)

    # --- tables ------------------------------------------------------------------------------

    def list_tables(self, database: str) -> list[str]:
        path = self.database_path(database)
        if not self.file_io.exists(path):
            raise DatabaseNotExistError(database)
        return sorted(
            t
            for t in self.file_io.list_dirs(path)
            if SchemaManager(self.file_io, os.path.join(path, t)).list_ids()
        )

    def create_table(
        self, identifier: str | tuple[str, str], schema: Schema, ignore_if_exists: bool = False
    ) -> None:
        db, name = parse_identifier(identifier)
        full = f"{db}.{name}"
        if not self.file_io.exists(self.database_path(db)):
            raise DatabaseNotExistError(db)
        if "path" in schema.options:
            raise CatalogError(f"Table '{full}': the 'path' option cannot be set by the user.")
        path = self.table_path((db, name))
        manager = SchemaManager(self.file_io, path)
        table_schema = schema.to_table_schema(0, int(time.time() * 1000), full)
        if manager.list_ids() or not manager.commit_new(table_schema):
            if ignore_if_exists:
                return
            raise TableAlreadyExistError(full)

    def get_table(self, identifier: str | tuple[str, str]) -> FileStoreTable:
        db, name = parse_identifier(identifier)
        full = f"{db}.{name}"
        path = self.table_path((db, name))
        schema = SchemaManager(self.file_io, path).latest()
        if schema is None:
            if not self.file_io.exists(self.database_path(db)):
                raise DatabaseNotExistError(db)
            raise TableNotExistError(full)
        return FileStoreTable(self.file_io.with_options(schema.options), path, full, schema)

    def drop_table(
        self, identifier: str | tuple[str, str], ignore_if_not_exists: bool = False
    ) -> None:
        db, name = parse_identifier(identifier)
        path = self.table_path((db, name))
        if not SchemaManager(self.file_io, path).list_ids():
            if ignore_if_not_exists:
                return
            raise TableNotExistError(f"{db}.{name}")
        self.file_io.delete_dir(path)


class CatalogFactory:
    """``CatalogFactory.create({"warehouse": path})``, as in pypaimon."""

    @staticmethod
    def create(options: Mapping[str, str]) -> FileSystemCatalog:
        warehouse = options.get("warehouse")
        if not warehouse:
            raise CatalogError("Catalog option 'warehouse' is required.")
        metastore = options.get("metastore", "filesystem")
        if metastore != "filesystem":
            raise CatalogError(
                f"Catalog metastore '{metastore}' is not supported; only 'filesystem'."
            )
        return FileSystemCatalog(warehouse, options)
