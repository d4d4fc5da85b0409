"""Primary-key tables (fixed buckets, deduplicate) between paimon_pyspark and Java Paimon 1.4.2.

Both directions, with upserts and deletes over several commits: Java reads the tables we write
(partitioned or not, parquet/orc/avro, thin files) and returns our rows; we read the tables Java
writes, flushed files and Java-compacted levels, and return Java's rows. Java also prunes our
files with our key stats, and the rows of two writers sharing a bucket through
``sequence_slot`` merge in Java as in our read. A plain-Python model (last write per key wins)
says what the rows must be.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.spec.commit_message import CommitMessage

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("v", pa.int32()),
        ("s", pa.string()),
        ("dt", pa.string()),
        ("op", pa.string()),
    ]
)
JAVA_FIELDS = [
    ("id", "BIGINT NOT NULL"),
    ("v", "INT"),
    ("s", "STRING"),
    ("dt", "STRING NOT NULL"),
    ("op", "STRING"),
]
Row = dict[str, Any]


def workload(partitioned: bool, seed: int = 3) -> tuple[list[list[Row]], dict[Any, Row]]:
    """Commits of upserts and deletes (by ``op``), and the rows left: last write per key wins."""
    rng = random.Random(seed)
    commits: list[list[Row]] = []
    model: dict[Any, Row] = {}
    for c in range(4):
        batch = []
        for _ in range(120):
            i = rng.randrange(80)
            dt = ("2026-01-01", "2026-01-02")[i % 2] if partitioned else "all"
            op = "-D" if c > 0 and rng.random() < 0.2 else "+I"
            row = {"id": i, "v": rng.randrange(10_000), "s": f"s{c}-{i}" * (i % 3), "dt": dt}
            row["op"] = op
            batch.append(row)
            if op == "-D":
                model.pop((i, dt), None)
            else:
                model[(i, dt)] = row
        commits.append(batch)
    return commits, model


def as_lists(rows: Any) -> list[list[Any]]:
    return sorted_rows([[r[n] for n in SCHEMA.names] for r in rows])


def create_ours(warehouse: Path, partitioned: bool, options: dict[str, str]) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    catalog.create_table(
        f"{DB}.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["dt"] if partitioned else [],
            primary_keys=["id", "dt"] if partitioned else ["id"],
            options={"bucket": "2", "rowkind.field": "op", **options},
        ),
    )
    return catalog.get_table(f"{DB}.t")


def write(table: FileStoreTable, rows: list[Row]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist(rows, schema=SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def read_ours(table: FileStoreTable) -> list[list[Any]]:
    rb = table.new_read_builder()
    return as_lists(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist())


CASES = [
    pytest.param(False, "parquet", {}, id="unpartitioned-parquet"),
    pytest.param(True, "parquet", {}, id="partitioned-parquet"),
    pytest.param(True, "orc", {}, id="partitioned-orc"),
    pytest.param(False, "avro", {}, id="unpartitioned-avro"),
    pytest.param(True, "parquet", {"data-file.thin-mode": "true"}, id="partitioned-thin"),
]


def _java_pk_table(java_oracle: JavaOracle, warehouse: Path, options: dict[str, str]) -> None:
    """Java creates ``t``: JAVA_FIELDS, partitioned by dt, keyed by (id, dt)."""
    java_oracle.create_table(
        warehouse,
        DB,
        "t",
        JAVA_FIELDS,
        partition_keys=["dt"],
        primary_keys=["id", "dt"],
        options=options,
    )


@pytest.mark.parametrize(("partitioned", "fmt", "extra"), CASES)
def test_java_reads_our_upserts_and_deletes(
    java_oracle: JavaOracle, tmp_path: Path, partitioned: bool, fmt: str, extra: dict[str, str]
) -> None:
    table = create_ours(tmp_path, partitioned, {"file.format": fmt, **extra})
    commits, model = workload(partitioned)
    for rows in commits:
        write(table, rows)
    pb = table.new_read_builder().new_predicate_builder()
    deleted = table.delete(pb.less_than("id", 10))
    expected = as_lists(r for r in model.values() if r["id"] >= 10)
    assert deleted == len(model) - len(expected)

    assert read_ours(table) == expected
    java = java_oracle.read_table(tmp_path, DB, "t")
    assert java.fields == SCHEMA.names
    assert sorted_rows(java.rows) == expected
    # time travel: Java and we agree on every snapshot
    for sid in (1, 3):
        ours = read_ours(table.copy({"scan.snapshot-id": str(sid)}))
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t", sid).rows) == ours


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
@pytest.mark.parametrize("compacting", [False, True], ids=["write-only", "java-compacts"])
def test_we_read_java_upserts_and_deletes(
    java_oracle: JavaOracle, tmp_path: Path, fmt: str, compacting: bool
) -> None:
    options = {"bucket": "2", "rowkind.field": "op", "file.format": fmt}
    if not compacting:
        options["write-only"] = "true"
    else:
        options["num-sorted-run.compaction-trigger"] = "2"  # Java compacts after two commits
    _java_pk_table(java_oracle, tmp_path, options)
    commits, model = workload(partitioned=True, seed=11)
    for rows in commits:
        java_oracle.write_rows(tmp_path, DB, "t", [[r[n] for n in SCHEMA.names] for r in rows])
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table(f"{DB}.t")
    levels = {f.level for s in table.new_read_builder().new_scan().plan().splits() for f in s.files}
    assert (max(levels) > 0) == compacting

    expected = as_lists(model.values())
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == expected
    assert read_ours(table) == expected
    # a filtered, projected read of Java's files
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.and_(pb.equal("dt", "2026-01-02"), pb.greater_than("v", 5000)))
    got = rb.with_projection(["id", "v"]).new_read().to_arrow(rb.new_scan().plan().splits())
    want = {(r["id"], r["v"]) for r in model.values() if r["dt"] == "2026-01-02" and r["v"] > 5000}
    assert {(r["id"], r["v"]) for r in got.to_pylist()} == want


def test_java_prunes_our_files_by_key_stats(java_oracle: JavaOracle, tmp_path: Path) -> None:
    table = create_ours(tmp_path, False, {"bucket": "1"})
    for lo in (0, 100, 200):
        write(
            table,
            [{"id": i, "v": i, "s": "x", "dt": "all", "op": "+I"} for i in range(lo, lo + 50)],
        )
    rb = table.new_read_builder()
    rb = rb.with_filter(rb.new_predicate_builder().equal("id", 120))
    ours = sorted(f.file_name for s in rb.new_scan().plan().splits() for f in s.files)
    assert len(ours) == 1
    assert java_oracle.plan_files(tmp_path, DB, "t", "id", "equal", 120) == ours


def test_writers_sharing_a_bucket_through_sequence_slots(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """Two writers, one commit: slot (1, 2) writes every key after slot (0, 2) did."""
    table = create_ours(tmp_path, False, {"bucket": "1"})
    write(table, [{"id": i, "v": 0, "s": "base", "dt": "all", "op": "+I"} for i in range(10)])
    builder = table.new_batch_write_builder()
    messages: list[CommitMessage] = []
    for index, tag in ((0, "first"), (1, "second")):
        with builder.new_write(sequence_slot=(index, 2)) as w:
            rows = [{"id": i, "v": index, "s": tag, "dt": "all", "op": "+I"} for i in range(10)]
            w.write_arrow(pa.Table.from_pylist(rows, schema=SCHEMA))
            messages += w.prepare_commit()
    builder.new_commit().commit(messages)
    seqs = [
        (f.min_sequence_number, f.max_sequence_number)
        for m in messages
        for f in m.data_increment.new_files
    ]
    assert seqs == [(10, 28), (11, 29)]  # interleaved, never equal
    expected = as_lists(
        {"id": i, "v": 1, "s": "second", "dt": "all", "op": "+I"} for i in range(10)
    )
    assert read_ours(table) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == expected


def test_spark_reads_javas_final_files_natively_and_merges_the_rest(
    java_oracle: JavaOracle, tmp_path: Path, spark: Any
) -> None:
    """Java's level-0 files, never compacted: each bucket's newest file (the last commit, all
    upserts) goes to Spark's Parquet reader as final (kv_read.final_file relies on a Java file
    holding one record per key), the older files merge in the Python source; the rows equal
    what Java reads."""
    from paimon_pyspark.spark import read as spark_read

    options = {"bucket": "2", "rowkind.field": "op", "write-only": "true"}
    _java_pk_table(java_oracle, tmp_path, options)
    commits, model = workload(partitioned=True, seed=5)
    last = [
        {
            "id": i,
            "v": 7 * i,
            "s": f"last-{i}",
            "dt": ("2026-01-01", "2026-01-02")[i % 2],
            "op": "+I",
        }
        for i in range(0, 80, 3)
    ]
    for row in last:
        model[(row["id"], row["dt"])] = row
    for rows in [*commits, last]:
        java_oracle.write_rows(tmp_path, DB, "t", [[r[n] for n in SCHEMA.names] for r in rows])
    expected = as_lists(model.values())
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == expected

    df = spark_read(spark, str(tmp_path), f"{DB}.t")
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "FileScan parquet" in plan and "MapInArrow" in plan, plan
    assert as_lists(r.asDict() for r in df.collect()) == expected
    mine = spark_read(spark, str(tmp_path), f"{DB}.t", where="v > 100", columns=["id", "v"])
    want = sorted((r["id"], r["v"]) for r in model.values() if r["v"] > 100)
    assert sorted((r["id"], r["v"]) for r in mine.collect()) == want
