"""The seeds' SQL scripts, verbatim (tests/interop/sql_seeds/), run through
``paimon_pyspark.spark.sql``: the results the seeds give, then Java Paimon 1.4.2 reads every
table they leave behind and sees the rows we see.

Each script runs once, in its own warehouse, as the seed runs it: seed 001's scripts in the
database their ``CALL``s name (``ods``, or ``default``), after a ``T`` exists where a script
starts with ``drop table T`` (the seed drops the ``T`` of its previous scenario).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.spark import sql
from paimon_pyspark.sql import split_statements

pytestmark = [pytest.mark.java, pytest.mark.slow]

SEEDS = Path(__file__).parent / "sql_seeds"


@dataclass
class Run:
    """A script's run: the rows each statement returned, and the check queries' rows after
    the statements the test asked about."""

    warehouse: Path
    statements: list[str]
    results: list[list[tuple[Any, ...]]] = field(default_factory=list)
    checks: dict[int, list[tuple[Any, ...]]] = field(default_factory=dict)

    def table(self, identifier: str) -> FileStoreTable:
        return CatalogFactory.create({"warehouse": str(self.warehouse)}).get_table(identifier)


def run_script(
    spark: SparkSession,
    warehouse: Path,
    script: str,
    database: str = "ods",
    before: tuple[str, ...] = (),
    check: str | None = None,
    check_after: tuple[int, ...] = (),
    session: tuple[str, ...] = (),
) -> Run:
    """``session``: ``spark.paimon.*`` settings (dynamic options of every table) for the
    script's run only, set with the door's ``SET``."""
    statements = split_statements((SEEDS / script).read_text())
    run = Run(warehouse, statements)
    setup = (
        ("USE default",)
        if database == "default"
        else (f"CREATE DATABASE {database}", f"USE {database}")
    )
    settings = tuple(f"SET {s}" for s in session)
    try:
        for statement in (*setup, *settings, *before):
            sql(spark, statement, warehouse=str(warehouse)).collect()
        for i, statement in enumerate(statements):
            rows = sql(spark, statement, str(warehouse)).collect()
            run.results.append([tuple(r) for r in rows])
            if check is not None and i in check_after:
                run.checks[i] = [tuple(r) for r in sql(spark, check, str(warehouse)).collect()]
    finally:
        for setting in session:
            spark.conf.unset(setting.split("=")[0].strip())
    return run


def index_of(run: Run, start: str, nth: int = 0) -> int:
    """The index of the ``nth`` statement that starts with ``start`` (case-insensitive)."""
    found = [
        i
        for i, s in enumerate(run.statements)
        if "\n".join(line for line in s.splitlines() if not line.strip().startswith("--"))
        .strip()
        .lower()
        .startswith(start.lower())
    ]
    return found[nth]


def ids(rows: list[tuple[Any, ...]]) -> list[Any]:
    return sorted(r[0] for r in rows)


Runner = Callable[..., Run]


@pytest.fixture(scope="module")
def runs(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runner]:
    done: dict[str, Run] = {}

    def get(script: str, **kwargs: Any) -> Run:
        if script not in done:
            warehouse = tmp_path_factory.mktemp(script.removesuffix(".sql"))
            done[script] = run_script(spark, warehouse, script, **kwargs)
        return done[script]

    sql(spark, "USE default", warehouse=str(tmp_path_factory.mktemp("use"))).collect()
    yield get


def postpone_files(table: FileStoreTable) -> int:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return len(table.manifest_io.live_entries(snapshot))


WO_PK = "SELECT order_id, price, ts FROM wo_pk_table"
IDS = "SELECT order_id FROM with_pk_table"
POSTPONE_IDS = "SELECT order_id FROM postpone_bucket_table"
T_ROWS = "SELECT pk, v, pt FROM T"


def test_append_table_with_bucket_key(runs: Runner) -> None:
    run = runs("001_wo_pk_table.sql", check=WO_PK, check_after=(2,))
    assert [(r[0], str(r[1]), str(r[2])) for r in sorted(run.checks[2])] == [
        (1, "100.00", "2025-04-05 11:45:00"),
        (2, "200.00", "2025-04-05 11:45:01"),
        (3, "300.00", "2025-04-05 11:45:02"),
    ]
    table = run.table("ods.wo_pk_table")
    assert table.options.get("bucket") == "2"
    assert table.options.get("bucket-key") == "order_id"
    assert not table.primary_keys


def test_with_pk_table_in_dynamic_bucket_mode(runs: Runner) -> None:
    """Seed 001's with_pk_table as written (no bucket option: dynamic bucket mode) and its
    positional ``CALL sys.compact('ods.with_pk_table', '', '', '', '')``."""
    script = "001_with_pk_table.sql"
    statements = split_statements((SEEDS / script).read_text())
    delete = next(i for i, s in enumerate(statements) if s.lower().startswith("delete"))
    call = len(statements) - 1
    run = runs(script, check=IDS, check_after=(delete, call))
    assert ids(run.checks[delete]) == [1, 4, 5, 6, 7]
    assert ids(run.checks[call]) == [1, 4, 5, 6, 7]
    assert run.results[call] == [(True,)]
    table = run.table("ods.with_pk_table")
    assert table.options.get("bucket") is None
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None and snapshot.commit_kind == "COMPACT"


def test_dynamic_bucket_table_in_spark_and_flink_spelling(runs: Runner) -> None:
    spark_run = runs(
        "001_dynamic_bucket_spark.sql",
        before=("CREATE TABLE T (pk INT)",),
        check=T_ROWS,
        check_after=(2,),
    )
    assert spark_run.checks[2] == [(1, 10, 1)]
    t = spark_run.table("ods.T")
    assert t.primary_keys == ["pk"]
    assert t.options.get("dynamic-bucket.target-row-num") == "2"
    flink_run = runs("001_dynamic_bucket_flink.sql", check=T_ROWS, check_after=(1,))
    assert flink_run.checks[1] == [(1, 1, 1)]
    assert flink_run.table("ods.T").primary_keys == ["pk"]


def test_postpone_bucket_table_with_hints_compact_and_rescale(runs: Runner) -> None:
    script = "001_postpone_bucket_table.sql"
    statements = split_statements((SEEDS / script).read_text())
    inserts = [i for i, s in enumerate(statements) if "insert into" in s.lower()]
    calls = [i for i, s in enumerate(statements) if "call sys." in s.lower()]
    run = runs(script, check=POSTPONE_IDS, check_after=(*inserts, *calls))
    visible = [ids(run.checks[i]) for i in sorted((*inserts, *calls))]
    assert visible == [
        [],  # the first insert stays in the postpone bucket
        [4],  # the hint writes into a real bucket
        [4, 5, 6],
        [1, 2, 3, 4, 5, 6],  # CALL sys.compact
        [1, 2, 3, 4, 5, 6],  # CALL sys.rescale
        [1, 2, 3, 4, 5, 6, 7],
        [1, 2, 3, 4, 5, 6, 7],  # 8 and 9 wait in the postpone bucket
        [1, 2, 3, 4, 5, 6, 7],
        [1, 2, 3, 4, 5, 6, 7, 10],
    ]
    assert [run.results[i] for i in calls] == [[(True,)], [(True,)]]
    table = run.table("ods.postpone_bucket_table")
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    rescaled = [
        e
        for e in table.manifest_io.live_entries(snapshot)
        if e.bucket >= 0 and b"2023-10-02" in e.partition
    ]
    assert len(rescaled) == 1  # "after rescale, 2023-10-02 merge two files"
    assert rescaled[0].total_buckets == 1


def test_postpone_delete_waits_for_compaction(runs: Runner) -> None:
    script = "001_postpone_delete.sql"
    statements = split_statements((SEEDS / script).read_text())
    delete = next(i for i, s in enumerate(statements) if s.lower().startswith("delete"))
    run = runs(
        script,
        database="default",
        before=("CREATE TABLE T (k INT)",),
        check="SELECT k, v, pt FROM T",
        check_after=(delete, len(statements) - 1),
    )
    assert run.checks[delete] == []
    # the delete found nothing to delete: k = 1 was still in the postpone bucket; and with a
    # postpone bucket the key is unique per partition only ("the user maintains it"), so the
    # insert into pt = 2 is a second row, as Java keeps it (Java reads the same below)
    assert sorted(run.checks[len(statements) - 1]) == [
        (1, 10, 1),
        (1, 11, 2),
        (2, 20, 1),
        (3, 30, 1),
        (4, 40, 1),
    ]


def test_cross_partition_upsert_in_both_spellings(runs: Runner) -> None:
    flink = runs("001_cross_partition_flink.sql")
    assert sorted(flink.results[-1]) == [(1, 10, 1), (1, 11, 2), (2, 20, 1), (3, 30, 1), (4, 40, 1)]
    spark_form = runs(
        "001_cross_partition_spark.sql",
        before=("CREATE TABLE T (pk INT)",),
    )
    table = spark_form.table("ods.T")
    assert table.primary_keys == ["pk"] and table.partition_keys == ["pt"]
    assert table.bucket_mode.name == "KEY_DYNAMIC"


def test_cross_partition_upsert_then_rows_move(spark: SparkSession, runs: Runner) -> None:
    """The Spark form's table (primary key without the partition key) moves a key between
    partitions, with the Flink form's inserts."""
    run = runs("001_cross_partition_spark.sql", before=("CREATE TABLE T (pk INT)",))
    wh = str(run.warehouse)
    sql(spark, "insert into ods.T values (1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1)", wh)
    sql(spark, "insert into ods.T values (1, 11, 2)", wh)
    rows = sorted(tuple(r) for r in sql(spark, "SELECT pk, v, pt FROM ods.T", wh).collect())
    assert rows == [(1, 11, 2), (2, 20, 1), (3, 30, 1), (4, 40, 1)]


