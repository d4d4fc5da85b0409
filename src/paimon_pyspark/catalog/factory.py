"""``CatalogFactory.create(options)``: the catalog Java's ``metastore`` option names.

``filesystem`` (the default), ``jdbc`` (``catalog/jdbc/``: SQLite through Python's sqlite3,
PostgreSQL through psycopg), ``rest`` (``catalog/rest/``: a client of Paimon's REST catalog
API) and ``hive`` (``catalog/hive/``: a Hive Metastore over Thrift, the ``hive`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping

from paimon_pyspark.catalog.catalog import Catalog
from paimon_pyspark.errors import (
    CatalogError,
    InvalidArgumentError,
    UnsupportedOptionError,
    describe,
)

METASTORE = "metastore"
METASTORES = ("filesystem", "jdbc", "rest", "hive")


class CatalogFactory:
    """``CatalogFactory.create({"warehouse": path})``, as in pypaimon; ``metastore = jdbc`` or
    ``rest`` with Java's options for those catalogs."""

    @staticmethod
    def create(catalog_options: Mapping[str, str]) -> Catalog:
        if not isinstance(catalog_options, Mapping):
            raise InvalidArgumentError(
                "CatalogFactory.create(options) takes a mapping of catalog options, got "
                f"{describe(catalog_options)}."
            )
        options = {str(k): str(v) for k, v in catalog_options.items() if v is not None}
        metastore = options.get(METASTORE, "filesystem").strip().lower()
        if metastore == "rest":
            from paimon_pyspark.catalog.rest.catalog import RestCatalog

            return RestCatalog(options)
        warehouse = catalog_options.get("warehouse")
        if not warehouse:
            raise CatalogError("Catalog option 'warehouse' is required.")
        if not isinstance(warehouse, str):
            raise InvalidArgumentError(
                "CatalogFactory.create(options): option 'warehouse' is a path or URI string, "
                f"got {describe(warehouse)}."
            )
        if metastore == "filesystem":
            from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog

            return FileSystemCatalog(warehouse, options)
        if metastore == "jdbc":
            from paimon_pyspark.catalog.jdbc.catalog import JdbcCatalog

            return JdbcCatalog(warehouse, options)
        if metastore == "hive":
            from paimon_pyspark.catalog.hive.catalog import HiveCatalog

            return HiveCatalog(warehouse, options)
        raise UnsupportedOptionError(
            f"Catalog option '{METASTORE}' = '{catalog_options.get(METASTORE)}' is not "
            f"supported; paimon_pyspark has {', '.join(METASTORES)}."
        )
