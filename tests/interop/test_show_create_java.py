"""SHOW CREATE TABLE's statement is Java's too: for each table kind Spark can spell, the
statement paimon_pyspark writes runs through Java's Spark connector (Paimon 0.9.0 on Spark 3.5,
tests/interop/spark35_show_driver.py, one process for all, its answers cached under .cache/),
and Java then shows the same statement back (but for its ``LOCATION`` and ``'path'``, which
ours leaves out), the same DESCRIBE rows, properties and columns; the table Java created has
our schema.

Kinds with types Spark has no spelling for (``TIMESTAMP(3)``, ``ARRAY<INT NOT NULL>``, ...) are
not Java-readable by design and are covered by tests/spark/test_spark_sql_show.py's round trip.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.spark.sql_show import create_statement, describe_rows, table_properties
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.sql.statements import CreateTable, parse_statement
from paimon_pyspark.types.arrow import assign_field_ids
from paimon_pyspark.types.data_types import DataField

pytestmark = [pytest.mark.java, pytest.mark.slow]

PROJECT = Path(__file__).resolve().parents[2]
SPARK35_PYTHON = PROJECT / ".venv-spark35" / "bin" / "python"
CONNECTOR_JAR = PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"
DRIVER = Path(__file__).with_name("spark35_show_driver.py")
CACHE = PROJECT / ".cache" / "show-oracle"

KINDS = {
    "append_fixed": """CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
        TBLPROPERTIES ('bucket' = '4', 'bucket-key' = 'id')""",
    "pk_fixed": """CREATE TABLE t (id BIGINT COMMENT 'the key', v STRING, dt STRING)
        PARTITIONED BY (dt) COMMENT 'it\\'s a table'
        TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '2', 'changelog-producer' = 'input')""",
    "pk_cross_partition": """CREATE TABLE t (id BIGINT, v STRING, dt STRING) USING paimon
        PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '-1')""",
    "partial_update": """CREATE TABLE t (k INT, a INT, b INT, g1 INT)
        TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '1', 'merge-engine' = 'partial-update',
        'fields.g1.sequence-group' = 'a,b')""",
    "aggregation": """CREATE TABLE t (k INT, total BIGINT, hi INT)
        TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '1', 'merge-engine' = 'aggregation',
        'fields.total.aggregate-function' = 'sum', 'fields.hi.aggregate-function' = 'max')""",
    "deletion_vectors": """CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES (
        'primary-key' = 'id', 'bucket' = '1', 'deletion-vectors.enabled' = 'true')""",
    "file_index": """CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES (
        'file-index.bloom-filter.columns' = 'v')""",
    "nested": """CREATE TABLE t (a ARRAY<INT>, m MAP<STRING, ARRAY<BIGINT>>,
        s STRUCT<x: INT COMMENT 'inner', y: ARRAY<STRUCT<z: STRING>>>) USING paimon""",
    "primitives": """CREATE TABLE t (c1 BOOLEAN, c2 TINYINT, c3 SMALLINT, c4 INT, c5 BIGINT,
        c6 FLOAT, c7 DOUBLE, c8 DECIMAL(38, 10), c9 DATE, c10 TIMESTAMP, c11 TIMESTAMP_NTZ,
        c12 BINARY, c13 CHAR(3), c14 VARCHAR(10), c15 STRING NOT NULL) USING paimon""",
}


def _create(catalog: FileSystemCatalog, identifier: str, text: str) -> None:
    """The table ``text`` declares, as the SQL door creates it (spark/sql.py)."""
    stmt = parse_statement(text)
    assert isinstance(stmt, CreateTable)
    fields, _ = assign_field_ids([(c.name, c.type) for c in stmt.columns])
    fields = [
        DataField(f.id, f.name, f.type, c.comment)
        for f, c in zip(fields, stmt.columns, strict=True)
    ]
    schema = Schema(
        fields=fields,
        partition_keys=stmt.partition_keys,
        primary_keys=stmt.primary_keys,
        options=stmt.options,
        comment=stmt.comment,
    )
    catalog.create_table(identifier, schema)


def _without_location(text: str) -> str:
    """Java's statement without its ``LOCATION`` line and ``'path'`` property."""
    lines = [line for line in text.split("\n") if not line.startswith("LOCATION ")]
    out = "\n".join(lines)
    head, sep, props = out.partition("TBLPROPERTIES (\n")
    if not sep:
        return out
    items = [p.strip().rstrip(",").removesuffix(")") for p in props.strip().split("\n")]
    kept = [p for p in items if not p.startswith("'path' = ")]
    if not kept:
        return head
    return head + "TBLPROPERTIES (\n  " + ",\n  ".join(kept) + ")\n"


