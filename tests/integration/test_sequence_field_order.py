"""``sequence.field`` with nulls, end to end: write-time merge, merge-on-read and compaction.

The same records go into a table in one commit (merged in the write buffer), in one commit
per record (merged when read), and in one commit per record followed by a full compaction
(merged by the compaction rewrite); every way must give the rows Java's comparator gives:
null sequence fields first in either ``sequence.field.sort-order``, so a null never beats a
value (issue 19).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.procedures import compact

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("ts", pa.int64()),
        ("ts2", pa.int32()),
        ("v", pa.int64()),
    ]
)
# (id, ts, ts2, v) in arrival order.
RECORDS: list[tuple[Any, ...]] = [
    (1, 50, None, 10),
    (1, None, None, 11),  # issue 19: must not replace ts = 50
    (2, None, 1, 20),
    (2, 7, None, 21),
    (2, 3, None, 22),
    (2, None, 2, 23),
    (3, None, 5, 30),
    (3, None, None, 31),
    (3, None, 4, 32),
]
ENGINES = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
}


def expected(engine: str, fields: tuple[str, ...], ascending: bool) -> list[tuple[Any, ...]]:
    """The merged row of every key: the records ordered as Java's comparator orders them
    (each sequence field null first, then by value in the table's direction, then arrival),
    folded by the engine."""
    out = []
    for key in sorted({r[0] for r in RECORDS}):
        recs = [(i, r) for i, r in enumerate(RECORDS) if r[0] == key]

        def rank(item: tuple[int, tuple[Any, ...]]) -> tuple[Any, ...]:
            i, r = item
            parts: list[tuple[int, int]] = []
            for f in fields:
                x = r[1] if f == "ts" else r[2]
                parts.append((0, 0) if x is None else (1, x if ascending else -x))
            return (*parts, i)

        ordered = [r for _, r in sorted(recs, key=rank)]
        last = ordered[-1]
        if engine == "deduplicate":
            out.append(last)
        elif engine == "partial-update":
            row = list(ordered[0])
            for r in ordered[1:]:
                row = [x if x is not None else y for x, y in zip(r, row, strict=True)]
            out.append(tuple(row))
        else:  # sequence fields aggregate as last_value, v as sum, the rest last non-null
            nonnull = [
                next((r[c] for r in reversed(ordered) if r[c] is not None), None) for c in (1, 2)
            ]
            ts, ts2 = (
                last[c] if name in fields else nonnull[c - 1] for c, name in ((1, "ts"), (2, "ts2"))
            )
            out.append((key, ts, ts2, sum(r[3] for r in ordered)))
    return out


def create(warehouse: Path, engine: str, fields: tuple[str, ...], order: str) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", ignore_if_exists=True)
    options = {
        "bucket": "1",
        # No compaction at commits: a merge of some records first would group them
        # differently, which changes last_non_null_value (as in Java); the model folds once.
        "write-only": "true",
        "sequence.field": ",".join(fields),
        "sequence.field.sort-order": order,
        **ENGINES[engine],
    }
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    catalog.create_table("db.t", schema)
    return catalog.get_table("db.t")


def batch(rows: list[tuple[Any, ...]]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA)


def rows_of(table: FileStoreTable) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[n] for n in SCHEMA.names) for r in read_all(table).to_pylist())


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("fields", [("ts",), ("ts", "ts2")])
@pytest.mark.parametrize("order", ["ascending", "descending"])
@pytest.mark.parametrize("how", ["one-commit", "commit-per-record", "compacted"])
def test_null_sequence_field_never_wins(
    tmp_path: Path, engine: str, fields: tuple[str, ...], order: str, how: str
) -> None:
    table = create(tmp_path, engine, fields, order)
    if how == "one-commit":
        write_commit(table, batch(RECORDS))
    else:
        for r in RECORDS:
            write_commit(table, batch([r]))
    if how == "compacted":
        catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
        assert compact(catalog, "db.t") is not None
        table = catalog.get_table("db.t")
        snapshot = table.snapshot_manager.latest()
        assert snapshot is not None
        files = table.manifest_io.live_entries(snapshot)
        assert [e.file.level for e in files] == [5]  # one merged file: the rewrite merged
    want = expected(engine, fields, order == "ascending")
    assert rows_of(table) == want
    key1 = next(r for r in want if r[0] == 1)
    assert key1[1] == 50  # the case, in every engine and order
