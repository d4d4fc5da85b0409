"""Tables with some history for the system-table tests (integration and Java interop): a few
commits, a compaction, an ALTER TABLE, tags with and without a retention."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact, create_tag, reset_consumer
from paimon_pyspark.store.schema_change import SchemaChange

ARROW = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        ("d", pa.float64()),
        ("day", pa.date32()),
        pa.field("dt", pa.string(), nullable=False),
        pa.field("hr", pa.int32(), nullable=False),
    ]
)
KINDS = ("append", "pk", "postpone", "plain", "typed", "first_row", "orc_no_stats", "dynamic")
TYPED = pa.schema(
    [
        ("p", pa.date32()),
        ("s", pa.string()),
        ("amount", pa.decimal128(10, 2)),
        ("ts", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("ltz", pa.timestamp("us", tz="UTC")),
        ("f", pa.float32()),
        ("ok", pa.bool_()),
        ("t", pa.time32("ms")),
    ]
)
OPTIONS = {"file.format": "parquet", "write-only": "true", "snapshot.num-retained.min": "100"}


def batch(i: int) -> pa.Table:
    return pa.table(
        {
            "k": [i, i + 1, i + 2],
            "v": [f"a{i}", None, "x" * 20],
            "d": [1.5 * i, 1e10, 0.001],
            "day": [dt.date(2024, 1, 1 + i), None, dt.date(1969, 12, 31)],
            "dt": ["2024-01-01", "2024-01-02", "2024-01-01"],
            "hr": [1, 2, 1],
        },
        schema=ARROW,
    )


def typed_batch(i: int) -> pa.Table:
    return pa.table(
        {
            "p": [dt.date(2024, 2, 29), dt.date(2024, 2, 29), None],
            "s": ["x", None, "y"],
            "amount": [decimal.Decimal("1.50"), decimal.Decimal(-i), None],
            "ts": [dt.datetime(2024, 1, 1, 10, 0), dt.datetime(2024, 1, 1, 10, 0, 1, 123000), None],
            "ts6": [dt.datetime(2024, 1, 1, 0, 0, 0, 123456), None, dt.datetime(1969, 7, 20)],
            "ltz": [dt.datetime(2024, 1, 1, tzinfo=dt.UTC), None, None],
            "f": [0.1, -3.5e9, None],
            "ok": [True, False, None],
            "t": [dt.time(1, 2, 3), None, dt.time(23, 59, 59, 999000)],
        },
        schema=TYPED,
    )


def build(catalog: FileSystemCatalog, kind: str, name: str | None = None) -> str:
    """Create and fill table ``db.<name>`` of ``kind``; its identifier.

    append: bucket-unaware, partitioned; pk: two buckets; postpone: ``bucket = -2`` written
    to the postpone bucket (``postpone.batch-write-fixed-bucket = false``), then compacted,
    then written once more so bucket -2 holds files; plain: unpartitioned, one fixed bucket;
    first_row: a first-row table (level-0 files that batch reads skip); orc_no_stats: ORC
    files without value stats; dynamic: ``bucket = -1`` with a key, so hash index files;
    typed: append partitioned by a DATE (one null) and a string, with decimal, timestamp,
    float, boolean and time columns.
    """
    ident = f"db.{name or kind}"
    if kind == "typed":
        catalog.create_table(
            ident, Schema.from_pyarrow_schema(TYPED, partition_keys=["p", "s"], options=OPTIONS)
        )
        for i in range(2):
            write(catalog, ident, typed_batch(i))
        compact(catalog, ident)
        create_tag(catalog, ident, "only")
        _consumers(catalog, ident)
        _branches(catalog, ident, "only")
        return ident
    options = dict(OPTIONS)
    keys: list[str] = []
    partition = ["dt", "hr"]
    if kind == "plain":
        partition, options["bucket"], options["bucket-key"] = [], "1", "k"
    elif kind == "pk":
        keys, options["bucket"] = ["dt", "hr", "k"], "2"
    elif kind == "postpone":
        keys, options["bucket"] = ["dt", "hr", "k"], "-2"
        options["postpone.batch-write-fixed-bucket"] = "false"
    elif kind == "first_row":
        keys, options["bucket"], options["merge-engine"] = ["dt", "hr", "k"], "1", "first-row"
    elif kind == "dynamic":
        keys, options["bucket"] = ["dt", "hr", "k"], "-1"
    elif kind == "orc_no_stats":
        options["file.format"], options["metadata.stats-mode"] = "orc", "none"
    catalog.create_table(
        ident,
        Schema.from_pyarrow_schema(
            ARROW, partition_keys=partition, primary_keys=keys, options=options
        ),
    )
    for i in range(3):
        write(catalog, ident, batch(i))
    catalog.alter_table(ident, [SchemaChange.set_option("snapshot.num-retained.max", "200")])
    create_tag(catalog, ident, "first", snapshot_id=1)
    compact(catalog, ident)
    write(catalog, ident, batch(7))
    create_tag(catalog, ident, "retained", time_retained="1 h")
    _consumers(catalog, ident)
    _branches(catalog, ident, "first")
    return ident


def _consumers(catalog: FileSystemCatalog, ident: str) -> None:
    """Consumers for ``$consumers`` (names whose Java HashMap order is not sorted order)."""
    for consumer_id, next_snapshot in (("job-a", 2), ("b", 1), ("stream_2", 2), ("A1", 2)):
        reset_consumer(catalog, ident, consumer_id, next_snapshot)


def _branches(catalog: FileSystemCatalog, ident: str, tag: str) -> None:
    """Branches for ``$branches``: one from a tag, one empty."""
    catalog.create_branch(ident, "from_tag", tag)
    catalog.create_branch(ident, "empty")


def write(catalog: FileSystemCatalog, ident: str, data: pa.Table) -> None:
    table = catalog.get_table(ident)
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        builder.new_commit().commit(w.prepare_commit())
