"""System tables against Java Paimon 1.4.2: for the same table, Java's ``t$<name>`` rows (its
catalog resolves the ``$`` name, ``java_oracle.read_system_table``) equal ours on every column.

Rows are compared in Java's order, except where Java's order is not its own: ``$files``
follows its scan's splits, ``$schemas`` and ``$branches`` the directory listing (ours sort by
file path, schema id and branch name; compared sorted). The one value that differs is a tag's
``create_time``: Java's TIMESTAMP(3) column carries the LocalDateTime of the tag file with
its microseconds, while ours is an Arrow ``timestamp[ms]``, what the column's precision
allows; both are compared at milliseconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from java_oracle import JavaOracle, canonical_rows, read_system_table
from tests.integration.system_table_fixtures import KINDS, build
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, FileSystemCatalog
from paimon_pyspark.table.system_tables import SYSTEM_TABLES

pytestmark = [pytest.mark.java, pytest.mark.slow]

_MS = 1_000_000


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any]:
    warehouse = str(tmp_path_factory.mktemp("system_tables"))
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    for kind in KINDS:
        build(catalog, kind)
    return warehouse, catalog


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("system", SYSTEM_TABLES)
def test_rows_equal_java(
    java_oracle: JavaOracle, tables: tuple[str, Any], kind: str, system: str
) -> None:
    warehouse, catalog = tables
    table = catalog.get_system_table(f"db.{kind}${system}")
    java = read_system_table(java_oracle, warehouse, "db", f"{kind}${system}")

    assert java.fields == table.field_names
    assert java.types == [f.type.to_json() for f in table.fields]
    ours = canonical_rows(table.to_arrow())
    theirs = java.rows
    if system == "table_indexes" and kind != "dynamic":
        assert ours == theirs == []  # only dynamic buckets (and vectors) write index files
        return
    assert theirs, f"Java's {kind}${system} is empty: the table setup did not exercise it"
    if system == "ro":  # the data table's rows: Java's order is its splits', compare as sets
        ours, theirs = sorted(ours, key=repr), sorted(theirs, key=repr)
    if system in ("files", "schemas", "branches"):
        key = table.field_names.index(table.primary_keys[0])
        ours = sorted(ours, key=lambda r: r[key])
        theirs = sorted(theirs, key=lambda r: r[key])
    if system == "tags":
        created = table.field_names.index("create_time")
        for row in theirs:
            if row[created] is not None:
                row[created] -= row[created] % _MS
    assert ours == theirs


def test_postpone_files_as_java_shows_them(
    java_oracle: JavaOracle, tables: tuple[str, Any]
) -> None:
    """Bucket -2 files: in ``$buckets`` (Java's snapshot reader), not in ``$files`` nor
    ``$partitions`` (Java's batch scan of a postpone table reads real buckets only)."""
    warehouse, catalog = tables
    buckets = catalog.get_system_table("db.postpone$buckets").to_arrow()
    assert -2 in buckets.column("bucket").to_pylist()
    files = catalog.get_system_table("db.postpone$files").to_arrow()
    assert files.num_rows > 0
    assert -2 not in files.column("bucket").to_pylist()
    java = read_system_table(java_oracle, warehouse, "db", "postpone$buckets")
    assert -2 in [r[1] for r in java.rows]


def test_paths_match_java(java_oracle: JavaOracle, tables: tuple[str, Any]) -> None:
    warehouse, catalog = tables
    java = read_system_table(java_oracle, warehouse, "db", "pk$files")
    ours = catalog.get_system_table("db.pk$files").to_arrow().column("file_path").to_pylist()
    assert sorted(ours) == sorted(r[2] for r in java.rows)
    assert all(Path(p).is_file() for p in ours)


def test_s3_file_paths_keep_the_scheme(
    java_oracle: JavaOracle, s3_server: S3Server, s3_bucket: str, s3_catalog: FileSystemCatalog
) -> None:
    """On an object store ``file_path`` is the URI Java prints (``s3://bucket/...``)."""
    warehouse = f"s3://{s3_bucket}/wh"
    java_oracle.set_catalog_options(warehouse, s3_server.options())
    ident = build(s3_catalog, "pk", "s3pk")
    for system in ("files", "buckets", "partitions"):
        ours = canonical_rows(s3_catalog.get_system_table(f"{ident}${system}").to_arrow())
        java = read_system_table(java_oracle, warehouse, "db", f"s3pk${system}").rows
        assert sorted(ours, key=str) == sorted(java, key=str)
    paths = [r[2] for r in read_system_table(java_oracle, warehouse, "db", "s3pk$files").rows]
    assert paths and all(p.startswith(f"s3://{s3_bucket}/wh/db.db/s3pk/") for p in paths)
