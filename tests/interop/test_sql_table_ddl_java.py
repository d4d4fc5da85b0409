"""Java Paimon 1.4.2 reads what the SQL door's REPLACE TABLE, TRUNCATE TABLE ... PARTITION and
ALTER TABLE ... DROP PARTITION leave: the new schema and its rows, every snapshot's kind and
schema id, the snapshots before a replace by time travel (under their own schema), and the
partitions a truncation keeps."""

from __future__ import annotations

from pathlib import Path

import pytest
from java_oracle import JavaOracle, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark.spark import sql

pytestmark = [pytest.mark.java, pytest.mark.slow]


def test_java_reads_replaced_and_truncated_tables(
    spark: SparkSession, java_oracle: JavaOracle, tmp_path: Path
) -> None:
    wh = str(tmp_path)

    def run(statement: str) -> None:
        sql(spark, statement, warehouse=wh).collect()

    run(
        "CREATE TABLE rj (id BIGINT, data STRING, dt STRING) USING paimon PARTITIONED BY (dt) "
        "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')"
    )
    run("INSERT INTO rj VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z')")
    run("TRUNCATE TABLE rj PARTITION (dt = 'x')")
    run("ALTER TABLE rj DROP PARTITION (dt = 'y')")
    assert sorted_rows(java_oracle.read_table(wh, "default", "rj").rows) == [[3, "c", "z"]]
    run(
        "CREATE OR REPLACE TABLE rj USING paimon PARTITIONED BY (dt) "
        "TBLPROPERTIES ('bucket' = '-1') AS SELECT CAST(id AS STRING) AS id, 42 AS n, dt FROM rj"
    )
    read = java_oracle.read_table(wh, "default", "rj")
    assert read.fields == ["id", "n", "dt"]
    assert read.rows == [["3", 42, "z"]]
    snapshots = java_oracle.snapshots(wh, "default", "rj")
    assert [(s["commitKind"], s["schemaId"]) for s in snapshots] == [
        ("APPEND", 0),
        ("OVERWRITE", 0),
        ("OVERWRITE", 0),
        ("OVERWRITE", 0),
        ("OVERWRITE", 1),
    ]
    old = java_oracle.read_table(wh, "default", "rj", snapshot_id=3)
    assert old.fields == ["id", "data", "dt"]
    assert old.rows == [[3, "c", "z"]]
