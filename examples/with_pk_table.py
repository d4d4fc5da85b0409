"""The seed's primary-key example: three inserts, a delete, a compaction, a read.

    CREATE TABLE with_pk_table (order_id BIGINT, price DECIMAL(32, 2), ts TIMESTAMP(3),
                                PRIMARY KEY (order_id) NOT ENFORCED);
    INSERT ... (1); INSERT ... (2), (3); INSERT ... (4), (5), (6), (7);
    DELETE FROM with_pk_table WHERE order_id IN (2, 3);
    CALL sys.compact('ods.with_pk_table');

Run from the repository root (after ``make demo`` or ``pip install -e .``):

    python examples/with_pk_table.py [WAREHOUSE_DIR]

The table is created as the seed writes it, with no ``bucket`` option: Java's default for
primary-key tables, dynamic buckets (HASH_DYNAMIC), whose hash index the compaction keeps.
"""

from __future__ import annotations

import datetime as dt
import decimal
import sys
import tempfile

import pyarrow as pa

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.procedures import compact
from paimon_pyspark.table.file_store_table import FileStoreTable

SCHEMA = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        ("price", pa.decimal128(32, 2)),
        ("ts", pa.timestamp("ms")),
    ]
)


def orders(ids: list[int]) -> pa.Table:
    start = dt.datetime(2025, 4, 5, 11, 45, 0)
    return pa.table(
        {
            "order_id": ids,
            "price": [decimal.Decimal(i * 100) for i in ids],
            "ts": [start + dt.timedelta(seconds=i - 1) for i in ids],
        },
        schema=SCHEMA,
    )


def insert(table: FileStoreTable, rows: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(rows)
        builder.new_commit().commit(write.prepare_commit())


def main(warehouse: str) -> list[int]:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("ods", ignore_if_exists=True)
    catalog.create_table(
        "ods.with_pk_table",
        Schema.from_pyarrow_schema(SCHEMA, primary_keys=["order_id"]),
    )
    table = catalog.get_table("ods.with_pk_table")
    for ids in ([1], [2, 3], [4, 5, 6, 7]):
        insert(table, orders(ids))
    predicates = table.new_read_builder().new_predicate_builder()
    table.delete(predicates.is_in("order_id", [2, 3]))
    compact(catalog, "ods.with_pk_table")

    rb = catalog.get_table("ods.with_pk_table").new_read_builder()
    result = rb.new_read().to_arrow(rb.new_scan().plan().splits()).sort_by("order_id")
    print(result.to_pandas().to_string(index=False))
    return [int(i) for i in result.column("order_id").to_pylist()]


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="paimon-"))
