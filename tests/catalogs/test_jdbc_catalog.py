"""The JDBC catalog on a real SQLite file and a real PostgreSQL server (one per session).

Each test runs on both databases; on PostgreSQL the tests share one database and keep apart by
``catalog-key``, which is what that option is for. Java's side of the same database is
tests/interop/test_jdbc_catalog_java.py.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from tests.catalogs.postgres import PostgresServer

from paimon_pyspark import CatalogFactory
from paimon_pyspark.catalog.jdbc.catalog import JdbcCatalog
from paimon_pyspark.errors import (
    CatalogConnectionError,
    CatalogError,
    CatalogLockError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    OptionError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsafeStoreError,
    UnsupportedOptionError,
)
from paimon_pyspark.schema import Schema

SCHEMA = Schema.from_pyarrow_schema(
    pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]),
    primary_keys=["id"],
    options={"bucket": "1"},
)


class Db:
    """One test's catalog store: options for a catalog, and raw SQL on the same database."""

    def __init__(self, kind: str, tmp: Path, pg: PostgresServer | None) -> None:
        self.kind = kind
        self.tmp = tmp
        self.pg = pg
        self.key = "k" + uuid.uuid4().hex[:10]
        self.uri = pg.uri if pg else f"jdbc:sqlite:{tmp / 'catalog.db'}"

    def options(self, warehouse: str | None = None, **extra: str) -> dict[str, str]:
        opts = {
            "metastore": "jdbc",
            "warehouse": warehouse or f"local://{self.tmp / 'wh'}",
            "uri": self.uri,
            "catalog-key": self.key,
            "lock.enabled": "true",
            **extra,
        }
        if self.pg:
            opts.update({"jdbc.user": self.pg.user, "jdbc.password": self.pg.password})
        return opts

    def catalog(self, **extra: str) -> JdbcCatalog:
        catalog = CatalogFactory.create(self.options(**extra))
        assert isinstance(catalog, JdbcCatalog)
        return catalog

    def sql(self, statement: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self.pg:
            import psycopg

            with psycopg.connect(self.pg.conninfo(), autocommit=True) as conn:
                cur = conn.execute(statement.replace("?", "%s"), args)  # type: ignore[arg-type]
                return list(cur.fetchall()) if cur.description else []
        with sqlite3.connect(self.tmp / "catalog.db") as conn:
            return list(conn.execute(statement, args).fetchall())


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Db:
    pg = request.getfixturevalue("postgres_server") if request.param == "postgresql" else None
    return Db(request.param, tmp_path, pg)


def write(catalog: JdbcCatalog, name: str, ids: list[int]) -> None:
    table = catalog.get_table(name)
    builder = table.new_batch_write_builder()
    writer = builder.new_write()
    writer.write_arrow(pa.table({"id": ids, "v": [f"v{i}" for i in ids]}))
    commit = builder.new_commit()
    commit.commit(writer.prepare_commit())
    writer.close()
    commit.close()


def read_ids(catalog: JdbcCatalog, name: str) -> list[int]:
    table = catalog.get_table(name)
    rb = table.new_read_builder()
    ids = rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("id").to_pylist()
    return sorted(ids)


def test_databases_and_their_properties(db: Db) -> None:
    with db.catalog() as catalog:
        catalog.create_database("d1", properties={"owner": "team-a"})
        catalog.create_database("d2")
        assert catalog.list_databases() == ["d1", "d2"]
        info = catalog.get_database("d1")
        assert info["options"]["owner"] == "team-a"
        assert info["location"].endswith("/d1.db")
        rows = db.sql(
            "SELECT property_key, property_value FROM paimon_database_properties "
            "WHERE catalog_key = ? AND database_name = ?",
            (db.key, "d1"),
        )
        assert dict(rows)["exists"] == "true" and dict(rows)["owner"] == "team-a"
        with pytest.raises(DatabaseAlreadyExistError):
            catalog.create_database("d1")
        catalog.create_database("d1", ignore_if_exists=True)
        with pytest.raises(DatabaseNotExistError):
            catalog.get_database("nope")
        catalog.create_table("d1.t", SCHEMA)
        with pytest.raises(CatalogError, match="not empty"):
            catalog.drop_database("d1")
        catalog.drop_database("d1", cascade=True)
        catalog.drop_database("d2")
        assert catalog.list_databases() == []
        assert not (db.tmp / "wh" / "d1.db").exists()
        assert db.sql("SELECT * FROM paimon_tables WHERE catalog_key = ?", (db.key,)) == []


def test_tables_rows_rename_and_drop(db: Db) -> None:
    with db.catalog() as catalog:
        catalog.create_database("db")
        catalog.create_table("db.t", SCHEMA)
        with pytest.raises(TableAlreadyExistError):
            catalog.create_table("db.t", SCHEMA)
        catalog.create_table("db.t", SCHEMA, ignore_if_exists=True)
        write(catalog, "db.t", [1, 2])
        assert catalog.list_tables("db") == ["t"]
        assert db.sql(
            "SELECT catalog_key, database_name, table_name FROM paimon_tables "
            "WHERE catalog_key = ?",
            (db.key,),
        ) == [(db.key, "db", "t")]
        props = dict(
            db.sql(
                "SELECT property_key, property_value FROM paimon_table_properties "
                "WHERE catalog_key = ? AND table_name = ?",
                (db.key, "t"),
            )
        )
        assert props["primary-key"] == "id" and props["bucket"] == "1"

        catalog.rename_table("db.t", "db.u")
        assert catalog.list_tables("db") == ["u"]
        assert read_ids(catalog, "db.u") == [1, 2]
        assert not (db.tmp / "wh" / "db.db" / "t").exists()
        with pytest.raises(TableNotExistError):
            catalog.get_table("db.t")

        catalog.drop_table("db.u")
        assert catalog.list_tables("db") == []
        assert not (db.tmp / "wh" / "db.db" / "u").exists()
        assert (
            db.sql("SELECT * FROM paimon_table_properties WHERE catalog_key = ?", (db.key,)) == []
        )
        with pytest.raises(TableNotExistError):
            catalog.drop_table("db.u")
        catalog.drop_table("db.u", ignore_if_not_exists=True)


def test_catalog_key_keeps_catalogs_apart(db: Db) -> None:
    """Two keys on one database and one warehouse: each sees only what it registered, and a
    directory the other registered is not a table here (Java: the row decides)."""
    with db.catalog() as first:
        first.create_database("db")
        first.create_table("db.t", SCHEMA)
        other = Db(db.kind, db.tmp, db.pg)
        with other.catalog() as second:
            assert second.list_databases() == []
            second.create_database("db")
            assert second.list_tables("db") == []
            with pytest.raises(TableNotExistError):
                second.get_table("db.t")
            with pytest.raises(CatalogError, match="not registered"):
                second.create_table("db.t", SCHEMA)
        assert first.list_tables("db") == ["t"]


def test_lock_rows_timeout_and_expiry(db: Db) -> None:
    """The row Java takes for a table; its ``expire_time_seconds`` is the holder's
    ``lock-acquire-timeout`` in whole seconds (so below 1 s a lock expires at once)."""
    with db.catalog(**{"lock-acquire-timeout": "5 s"}) as a:
        a.create_database("db")
        lock_a = a.lock("db", "t")
        assert lock_a.lock_id == f"{db.key}.db.t"
        assert lock_a.try_acquire()
        rows = db.sql("SELECT lock_id, expire_time_seconds FROM paimon_distributed_locks")
        assert (f"{db.key}.db.t", 5) in rows
        timeouts = {"lock-acquire-timeout": "300 ms", "lock-check-max-sleep": "50 ms"}
        with db.catalog(**timeouts) as b:
            lock_b = b.lock("db", "t")
            assert not lock_b.try_acquire()
            with pytest.raises(CatalogLockError, match=r"db\.t.*300 ms"):
                lock_b.run_with_lock(lambda: None)
            lock_a.release()
            assert lock_b.run_with_lock(lambda: 7) == 7
        # a held lock older than its expiry is cleared by the next attempt
        assert lock_a.try_acquire()
        assert not lock_a.try_acquire()
        ago = "NOW() - INTERVAL '1 hour'" if db.pg else "datetime('now', '-1 hour')"
        db.sql(
            f"UPDATE paimon_distributed_locks SET acquired_at = {ago} WHERE lock_id = ?",
            (lock_a.lock_id,),
        )
        assert lock_a.try_acquire()
        lock_a.release()


_WRITER = """
import json, sys
import pyarrow as pa
from paimon_pyspark import CatalogFactory
options, worker, commits = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
catalog = CatalogFactory.create(options)
table = catalog.get_table("db.t")
for i in range(commits):
    builder = table.new_batch_write_builder()
    writer = builder.new_write()
    row = worker * 1000 + i
    writer.write_arrow(pa.table({"id": [row], "v": [str(row)]}))
    commit = builder.new_commit()
    commit.commit(writer.prepare_commit())
    writer.close()
    commit.close()
catalog.close()
"""


def test_commits_from_processes_through_the_lock(db: Db) -> None:
    """A ``local://`` warehouse has no conditional create; the lock serializes 3 processes'
    commits, and each lands exactly once."""
    workers, commits = 3, 6
    options = db.options(**{"lock-check-max-sleep": "100 ms"})
    with db.catalog() as catalog:
        catalog.create_database("db")
        catalog.create_table(
            "db.t",
            Schema.from_pyarrow_schema(
                pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]),
                options={"bucket": "-1"},
            ),
        )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, json.dumps(options), str(w), str(commits)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    with db.catalog() as catalog:
        table = catalog.get_table("db.t")
        assert table.store.snapshot_manager.latest_id() == workers * commits
        expected = sorted(w * 1000 + i for w in range(workers) for i in range(commits))
        assert read_ids(catalog, "db.t") == expected
    assert db.sql("SELECT * FROM paimon_distributed_locks") == []


