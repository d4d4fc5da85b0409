"""The filesystem catalog."""

from paimon_pyspark.catalog.filesystem_catalog import CatalogFactory, FileSystemCatalog

__all__ = ["CatalogFactory", "FileSystemCatalog"]
