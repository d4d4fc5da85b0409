"""Our JDBC catalog against Java 1.4.2's ``JdbcCatalog``, on one SQLite file and one PostgreSQL
database (sqlite-jdbc and the PostgreSQL JDBC driver from Maven Central, beside the bundle).

Both ways: Java lists, reads, commits into, renames, alters and drops what we created, and we do
the same with Java's; the rows each side writes into the catalog's own tables are the same, and
another catalog-key sees none of them. Then the race: 4 of
our processes and 2 Java processes commit 50 times each into one table through the JDBC lock, on
a store without a conditional create (ours through pyarrow's plain local filesystem,
``local://``; Java's LocalFileIO, ``file://``): 300 snapshots and every row exactly once, read
by both. Without the lock our side refuses that store.

SQLite is used in WAL mode (``jdbc.journal_mode = WAL``, which both sides apply): in its default
rollback-journal mode, Java 1.4.2's JdbcCatalog cannot commit with ``lock.enabled`` even alone.
Its constructor leaves ``DatabaseMetaData.getTables`` result sets open, whose read lock makes
the lock's own connections fail with SQLITE_BUSY ("Commit failed ... with 10 retries").
"""

from __future__ import annotations

import itertools
import json
import multiprocessing as mp
import os
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import (
    _JAVA_OPTS,
    JavaOracle,
    alter_table_options,
    canonical_rows,
    jdbc_driver_jars,
    pyspark_jars_dir,
    table_schema,
)
from java_oracle import sorted_rows as ordered
from tests.catalogs.postgres import PostgresServer

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import TableNotExistError, UnsafeStoreError
from paimon_pyspark.store.schema_change import SchemaChange

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema([("id", pa.int32()), ("name", pa.string())])
FIELDS = [("id", "INT"), ("name", "STRING")]
PK_SCHEMA = pa.schema(
    [pa.field("p", pa.string(), nullable=False), pa.field("id", pa.int32(), nullable=False)]
)
PK_FIELDS = [("p", "STRING NOT NULL"), ("id", "INT NOT NULL")]
PK_RENAMED = [("java_db", "pk2"), ("ours_db", "pk3")]
TABLE_OPTIONS = {"write-only": "true"}
RACE_SCHEMA = pa.schema([("writer", pa.int32()), ("seq", pa.int32()), ("payload", pa.string())])
RACE_OPTIONS = {
    "write-only": "true",
    "commit.max-retries": "1000",
    "commit.max-retry-wait": "500 ms",
}
OURS, JAVAS, COMMITS = 4, 2, 50
# Java's lock sleeps 100 ms, doubling up to lock-check-max-sleep (8 s by default) between tries
LOCK_OPTIONS = {"lock.enabled": "true", "lock-check-max-sleep": "100 ms"}
JDBC_CATALOG = "org.apache.paimon.jdbc.JdbcCatalog"
JAVA_DIR = Path(__file__).resolve().parents[2] / ".cache" / "java"
PAIMON_JAR = JAVA_DIR / "paimon-bundle-1.4.2.jar"  # as tests/interop/conftest.py
ORACLE_CLASSES = JAVA_DIR / "classes"


