"""Dynamic-bucket and cross-partition tables between paimon_pyspark and Java Paimon 1.4.2.

Java reads what we write; Java continues a dynamic-bucket table we started (its
HashBucketAssigner loads our hash index) and we continue one Java started (ours loads Java's),
and no key ever lives in two buckets. Java reads the seed's cross-partition scenario.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows
from pypaimon_oracle import PypaimonOracle

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
JAVA_FIELDS = [("pk", "INT NOT NULL"), ("v", "INT"), ("pt", "INT NOT NULL")]
OPTIONS = {"bucket": "-1", "dynamic-bucket.target-row-num": "2"}


def ours(warehouse: Path, name: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": str(warehouse)}).get_table(f"db.{name}")


def write(table: FileStoreTable, triples: list[tuple[int, int, int]]) -> None:
    data = pa.Table.from_pylist([dict(pk=a, v=b, pt=c) for a, b, c in triples], schema=SCHEMA)
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        builder.new_commit().commit(w.prepare_commit())


def read(table: FileStoreTable) -> list[list[object]]:
    rb = table.new_read_builder()
    t = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted_rows([[r["pk"], r["v"], r["pt"]] for r in t.to_pylist()])


def key_buckets(table: FileStoreTable) -> dict[tuple[int, int], set[int]]:
    out: dict[tuple[int, int], set[int]] = {}
    rb = table.new_read_builder()
    for split in rb.new_scan().plan().splits():
        for r in rb.new_read().to_arrow([split]).to_pylist():
            out.setdefault((r["pt"], r["pk"]), set()).add(split.bucket)
    return out


def test_java_and_we_continue_each_others_dynamic_bucket_table(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    for name, first_java in (("started_by_us", False), ("started_by_java", True)):
        if first_java:
            java_oracle.create_table(
                tmp_path,
                "db",
                name,
                JAVA_FIELDS,
                partition_keys=["pt"],
                primary_keys=["pk", "pt"],
                options=OPTIONS,
            )
        else:
            catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
            catalog.create_database("db", ignore_if_exists=True)
            catalog.create_table(
                f"db.{name}",
                Schema.from_pyarrow_schema(
                    SCHEMA, partition_keys=["pt"], primary_keys=["pk", "pt"], options=OPTIONS
                ),
            )
        t = ours(tmp_path, name)
        model: dict[tuple[int, int], int] = {}
        batches = [
            [(k, k * 10, pt) for pt in (1, 2) for k in range(1, 5)],
            [(1, 11, 1), (5, 50, 1), (3, 31, 2)],
            [(5, 51, 1), (6, 60, 1), (2, 21, 1), (9, 90, 3)],
            [(6, 61, 1), (1, 12, 2), (7, 70, 1)],
        ]
        for i, batch in enumerate(batches):
            java_turn = (i % 2 == 0) == first_java
            if java_turn:
                java_oracle.write_rows(tmp_path, "db", name, [list(r) for r in batch])
            else:
                write(t, batch)
            for k, v, pt in batch:
                model[(k, pt)] = v
            expected = sorted_rows([[k, v, pt] for (k, pt), v in model.items()])
            assert read(t) == expected, (name, i)
            assert sorted_rows(java_oracle.read_table(tmp_path, "db", name).rows) == expected
            assert all(len(b) == 1 for b in key_buckets(t).values()), (name, i)
        # 4 keys with target 2: two buckets in partition 1 at first, more as keys arrive
        assert {b for (pt, _), bs in key_buckets(t).items() if pt == 2 for b in bs} == {0, 1}


def test_java_reads_the_seed_cross_partition_scenario(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["pt"], primary_keys=["pk"], options=OPTIONS
        ),
    )
    t = ours(tmp_path, "t")
    write(t, [(1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1)])
    write(t, [(1, 11, 2)])
    expected = [[1, 11, 2], [2, 20, 1], [3, 30, 1], [4, 40, 1]]
    assert read(t) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == expected


@pytest.mark.pypaimon
def test_pypaimon_and_java_read_the_same_dynamic_bucket_rows(
    java_oracle: JavaOracle, pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["pt"], primary_keys=["pk", "pt"], options=OPTIONS
        ),
    )
    t = ours(tmp_path, "t")
    write(t, [(k, k * 10, pt) for pt in (1, 2) for k in range(1, 6)])
    write(t, [(1, 11, 1), (5, 51, 2), (6, 60, 2)])
    expected = read(t)
    got = pypaimon_oracle.read(tmp_path, "db.t")
    assert sorted_rows([[r["pk"], r["v"], r["pt"]] for r in got.to_pylist()]) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, "db", "t").rows) == expected
