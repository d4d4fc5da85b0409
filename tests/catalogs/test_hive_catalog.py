"""Our Hive catalog on a real Hive Metastore (tests/catalogs/hive_metastore.py, one per session).

Databases and tables are metastore records, data and schemas stay in the warehouse; Hive's own
tables are not listed; a failed create leaves nothing; ALTER rewrites the record; the lock is
the metastore's table lock (a held lock times a commit out; nothing is committed); a catalog
reopened from its options sees the same tables.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from tests.catalogs.hive_metastore import HiveMetastore

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.catalog.hive.catalog import HiveCatalog, hive_type
from paimon_pyspark.catalog.hive.client import MissingHiveExtraError
from paimon_pyspark.errors import (
    CatalogConnectionError,
    CatalogError,
    CatalogLockError,
    DatabaseNotExistError,
    IdentifierError,
    OptionError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedOptionError,
    UnsupportedTypeError,
)
from paimon_pyspark.store.schema_change import SchemaChange
from paimon_pyspark.types.data_types import parse_type_json

SCHEMA = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())])


def _catalog(hms: HiveMetastore, warehouse: Path, **extra: str) -> HiveCatalog:
    catalog = CatalogFactory.create(hms.catalog_options(warehouse.as_uri(), **extra))
    assert isinstance(catalog, HiveCatalog)
    return catalog


def _write(catalog: HiveCatalog, name: str, keys: list[int]) -> None:
    table = catalog.get_table(name)
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    try:
        write.write_arrow(
            pa.table({"k": pa.array(keys, pa.int32()), "v": [str(k) for k in keys]}, SCHEMA)
        )
        commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()


def _read(catalog: HiveCatalog, name: str) -> list[int]:
    rb = catalog.get_table(name).new_read_builder()
    return sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("k").to_pylist())


def test_tables_are_metastore_records(hive_metastore: HiveMetastore, tmp_path: Path) -> None:
    db = f"h{uuid.uuid4().hex[:8]}"
    with _catalog(hive_metastore, tmp_path, **{"lock.enabled": "true"}) as catalog:
        catalog.create_database(db, properties={"comment": "ours", "team": "a"})
        info = catalog.get_database(db)
        assert info["location"] == f"file:{tmp_path}/{db}.db"
        assert info["options"]["comment"] == "ours" and info["options"]["team"] == "a"
        assert db in catalog.list_databases() and "default" in catalog.list_databases()

        schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options={"bucket": "1"})
        catalog.create_table(f"{db}.t", schema)
        catalog.create_table(f"{db}.t", schema, ignore_if_exists=True)
        with pytest.raises(TableAlreadyExistError):
            catalog.create_table(f"{db}.t", schema)
        assert (tmp_path / f"{db}.db" / "t" / "schema" / "schema-0").is_file()

        # a Hive table of the same database is not Paimon's: not listed, not opened
        t = catalog.client.ttypes
        hive_table = t.Table(
            tableName="plain",
            dbName=db,
            sd=t.StorageDescriptor(
                cols=[t.FieldSchema(name="x", type="int")],
                location=f"file:{tmp_path}/{db}.db/plain",
                inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                serdeInfo=t.SerDeInfo(
                    serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
                ),
            ),
            partitionKeys=[],
            parameters={},
            tableType="MANAGED_TABLE",
        )
        catalog.client.call("create_table", hive_table, reads=False)
        assert catalog.list_tables(db) == ["t"]
        with pytest.raises(TableNotExistError, match="not a Paimon table"):
            catalog.get_table(f"{db}.plain")
        with pytest.raises(CatalogError, match="not a paimon table"):
            catalog.create_table(f"{db}.plain", schema)

        _write(catalog, f"{db}.t", [1, 2])
        _write(catalog, f"{db}.t", [3])
        assert _read(catalog, f"{db}.t") == [1, 2, 3]

        catalog.alter_table(
            f"{db}.t",
            [
                SchemaChange.add_column("w", parse_type_json("DECIMAL(10, 2)")),
                SchemaChange.set_option("snapshot.num-retained.min", "5"),
            ],
        )
        record = catalog.client.call("get_table", db, "t")
        assert [(c.name, c.type) for c in record.sd.cols] == [
            ("k", "int"),
            ("v", "string"),
            ("w", "decimal(10,2)"),
        ]
        assert record.parameters["snapshot.num-retained.min"] == "5"
        catalog.alter_table(f"{db}.t", [SchemaChange.remove_option("snapshot.num-retained.min")])
        record = catalog.client.call("get_table", db, "t")
        assert "snapshot.num-retained.min" not in record.parameters

        # another process's catalog, from the options alone
        with CatalogFactory.create(catalog.options) as again:
            assert again.list_tables(db) == ["t"]
            assert _read(again, f"{db}.t") == [1, 2, 3]

        catalog.rename_table(f"{db}.t", f"{db}.t2")
        assert catalog.list_tables(db) == ["t2"]
        assert not (tmp_path / f"{db}.db" / "t").exists()
        assert _read(catalog, f"{db}.t2") == [1, 2, 3]

        with pytest.raises(CatalogError, match="not empty"):
            catalog.drop_database(db)
        catalog.drop_table(f"{db}.t2")
        assert catalog.list_tables(db) == []
        assert not (tmp_path / f"{db}.db" / "t2").exists()
        with pytest.raises(TableNotExistError):
            catalog.get_table(f"{db}.t2")
        catalog.drop_database(db, cascade=True)
        with pytest.raises(DatabaseNotExistError):
            catalog.list_tables(db)


def test_failed_create_leaves_nothing(hive_metastore: HiveMetastore, tmp_path: Path) -> None:
    db = f"h{uuid.uuid4().hex[:8]}"
    with _catalog(hive_metastore, tmp_path) as catalog:
        with pytest.raises(DatabaseNotExistError):
            catalog.create_table(f"{db}.t", Schema.from_pyarrow_schema(SCHEMA))
        catalog.create_database(db)
        # the metastore refuses the record (a name outside Hive's [\w_...]+): no directory stays
        with pytest.raises(CatalogError, match="is not a valid object name"):
            catalog.create_table(f"{db}.tä", Schema.from_pyarrow_schema(SCHEMA))
        assert os.listdir(tmp_path / f"{db}.db") == []
        assert catalog.list_tables(db) == []
        with pytest.raises(IdentifierError, match="upper-case"):
            catalog.create_table(f"{db}.Big", Schema.from_pyarrow_schema(SCHEMA))
        with pytest.raises(UnsupportedOptionError, match="metastore.partitioned-table"):
            catalog.create_table(
                f"{db}.p",
                Schema.from_pyarrow_schema(
                    SCHEMA, partition_keys=["v"], options={"metastore.partitioned-table": "true"}
                ),
            )
        catalog.drop_database(db, cascade=True)


def test_commit_waits_for_the_metastore_lock(hive_metastore: HiveMetastore, tmp_path: Path) -> None:
    """A commit while another holder has the table's metastore lock times out and commits
    nothing; released, the next commit lands."""
    db = f"h{uuid.uuid4().hex[:8]}"
    options = {
        "lock.enabled": "true",
        "lock-acquire-timeout": "1 s",
        "lock-check-max-sleep": "100 ms",
    }
    with _catalog(hive_metastore, tmp_path, **options) as catalog:
        catalog.create_database(db)
        catalog.create_table(f"{db}.t", Schema.from_pyarrow_schema(SCHEMA))
        holder = catalog.lock(db, "t")
        lock_id = holder.acquire()
        try:
            with pytest.raises(CatalogLockError, match=f"{db}.t"):
                _write(catalog, f"{db}.t", [1])
        finally:
            holder.release(lock_id)
        assert catalog.get_table(f"{db}.t").snapshot_manager().latest_id() is None
        _write(catalog, f"{db}.t", [2])
        assert _read(catalog, f"{db}.t") == [2]
        catalog.drop_database(db, cascade=True)


def test_options_and_types(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("pymetastore", "pymetastore.hive_metastore"):  # the hive extra not installed
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingHiveExtraError, match=r"pip install 'paimon-pyspark\[hive\]'"):
        CatalogFactory.create(
            {"metastore": "hive", "warehouse": "/tmp/x", "uri": "thrift://127.0.0.1:1"}
        )
    monkeypatch.undo()
    unreachable = CatalogFactory.create(
        {"metastore": "hive", "warehouse": "/tmp/x", "uri": "thrift://127.0.0.1:1"}
    )
    with pytest.raises(CatalogConnectionError, match="'thrift://127.0.0.1:1' cannot be reached"):
        unreachable.list_databases()
    with pytest.raises(UnsupportedOptionError, match="'uri'"):
        CatalogFactory.create({"metastore": "hive", "warehouse": "/tmp/x"})
    with pytest.raises(OptionError, match="thrift://"):
        CatalogFactory.create({"metastore": "hive", "warehouse": "/tmp/x", "uri": "http://a:1"})
    with pytest.raises(UnsupportedOptionError, match="location-in-properties"):
        CatalogFactory.create(
            {
                "metastore": "hive",
                "warehouse": "/tmp/x",
                "uri": "thrift://127.0.0.1:1",
                "location-in-properties": "true",
            }
        )
    expected = {
        "TINYINT": "tinyint",
        "CHAR(300)": "string",
        "VARCHAR(20)": "varchar(20)",
        "VARBINARY(3)": "binary",
        "TIME(3)": "string",
        "TIMESTAMP(3) WITH LOCAL TIME ZONE": "timestamp",
    }
    for text, hive in expected.items():
        assert hive_type(parse_type_json(text)) == hive, text
    nested = parse_type_json(
        {
            "type": "MAP",
            "key": "STRING",
            "value": {
                "type": "ROW",
                "fields": [
                    {"id": 0, "name": "a", "type": "INT"},
                    {"id": 1, "name": "b", "type": {"type": "MULTISET", "element": "DATE"}},
                ],
            },
        }
    )
    assert hive_type(nested) == "map<string,struct<a:int,b:map<date,int>>>"
    with pytest.raises(UnsupportedTypeError):
        hive_type(parse_type_json({"type": "VECTOR", "element": "FLOAT", "length": 3}))
