"""The read queries of bench/spark_read_queries.py give equal results in three engines: ours
(``paimon_pyspark.spark.read`` with ``where`` and ``columns``, then Spark's aggregate), Spark's
own Parquet source over the same rows partitioned the same way, and Java Paimon 1.4.2 reading
our tables (the aggregate computed here over the rows Java returns).

A smaller table than the bench's, the same shape: 8 columns, partitions by ``dt``, queries
(a) full scan, (b) one partition, (c) an id range, (d) 2 of 8 columns, (e) (a) on a
primary-key table after 3 overlapping commits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.spark import read
from paimon_pyspark.spark import write as spark_write

pytestmark = [pytest.mark.slow, pytest.mark.java]

ROWS = 4000
DAYS = [f"2026-01-{d:02d}" for d in range(1, 9)]
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("k", pa.int32()),
        ("v", pa.float64()),
        ("w", pa.float64()),
        ("s", pa.string()),
        ("t", pa.string()),
        ("b", pa.bool_()),
        ("dt", pa.string()),
    ]
)
NAMES = SCHEMA.names
DDL = "id BIGINT, k INT, v DOUBLE, w DOUBLE, s STRING, t STRING, b BOOLEAN, dt STRING"
LO, HI = ROWS * 37 // 100, ROWS * 37 // 100 + ROWS // 100 - 1


def _exprs(ver: str) -> list[str]:
    days = ", ".join(f"'{d}'" for d in DAYS)
    return [
        "id",
        f"cast((id * 31 + {ver}) % 100000 AS int) AS k",
        f"cast((id * 7919 + ({ver}) * 104729) % 1000003 AS double) / 1000003D AS v",
        f"cast(id % 10007 AS double) / 16D + ({ver}) AS w",
        "substr(md5(cast(id AS string)), 1, 16) AS s",
        f"concat('t', cast({ver} AS string), '-', cast(id % 9973 AS string)) AS t",
        f"(id + {ver}) % 3 = 0 AS b",
        f"element_at(array({days}), cast(id % {len(DAYS)} AS int) + 1) AS dt",
    ]


@dataclass(frozen=True)
class Query:
    name: str
    table: str
    where: str | None
    keep: Callable[[dict[str, Any]], bool]
    columns: Sequence[str]


QUERIES = [
    Query("a", "t", None, lambda r: True, NAMES),
    Query("b", "t", f"dt = '{DAYS[5]}'", lambda r: r["dt"] == DAYS[5], NAMES),
    Query("c", "t", f"id BETWEEN {LO} AND {HI}", lambda r: LO <= r["id"] <= HI, NAMES),
    Query("d", "t", None, lambda r: True, ["v", "s"]),
    Query("e", "pk", None, lambda r: True, NAMES),
]


def _spark_aggregate(df: DataFrame, columns: Sequence[str]) -> list[Any]:
    aggs = ["count(1)"]
    aggs += [f"sum(length({c}))" if c in ("s", "t", "dt") else f"sum({c})" for c in columns]
    aggs = [a.replace("sum(b)", "sum(cast(b AS int))") for a in aggs]
    aggs += [f"min({c})" for c in columns if c in ("s", "t", "dt")]
    return list(df.selectExpr(*aggs).collect()[0])


def _python_aggregate(rows: list[dict[str, Any]], columns: Sequence[str]) -> list[Any]:
    out: list[Any] = [len(rows)]
    for c in columns:
        values = [r[c] for r in rows if r[c] is not None]
        if c in ("s", "t", "dt"):
            out.append(sum(len(v) for v in values))
        elif c == "b":
            out.append(sum(1 for v in values if v))
        else:
            out.append(sum(values))
    out += [min(r[c] for r in rows) for c in columns if c in ("s", "t", "dt")]
    return out


def _equal(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=1e-9) if isinstance(x, float) else x == y
        for x, y in zip(a, b, strict=True)
    )


def _diff(a: list[Any], b: list[Any]) -> str:
    pairs = enumerate(zip(a, b, strict=False))
    return "; ".join(f"#{i}: {x!r} != {y!r}" for i, (x, y) in pairs if x != y)


def test_the_bench_queries_agree_across_ours_spark_parquet_and_java(
    spark: SparkSession, tmp_path: Path, java_oracle: JavaOracle
) -> None:
    warehouse = str(tmp_path / "wh")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    pk_schema = pa.schema([f.with_nullable(False) if f.name in ("dt", "id") else f for f in SCHEMA])
    catalog.create_table(
        "db.pk",
        Schema.from_pyarrow_schema(
            pk_schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"}
        ),
    )
    rows = spark.range(ROWS).selectExpr(*_exprs("1"))
    spark_write(rows, warehouse, "db.t")
    q = ROWS // 4
    for lo, hi, ver in ((0, 2 * q, 1), (q, 3 * q, 2), (2 * q, ROWS, 3)):
        spark_write(spark.range(lo, hi).selectExpr(*_exprs(str(ver))), warehouse, "db.pk")
    final = f"CASE WHEN id >= {2 * q} THEN 3 WHEN id >= {q} THEN 2 ELSE 1 END"
    parquet = {"t": str(tmp_path / "t.parquet"), "pk": str(tmp_path / "pk.parquet")}
    rows.write.partitionBy("dt").parquet(parquet["t"])
    spark.range(ROWS).selectExpr(*_exprs(final)).write.partitionBy("dt").parquet(parquet["pk"])
    java_rows = {}
    for name in ("t", "pk"):
        got = java_oracle.read_table(warehouse, "db", name)
        java_rows[name] = [dict(zip(got.fields, r, strict=True)) for r in got.rows]

    for query in QUERIES:
        ours = read(spark, warehouse, f"db.{query.table}", where=query.where, columns=query.columns)
        # the table's types: Spark would infer dt=2026-01-01 directories as DATE partitions
        theirs = spark.read.schema(DDL).parquet(parquet[query.table])
        if query.where is not None:
            ours, theirs = ours.filter(query.where), theirs.filter(query.where)
        plan = ours._jdf.queryExecution().executedPlan().toString()
        # the append table's files all go to Spark's Parquet reader; of the primary-key
        # table's buckets (3 commits, nothing compacted) only the newest, final files do, and
        # our reader's mapInArrow job merges the rest without their keys
        assert "FileScan parquet" in plan, (query.name, plan)
        assert ("MapInArrow" in plan) == (query.table == "pk"), (query.name, plan)
        want = _python_aggregate(
            [r for r in java_rows[query.table] if query.keep(r)], query.columns
        )
        ours_result = _spark_aggregate(ours, query.columns)
        parquet_result = _spark_aggregate(theirs.select(*query.columns), query.columns)
        assert want[0] > 0, query.name
        assert _equal(ours_result, want), (query.name, _diff(ours_result, want))
        assert _equal(parquet_result, want), (query.name, _diff(parquet_result, want))
