"""Our REST catalog client against our REST server, a real process on 127.0.0.1.

Databases and tables through the server, data written and read by the client in the table
directory the server names, commits through ``POST .../commit``, ALTER and drop on the server,
errors typed as Java's RESTCatalog types them, and 8 processes committing 50 times each into
one table through the server: every commit once.
"""

from __future__ import annotations

import copy
import multiprocessing as mp
import os
import time
from collections.abc import Mapping
from multiprocessing.context import ForkServerContext

import pyarrow as pa
import pytest
from tests.catalogs.rest_server import RestServer, rest_server  # noqa: F401

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.catalog import Catalog
from paimon_pyspark.catalog.rest import api
from paimon_pyspark.catalog.rest.catalog import RestCatalog, RestSnapshotCommit
from paimon_pyspark.catalog.rest.client import HttpClient
from paimon_pyspark.errors import (
    CatalogConnectionError,
    CatalogError,
    ColumnAlreadyExistError,
    ColumnNotExistError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    InvalidArgumentError,
    NotAuthorizedError,
    OptionError,
    RestCatalogError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedOperationError,
)
from paimon_pyspark.store.schema_change import Move, SchemaChange

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _catalog(server: RestServer, **extra: str) -> RestCatalog:
    catalog = CatalogFactory.create(server.catalog_options(**extra))
    assert isinstance(catalog, RestCatalog)
    return catalog


def _write(catalog: Catalog, table: str, data: pa.Table) -> None:
    builder = catalog.get_table(table).new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def _read(catalog: Catalog, table: str) -> pa.Table:
    read_builder = catalog.get_table(table).new_read_builder()
    return read_builder.new_read().to_arrow(read_builder.new_scan().plan().splits())


def test_wire_format() -> None:
    """api.py, shared with the server: Java's URL encoding, paths, SchemaChange JSON and the
    status -> error mapping, both ways."""
    assert api.encode_string("a b$~*/é") == "a+b%24%7E*%2F%C3%A9"
    assert api.decode_string("a+b%24%7E*%2F%C3%A9") == "a b$~*/é"
    paths = api.ResourcePaths("cat")
    assert paths.commit_table("db", api.object_name("t", "b")) == (
        "/v1/cat/databases/db/tables/t%24branch_b/commit"
    )
    assert api.object_name("t", "MAIN") == "t" and api.split_object_name("t$branch_b") == ("t", "b")
    assert api.ResourcePaths(None).databases() == "/v1/databases"
    changes = [
        SchemaChange.set_option("k", "v"),
        SchemaChange.remove_option("k"),
        SchemaChange.update_comment(None),
        SchemaChange.add_column(["r", "n"], pa.int32(), "c", Move.after("n", "id")),
        SchemaChange.rename_column("a", "b"),
        SchemaChange.drop_column("a"),
        SchemaChange.update_column_type("a", pa.int64(), True),
        SchemaChange.update_column_nullability("a", False),
        SchemaChange.update_column_comment("a", "c"),
        SchemaChange.update_column_position(Move.first("a")),
    ]
    bodies = [api.schema_change_to_json(c) for c in changes]
    assert bodies[3] == {
        "action": "addColumn",
        "fieldNames": ["r", "n"],
        "dataType": "INT",
        "comment": "c",
        "move": {"fieldName": "n", "referenceFieldName": "id", "type": "AFTER"},
    }
    assert [api.schema_change_from_json(b) for b in bodies] == changes
    with pytest.raises(InvalidArgumentError, match="dropPrimaryKey"):
        api.schema_change_from_json({"action": "dropPrimaryKey"})
    for error, status, kind in [
        (DatabaseNotExistError("d"), 404, "DATABASE"),
        (TableNotExistError("d.t"), 404, "TABLE"),
        (ColumnNotExistError("c"), 404, "COLUMN"),
        (TableAlreadyExistError("d.t"), 409, "TABLE"),
        (ColumnAlreadyExistError("c"), 409, "COLUMN"),
        (NotAuthorizedError("no"), 401, None),
        (InvalidArgumentError("bad"), 400, None),
        (UnsupportedOperationError("no"), 501, None),
        (ValueError("boom"), 500, None),
    ]:
        response = api.error_response_for(error)
        assert (response.code, response.resource_type) == (status, kind)
        back = api.error_from_response(api.ErrorResponse.from_json(response.to_json()), "GET /v1/x")
        assert getattr(back, "status", None) == status and "GET /v1/x" in str(back)
        if status != 500:
            assert type(back) is type(error)
        else:
            assert isinstance(back, RestCatalogError) and "ValueError: boom" in str(back)


