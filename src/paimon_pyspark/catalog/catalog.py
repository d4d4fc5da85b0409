"""What every catalog offers: Java's ``Catalog`` interface, in pypaimon's names.

The filesystem catalog keeps its metadata in the warehouse's directories; the JDBC catalog
(``catalog/jdbc/``) registers the same directories in a database and serializes commits with
its lock; the Hive catalog (``catalog/hive/``) does the same in a Hive Metastore; the REST
catalog (``catalog/rest/``) asks a server for everything but the data files.
The doors (Spark, SQL, CLI, procedures) are written against this class only, and reopen a
catalog in another process from :attr:`options` (``CatalogFactory.create(catalog.options)``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.store.schema_change import SchemaChange

if TYPE_CHECKING:
    from paimon_pyspark.catalog.partitions import PagedList, Partition
    from paimon_pyspark.fs.file_io import FileIO
    from paimon_pyspark.schema import Schema
    from paimon_pyspark.table.file_store_table import FileStoreTable
    from paimon_pyspark.table.system_tables import SystemTable


class Catalog(ABC):
    uri: str
    """The warehouse as given (with its scheme)."""
    options: dict[str, str]
    """Every catalog option it was created with, ``warehouse`` and ``metastore`` included:
    what another process passes to ``CatalogFactory.create`` to open the same catalog."""
    file_io: FileIO
    """The warehouse's store."""
    warehouse: str
    """The warehouse's root, without its scheme."""

    @property
    def metastore(self) -> str:
        """``filesystem``, ``jdbc``, ``rest`` or ``hive``: Java's ``metastore`` option."""
        return self.options.get("metastore", "filesystem")

    def close(self) -> None:
        """Release connections (a database's, a server's); the filesystem catalog has none."""
        return None

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def table_path(self, identifier: str | tuple[str, str]) -> str: ...

    @abstractmethod
    def list_databases(self) -> list[str]: ...

    @abstractmethod
    def create_database(
        self, name: str, ignore_if_exists: bool = False, properties: Mapping[str, str] | None = None
    ) -> None: ...

    @abstractmethod
    def get_database(self, name: str) -> dict[str, Any]: ...

    @abstractmethod
    def drop_database(
        self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False
    ) -> None: ...

    @abstractmethod
    def list_tables(self, database_name: str) -> list[str]: ...

    @abstractmethod
    def create_table(
        self, identifier: str | tuple[str, str], schema: Schema, ignore_if_exists: bool = False
    ) -> None: ...

    @abstractmethod
    def get_table(self, identifier: str | tuple[str, str]) -> FileStoreTable: ...

    @abstractmethod
    def get_system_table(self, identifier: str | tuple[str, str]) -> SystemTable: ...

    @abstractmethod
    def alter_table(
        self,
        identifier: str | tuple[str, str],
        changes: Sequence[SchemaChange],
        ignore_if_not_exists: bool = False,
    ) -> None: ...

    @abstractmethod
    def rename_table(
        self,
        source_identifier: str | tuple[str, str],
        target_identifier: str | tuple[str, str],
        ignore_if_not_exists: bool = False,
    ) -> None: ...

    @abstractmethod
    def drop_table(
        self, identifier: str | tuple[str, str], ignore_if_not_exists: bool = False
    ) -> None: ...

    @abstractmethod
    def list_partitions_paged(
        self,
        identifier: str | tuple[str, str],
        max_results: int | None = None,
        page_token: str | None = None,
        partition_name_pattern: str | None = None,
    ) -> PagedList[Partition]: ...

    @abstractmethod
    def create_partitions(
        self,
        identifier: str | tuple[str, str],
        partitions: list[dict[str, Any]],
        ignore_if_exists: bool = True,
    ) -> None: ...

    @abstractmethod
    def drop_partitions(
        self, identifier: str | tuple[str, str], partitions: list[dict[str, Any]]
    ) -> None: ...

    @abstractmethod
    def create_branch(
        self, identifier: str | tuple[str, str], branch_name: str, tag_name: str | None = None
    ) -> None: ...

    @abstractmethod
    def drop_branch(self, identifier: str | tuple[str, str], branch_name: str) -> None: ...

    @abstractmethod
    def rename_branch(
        self, identifier: str | tuple[str, str], from_branch: str, to_branch: str
    ) -> None: ...

    @abstractmethod
    def fast_forward(self, identifier: str | tuple[str, str], branch_name: str) -> None: ...

    @abstractmethod
    def list_branches(self, identifier: str | tuple[str, str]) -> list[str]: ...


def check_schema_changes(table: str, changes: object) -> None:
    """InvalidArgumentError unless ``changes`` is a list of SchemaChange (``alter_table``'s
    argument, checked before any catalog is asked)."""
    if isinstance(changes, SchemaChange) or not isinstance(changes, Sequence):
        raise InvalidArgumentError(
            f"alter_table('{table}'): changes must be a list of SchemaChange, got "
            f"{describe(changes)}."
        )
    for change in changes:
        if not isinstance(change, SchemaChange):
            raise InvalidArgumentError(
                f"alter_table('{table}'): every change is a SchemaChange "
                f"(SchemaChange.add_column, SchemaChange.set_option, ...), got "
                f"{describe(change)}."
            )
