"""MERGE INTO as a Spark job (spark/merge.py), against Spark's MERGE semantics computed here
in Python, with Java 1.4.2's checks and refusals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory
from paimon_pyspark.errors import (
    MergeCardinalityError,
    SqlSyntaxError,
    UnsupportedOperationError,
    UnsupportedStatementError,
)
from paimon_pyspark.spark import sql
from paimon_pyspark.spark.merge import merge_into

pytestmark = pytest.mark.slow

Row = dict[str, Any]
TARGET = [
    {"k": 1, "v": 10, "s": "a", "pt": 1},
    {"k": 2, "v": 20, "s": "b", "pt": 1},
    {"k": 3, "v": 30, "s": "c", "pt": 2},
    {"k": 4, "v": 40, "s": "d", "pt": 2},
    {"k": 5, "v": 50, "s": "e", "pt": 1},
    {"k": 6, "v": None, "s": "f", "pt": 2},
]
SOURCE = [
    {"k": 2, "v": 200, "s": "x", "pt": 1, "op": "U"},
    {"k": 3, "v": 300, "s": "y", "pt": 2, "op": "D"},
    {"k": 4, "v": 400, "s": "z", "pt": 2, "op": "N"},
    {"k": 7, "v": 700, "s": "w", "pt": 1, "op": "I"},
    {"k": 8, "v": 800, "s": "q", "pt": 2, "op": "X"},
]
COLUMNS = ("k", "v", "s", "pt")

# One statement with every clause kind; its semantics, as Spark defines MERGE, in Python.
STATEMENT = """
MERGE INTO {target} AS t USING {source} AS src ON t.k = src.k AND t.pt = src.pt
WHEN MATCHED AND src.op = 'U' THEN UPDATE SET v = src.v + t.v, t.s = concat(t.s, src.s)
WHEN MATCHED AND src.op = 'D' THEN DELETE
WHEN MATCHED AND src.op = 'N' THEN UPDATE SET *
WHEN NOT MATCHED AND src.op = 'I' THEN INSERT *
WHEN NOT MATCHED THEN INSERT (k, pt, s) VALUES (src.k, src.pt, upper(src.s))
WHEN NOT MATCHED BY SOURCE AND t.v IS NULL THEN DELETE
WHEN NOT MATCHED BY SOURCE AND t.k = 1 THEN UPDATE SET v = -1
"""

Clause = tuple[str, Callable[[Row, Row], bool], Callable[[Row, Row], Row | None]]
CLAUSES: list[Clause] = [
    (
        "m",
        lambda t, s: s["op"] == "U",
        lambda t, s: {**t, "v": s["v"] + t["v"], "s": t["s"] + s["s"]},
    ),
    ("m", lambda t, s: s["op"] == "D", lambda t, s: None),
    ("m", lambda t, s: s["op"] == "N", lambda t, s: {c: s[c] for c in COLUMNS}),
    ("n", lambda t, s: s["op"] == "I", lambda t, s: {c: s[c] for c in COLUMNS}),
    (
        "n",
        lambda t, s: True,
        lambda t, s: {"k": s["k"], "v": None, "s": s["s"].upper(), "pt": s["pt"]},
    ),
    ("b", lambda t, s: t["v"] is None, lambda t, s: None),
    ("b", lambda t, s: t["k"] == 1, lambda t, s: {**t, "v": -1}),
]


def spark_merge(
    target: list[Row], source: list[Row], clauses: list[Clause]
) -> list[tuple[Any, ...]]:
    """Spark's MERGE semantics over ``(k, pt)`` equality: the first clause of the row's kind whose
    condition holds takes it; rows no clause takes stay as they are."""
    out: list[Row] = []
    keys = {s["k"] for s in source}
    for t in target:
        matches = [s for s in source if (s["k"], s["pt"]) == (t["k"], t["pt"])]
        kind = "m" if matches else "b"
        s = matches[0] if matches else {}
        for c_kind, cond, action in clauses:
            if c_kind == kind and cond(t, s):
                new = action(t, s)
                if new is not None:
                    out.append(new)
                break
        else:
            out.append(t)
    targets = {(t["k"], t["pt"]) for t in target}
    for s in source:
        if (s["k"], s["pt"]) in targets:
            continue
        for c_kind, cond, action in clauses:
            if c_kind == "n" and cond({}, s):
                new = action({}, s)
                assert new is not None
                out.append(new)
                break
    assert keys
    return sorted(tuple(r[c] for c in COLUMNS) for r in out)


KINDS = {
    "pk-fixed": "'primary-key' = 'k,pt', 'bucket' = '2'",
    "pk-dynamic": "'primary-key' = 'k,pt', 'bucket' = '-1'",
    "pk-cross-partition": "'primary-key' = 'k', 'bucket' = '-1'",
    "pk-postpone": "'primary-key' = 'k,pt', 'bucket' = '-2'",
    "pk-partial-update": "'primary-key' = 'k', 'bucket' = '1', 'merge-engine' = 'partial-update',"
    " 'partial-update.remove-record-on-delete' = 'true'",
    "append": "'bucket' = '-1'",
    "append-dv": "'bucket' = '-1', 'deletion-vectors.enabled' = 'true'",
}


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> str:
    path = str(tmp_path_factory.mktemp("merge"))
    spark.createDataFrame(
        [tuple(r[c] for c in (*COLUMNS, "op")) for r in SOURCE],
        "k int, v int, s string, pt int, op string",
    ).createOrReplaceTempView("merge_src")
    return path


def q(spark: SparkSession, wh: str, text: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sql(spark, text, warehouse=wh).collect()]


def create(spark: SparkSession, wh: str, name: str, props: str) -> None:
    q(
        spark,
        wh,
        f"CREATE TABLE {name} (k INT, v INT, s STRING, pt INT) PARTITIONED BY (pt) "
        f"TBLPROPERTIES ({props})",
    )
    rows = ", ".join(
        f"({r['k']}, {'NULL' if r['v'] is None else r['v']}, '{r['s']}', {r['pt']})" for r in TARGET
    )
    q(spark, wh, f"INSERT INTO {name} VALUES {rows}")


def snapshots(wh: str, name: str) -> int | None:
    table = CatalogFactory.create({"warehouse": wh}).get_table(f"default.{name}")
    latest = table.snapshot_manager.latest()
    return None if latest is None else latest.id


def data_files(wh: str, name: str) -> set[str]:
    root = Path(wh) / "default.db" / name
    return {str(p) for p in root.rglob("*") if p.is_file() and "bucket-" in str(p)}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_clause_kind(spark: SparkSession, wh: str, kind: str) -> None:
    name = "t_" + kind.replace("-", "_")
    create(spark, wh, name, KINDS[kind])
    if kind == "pk-postpone":  # its rows are read once compacted into buckets
        q(spark, wh, f"CALL sys.compact(`table` => 'default.{name}')")
    before = snapshots(wh, name)
    q(spark, wh, STATEMENT.format(target=name, source="merge_src"))
    assert snapshots(wh, name) == (before or 0) + 1  # the whole MERGE is one snapshot
    got = sorted(q(spark, wh, f"SELECT k, v, s, pt FROM {name}"))
    first = spark_merge(TARGET, SOURCE, CLAUSES)
    assert got == first
    if kind.startswith("append"):
        # again over the rewritten files (or on top of the deletion vectors just written)
        q(
            spark,
            wh,
            f"MERGE INTO {name} t USING (SELECT 1 AS k, 1 AS pt, 'U' AS op UNION ALL "
            "SELECT 2, 1, 'D') s ON t.k = s.k AND t.pt = s.pt "
            "WHEN MATCHED AND s.op = 'D' THEN DELETE WHEN MATCHED THEN UPDATE SET v = 0",
        )
        second = sorted(
            (k, 0, s, pt) if k == 1 else (k, v, s, pt) for k, v, s, pt in first if k != 2
        )
        assert sorted(q(spark, wh, f"SELECT k, v, s, pt FROM {name}")) == second


def test_sources_paimon_table_and_subquery_and_python_api(spark: SparkSession, wh: str) -> None:
    create(spark, wh, "tgt", KINDS["pk-fixed"])
    q(spark, wh, "CREATE TABLE src_p (k INT, v INT, s STRING, pt INT)")
    q(spark, wh, "INSERT INTO src_p VALUES (1, 11, 'p', 1), (9, 99, 'n', 1)")
    # the source a Paimon table, no alias: its name qualifies its columns
    q(
        spark,
        wh,
        "MERGE INTO tgt USING src_p ON tgt.k = src_p.k AND tgt.pt = src_p.pt "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    )
    expected = {(r["k"], r["v"], r["s"], r["pt"]) for r in TARGET if r["k"] != 1}
    expected |= {(1, 11, "p", 1), (9, 99, "n", 1)}
    assert set(q(spark, wh, "SELECT * FROM tgt")) == expected
    # a subquery joining a Paimon table with a temp view; NOT MATCHED BY SOURCE deletes the rest
    q(
        spark,
        wh,
        "MERGE INTO tgt t USING (SELECT p.k, m.v FROM src_p p JOIN merge_src m "
        "ON m.pt = p.pt WHERE m.op = 'U') s ON t.k = s.k "
        "WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED BY SOURCE AND t.k > 2 THEN DELETE",
    )
    assert set(q(spark, wh, "SELECT * FROM tgt")) == {
        (1, 200, "p", 1),
        (2, 20, "b", 1),
        (9, 200, "n", 1),
    }
    # an empty append table (no snapshot yet): only the inserts
    q(spark, wh, "CREATE TABLE empty_ap (k INT, v INT, s STRING, pt INT)")
    q(
        spark,
        wh,
        "MERGE INTO empty_ap t USING merge_src s ON t.k = s.k WHEN MATCHED THEN DELETE "
        "WHEN NOT MATCHED AND s.op = 'I' THEN INSERT (k, v, s, pt) VALUES (s.k, s.v, s.s, s.pt)",
    )
    assert q(spark, wh, "SELECT * FROM empty_ap") == [(7, 700, "w", 1)]
    # the Python API
    source = spark.createDataFrame([(2, 5, "u"), (10, 100, "i")], "k int, v int, s string")
    snapshot = (
        merge_into(spark, wh, "default.tgt", source, "tgt.k = source.k")
        .when_matched_update({"v": "source.v", "s": "source.s"}, "source.v > 1")
        .when_not_matched_insert({"k": "k", "v": "v", "s": "s", "pt": "3"})
        .when_not_matched_by_source_update({"s": "'old'"})
        .execute()
    )
    assert snapshot == snapshots(wh, "tgt")
    assert set(q(spark, wh, "SELECT * FROM tgt")) == {
        (1, 200, "old", 1),
        (2, 5, "u", 1),
        (9, 200, "old", 1),
        (10, 100, "i", 3),
    }


def test_refusals_and_failures_leave_nothing(spark: SparkSession, wh: str) -> None:
    q(
        spark,
        wh,
        "CREATE TABLE agg (k INT, v INT) TBLPROPERTIES ('primary-key' = 'k', "
        "'merge-engine' = 'aggregation')",
    )
    q(
        spark,
        wh,
        "CREATE TABLE first (k INT, v INT) TBLPROPERTIES ('primary-key' = 'k', "
        "'merge-engine' = 'first-row')",
    )
    q(
        spark,
        wh,
        "CREATE TABLE partial (k INT, v INT) TBLPROPERTIES ('primary-key' = 'k', "
        "'merge-engine' = 'partial-update')",
    )
    merge = "MERGE INTO {} t USING merge_src s ON t.k = s.k WHEN MATCHED THEN {}"
    for engine, name in (("aggregation", "agg"), ("first-row", "first")):
        with pytest.raises(
            UnsupportedOperationError,
            match=f"merge engine {engine} can not "
            "support MergeInto, currently only deduplicate, partial-update",
        ):
            q(spark, wh, merge.format(name, "UPDATE SET v = s.v"))
    with pytest.raises(UnsupportedOperationError, match="partial-update.remove-record-on-delete"):
        q(spark, wh, merge.format("partial", "DELETE"))
    # a key assigned where ON does not equate the key
    with pytest.raises(UnsupportedOperationError, match="Can't update the primary key column"):
        q(
            spark,
            wh,
            "MERGE INTO partial t USING merge_src s ON t.v = s.v "
            "WHEN MATCHED THEN UPDATE SET k = s.k",
        )
    # Spark's parser rules
    with pytest.raises(SqlSyntaxError, match="only the last MATCHED clause can omit"):
        q(spark, wh, merge.format("partial", "UPDATE SET v = 1 WHEN MATCHED THEN DELETE"))
    with pytest.raises(SqlSyntaxError, match="WHEN NOT MATCHED BY SOURCE takes UPDATE or DELETE"):
        q(
            spark,
            wh,
            "MERGE INTO partial t USING merge_src s ON t.k = s.k "
            "WHEN NOT MATCHED BY SOURCE THEN INSERT *",
        )
    with pytest.raises(UnsupportedStatementError, match="with subquery can't be supported"):
        q(
            spark,
            wh,
            merge.format("partial", "UPDATE SET v = 1").replace(
                "ON t.k = s.k", "ON t.k IN (SELECT k FROM merge_src)"
            ),
        )
    # a target row matched by two source rows: nothing committed
    create(spark, wh, "card", KINDS["append"])
    before, files = snapshots(wh, "card"), data_files(wh, "card")
    with pytest.raises(MergeCardinalityError, match="Table 'default.card'.*MERGE_CARDINALITY"):
        q(spark, wh, "MERGE INTO card t USING merge_src s ON t.pt = s.pt WHEN MATCHED THEN DELETE")
    create(spark, wh, "card_pk", KINDS["pk-cross-partition"])
    spark.createDataFrame(
        [(2, 1), (2, 2), (3, 3), (3, None)], "k int, v int"
    ).createOrReplaceTempView("dup_src")
    before_pk = snapshots(wh, "card_pk")
    with pytest.raises(MergeCardinalityError, match="Table 'default.card_pk'"):
        q(
            spark,
            wh,
            "MERGE INTO card_pk t USING dup_src s ON t.k = s.k "
            "WHEN MATCHED AND s.v > 1 THEN UPDATE SET v = s.v",
        )
    assert snapshots(wh, "card_pk") == before_pk
    # a value that fails while rows are written (ANSI cast, pyspark 4's default and not 3.5's):
    # no snapshot, no file left
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        with pytest.raises(Exception, match="CAST_INVALID_INPUT|cannot be cast|malformed"):
            q(
                spark,
                wh,
                "MERGE INTO card t USING merge_src s ON t.k = s.k "
                "WHEN MATCHED THEN UPDATE SET v = CAST(concat('x', s.s) AS INT) "
                "WHEN NOT MATCHED THEN INSERT *",
            )
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")
    assert snapshots(wh, "card") == before
    assert data_files(wh, "card") == files
