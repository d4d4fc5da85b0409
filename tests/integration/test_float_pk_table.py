"""A primary-key table with NaN, -0.0 and +0.0 keys: the finding of issue 14 (two NaN rows
stayed, even after a full compaction), and a read that agrees with the full compaction.

Java 1.4.2 merges these keys by its comparator (see ``spec/float_keys.py``). When a NaN is
the first key of one of several sorted runs, Java's own merge read and its compaction disagree
(its comparator is not a total order); ours gives one answer: the records are sorted by
normalized key, a NaN joins the key before it, and each joined key keeps its newest record.
"""

from __future__ import annotations

import math

import pyarrow as pa

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.procedures import compact

SCHEMA = pa.schema([pa.field("k", pa.float64(), nullable=False), ("v", pa.int64())])
KEYS = [1.0, math.nan, -0.0, 0.0, math.inf, -math.inf, math.nan, 2.0]


def text(rows: list[dict[str, object]]) -> list[tuple[object, object]]:
    """(key, v) with floats by exact value: -0.0 is not 0.0, every NaN alike."""
    out = []
    for r in rows:
        k = r["k"]
        assert isinstance(k, float)
        out.append(("NaN" if math.isnan(k) else k.hex(), r["v"]))
    return out


def read(table: FileStoreTable) -> list[tuple[object, object]]:
    rb = table.new_read_builder()
    return text(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist())


def write(table: FileStoreTable, rows: list[tuple[float, int]]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist([{"k": k, "v": v} for k, v in rows], SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def create(catalog: FileSystemCatalog, name: str) -> FileStoreTable:
    options = {"bucket": "1", "write-only": "true"}
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options=options)
    )
    return catalog.get_table(f"db.{name}")


def test_two_nan_keys_are_one_key_in_one_commit(catalog: FileSystemCatalog) -> None:
    table = create(catalog, "one_commit")
    write(table, [(k, i) for i, k in enumerate(KEYS)])
    # Java 1.4.2 reads exactly these rows for the same commit (test_float_keys_java.py)
    expected = [
        ((-math.inf).hex(), 5),
        ((0.0).hex(), 3),
        ((1.0).hex(), 0),
        ((2.0).hex(), 7),
        ("NaN", 6),
    ]
    assert read(table) == expected
    assert compact(catalog, "db.one_commit", compact_strategy="full") is not None
    assert read(table) == expected


def test_merge_read_agrees_with_full_compaction(catalog: FileSystemCatalog) -> None:
    table = create(catalog, "runs")
    for i, k in enumerate(KEYS):
        write(table, [(k, i)])  # eight sorted runs of one key each
    expected = [
        ((-math.inf).hex(), 5),
        ((0.0).hex(), 3),
        ((1.0).hex(), 0),
        ((2.0).hex(), 7),
        ("NaN", 6),
    ]
    assert read(table) == expected
    assert compact(catalog, "db.runs", compact_strategy="full") is not None
    assert read(table) == expected
    write(table, [(-0.0, 8)])  # the newer record of the joined zeros wins, with its sign
    assert read(table)[1] == ((-0.0).hex(), 8)
