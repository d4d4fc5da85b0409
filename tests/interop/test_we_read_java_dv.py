"""Deletion-vector tables Java 1.4.2 wrote (``dv_tables``), read here: exactly Java's rows.

Every table of ``dv_tables.BUILDERS`` (primary-key tables in each bucket mode after upserts and
deletes, append tables after DELETE; 32- and 64-bit vectors) is read through ``to_arrow``, the
streaming reader, DuckDB, with a filter and with a projection; the result is the rows the
builders computed from what they wrote (which Java itself reads, test_java_dv_oracle.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from dv_tables import BUILDERS, build_all
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.read.split_codec import decode_splits, encode_splits

pytestmark = pytest.mark.java

DB = "db"


class Built:
    def __init__(self, warehouse: Path, expected: dict[str, list[list[Any]]]) -> None:
        self.warehouse = warehouse
        self.expected = expected

    def table(self, name: str) -> FileStoreTable:
        table = CatalogFactory.create({"warehouse": str(self.warehouse)}).get_table(f"{DB}.{name}")
        assert isinstance(table, FileStoreTable)
        return table


@pytest.fixture(scope="module")
def built(java_oracle: JavaOracle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    warehouse = tmp_path_factory.mktemp("we_read_java_dv")
    yield Built(warehouse, build_all(java_oracle, warehouse, DB))


def read(table: FileStoreTable, **kw: Any) -> pa.Table:
    rb = table.new_read_builder()
    if "filter" in kw:
        rb = rb.with_filter(kw["filter"](rb.new_predicate_builder()))
    if "projection" in kw:
        rb = rb.with_projection(kw["projection"])
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


@pytest.mark.parametrize("name", list(BUILDERS))
def test_we_read_exactly_javas_rows(built: Built, name: str) -> None:
    table = built.table(name)
    assert table.options.deletion_vectors_enabled
    assert sorted_rows(canonical_rows(read(table))) == built.expected[name]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_filtered_and_projected_reads_apply_the_vectors(built: Built, name: str) -> None:
    table = built.table(name)
    expected = built.expected[name]
    got = read(table, filter=lambda pb: pb.less_than("k", 150))
    assert sorted_rows(canonical_rows(got)) == [r for r in expected if r[0] < 150]
    got = read(table, projection=["v", "k"], filter=lambda pb: pb.is_not_null("v"))
    assert sorted_rows(canonical_rows(got)) == sorted_rows(
        [[r[1], r[0]] for r in expected if r[1] is not None]
    )


@pytest.mark.parametrize("name", ["pk_fixed_partitioned", "append_unaware_partitioned"])
def test_streamed_split_codec_and_duckdb_reads_apply_the_vectors(built: Built, name: str) -> None:
    table = built.table(name)
    expected = built.expected[name]
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    assert any(s.deletion_files and any(s.deletion_files) for s in splits)
    batches = rb.new_read().to_arrow_batch_reader(splits).read_all()
    assert sorted_rows(canonical_rows(batches)) == expected
    again = decode_splits(encode_splits(splits), table.store.partition_types)
    assert again == splits
    assert sorted_rows(canonical_rows(rb.new_read().to_arrow(again))) == expected
    con = rb.new_read().to_duckdb(splits, "t")
    count = con.execute("SELECT count(*), sum(k) FROM t").fetchone()
    assert count == (len(expected), sum(r[0] for r in expected))


def test_primary_key_reads_skip_level_0_and_merge_nothing(built: Built) -> None:
    table = built.table("pk_fixed")
    splits = table.new_read_builder().new_scan().plan().splits()
    assert all(f.level > 0 for s in splits for f in s.files)
    data = read(table)
    assert pc.count_distinct(data.column("k")).as_py() == data.num_rows


@pytest.mark.parametrize("name", list(BUILDERS))
def test_read_optimized_view_equals_javas(java_oracle: JavaOracle, built: Built, name: str) -> None:
    """``t$ro``: a primary-key table's top level with its vectors, an append table whole."""
    catalog = CatalogFactory.create({"warehouse": str(built.warehouse)})
    ours = catalog.get_system_table(f"{DB}.{name}$ro").to_arrow()
    java = java_oracle.read_table_ro(built.warehouse, DB, name)
    assert java.fields == ours.column_names
    assert sorted_rows(canonical_rows(ours)) == sorted_rows(java.rows)
    if name.startswith("append"):
        assert sorted_rows(canonical_rows(ours)) == built.expected[name]