def test_failed_registration_leaves_nothing(tmp_path: Path) -> None:
    """If the table cannot be registered (here: its properties' table is gone), the row is
    rolled back and the schema just written is deleted again."""
    db = Db("sqlite", tmp_path, None)
    with db.catalog() as catalog:
        catalog.create_database("db")
        db.sql("ALTER TABLE paimon_table_properties RENAME TO hidden")
        with pytest.raises(CatalogError, match="paimon_table_properties"):
            catalog.create_table("db.t", SCHEMA)
        assert not (tmp_path / "wh" / "db.db" / "t").exists()
        assert db.sql("SELECT * FROM paimon_tables") == []
        db.sql("ALTER TABLE hidden RENAME TO paimon_table_properties")
        catalog.create_table("db.t", SCHEMA)
        assert catalog.list_tables("db") == ["t"]


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({}, OptionError, "'uri' is required"),
        ({"uri": "jdbc:mysql://127.0.0.1/x"}, UnsupportedOptionError, "mysql"),
        (
            {"uri": "jdbc:sqlite:/nonexistent-dir/x/c.db", "lock.enabled": "true"},
            CatalogConnectionError,
            "nonexistent",
        ),
        ({"uri": "jdbc:sqlite:{tmp}/c.db", "lock.enabled": "false"}, UnsafeStoreError, "lock"),
        ({"uri": "jdbc:sqlite:{tmp}/c.db", "lock.enabled": "maybe"}, OptionError, "lock.enabled"),
    ],
)
def test_typed_errors(
    tmp_path: Path, options: dict[str, str], error: type[Exception], match: str
) -> None:
    opts = {"metastore": "jdbc", "warehouse": f"local://{tmp_path}/wh"}
    opts.update({k: v.format(tmp=tmp_path) for k, v in options.items()})
    with pytest.raises(error, match=match):
        CatalogFactory.create(opts)


def test_unreachable_postgres_names_uri_not_password(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    opts = {
        "metastore": "jdbc",
        "warehouse": str(tmp_path / "wh"),
        "uri": f"jdbc:postgresql://127.0.0.1:{port}/db?password=hunter2",
        "jdbc.password": "hunter3",
    }
    with pytest.raises(CatalogConnectionError) as info:
        CatalogFactory.create(opts)
    message = str(info.value)
    assert f"127.0.0.1:{port}/db" in message
    assert "hunter2" not in message and "hunter3" not in message


def test_wrong_password_is_a_connection_error(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    opts = postgres_server.catalog_options(str(tmp_path / "wh"))
    opts["jdbc.password"] = "wrong-secret"
    with pytest.raises(CatalogConnectionError, match=str(postgres_server.port)) as info:
        CatalogFactory.create(opts)
    assert "wrong-secret" not in str(info.value)
