"""Wrong arguments to the read side of the public API (ReadBuilder, TableRead,
PredicateBuilder) and to CatalogFactory raise typed errors naming the call, the argument and
what came instead, never an AttributeError or a pyarrow error from deep inside a read."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, PredicateError

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])


@pytest.fixture
def table(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    t = catalog.get_table("db.t")
    builder = t.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(pa.table({"k": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
        builder.new_commit().commit(write.prepare_commit())
    return t


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda rb: rb.with_projection("kv"), r"with_projection\(projection\).*str 'kv'"),
        (lambda rb: rb.with_projection(None), r"with_projection\(projection\).*NoneType"),
        (lambda rb: rb.with_filter("k > 1"), r"with_filter\(predicate\).*str 'k > 1'"),
        (lambda rb: rb.with_limit(-1), r"with_limit\(limit\) takes an int >= 0.*int -1"),
        (lambda rb: rb.with_limit("5"), r"with_limit\(limit\).*str '5'"),
        (lambda rb: rb.with_limit(True), r"with_limit\(limit\).*bool True"),
        (lambda rb: rb.with_limit(1.5), r"with_limit\(limit\).*float 1.5"),
    ],
)
def test_read_builder_arguments(table: FileStoreTable, call: Any, match: str) -> None:
    with pytest.raises(InvalidArgumentError, match=match):
        call(table.new_read_builder())


def test_a_limit_of_zero_reads_nothing(table: FileStoreTable) -> None:
    rb = table.new_read_builder().with_limit(0)
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 0


def test_a_predicate_of_another_table_is_refused_before_reading(
    catalog: FileSystemCatalog, table: FileStoreTable
) -> None:
    other_schema = pa.schema([("k", pa.string()), ("w", pa.int32())])
    catalog.create_table("db.other", Schema.from_pyarrow_schema(other_schema))
    other = catalog.get_table("db.other").new_read_builder().new_predicate_builder()
    rb = table.new_read_builder()
    with pytest.raises(PredicateError, match="has no field 'w'"):
        rb.with_filter(other.equal("w", 1))
    with pytest.raises(PredicateError, match="built for field 'k' of type STRING.*BIGINT"):
        rb.with_filter(other.equal("k", "1"))
    same = table.new_read_builder().new_predicate_builder()
    rb.with_filter(same.equal("k", 2))
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits())["v"].to_pylist() == ["b"]


@pytest.mark.parametrize("read", ["to_arrow", "to_pandas", "to_arrow_batch_reader"])
def test_splits_must_be_a_list_of_splits(table: FileStoreTable, read: str) -> None:
    rb = table.new_read_builder()
    plan = rb.new_scan().plan()
    call = getattr(rb.new_read(), read)
    with pytest.raises(InvalidArgumentError, match=rf"TableRead.{read}\(splits\).*splits\(\)"):
        call(plan)
    with pytest.raises(InvalidArgumentError, match=rf"{read}\(splits\).*got NoneType None"):
        call(None)
    with pytest.raises(InvalidArgumentError, match=rf"{read}\(splits\) holds int 1"):
        call([*plan.splits(), 1])
    result = call(plan.splits())
    rows = result.read_all() if isinstance(result, pa.RecordBatchReader) else result
    assert len(rows) == 3


def test_predicate_builder_arguments(table: FileStoreTable) -> None:
    pb = table.new_read_builder().new_predicate_builder()
    with pytest.raises(PredicateError, match=r"a field is named by a string, got list \['k'\]"):
        pb.equal(["k"], 1)  # type: ignore[arg-type]
    with pytest.raises(PredicateError, match="must be a list of values, not int 5"):
        pb.is_in("k", 5)  # type: ignore[arg-type]
    with pytest.raises(PredicateError, match="must be a list of values, not NoneType"):
        pb.is_not_in("k", None)  # type: ignore[arg-type]
    with pytest.raises(PredicateError, match="and combines predicates.*str 'x'"):
        pb.and_("x")  # type: ignore[arg-type]
    with pytest.raises(PredicateError, match="and takes a list of predicates, got NoneType"):
        pb.and_predicates(None)  # type: ignore[arg-type]
    with pytest.raises(PredicateError, match="or combines predicates.*int 1"):
        pb.or_predicates([pb.equal("k", 1), 1])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (None, r"CatalogFactory.create\(options\) takes a mapping.*NoneType"),
        ("/tmp/wh", r"CatalogFactory.create\(options\).*str '/tmp/wh'"),
        ({"warehouse": 5}, r"'warehouse' is a path or URI string, got int 5"),
    ],
)
def test_catalog_factory_options(options: Any, match: str) -> None:
    with pytest.raises(InvalidArgumentError, match=match):
        CatalogFactory.create(options)
