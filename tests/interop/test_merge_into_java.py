"""MERGE INTO through ``paimon_pyspark.spark.sql`` against Java: each statement below runs on a
table we wrote and (one per table kind) on a table Java Paimon 1.4.2 wrote; the rows must equal
what the same MERGE on the same input gives through Java's Spark connector (Paimon 0.9.0 on
Spark 3.5, tests/interop/spark35_merge_driver.py, one process for every case, started when the
module starts), and Java 1.4.2 must read every result with the same rows.

Where the connector gives no usable answer, the expected rows come from ``_reference``, a
plain-Python statement of Spark's MERGE semantics (each target row takes the first MATCHED or
NOT MATCHED BY SOURCE clause whose condition holds, each unmatched source row the first NOT
MATCHED clause; a row no clause takes is kept, or for a source row dropped). Spark's own
Parquet tables cannot run MERGE, so this is the independent answer. It is used for:

- ``NOT MATCHED BY SOURCE`` with a condition or a value over the target: 0.9.0 fails to
  resolve it (``cannot resolve (t.v < 30) from SubqueryAlias t``); Java 1.4.2 runs it.
- ``INSERT (k, v, pt) VALUES ...`` naming fewer columns than the table has: 0.9.0 refuses
  (``Can't align the table's columns in insert clause``); Java 1.4.2 sets the others NULL (or
  their default), as Spark does.

Refusals follow Java 1.4.2 (paimon-spark ``RowLevelOp.MergeInto``): the aggregation and
first-row merge engines are refused (0.9.0 refuses them in the same words); updating a primary
key column when the ON clause does not equate every key is refused; a target row matched by two
source rows is an error; a DELETE on a partial-update table without
``partial-update.remove-record-on-delete`` is an error (0.9.0 commits it and then cannot read
the table back; we must not leave such a table). A MERGE adds one snapshot (and maybe COMPACT
ones after it); a refused one adds none.

The connector's answers are kept in .cache/merge-oracle/, keyed by a hash of its input, so a
second run with unchanged cases skips its process.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.spark import sql

pytestmark = [pytest.mark.java, pytest.mark.slow]

PROJECT = Path(__file__).resolve().parents[2]
SPARK35_PYTHON = PROJECT / ".venv-spark35" / "bin" / "python"
CONNECTOR_JAR = PROJECT / ".cache" / "java" / "paimon-spark-3.5-0.9.0.jar"
DRIVER = Path(__file__).with_name("spark35_merge_driver.py")
ORACLE_CACHE = PROJECT / ".cache" / "merge-oracle"

COLUMNS = "k INT NOT NULL, v INT, s STRING, pt INT NOT NULL"
SOURCE_COLUMNS = "k INT, v INT, s STRING, pt INT"
ARROW = pa.schema(
    [
        pa.field("k", pa.int32(), nullable=False),
        ("v", pa.int32()),
        ("s", pa.string()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
JAVA_FIELDS = [("k", "INT NOT NULL"), ("v", "INT"), ("s", "STRING"), ("pt", "INT NOT NULL")]
TARGET = [[1, 10, "a", 1], [2, 20, "b", 1], [3, 30, "c", 2], [4, 40, "d", 2], [5, 50, "e", 1]]
TARGET += [[6, 60, "f", 2]]
# k 2, 4, 5 match in the same partition; k 6 matches on k alone, from another partition
SOURCE = [[2, 200, "B", 1], [4, 400, "D", 2], [5, None, "E", 1], [6, 600, "F", 1]]
SOURCE += [[7, 700, "G", 1], [8, 800, "H", 2]]

# kind: (primary keys, partition keys, options)
KINDS: dict[str, tuple[list[str], list[str], dict[str, str]]] = {
    "fixed": (["k"], [], {"bucket": "2"}),
    "dynamic": (["k", "pt"], ["pt"], {"bucket": "-1"}),
    "cross": (["k"], ["pt"], {"bucket": "-1"}),
    "partial": (["k"], [], {"bucket": "1", "merge-engine": "partial-update"}),
    "aggregation": (
        ["k"],
        [],
        {"bucket": "1", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
    ),
    "first_row": (["k"], [], {"bucket": "1", "merge-engine": "first-row"}),
    "append": ([], ["pt"], {"bucket": "-1"}),
}

STAR = "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
# name: the statement; {t} the target, {s} the source view, {on} the kind's key equality
STATEMENTS: dict[str, str] = {
    "update_insert_star": STAR,
    "update_set": "WHEN MATCHED THEN UPDATE SET v = s.v, s = concat(t.s, s.s)",
    "update_expr": "WHEN MATCHED THEN UPDATE SET v = t.v + coalesce(s.v, 0), s = upper(t.s)",
    "update_null": "WHEN MATCHED THEN UPDATE SET s = NULL, v = s.v",
    "delete": "WHEN MATCHED THEN DELETE",
    "insert_star": "WHEN NOT MATCHED THEN INSERT *",
    "insert_columns": "WHEN NOT MATCHED THEN INSERT (k, v, pt) VALUES (s.k, s.v * 2, s.pt)",
    "delete_insert": "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *",
    "matched_delete_or_update": (
        "WHEN MATCHED AND s.v IS NULL THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v"
    ),
    "matched_conditions": (
        "WHEN MATCHED AND s.v > 300 THEN UPDATE SET v = s.v WHEN MATCHED AND t.v < 30 THEN DELETE"
    ),
    "not_matched_condition": "WHEN NOT MATCHED AND s.v > 750 THEN INSERT *",
    "not_matched_two": (
        "WHEN NOT MATCHED AND s.k = 7 THEN INSERT (k, v, s, pt) VALUES (s.k, -1, 'seven', s.pt) "
        "WHEN NOT MATCHED THEN INSERT *"
    ),
    "by_source_delete": "WHEN NOT MATCHED BY SOURCE THEN DELETE",
    "by_source_update": "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = t.v + 1",
    "by_source_conditions": (
        "WHEN NOT MATCHED BY SOURCE AND t.v < 30 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET s = 'gone'"
    ),
    "all_clauses": (
        "WHEN MATCHED AND s.v IS NULL THEN DELETE WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED AND s.k > 7 THEN INSERT (k, v, s, pt) VALUES (s.k, s.v, 'new', s.pt) "
        "WHEN NOT MATCHED THEN INSERT * "
        "WHEN NOT MATCHED BY SOURCE AND t.pt = 2 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 0"
    ),
    "source_query": "USING (SELECT k, v + 1 AS v, s, pt FROM {s} WHERE k > 3) AS s ON {on} " + STAR,
    "on_extra_condition": "ON {on} AND s.v > 300 WHEN MATCHED THEN UPDATE SET v = s.v "
    "WHEN NOT MATCHED AND s.k > 6 THEN INSERT *",
    "no_op": "WHEN MATCHED AND t.v > 1000 THEN DELETE",
    "duplicate_source": "USING (SELECT * FROM {s} UNION ALL SELECT * FROM {s} WHERE k = 2) AS s "
    "ON {on} WHEN MATCHED THEN UPDATE SET *",
    "update_primary_key": "ON t.v = s.v WHEN MATCHED THEN UPDATE SET k = s.k",
}

# the statements each kind runs (fixed-bucket runs all)
PER_KIND: dict[str, list[str]] = {
    "fixed": list(STATEMENTS),
    "dynamic": [
        "update_insert_star",
        "all_clauses",
        "matched_delete_or_update",
        "by_source_update",
        "insert_columns",
    ],
    "cross": ["update_insert_star", "all_clauses", "delete", "by_source_delete"],
    "partial": ["update_insert_star", "update_null", "insert_columns", "delete"],
    "aggregation": ["update_insert_star"],
    "first_row": ["update_insert_star"],
    "append": [
        "update_insert_star",
        "all_clauses",
        "delete",
        "insert_columns",
        "matched_conditions",
        "duplicate_source",
    ],
}
# one statement per kind on a table Java 1.4.2 wrote
JAVA_WRITTEN: dict[str, str] = {
    "fixed": "all_clauses",
    "dynamic": "all_clauses",
    "cross": "update_insert_star",
    "partial": "update_insert_star",
    "aggregation": "update_insert_star",
    "first_row": "update_insert_star",
    "append": "all_clauses",
}
# statements whose expected rows come from _reference, not from 0.9.0 (see the docstring)
REFERENCE = {"by_source_conditions", "by_source_update", "all_clauses", "insert_columns"}
# the words of Java's refusal each kind's MERGE must carry
REFUSALS: dict[str, str] = {"aggregation": "aggregation", "first_row": "first-row"}

CASES = [(kind, stmt) for kind, stmts in PER_KIND.items() for stmt in stmts]


def _on(kind: str) -> str:
    return "t.k = s.k AND t.pt = s.pt" if "pt" in KINDS[kind][0] else "t.k = s.k"


def merge_sql(kind: str, stmt: str, target: str, source: str) -> str:
    """The MERGE statement ``stmt`` for a table of ``kind``."""
    body = STATEMENTS[stmt]
    if not body.startswith("USING"):
        body = ("" if body.startswith("ON") else "ON {on} ") + body
        body = "USING {s} AS s " + body
    return f"MERGE INTO {target} AS t " + body.format(s=source, on=_on(kind))


def create_sql(kind: str, target: str) -> str:
    """The CREATE TABLE of a ``kind`` table, in Spark's spelling (both engines take it)."""
    primary, partition, options = KINDS[kind]
    props = {**({"primary-key": ",".join(primary)} if primary else {}), **options}
    parts = f" PARTITIONED BY ({', '.join(partition)})" if partition else ""
    tblprops = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
    return f"CREATE TABLE {target} ({COLUMNS}){parts} TBLPROPERTIES ({tblprops})"


