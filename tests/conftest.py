"""Shared fixtures: a fresh warehouse and catalog per test, on the real local filesystem."""

from __future__ import annotations

from pathlib import Path

import pytest

from paimon_pyspark import CatalogFactory, FileSystemCatalog


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return str(tmp_path / "warehouse")


@pytest.fixture
def catalog(warehouse: str) -> FileSystemCatalog:
    cat = CatalogFactory.create({"warehouse": warehouse})
    cat.create_database("db", ignore_if_exists=True)
    return cat