def test_databases_and_tables(rest_server: RestServer) -> None:  # noqa: F811
    with _catalog(rest_server) as catalog:
        catalog.create_database("dbs")
        with pytest.raises(DatabaseAlreadyExistError, match="'dbs'"):
            catalog.create_database("dbs")
        catalog.create_database("dbs", ignore_if_exists=True)
        assert "dbs" in catalog.list_databases()
        assert catalog.get_database("dbs")["location"].endswith("/dbs.db")
        with pytest.raises(DatabaseNotExistError, match="'nodb'"):
            catalog.get_database("nodb")
        with pytest.raises(DatabaseNotExistError, match="'nodb'"):
            catalog.list_tables("nodb")
        with pytest.raises(DatabaseNotExistError, match="'nodb'"):
            catalog.create_table("nodb.t", Schema.from_pyarrow_schema(SCHEMA))

        catalog.create_table("dbs.a", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"]))
        with pytest.raises(TableAlreadyExistError, match="'dbs.a'"):
            catalog.create_table("dbs.a", Schema.from_pyarrow_schema(SCHEMA))
        catalog.create_table("dbs.a", Schema.from_pyarrow_schema(SCHEMA), ignore_if_exists=True)
        table = catalog.get_table("dbs.a")
        assert table.table_schema.primary_keys == ("id",)
        assert table.path == os.path.join(rest_server.warehouse, "dbs.db", "a")
        assert isinstance(table.store.snapshot_commit, RestSnapshotCommit)
        with pytest.raises(TableNotExistError, match="'dbs.nope'"):
            catalog.get_table("dbs.nope")

        catalog.rename_table("dbs.a", "dbs.b")
        assert catalog.list_tables("dbs") == ["b"]
        with pytest.raises(TableNotExistError, match="'dbs.a'"):
            catalog.rename_table("dbs.a", "dbs.c")
        catalog.rename_table("dbs.a", "dbs.c", ignore_if_not_exists=True)

        with pytest.raises(CatalogError, match="not empty"):
            catalog.drop_database("dbs")
        catalog.drop_table("dbs.b")
        assert not os.path.exists(os.path.join(rest_server.warehouse, "dbs.db", "b"))
        with pytest.raises(TableNotExistError, match="'dbs.b'"):
            catalog.drop_table("dbs.b")
        catalog.drop_table("dbs.b", ignore_if_not_exists=True)
        catalog.drop_database("dbs")
        assert "dbs" not in catalog.list_databases()
        with pytest.raises(DatabaseNotExistError):
            catalog.drop_database("dbs")
        catalog.drop_database("dbs", ignore_if_not_exists=True)


def test_write_commit_alter_read(rest_server: RestServer) -> None:  # noqa: F811
    with _catalog(rest_server) as catalog:
        catalog.create_database("dw", ignore_if_exists=True)
        catalog.create_table("dw.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["v"]))
        _write(catalog, "dw.t", pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
        snapshot = catalog.load_snapshot("dw.t")
        assert snapshot is not None and snapshot.id == 1
        assert "commit dw.t snapshot 1 (APPEND" in rest_server.log()

        catalog.alter_table(
            "dw.t", [SchemaChange.add_column("n", pa.int32()), SchemaChange.set_option("a.b", "c")]
        )
        with pytest.raises(ColumnAlreadyExistError, match="'n'"):
            catalog.alter_table("dw.t", [SchemaChange.add_column("n", pa.int32())])
        with pytest.raises(ColumnNotExistError, match="'zz'"):
            catalog.alter_table("dw.t", [SchemaChange.drop_column("zz")])
        with pytest.raises(TableNotExistError, match="'dw.nope'"):
            catalog.alter_table("dw.nope", [SchemaChange.set_option("a.b", "c")])
        catalog.alter_table("dw.nope", [SchemaChange.set_option("a.b", "c")], True)

        # another process's catalog, from the options alone
        other = CatalogFactory.create(catalog.options)
        assert other.metastore == "rest"
        table = other.get_table("dw.t")
        assert table.table_schema.id == 1 and table.table_schema.options["a.b"] == "c"
        _write(
            other,
            "dw.t",
            pa.table(
                {"id": [3], "v": ["a"], "n": [7]}, schema=SCHEMA.append(pa.field("n", pa.int32()))
            ),
        )
        other.close()
        rows = _read(catalog, "dw.t").sort_by("id").to_pylist()
        assert rows == [
            {"id": 1, "v": "a", "n": None},
            {"id": 2, "v": "b", "n": None},
            {"id": 3, "v": "a", "n": 7},
        ]
        parts = catalog.list_partitions_paged("dw.t").elements
        assert {p.spec["v"]: p.record_count for p in parts} == {"a": 2, "b": 1}
        snapshot = catalog.load_snapshot("dw.t")
        assert snapshot is not None and snapshot.id == 2
        # a commit whose server cannot be reached has an unknown outcome: an OSError, so the
        # commit looks for its snapshot before trying again
        commit = catalog.get_table("dw.t").store.snapshot_commit
        assert isinstance(commit, RestSnapshotCommit)
        commit.catalog = copy.copy(catalog)
        commit.catalog.client = HttpClient("http://127.0.0.1:9", {})
        with pytest.raises(OSError, match="POST /v1/paimon/databases/dw/tables/t/commit"):
            commit.commit(catalog.get_table("dw.t").store.snapshot_manager, snapshot, "main")
        try:
            catalog.create_branch("dw.t", "b1")
        except UnsupportedOperationError as e:  # our server serves no branches (501)
            assert "create_branch('dw.t')" in str(e)
        else:
            assert catalog.list_branches("dw.t") == ["b1"]


def test_refused_token_and_options(rest_server: RestServer) -> None:  # noqa: F811
    with pytest.raises(NotAuthorizedError) as info:
        CatalogFactory.create(rest_server.catalog_options(token="wrong-token-123"))
    assert info.value.status == 401
    assert "GET /v1/config" in str(info.value)
    assert "wrong-token-123" not in str(info.value)
    options = rest_server.catalog_options()
    del options["token.provider"]
    with pytest.raises(OptionError, match="token.provider"):
        CatalogFactory.create(options)
    with pytest.raises(CatalogConnectionError, match="127.0.0.1:9"):
        CatalogFactory.create(rest_server.catalog_options(uri="http://127.0.0.1:9"))


# --- 8 processes x 50 commits through the server ----------------------------------------------

WRITERS = 8
COMMITS = 50
RACE_OPTIONS = {
    "commit.max-retries": "1000",
    "commit.min-retry-wait": "10 ms",
    "commit.max-retry-wait": "1 s",
}


def _racer(options: Mapping[str, str], writer: int, commits: int) -> None:
    catalog = CatalogFactory.create(options)
    table = catalog.get_table("race.t")
    for seq in range(commits):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.table({"id": [writer * 1000 + seq], "v": ["x"]}, schema=SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
    catalog.close()


def _context() -> ForkServerContext:
    """Processes forked from a server that imported this module once (spawned, each would
    import pyarrow and paimon_pyspark itself: seconds each on two cores)."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def test_commit_race_through_server(rest_server: RestServer) -> None:  # noqa: F811
    with _catalog(rest_server) as catalog:
        catalog.create_database("race", ignore_if_exists=True)
        catalog.create_table("race.t", Schema.from_pyarrow_schema(SCHEMA, options=RACE_OPTIONS))
        ctx = _context()
        started = time.monotonic()
        procs = [
            ctx.Process(target=_racer, args=(catalog.options, w, COMMITS)) for w in range(WRITERS)
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(600)
        wall = time.monotonic() - started
        assert [p.exitcode for p in procs] == [0] * WRITERS
        table = catalog.get_table("race.t")
        snapshots = table.store.snapshot_manager
        latest = snapshots.latest()
        assert latest is not None and latest.id == WRITERS * COMMITS
        assert all(snapshots.snapshot_exists(i) for i in range(1, WRITERS * COMMITS + 1))
        ids = _read(catalog, "race.t").column("id").to_pylist()
        assert sorted(ids) == sorted(w * 1000 + s for w in range(WRITERS) for s in range(COMMITS))
        published = rest_server.log().count("commit race.t snapshot ")
        print(
            f"\nREST race: {WRITERS} x {COMMITS} commits in {wall:.1f} s, "
            f"{published} commit requests ({published - WRITERS * COMMITS} lost an id race)"
        )