def _name(kind: str, stmt: str) -> str:
    return f"{kind}__{stmt}"


# -- the reference -----------------------------------------------------------------------------

Row = dict[str, Any]
Cond = Callable[[Row, Row], bool]
Action = str | dict[str, Callable[[Row, Row], Any]]


def _set(**cols: Callable[[Row, Row], Any]) -> dict[str, Callable[[Row, Row], Any]]:
    return cols


def _star(col: str) -> Callable[[Row, Row], Any]:
    return lambda t, s: s[col]


STAR_ASSIGN = {c: _star(c) for c in ARROW.names}
ALWAYS: Cond = lambda t, s: True  # noqa: E731

# the statements of REFERENCE as (matched, not matched, not matched by source) clause lists
REFERENCE_CLAUSES: dict[str, tuple[list[tuple[Cond, Action]], ...]] = {
    "by_source_conditions": (
        [],
        [],
        [
            (lambda t, s: t["v"] is not None and t["v"] < 30, "delete"),
            (ALWAYS, _set(s=lambda t, s: "gone")),
        ],
    ),
    "by_source_update": ([], [], [(ALWAYS, _set(v=lambda t, s: t["v"] + 1))]),
    "insert_columns": (
        [],
        [
            (
                ALWAYS,
                _set(
                    k=lambda t, s: s["k"],
                    v=lambda t, s: None if s["v"] is None else s["v"] * 2,
                    pt=lambda t, s: s["pt"],
                ),
            )
        ],
        [],
    ),
    "all_clauses": (
        [(lambda t, s: s["v"] is None, "delete"), (ALWAYS, STAR_ASSIGN)],
        [
            (
                lambda t, s: s["k"] > 7,
                {**STAR_ASSIGN, "s": lambda t, s: "new"},
            ),
            (ALWAYS, STAR_ASSIGN),
        ],
        [(lambda t, s: t["pt"] == 2, "delete"), (ALWAYS, _set(v=lambda t, s: 0))],
    ),
}