def sqlite_options(path: Path) -> dict[str, str]:
    """A JDBC catalog on a new SQLite file in WAL mode (the module's docstring says why):
    ``jdbc.journal_mode`` is sqlite-jdbc's property, and ours."""
    return {
        "metastore": "jdbc",
        "uri": f"jdbc:sqlite:{path}",
        "jdbc.journal_mode": "WAL",
        **LOCK_OPTIONS,
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def jdbc_options(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """A JDBC catalog's options (without ``warehouse``) on a fresh SQLite file or PostgreSQL
    database; the PostgreSQL one under a catalog-key of its own."""
    if request.param == "sqlite":
        return sqlite_options(tmp_path / "catalog.db")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = f"jdbc_{uuid.uuid4().hex[:12]}"
    return {
        "metastore": "jdbc",
        "uri": server.create_database(name),
        "jdbc.user": server.user,
        "jdbc.password": server.password,
        "catalog-key": "team",
        **LOCK_OPTIONS,
    }


def catalog_rows(options: dict[str, str], table: str) -> list[tuple[Any, ...]]:
    """Every row of one of the catalog's own tables, sorted, straight from the database."""
    uri = options["uri"]
    sql = f"SELECT * FROM {table}"
    if uri.startswith("jdbc:sqlite:"):
        with sqlite3.connect(uri.removeprefix("jdbc:sqlite:")) as conn:
            rows = conn.execute(sql).fetchall()
        conn.close()
    else:
        import psycopg

        dbname = uri.rsplit("/", 1)[1]
        host, port = uri.removeprefix("jdbc:postgresql://").split("/", 1)[0].split(":")
        with psycopg.connect(
            host=host,
            port=int(port),
            dbname=dbname,
            user=options["jdbc.user"],
            password=options["jdbc.password"],
        ) as conn:
            rows = conn.execute(sql).fetchall()
    return sorted(tuple(r) for r in rows)


def read_ours(catalog: Any, ident: str) -> list[list[Any]]:
    table = catalog.get_table(ident)
    rb = table.new_read_builder()
    return ordered(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def commit_ours(catalog: Any, ident: str, rows: list[tuple[int, str]]) -> None:
    table = catalog.get_table(ident)
    builder = table.new_batch_write_builder()
    data = pa.table({"id": [r[0] for r in rows], "name": [r[1] for r in rows]}, schema=SCHEMA)
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def test_java_and_we_share_a_jdbc_catalog(
    java_oracle: JavaOracle, jdbc_options: dict[str, str], tmp_path: Path
) -> None:
    warehouse = str(tmp_path / "wh")
    # Java's catalog makes the catalog's tables here (the race has ours make them)
    java_oracle.set_catalog_options(warehouse, jdbc_options)
    jdbc = java_oracle._gateway.jvm.paimonoracle.JdbcCatalogOracle
    assert jdbc.catalogClass(warehouse) == JDBC_CATALOG
    if jdbc_options["uri"].startswith("jdbc:sqlite:"):  # Java made the file, in WAL mode
        assert catalog_rows(jdbc_options, "pragma_journal_mode") == [("wal",)]
    ours = CatalogFactory.create({**jdbc_options, "warehouse": warehouse})

    # ours -> Java: Java lists, reads and commits into the table we created
    ours.create_database("ours_db")
    ours.create_table("ours_db.t", Schema.from_pyarrow_schema(SCHEMA, options=TABLE_OPTIONS))
    commit_ours(ours, "ours_db.t", [(1, "a"), (2, "b")])
    assert json.loads(jdbc.listDatabases(warehouse)) == ["ours_db"]
    assert json.loads(jdbc.listTables(warehouse, "ours_db")) == ["t"]
    assert ordered(java_oracle.read_table(warehouse, "ours_db", "t").rows) == [[1, "a"], [2, "b"]]
    assert java_oracle.write_rows(warehouse, "ours_db", "t", [[3, "c"]]) == 2

    # Java -> ours: we list, read and commit into the table Java created
    java_oracle.create_table(warehouse, "java_db", "jt", FIELDS, options=TABLE_OPTIONS)
    assert java_oracle.write_rows(warehouse, "java_db", "jt", [[10, "x"], [11, "y"]]) == 1
    assert ours.list_databases() == ["java_db", "ours_db"]
    other_key = {**jdbc_options, "warehouse": warehouse, "catalog-key": "elsewhere"}
    other = CatalogFactory.create(other_key)
    assert other.list_databases() == []  # catalog-key scopes every row
    other.close()
    assert ours.list_tables("java_db") == ["jt"]
    assert read_ours(ours, "java_db.jt") == [[10, "x"], [11, "y"]]
    commit_ours(ours, "java_db.jt", [(12, "z")])
    assert ordered(java_oracle.read_table(warehouse, "java_db", "jt").rows) == [
        [10, "x"],
        [11, "y"],
        [12, "z"],
    ]
    assert read_ours(ours, "ours_db.t") == [[1, "a"], [2, "b"], [3, "c"]]
    assert [s["id"] for s in java_oracle.snapshots(warehouse, "java_db", "jt")] == [1, 2]

    # the same rows in the catalog's own tables, whichever side made the database and table;
    # a partitioned primary-key table's keys are synced as properties too
    pk_options = {"bucket": "2", "write-only": "true"}
    ours.create_table(
        "ours_db.pk",
        Schema.from_pyarrow_schema(
            PK_SCHEMA, partition_keys=["p"], primary_keys=["p", "id"], options=pk_options
        ),
    )
    java_oracle.create_table(
        warehouse,
        "java_db",
        "pk",
        PK_FIELDS,
        partition_keys=["p"],
        primary_keys=["p", "id"],
        options=pk_options,
    )
    key = jdbc_options.get("catalog-key", "jdbc")
    props = catalog_rows(jdbc_options, "paimon_table_properties")
    by_table = {
        (db, t): sorted(r[3:] for r in props if r[:3] == (key, db, t))
        for db in ("ours_db", "java_db")
        for t in ("t", "jt", "pk")
    }
    assert by_table[("ours_db", "t")] == by_table[("java_db", "jt")] == [("write-only", "true")]
    assert (
        by_table[("ours_db", "pk")]
        == by_table[("java_db", "pk")]
        == [
            ("bucket", "2"),
            ("bucket-key", "id"),
            ("partition", "p"),
            ("primary-key", "p,id"),
            ("write-only", "true"),
        ]
    )
    db_props = catalog_rows(jdbc_options, "paimon_database_properties")
    assert [r for r in db_props if r[1] == "ours_db"] == [
        (key, "ours_db", "exists", "true"),
        (key, "ours_db", "location", f"{warehouse}/ours_db.db"),
    ]
    assert [r for r in db_props if r[1] == "java_db"] == [
        (key, "java_db", "exists", "true"),
        (key, "java_db", "location", f"{warehouse}/java_db.db"),
    ]
    assert catalog_rows(jdbc_options, "paimon_tables") == [
        (key, "java_db", "jt"),
        (key, "java_db", "pk"),
        (key, "ours_db", "pk"),
        (key, "ours_db", "t"),
    ]

    # renames and option changes, each side on the other's table; the rows follow
    ours.rename_table("java_db.pk", "java_db.pk2")
    jdbc.renameTable(warehouse, "ours_db", "pk", "pk3")
    assert json.loads(jdbc.listTables(warehouse, "java_db")) == ["jt", "pk2"]
    assert ours.list_tables("ours_db") == ["pk3", "t"]
    ours.alter_table("java_db.pk2", [SchemaChange.set_option("snapshot.num-retained.min", "5")])
    assert alter_table_options(
        java_oracle, warehouse, "ours_db", "pk3", [("snapshot.num-retained.min", "5")]
    ) == (1, None)
    props = catalog_rows(jdbc_options, "paimon_table_properties")
    moved = {t: sorted(r[3:] for r in props if r[:3] == (key, *t)) for t in PK_RENAMED}
    assert (
        moved[("java_db", "pk2")]
        == moved[("ours_db", "pk3")]
        == sorted([*by_table[("java_db", "pk")], ("snapshot.num-retained.min", "5")])
    )
    assert not [r for r in props if r[2] == "pk"]
    assert (tmp_path / "wh" / "java_db.db" / "pk2" / "schema" / "schema-1").is_file()
    assert table_schema(java_oracle, warehouse, "java_db", "pk2")["id"] == 1

    # drops, each side dropping the other's: tables, then databases
    jdbc.dropTable(warehouse, "ours_db", "t")
    assert ours.list_tables("ours_db") == ["pk3"]
    with pytest.raises(TableNotExistError):
        ours.get_table("ours_db.t")
    assert not (tmp_path / "wh" / "ours_db.db" / "t").exists()
    ours.drop_table("java_db.jt")
    assert json.loads(jdbc.listTables(warehouse, "java_db")) == ["pk2"]
    assert not (tmp_path / "wh" / "java_db.db" / "jt").exists()
    jdbc.dropDatabase(warehouse, "ours_db", True)
    ours.drop_database("java_db", cascade=True)
    assert not (tmp_path / "wh" / "java_db.db" / "pk2").exists()
    assert ours.list_databases() == []
    assert json.loads(jdbc.listDatabases(warehouse)) == []
    assert catalog_rows(jdbc_options, "paimon_tables") == []
    assert catalog_rows(jdbc_options, "paimon_database_properties") == []
    ours.close()


# --- the race ----------------------------------------------------------------------------------


def _java_command(options: dict[str, str], writer: int, barrier: Path) -> list[str]:
    classpath = os.pathsep.join(
        [
            str(PAIMON_JAR),
            *[str(j) for j in jdbc_driver_jars(PAIMON_JAR)],
            str(ORACLE_CLASSES),
            str(pyspark_jars_dir() / "*"),
        ]
    )
    return [
        "java",
        *_JAVA_OPTS,
        "-cp",
        classpath,
        "paimonoracle.JdbcRaceWriter",
        json.dumps(options),
        "db",
        "t",
        str(writer),
        str(COMMITS),
        str(barrier),
    ]


@pytest.fixture(scope="module")
def race_context() -> Iterator[Any]:
    """Our writers fork from a server that imported ``jdbc_race`` (and so pyarrow and the
    package) once: a spawned interpreter would import them itself, seconds each on 2 cores."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["jdbc_race"])
    yield ctx


# PostgreSQL passes this race too (add "postgresql" here: as long again as SQLite's); make test
# runs it on SQLite only, for time.
@pytest.mark.parametrize("jdbc_options", ["sqlite"], indirect=True)
def test_race_through_the_jdbc_lock(
    java_oracle: JavaOracle, race_context: Any, jdbc_options: dict[str, str], tmp_path: Path
) -> None:
    import jdbc_race

    wh = tmp_path / "wh"
    ours_options = {**jdbc_options, "warehouse": f"local://{wh}"}
    java_options = {**jdbc_options, "warehouse": f"file://{wh}"}

    # without the lock, that store is refused: nothing would serialize the commits
    with pytest.raises(UnsafeStoreError, match="lock.enabled"):
        CatalogFactory.create({**ours_options, "lock.enabled": "false"})

    catalog = CatalogFactory.create(ours_options)
    catalog.create_database("db")
    catalog.create_table("db.t", Schema.from_pyarrow_schema(RACE_SCHEMA, options=RACE_OPTIONS))
    for w in range(JAVAS):  # JdbcRaceWriter warms up on its own table
        catalog.create_table(f"db.t_warmup_java_{w}", Schema.from_pyarrow_schema(RACE_SCHEMA))
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    logs = [open(tmp_path / f"java-{w}.log", "w") for w in range(JAVAS)]  # noqa: SIM115
    javas = [
        subprocess.Popen(_java_command(java_options, w, barrier), stdout=log, stderr=log)
        for w, log in enumerate(logs)
    ]
    ours = [
        race_context.Process(
            target=jdbc_race.writer, args=(ours_options, "db", "t", w, COMMITS, str(barrier))
        )
        for w in range(OURS)
    ]
    for p in ours:
        p.start()
    try:
        deadline = time.monotonic() + 120
        while len(os.listdir(barrier)) < OURS + JAVAS:
            failed = [j.args for j in javas if j.poll() is not None]
            failed += [p.name for p in ours if p.exitcode is not None]
            assert not failed and time.monotonic() < deadline, _logs(tmp_path)
            time.sleep(0.01)
        (barrier / "go").touch()
        for p in ours:
            p.join(300)
        codes = [j.wait(300) for j in javas]
    finally:
        for j in javas:
            if j.poll() is None:
                j.kill()
        for p in ours:
            if p.is_alive():
                p.kill()
        for log in logs:
            log.close()
    assert [p.exitcode for p in ours] == [0] * OURS
    assert codes == [0] * JAVAS, _logs(tmp_path)

    # our view: 300 APPEND snapshots, 50 from each Java process, and every row once
    table = catalog.get_table("db.t")
    sm = table.snapshot_manager
    ids = sm.list_ids()
    assert ids == list(range(1, (OURS + JAVAS) * COMMITS + 1))
    snapshots = [sm.snapshot(i) for i in ids]
    assert {s.commit_kind for s in snapshots} == {"APPEND"}
    writers = [_writer_of(s.commit_user) for s in snapshots]
    names = {
        f"{side}-{w}": COMMITS for side, n in (("ours", OURS), ("java", JAVAS)) for w in range(n)
    }
    assert {n: writers.count(n) for n in names} == names
    # they raced: one block of commits per process would change hands OURS + JAVAS - 1 times,
    # and each Java process committed while ours were still committing
    assert sum(a != b for a, b in itertools.pairwise(writers)) > OURS + JAVAS - 1
    ours_at = [i for i, w in enumerate(writers) if w.startswith("ours-")]
    for w in range(JAVAS):
        java_at = [i for i, name in enumerate(writers) if name == f"java-{w}"]
        assert ours_at[0] < java_at[0] < ours_at[-1], (w, writers)
    want = ordered(
        [[w, s, "ours"] for w in range(OURS) for q in range(COMMITS) for s in (q, -q - 1)]
        + [[w, s, "java"] for w in range(JAVAS) for q in range(COMMITS) for s in (q, -q - 1)]
    )
    rb = table.new_read_builder()
    got = ordered(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))
    assert got == want
    assert snapshots[-1].total_record_count == len(want) == 2 * (OURS + JAVAS) * COMMITS
    assert catalog_rows(jdbc_options, "paimon_distributed_locks") == []  # every lock released

    # Java's view of the same table, through its JdbcCatalog on file://
    java_wh = java_options["warehouse"]
    java_oracle.set_catalog_options(java_wh, java_options)
    assert ordered(java_oracle.read_table(java_wh, "db", "t").rows) == want
    java_snapshots = java_oracle.snapshots(java_wh, "db", "t")
    assert [s["id"] for s in java_snapshots] == ids
    assert java_snapshots[-1]["totalRecordCount"] == len(want)


def _writer_of(commit_user: str) -> str:
    """``java-<w>`` or ``ours-<w>``: the prefix each writer gives its commit users."""
    return commit_user.split("_", 1)[0]


def _logs(tmp_path: Path) -> str:
    return "\n".join(p.read_text()[-3000:] for p in sorted(tmp_path.glob("java-*.log")))
