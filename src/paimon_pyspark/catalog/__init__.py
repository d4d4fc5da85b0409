"""Catalogs: the filesystem catalog, the JDBC catalog (``jdbc/``), the Hive Metastore catalog
(``hive/``) and the REST catalog client (``rest/``), all behind :class:`Catalog`;
:class:`CatalogFactory` picks one by ``metastore``."""

from paimon_pyspark.catalog.catalog import Catalog
from paimon_pyspark.catalog.factory import CatalogFactory
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog

__all__ = ["Catalog", "CatalogFactory", "FileSystemCatalog"]