def _reference(kind: str, stmt: str) -> list[list[Any]]:
    """Spark's MERGE semantics, row by row, for the few statements 0.9.0 cannot run (their ON
    clause matches each key once, so a primary key is never inserted twice)."""
    matched, not_matched, by_source = REFERENCE_CLAUSES[stmt]
    keys = ["k", "pt"] if "pt" in KINDS[kind][0] else ["k"]
    target = [dict(zip(ARROW.names, r, strict=True)) for r in TARGET]
    source = [dict(zip(ARROW.names, r, strict=True)) for r in SOURCE]

    def apply(clauses: list[tuple[Cond, Action]], t: Row, s: Row, keep: Row | None) -> list[Row]:
        for cond, action in clauses:
            if cond(t, s):
                if action == "delete":
                    return []
                assert isinstance(action, dict)
                base = t if t else dict.fromkeys(ARROW.names)
                return [{c: action[c](t, s) if c in action else base[c] for c in ARROW.names}]
        return [keep] if keep else []

    out: list[Row] = []
    for t in target:
        hits = [s for s in source if all(t[k] == s[k] for k in keys)]
        out += apply(matched, t, hits[0], t) if hits else apply(by_source, t, {}, t)
    for s in source:
        if not any(all(t[k] == s[k] for k in keys) for t in target):
            out += apply(not_matched, {}, s, None)
    return sorted_rows([[r[c] for c in ARROW.names] for r in out])