def test_cross_partition_with_fixed_buckets(runs: Runner) -> None:
    run = runs("001_cross_partition_fixed_bucket.sql", before=("CREATE TABLE T (pk INT)",))
    assert run.results[-1] == [(1, 12, 3), (2, 20, 1), (3, 30, 1), (4, 40, 1)]


RUST_POSTPONE = ("spark.paimon.postpone.batch-write-fixed-bucket = false",)
"""paimon-rust writes a postpone table's batches into the postpone bucket, where Java 1.4.2's
batch writers (``postpone.batch-write-fixed-bucket``, default true) write them into real
buckets; seed 000's expectations are paimon-rust's, so its scripts run with the option off
for the session, as a Spark user of Java's connector would set it."""


def test_postpone_writes_are_invisible_to_select(runs: Runner) -> None:
    run = runs("000_postpone_invisible_to_select.sql", database="default", session=RUST_POSTPONE)
    assert run.results[-1] == []
    assert postpone_files(run.table("test_db.t_postpone")) == 1


def test_javas_default_writes_postpone_batches_into_real_buckets(
    spark: SparkSession, tmp_path: Path
) -> None:
    run = run_script(spark, tmp_path, "000_postpone_invisible_to_select.sql", "default")
    assert sorted(run.results[-1]) == [(1, 10), (2, 20), (3, 30)]


