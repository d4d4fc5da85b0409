"""A store that cannot publish atomically is refused with a typed error naming it, unless the
user accepts a single writer (``fs.single-writer``); it is never silently unsafe."""

from __future__ import annotations

import pyarrow as pa
import pytest
from tests.integration.table_helpers import read_all, write_commit
from tests.s3_server import S3Server
from tests.unsafe_s3_proxy import start_proxy

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import UnsafeStoreError

SCHEMA = pa.schema([("id", pa.int64())])


def test_unknown_scheme_is_refused_naming_it() -> None:
    with pytest.raises(UnsafeStoreError, match=r"'mock' filesystem .* 'fs.single-writer'"):
        CatalogFactory.create({"warehouse": "mock:///wh"})


def test_unknown_scheme_with_a_single_writer_accepted() -> None:
    catalog = CatalogFactory.create({"warehouse": "mock:///wh", "fs.single-writer": "true"})
    catalog.create_database("db")
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    table = catalog.get_table("db.t")
    write_commit(table, pa.table({"id": [1, 2]}, schema=SCHEMA))
    assert read_all(table)["id"].to_pylist() == [1, 2]


@pytest.mark.slow
def test_s3_server_ignoring_conditional_writes_is_refused(
    s3_server: S3Server, s3_bucket: str
) -> None:
    endpoint, proxy = start_proxy(s3_server.endpoint)
    try:
        options = {**s3_server.options(), "s3.endpoint": endpoint}
        catalog = CatalogFactory.create({"warehouse": f"s3://{s3_bucket}/wh", **options})
        catalog.create_database("db")
        with pytest.raises(UnsafeStoreError, match=endpoint):
            catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
        # refused before anything was published: no schema, no probe left behind
        assert s3_server.list_keys(s3_bucket) == ["wh/db.db/.paimon-directory"]

        single = CatalogFactory.create(
            {"warehouse": f"s3://{s3_bucket}/wh", **options, "fs.single-writer": "true"}
        )
        single.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
        table = single.get_table("db.t")
        write_commit(table, pa.table({"id": [7]}, schema=SCHEMA))
        assert read_all(table)["id"].to_pylist() == [7]
        # one user's acceptance is not remembered for the others; a refused commit removes
        # the data files it would have published
        before = s3_server.list_keys(s3_bucket)
        with pytest.raises(UnsafeStoreError, match=endpoint):
            write_commit(catalog.get_table("db.t"), pa.table({"id": [8]}, schema=SCHEMA))
        assert read_all(table)["id"].to_pylist() == [7]
        assert s3_server.list_keys(s3_bucket) == before
    finally:
        proxy.shutdown()
