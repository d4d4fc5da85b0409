"""``procedures.compact`` called as Java's ``CALL sys.compact``: by position in Flink's order
and by name, blank strings as "not given", ``where`` as SQL text, ``partition_idle_time``, and
the refusals Java makes, on real tables."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CompactArgumentError
from paimon_pyspark.procedures import compact
from paimon_pyspark.spec.binary_row import deserialize_with_arity

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("dt", pa.string())]
)


def rows(ids: range, dt: str) -> pa.Table:
    return pa.table(
        {"id": list(ids), "name": [f"n{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA
    )


def bucketed(catalog: FileSystemCatalog, name: str, pk: bool = False) -> FileStoreTable:
    """Partitioned by dt, one bucket: three commits per partition give three files each."""
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"] if pk else None,
        options={"bucket": "1", **({} if pk else {"bucket-key": "id"})},
    )
    catalog.create_table(f"db.{name}", schema)
    table = catalog.get_table(f"db.{name}")
    for dt in ("a", "b", "c"):
        for start in range(0, 30, 10):
            write_commit(table, rows(range(start, start + 10), dt))
    return table


def files_per_partition(table: FileStoreTable) -> dict[str, int]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    out: dict[str, int] = {}
    for e in table.manifest_io.live_entries(snapshot):
        dt = str(deserialize_with_arity(e.partition, table.partition_types)[0])
        out[dt] = out.get(dt, 0) + 1
    return out


def test_seed_positional_call_with_empty_strings_compacts(catalog: FileSystemCatalog) -> None:
    """``CALL sys.compact('ods.with_pk_table', '', '', '', '')``: every blank is "not given"."""
    table = bucketed(catalog, "seed", pk=True)
    before = sort_rows(read_all(table))
    sid = compact(catalog, "db.seed", "", "", "", "")
    assert sid is not None
    assert table.snapshot_manager.snapshot(sid).commit_kind == "COMPACT"
    assert sort_rows(read_all(table)) == before
    assert set(files_per_partition(table).values()) == {1}


def test_every_argument_by_position_in_flinks_order(catalog: FileSystemCatalog) -> None:
    table = bucketed(catalog, "positional")
    # table, partitions, order_strategy, order_by, options, where, idle time, compact_strategy
    sid = compact(catalog, "db.positional", "dt=a", " ", "", "", "", "", "full")
    assert sid is not None
    assert files_per_partition(table) == {"a": 1, "b": 3, "c": 3}
    sid = compact(catalog, "db.positional", "", "", "", "", "dt = 'b'", "", "full")
    assert sid is not None
    assert files_per_partition(table) == {"a": 1, "b": 1, "c": 3}


def test_every_argument_by_name(catalog: FileSystemCatalog) -> None:
    table = bucketed(catalog, "named")
    sid = compact(
        catalog,
        table="db.named",
        compact_strategy="full",
        partition_idle_time="",
        where="dt IN ('a', 'c')",
        options="",
        order_by="",
        order_strategy="",
        partitions="",
    )
    assert sid is not None
    assert files_per_partition(table) == {"a": 1, "b": 3, "c": 1}


@pytest.mark.parametrize(
    ("where", "compacted"),
    [
        ("dt = 'a'", {"a"}),
        ("dt <> 'a'", {"b", "c"}),
        ("dt >= 'b' AND NOT dt = 'c'", {"b"}),
        ("dt BETWEEN 'a' AND 'b'", {"a", "b"}),
        ("dt LIKE 'c%' OR dt IN ('a')", {"a", "c"}),
        ("dt IS NULL", set()),
    ],
)
def test_where_as_sql_text_keeps_the_partitions_it_matches(
    catalog: FileSystemCatalog, where: str, compacted: set[str]
) -> None:
    table = bucketed(catalog, "where_text")
    sid = compact(catalog, "db.where_text", where=where)
    assert (sid is None) == (not compacted)
    expected = {dt: 1 if dt in compacted else 3 for dt in ("a", "b", "c")}
    assert files_per_partition(table) == expected


def test_where_text_refusals_name_the_table_and_text(catalog: FileSystemCatalog) -> None:
    bucketed(catalog, "where_bad")
    with pytest.raises(CompactArgumentError, match="Only partition key can be specialized"):
        compact(catalog, "db.where_bad", where="id = 1")
    with pytest.raises(CompactArgumentError, match=r"table 'db.where_bad': 'dt = = 1' is not SQL"):
        compact(catalog, "db.where_bad", where="dt = = 1")
    with pytest.raises(CompactArgumentError, match="cannot be used together"):
        compact(catalog, "db.where_bad", partitions="dt=a", where="dt = 'a'")
    with pytest.raises(CompactArgumentError, match="must compare a column with a literal"):
        compact(catalog, "db.where_bad", where="upper(dt) = 'A'")
    with pytest.raises(CompactArgumentError, match="'dt NOT LIKE 'a%'': NOT LIKE is not"):
        compact(catalog, "db.where_bad", where="dt NOT LIKE 'a%'")


def test_partition_idle_time_compacts_only_partitions_idle_that_long(
    catalog: FileSystemCatalog,
) -> None:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], options={"bucket": "1", "bucket-key": "id"}
    )
    catalog.create_table("db.idle", schema)
    table = catalog.get_table("db.idle")
    for start in range(0, 30, 10):
        write_commit(table, rows(range(start, start + 10), "old"))
    time.sleep(1.5)
    for start in range(0, 30, 10):
        write_commit(table, rows(range(start, start + 10), "new"))
    assert compact(catalog, "db.idle", partition_idle_time="1 h") is None
    assert compact(catalog, "db.idle", partition_idle_time="1 s") is not None
    assert files_per_partition(table) == {"old": 1, "new": 3}
    with pytest.raises(CompactArgumentError, match="partition_idle_time 'soon'"):
        compact(catalog, "db.idle", partition_idle_time="soon")
