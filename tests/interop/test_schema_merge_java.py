"""``write.merge-schema`` against Java 1.4.2: our SchemaMergingUtils (store/schema_merge.py)
gives Java's merged schema, or refuses where Java refuses, with Java's words, on a grid of
every pair of about thirty types, implicitly and with explicit casts; and Java reads a table
after merged-schema writes of every Spark door (tests/interop/java/SchemaMergeOracle.java).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from java_oracle import JavaOracle
from pyspark.sql import SparkSession

from paimon_pyspark.errors import SchemaChangeError
from paimon_pyspark.spark import sql, write
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.schema_merge import merge_schemas
from paimon_pyspark.types.data_types import DataField, DataType, RowType, parse_type_json

TYPES: list[Any] = [
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL(10, 2)",
    "DECIMAL(20, 2)",
    "DECIMAL(10, 3)",
    "CHAR(5)",
    "VARCHAR(3)",
    "VARCHAR(10)",
    "STRING",
    "BINARY(4)",
    "VARBINARY(8)",
    "BYTES",
    "DATE",
    "TIME(3)",
    "TIME(0)",
    "TIMESTAMP(3)",
    "TIMESTAMP(6)",
    "TIMESTAMP(3) WITH LOCAL TIME ZONE",
    "TIMESTAMP(6) WITH LOCAL TIME ZONE",
    {"type": "ARRAY", "element": "INT"},
    {"type": "ARRAY", "element": "BIGINT"},
    {"type": "MAP", "key": "STRING", "value": "INT"},
    {"type": "MAP", "key": "STRING", "value": "DOUBLE"},
    {"type": "MULTISET", "element": "INT"},
    {"type": "ROW", "fields": [{"id": 0, "name": "x", "type": "INT"}]},
]


def _schema(fields: list[DataField], highest: int) -> TableSchema:
    return TableSchema(0, tuple(fields), highest, options={"bucket": "-1"})


def _row(*fields: tuple[str, Any]) -> RowType:
    return RowType(tuple(DataField(i, n, parse_type_json(t)) for i, (n, t) in enumerate(fields)))


def _cases() -> list[tuple[TableSchema, RowType, bool]]:
    cases = []
    for (old, new), explicit in itertools.product(itertools.product(TYPES, TYPES), (False, True)):
        old_type: DataType = parse_type_json(old)
        schema = _schema(
            [DataField(0, "id", parse_type_json("INT NOT NULL")), DataField(1, "c", old_type)], 1
        )
        cases.append((schema, _row(("c", new)), explicit))
    nested = parse_type_json(
        {
            "type": "ROW",
            "fields": [
                {"id": 2, "name": "f1", "type": "INT"},
                {
                    "id": 4,
                    "name": "inner",
                    "type": {
                        "type": "ROW",
                        "fields": [{"id": 3, "name": "g", "type": "STRING"}],
                    },
                },
            ],
        }
    )
    base = _schema(
        [
            DataField(0, "id", parse_type_json("INT NOT NULL")),
            DataField(1, "v", parse_type_json("STRING NOT NULL")),
            DataField(5, "info", nested),
        ],
        5,
    )
    data_info = {
        "type": "ROW",
        "fields": [
            {"id": 0, "name": "f3", "type": "STRING"},
            {
                "id": 1,
                "name": "inner",
                "type": {
                    "type": "ROW",
                    "fields": [
                        {"id": 2, "name": "h", "type": "BIGINT"},
                        {"id": 3, "name": "g", "type": "STRING"},
                    ],
                },
            },
            {"id": 4, "name": "f1", "type": "BIGINT"},
        ],
    }
    new_row = {
        "type": {
            "type": "ARRAY",
            "element": {
                "type": "ROW",
                "fields": [
                    {"id": 0, "name": "p", "type": "INT"},
                    {
                        "id": 1,
                        "name": "q",
                        "type": {
                            "type": "MAP",
                            "key": "STRING",
                            "value": {
                                "type": "ROW",
                                "fields": [{"id": 2, "name": "z", "type": "INT"}],
                            },
                        },
                    },
                ],
            },
        }
    }
    for explicit in (False, True):
        cases += [
            (base, _row(("id", "INT"), ("v", "STRING")), explicit),  # nullability only
            (base, _row(("v", "STRING"), ("id", "BIGINT")), explicit),
            (base, _row(("info", data_info), ("extra", "DATE")), explicit),
            (
                base,
                _row(("id", "INT"), ("arr", new_row["type"]), ("w", "STRING NOT NULL")),
                explicit,
            ),
            (base, _row(("info", "STRING")), explicit),
        ]
    return cases


def _java(oracle: JavaOracle, cases: list[tuple[TableSchema, RowType, bool]]) -> list[Any]:
    payload = [{"schema": s.to_json(), "data": d.to_json(), "explicit": e} for s, d, e in cases]
    java = oracle._gateway.jvm.paimonoracle.SchemaMergeOracle
    return list(json.loads(java.mergeAll(json.dumps(payload))))


def test_merge_rules_are_javas_on_a_grid_of_type_pairs(java_oracle: JavaOracle) -> None:
    cases = _cases()
    results = _java(java_oracle, cases)
    differ = []
    refused = merged = 0
    for (schema, data, explicit), java in zip(cases, results, strict=True):
        label = (str(schema.row_type), str(data), explicit)
        try:
            ours: TableSchema | str = merge_schemas(schema, data, explicit, "db.t")
        except SchemaChangeError as e:
            ours = str(e)
        if "error" in java:
            refused += 1
            words = java["error"].split(": ", 1)[1]
            if not isinstance(ours, str) or words.replace("`", "") not in ours:
                differ.append((label, java["error"], ours))
            continue
        merged += 1
        expected = TableSchema.from_json(java["schema"], "java")
        if isinstance(ours, str):
            differ.append((label, java["schema"], ours))
            continue
        got = (ours.id, ours.fields, ours.highest_field_id)
        if got != (expected.id, expected.fields, expected.highest_field_id):
            differ.append((label, expected.to_json(), ours.to_json()))
    assert not differ, f"{len(differ)} of {len(cases)} differ from Java, e.g. {differ[:3]}"
    assert refused > 500 and merged > 500, (refused, merged)


@pytest.fixture(scope="module")
def merge_wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("merge_java")


def test_java_reads_a_table_after_merged_schema_writes(
    spark: SparkSession, java_oracle: JavaOracle, merge_wh: Path
) -> None:
    wh = str(merge_wh)
    sql(spark, "CREATE TABLE t (id INT NOT NULL, v STRING) PARTITIONED BY (v)", warehouse=wh)
    sql(spark, "INSERT INTO t VALUES (1, 'a')", warehouse=wh)
    df = spark.createDataFrame([(2, "b", 2.5)], "id BIGINT, v STRING, d DOUBLE")
    write(df, wh, "default.t", options={"write.merge-schema": "true"})
    df = spark.createDataFrame([("c", 3, "x")], "v STRING, id BIGINT, e STRING")
    df.write.format("paimon").option("warehouse", wh).option("table", "default.t").option(
        "mergeSchema", "true"
    ).mode("append").save()
    sql(
        spark,
        "INSERT INTO t /*+ OPTIONS('write.merge-schema'='true') */ BY NAME "
        "SELECT CAST(4 AS BIGINT) AS id, 'd' AS v, named_struct('k', 1) AS s",
        warehouse=wh,
    )
    read = java_oracle.read_table(merge_wh, "default", "t")
    assert read.fields == ["id", "v", "d", "e", "s"]
    assert sorted(read.rows, key=lambda r: r[0]) == [
        [1, "a", None, None, None],
        [2, "b", 2.5, None, None],
        [3, "c", None, "x", None],
        [4, "d", None, None, [1]],
    ]
