"""Tables on S3 cross between Java Paimon 1.4.2 (``paimon-s3``, Hadoop S3A) and us, row for row.

Both sides talk to moto's S3 server on 127.0.0.1 with the same catalog options
(``S3Server.options()``, Java's key names); Java gets them as catalog options through
``JavaOracle.set_catalog_options``. S3A needs the endpoint with its ``http://`` scheme: without
it S3A speaks TLS to the plain-HTTP server and fails after minutes of retries.

Primary-key tables are written with ``write-only`` so no commit compacts: the upserted keys stay
in overlapping files of one bucket and every read must merge them (the snapshots checked are all
APPEND). Java's S3A keeps directory marker objects (``wh2/``, ``wh2/db.db/``) where its catalog
made directories; the Java-written warehouse checks that our catalog and reader look past them.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
ARROW_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("name", pa.string()),
        ("price", pa.decimal128(10, 2)),
        ("ts", pa.timestamp("us")),
        ("dt", pa.string()),
    ]
)
JAVA_FIELDS = [
    ("id", "BIGINT NOT NULL"),
    ("name", "STRING"),
    ("price", "DECIMAL(10, 2)"),
    ("ts", "TIMESTAMP(6)"),
    ("dt", "STRING"),
]
PK_OPTIONS = {"bucket": "2", "write-only": "true"}
_T0 = dt.datetime(2024, 3, 1, 12, 0, 0, 123456)


def rows(ids: range, tag: str) -> pa.Table:
    """Rows ``ids`` in three partitions; ``tag`` marks which write a row's values came from."""
    return pa.table(
        {
            "id": list(ids),
            "name": [None if i % 7 == 0 else f"{tag}-{i}" for i in ids],
            "price": [Decimal(i * 3) / 4 if i % 5 else None for i in ids],
            "ts": [_T0 + dt.timedelta(seconds=i, microseconds=i) for i in ids],
            "dt": [f"2024-03-0{i % 3 + 1}" for i in ids],
        },
        schema=ARROW_SCHEMA,
    )


COMMITS = [rows(range(0, 60), "first"), rows(range(60, 90), "second")]
"""Two commits into the append tables."""
PK_COMMITS = [rows(range(0, 80), "first"), rows(range(40, 120), "upsert")]
"""Two commits into the primary-key tables; ids 40..79 are updated by the second."""


def upserted(commits: list[pa.Table]) -> list[list[Any]]:
    """The model of a deduplicate table: the last row written per id, canonical."""
    latest = {row[0]: row for commit in commits for row in canonical_rows(commit)}
    return sorted_rows(latest.values())


def appended(commits: list[pa.Table]) -> list[list[Any]]:
    return sorted_rows(row for commit in commits for row in canonical_rows(commit))


