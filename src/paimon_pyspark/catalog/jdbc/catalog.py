"""Java's JdbcCatalog (skeleton; being built)."""

from __future__ import annotations

from collections.abc import Mapping

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog


class JdbcCatalog(FileSystemCatalog):
    def __init__(self, warehouse: str, options: Mapping[str, str]) -> None:
        super().__init__(warehouse, options)