def test_postpone_insert_overwrite_replaces_the_file(runs: Runner) -> None:
    run = runs(
        "000_postpone_insert_overwrite.sql",
        database="default",
        session=RUST_POSTPONE,
        check="SELECT count(*) FROM paimon.test_db.t_postpone_ow",
        check_after=(2, 3),
    )
    table = run.table("test_db.t_postpone_ow")
    assert postpone_files(table) == 1
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None and snapshot.commit_kind == "OVERWRITE"


SCRIPTS = sorted(p.name for p in SEEDS.glob("*.sql"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_java_reads_every_table_the_script_leaves(
    runs: Runner, java_oracle: JavaOracle, script: str
) -> None:
    kwargs: dict[str, Any] = {}
    if script in ("001_postpone_delete.sql",) or script.startswith("000_"):
        kwargs["database"] = "default"
    if script.startswith("000_"):
        kwargs["session"] = RUST_POSTPONE
    if script in (
        "001_dynamic_bucket_spark.sql",
        "001_cross_partition_spark.sql",
        "001_cross_partition_fixed_bucket.sql",
    ):
        kwargs["before"] = ("CREATE TABLE T (pk INT)",)
    if script == "001_postpone_delete.sql":
        kwargs["before"] = ("CREATE TABLE T (k INT)",)
    run = runs(script, **kwargs)
    catalog = CatalogFactory.create({"warehouse": str(run.warehouse)})
    seen = 0
    for db in catalog.list_databases():
        for name in catalog.list_tables(db):
            table = catalog.get_table(f"{db}.{name}")
            rb = table.new_read_builder()
            ours = rb.new_read().to_arrow(rb.new_scan().plan().splits())
            java = java_oracle.read_table(run.warehouse, db, name)
            assert sorted_rows(java.rows) == sorted_rows(canonical_rows(ours)), f"{db}.{name}"
            seen += 1
    assert seen >= 1
