"""Java Paimon 1.4.2 reads the tables our compaction rewrites, row for row, and we compact
tables Java wrote.

Covers the seed example (a primary-key table of orders, three inserts, a delete, a full
compaction), primary-key tables after minor (deletes kept above older data) and full
compactions, fixed-bucket and bucket-unaware append tables, and Java-written level-0 files
compacted by us. Java sees our snapshot as a COMPACT commit.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
ORDERS = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        ("price", pa.decimal128(32, 2)),
        ("ts", pa.timestamp("ms")),
    ]
)


def orders(ids: list[int], version: int = 0) -> pa.Table:
    return pa.table(
        {
            "order_id": ids,
            "price": [Decimal(f"{i}.{version:02d}") for i in ids],
            "ts": [dt.datetime(2026, 11, 1, 12, 0, i % 60) for i in ids],
        },
        schema=ORDERS,
    )


def catalog_at(warehouse: Path) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    return catalog


def commit(
    table: FileStoreTable, upserts: pa.Table | None, deletes: pa.Table | None = None
) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        if upserts is not None:
            write.write_arrow(upserts)
        if deletes is not None:
            write.delete_arrow(deletes)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def ours(table: FileStoreTable) -> list[list[object]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def java_rows(java: JavaOracle, warehouse: Path, name: str) -> list[list[object]]:
    return sorted_rows(java.read_table(warehouse, DB, name).rows)


def test_seed_example_java_reads_the_surviving_orders(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = catalog_at(tmp_path)
    catalog.create_table(
        f"{DB}.with_pk_table",
        Schema.from_pyarrow_schema(ORDERS, primary_keys=["order_id"], options={"bucket": "1"}),
    )
    table = catalog.get_table(f"{DB}.with_pk_table")
    commit(table, orders([1]))
    commit(table, orders([2, 3]))
    commit(table, orders([4, 5, 6, 7]))
    pb = table.new_read_builder().new_predicate_builder()
    table.delete(pb.is_in("order_id", [2, 3]))

    sid = compact(catalog, f"{DB}.with_pk_table")

    table = catalog.get_table(f"{DB}.with_pk_table")
    expected = sorted_rows(canonical_rows(orders([1, 4, 5, 6, 7])))
    assert ours(table) == expected
    assert java_rows(java_oracle, tmp_path, "with_pk_table") == expected
    kinds = {s["id"]: s["commitKind"] for s in java_oracle.snapshots(tmp_path, DB, "with_pk_table")}
    assert kinds[sid] == "COMPACT"


def test_java_reads_pk_tables_after_minor_and_full_compactions(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    catalog = catalog_at(tmp_path)
    catalog.create_table(
        f"{DB}.pk",
        Schema.from_pyarrow_schema(
            ORDERS, primary_keys=["order_id"], options={"bucket": "2", "write-only": "true"}
        ),  # the small commits' level-0 runs stay for the procedure
    )
    table = catalog.get_table(f"{DB}.pk")
    commit(table, orders(list(range(3000))))
    assert compact(catalog, f"{DB}.pk") is not None
    for i in range(5):
        commit(table, orders([7 * i, 7 * i + 3], version=i + 1), orders([100 + i]))
    expected = ours(table)
    assert java_rows(java_oracle, tmp_path, "pk") == expected

    assert compact(catalog, f"{DB}.pk", compact_strategy="minor") is not None
    table = catalog.get_table(f"{DB}.pk")
    live = table.manifest_io.live_entries(table.snapshot_manager.latest())  # type: ignore[arg-type]
    assert any(e.file.level == 4 and (e.file.delete_row_count or 0) > 0 for e in live)
    assert ours(table) == expected
    assert java_rows(java_oracle, tmp_path, "pk") == expected

    assert compact(catalog, f"{DB}.pk", compact_strategy="full") is not None
    assert ours(catalog.get_table(f"{DB}.pk")) == expected
    assert java_rows(java_oracle, tmp_path, "pk") == expected


@pytest.mark.parametrize(
    "options", [{"bucket": "2", "bucket-key": "id", "write-only": "true"}, {}]
)  # write-only: the fixed buckets' small files stay for the procedure
def test_java_reads_compacted_append_tables(
    java_oracle: JavaOracle, tmp_path: Path, options: dict[str, str]
) -> None:
    catalog = catalog_at(tmp_path)
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
    catalog.create_table(
        f"{DB}.logs", Schema.from_pyarrow_schema(schema, partition_keys=["dt"], options=options)
    )
    table = catalog.get_table(f"{DB}.logs")
    for start in range(0, 60, 10):
        ids = list(range(start, start + 10))
        data = pa.table({"id": ids, "name": [f"n{i}" for i in ids], "dt": ["x", "y"] * 5})
        commit(table, data)
    expected = ours(table)

    assert compact(catalog, f"{DB}.logs") is not None

    assert ours(catalog.get_table(f"{DB}.logs")) == expected
    assert java_rows(java_oracle, tmp_path, "logs") == expected


def test_we_compact_level_zero_files_java_wrote(java_oracle: JavaOracle, tmp_path: Path) -> None:
    java_oracle.create_table(
        tmp_path,
        DB,
        "from_java",
        [("id", "BIGINT NOT NULL"), ("v", "STRING")],
        primary_keys=["id"],
        options={"bucket": "1", "write-only": "true"},
    )
    java_oracle.write_rows(tmp_path, DB, "from_java", [[i, f"a{i}"] for i in range(0, 40)])
    java_oracle.write_rows(tmp_path, DB, "from_java", [[i, f"b{i}"] for i in range(20, 60)])
    java_oracle.write_rows(tmp_path, DB, "from_java", [[i, f"c{i}"] for i in range(50, 55)])
    catalog = catalog_at(tmp_path)
    expected = java_rows(java_oracle, tmp_path, "from_java")
    assert len(expected) == 60

    assert compact(catalog, f"{DB}.from_java") is not None

    table = catalog.get_table(f"{DB}.from_java")
    live = table.manifest_io.live_entries(table.snapshot_manager.latest())  # type: ignore[arg-type]
    assert [e.file.level for e in live] == [5]
    assert ours(table) == expected
    assert java_rows(java_oracle, tmp_path, "from_java") == expected