def _run_java(warehouse: Path, statements: list[str]) -> dict[str, Any]:
    """Java's answers (``results``) and the schema files of the tables it created
    (``schemas``: table -> JSON), cached by the statements."""
    missing = [str(p) for p in (SPARK35_PYTHON, CONNECTOR_JAR) if not p.exists()]
    if missing:
        pytest.fail(f"Spark 3.5 connector oracle not built (missing {missing}); run make test")
    key = hashlib.sha256(
        f"{DRIVER.read_text()}|{CONNECTOR_JAR.stat().st_size}|{json.dumps(statements)}".encode()
    ).hexdigest()[:16]
    cache = CACHE / f"{key}.json"
    if cache.is_file():
        cached: dict[str, Any] = json.loads(cache.read_text())
        return cached
    done = subprocess.run(
        [str(SPARK35_PYTHON), str(DRIVER)],
        input=json.dumps({"warehouse": str(warehouse), "statements": statements}),
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")},
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        pytest.fail(f"spark35_show_driver.py failed:\n{done.stderr[-4000:]}", pytrace=False)
    answer = {
        "results": json.loads(done.stdout.strip().splitlines()[-1])["results"],
        "schemas": {
            p.parent.parent.name: p.read_text()
            for p in sorted(warehouse.glob("db.db/*/schema/schema-0"))
        },
    }
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(answer))
    return answer


def test_java_reads_and_shows_our_create_statements(tmp_path: Path) -> None:
    ours = CatalogFactory.create({"warehouse": str(tmp_path / "ours")})
    ours.create_database("db", ignore_if_exists=True)
    texts: dict[str, str] = {}
    statements = ["CREATE DATABASE db"]
    for kind, ddl in KINDS.items():
        _create(ours, f"db.{kind}", ddl)
        texts[kind] = create_statement(f"db.{kind}", ours.get_table(f"db.{kind}"))
        statements += [
            texts[kind],
            f"SHOW CREATE TABLE db.{kind}",
            f"DESCRIBE db.{kind}",
            f"SHOW TBLPROPERTIES db.{kind}",
            f"SHOW COLUMNS FROM db.{kind}",
        ]
    java_wh = tmp_path / "java"
    java_wh.mkdir()
    answer = _run_java(java_wh, statements)
    results = answer["results"]
    assert "error" not in results[0], results[0]
    for i, kind in enumerate(KINDS):
        created, shown, described, props, columns = results[1 + 5 * i : 6 + 5 * i]
        assert "error" not in created, (kind, created, texts[kind])
        assert _without_location(shown["rows"][0][0]) == texts[kind], kind
        table = ours.get_table(f"db.{kind}")
        expected = [
            [v if v is None else str(v) for v in r] for r in describe_rows("", table, False)
        ]
        assert described["rows"] == expected, kind
        mine = {k: v for k, v in table_properties(table).items() if k != "path"}
        assert {k: v for k, v in props["rows"] if k != "path"} == mine, kind
        assert columns["rows"] == [[f.name] for f in table.fields], kind
        java = TableSchema.from_json(answer["schemas"][kind])
        ours_schema = table.table_schema
        # 0.9.0 keeps Spark's 'owner' and 'provider' among the options; 1.4.2 drops provider
        extra = ("owner", "provider")
        assert {k: v for k, v in java.options.items() if k not in extra} == ours_schema.options
        assert (java.comment, java.primary_keys, java.partition_keys) == (
            ours_schema.comment,
            ours_schema.primary_keys,
            ours_schema.partition_keys,
        ), kind
        if kind != "nested":  # Java's Spark DDL makes a map key NOT NULL; Spark cannot say so
            assert java.fields == ours_schema.fields, kind
