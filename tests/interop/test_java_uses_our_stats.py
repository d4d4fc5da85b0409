"""Java's scan decodes the value stats we write and skips files with them."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
from java_oracle import JavaOracle

from paimon_pyspark import FileSystemCatalog, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("s", pa.string()),
        ("d", pa.decimal128(20, 3)),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("maybe", pa.int32()),
    ]
)


def _batch(lo: int, with_nulls: bool) -> pa.Table:
    ids = list(range(lo, lo + 10))
    return pa.table(
        {
            "id": ids,
            # long strings: the stats keep a 16-char prefix, the max rounded up
            "s": [f"key-{i:04d}-" + "z" * 30 for i in ids],
            "d": [decimal.Decimal(i) / 1000 for i in ids],
            "day": [dt.date(2026, 1, 1) + dt.timedelta(days=i) for i in ids],
            "ts": [dt.datetime(2026, 1, 1) + dt.timedelta(microseconds=i) for i in ids],
            "maybe": [None if with_nulls else i for i in ids],
        },
        schema=SCHEMA,
    )


def test_java_prunes_files_with_our_value_stats(
    catalog: FileSystemCatalog, warehouse: str, java_oracle: JavaOracle
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    table = catalog.get_table("db.t")
    files: list[str] = []
    for k, lo in enumerate((0, 100, 200)):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(_batch(lo, with_nulls=k == 1))
            messages = write.prepare_commit()
        builder.new_commit().commit(messages)
        files.append(messages[0].new_files[0].file_name)
    first, second, third = files

    def plan(field: str, op: str, literal: object = None) -> list[str]:
        return java_oracle.plan_files(warehouse, "db", "t", field, op, literal)

    assert plan("id", "equal", 105) == [second]
    assert plan("id", "greaterOrEqual", 150) == sorted([third])
    assert plan("id", "lessThan", 100) == [first]
    assert plan("s", "equal", "key-0205-" + "z" * 30) == [third]
    assert plan("d", "equal", "0.005") == [first]
    assert plan("day", "lessThan", (dt.date(2026, 1, 1) - dt.date(1970, 1, 1)).days + 5) == [first]
    assert plan("maybe", "isNull") == [second]
    assert plan("id", "equal", 1000) == []
