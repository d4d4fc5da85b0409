"""The merge-on-read of a partitioned primary-key table fills the partition columns from the
split's partition values where the merge does not look at them (deduplicate, first-row), and
reads them from the files where it does; the rows come out the same either way."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

import paimon_pyspark.read.kv_read as kv_read
from paimon_pyspark import Schema
from paimon_pyspark.catalog import FileSystemCatalog

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        pa.field("day", pa.date32(), nullable=False),
        pa.field("region", pa.string(), nullable=False),
        pa.field("v", pa.int64()),
    ]
)


def _rows(keys: range, value: int) -> pa.Table:
    return pa.table(
        {
            "k": list(keys),
            "day": [dt.date(2026, 11, 1 + k % 2) for k in keys],
            "region": ["eu" if k % 3 else "us" for k in keys],
            "v": [value + k for k in keys],
        },
        schema=SCHEMA,
    )


@pytest.mark.parametrize(
    "engine, fills", [("deduplicate", True), ("first-row", True), ("partial-update", False)]
)
def test_partition_columns_are_filled_only_where_the_merge_ignores_them(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch, engine: str, fills: bool
) -> None:
    options = {"bucket": "2", "merge-engine": engine}
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        partition_keys=["day", "region"],
        primary_keys=["k", "day", "region"],
        options=options,
    )
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    for keys, value in ((range(0, 60), 100), (range(30, 90), 1000)):  # two commits to merge
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(_rows(keys, value))
            builder.new_commit().commit(write.prepare_commit())

    asked: list[list[str]] = []
    read_kv = kv_read.read_kv_records

    def recording(*args: Any, **kwargs: Any) -> pa.Table:
        records = read_kv(*args, **kwargs)
        asked.append(records.column_names)
        return records

    monkeypatch.setattr(kv_read, "read_kv_records", recording)
    fresh = catalog.get_table("db.t")
    builder = fresh.new_read_builder()
    got = builder.new_read().to_arrow(builder.new_scan().plan().splits())

    assert asked, "no bucket was merged"
    for names in asked:
        assert ("day" not in names and "region" not in names) == fills, names
    assert got.schema.equals(SCHEMA, check_metadata=True)  # filled columns as read ones
    kept = 60 if engine == "first-row" else 30  # keys 30..59 were written twice
    expected = {k: 100 + k if k < kept else 1000 + k for k in range(90)}
    assert {r["k"]: r["v"] for r in got.to_pylist()} == expected
    for r in got.to_pylist():
        assert r["day"] == dt.date(2026, 11, 1 + r["k"] % 2)
        assert r["region"] == ("eu" if r["k"] % 3 else "us")