def write(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as writer:
        writer.write_arrow(data)
        builder.new_commit().commit(writer.prepare_commit())


def read_ours(table: FileStoreTable) -> list[list[Any]]:
    builder = table.new_read_builder()
    return sorted_rows(
        canonical_rows(builder.new_read().to_arrow(builder.new_scan().plan().splits()))
    )


def all_append_snapshots(java_oracle: JavaOracle, warehouse: str, table: str, count: int) -> None:
    kinds = [s["commitKind"] for s in java_oracle.snapshots(warehouse, DB, table)]
    assert kinds == ["APPEND"] * count, f"{table}: a compaction would make the merge moot: {kinds}"


# -- Java reads ours -------------------------------------------------------------------------------


@pytest.fixture
def our_warehouse(
    java_oracle: JavaOracle, s3_server: S3Server, s3_bucket: str, s3_catalog: FileSystemCatalog
) -> str:
    """The ``s3_catalog`` warehouse, opened by Java with the same options."""
    warehouse = f"s3://{s3_bucket}/wh"
    java_oracle.set_catalog_options(warehouse, s3_server.options())
    return warehouse


def test_java_reads_our_partitioned_append_table_on_s3(
    java_oracle: JavaOracle, s3_catalog: FileSystemCatalog, our_warehouse: str
) -> None:
    s3_catalog.create_table(
        f"{DB}.a", Schema.from_pyarrow_schema(ARROW_SCHEMA, partition_keys=["dt"])
    )
    table = s3_catalog.get_table(f"{DB}.a")
    for commit in COMMITS:
        write(table, commit)

    java = java_oracle.read_table(our_warehouse, DB, "a")
    assert java.fields == ARROW_SCHEMA.names
    assert sorted_rows(java.rows) == appended(COMMITS)
    assert java_oracle.latest_snapshot_id(our_warehouse, DB, "a") == len(COMMITS)
    first = java_oracle.read_table(our_warehouse, DB, "a", snapshot_id=1)
    assert sorted_rows(first.rows) == appended(COMMITS[:1])


def test_java_merges_our_primary_key_table_with_upserts_on_s3(
    java_oracle: JavaOracle, s3_catalog: FileSystemCatalog, our_warehouse: str
) -> None:
    schema = Schema.from_pyarrow_schema(ARROW_SCHEMA, primary_keys=["id"], options=PK_OPTIONS)
    s3_catalog.create_table(f"{DB}.p", schema)
    table = s3_catalog.get_table(f"{DB}.p")
    for commit in PK_COMMITS:
        write(table, commit)

    all_append_snapshots(java_oracle, our_warehouse, "p", len(PK_COMMITS))
    java = java_oracle.read_table(our_warehouse, DB, "p")
    assert sorted_rows(java.rows) == upserted(PK_COMMITS)
    assert len(java.rows) == 120


# -- we read Java's --------------------------------------------------------------------------------


@pytest.fixture
def java_warehouse(java_oracle: JavaOracle, s3_server: S3Server) -> str:
    """A warehouse of Java's own, in a bucket of its own."""
    warehouse = f"s3://{s3_server.new_bucket()}/wh2"
    java_oracle.set_catalog_options(warehouse, s3_server.options())
    return warehouse


def our_catalog(warehouse: str, s3_server: S3Server) -> FileSystemCatalog:
    return CatalogFactory.create({"warehouse": warehouse, **s3_server.options()})


def test_we_read_javas_partitioned_append_table_on_s3(
    java_oracle: JavaOracle, s3_server: S3Server, java_warehouse: str
) -> None:
    java_oracle.create_table(java_warehouse, DB, "a", JAVA_FIELDS, partition_keys=["dt"])
    for commit in COMMITS:
        java_oracle.write_rows(java_warehouse, DB, "a", commit)

    bucket = java_warehouse.removeprefix("s3://").split("/", 1)[0]
    markers = [k for k in s3_server.list_keys(bucket) if k.endswith("/")]
    assert markers, "Java left no directory marker, so this test no longer covers them"
    catalog = our_catalog(java_warehouse, s3_server)
    assert catalog.list_databases() == [DB]
    assert catalog.list_tables(DB) == ["a"]
    table = catalog.get_table(f"{DB}.a")
    assert read_ours(table) == sorted_rows(java_oracle.read_table(java_warehouse, DB, "a").rows)
    assert read_ours(table) == appended(COMMITS)
    first = table.copy({"scan.snapshot-id": "1"})
    assert read_ours(first) == appended(COMMITS[:1])


def test_we_merge_javas_primary_key_table_with_update_on_s3(
    java_oracle: JavaOracle, s3_server: S3Server, java_warehouse: str
) -> None:
    java_oracle.create_table(
        java_warehouse, DB, "p", JAVA_FIELDS, primary_keys=["id"], options=PK_OPTIONS
    )
    for commit in PK_COMMITS:
        java_oracle.write_rows(java_warehouse, DB, "p", commit)

    all_append_snapshots(java_oracle, java_warehouse, "p", len(PK_COMMITS))
    table = our_catalog(java_warehouse, s3_server).get_table(f"{DB}.p")
    assert read_ours(table) == sorted_rows(java_oracle.read_table(java_warehouse, DB, "p").rows)
    assert read_ours(table) == upserted(PK_COMMITS)
