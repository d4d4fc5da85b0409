"""``spark.procedures.remove_orphan_files`` (executors read the manifests, list the partitions
and delete) finds and deletes what the in-process procedure finds, on a table damaged by real
failures (tests/integration/orphan_damage.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from tests.integration.orphan_damage import age, build_history, damage, files_of
from tests.integration.table_helpers import read_all, sort_rows

from paimon_pyspark import CatalogFactory
from paimon_pyspark.procedures import remove_orphan_files as remove_here
from paimon_pyspark.spark.procedures import remove_orphan_files

pytestmark = pytest.mark.slow


def test_the_spark_twin_removes_what_the_local_procedure_finds(
    spark: SparkSession, tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "wh")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    table = build_history(catalog, "db.t")
    rows = sort_rows(read_all(table))
    left = damage(catalog, warehouse, "db.t", kill=False)  # killed committers: in-process tests
    age(warehouse)
    before = files_of(table.path)

    here = remove_here(catalog, "db.t", dry_run=True)
    lines: list[str] = []
    dry = remove_orphan_files(spark, warehouse, "db.t", dry_run=True, progress=lines.append)
    assert dry == here
    assert {p[len(table.path) + 1 :] for p in dry.deleted_files} == left
    assert files_of(table.path) == before
    assert any("would delete" in line for line in lines)

    done = remove_orphan_files(spark, catalog, "db.*", parallelism=3)
    assert done == here
    assert files_of(table.path) == before - left
    assert sort_rows(read_all(catalog.get_table("db.t"))) == rows
    assert remove_here(catalog, "db.t").deleted_file_count == 0
