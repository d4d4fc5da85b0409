"""The demo job behind ``make demo``: write Paimon tables on a local warehouse, read them back.

Run with ``python -m paimon_pyspark.demo [--warehouse DIR] [--rows N]``.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema


def _stage(name: str, start: float) -> None:
    print(f"  [{time.perf_counter() - start:6.2f}s] {name}", flush=True)


def _orders(n: int, offset: int) -> pa.Table:
    rng = np.random.default_rng(offset)
    ids = np.arange(offset, offset + n, dtype=np.int64)
    return pa.table(
        {
            "order_id": ids,
            "customer_id": rng.integers(1, 10_000, n, dtype=np.int32),
            "amount": pa.array(np.round(rng.uniform(1, 500, n), 2)),
            "status": pa.array(np.array(["NEW", "PAID", "SHIPPED"])[ids % 3]),
            "order_date": pa.array(np.array([f"2026-11-{d:02d}" for d in range(1, 5)])[ids % 4]),
        }
    )


def _write(table: FileStoreTable, data: pa.Table) -> int:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        messages = write.prepare_commit()
    (snapshot_id,) = builder.new_commit().commit(messages)
    return snapshot_id


def _read(table: FileStoreTable) -> pa.Table:
    rb = table.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--warehouse", default="demo-warehouse")
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    start = time.perf_counter()
    warehouse = Path(args.warehouse).resolve()
    shutil.rmtree(warehouse, ignore_errors=True)
    print(f"paimon_pyspark demo: warehouse {warehouse}, {args.rows:,} rows per table", flush=True)

    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("demo", ignore_if_exists=True)
    schema = _orders(1, 0).schema
    catalog.create_table(
        "demo.orders",
        Schema.from_pyarrow_schema(schema, options={"bucket": "2", "bucket-key": "order_id"}),
    )
    catalog.create_table(
        "demo.orders_by_day", Schema.from_pyarrow_schema(schema, partition_keys=["order_date"])
    )
    _stage("created demo.orders (bucket = 2, bucket-key = order_id) and demo.orders_by_day", start)

    for name in ("demo.orders", "demo.orders_by_day"):
        table = catalog.get_table(name)
        half = args.rows // 2
        first = _write(table, _orders(half, 0))
        second = _write(table, _orders(args.rows - half, half))
        _stage(f"wrote {args.rows:,} rows into {name} in snapshots {first} and {second}", start)
        data = _read(table)
        by_status = data.group_by("status").aggregate([("amount", "sum"), ("order_id", "count")])
        _stage(f"read back {data.num_rows:,} rows from {name}", start)
        for row in by_status.sort_by("status").to_pylist():
            print(
                f"      {row['status']:<8} orders={row['order_id_count']:>9,} "
                f"amount={row['amount_sum']:>16,.2f}"
            )
        first_only = _read(table.copy({"scan.snapshot-id": str(first)}))
        _stage(f"time travel to snapshot {first}: {first_only.num_rows:,} rows", start)

    daily = catalog.get_table("demo.orders_by_day")
    rb = daily.new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.equal("order_date", "2026-11-02")).with_projection(["amount"])
    splits = rb.new_scan().plan().splits()
    day = rb.new_read().to_arrow(splits)
    total = pc.sum(day.column("amount")).as_py()
    _stage(
        f"filtered read of one partition: {len(splits)} split(s), {day.num_rows:,} rows, "
        f"amount {total:,.2f}",
        start,
    )
    print("demo finished", flush=True)


if __name__ == "__main__":
    main()
