"""``CALL sys.expire_changelogs`` through the Spark SQL door (Flink's argument order, named
arguments) and the ``expire-changelogs`` command, over a table whose changelog outlives its
snapshots (maintenance/expire_changelog.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from tests.cli.helpers import run_json
from tests.integration.table_helpers import write_commit

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.spark import register, sql
from paimon_pyspark.store.changelog_manager import ChangelogManager

pytestmark = pytest.mark.slow

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int64())])


def kept_changelogs(warehouse: str) -> tuple[FileStoreTable, ChangelogManager]:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    options = {
        "bucket": "1",
        "changelog-producer": "input",
        "snapshot.num-retained.min": "1",
        "snapshot.num-retained.max": "1",
        "changelog.num-retained.max": "6",
    }
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options=options)
    )
    table = catalog.get_table("db.t")
    for i in range(6):
        write_commit(table, pa.table({"k": [i], "v": [i]}, schema=SCHEMA))
    return table, ChangelogManager(table.file_io, table.path)


@pytest.mark.skipif(
    importlib.util.find_spec("rich") is None,
    reason="the expire-changelogs command needs the CLI's extra (rich), not installed here "
    "(the pyspark 3.5 venv has the [spark] extra only)",
)
def test_expire_changelogs_call_and_command(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warehouse = str(tmp_path)
    table, changelogs = kept_changelogs(warehouse)
    ids = changelogs.list_ids()
    latest = table.snapshot_manager.latest_id()
    assert latest is not None and len(ids) == 5

    register(spark, warehouse=warehouse)
    try:
        # Flink's order: table, retain_max, retain_min, older_than, max_deletes, delete_all
        result = sql(spark, f"CALL sys.expire_changelogs('db.t', {latest - ids[1] + 1})")
        assert result.columns == ["result"] and result.collect()[0][0] == "1"
        assert changelogs.list_ids() == ids[1:]
        command = ["expire-changelogs", "--warehouse", warehouse, "--table", "db.t"]
        code, doc, _ = run_json([*command, "--max-deletes", "2", "--retain_max", "1"], capsys)
        assert (code, doc["result"]) == (0, {"result": "2"})
        assert changelogs.list_ids() == ids[3:]
        done = sql(spark, "CALL sys.expire_changelogs(`table` => 'db.t', delete_all => true)")
        assert done.collect()[0][0] == "Delete all separated changelogs success."
        assert changelogs.list_ids() == []
    finally:
        sql(spark, "USE default").collect()
