"""Postpone-bucket tables (bucket = -2) between us and Java Paimon 1.4.2.

Java reads the seed scenario's table as we do at every step (postpone rows invisible, all rows
after compaction); Java's own postpone compaction of a table we wrote gives the rows ours gives;
we compact a postpone table Java wrote (Avro postpone files) into the rows Java's compaction
gives. Java's compaction is the oracle's ``compactPostpone``: the steps of Spark's
SparkPostponeCompactProcedure with core classes, since the Spark and Flink connectors that hold
Java's procedures are not on Maven Central here for 1.4.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact
from paimon_pyspark.spark.pipeline import postpone_seed

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("pt", pa.string(), nullable=False),
    ]
)
OPTIONS = {
    "bucket": "-2",
    "postpone.batch-write-fixed-bucket": "false",
    "postpone.default-bucket-num": "3",
}
JAVA_TYPES = [("k", "BIGINT NOT NULL"), ("v", "STRING"), ("pt", "STRING NOT NULL")]


def catalog_at(warehouse: Path) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    return catalog


def ours(table: FileStoreTable) -> list[list[object]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def java_rows(java: JavaOracle, warehouse: Path, name: str) -> list[list[object]]:
    return sorted_rows(java.read_table(warehouse, DB, name).rows)


def batch(keys: range, version: int) -> pa.Table:
    return pa.table(
        {
            "k": list(keys),
            "v": [f"v{k}-{version}" for k in keys],
            "pt": [f"p{k % 3}" for k in keys],
        },
        schema=SCHEMA,
    )


def write(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        builder.new_commit().commit(w.prepare_commit())


def test_java_reads_the_seed_scenario_as_we_do(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = catalog_at(tmp_path)
    name = "postpone_bucket_table"
    seen: list[int] = []

    def check(message: str) -> None:
        table = catalog.get_table(f"{DB}.{name}")
        assert java_rows(java_oracle, tmp_path, name) == ours(table), message
        seen.append(len(ours(table)))

    postpone_seed(catalog, f"{DB}.{name}", lambda n: compact(catalog, n), check)
    assert seen == [0, 1, 3, 6, 6, 8, 10]


def test_java_compaction_of_our_postpone_table_gives_our_rows(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = catalog_at(tmp_path)
    tables = {}
    for name in ("by_us", "by_java"):
        catalog.create_table(
            f"{DB}.{name}",
            Schema.from_pyarrow_schema(
                SCHEMA, partition_keys=["pt"], primary_keys=["pt", "k"], options=OPTIONS
            ),
        )
        tables[name] = catalog.get_table(f"{DB}.{name}")
        t = tables[name]
        write(t.copy({"postpone.batch-write-fixed-bucket": "true"}), batch(range(0, 40), 1))
        write(t, batch(range(30, 60), 2))
        write(t, batch(range(50, 70), 3))
    assert ours(tables["by_us"]) == java_rows(java_oracle, tmp_path, "by_us")
    assert len(ours(tables["by_us"])) == 40
    compact(catalog, f"{DB}.by_us")
    java_oracle.compact_postpone(tmp_path, DB, "by_java")
    expected = ours(tables["by_us"])
    assert len(expected) == 70
    assert {r[1] for r in expected if r[0] in (35, 55)} == {"v35-2", "v55-3"}
    assert ours(tables["by_java"]) == expected
    assert java_rows(java_oracle, tmp_path, "by_java") == expected
    assert java_rows(java_oracle, tmp_path, "by_us") == expected
    assert java_oracle.snapshots(tmp_path, DB, "by_us")[-1]["commitKind"] == "COMPACT"


def test_we_compact_a_postpone_table_java_wrote(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = catalog_at(tmp_path)
    for name in ("ours", "theirs"):
        java_oracle.create_table(
            tmp_path,
            DB,
            name,
            JAVA_TYPES,
            partition_keys=["pt"],
            primary_keys=["pt", "k"],
            options=OPTIONS,
        )
        java_oracle.write_rows(tmp_path, DB, name, batch(range(0, 30), 1))
        java_oracle.write_rows(tmp_path, DB, name, batch(range(20, 45), 2))
    table = catalog.get_table(f"{DB}.ours")
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    entries = table.manifest_io.live_entries(snapshot)
    assert {e.bucket for e in entries} == {-2}
    assert all(e.file.file_name.endswith(".avro") for e in entries)  # Java's postpone format
    # the layout our postpone writer copies: -u-<user>-s-<write id>-w- names, sequence -1
    assert all(e.file.file_name.startswith("data--u-") for e in entries)
    assert {(e.file.min_sequence_number, e.file.max_sequence_number) for e in entries} == {(-1, -1)}
    assert {e.total_buckets for e in entries} == {-2}
    assert ours(table) == [] == java_rows(java_oracle, tmp_path, "ours")
    compact(catalog, f"{DB}.ours")
    java_oracle.compact_postpone(tmp_path, DB, "theirs")
    expected = java_rows(java_oracle, tmp_path, "theirs")
    assert len(expected) == 45
    assert ours(table) == expected
    assert java_rows(java_oracle, tmp_path, "ours") == expected
