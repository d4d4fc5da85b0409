"""Three REST catalog clients on one of our servers: Java 1.4.2's RESTCatalog, pypaimon 2.1.0's
REST catalog and ours (catalog/rest).

One server per module (tests/catalogs/rest_server.py), started here on 127.0.0.1 with a token
file. Each client creates a table, writes and commits rows (the commit goes to the server's
``POST .../commit``, which publishes the snapshot), reads the other clients' tables, and commits
into them; every read is compared row for row with what all three wrote. Java runs in the
session's JVM (tests/interop/java/RestCatalogOracle.java plus PaimonOracle's writer and reader),
pypaimon in its own venv (pypaimon_driver.py with ``catalog_options``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from pypaimon_oracle import PypaimonOracle
from schema_evolution_oracle import java_alter_table, java_rename_table
from tests.catalogs.rest_server import RestServer, rest_server  # noqa: F401

from paimon_pyspark import Catalog, CatalogFactory, Schema
from paimon_pyspark.catalog.rest.catalog import RestCatalog
from paimon_pyspark.store.schema_change import SchemaChange

DB = "rest_db"
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
JAVA_FIELDS = [("id", "BIGINT"), ("name", "STRING"), ("dt", "STRING")]
CLIENTS = ("java", "pypaimon", "ours")
Row = list[Any]


class Clients(NamedTuple):
    server: RestServer
    java: JavaOracle
    pypaimon: PypaimonOracle
    ours: Catalog

    @property
    def warehouse(self) -> str:
        return self.server.warehouse

    def java_rest(self) -> Any:
        """tests/interop/java/RestCatalogOracle.java's static methods."""
        return self.java._gateway.jvm.paimonoracle.RestCatalogOracle


@pytest.fixture(scope="module")
def clients(
    rest_server: RestServer,  # noqa: F811
    java_oracle: JavaOracle,
    pypaimon_oracle: PypaimonOracle,
) -> Iterator[Clients]:
    """Java and pypaimon open the server's warehouse as a REST catalog from now on."""
    options = rest_server.catalog_options()
    java_oracle.set_catalog_options(rest_server.warehouse, options)
    pypaimon_oracle.set_catalog_options(rest_server.warehouse, options)
    try:
        yield Clients(rest_server, java_oracle, pypaimon_oracle, CatalogFactory.create(options))
    finally:
        # the JVM and the fork server outlive this module: forget the (stopped) server
        java_oracle.set_catalog_options(rest_server.warehouse, {})
        pypaimon_oracle.set_catalog_options(rest_server.warehouse, {})


def _rows(writer: str, commit: int, ids: Sequence[int]) -> list[Row]:
    """Rows that say who wrote them, in which commit, in two partitions."""
    return [[i, f"{writer}-{commit}-{i}", f"2026-0{1 + i % 2}"] for i in ids]


def create(c: Clients, client: str, table: str) -> None:
    if client == "java":
        c.java.create_table(c.warehouse, DB, table, JAVA_FIELDS, partition_keys=["dt"])
    elif client == "pypaimon":
        c.pypaimon.create_table(c.warehouse, f"{DB}.{table}", SCHEMA, partition_keys=["dt"])
    else:
        c.ours.create_database(DB, ignore_if_exists=True)
        c.ours.create_table(
            f"{DB}.{table}", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"])
        )


def write(c: Clients, client: str, table: str, rows: list[Row]) -> None:
    """One batch write and commit by ``client``."""
    data = pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA)
    if client == "java":
        c.java.write_rows(c.warehouse, DB, table, rows)
    elif client == "pypaimon":
        c.pypaimon.write(c.warehouse, f"{DB}.{table}", data)
    else:
        commit_ours(c.ours, f"{DB}.{table}", data)


def commit_ours(catalog: Catalog, table: str, data: pa.Table) -> None:
    """One batch write by our client; its commit goes to the server."""
    builder = catalog.get_table(table).new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def read_ours(catalog: Catalog, table: str) -> pa.Table:
    rb = catalog.get_table(table).new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def read(c: Clients, client: str, table: str) -> list[Row]:
    """All rows of the latest snapshot as ``client`` reads them, canonical and sorted."""
    if client == "java":
        got = c.java.read_table(c.warehouse, DB, table)
        assert got.fields == SCHEMA.names
        return sorted_rows(got.rows)
    if client == "pypaimon":
        return sorted_rows(canonical_rows(c.pypaimon.read(c.warehouse, f"{DB}.{table}")))
    return sorted_rows(canonical_rows(read_ours(c.ours, f"{DB}.{table}")))


def list_tables(c: Clients, client: str) -> list[str]:
    if client == "java":
        names: list[str] = json.loads(c.java_rest().listTables(c.warehouse, DB))
        return names
    if client == "pypaimon":
        return c.pypaimon.list_tables(c.warehouse, DB)
    return sorted(c.ours.list_tables(DB))


def table_info(c: Clients, table: str) -> dict[str, Any]:
    """Java's view: the server's table uuid, path and latest snapshot id."""
    info: dict[str, Any] = json.loads(c.java_rest().tableInfo(c.warehouse, DB, table))
    return info


