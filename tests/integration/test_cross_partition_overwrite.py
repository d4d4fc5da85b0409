"""Insert overwrite of a cross-partition upsert table (bucket = -1, primary key without the
partition key), as Java 1.4.2 does it: the write routes by the live keys of the latest snapshot
whatever it replaces (Java's IndexBootstrap), so a key moving partition leaves a -D record in its
old partition; a dynamic overwrite replaces the partitions of all new files, that one included;
a static one refuses a file outside its partition."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.errors import CommitError

SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int32(), nullable=False),
        ("v", pa.int32()),
        pa.field("pt", pa.int32(), nullable=False),
    ]
)
BEFORE = [(1, 10, 1), (2, 20, 1), (3, 30, 2), (5, 50, 4)]


def make(catalog: FileSystemCatalog, name: str, **extra: str) -> FileStoreTable:
    options = {"bucket": "-1", "dynamic-bucket.target-row-num": "2", **extra}
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["pt"], primary_keys=["pk"], options=options
    )
    catalog.create_table(f"db.{name}", schema)
    table = catalog.get_table(f"db.{name}")
    write_commit(table, rows(BEFORE))
    return table


def rows(triples: Sequence[tuple[int, int, int]]) -> pa.Table:
    return pa.Table.from_pylist([dict(pk=a, v=b, pt=c) for a, b, c in triples], schema=SCHEMA)


def triples(table: FileStoreTable) -> list[tuple[int, int, int]]:
    return sorted((r["pk"], r["v"], r["pt"]) for r in read_all(table).to_pylist())


def overwrite(
    table: FileStoreTable,
    data: Sequence[tuple[int, int, int]],
    static: Mapping[str, int] | None = None,
) -> None:
    builder = table.new_batch_write_builder().overwrite(static)
    with builder.new_write() as write:
        write.write_arrow(rows(data))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def test_dynamic_overwrite_replaces_the_old_partition_of_a_moved_key(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "dyn")
    overwrite(table, [(1, 11, 2), (4, 40, 3)])
    table = catalog.get_table("db.dyn")
    # pk 1 left pt=1 with a -D there, so pt=1 (and pk 2 in it) is replaced too; pt=4 stays
    assert triples(table) == [(1, 11, 2), (4, 40, 3), (5, 50, 4)]
    assert table.snapshot_manager.latest().commit_kind == "OVERWRITE"
    write_commit(table, rows([(1, 12, 4), (5, 51, 4)]))  # the key index still holds
    assert triples(catalog.get_table("db.dyn")) == [(1, 12, 4), (4, 40, 3), (5, 51, 4)]


def test_whole_table_overwrite_keeps_only_the_new_rows(catalog: FileSystemCatalog) -> None:
    table = make(catalog, "whole", **{"dynamic-partition-overwrite": "false"})
    overwrite(table, [(1, 11, 2), (4, 40, 3)])
    assert triples(catalog.get_table("db.whole")) == [(1, 11, 2), (4, 40, 3)]


def test_static_overwrite_refuses_the_minus_d_of_a_key_from_another_partition(
    catalog: FileSystemCatalog,
) -> None:
    table = make(catalog, "static", **{"dynamic-partition-overwrite": "false"})
    overwrite(table, [(3, 31, 2), (6, 60, 2)], {"pt": 2})  # pk 3 stays in pt=2: fine
    assert triples(catalog.get_table("db.static")) == [
        (1, 10, 1),
        (2, 20, 1),
        (3, 31, 2),
        (5, 50, 4),
        (6, 60, 2),
    ]
    with pytest.raises(CommitError, match=r"trying to overwrite partition pt=2.*pt=1"):
        overwrite(catalog.get_table("db.static"), [(1, 11, 2)], {"pt": 2})
    assert len(triples(catalog.get_table("db.static"))) == 5
