"""The filesystem catalog: databases are ``<name>.db`` directories, tables live inside them.

Mirrors org.apache.paimon.catalog.FileSystemCatalog. A table exists when its ``schema/``
directory holds a schema file; creating one publishes ``schema-0`` with create-if-absent, so two
concurrent creators cannot both win, and ``alter_table`` publishes the next id the same way.
Every name goes through catalog/identifiers.py, and every directory the catalog creates, opens
or deletes is checked to lie inside the warehouse.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from paimon_pyspark.catalog.catalog import Catalog, check_schema_changes
from paimon_pyspark.catalog.identifiers import (
    DB_SUFFIX,
    check_database_name,
    check_inside,
    is_valid_database_name,
    is_valid_table_name,
    parse_identifier,
    parse_system_identifier,
    parse_table_identifier,
)
from paimon_pyspark.catalog.partitions import (
    PagedList,
    Partition,
    list_partitions,
    page_partitions,
)
from paimon_pyspark.commit.truncate import partitions_filter
from paimon_pyspark.errors import (
    BranchNotExistError,
    CatalogError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    IdentifierError,
    InvalidArgumentError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedOperationError,
    describe,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.read.fallback_read import check_other_branches
from paimon_pyspark.schema import Schema
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.branches import branch_path, is_main_branch
from paimon_pyspark.store.file_store import BRANCH_OPTION
from paimon_pyspark.store.managers import SchemaManager, SnapshotManager
from paimon_pyspark.store.schema_change import SchemaChange
from paimon_pyspark.store.snapshot_commit import SnapshotCommit
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.system_tables import SystemTable, load_system_table


class FileSystemCatalog(Catalog):
    def __init__(self, warehouse: str, options: Mapping[str, str] | None = None) -> None:
        self.uri = warehouse
        """The warehouse as given (with its scheme), for processes that open it again."""
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.options["warehouse"] = warehouse
        self.file_io, self.warehouse = FileIO.for_uri(warehouse, self.options)

    def database_path(self, database: str) -> str:
        """The directory of ``database``; IdentifierError for a name Java's catalog refuses or
        one that would lead outside the warehouse."""
        path = os.path.join(self.warehouse, check_database_name(database) + DB_SUFFIX)
        return check_inside(self.warehouse, path, f"Database '{database}'")

    def table_path(self, identifier: str | tuple[str, str]) -> str:
        return self._locate(identifier)[2]

    def _locate(self, identifier: str | tuple[str, str]) -> tuple[str, str, str]:
        """(database, table, table directory) of an identifier, its names checked and its
        directory inside the warehouse."""
        db, name = parse_identifier(identifier)
        path = os.path.join(self.database_path(db), name)
        return db, name, check_inside(self.warehouse, path, f"Table '{db}.{name}'")

    # --- databases ---------------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        """Databases under the warehouse; a directory whose name the catalog would refuse
        (made by hand, or by a Java catalog that let it through) is left out, so every name
        listed can be opened."""
        return sorted(
            name
            for d in self.file_io.list_dirs(self.warehouse)
            if d.endswith(DB_SUFFIX) and is_valid_database_name(name := d[: -len(DB_SUFFIX)])
        )

    def create_database(
        self, name: str, ignore_if_exists: bool = False, properties: Mapping[str, str] | None = None
    ) -> None:
        path = self.database_path(name)
        if self.file_io.exists(path):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistError(name)
        self.file_io.create_directory(path)

    def get_database(self, name: str) -> dict[str, Any]:
        path = self.database_path(name)
        if not self.file_io.exists(path):
            raise DatabaseNotExistError(name)
        return {"name": name, "location": path}

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

    def list_tables(self, database_name: str) -> list[str]:
        """Tables of ``database_name``: directories holding a schema file, under names the
        catalog accepts (as :meth:`list_databases`)."""
        path = self.database_path(database_name)
        if not self.file_io.exists(path):
            raise DatabaseNotExistError(database_name)
        return sorted(
            t
            for t in self.file_io.list_dirs(path)
            if is_valid_table_name(t)
            and SchemaManager(self.file_io, os.path.join(path, t)).list_ids()
        )

    def create_table(
        self, identifier: str | tuple[str, str], schema: Schema, ignore_if_exists: bool = False
    ) -> None:
        db, name, path = self._locate(identifier)
        full = f"{db}.{name}"
        if not isinstance(schema, Schema):
            raise InvalidArgumentError(
                f"create_table('{full}'): schema must be a paimon_pyspark Schema (see "
                f"Schema.from_pyarrow_schema), got {describe(schema)}."
            )
        if not self.file_io.exists(self.database_path(db)):
            raise DatabaseNotExistError(db)
        if "path" in schema.options:
            raise CatalogError(f"Table '{full}': the 'path' option cannot be set by the user.")
        manager = SchemaManager(self.file_io, path)
        table_schema = schema.to_table_schema(0, int(time.time() * 1000), full)
        check_other_branches(self.file_io, path, table_schema.options, full)
        if manager.list_ids() or not manager.commit_new(table_schema):
            if ignore_if_exists:
                return
            raise TableAlreadyExistError(full)

    def get_table(self, identifier: str | tuple[str, str]) -> FileStoreTable:
        """The table; a ``$`` name (``'db.t$snapshots'``, Java's syntax) gives the read-only
        :class:`SystemTable` instead, at run time. Its static type stays FileStoreTable so the
        many callers that write and read data tables keep theirs; typed code that opens a
        system table calls :meth:`get_system_table`. ``'db.t$branch_b'`` is the table on
        branch ``b`` (its own snapshots, schemas and tags; Java's syntax), BranchNotExistError
        when the table has no such branch."""
        db, name, branch, system = parse_table_identifier(identifier)
        if system is not None:
            return cast(FileStoreTable, self.get_system_table(identifier))
        db, name, path = self._locate((db, name))
        full = f"{db}.{name}"
        schema = SchemaManager(self.file_io, path).latest()
        if schema is None:
            if not self.file_io.exists(self.database_path(db)):
                raise DatabaseNotExistError(db)
            raise TableNotExistError(full)
        publish = self.snapshot_commit(db, name)
        if branch is None or is_main_branch(branch):
            return FileStoreTable(
                self.file_io.with_options(schema.options), path, full, schema, None, publish
            )
        branch_schema = SchemaManager(self.file_io, branch_path(path, branch)).latest()
        if branch_schema is None:
            raise BranchNotExistError(branch, full)
        return FileStoreTable(
            self.file_io.with_options(branch_schema.options),
            path,
            f"{full}$branch_{branch}",
            branch_schema,
            {BRANCH_OPTION: branch},
            publish,
        )

    def snapshot_commit(self, database: str, table: str) -> SnapshotCommit | None:
        """How ``database.table`` publishes its snapshots (store/snapshot_commit.py): None, the
        store's create-if-absent; the JDBC and Hive catalogs publish under their lock."""
        return None

    def get_system_table(self, identifier: str | tuple[str, str]) -> SystemTable:
        """The system table ``'db.t$<name>'`` (snapshots, schemas, options, files, manifests,
        partitions, buckets, tags: Java's names and columns), of the main branch or, as
        ``'db.t$branch_b$<name>'``, of branch ``b``; IdentifierError for another name or a
        name without a system table."""
        db, name, branch, system = parse_table_identifier(identifier)
        if system is None:
            raise IdentifierError(
                f"Table '{db}.{name}' is not a system table name; a system table is "
                f"'{db}.{name}$<system table>', e.g. '{db}.{name}$snapshots'."
            )
        data = f"{db}.{name}" + (f"$branch_{branch}" if branch is not None else "")
        return load_system_table(self.get_table(data).store, system)

    def alter_table(
        self,
        identifier: str | tuple[str, str],
        changes: Sequence[SchemaChange],
        ignore_if_not_exists: bool = False,
    ) -> None:
        """Apply ``changes`` (``SchemaChange.add_column``, ``drop_column``, ``rename_column``,
        ``update_column_type``, ``set_option``, ...) as one new schema file,
        ``schema-<latest id + 1>``: Java's Catalog.alterTable.

        Java's rules refuse some changes with SchemaChangeError (store/schema_change.py: a
        column that exists or does not, dropping or retyping a key column, a type Java cannot
        cast to, immutable options once the table has a snapshot, ...); the resulting schema then
        passes the checks of CREATE TABLE (unsupported options raise UnsupportedOptionError,
        out-of-range values OptionError). Files written before the change keep their schema id
        and are read by field id (io/data_file_reader.py).
        A refused ALTER writes nothing. Racing ALTERs all land, one schema id each, in the
        order they publish; each is checked again on top of the ones that won before it.
        A missing table (or database) raises TableNotExistError, as in Java, unless
        ``ignore_if_not_exists``. ``'db.t$branch_b'`` alters branch ``b``'s schema only, as
        Java does.
        """
        db, name, branch, system = parse_table_identifier(identifier)
        if system is not None:
            raise IdentifierError(
                f"Cannot 'alterTable' for system table '{db}.{name}${system}', please use data "
                "table."
            )
        db, name, path = self._locate((db, name))
        full = f"{db}.{name}"
        dynamic: dict[str, str] = {}
        table_path = path
        if branch is not None and not is_main_branch(branch):
            if not SchemaManager(self.file_io, path).list_ids():
                if ignore_if_not_exists:
                    return
                raise TableNotExistError(full)
            path = branch_path(path, branch)
            if not SchemaManager(self.file_io, path).list_ids():
                raise BranchNotExistError(branch, full)
            full = f"{full}$branch_{branch}"
            dynamic = {BRANCH_OPTION: branch}
        check_schema_changes(full, changes)
        manager = SchemaManager(self.file_io, path)
        if not manager.list_ids():
            if ignore_if_not_exists:
                return
            raise TableNotExistError(full)
        snapshots = SnapshotManager(self.file_io, path)

        def finish(generated: TableSchema) -> TableSchema:
            """Java's Schema normalization and SchemaValidation of the generated schema: those
            of CREATE TABLE (a ``primary-key`` or ``partition`` option set before the first
            snapshot becomes the keys), then those of loading the table."""
            schema = Schema(
                fields=list(generated.fields),
                partition_keys=list(generated.partition_keys),
                primary_keys=list(generated.primary_keys),
                options=dict(generated.options),
                comment=generated.comment,
            )
            made = schema.to_table_schema(generated.id, int(time.time() * 1000), full)
            made = dataclasses.replace(made, highest_field_id=generated.highest_field_id)
            FileStoreTable(self.file_io.with_options(made.options), table_path, full, made, dynamic)
            check_other_branches(self.file_io, table_path, made.options, full)
            return made

        manager.commit_changes(
            list(changes), full, lambda: snapshots.latest_id() is not None, finish
        )

    def rename_table(
        self,
        source_identifier: str | tuple[str, str],
        target_identifier: str | tuple[str, str],
        ignore_if_not_exists: bool = False,
    ) -> None:
        """Rename a table by renaming its directory: Java's FileSystemCatalog.renameTable.

        As Java: a missing source raises TableNotExistError (unless ``ignore_if_not_exists``),
        an existing target TableAlreadyExistError, a system table (``t$files``) IdentifierError;
        the target may be in another database, which must exist. Nothing inside the table
        names it, so its files, snapshots and schemas move unchanged. The rename is one
        ``rename(2)`` of a local directory; on an object store (where a directory rename is a
        copy of every object) it raises UnsupportedOperationError.
        """
        for ident in (source_identifier, target_identifier):
            db, name, system = parse_system_identifier(ident)
            if system is not None:
                raise IdentifierError(
                    f"Cannot 'renameTable' for system table '{db}.{name}${system}', please use "
                    "data table."
                )
        from_db, from_name, from_path = self._locate(source_identifier)
        to_db, to_name, to_path = self._locate(target_identifier)
        if not SchemaManager(self.file_io, from_path).list_ids():
            if ignore_if_not_exists:
                return
            raise TableNotExistError(f"{from_db}.{from_name}")
        if SchemaManager(self.file_io, to_path).list_ids() or self.file_io.exists(to_path):
            raise TableAlreadyExistError(f"{to_db}.{to_name}")
        if not self.file_io.exists(self.database_path(to_db)):
            raise DatabaseNotExistError(to_db)
        if not self.file_io.is_local:
            raise UnsupportedOperationError(
                f"rename_table('{from_db}.{from_name}', '{to_db}.{to_name}'): renaming a table "
                "directory on an object store copies every file and is not atomic; "
                "paimon_pyspark renames tables on local filesystems only."
            )
        try:
            os.rename(from_path, to_path)
        except OSError as e:
            raise CatalogError(
                f"Failed to rename table {from_db}.{from_name} to table {to_db}.{to_name}: {e}"
            ) from e

    def drop_table(
        self, identifier: str | tuple[str, str], ignore_if_not_exists: bool = False
    ) -> None:
        db, name, path = self._locate(identifier)
        if not SchemaManager(self.file_io, path).list_ids():
            if ignore_if_not_exists:
                return
            raise TableNotExistError(f"{db}.{name}")
        self.file_io.delete_dir(path)

    # --- partitions (Java's Catalog partition calls, pypaimon's names) -----------------------

    def list_partitions_paged(
        self,
        identifier: str | tuple[str, str],
        max_results: int | None = None,
        page_token: str | None = None,
        partition_name_pattern: str | None = None,
    ) -> PagedList[Partition]:
        """The table's partitions with their totals, sorted by name, a page at a time
        (catalog/partitions.py). ``next_page_token`` of a page is the next call's
        ``page_token``; ``partition_name_pattern`` matches ``k=v,k2=v2`` with ``*``."""
        table = self.get_table(identifier)
        return page_partitions(
            list_partitions(table.store),
            max_results,
            page_token,
            partition_name_pattern,
            table.name,
        )

    def create_partitions(
        self,
        identifier: str | tuple[str, str],
        partitions: list[dict[str, Any]],
        ignore_if_exists: bool = True,
    ) -> None:
        """Checks the table and the partition specs, and does nothing else, as Java's
        filesystem catalog (``supportsPartitionModification`` false): a partition of a
        filesystem table exists when it holds files, and there is no metadata to create."""
        table = self.get_table(identifier)
        partitions_filter(table.store, partitions, "create_partitions(identifier, partitions)")

    def drop_partitions(
        self, identifier: str | tuple[str, str], partitions: list[dict[str, Any]]
    ) -> None:
        """Delete every row of the partitions matching any of ``partitions`` (full or partial
        specs) in one OVERWRITE snapshot; partitions that do not exist are ignored. Java's
        Catalog.dropPartitions for a filesystem catalog: ``truncate_partitions`` of a batch
        commit."""
        table = self.get_table(identifier)
        commit = table.new_batch_write_builder().new_commit()
        try:
            commit.truncate_partitions(partitions)
        finally:
            commit.close()

    # --- branches (pypaimon 2.1.0's calls, over table.branch_manager()) ----------------------

    def create_branch(
        self, identifier: str | tuple[str, str], branch_name: str, tag_name: str | None = None
    ) -> None:
        """Branch ``branch_name`` of the table, empty or from tag ``tag_name``
        (maintenance/branches.py); BranchAlreadyExistError, TagNotExistError."""
        self.get_table(identifier).branch_manager().create_branch(branch_name, tag_name)

    def drop_branch(self, identifier: str | tuple[str, str], branch_name: str) -> None:
        """Delete a branch's metadata; BranchNotExistError when there is none."""
        self.get_table(identifier).branch_manager().drop_branch(branch_name)

    def rename_branch(
        self, identifier: str | tuple[str, str], from_branch: str, to_branch: str
    ) -> None:
        self.get_table(identifier).branch_manager().rename_branch(from_branch, to_branch)

    def fast_forward(self, identifier: str | tuple[str, str], branch_name: str) -> None:
        """Make the table's branch (main, or the ``$branch_x`` named) what ``branch_name``
        is."""
        self.get_table(identifier).branch_manager().fast_forward(branch_name)

    def list_branches(self, identifier: str | tuple[str, str]) -> list[str]:
        """Every branch but ``main``, sorted by name."""
        return self.get_table(identifier).branch_manager().branches()