# -- the oracle --------------------------------------------------------------------------------


def oracle_cases() -> list[dict[str, Any]]:
    """The commands of spark35_merge_driver.py: every case whose answer 0.9.0 gives."""
    return [
        {
            "name": _name(kind, stmt),
            "ddl": create_sql(kind, "{t}"),
            "target": TARGET,
            "source_columns": SOURCE_COLUMNS,
            "source": SOURCE,
            "merge": merge_sql(kind, stmt, "{t}", "{s}"),
        }
        for kind, stmt in CASES
        if stmt not in REFERENCE
    ]


class _Spark35:
    """The connector's answers, computed in a child process while the first cases run.

    They are kept under .cache/ keyed by a hash of the driver, the jar and the cases, so a run
    with unchanged input reuses them (the connector is deterministic on these inputs)."""

    def __init__(self) -> None:
        missing = [str(p) for p in (SPARK35_PYTHON, CONNECTOR_JAR) if not p.exists()]
        if missing:
            pytest.fail(f"Spark 3.5 connector oracle not built (missing {missing}); run make test")
        command = json.dumps({"cases": oracle_cases()}, sort_keys=True)
        key = hashlib.sha256(
            f"{DRIVER.read_text()}|{CONNECTOR_JAR.stat().st_size}|{command}".encode()
        ).hexdigest()[:16]
        self._cache = ORACLE_CACHE / f"{key}.json"
        self._results: dict[str, dict[str, Any]] | None = None
        self._proc: subprocess.Popen[str] | None = None
        if self._cache.is_file():
            self._results = json.loads(self._cache.read_text())
            return
        self._log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - a pipe could stall the child
        self._proc = subprocess.Popen(
            [str(SPARK35_PYTHON), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")},
        )
        assert self._proc.stdin is not None
        self._proc.stdin.write(command)
        self._proc.stdin.close()

    def result(self, name: str) -> dict[str, Any]:
        if self._results is None:
            assert self._proc is not None and self._proc.stdout is not None
            out = self._proc.stdout.read()
            if self._proc.wait() != 0 or not out.strip():
                self._log.seek(0)
                err = self._log.read()[-4000:]
                pytest.fail(f"spark35_merge_driver.py failed:\n{err}", pytrace=False)
            self._results = json.loads(out.strip().splitlines()[-1])["results"]
            self._cache.parent.mkdir(parents=True, exist_ok=True)
            self._cache.write_text(json.dumps(self._results))
        return self._results[name]

    def close(self) -> None:
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self._log.close()


@pytest.fixture(scope="module")
def spark35() -> Iterator[_Spark35]:
    oracle = _Spark35()
    try:
        yield oracle
    finally:
        oracle.close()


def _expected(spark35: _Spark35, kind: str, stmt: str) -> dict[str, Any]:
    if stmt in REFERENCE:
        return {"rows": _reference(kind, stmt)}
    return spark35.result(_name(kind, stmt))


# -- the tests ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {w: str(tmp_path_factory.mktemp(f"merge-{w}")) for w in ("ours", "java")}


def _source_view(spark: SparkSession) -> str:
    view = "merge_into_java_source"
    spark.createDataFrame(SOURCE, SOURCE_COLUMNS).createOrReplaceTempView(view)
    return view


def _our_rows(table: FileStoreTable) -> list[list[Any]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def _merge_and_check(
    spark: SparkSession,
    java_oracle: JavaOracle,
    warehouse: str,
    kind: str,
    stmt: str,
    expected: dict[str, Any],
) -> None:
    name = _name(kind, stmt)
    statement = merge_sql(kind, stmt, f"db.{name}", _source_view(spark))
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(f"db.{name}")
    before = table.snapshot_manager.latest_id() or 0
    if "error" in expected:
        with pytest.raises(Exception) as caught:
            sql(spark, statement, warehouse=warehouse)
            _our_rows(table)  # a MERGE that commits what no reader can read fails too
        assert REFUSALS.get(kind, "") in str(caught.value), (statement, expected["error"])
        assert table.snapshot_manager.latest_id() == before, "a failed MERGE committed"
        return
    sql(spark, statement, warehouse=warehouse)
    want = sorted_rows(expected["rows"])
    assert _our_rows(table) == want, statement
    after = [s["commitKind"] for s in java_oracle.snapshots(warehouse, "db", name)][before:]
    assert len([k for k in after if k != "COMPACT"]) <= 1, (statement, after)  # one snapshot
    assert sorted_rows(java_oracle.read_table(warehouse, "db", name).rows) == want, statement


# (writer, kind, statement): the cases _reference answers first, so they run while the
# connector's process works out the others
RUNS = sorted(
    [("ours", kind, stmt) for kind, stmt in CASES]
    + [("java", kind, stmt) for kind, stmt in JAVA_WRITTEN.items()],
    key=lambda run: run[2] not in REFERENCE,
)


def _write_ours(spark: SparkSession, warehouse: str, kind: str, name: str) -> None:
    sql(spark, "CREATE DATABASE IF NOT EXISTS db", warehouse=warehouse)
    sql(spark, create_sql(kind, f"db.{name}"), warehouse=warehouse)
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(f"db.{name}")
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        rows = [dict(zip(ARROW.names, r, strict=True)) for r in TARGET]
        write.write_arrow(pa.Table.from_pylist(rows, ARROW))
        builder.new_commit().commit(write.prepare_commit())


def _write_java(java_oracle: JavaOracle, warehouse: str, kind: str, name: str) -> None:
    primary, partition, options = KINDS[kind]
    java_oracle.create_table(
        warehouse,
        "db",
        name,
        JAVA_FIELDS,
        partition_keys=partition,
        primary_keys=primary,
        options={**options, "write-only": "true"},
    )
    java_oracle.write_rows_kinds(warehouse, "db", name, TARGET, ["+I"] * len(TARGET))


@pytest.mark.parametrize(
    ("writer", "kind", "stmt"), RUNS, ids=[f"{w}-{_name(k, s)}" for w, k, s in RUNS]
)
def test_merge_matches_the_connector(
    spark35: _Spark35,  # first: the connector's process starts before the other fixtures
    spark: SparkSession,
    java_oracle: JavaOracle,
    warehouses: dict[str, str],
    writer: str,
    kind: str,
    stmt: str,
) -> None:
    """The target's first rows written by us or by Java 1.4.2, then our MERGE."""
    warehouse, name = warehouses[writer], _name(kind, stmt)
    if writer == "ours":
        _write_ours(spark, warehouse, kind, name)
    else:
        _write_java(java_oracle, warehouse, kind, name)
    _merge_and_check(spark, java_oracle, warehouse, kind, stmt, _expected(spark35, kind, stmt))


def test_oracle_cases_cover_every_clause() -> None:
    """Every clause Spark parses appears, with and without a condition, and ``*`` forms."""
    text = " ".join(merge_sql(k, s, "t", "s") for k, s in CASES)
    for clause in (
        "WHEN MATCHED THEN UPDATE SET *",
        "WHEN MATCHED AND",
        "THEN DELETE",
        "WHEN NOT MATCHED THEN INSERT *",
        "WHEN NOT MATCHED AND",
        "INSERT (k, v, pt) VALUES",
        "WHEN NOT MATCHED BY SOURCE THEN DELETE",
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE",
        "WHEN NOT MATCHED BY SOURCE AND",
    ):
        assert clause in text, clause
