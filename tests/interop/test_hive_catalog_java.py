"""Our Hive catalog against Java 1.4.2's ``HiveCatalog``, on one Hive Metastore (Hive 2.3.10's,
tests/catalogs/hive_metastore.py) and one warehouse, both with ``lock.enabled`` (the
metastore's table lock).

Both ways: Java lists, reads, commits into, alters, renames and drops the table we created, and
we do the same with Java's; the metastore records both write for the same table are the same
(parameters, location, storage formats, serde, columns), before and after the ALTERs, and so
are the databases' options. Then a small race through the metastore's table lock on a store
without a conditional create (ours through pyarrow's plain local filesystem, ``local://``;
Java's LocalFileIO, ``file://``): 2 of our processes and 1 Java process
(tests/interop/jdbc_race.py and JdbcRaceWriter.java, which open any catalog from its options)
commit 10 times each: 30 snapshots, every row once, every metastore lock released.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import (
    _JAVA_OPTS,
    JavaOracle,
    alter_table_options,
    canonical_rows,
    pyspark_jars_dir,
)
from java_oracle import sorted_rows as ordered
from tests.catalogs.hive_metastore import HiveMetastore

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.catalog.hive.catalog import HiveCatalog
from paimon_pyspark.errors import UnsafeStoreError
from paimon_pyspark.store.schema_change import SchemaChange

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())])
FIELDS = [("k", "INT NOT NULL"), ("v", "STRING")]
OPTIONS = {"bucket": "1", "write-only": "true"}
# what the metastore adds on its own, and differs between two tables written apart
VOLATILE = {"transient_lastDdlTime", "totalSize", "numFiles", "numRows", "rawDataSize"}
RACE_SCHEMA = pa.schema([("writer", pa.int32()), ("seq", pa.int32()), ("payload", pa.string())])
RACE_OPTIONS = {"write-only": "true", "commit.max-retries": "100"}
OURS, JAVAS, COMMITS = 2, 1, 10
CLASSES = Path(__file__).resolve().parents[2] / ".cache" / "java" / "classes"
PAIMON_JAR = CLASSES.parent / "paimon-bundle-1.4.2.jar"


def _write(catalog: HiveCatalog, name: str, keys: list[int]) -> None:
    table = catalog.get_table(name)
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    try:
        write.write_arrow(
            pa.table({"k": pa.array(keys, pa.int32()), "v": [f"v{k}" for k in keys]}, SCHEMA)
        )
        commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()


def _rows(catalog: HiveCatalog, name: str) -> list[list[Any]]:
    rb = catalog.get_table(name).new_read_builder()
    return ordered(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def _record(java: Any, warehouse: str, db: str, name: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(java.hmsRecord(warehouse, db, name))
    record["parameters"] = {k: v for k, v in record["parameters"].items() if k not in VOLATILE}
    record["location"] = record["location"].replace(f"/{db}.db/", "/<db>.db/")
    return record


def test_hive_catalog_both_ways(
    java_oracle: JavaOracle, hive_metastore: HiveMetastore, tmp_path: Path
) -> None:
    warehouse = tmp_path.as_uri()
    options = hive_metastore.catalog_options(warehouse, **{"lock.enabled": "true"})
    java_oracle.set_catalog_options(warehouse, options)
    jvm = java_oracle._gateway.jvm.paimonoracle
    hive, catalogs = jvm.HiveCatalogOracle, jvm.JdbcCatalogOracle
    assert hive.catalogClass(warehouse) == "org.apache.paimon.hive.HiveCatalog"

    with CatalogFactory.create(options) as ours:
        assert isinstance(ours, HiveCatalog)
        # ours -> Java
        ours.create_database("ours_db", properties={"team": "py"})
        ours.create_table(
            "ours_db.t",
            Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options=OPTIONS),
        )
        _write(ours, "ours_db.t", [1, 2])
        # Java -> ours
        catalogs.createDatabase(warehouse, "java_db")
        java_oracle.create_table(
            warehouse, "java_db", "t", FIELDS, primary_keys=["k"], options=OPTIONS
        )
        java_oracle.write_rows(warehouse, "java_db", "t", [[10, "v10"]])

        assert {"ours_db", "java_db"} <= set(json.loads(catalogs.listDatabases(warehouse)))
        assert {"ours_db", "java_db"} <= set(ours.list_databases())
        for db in ("ours_db", "java_db"):
            assert json.loads(catalogs.listTables(warehouse, db)) == ["t"]
            assert ours.list_tables(db) == ["t"]

        # each commits into the other's table, under the metastore lock; both read all rows
        java_oracle.write_rows(warehouse, "ours_db", "t", [[3, "v3"]])
        _write(ours, "java_db.t", [11])
        expected = {
            "ours_db": [[1, "v1"], [2, "v2"], [3, "v3"]],
            "java_db": [[10, "v10"], [11, "v11"]],
        }
        for db, rows in expected.items():
            assert _rows(ours, f"{db}.t") == rows
            assert ordered(java_oracle.read_table(warehouse, db, "t").rows) == rows
            assert java_oracle.latest_snapshot_id(warehouse, db, "t") == 2

        # the records both write are the same; and the databases' options
        ours_record = _record(hive, warehouse, "ours_db", "t")
        java_record = _record(hive, warehouse, "java_db", "t")
        assert ours_record == java_record
        assert java_record["parameters"]["table_type"] == "PAIMON"
        assert java_record["location"] == f"file:{tmp_path}/<db>.db/t"
        assert java_record["cols"] == [["k", "int", None], ["v", "string", None]]
        java_db = json.loads(catalogs.databaseOptions(warehouse, "java_db"))
        assert ours.get_database("java_db")["options"] == java_db
        assert java_db["location"] == f"file:{tmp_path}/java_db.db"
        assert json.loads(catalogs.databaseOptions(warehouse, "ours_db")) == {
            "team": "py",
            "location": f"file:{tmp_path}/ours_db.db",
        }

        # each alters the other's table (an option set, one removed): the records stay equal
        java_alter = alter_table_options(
            java_oracle, warehouse, "ours_db", "t", [("snapshot.num-retained.min", "3")]
        )
        assert java_alter.error is None
        ours.alter_table("java_db.t", [SchemaChange.set_option("snapshot.num-retained.min", "3")])
        assert _record(hive, warehouse, "ours_db", "t") == _record(hive, warehouse, "java_db", "t")
        alter_table_options(java_oracle, warehouse, "ours_db", "t", [("write-only", None)])
        ours.alter_table("java_db.t", [SchemaChange.remove_option("write-only")])
        altered = _record(hive, warehouse, "java_db", "t")
        assert altered == _record(hive, warehouse, "ours_db", "t")
        assert altered["parameters"]["snapshot.num-retained.min"] == "3"
        assert "write-only" not in altered["parameters"]

        # each renames the other's table: the record and the directory move
        catalogs.renameTable(warehouse, "ours_db", "t", "t2")
        ours.rename_table("java_db.t", "java_db.t2")
        for db, rows in expected.items():
            assert json.loads(catalogs.listTables(warehouse, db)) == ["t2"]
            assert ours.list_tables(db) == ["t2"]
            assert not (tmp_path / f"{db}.db" / "t").exists()
            assert _rows(ours, f"{db}.t2") == rows
            assert ordered(java_oracle.read_table(warehouse, db, "t2").rows) == rows
        assert _record(hive, warehouse, "ours_db", "t2")["location"] == (
            f"file:{tmp_path}/<db>.db/t2"
        )

        # each drops the other's table: record and directory
        catalogs.dropTable(warehouse, "ours_db", "t2")
        ours.drop_table("java_db.t2")
        for db in ("ours_db", "java_db"):
            assert json.loads(catalogs.listTables(warehouse, db)) == []
            assert ours.list_tables(db) == []
            assert not (tmp_path / f"{db}.db" / "t2").exists()
        ours.drop_database("ours_db")
        catalogs.dropDatabase(warehouse, "java_db", False)
        assert not {"ours_db", "java_db"} & set(ours.list_databases())


def test_race_through_the_metastore_lock(
    java_oracle: JavaOracle, hive_metastore: HiveMetastore, tmp_path: Path
) -> None:
    import jdbc_race

    wh = tmp_path / "wh"
    lock = {"lock.enabled": "true", "lock-check-max-sleep": "100 ms"}
    ours_options = hive_metastore.catalog_options(f"local://{wh}", **lock)
    java_options = hive_metastore.catalog_options(f"file://{wh}", **lock)
    # without the lock, that store is refused: nothing would serialize the commits
    with pytest.raises(UnsafeStoreError, match="lock.enabled"):
        CatalogFactory.create({**ours_options, "lock.enabled": "false"})

    catalog = CatalogFactory.create(ours_options)
    catalog.create_database("race")
    catalog.create_table("race.t", Schema.from_pyarrow_schema(RACE_SCHEMA, options=RACE_OPTIONS))
    for w in range(JAVAS):  # JdbcRaceWriter warms up on its own table
        catalog.create_table(f"race.t_warmup_java_{w}", Schema.from_pyarrow_schema(RACE_SCHEMA))
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    classpath = os.pathsep.join([str(PAIMON_JAR), str(CLASSES), str(pyspark_jars_dir() / "*")])
    command = ["java", *_JAVA_OPTS, "-cp", classpath, "paimonoracle.JdbcRaceWriter"]
    args = ["race", "t", "0", str(COMMITS), str(barrier)]
    with open(tmp_path / "java.log", "w") as log:
        java = subprocess.Popen([*command, json.dumps(java_options), *args], stdout=log, stderr=log)
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["jdbc_race"])
    ours = [
        ctx.Process(
            target=jdbc_race.writer, args=(ours_options, "race", "t", w, COMMITS, str(barrier))
        )
        for w in range(OURS)
    ]
    for p in ours:
        p.start()
    try:
        deadline = time.monotonic() + 120
        while len(os.listdir(barrier)) < OURS + JAVAS:
            failed = java.poll() is not None or any(p.exitcode is not None for p in ours)
            assert not failed and time.monotonic() < deadline, (tmp_path / "java.log").read_text()
            time.sleep(0.01)
        (barrier / "go").touch()
        for p in ours:
            p.join(300)
        code = java.wait(300)
    finally:
        if java.poll() is None:
            java.kill()
        for p in ours:
            if p.is_alive():
                p.kill()
    assert [p.exitcode for p in ours] == [0] * OURS
    assert code == 0, (tmp_path / "java.log").read_text()[-3000:]

    table = catalog.get_table("race.t")
    sm = table.snapshot_manager
    ids = sm.list_ids()
    assert ids == list(range(1, (OURS + JAVAS) * COMMITS + 1))
    users = [sm.snapshot(i).commit_user for i in ids]
    writers = ["java" if u.startswith("java-") else "ours" for u in users]
    assert writers.count("java") == COMMITS
    want = ordered(
        [[w, s, "ours"] for w in range(OURS) for q in range(COMMITS) for s in (q, -q - 1)]
        + [[0, s, "java"] for q in range(COMMITS) for s in (q, -q - 1)]
    )
    rb = table.new_read_builder()
    assert ordered(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))) == want
    java_oracle.set_catalog_options(java_options["warehouse"], java_options)
    assert ordered(java_oracle.read_table(java_options["warehouse"], "race", "t").rows) == want
    locks = catalog.client.call("show_locks", catalog.client.ttypes.ShowLocksRequest())
    assert not locks.locks  # every lock released
    catalog.drop_database("race", cascade=True)
    catalog.close()