def test_three_clients_create_write_commit_and_read_each_others_tables(clients: Clients) -> None:
    c = clients
    assert c.java_rest().catalogClass(c.warehouse) == "org.apache.paimon.rest.RESTCatalog"
    assert isinstance(c.ours, RestCatalog)
    tables = {client: f"t_{client}" for client in CLIENTS}
    expected: dict[str, list[Row]] = {}
    for n, client in enumerate(CLIENTS):
        create(c, client, tables[client])
        rows = _rows(client, 1, range(10 * n, 10 * n + 4))
        write(c, client, tables[client], rows)
        expected[tables[client]] = rows

    assert all(list_tables(c, client) == sorted(tables.values()) for client in CLIENTS)

    # each client commits into both tables the others created
    for n, writer in enumerate(CLIENTS):
        for owner in CLIENTS:
            if owner != writer:
                rows = _rows(writer, 2, range(100 + 10 * n, 100 + 10 * n + 3))
                write(c, writer, tables[owner], rows)
                expected[tables[owner]] += rows
    for reader in CLIENTS:
        for table, rows in expected.items():
            assert read(c, reader, table) == sorted_rows(rows), f"{reader} reads {table}"

    # 3 commits per table, each one snapshot published by the server, none lost or doubled
    for table in tables.values():
        info = table_info(c, table)
        assert info["latestSnapshotId"] == 3
        assert info["location"].rstrip("/").endswith(f"/{DB}.db/{table}")
    published = re.findall(rf"commit {DB}\.(t_\w+) snapshot (\d+) .*published", c.server.log())
    assert sorted(published) == sorted((t, str(s)) for t in tables.values() for s in (1, 2, 3))

    # partitions as Java's RESTCatalog lists them through the server
    partitions = json.loads(c.java_rest().partitions(c.warehouse, DB, tables["pypaimon"]))
    counts = Counter(row[2] for row in expected[tables["pypaimon"]])
    assert [(p["spec"], p["recordCount"]) for p in partitions] == [
        ({"dt": dt}, n) for dt, n in sorted(counts.items())
    ]


def test_primary_key_upserts_from_three_clients_merge_alike(clients: Clients) -> None:
    """Java creates a primary-key table; each client upserts in turn; all read one merge."""
    c = clients
    key_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    c.java.create_table(
        c.warehouse,
        DB,
        "pk",
        [("id", "BIGINT NOT NULL"), ("v", "STRING")],
        primary_keys=["id"],
        options={"bucket": "2"},
    )
    c.java.write_rows(c.warehouse, DB, "pk", [[1, "java"], [2, "java"], [3, "java"]])
    upserts = pa.table({"id": pa.array([2, 4], pa.int64()), "v": ["pypaimon"] * 2}, key_schema)
    c.pypaimon.write(c.warehouse, f"{DB}.pk", upserts)
    commit_ours(c.ours, f"{DB}.pk", pa.table({"id": [3, 5], "v": ["ours"] * 2}, key_schema))
    merged = [[1, "java"], [2, "pypaimon"], [3, "ours"], [4, "pypaimon"], [5, "ours"]]
    assert sorted_rows(c.java.read_table(c.warehouse, DB, "pk").rows) == merged
    assert sorted_rows(canonical_rows(c.pypaimon.read(c.warehouse, f"{DB}.pk"))) == merged
    assert sorted_rows(canonical_rows(read_ours(c.ours, f"{DB}.pk"))) == merged


def test_java_alter_and_rename_through_the_server_reach_the_others(clients: Clients) -> None:
    """Java's ALTER TABLE and RENAME TABLE go to the server (POST .../tables/{t},
    POST .../tables/rename); pypaimon then writes the new schema and ours reads it."""
    c = clients
    db = "rest_evolve"
    c.ours.create_database(db)
    c.ours.create_table(f"{db}.t", Schema.from_pyarrow_schema(SCHEMA))
    commit_ours(c.ours, f"{db}.t", pa.table({"id": [1], "name": ["ours"], "dt": ["d"]}, SCHEMA))

    changes = [
        SchemaChange.add_column("extra", pa.int32()),
        SchemaChange.rename_column("name", "nm"),
    ]
    assert java_alter_table(c.java, c.warehouse, db, "t", changes) == (1, None)
    evolved = pa.schema(
        [("id", pa.int64()), ("nm", pa.string()), ("dt", pa.string()), ("extra", pa.int32())]
    )
    c.pypaimon.write(
        c.warehouse,
        f"{db}.t",
        pa.table({"id": [2], "nm": ["pypaimon"], "dt": ["d"], "extra": [7]}, evolved),
    )
    assert java_rename_table(c.java, c.warehouse, (db, "t"), (db, "renamed")) == (-1, None)
    assert sorted(c.ours.list_tables(db)) == ["renamed"]
    got = read_ours(c.ours, f"{db}.renamed")
    assert got.column_names == ["id", "nm", "dt", "extra"]
    assert sorted_rows(canonical_rows(got)) == [[1, "ours", "d", None], [2, "pypaimon", "d", 7]]


def test_drops_by_one_client_are_seen_by_the_others(clients: Clients) -> None:
    c = clients
    scratch = "rest_scratch"
    c.ours.create_database(scratch)
    c.ours.create_table(f"{scratch}.gone", Schema.from_pyarrow_schema(SCHEMA))
    assert json.loads(c.java_rest().listTables(c.warehouse, scratch)) == ["gone"]
    c.java_rest().dropTable(c.warehouse, scratch, "gone")
    assert c.pypaimon.list_tables(c.warehouse, scratch) == []
    assert c.ours.list_tables(scratch) == []
    c.java_rest().dropDatabase(c.warehouse, scratch, False)
    assert scratch not in c.ours.list_databases()
    assert scratch not in json.loads(c.java_rest().listDatabases(c.warehouse))


def test_java_with_a_wrong_token_is_refused_and_logged(clients: Clients) -> None:
    c = clients
    out = json.loads(c.java_rest().openWithToken(c.server.url, c.warehouse, "not-a-token"))
    assert out["error"] == "org.apache.paimon.rest.exceptions.NotAuthorizedException"
    assert "unknown bearer token" in out["message"].lower()
    assert re.search(
        r"refused GET /v1/config\S* from 127\.0\.0\.1:\d+: 401 unknown bearer token",
        c.server.log(),
        re.IGNORECASE,
    )
