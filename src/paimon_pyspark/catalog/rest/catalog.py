"""Java's RESTCatalog (skeleton; being built)."""

from __future__ import annotations

from collections.abc import Mapping

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog


class RestCatalog(FileSystemCatalog):
    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options["warehouse"], options)
